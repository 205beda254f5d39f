"""memplan's reading of LLaMA-Factory YAMLs equals LLaMA-Factory's own parser (skipped where llamafactory
is not importable; benchmarks/llamafactory_parity.py has the environment it ran in)."""
import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(importlib.util.find_spec("llamafactory") is None, reason="llamafactory is not installed")
def test_every_case_matches_llamafactorys_parser(monkeypatch, tmp_path):
    monkeypatch.setenv("DISABLE_VERSION_CHECK", "1")
    monkeypatch.chdir(ROOT)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import llamafactory_parity as P
    finally:
        sys.path.pop(0)
    for name, (base, edits) in P.CASES.items():
        d = P.case_mapping(base, edits)
        d["output_dir"] = os.fspath(tmp_path)
        assert P.memplan_view(d) == P.llamafactory_view(d), name
