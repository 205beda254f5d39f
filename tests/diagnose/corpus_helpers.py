"""The diagnose corpus index under fixtures/logs/ (shared by the diagnose tests)."""
from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "fixtures" / "logs"


def corpus_rows() -> list[dict[str, str]]:
    with open(LOGS / "index.tsv", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))
