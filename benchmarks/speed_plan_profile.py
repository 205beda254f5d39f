"""Where `memplan plan` spends its time on Llama-2-7B (4096 tokens, bf16-amp, 910B3), by part, in one process.

CPU seconds (process time) of: loading the workload (imports of torch and transformers, the config), each
trace the plan takes (by configuration and mode), the allocator replays (estimates from a trace), the
module probe and the checkpointing knapsack, the garbage collector (all its passes, from gc.callbacks),
and the rest of the planner; and every reduced-depth trace the block-once traces are written from (its
layers, checkpointed modules and CPU seconds: what the plan's trace time is made of, layer by layer).

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

    def rows(self, module, name: str) -> list[dict]:
        """Wrap `module.name` (trace_workload) to log each call: the traced model's layers, checkpointed
        module count, whether it ran the optimizer phase alone (an optimizer splice), CPU seconds."""
        fn, out = getattr(module, name), []

        def logged(workload, cfg, *a, **k):
            t = time.process_time()
            try:
                return fn(workload, cfg, *a, **k)
            finally:
                config = (workload.extra or {}).get("hf_config")
                out.append({"layers": getattr(config, "num_hidden_layers", None),
                            "checkpointed": len(cfg.checkpoint), "optimizer": cfg.optimizer,
                            "optimizer_only": "runner" in k, "cpu_s": round(time.process_time() - t, 3)})
        setattr(module, name, logged)
        return out

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
    import memplan.trace.tracer as tracer
    from memplan.plan import plan

    parts.wrap(evaluate, "trace", "traces (block-once or full)")
    parts.wrap(evaluate, "trace_optimizer_change", "optimizer splices")
    parts.wrap(evaluate, "estimate_from_trace", "allocator replays (estimates from a trace)")
    parts.wrap(ckpt, "probe_block_once", "module probe")
    parts.wrap(ckpt, "choose", "checkpointing knapsack")
    reduced = parts.rows(tracer, "trace_workload")
    t = time.process_time()
    p = plan(workload, device=ARGS["device"], seq_len=ARGS["seq_len"], precision=ARGS["precision"])
    parts.cpu["plan (all of it)"] = time.process_time() - t
    return {"cpu_s": {k: round(v, 2) for k, v in parts.cpu.items()}, "calls": dict(parts.calls),
            "traces": list(p.trace_log), "trace_counts": p.trace_counts, "reduced_traces": reduced,
            "process_cpu_s": round(time.process_time(), 2)}


def reduced_lines(rows: list[dict]) -> list[str]:
    """The reduced-depth traces, in order, and the layers they traced in all."""
    full = [r for r in rows if not r["optimizer_only"]]
    lines = ["", "Reduced-depth traces (in order; the block-once traces above are written from them):", "",
             "| layers | checkpointed modules | optimizer | optimizer phase only | CPU s |", "|---|---|---|---|---|"]
    lines += [f"| {r['layers']} | {r['checkpointed']} | {r['optimizer']} | {'yes' if r['optimizer_only'] else 'no'} | "
              f"{r['cpu_s']} |" for r in rows]
    lines += ["", f"Whole steps traced: {len(full)} models, {sum(r['layers'] or 0 for r in full)} layers in all, "
              f"{round(sum(r['cpu_s'] for r in full), 2)} CPU s."]
    return lines


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
    lines += reduced_lines(result["reduced_traces"])
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
