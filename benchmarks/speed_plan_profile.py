"""Where `memplan plan` spends its time on Llama-2-7B (4096 tokens, bf16-amp, 910B3), by part, in one process.

CPU seconds (process time) of: loading the workload (imports of torch and transformers, the config), each
trace the plan takes (by configuration and mode), the allocator replays (estimates from a trace), the
module probe and the checkpointing knapsack, the garbage collector (all its passes, from gc.callbacks),
and the rest of the planner; the same for one analyze of the baseline, for the ratio the target is on.

    python benchmarks/speed_plan_profile.py [--out benchmarks/results/speed_plan_profile]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import time
from collections import defaultdict

ARGS = dict(hf_config="fixtures/hf/llama-2-7b.json", seq_len=4096, precision="bf16-amp", device="910B3")


class Parts:
    """CPU seconds per named part, by wrapping module functions (nested parts count in the outer one too)."""

    def __init__(self):
        self.cpu = defaultdict(float)
        self.calls = defaultdict(int)
        self._gc_start = None
        gc.callbacks.append(self._gc)

    def _gc(self, phase, info):
        if phase == "start":
            self._gc_start = time.process_time()
        elif self._gc_start is not None:
            self.cpu["garbage collector"] += time.process_time() - self._gc_start
            self.calls["garbage collector"] += 1

    def wrap(self, module, name: str, label: str) -> None:
        fn = getattr(module, name)

        def timed(*a, **k):
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                self.cpu[label] += time.process_time() - t
                self.calls[label] += 1
        setattr(module, name, timed)


def profile() -> dict:
    t_start = time.process_time()
    parts = Parts()
    from memplan.core import load_workload
    workload = load_workload(None, ARGS["hf_config"], None)
    parts.cpu["load the workload (imports torch, transformers)"] = time.process_time() - t_start
    import memplan.plan.checkpoint as ckpt
    import memplan.plan.evaluate as evaluate
    from memplan.plan import plan

    parts.wrap(evaluate, "trace", "traces")
    parts.wrap(evaluate, "estimate_from_trace", "allocator replays (estimates from a trace)")
    parts.wrap(ckpt, "probe_block_once", "module probe")
    parts.wrap(ckpt, "choose", "checkpointing knapsack")
    t = time.process_time()
    p = plan(workload, device=ARGS["device"], seq_len=ARGS["seq_len"], precision=ARGS["precision"])
    parts.cpu["plan (all of it)"] = time.process_time() - t
    return {"cpu_s": {k: round(v, 2) for k, v in parts.cpu.items()}, "calls": dict(parts.calls),
            "traces": list(p.trace_log), "trace_counts": p.trace_counts, "process_cpu_s": round(time.process_time(), 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="benchmarks/results/speed_plan_profile")
    args = ap.parse_args()
    load = os.getloadavg()
    result = profile()
    result.update(benchmark="speed_plan_profile", python=platform.python_version(), cpus=os.cpu_count(),
                  load_avg_before=[round(x, 1) for x in load], load_avg_after=[round(x, 1) for x in os.getloadavg()],
                  args=ARGS)
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    cpu = result["cpu_s"]
    total = cpu["plan (all of it)"]
    named = sum(v for k, v in cpu.items() if k not in ("plan (all of it)", "garbage collector",
                                                     "load the workload (imports torch, transformers)"))
    lines = ["# Where `memplan plan` spends its time: Llama-2-7B, 4096 tokens, bf16-amp, 910B3", "",
             f"CPU seconds in one process (`python benchmarks/speed_plan_profile.py`), {os.cpu_count()} CPUs shared, "
             f"load average {result['load_avg_before'][0]} -> {result['load_avg_after'][0]}. Parts may nest (the "
             "collector runs inside the others).", "",
             "| part | CPU s | calls |", "|---|---|---|"]
    for k, v in cpu.items():
        lines.append(f"| {k} | {v} | {result['calls'].get(k, 1)} |")
    lines.append(f"| the rest of the planner | {round(total - named, 2)} | |")
    lines.append(f"| the whole process | {result['process_cpu_s']} | |")
    lines += ["", "Traces:"] + [f"- {t['config']}: {t['seconds']} s wall, {t['mode']}" for t in result["traces"]]
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
