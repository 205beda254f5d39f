"""The diagnose corpus index under fixtures/logs/ (shared by the diagnose tests)."""
from __future__ import annotations

import csv
import functools
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "fixtures" / "logs"


def corpus_rows(index: str = "index.tsv") -> list[dict[str, str]]:
    """Rows of the dev index (default) or of `heldout.tsv` (whose logs live in fixtures/logs/heldout/)."""
    with open(LOGS / index, encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@functools.lru_cache(maxsize=None)
def corpus_benchmark():
    """benchmarks/diagnose_corpus.py as a module: the one reader of the corpus's `numbers` column and held-out rounds."""
    spec = importlib.util.spec_from_file_location("diagnose_corpus", ROOT / "benchmarks" / "diagnose_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
