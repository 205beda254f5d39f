"""The command line: thin click commands, one module per command (options -> one API call -> render)."""
