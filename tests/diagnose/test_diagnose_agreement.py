"""The label-agreement benchmark's arithmetic, on small synthetic tables (no corpus log is read)."""
from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def _bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("diagnose_agreement", ROOT / "benchmarks" / "diagnose_agreement.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_kappa_of_a_textbook_two_by_two_table():
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: observed 0.70, chance 0.5*0.6 + 0.5*0.4 = 0.50, kappa 0.40
    first = ["yes"] * 25 + ["no"] * 25
    second = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    b = _bench()
    assert b.raw_agreement(first, second) == pytest.approx(0.70)
    assert b.cohen_kappa(first, second) == pytest.approx(0.40)


def test_kappa_extremes_and_degenerate_cases():
    b = _bench()
    assert b.cohen_kappa(["a", "b", "c"], ["a", "b", "c"]) == pytest.approx(1.0)
    assert b.cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    assert b.cohen_kappa(["a", "a"], ["a", "a"]) == 1.0  # one category only: chance agreement is 1
    assert b.cohen_kappa([], []) is None and b.raw_agreement([], []) is None
    with pytest.raises(ValueError):
        b.raw_agreement(["a"], ["a", "b"])


def test_three_category_kappa_matches_hand_computation():
    first = ["capacity", "capacity", "comm", "comm", "environment", "environment"]
    second = ["capacity", "comm", "comm", "comm", "environment", "capacity"]
    # observed 4/6; marginals first (2,2,2), second (capacity 2, comm 3, environment 1): chance (4+6+2)/36 = 1/3
    assert _bench().cohen_kappa(first, second) == pytest.approx((4 / 6 - 1 / 3) / (1 - 1 / 3))


def test_confusion_between_labellers_counts_pairs():
    table = _bench().pair_confusion(["comm", "comm", "environment"], ["comm", "environment", "environment"])
    assert table == {"comm": {"comm": 1, "environment": 1}, "environment": {"environment": 1}}


def _item(file, label1, label2, answer, confidence="high", set_="heldout13"):
    return {"file": file, "set": set_, "label1": label1, "label2": label2, "answer": answer,
            "confidence": confidence, "reason": "r"}


def test_memplan_accuracy_is_split_by_agreement_confidence_and_backend():
    items = [_item("npu_x_1.log", "capacity", "capacity", "capacity"),
             _item("npu_x_2.log", "comm", "comm", "environment", "medium"),
             _item("cuda_x_3.log", "environment", "comm", "comm", "low", "heldout14"),
             _item("hccl_x_4.log", "unknown", "environment", "crash", "low", "heldout14")]
    r = _bench().build_report(items)
    a = r["all"]
    assert a["agree"] == {"right": 2, "logs": 4, "pct": 50.0}
    assert a["memplan_vs_label1"]["right"] == 1 and a["memplan_vs_label2"]["right"] == 2
    assert a["memplan_vs_either"]["right"] == 2
    assert a["memplan_where_agree"] == {"right": 1, "logs": 2, "pct": 50.0}
    assert a["memplan_where_differ_vs_label1"]["right"] == 0
    assert a["memplan_where_differ_vs_label2"] == {"right": 1, "logs": 2, "pct": 50.0}
    assert r["by_confidence"]["low"]["agree"]["right"] == 0 and "high" in r["by_confidence"]
    assert r["by_backend"]["ascend"]["logs"] == 3 and r["by_backend"]["other"]["logs"] == 1
    assert r["by_set"]["heldout14"]["logs"] == 2
    assert [d["file"] for d in r["disagreements"]] == ["cuda_x_3.log", "hccl_x_4.log"]


def test_rounds_come_from_the_data_in_round_order():
    b = _bench()
    items = [_item("a.log", "comm", "comm", "comm", set_=s) for s in ("heldout15", "heldout9", "heldout", "heldout13")]
    assert b.rounds_in(items) == ["heldout", "heldout9", "heldout13", "heldout15"]
    assert b.round_order("heldout") == 1 and b.round_order("heldout16") == 16


def test_studies_group_rounds_labelled_together_and_keep_unlisted_rounds_apart():
    b = _bench()
    assert b.studies_in(["heldout13", "heldout14", "heldout15", "heldout16"]) == [
        ("heldout13", "heldout14"), ("heldout15", "heldout16")]
    assert b.studies_in(["heldout14", "heldout17"]) == [("heldout14",), ("heldout17",)]
    assert b.study_name(("heldout15", "heldout16")) == "rounds 15-16" and b.study_name(("heldout17",)) == "round 17"


def test_report_has_per_round_confusion_per_study_figures_and_both_notes_for_disagreements():
    b = _bench()
    items = [_item("npu_a.log", "comm", "comm", "comm", set_="heldout15"),
             _item("npu_b.log", "environment", "comm", "comm", set_="heldout16"),
             _item("cuda_c.log", "capacity", "capacity", "fragmentation", set_="heldout13")]
    items[1]["note1"] = "the thread names a TLS mismatch"
    r = b.build_report(items)
    assert r["rounds"] == ["heldout13", "heldout15", "heldout16"]
    assert r["confusion_by_set"]["heldout16"] == {"environment": {"comm": 1}}
    assert r["by_study"]["rounds 15-16"]["agree"] == {"right": 1, "logs": 2, "pct": 50.0}
    assert r["by_study"]["round 13"]["logs"] == 1  # only round 13 of the first study is present
    assert r["disagreements"] == [{"file": "npu_b.log", "set": "heldout16", "label1": "environment", "label2": "comm",
                                   "confidence": "high", "answer": "comm", "reason": "r",
                                   "note1": "the thread names a TLS mismatch"}]
    md = b.markdown({**r, "commit": "abc", "python": "3.11", "by_confidence": r["by_confidence"]})
    assert "held-out rounds 13, 15, 16" in md and "| rounds 15-16 | 2 |" in md and "Confusion between labellers, heldout16" in md
    assert "TLS mismatch" in md
