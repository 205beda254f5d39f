"""The real-log corpus: every excerpt's category and numbers match its label in fixtures/logs/index.tsv."""
from __future__ import annotations

import pytest

from memplan.diagnose import diagnose
from memplan.diagnose._parse import parse_size_text
from memplan.diagnose._types import Category

from corpus_helpers import LOGS, corpus_rows

ROWS = corpus_rows()
# Keys in index.tsv -> keys in Incident.numbers
_KEYS = {"requested": "requested_bytes", "total": "total_bytes", "allocated": "allocated_bytes", "free": "free_bytes",
         "reserved": "reserved_bytes", "reserved_unallocated": "reserved_unallocated_bytes",
         "process_in_use": "process_in_use_bytes", "private_pool": "private_pool_bytes",
         "other_processes": "other_processes_bytes", "timeout_ms": "timeout_ms"}


def _expected(spec: str) -> dict[str, int]:
    out = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        key, _, val = part.partition("=")
        out[_KEYS[key]] = int(val) if key == "timeout_ms" else parse_size_text(val)
    return out


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_corpus_category_and_numbers(row):
    d = diagnose(str(LOGS / row["file"]))
    assert d.primary_category == Category(row["category"]), d.incidents[0].summary if d.incidents else d.notes
    expected = _expected(row["numbers"])
    if expected:
        nums = d.primary.numbers
        for key, want in expected.items():
            got = nums.get(key)
            assert got is not None, f"{key} missing from {nums}"
            # other_processes is a sum of rounded values; everything else is read verbatim
            tol = 16 << 20 if key == "other_processes_bytes" else 0
            assert abs(got - want) <= tol, (key, got, want)


def test_corpus_covers_every_category():
    cats = {r["category"] for r in ROWS}
    assert cats == {c.value for c in Category}
    assert len(ROWS) >= 60


def test_corpus_accuracy_report(capsys):
    right = sum(diagnose(str(LOGS / r["file"])).primary_category.value == r["category"] for r in ROWS)
    with capsys.disabled():
        print(f"\ncorpus accuracy: {right}/{len(ROWS)}")
    assert right / len(ROWS) >= 0.9


def test_every_incident_has_summary_and_advice():
    for r in ROWS:
        for inc in diagnose(str(LOGS / r["file"])).incidents:
            assert inc.summary and inc.advice and 0 < inc.confidence <= 1
