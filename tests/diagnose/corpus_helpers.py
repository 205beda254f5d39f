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
def load_script(path: str):
    """A script of the repository (benchmarks/..., scripts/...) as a module, loaded once per session."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@functools.lru_cache(maxsize=None)
def diagnosed(name: str, prior: bool = True):
    """`diagnose` of the corpus log fixtures/logs/NAME, once per test worker for each setting: the dev corpus is read
    by several tests (each log's own, the whole-corpus checks, the fallback's check). A Diagnosis is frozen, so
    sharing it is safe."""
    from memplan.diagnose import diagnose
    return diagnose(str(LOGS / name), prior=prior)


def corpus_benchmark():
    """benchmarks/diagnose_corpus.py as a module: the one reader of the corpus's `numbers` column and held-out rounds."""
    return load_script("benchmarks/diagnose_corpus.py")
