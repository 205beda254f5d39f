"""Accuracy on the CPU: memplan's fake-tensor estimate vs. PyTorch's own CPU-allocator accounting.

For every fixture model, at fp32 and bf16-amp, batch 1 and 4, grad accumulation 1 and 2: trace the step
on fake tensors (`memplan.api.analyze`), run the same step for real under the profiler
(`memplan.measure.measure_cpu`) and compare the steady-state peak allocated bytes.
Combinations whose real run would take over a minute (judged from the batch-1 run) are skipped, as is
any model whose real run needs more memory than this machine has.

    python benchmarks/accuracy_cpu.py [--only NAME ...] [--out benchmarks/results/accuracy_cpu]
"""
from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402

from memplan import api  # noqa: E402
from memplan.measure import measure_cpu  # noqa: E402
from memplan.workload import TrainConfig, load_model_file  # noqa: E402

TOO_BIG = {"decoder_1b": "the real run needs ~40 GiB (1.1B parameters, batch 32): trace-only"}
REAL_BUDGET_S = 60.0


def run_case(path: str, cfg: TrainConfig) -> dict:
    wl = load_model_file(path)
    t0 = time.perf_counter()
    est = api.analyze(wl, config=cfg)
    t_trace = time.perf_counter() - t0
    gc.collect()
    t0 = time.perf_counter()
    meas = measure_cpu(wl, cfg)
    t_real = time.perf_counter() - t0
    err = 100.0 * (est.peak_allocated_bytes - meas.peak_allocated_bytes) / meas.peak_allocated_bytes
    return {
        "estimate_bytes": est.peak_allocated_bytes, "measured_bytes": meas.peak_allocated_bytes,
        "error_pct": err, "estimate_phase": est.peak_phase, "measured_phase": meas.peak_phase,
        "trace_s": round(t_trace, 2), "real_s": round(t_real, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", default="benchmarks/results/accuracy_cpu")
    args = ap.parse_args()
    torch.manual_seed(0)
    cases = []
    for path in sorted(glob.glob("fixtures/models/*.py")):
        name = os.path.splitext(os.path.basename(path))[0]
        if args.only and name not in args.only:
            continue
        if name in TOO_BIG:
            cases.append({"model": name, "skipped": TOO_BIG[name]})
            continue
        base_time = None
        for precision in ("fp32", "bf16-amp"):
            for batch in (1, 4):
                for accum in (1, 2):
                    row = {"model": name, "precision": precision, "batch_size": batch, "grad_accum": accum}
                    if base_time is not None and base_time * batch * accum > REAL_BUDGET_S:
                        row["skipped"] = f"real run estimated at {base_time * batch * accum:.0f} s (> 60 s)"
                        cases.append(row)
                        continue
                    cfg = TrainConfig(batch_size=batch, precision=precision, grad_accum=accum)
                    row.update(run_case(path, cfg))
                    if base_time is None:
                        base_time = row["real_s"]
                    print(f"{name:18s} {precision:8s} b{batch} k{accum}  est {row['estimate_bytes']:>13,d}  "
                          f"meas {row['measured_bytes']:>13,d}  err {row['error_pct']:+.4f} %", flush=True)
                    cases.append(row)
    measured = [c for c in cases if "error_pct" in c]
    errs = [abs(c["error_pct"]) for c in measured]
    summary = {
        "cases": len(measured), "skipped": len(cases) - len(measured),
        "median_abs_error_pct": statistics.median(errs) if errs else None,
        "max_abs_error_pct": max(errs) if errs else None,
        "within_0_5_pct": sum(e <= 0.5 for e in errs), "within_0_1_pct": sum(e <= 0.1 for e in errs),
    }
    result = {
        "benchmark": "accuracy_cpu", "torch": torch.__version__, "python": platform.python_version(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(), "summary": summary, "cases": cases,
        "ground_truth": "torch.profiler CPU allocator events (c10 ProfiledCPUMemoryReporter), steady-state step",
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = [
        "# Accuracy on CPU: estimate vs. measured peak allocated (over the traced optimizer steps)", "",
        f"torch {torch.__version__}, CPU capability {result['cpu_capability']}. Ground truth: "
        "PyTorch's CPU-allocator accounting of the real step (profiler memory events).", "",
        f"**{summary['cases']} cases**: median |error| {summary['median_abs_error_pct']:.4f} %, "
        f"max |error| {summary['max_abs_error_pct']:.4f} %, {summary['within_0_5_pct']} within 0.5 %, "
        f"{summary['within_0_1_pct']} within 0.1 %; {summary['skipped']} skipped.", "",
        "| model | precision | batch | accum | estimate | measured | error | trace s | real s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cases:
        if "error_pct" in c:
            lines.append(f"| {c['model']} | {c['precision']} | {c['batch_size']} | {c['grad_accum']} | "
                         f"{c['estimate_bytes']:,} | {c['measured_bytes']:,} | {c['error_pct']:+.4f} % | "
                         f"{c['trace_s']} | {c['real_s']} |")
        else:
            lines.append(f"| {c['model']} | {c.get('precision', '-')} | {c.get('batch_size', '-')} | "
                         f"{c.get('grad_accum', '-')} | skipped: {c['skipped']} | | | | |")
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
