"""Every README example (and each marked one in docs/) is the real output of the current code
(scripts/readme_examples.py).

The quick examples (no trace) run in the default suite; the ones that trace or run a model are slow.
Regenerate with `python scripts/readme_examples.py --write`.
"""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("readme_examples", os.path.join(ROOT, "scripts", "readme_examples.py"))
rx = sys.modules.setdefault("readme_examples", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(rx)

QUICK = ("devices", "decode", "diagnose")
README_EXAMPLES = rx.examples(open(rx.README, encoding="utf-8").read())
EXAMPLES = [e for path in rx.FILES for e in rx.examples(open(path, encoding="utf-8").read())]


def test_readme_has_its_examples_marked():
    commands = {e.command.split()[1] for e in README_EXAMPLES}
    assert {"analyze", "plan", "validate", "devices", "diagnose", "decode"} <= commands
    # every shell-output block of the README is a marked example (no hand-written output)
    text = open(rx.README, encoding="utf-8").read()
    assert text.count("```\n$ memplan ") == len(README_EXAMPLES)


@pytest.mark.parametrize("example", [
    e if e.command.split()[1] in QUICK else pytest.param(e, marks=pytest.mark.slow) for e in EXAMPLES
], ids=[e.command[:60] for e in EXAMPLES])
def test_readme_example_is_current_output(example):
    assert rx.normalise(rx.run(example)) == rx.normalise(example.body)


def test_normalise_touches_only_durations():
    assert rx.normalise("checked with 6 traces in 71.2 s\nbatch 4 x 2 s") == \
        "checked with 6 traces in <t> s\nbatch 4 x 2 s"
