"""Accuracy of memplan's estimate against the real CPU run, on every fixture model.

Runs `memplan.validate.validate(..., device="cpu")` on each model file in fixtures/models (decoder_1b.py is
skipped: 1B parameters are too big to train for real on a CPU) at batch 1 and 2, with each fixture's own
default sequence length, and writes benchmarks/results/validate_cpu.json and .md: predicted vs measured
peak allocated bytes, the error, and the independent cross-check of the measurement (the allocator
reporter's own counter vs the event ledger).

    python benchmarks/validate_cpu.py [--batches 1 2] [--only mlp gpt2]
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP = {"decoder_1b"}


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    import torch

    from memplan import __version__
    from memplan.units import fmt_bytes
    from memplan.validate import validate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "validate_cpu"))
    a = ap.parse_args(argv)
    rows = []
    for path in sorted((ROOT / "fixtures" / "models").glob("*.py")):
        name = path.stem
        if name in SKIP or (a.only and name not in a.only):
            continue
        for b in a.batches:
            t0 = time.perf_counter()
            v = validate(str(path), device="cpu", batch_size=b)
            row = {"model": name, "batch_size": b, "seq_len": v.config["seq_len"],
                   "predicted_bytes": v.predicted["peak_allocated_bytes"],
                   "measured_bytes": v.measured["peak_allocated_bytes"], "error_pct": v.error_pct,
                   "predicted_phase": v.predicted["peak_phase"], "measured_phase": v.measured["peak_phase"],
                   "worst_phase_error_pct": max((abs(r["error_pct"]) for r in v.phases if r["error_pct"] is not None),
                                                default=None),
                   "counter_peak_diff_bytes": v.checks.get("allocator_counter_peak_diff_bytes"),
                   "ledger_end_diff_bytes": v.checks.get("ledger_end_diff_bytes"),
                   "failure": v.failure and v.failure["summary"], "seconds": round(time.perf_counter() - t0, 1)}
            rows.append(row)
            print(f"{name:18s} b={b}  predicted {fmt_bytes(row['predicted_bytes']):>11s}  measured "
                  f"{fmt_bytes(row['measured_bytes']):>11s}  error {row['error_pct']:+.4f} %  ({row['seconds']} s)",
                  flush=True)
    errs = [abs(r["error_pct"]) for r in rows if r["error_pct"] is not None]
    out = {"benchmark": "validate_cpu", "memplan_version": __version__, "torch": torch.__version__,
           "python": platform.python_version(), "machine": platform.machine(),
           "summary": {"runs": len(rows), "max_abs_error_pct": max(errs) if errs else None,
                       "within_0_5_pct": sum(e <= 0.5 for e in errs)},
           "rows": rows}
    Path(a.out + ".json").write_text(json.dumps(out, indent=2) + "\n")
    md = ["# validate on CPU: predicted vs measured peak allocated",
          "",
          f"memplan {__version__}, torch {torch.__version__}, Python {platform.python_version()} "
          f"({platform.machine()}). Measured: PyTorch's CPU-allocator events under torch.profiler, over the "
          "traced optimizer steps (model build excluded). Error = (predicted - measured) / measured. `counter diff`: "
          "the allocator reporter's own running counter minus the event ledger, at the peak (0 = agree).",
          "",
          "| model | batch | seq | predicted | measured | error | worst phase error | peak phase | counter diff |",
          "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        md.append(f"| {r['model']} | {r['batch_size']} | {r['seq_len'] or '-'} | {fmt_bytes(r['predicted_bytes'])} | "
                  f"{fmt_bytes(r['measured_bytes'])} | {r['error_pct']:+.4f} % | "
                  f"{r['worst_phase_error_pct']:.2f} % | {r['measured_phase']} | {r['counter_peak_diff_bytes']} B |")
    md += ["", f"{out['summary']['within_0_5_pct']} of {len(rows)} runs within 0.5 %; "
               f"largest |error| {out['summary']['max_abs_error_pct']:.4f} %.", ""]
    Path(a.out + ".md").write_text("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
