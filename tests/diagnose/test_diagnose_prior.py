"""The statistical fallback of `memplan diagnose` (`memplan/diagnose/_prior.py`, `data/prior.json`)."""
from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from memplan.cli.main import cli
from memplan.diagnose import diagnose
from memplan.diagnose._parse import Evidence
from memplan.diagnose._prior import MAX_CONFIDENCE, MAX_LINES, MAX_TOKENS_PER_LINE, Prior, PriorText, load_prior, \
    log_features, tokens, train
from memplan.diagnose._types import Category

from corpus_helpers import LOGS, corpus_rows, diagnosed, load_script


def _trainer():
    return load_script("scripts/train_diagnose_prior.py")


# ---------------------------------------------------------------- tokeniser

def test_tokens_words_identifiers_numbers():
    assert tokens("RuntimeError: aclrtMalloc_v2 failed, ret=507899 at 0x7f3a") == [
        "runtimeerror", "aclrtmalloc", "v0", "failed", "ret", "0x0f0a"]
    assert tokens("HCCL timeout after 1800 seconds on rank 3") == ["hccl", "timeout", "after", "seconds", "rank"]
    assert tokens("E39999 sm_86") == ["e00000", "sm"]


def test_tokens_chinese_bigrams_and_cap():
    assert tokens("显存不足") == ["显存", "存不", "不足"]
    assert tokens("错") == ["错"]
    assert len(tokens("word " * 500)) == MAX_TOKENS_PER_LINE


def test_collector_bounds_skips_and_weights_the_last_exception():
    pt = PriorText()
    pt.add(Evidence(1, "warning", "UserWarning: deprecated zeta", "benign", 1))
    pt.add(Evidence(2, "frame", 'File "x.py", line 3, in f'))
    pt.add(Evidence(3, "error-line", "Traceback (most recent call last):"))
    pt.add(Evidence(4, "error-line", "ValueError: bad gamma"))
    pt.add(Evidence(5, "error-line", "ValueError: bad gamma"))  # the same text counts once
    f = pt.features()
    assert "zeta" not in f and "py" not in f and "traceback" not in f
    assert f["gamma"] == 3 and f["valueerror"] == 3  # the last exception line counts three times
    big = PriorText()
    for i in range(MAX_LINES * 4):
        big.add(Evidence(i, "error-line", f"failure number {'x' * (i % 50)}y{i}"))
    assert len(big._texts) == MAX_LINES


# ---------------------------------------------------------------- model, determinism, sync with index.tsv

def test_train_is_deterministic_and_order_free():
    docs = [("comm", Counter(a=2, b=1)), ("environment", Counter(b=3, c=1)), ("comm", Counter(a=1))]
    assert train(docs) == train(list(reversed(docs)))
    m = Prior.from_dict(train(docs))
    g = m.guess({"a": 2})
    assert g.category == "comm" and g.runner_up == "environment" and g.words == ("a",) and 0.5 < g.probability <= 1
    assert m.guess({"zzz": 1}) is None


def test_committed_prior_matches_the_dev_index():
    tr = _trainer()
    limit = tr.committed_rows()
    rows = corpus_rows()
    assert limit is not None and 0 < limit <= len(rows)
    text = tr.dumps(tr.build(limit=limit))
    with open(tr.OUT, encoding="utf-8") as f:
        committed = f.read()
    assert committed == text, (f"memplan/diagnose/data/prior.json is stale for the first {limit} rows of "
                               "fixtures/logs/index.tsv (a relabel or a trainer change): retrain with "
                               "`python benchmarks/diagnose_prior_cv.py` (or scripts/train_diagnose_prior.py)")
    doc = json.loads(committed)
    assert doc["about"]["trained_from"] == "fixtures/logs/index.tsv"
    assert doc["about"]["logs"] == sum(r["category"] not in tr.LEFT_OUT for r in rows[:limit])
    assert doc["model"]["threshold"] > 0


def test_trainer_reads_the_first_rows_and_refuses_more_than_there_are(tmp_path):
    tr = _trainer()
    idx = tmp_path / "index.tsv"
    idx.write_text("file\tsource\tcategory\tnumbers\tnote\na.log\ts\tcomm\t\t\nb.log\ts\tbenign\t\t\n"
                   "c.log\ts\tfragmentation\t\t\n", encoding="utf-8")
    assert [r["file"] for r in tr.dev_rows(str(idx), 2)] == ["a.log"]           # benign left out, rows counted
    assert tr.dev_rows(str(idx))[-1] == {"file": "c.log", "category": "capacity"}
    with pytest.raises(SystemExit, match="only 3"):
        tr.dev_rows(str(idx), 4)


class _FakeTrainer:
    """The trainer's interface that keep_or_retrain uses, over two hand-made priors."""

    def __init__(self, tmp_path, committed: dict, fresh: dict, limit: int | None = 1):
        self._tr, self._committed, self._fresh, self._limit = _trainer(), committed, fresh, limit
        self.OUT = str(tmp_path / "prior.json")
        (tmp_path / "prior.json").write_text(self.dumps(committed), encoding="utf-8")

    def dumps(self, doc):
        return self._tr.dumps(doc)

    def committed_rows(self):
        return self._limit

    def build(self, threshold=None, limit=None, known=None):
        return self._committed if limit == self._limit else self._fresh


_ROWS = [{"file": f"f{i}.log", "feats": Counter()} for i in range(2)]   # dev rows as all_rows gives them


def _two_way(feats, category):
    return {"about": {}, "model": train([(category, feats), ("comm", Counter(zzz=1))], threshold=0.0)}


def test_prior_is_retrained_only_when_the_retrain_makes_more_dev_logs_right(tmp_path):
    cv = load_script("benchmarks/diagnose_prior_cv.py")
    log = "npu_opns_vllmascend9798.log"                  # the rules leave it `unknown`; labelled op-not-supported
    feats = log_features(str(LOGS / log))
    wrong, right = _two_way(feats, "environment"), _two_way(feats, "op-not-supported")
    path = [{"file": log, "label": "op-not-supported", "rules": "unknown"},
            {"file": "ignored.log", "label": "comm", "rules": "comm"}]   # rule answers are not the prior's
    gain = cv.keep_or_retrain(_ROWS[:2], path, _FakeTrainer(tmp_path, wrong, right), 0.0)
    assert gain["retrain"] and (gain["dev_right_committed"], gain["dev_right_retrained"]) == (0, 1)
    loss = cv.keep_or_retrain(_ROWS[:2], path, _FakeTrainer(tmp_path, right, wrong), 0.0)
    assert not loss["retrain"] and loss["dev_answers_changed"] == 1 and "kept" in loss["reason"]
    same = cv.keep_or_retrain(_ROWS[:2], path, _FakeTrainer(tmp_path, right, right), 0.0)
    assert not same["retrain"] and same["dev_answers_changed"] == 0


def test_prior_is_kept_when_the_retrain_turns_a_dev_log_wrong(tmp_path):
    """More dev logs right is not enough when one that was right goes wrong (session 32)."""
    cv = load_script("benchmarks/diagnose_prior_cv.py")
    logs = ["cuda_opns_elatentlpips4.log", "npu_opns_vllmascend9798.log", "metal_opns_mlxswiftexamples198.log"]
    feats = [log_features(str(LOGS / f)) for f in logs]          # all three left `unknown` by the rules

    def prior(right_ones):
        rows = [("op-not-supported" if i in right_ones else "environment", f) for i, f in enumerate(feats)]
        return {"about": {}, "model": train(rows + [("comm", Counter(zzz=1))], threshold=0.0)}
    path = [{"file": f, "label": "op-not-supported", "rules": "unknown"} for f in logs]
    kept = cv.keep_or_retrain(_ROWS[:2], path, _FakeTrainer(tmp_path, prior({0}), prior({1, 2})), 0.0)
    assert (kept["dev_right_committed"], kept["dev_right_retrained"], kept["dev_answers_lost"]) == (1, 2, 1)
    assert not kept["retrain"] and "right -> wrong" in kept["reason"]


def test_prior_is_retrained_when_the_committed_one_is_not_reproducible(tmp_path):
    cv = load_script("benchmarks/diagnose_prior_cv.py")
    doc = _two_way(Counter(a=1), "environment")
    stale = _FakeTrainer(tmp_path, doc, doc)
    stale.build = lambda threshold=None, limit=None, known=None: _two_way(Counter(b=1), "environment")  # e.g. a relabel
    assert cv.keep_or_retrain(_ROWS[:1], [], stale, 0.0)["retrain"]
    unrecorded = _FakeTrainer(tmp_path, doc, doc, limit=None)
    assert cv.keep_or_retrain(_ROWS[:1], [], unrecorded, 0.0)["reason"].startswith("no committed prior")


@pytest.mark.slow
def test_prior_training_is_deterministic():
    tr = _trainer()
    assert tr.dumps(tr.build()) == tr.dumps(tr.build())


def test_trainer_refuses_held_out(tmp_path):
    tr = _trainer()
    with pytest.raises(SystemExit, match="held-out"):
        tr.dev_rows("fixtures/logs/heldout5.tsv")
    idx = tmp_path / "index.tsv"
    idx.write_text("file\tsource\tcategory\tnumbers\tnote\nheldout/x.log\ts\tcomm\t\t\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="held-out"):
        tr.dev_rows(str(idx))


def test_log_features_read_as_diagnose_reads():
    f = log_features("step 1 loss 0.5\nRuntimeError: the frobnicator exploded\n")
    assert f["frobnicator"] == 3 and "loss" not in f


# ---------------------------------------------------------------- where the fallback acts

_TOY = Prior.from_dict(train([("comm", Counter(rendezvous=5, handshake=4, peer=3)),
                              ("environment", Counter(firmware=5, mismatch=4, installed=3)),
                              ("unknown", Counter(segfault=5))], threshold=0.5))
_UNKNOWN_LOG = "step 10 loss 1.2\nRuntimeError: zorblax rendezvous handshake with peer went sideways\n"


def test_fallback_names_the_category_with_low_confidence_and_quotes_the_line():
    rules = diagnose(_UNKNOWN_LOG, prior=False)
    assert rules.primary_category == Category.UNKNOWN
    d = diagnose(_UNKNOWN_LOG, prior=_TOY)
    p = d.primary
    assert d.primary_category == Category.COMM and p.basis == "prior"
    assert p.confidence <= MAX_CONFIDENCE
    assert "no known message or code matched" in p.summary and "resembles the comm logs" in p.summary
    assert "\u201chandshake\u201d" in p.summary and "zorblax rendezvous handshake" in p.summary  # the line still quoted
    assert any(e.startswith("prior: comm") for e in p.evidence)
    assert p.to_dict()["basis"] == "prior"


def test_fallback_below_threshold_or_unknown_class_stays_unknown():
    strict = Prior.from_dict(train([("comm", Counter(rendezvous=5)), ("environment", Counter(firmware=5))],
                                   threshold=1e9))
    assert diagnose(_UNKNOWN_LOG, prior=strict).primary_category == Category.UNKNOWN
    d = diagnose("RuntimeError: worker segfault segfault\n", prior=_TOY)
    assert d.primary_category == Category.UNKNOWN and d.primary.basis == "rules"


@pytest.mark.parametrize("text", [
    "RuntimeError: rendezvous handshake peer: error code is 507015\n",           # a catalogued code decides
    "RuntimeError: CUDA error: an illegal memory access was encountered rendezvous handshake peer\n",  # a message
    "[2025-01-01] INFO step 1 loss 0.5 rendezvous handshake peer\n",              # no error line: benign
])
def test_fallback_never_overrides_rules(text):
    with_prior, rules = diagnose(text, prior=_TOY), diagnose(text, prior=False)
    assert with_prior.to_dict() == rules.to_dict()
    assert all(i.basis == "rules" for i in with_prior.incidents)


def test_garbage_input_still_exit_2(tmp_path):
    p = tmp_path / "garbage.log"
    p.write_bytes(bytes(range(256)) * 50)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    for f in (p, empty):
        r = CliRunner().invoke(cli, ["diagnose", str(f)])
        assert r.exit_code == 2 and "Traceback" not in r.output


def test_committed_prior_changes_only_rule_unknowns_on_the_dev_corpus():
    assert load_prior() is not None
    for r in corpus_rows():
        rules, full = diagnosed(r["file"], prior=False), diagnosed(r["file"])
        if rules.primary_category != Category.UNKNOWN:
            assert full.to_dict() == rules.to_dict(), r["file"]
        elif full.primary_category != Category.UNKNOWN:
            assert full.primary.basis == "prior" and full.primary.confidence <= MAX_CONFIDENCE


def _guesses(*bands):
    """Out-of-fold guesses: for each (margin, right, wrong), that many right and wrong guesses at that margin."""
    out = []
    for margin, right, wrong in bands:
        out += [{"file": f"r{margin}_{i}", "label": "comm", "guess": "comm", "margin": margin} for i in range(right)]
        out += [{"file": f"w{margin}_{i}", "label": "comm", "guess": "environment", "margin": margin}
                for i in range(wrong)]
    return out


def test_retrain_keeps_the_committed_threshold_on_a_flat_curve():
    cv = load_script("benchmarks/diagnose_prior_cv.py")
    # between margins 1 and 2: 61 right, 30 wrong -> right - 2 x wrong = +1 for the lower threshold: noise
    guesses = _guesses((5.0, 200, 5), (1.5, 61, 30), (0.5, 20, 40))
    best, _ = cv.choose_threshold(guesses)
    assert best == 1.5
    kept = cv.keep_or_switch(guesses, best, committed=2.0)
    assert kept["threshold"] == 2.0 and kept["switch_share"] < cv.SWITCH_CONFIDENCE and kept["gain"] == 1
    assert cv.keep_or_switch(guesses, best, committed=None)["threshold"] == best   # the first run takes the best


def test_retrain_switches_when_the_best_is_clearly_better():
    cv = load_script("benchmarks/diagnose_prior_cv.py")
    guesses = _guesses((5.0, 200, 5), (1.5, 90, 5), (0.5, 20, 40))   # +80 for accepting the 1.5 band
    best, _ = cv.choose_threshold(guesses)
    switched = cv.keep_or_switch(guesses, best, committed=2.0)
    assert switched["threshold"] == best == 1.5 and switched["switch_share"] >= cv.SWITCH_CONFIDENCE
    # and the other way: a committed threshold far too low gives way to a higher best
    worse = cv.keep_or_switch(guesses, best, committed=0.1)
    assert worse["threshold"] == 1.5 and worse["gain"] == -(20 - 2 * 40)   # the 0.5 band no longer accepted


def test_switch_test_resamples_logs_not_fold_draws():
    cv = load_script("benchmarks/diagnose_prior_cv.py")
    one = _guesses((5.0, 200, 5), (1.5, 61, 30), (0.5, 20, 40))
    two = one + [dict(g, draw=1) for g in one]             # the same guesses in a second fold draw
    assert cv.objective_gain(two, 2.0, 1.5) == [2 * v for v in cv.objective_gain(one, 2.0, 1.5)]   # one unit per log
    assert cv.keep_or_switch(two, 1.5, 2.0)["switch_share"] == cv.keep_or_switch(one, 1.5, 2.0)["switch_share"]


def test_repeated_draws_guess_every_log_once_per_draw():
    cv = load_script("benchmarks/diagnose_prior_cv.py")
    rows = [{"file": f"f{i:02d}.log", "label": lab, "learned": lab, "fold": i % cv.FOLDS,
             "feats": Counter({lab: 2, f"w{i}": 1})}
            for i, lab in enumerate(["comm", "environment"] * 15 + ["benign"] * 2)]
    pooled = cv.repeated_alone(rows, _trainer(), repeats=4)
    assert len(pooled) == 30 * 4 and {g["draw"] for g in pooled} == set(range(4))
    assert all(Counter(g["file"] for g in pooled).get(f"f{i:02d}.log") == 4 for i in range(30))
    other = cv.repeated_alone(rows, _trainer(), repeats=2, seed=cv.SEED + 1000)   # another seed family: redrawn
    assert len(other) == 60 and {g["draw"] for g in other} == {0, 1}
    assert [g for g in pooled if g["draw"] == 0] == [dict(g, draw=0) for g in cv.prior_alone(rows, _trainer())]
