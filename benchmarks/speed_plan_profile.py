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
import re
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
                            "optimizer_only": "runner" in k, "cpu_s": round(time.process_time() - t, 3),
                            "call": (workload, config, cfg, a, k)})
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


def _compare(rows: list[dict]) -> None:
    """After the plan (outside its time): each row's checkpoint globs that select a module of its model,
    and the earlier row with the same model and configuration (see `_trace_key`), if any."""
    keys = []
    for r in rows:
        workload, config, cfg, a, k = r.pop("call")
        ckpt = _effective_checkpoint(workload, cfg.checkpoint)
        keys.append(_trace_key(workload, config, cfg, ckpt, a, k))
        r["checkpoint"] = _short(ckpt)
        r["same_as"] = keys.index(keys[-1]) + 1 if keys.index(keys[-1]) < len(keys) - 1 else None


def _effective_checkpoint(workload, globs) -> tuple[str, ...] | None:
    """The checkpoint globs that name a module of the traced model (built on the meta device, outside the
    timed call): globs past a reduced model's last layer select nothing. None where it cannot be built."""
    import fnmatch

    import torch
    try:
        with torch.device("meta"):
            names = [n for n, _ in workload.build_model().named_modules()]
    except Exception:  # noqa: BLE001 - then the globs as given
        return None
    return tuple(g for g in globs if any(fnmatch.fnmatchcase(n, g) for n in names))


def _trace_key(workload, config, cfg, ckpt, args, kwargs) -> str:
    """Everything a trace's events can depend on: the model's whole config (or the workload itself), the
    whole TrainConfig with the checkpoint globs that select something, the target and the tracer's
    options (the optimizer splice's runner among them). Equal keys: the same reduced model traced twice."""
    model = config.to_json_string(use_diff=False) if config is not None else repr(workload.source)
    full = repr(cfg) if ckpt is None else repr(cfg.with_(checkpoint=ckpt))
    return repr((workload.name, model, full, args, sorted((k, repr(v)) for k, v in kwargs.items() if k != "on_phase")))


def _short(globs) -> str:
    """Checkpoint globs, `model.layers.` as L and whole-layer runs as ranges (L0-31)."""
    if globs is None:
        return "?"
    out: list[str] = []
    for g in (g.replace("model.layers.", "L") for g in globs):
        m = re.fullmatch(r"L(\d+)", g)
        prev = re.fullmatch(r"L(\d+)(?:-(\d+))?", out[-1]) if out else None
        if m and prev and int(prev.group(2) or prev.group(1)) + 1 == int(m.group(1)):
            out[-1] = f"L{prev.group(1)}-{m.group(1)}"
        else:
            out.append(g)
    return ", ".join(out) or "-"


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
    parts.wrap(evaluate, "optimizer_trace", "optimizer-only traces")
    parts.wrap(evaluate, "splice_optimizer", "optimizer splices")
    parts.wrap(evaluate, "estimate_from_trace", "allocator replays (estimates from a trace)")
    parts.wrap(ckpt, "probe_block_once", "module probe")
    parts.wrap(ckpt, "choose", "checkpointing knapsack")
    reduced = parts.rows(tracer, "trace_workload")
    t = time.process_time()
    p = plan(workload, device=ARGS["device"], seq_len=ARGS["seq_len"], precision=ARGS["precision"])
    parts.cpu["plan (all of it)"] = time.process_time() - t
    process_cpu_s = round(time.process_time(), 2)
    _compare(reduced)
    return {"cpu_s": {k: round(v, 2) for k, v in parts.cpu.items()}, "calls": dict(parts.calls),
            "traces": list(p.trace_log), "trace_counts": p.trace_counts, "reduced_traces": reduced,
            "process_cpu_s": process_cpu_s}


def reduced_lines(rows: list[dict]) -> list[str]:
    """The reduced-depth traces, in order, and the layers they traced in all."""
    full = [r for r in rows if not r["optimizer_only"]]
    lines = ["", "Reduced-depth traces (in order; the block-once traces above are written from them):", "",
             "| # | layers | checkpointed modules | checkpointed in the traced model | optimizer | optimizer phase only "
             "| same model and config as | CPU s |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {i} | {r['layers']} | {r['checkpointed']} | {r['checkpoint']} | {r['optimizer']} | "
              f"{'yes' if r['optimizer_only'] else 'no'} | {r['same_as'] or '-'} | {r['cpu_s']} |"
              for i, r in enumerate(rows, 1)]
    same = sum(1 for r in rows if r["same_as"])
    lines += ["", f"Traced twice (equal in the model's whole config, every TrainConfig field with the checkpoint "
              f"globs that select a module, the target and the tracer's options): {same} of {len(rows)}."]
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
