"""Shared helpers for the diagnose tests: the corpus index under fixtures/logs/."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "fixtures" / "logs"


def corpus_rows(index: str = "index.tsv") -> list[dict[str, str]]:
    """Rows of the dev index (default) or of `heldout.tsv` (whose logs live in fixtures/logs/heldout/)."""
    with open(LOGS / index, encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@pytest.fixture(scope="session")
def corpus() -> list[dict[str, str]]:
    return corpus_rows()
