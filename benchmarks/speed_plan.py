"""Speed: `memplan plan` against one `memplan analyze` of the same workload, side by side.

For each case (Llama-2-7B on a 910B, two small model files), one `memplan analyze` process and then one
`memplan plan` process of the same workload and device, each timed from start to exit (imports included,
as a user waits for them), with the plan's traces counted by mode (block-once / full) and its replays
(estimates from a trace, one per configuration and allocator setting; the plan's JSON `trace_counts` and
`traces`), and the load average before and after. With `--repeat N` the pair runs N times in turn and
each figure is the best of N (wall and CPU separately; every sample is kept in the JSON): on a shared
machine one run's ratio follows whoever else is running.

    python benchmarks/speed_plan.py [--repeat 1] [--only NAME] [--out benchmarks/results/speed_plan]

benchmarks/speed.py measures `memplan analyze` itself (block-once vs. full trace vs. a bare fake step).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

from speed import _timed

# `memplan plan` against one `memplan analyze` of the same workload: label, the workload and device arguments
PLAN_CASES = [
    ("Llama-2-7B, 910B3", ["--hf-config", "fixtures/hf/llama-2-7b.json", "--seq-len", "4096",
                           "--precision", "bf16-amp", "--device", "910B3"]),
    ("mlp fixture", ["fixtures/models/mlp.py", "-b", "8", "--capacity", "150MiB"]),
    ("llama_gqa fixture", ["fixtures/models/llama_gqa.py", "-b", "4", "--capacity", "420MB"]),
]


def plan_vs_analyze(label: str, args: list[str], repeat: int = 1) -> dict:
    """`memplan analyze` then `memplan plan` of the same workload (processes, side by side; `repeat` rounds,
    best of them), with the plan's trace counts (by mode) and replays (estimates from traces), and the load
    average before and after."""
    tail = ["--format", "json", "-q"]
    load_before = os.getloadavg()
    plan = [sys.executable, "-m", "memplan", "plan", *args, *tail]
    samples = []
    for _ in range(repeat):
        a_wall, _, a_cpu = _timed([sys.executable, "-m", "memplan", "analyze", *args, *tail])
        p_wall, out, p_cpu = _timed(plan)
        samples.append({"analyze_s": round(a_wall, 2), "analyze_cpu_s": round(a_cpu, 2),
                        "plan_s": round(p_wall, 2), "plan_cpu_s": round(p_cpu, 2)})
    a_wall, a_cpu, p_wall, p_cpu = (min(x[k] for x in samples) for k in
                                    ("analyze_s", "analyze_cpu_s", "plan_s", "plan_cpu_s"))
    result = json.loads(out)
    return {"label": label, "command": " ".join(plan[2:]), "repeat": repeat, "samples": samples,
            "analyze_s": a_wall, "plan_s": p_wall,
            "plan_over_analyze": round(p_wall / a_wall, 3), "analyze_cpu_s": a_cpu,
            "plan_cpu_s": p_cpu, "plan_over_analyze_cpu": round(p_cpu / a_cpu, 3),
            "n_traces": result.get("n_traces"),
            "trace_counts": result.get("trace_counts"), "traces": result.get("traces"),
            "plan_trace_seconds": result.get("trace_seconds"), "plan_fits": result.get("fits"),
            "plan_batch_size": result.get("batch_size"), "plan_checkpoint": result.get("checkpoint"),
            "load_avg_before": [round(x, 1) for x in load_before],
            "load_avg_after": [round(x, 1) for x in os.getloadavg()]}


def plan_lines(plans: list[dict]) -> list[str]:
    """The plan section of the Markdown table."""
    best = max((p.get("repeat", 1) for p in plans), default=1)
    lines = ["", "## `memplan plan` vs. one `memplan analyze` of the same workload", "",
             "Wall seconds, and in brackets CPU seconds (user + system); the ratios are wall (CPU)"
             + (f"; best of {best} rounds (analyze, then plan, in turn), each figure on its own." if best > 1 else "."), "",
             "| workload | analyze (s) | plan (s) | plan / analyze | traces (by mode) | "
             "replays (estimates from traces) | "
             "load avg before -> after |", "|---|---|---|---|---|---|---|"]
    for p in plans:
        counts = p.get("trace_counts") or {}
        modes = ", ".join(f"{n} {m}" for m, n in sorted((counts.get("by_mode") or {}).items()))
        lines.append(f"| {p['label']} | {p['analyze_s']} ({p['analyze_cpu_s']}) | {p['plan_s']} ({p['plan_cpu_s']}) | "
                     f"**{p['plan_over_analyze']}** (**{p['plan_over_analyze_cpu']}**) | "
                     f"{p['n_traces']} ({modes}) | {counts.get('replays')} | "
                     f"{p['load_avg_before'][0]} -> {p['load_avg_after'][0]} |")
    for p in plans:
        lines += ["", f"`{p['command']}`:"]
        lines += [f"- {t['config']}: {t['seconds']} s, {t['mode']}" for t in p.get("traces") or []]
    return lines


def write_plan(plans: list[dict], out: str, notes: list[str] = ()) -> None:
    """speed_plan.json (every number) and speed_plan.md (the table and each plan's traces)."""
    import torch

    result = {"benchmark": "speed_plan", "torch": torch.__version__,
              "python": platform.python_version(), "cpus": os.cpu_count(), "plan_vs_analyze": plans,
              "notes": list(notes)}
    with open(out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = ["# Speed: `memplan plan` vs. one `memplan analyze` of the same workload", "",
             f"Wall time of whole processes (imports included), {os.cpu_count()} CPUs shared with other jobs "
             "(load averages in the table). `python benchmarks/speed_plan.py"
             + "".join(f" --repeat {r}" for r in {p.get("repeat", 1) for p in plans} if r > 1) + "`."]
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines + list(notes) + plan_lines(plans)) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="run only the cases whose label contains this text")
    ap.add_argument("--out", default="benchmarks/results/speed_plan")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of analyze + plan; each figure is the best")
    args = ap.parse_args()
    plans = []
    for label, plan_args in PLAN_CASES:
        if args.only and args.only not in label:
            continue
        plans.append(plan_vs_analyze(label, plan_args, args.repeat))
        print(json.dumps(plans[-1]), flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    write_plan(plans, args.out)


if __name__ == "__main__":
    main()
