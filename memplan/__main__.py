"""`python -m memplan`: the command line, as the `memplan` entry point."""
from memplan.cli.main import main

if __name__ == "__main__":
    main()
