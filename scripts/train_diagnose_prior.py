"""Train the statistical fallback of `memplan diagnose` (`memplan/diagnose/data/prior.json`) from the dev corpus.

Reads `fixtures/logs/index.tsv` (the dev logs the rules are written from) and nothing else: a held-out index
(`heldout*.tsv`) or a log under `fixtures/logs/heldout*/` is refused. Each log is read and scanned as
`memplan diagnose` reads it (`memplan.diagnose._prior.log_features`); logs labelled `benign` are left out, logs
labelled `unknown` (their text names no cause) are learned as a class of their own, so that a log like them stays
`unknown`; fragmentation, foreign-memory and absurd-request are learned as capacity (`LEARNED_AS`: which memory failure it
was is the rules' arithmetic on the allocator's numbers, not a matter of words). The margin threshold is the one that
`benchmarks/diagnose_prior_cv.py` chose by cross-validation (its results JSON, key `threshold`; 0 when absent).
The output is deterministic: sorted keys, integer counts, rounded floats, no date or commit.

prior.json records how many rows of the index it was trained on (`about.index_rows`; dev rows are only ever appended
to index.tsv, so they are its first rows). A retrain is a choice, like the threshold: `benchmarks/diagnose_prior_cv.py`
keeps the committed prior unless the retrain switches the threshold or makes more dev logs right
(`keep_or_retrain` there), so that adding dev logs does not move the fallback's guesses elsewhere by noise. `--check`
rebuilds from the recorded rows, so a relabel of one of them (or a change of the trainer) still shows as stale.

    python scripts/train_diagnose_prior.py            # retrain prior.json on the whole current index.tsv
    python scripts/train_diagnose_prior.py --check    # exit 1 when prior.json is not what its recorded rows give
    python benchmarks/diagnose_prior_cv.py            # cross-validate, choose the threshold, keep or retrain prior.json
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from memplan.diagnose._prior import log_features, train  # noqa: E402

INDEX = "fixtures/logs/index.tsv"
OUT = os.path.join(ROOT, "memplan", "diagnose", "data", "prior.json")
CV_RESULTS = os.path.join(ROOT, "benchmarks", "results", "diagnose_prior_cv.json")
LEFT_OUT = ("benign",)
# Which memory failure an OOM was is arithmetic on the allocator's numbers (the rules do it); in words they are one
# family, and a number-less out-of-memory is `capacity` by the rules' convention: the prior learns them as one.
LEARNED_AS = {"fragmentation": "capacity", "absurd-request": "capacity", "foreign-memory": "capacity"}
_HELDOUT = re.compile(r"(?:^|/)heldout")


def dev_rows(index: str = INDEX, limit: int | None = None) -> list[dict[str, str]]:
    """(file, category) rows of the dev index that the prior learns from (of its first `limit` rows, benign
    included, when given); refuses held-out data."""
    if _HELDOUT.search(index.replace(os.sep, "/")):
        raise SystemExit(f"refusing to train from {index}: held-out logs are never used to build diagnose")
    rows = index_rows(index)
    if limit is not None:
        if limit > len(rows):
            raise SystemExit(f"prior.json was trained on {limit} rows of {index}, which has only {len(rows)}: "
                             "retrain with `python scripts/train_diagnose_prior.py`")
        rows = rows[:limit]
    out = []
    for r in rows:
        if _HELDOUT.search(r["file"]):
            raise SystemExit(f"refusing {r['file']} in {index}: held-out logs are never used to build diagnose")
        if r["category"] not in LEFT_OUT:
            out.append({"file": r["file"], "category": LEARNED_AS.get(r["category"], r["category"])})
    return out


def index_rows(index: str = INDEX) -> list[dict[str, str]]:
    """All data rows of a dev index, in order."""
    with open(os.path.join(ROOT, index), encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def committed_rows() -> int | None:
    """How many index rows the committed prior.json was trained on (None when it is missing or does not say)."""
    try:
        with open(OUT, encoding="utf-8") as f:
            return json.load(f)["about"].get("index_rows")
    except FileNotFoundError:
        return None


def features(rows: list[dict[str, str]], known: dict[str, Any] | None = None) -> list[tuple[str, Any]]:
    """(category, token counts) of each row's log; `known` (file -> counts) holds logs a caller has already read
    with `log_features` (the cross-validation reads every dev log once)."""
    base, known = os.path.join(ROOT, "fixtures", "logs"), known or {}
    return [(r["category"], known[r["file"]] if r["file"] in known else log_features(os.path.join(base, r["file"])))
            for r in rows]


def chosen_threshold() -> float:
    """The margin threshold the last cross-validation chose (0 before the first one)."""
    try:
        with open(CV_RESULTS, encoding="utf-8") as f:
            return float(json.load(f)["threshold"])
    except (FileNotFoundError, KeyError):
        return 0.0


def build(threshold: float | None = None, index: str = INDEX, limit: int | None = None,
          known: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole prior.json document for the first `limit` rows of the dev index (all of them when None); `known` as
    in `features`."""
    limit = len(index_rows(index)) if limit is None else limit
    rows = dev_rows(index, limit)
    thr = chosen_threshold() if threshold is None else threshold
    model = train(features(rows, known), threshold=round(thr, 3))
    about = {"trained_from": index, "index_rows": limit, "logs": len(rows), "left_out_labels": list(LEFT_OUT),
             "learned_as": LEARNED_AS, "script": "scripts/train_diagnose_prior.py",
             "threshold_from": "benchmarks/diagnose_prior_cv.py (10-fold cross-validation on the same corpus)",
             "model": "multinomial naive Bayes, Laplace smoothing; vocab: word -> counts per category (order of "
                      "`categories`)"}
    return {"about": about, "model": model}


def dumps(doc: dict[str, Any]) -> str:
    """Deterministic text: sorted keys, one vocabulary word per line."""
    text = json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False)
    return re.sub(r"\[\s+([-\d.,\s]+?)\s+\]", lambda m: "[" + ",".join(m.group(1).split(",")).replace(" ", "")
                  .replace("\n", "") + "]", text) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when prior.json differs from a fresh build on the index rows it records")
    ap.add_argument("--index", default=INDEX, help="dev index to train from (default %(default)s)")
    args = ap.parse_args(argv)
    if args.check:
        limit = committed_rows()
        text = dumps(build(index=args.index, limit=limit))
        with open(OUT, encoding="utf-8") as f:
            same = f.read() == text
        print(f"prior.json is in sync with the first {limit} rows of {args.index}" if same else
              "prior.json is stale: retrain with `python scripts/train_diagnose_prior.py`")
        return 0 if same else 1
    write(dumps(build(index=args.index)))
    return 0


def write(text: str) -> None:
    """Replace the committed prior.json with `text`."""
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
