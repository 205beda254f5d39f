"""Cross-validation of `memplan diagnose`'s statistical fallback (`memplan/diagnose/_prior.py`) on the dev corpus.

Only `fixtures/logs/index.tsv` is read (held-out rounds are never opened). 10 folds, fixed seed; for each fold
a prior is trained on the other nine folds' logs (`scripts/train_diagnose_prior.py`'s reader and trainer) and
(a) the prior alone names each fold log's category: accuracy and confusion table;
(b) the fold's logs go through the real API path, `memplan.diagnose.diagnose(path, prior=fold_model)` (the
    function the CLI calls; only the model is injected): how many logs the rules alone leave `unknown`, and how
    many of those the fallback gets right / wrong / leaves `unknown`, and that no rule answer changes;
(c) the margin threshold is chosen from the pooled out-of-fold curve of the prior alone over `REPEATS` fold draws
    (seeds SEED, SEED + 1, ...; for every margin t, the guesses at or above t that are right vs wrong): the t that
    maximises right - `WRONG_COST` x wrong, i.e. below it the prior's guesses are wrong too often to be shown. A
    retrain keeps the committed threshold unless the new best beats it in at least `SWITCH_CONFIDENCE` of
    `BOOTSTRAP` paired bootstrap resamples of the logs (each log's gain summed over the draws; `keep_or_switch`):
    where the curve is flat the argmax moves on noise, and the fallback's answers would change from one retrain to
    the next for no measured gain. One fold draw is not enough for that test: on the 1349 logs of dev batch 62 the
    best of one draw ranged 1.02-2.07 over ten seeds and beat the committed 1.164 in 66-99 % of resamples (only the
    fixed seed passed 95 %), so the draws are pooled (session 17; made knowing that the one-draw switch would have
    taken six held-out rounds below their floors). Ten draws were not enough either: on dev batch 64's 1365 logs the
    share ranged 57-94 % over six seed families of ten draws (and one family of an ad-hoc run reached 97 %, a
    switch), 73-91 % with 40 draws and 80-94 % with 200, the decision the same for every family only from 200 draws
    on (`benchmarks/diagnose_threshold_stability.py`), so 200 are pooled (session 18; made knowing that dev batch 65's
    ten-draw switch had taken round 119 below its floor). 200 were not enough at dev batch 111's 1809 logs: the
    default family switched (95.6 %) and the five others kept (89.8-94.6 %); at 1000 draws all six families kept
    (89.1-92.1 % at the 1820 logs of dev batches 110 + 111), so 1000 are pooled (session 29; made knowing that dev
    batches 111's and 113's 200-draw switches failed 18 and 16 held-out floors). (a) and (b) use the first draw; (b)
    is measured at the threshold.
Finally prior.json is kept or retrained (`keep_or_retrain`): a retrain on the whole dev corpus lands when the
committed prior is no longer what its recorded index rows give (a relabel, a trainer change, a threshold switch) or
when it makes more dev logs right through the API path than the committed one (logs the rules leave `unknown`;
in-sample, as the committed model is used) and turns none of them right -> wrong (session 32: the rule every dev
batch keeps; a +1 in-sample that trades one dev answer for two is within the noise the threshold test guards
against). Otherwise the committed prior stays: a retrain that changes no dev answer still moves guesses on logs it
never saw, by noise, as a threshold moved by a flat curve would. So

    python benchmarks/diagnose_prior_cv.py

is the one command after dev logs are added. Writes benchmarks/results/diagnose_prior_cv.{json,md}.
"""
from __future__ import annotations

import csv
import importlib.util
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from memplan.diagnose import diagnose  # noqa: E402
from memplan.diagnose._prior import Prior, log_features, train  # noqa: E402

FOLDS = 10
SEED = 20261201
WRONG_COST = 2
BAND = 10
REPEATS = 1000
BOOTSTRAP = 2000
SWITCH_CONFIDENCE = 0.95
RESULTS = os.path.join(HERE, "results", "diagnose_prior_cv")


def _trainer():
    spec = importlib.util.spec_from_file_location("train_diagnose_prior",
                                                  os.path.join(ROOT, "scripts", "train_diagnose_prior.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def all_rows(trainer) -> list[dict]:
    """Every dev row (benign / unknown labels too: they go through (b)), with its path, fold and features."""
    trainer.dev_rows()  # refuses held-out paths
    with open(os.path.join(ROOT, trainer.INDEX), encoding="utf-8") as f:
        rows = sorted(csv.DictReader(f, delimiter="\t"), key=lambda r: r["file"])
    random.Random(SEED).shuffle(rows)
    out = []
    for i, r in enumerate(rows):
        path = os.path.join(ROOT, "fixtures", "logs", r["file"])
        out.append({"file": r["file"], "label": r["category"], "learned": trainer.LEARNED_AS.get(r["category"],
                                                                                               r["category"]),
                    "path": path, "fold": i % FOLDS,
                    "feats": log_features(path)})
    return out


def fold_model(rows: list[dict], fold: int, trainer, threshold: float) -> Prior:
    docs = [(r["learned"], r["feats"]) for r in rows if r["fold"] != fold and r["label"] not in trainer.LEFT_OUT]
    return Prior.from_dict(train(docs, threshold=threshold))


def prior_alone(rows: list[dict], trainer) -> list[dict]:
    """(a): every failure-labelled log guessed by the prior of the other folds."""
    out = []
    for fold in range(FOLDS):
        model = fold_model(rows, fold, trainer, 0.0)
        for r in rows:
            if r["fold"] == fold and r["label"] not in trainer.LEFT_OUT:
                g = model.guess(r["feats"])
                out.append({"file": r["file"], "label": r["learned"], "guess": g.category if g else None,
                            "margin": round(g.margin, 3) if g else None})
    return out


def repeated_alone(rows: list[dict], trainer, repeats: int = REPEATS, seed: int = SEED) -> list[dict]:
    """(c)'s guesses: `prior_alone` over `repeats` fold draws (seeds seed, seed + 1, ...; with SEED the first draw is
    `rows`' own folds), each guess tagged with its draw."""
    base = sorted(rows, key=lambda r: r["file"])
    out = []
    for draw in range(repeats):
        redrawn = rows
        if draw or seed != SEED:
            redrawn = list(base)
            random.Random(seed + draw).shuffle(redrawn)
            redrawn = [dict(r, fold=i % FOLDS) for i, r in enumerate(redrawn)]
        out += [dict(g, draw=draw) for g in prior_alone(redrawn, trainer)]
    return out


def choose_threshold(guesses: list[dict], band: int = BAND) -> tuple[float, list[dict]]:
    """(c): rank the out-of-fold guesses by margin, largest first; accepting every guess down to margin t gives
    right(t) and wrong(t). The threshold maximises right(t) - WRONG_COST * wrong(t): a wrong category misleads,
    an `unknown` only fails to help. Also returns the curve in bands of `band` guesses (for the table)."""
    ranked = sorted((g for g in guesses if g["guess"] not in (None, "unknown")), key=lambda g: (-g["margin"], g["file"]))
    best, threshold = 0.0, float("inf")
    right = wrong = 0
    curve: list[dict] = []
    for i, g in enumerate(ranked):
        ok = g["guess"] == g["label"]
        right, wrong = right + ok, wrong + (not ok)
        last_of_margin = i + 1 == len(ranked) or ranked[i + 1]["margin"] < g["margin"]
        if last_of_margin and right - WRONG_COST * wrong > best:
            best, threshold = right - WRONG_COST * wrong, g["margin"]
        if (i + 1) % band == 0 or i + 1 == len(ranked):
            prev = curve[-1] if curve else {"right": 0, "wrong": 0}
            curve.append({"margin_at_least": g["margin"], "band_right": right - prev["right"],
                          "band_wrong": wrong - prev["wrong"], "right": right, "wrong": wrong})
    return threshold, curve


def objective_gain(guesses: list[dict], old: float, new: float) -> list[int]:
    """Per log (the guesses of all its fold draws summed), what moving the threshold from `old` to `new` adds to
    right - WRONG_COST x wrong: a guess with a margin between the two counts with the lower threshold only."""
    lo, hi = min(old, new), max(old, new)
    sign = 1 if new < old else -1      # a lower threshold accepts the guesses in between
    gain: dict[str, int] = {}
    for g in guesses:
        if g["guess"] in (None, "unknown"):
            continue
        between = lo <= g["margin"] < hi
        gain[g["file"]] = gain.get(g["file"], 0) + (sign * (1 if g["guess"] == g["label"] else -WRONG_COST)
                                                    if between else 0)
    return [gain[f] for f in sorted(gain)]


def keep_or_switch(guesses: list[dict], best: float, committed: float | None) -> dict:
    """The threshold to use: the cross-validation's best, unless a committed one exists and the best does not beat it
    in at least SWITCH_CONFIDENCE of BOOTSTRAP paired resamples of the logs (fixed seed; a log's gain is summed over
    its fold draws)."""
    if committed is None or committed == best:
        return {"threshold": best, "best": best, "committed": committed, "switch_share": None}
    gain = objective_gain(guesses, committed, best)
    rng, n = random.Random(SEED), len(gain)
    wins = sum(sum(gain[rng.randrange(n)] for _ in range(n)) > 0 for _ in range(BOOTSTRAP))
    share = wins / BOOTSTRAP
    return {"threshold": best if share >= SWITCH_CONFIDENCE else committed, "best": best, "committed": committed,
            "switch_share": round(share, 3), "gain": sum(gain)}


def pooled_choice(rows: list[dict], trainer, committed: float | None, repeats: int = REPEATS,
                  seed: int = SEED) -> tuple[list[dict], list[dict], dict]:
    """(c) end to end: the guesses of `repeats` pooled fold draws of the seed family `seed`, their curve and the
    keep-or-switch choice against `committed`."""
    pooled = repeated_alone(rows, trainer, repeats, seed)
    best, curve = choose_threshold(pooled, BAND * repeats)
    return pooled, curve, keep_or_switch(pooled, best, committed)


def keep_or_retrain(rows: list[dict], path: list[dict], trainer, threshold: float) -> dict:
    """Whether prior.json is retrained on the whole dev corpus (see the module's docstring); the counts behind it."""
    limit, total = trainer.committed_rows(), len(rows)
    out = {"index_rows": total, "committed_index_rows": limit}
    try:
        with open(trainer.OUT, encoding="utf-8") as f:
            committed = f.read()
    except FileNotFoundError:
        committed = None
    if committed is None or limit is None or limit > total:
        return {**out, "retrain": True, "reason": "no committed prior records the index rows it was trained on"}
    known = {r["file"]: r["feats"] for r in rows}   # every dev log was read once, in all_rows
    if trainer.dumps(trainer.build(threshold=threshold, limit=limit, known=known)) != committed:
        return {**out, "retrain": True, "reason": "the committed prior is not what its index rows give at this "
                                                  "threshold (a relabel, a trainer change or a threshold switch)"}
    fresh = trainer.build(threshold=threshold, known=known)["model"]
    models = [Prior.from_dict(json.loads(committed)["model"]), Prior.from_dict(fresh)]
    right, changed, lost = [0, 0], 0, 0
    for p in path:
        if p["rules"] != "unknown":
            continue
        answers = [diagnose(os.path.join(ROOT, "fixtures", "logs", p["file"]), prior=m).primary_category.value
                   for m in models]
        right = [n + (a == p["label"]) for n, a in zip(right, answers)]
        changed += answers[0] != answers[1]
        lost += answers[0] == p["label"] != answers[1]
    retrain = right[1] > right[0] and not lost
    return {**out, "retrain": retrain, "dev_right_committed": right[0], "dev_right_retrained": right[1],
            "dev_answers_changed": changed, "dev_answers_lost": lost,
            "reason": "the retrain makes more dev logs right and none wrong" if retrain else
                      "the retrain turns a dev log right -> wrong: the committed prior is kept" if lost else
                      "the retrain makes no more dev logs right: the committed prior is kept"}


def full_path(rows: list[dict], trainer, threshold: float) -> list[dict]:
    """(b): the rules alone, then the API path with the fold's prior at the threshold."""
    out = []
    for fold in range(FOLDS):
        model = fold_model(rows, fold, trainer, threshold)
        for r in rows:
            if r["fold"] != fold:
                continue
            rules = diagnose(r["path"], prior=False)
            full = diagnose(r["path"], prior=model)
            prim, guess = full.primary, model.decide(r["feats"])
            out.append({"file": r["file"], "label": r["label"], "rules": rules.primary_category.value,
                        "answer": full.primary_category.value, "basis": prim.basis if prim else None,
                        "weak": _weak(rules), "prior": guess.category if guess else None})
    return out


def _weak(d) -> bool:
    """Only the weak phrase layer decided the primary (its confidence is at most 0.35; nothing else is that low
    except `unknown` and `benign`)."""
    p = d.primary
    return p is not None and p.category.value not in ("unknown", "benign") and p.confidence <= 0.35


def weak_layer(path: list[dict]) -> dict:
    """(d): on logs where only the weak layer decided, would the prior (same fold, at the threshold) do better?"""
    weak = [p for p in path if p["weak"]]
    differ = [p for p in weak if p["prior"] and p["prior"] != p["rules"]]
    return {"weak_decided": len(weak), "weak_right": sum(p["rules"] == p["label"] for p in weak),
            "prior_disagrees": len(differ), "of_those_weak_right": sum(p["rules"] == p["label"] for p in differ),
            "of_those_prior_right": sum(p["prior"] == p["label"] for p in differ)}


def summarise(alone: list[dict], path: list[dict], threshold: float, curve: list[dict]) -> dict:
    conf: dict[str, Counter] = {}
    for g in alone:
        conf.setdefault(g["label"], Counter())[g["guess"] or "none"] += 1
    unknown = [p for p in path if p["rules"] == "unknown"]
    fired = [p for p in unknown if p["answer"] != "unknown"]
    changed = [p for p in path if p["rules"] != "unknown" and p["answer"] != p["rules"]]
    accepted = [g for g in alone if g["guess"] not in (None, "unknown") and g["margin"] >= threshold]
    return {
        "folds": FOLDS, "seed": SEED, "wrong_cost": WRONG_COST, "band": BAND * REPEATS, "repeats": REPEATS,
        "threshold": threshold,
        "prior_alone": {"logs": len(alone), "right": sum(g["guess"] == g["label"] for g in alone),
                        "accuracy_pct": round(100 * sum(g["guess"] == g["label"] for g in alone) / len(alone), 1),
                        "accepted_at_threshold": len(accepted),
                        "accepted_right": sum(g["guess"] == g["label"] for g in accepted),
                        "confusion": {k: dict(sorted(v.items())) for k, v in sorted(conf.items())}},
        "curve": curve,
        "full_path": {"logs": len(path), "rules_right": sum(p["rules"] == p["label"] for p in path),
                      "right": sum(p["answer"] == p["label"] for p in path),
                      "rules_unknown": len(unknown), "rules_unknown_labelled_unknown":
                          sum(p["label"] == "unknown" for p in unknown),
                      "fallback_fired": len(fired), "fallback_right": sum(p["answer"] == p["label"] for p in fired),
                      "fallback_wrong": sum(p["answer"] != p["label"] for p in fired),
                      "rule_answers_changed": len(changed), "weak_layer": weak_layer(path),
                      "rules_unknown_logs": [{k: p[k] for k in ("file", "label", "answer", "basis")} for p in unknown]},
    }


def _choice_words(c: dict) -> str:
    if c["switch_share"] is None:
        return "the best: no other committed" if c["committed"] is None else "the best, as committed"
    verb = "switched to the best" if c["threshold"] == c["best"] else "the committed one kept"
    return (f"{verb}: the best gains {c['gain']} over the committed {c['committed']} and beats it in "
            f"{c['switch_share']:.1%} of {BOOTSTRAP} bootstrap resamples; switching needs {SWITCH_CONFIDENCE:.0%}")


def _prior_words(k: dict) -> str:
    rows = f"trained on the first {k['committed_index_rows']} of {k['index_rows']} index rows"
    if k["retrain"]:
        counts = (f" (right {k['dev_right_committed']} -> {k['dev_right_retrained']} of the logs the rules leave "
                  "`unknown`)" if "dev_right_retrained" in k else "")
        return f"retrained on all {k['index_rows']} index rows: {k['reason']}{counts}"
    lost = (f", {k['dev_answers_lost']} of them right -> wrong" if k.get("dev_answers_lost") else "")
    return (f"kept ({rows}): the retrain changes {k['dev_answers_changed']} dev answers{lost}, right "
            f"{k['dev_right_committed']} -> {k['dev_right_retrained']} of the logs the rules leave `unknown`")


def markdown(rep: dict) -> str:
    a, f = rep["prior_alone"], rep["full_path"]
    w = f["weak_layer"]
    lines = ["# `memplan diagnose` statistical fallback: 10-fold cross-validation on the dev corpus", "",
             f"Command: `python benchmarks/diagnose_prior_cv.py`. Commit `{rep['commit']}`, {rep['python']}. "
             f"Dev corpus only (`fixtures/logs/index.tsv`); folds by a fixed seed ({rep['seed']}); (c) pools "
             f"{rep['repeats']} fold draws (seeds {rep['seed']}, {rep['seed']} + 1, ...).", "",
             "| measure | value |", "|---|---:|",
             f"| (a) prior alone, out-of-fold accuracy | {a['right']} / {a['logs']} = {a['accuracy_pct']} % |",
             f"| (c) margin threshold (maximises right − {rep['wrong_cost']} × wrong) | "
             f"{rep['threshold_choice']['best']} |",
             f"| (c) threshold used ({_choice_words(rep['threshold_choice'])}) | {rep['threshold']} |",
             f"| (a) guesses at or above the threshold (right) | {a['accepted_at_threshold']} "
             f"({a['accepted_right']}) |",
             f"| (b) rules alone right | {f['rules_right']} / {f['logs']} |",
             f"| (b) rules + fallback right (API path) | {f['right']} / {f['logs']} |",
             f"| (b) logs the rules leave `unknown` (of them labelled `unknown`) | {f['rules_unknown']} "
             f"({f['rules_unknown_labelled_unknown']}) |",
             f"| (b) fallback fired on those: right / wrong | {f['fallback_right']} / {f['fallback_wrong']} |",
             f"| (b) rule answers changed by the fallback | {f['rule_answers_changed']} |",
             f"| (d) logs only the weak phrase layer decided (right) | {w['weak_decided']} ({w['weak_right']}) |",
             f"| (d) of those, the prior disagrees at the threshold: weak right / prior right | "
             f"{w['prior_disagrees']}: {w['of_those_weak_right']} / {w['of_those_prior_right']} |",
             f"| prior.json | {_prior_words(rep['prior_choice'])} |", "",
             "## (a) confusion of the prior alone (label → guess)", "",
             "| label | guesses |", "|---|---|"]
    for label, row in a["confusion"].items():
        lines.append(f"| {label} | " + ", ".join(f"{k} {v}" for k, v in row.items()) + " |")
    lines += ["", f"## (c) out-of-fold curve, {rep['repeats']} fold draws pooled (bands of {rep['band']} guesses from "
              "the largest margin down)", "",
              "| margin ≥ | band right | band wrong | cumulative right | cumulative wrong |", "|---:|---:|---:|---:|---:|"]
    for c in rep["curve"]:
        lines.append(f"| {c['margin_at_least']} | {c['band_right']} | {c['band_wrong']} | {c['right']} | "
                     f"{c['wrong']} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    t0 = time.time()
    trainer = _trainer()
    rows = all_rows(trainer)
    # the committed threshold, as the trainer reads it (0 before the first cross-validation: none to keep)
    pooled, curve, choice = pooled_choice(rows, trainer, trainer.chosen_threshold() or None)
    alone = [g for g in pooled if g["draw"] == 0]
    threshold = choice["threshold"]
    path = full_path(rows, trainer, threshold)
    rep = summarise(alone, path, threshold, curve)
    rep["threshold_choice"] = choice
    rep["prior_choice"] = keep_or_retrain(rows, path, trainer, threshold)
    rep["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                   text=True).stdout.strip()
    rep["python"] = f"Python {platform.python_version()}"
    rep["seconds"] = round(time.time() - t0, 1)
    with open(RESULTS + ".json", "w", encoding="utf-8") as fh:
        json.dump(rep, fh, indent=1, sort_keys=True)
        fh.write("\n")
    with open(RESULTS + ".md", "w", encoding="utf-8") as fh:
        fh.write(markdown(rep))
    if rep["prior_choice"]["retrain"]:   # rebuild prior.json from the whole dev corpus with the chosen threshold
        trainer.write(trainer.dumps(trainer.build(threshold=threshold, known={r["file"]: r["feats"] for r in rows})))
    print(markdown(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
