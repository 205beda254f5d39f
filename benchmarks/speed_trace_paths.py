"""The tracer's fast paths, each turned off in turn, side by side in one process: CPU seconds of block-once's
traces (the three reduced-depth traces and the synthesis) of Llama-2-7B and the Llama-2-70B shape (4096
tokens, bf16-amp, 910B3), warm (after one untimed trace), the configurations taken in turn round after
round; every trace must be the same, record for record, else the benchmark stops.

- `nodynamo`: the dispatch modes called without dynamo's disable wrapper (memplan.trace.nodynamo);
- `take_device_mode`: the device's function mode off torch's stack while the recording mode
  handles the autograd engine's ops (memplan.trace.kernels.take_device_mode);
- `fastdevice`: `prim.device` answered in the recording mode (memplan.trace.fastdevice).

    python benchmarks/speed_trace_paths.py [--rounds 5] [--out benchmarks/results/speed_trace_paths]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

MODELS = [("Llama-2-7B", "fixtures/hf/llama-2-7b.json"), ("Llama-2-70B shape", "fixtures/hf/llama-2-70b.json")]
PATHS = ("nodynamo", "take_device_mode", "fastdevice")


def _switches():
    """path -> set(on: bool)."""
    from memplan.trace import fastdevice, recorder, tracer

    direct = {c: c.__dict__["__torch_dispatch__"] for c in (recorder.RecordingMode, tracer._FakeMode)}
    take = recorder.take_device_mode

    def nodynamo(on):
        recorder.RecordingMode.__torch_dispatch__ = direct[recorder.RecordingMode] if on else \
            direct[recorder.RecordingMode].__wrapped__
        if on:
            tracer._FakeMode.__torch_dispatch__ = direct[tracer._FakeMode]
        elif "__torch_dispatch__" in tracer._FakeMode.__dict__:
            del tracer._FakeMode.__torch_dispatch__       # FakeTensorMode's, through torch's wrapper

    def device_mode(on):
        recorder.take_device_mode = take if on else (lambda: None)

    def fast_device(on):
        fastdevice.ENABLED = on

    return dict(zip(PATHS, (nodynamo, device_mode, fast_device)))


def measure(config: str, rounds: int) -> dict:
    from memplan.core.device import resolve_device
    from memplan.hf import load_hf_config
    from memplan.step import Target, frozen_heap
    from memplan.trace.block_once import trace_block_once
    from memplan.trace.blocks import same_trace
    from memplan.workload import TrainConfig

    wl = load_hf_config(os.path.join(ROOT, config))
    cfg = TrainConfig(batch_size=1, seq_len=4096, precision="bf16-amp")
    dev = resolve_device("910B3")
    target = Target(family=dev.family, name=dev.name)
    switch = _switches()
    configs = {"all on": ()} | {f"{p} off": (p,) for p in PATHS} | {"all off": PATHS}
    times: dict[str, list[float]] = {k: [] for k in configs}
    ref = None
    with frozen_heap():
        trace_block_once(wl, cfg, target)   # warm: torch's dispatch cache, lazy imports
        for _ in range(rounds):
            for name, off in configs.items():
                for p, fn in switch.items():
                    fn(p not in off)
                t = time.process_time()
                tr = trace_block_once(wl, cfg, target)
                times[name].append(time.process_time() - t)
                if ref is None:
                    ref = tr
                elif not same_trace(tr, ref) or tr.mode != ref.mode:
                    raise SystemExit(f"{config}: the trace with {name} differs")
    for fn in switch.values():
        fn(True)
    return {k: {"min_cpu_s": round(min(v), 3), "median_cpu_s": round(statistics.median(v), 3)}
            for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default="benchmarks/results/speed_trace_paths")
    args = ap.parse_args()
    gc.disable()   # as the CLI loads torch and transformers (memplan.cli._job._settled)
    import memplan.trace.block_once  # noqa: F401
    gc.enable()
    load = os.getloadavg()
    rows = {label: measure(config, args.rounds) for label, config in MODELS}
    result = {"benchmark": "speed_trace_paths", "python": platform.python_version(), "cpus": os.cpu_count(),
              "load_avg_before": [round(x, 1) for x in load],
              "load_avg_after": [round(x, 1) for x in os.getloadavg()], "rounds": args.rounds, "models": rows}
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    names = list(next(iter(rows.values())))
    lines = ["# The tracer's fast paths, each turned off in turn (block-once's traces, warm, one process)", "",
             f"`python benchmarks/speed_trace_paths.py --rounds {args.rounds}`: CPU seconds of one block-once trace "
             "(three reduced-depth traces + synthesis), 4096 tokens, bf16-amp, 910B3; min (median) of "
             f"{args.rounds} rounds, configurations in turn each round; {os.cpu_count()} CPUs shared, load "
             f"average {result['load_avg_before'][0]} -> {result['load_avg_after'][0]}. Every configuration "
             "gave the same trace, record for record.", "",
             "| configuration | " + " | ".join(rows) + " |", "|---|" + "---|" * len(rows)]
    for n in names:
        lines.append(f"| {n} | " + " | ".join(f"{r[n]['min_cpu_s']} ({r[n]['median_cpu_s']})"
                                               for r in rows.values()) + " |")
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
