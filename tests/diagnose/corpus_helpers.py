"""The diagnose corpus index under fixtures/logs/ (shared by the diagnose tests)."""
from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "fixtures" / "logs"


def corpus_rows(index: str = "index.tsv") -> list[dict[str, str]]:
    """Rows of the dev index (default) or of `heldout.tsv` (whose logs live in fixtures/logs/heldout/)."""
    with open(LOGS / index, encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))
