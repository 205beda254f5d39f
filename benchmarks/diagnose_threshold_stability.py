"""How stable `benchmarks/diagnose_prior_cv.py`'s threshold test is: its keep-or-switch decision for the committed
threshold under other seed families of fold draws, for several numbers of pooled draws (dev corpus only).

A test whose answer depends on which seeds drew the folds measures the folds, not the threshold: for each number of
draws (REPEATS_TRIED) and each seed family (SEED, SEED + 1000, ..., SEED + 5000: draws seed, seed + 1, ...), the pooled
out-of-fold guesses of the prior alone give the best threshold and the share of bootstrap resamples in which it beats
the committed one (`keep_or_switch`, unchanged). The number of draws `diagnose_prior_cv.py` pools (REPEATS) is chosen
from this table: the fewest for which the decision is the same for every seed family.

    python benchmarks/diagnose_threshold_stability.py     # writes benchmarks/results/diagnose_threshold_stability.{json,md}
    python benchmarks/diagnose_threshold_stability.py --draws 1000 --out /tmp/stability1000   # other counts, elsewhere
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diagnose_prior_cv as cv  # noqa: E402

REPEATS_TRIED = (10, 40, 200)
FAMILIES = tuple(cv.SEED + 1000 * k for k in range(6))
RESULTS = os.path.join(cv.ROOT, "benchmarks", "results", "diagnose_threshold_stability")


def study(rows, trainer, committed: float, draws=REPEATS_TRIED) -> list[dict]:
    out = []
    for repeats in draws:
        for seed in FAMILIES:
            t0 = time.time()
            choice = cv.pooled_choice(rows, trainer, committed, repeats, seed)[2]
            out.append(dict(choice, repeats=repeats, seed=seed, seconds=round(time.time() - t0, 1)))
            print(json.dumps(out[-1]), flush=True)
    return out


def markdown(rep: dict) -> str:
    lines = ["# `memplan diagnose` fallback: how stable the threshold's keep-or-switch test is", "",
             f"Command: `{rep.get('command', 'python benchmarks/diagnose_threshold_stability.py')}`. Commit `{rep['commit']}`, {rep['dev_logs']} "
             f"dev logs, committed threshold {rep['committed']}; switching needs {cv.SWITCH_CONFIDENCE:.0%} of "
             f"{cv.BOOTSTRAP} bootstrap resamples. `diagnose_prior_cv.py` pools {cv.REPEATS} draws.", "",
             "| draws pooled | seed family | best threshold | beats the committed one in | decision |",
             "|---:|---:|---:|---:|---|"]
    for r in rep["runs"]:
        share = "-" if r["switch_share"] is None else f"{r['switch_share']:.1%}"
        decision = "switch" if r["threshold"] != r["committed"] else "keep"
        lines.append(f"| {r['repeats']} | {r['seed']} | {r['best']} | {share} | {decision} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, nargs="+", default=list(REPEATS_TRIED), help="numbers of pooled draws to try")
    ap.add_argument("--out", default=RESULTS, help="results path without extension")
    args = ap.parse_args()
    trainer = cv._trainer()
    rows = cv.all_rows(trainer)
    committed = trainer.chosen_threshold() or None
    rep = {"commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=cv.ROOT, capture_output=True,
                                    text=True).stdout.strip(),
           "dev_logs": len(rows), "committed": committed, "runs": study(rows, trainer, committed, args.draws)}
    if tuple(args.draws) != REPEATS_TRIED:
        rep["command"] = "python benchmarks/diagnose_threshold_stability.py --draws " + " ".join(map(str, args.draws))
    with open(args.out + ".json", "w", encoding="utf-8") as fh:
        json.dump(rep, fh, indent=1, sort_keys=True)
        fh.write("\n")
    with open(args.out + ".md", "w", encoding="utf-8") as fh:
        fh.write(markdown(rep))
    print(markdown(rep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
