"""README (and docs/) examples are the real output of the current code: regenerate or check them.

Every example in README.md, and each marked one in docs/*.md, is a fenced block preceded by a marker line

    <!-- example: memplan analyze fixtures/models/mlp.py -b 2 -->
    <!-- example: memplan diagnose fixtures/logs/x.log | head 25 -->

whose block is `$ <command>` followed by the command's stdout (exactly; with `| head N` its first N
lines and a line `...`). The command runs from the repository root as `python -m memplan ...` with
this checkout on PYTHONPATH.

    python scripts/readme_examples.py            # check: exit 1 and a diff when an example is stale
    python scripts/readme_examples.py --write    # regenerate README.md and docs/*.md in place
    python scripts/readme_examples.py --only devices --only decode   # examples whose command has a word

Normalised before comparing (and only these, since they change from run to run): durations written
as a decimal number of seconds (`71.2 s`, `took 15.1 s`) become `<t> s`. Everything else, byte for
byte.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
FILES = [README] + sorted(os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
                          if f.endswith(".md"))
_BLOCK = re.compile(r"<!-- example: (?P<cmd>memplan [^|>]*?)(?: \| head (?P<head>\d+))? -->\n```\n(?P<body>.*?)```\n",
                    re.S)
_SECONDS = re.compile(r"\b\d+\.\d+ s\b")


@dataclass
class Example:
    command: str            # as shown: "memplan analyze ..."
    head: int | None        # keep the first N lines of output
    body: str               # the block as it is in the README
    span: tuple[int, int]   # where the body is in README.md


def examples(text: str) -> list[Example]:
    return [Example(m["cmd"].strip(), int(m["head"]) if m["head"] else None, m["body"], m.span("body"))
            for m in _BLOCK.finditer(text)]


def run(example: Example, timeout: float = 900.0) -> str:
    """The block the command produces now: `$ command`, then its stdout."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    argv = [sys.executable, "-m", "memplan", *shlex.split(example.command)[1:]]
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode not in (0, 1):  # 1 = bad news (does not fit), still an answer
        raise RuntimeError(f"{example.command}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    lines = proc.stdout.rstrip("\n").split("\n")
    if example.head is not None and len(lines) > example.head:
        lines = lines[:example.head] + ["..."]
    return "\n".join([f"$ {example.command}", *lines]) + "\n"


def normalise(block: str) -> str:
    return _SECONDS.sub("<t> s", block)


def check_file(path: str, only: list[str], write: bool) -> int:
    """How many examples of `path` are stale; with `write`, rewrite them in place."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    name = os.path.relpath(path, ROOT)
    stale, new_text, shift = 0, text, 0
    for ex in examples(text):
        if only and not any(w in ex.command.split() for w in only):
            continue
        now = run(ex)
        if normalise(now) == normalise(ex.body):
            continue
        stale += 1
        sys.stdout.writelines(difflib.unified_diff(ex.body.splitlines(True), now.splitlines(True), name, ex.command))
        a, b = ex.span[0] + shift, ex.span[1] + shift
        new_text = new_text[:a] + now + new_text[b:]
        shift += len(now) - (b - a)
    if write and stale:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new_text)
        print(f"{name}: {stale} example(s) regenerated")
    return stale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the files with the current output")
    ap.add_argument("--only", action="append", default=[], help="only examples whose command has this word")
    args = ap.parse_args(argv)
    stale = sum(check_file(p, args.only, args.write) for p in FILES)
    return 1 if stale and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
