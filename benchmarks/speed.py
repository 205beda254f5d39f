"""Speed: memplan's trace vs. a bare fake-tensor run of the same training steps, side by side.

"Bare" = the same step driver (`memplan.step.run`, 2 optimizer steps) under a plain FakeTensorMode with
no recording at all: the cost floor of any fake-tensor estimator. Each timing is the best of `--repeat`
alternating runs in one process, so both see the same machine load. Optionally PyTorch's own
`torch.distributed._tools.MemTracker` on the same fake step, for reference. Finally the peak RSS of
`memplan analyze --hf-config llama-2-7b.json --seq-len 4096 --batch-size 1 --precision bf16-amp`.

    python benchmarks/speed.py [--repeat 3] [--no-memtracker]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402

from memplan.hf import load_hf_config  # noqa: E402
from memplan.step import run  # noqa: E402
from memplan.trace.tracer import _FakeMode, trace_workload  # noqa: E402
from memplan.workload import TrainConfig  # noqa: E402

CASES = [
    ("GPT-2 (124M, HF)", "fixtures/hf/gpt2.json", TrainConfig(batch_size=4, seq_len=512)),
    ("TinyLlama-1.1B (HF config)", "fixtures/hf/tinyllama-1.1b.json", TrainConfig(batch_size=1, seq_len=2048)),
]


def bare(wl, cfg) -> float:
    t0 = time.perf_counter()
    with _FakeMode(allow_non_fake_inputs=True):
        run(wl, cfg)
    return time.perf_counter() - t0


def traced(wl, cfg) -> float:
    t0 = time.perf_counter()
    trace_workload(wl, cfg)
    return time.perf_counter() - t0


def memtracker(wl, cfg) -> float:
    from torch.distributed._tools.mem_tracker import MemTracker

    t0 = time.perf_counter()
    with _FakeMode(allow_non_fake_inputs=True):
        mt = MemTracker()

        class Hooks:
            def phase(self, phase, *a):
                if phase == "inputs":  # MemTracker needs its module stats reset between iterations
                    mt.reset_mod_stats()
            def model_built(self, model): mt.track_external(model)
            def batch_made(self, batch): pass
            def after_backward(self, model): pass
            def after_optimizer(self, model, opt): pass

        with mt:
            run(wl, cfg, Hooks())
    return time.perf_counter() - t0


def rss_llama7b() -> dict:
    cmd = [sys.executable, "-m", "memplan", "analyze", "--hf-config", "fixtures/hf/llama-2-7b.json",
           "--seq-len", "4096", "--batch-size", "1", "--precision", "bf16-amp", "--format", "json"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    peak = json.loads(proc.stdout)["peak_allocated_bytes"] if proc.returncode == 0 else None
    return {"command": " ".join(cmd[2:]), "returncode": proc.returncode, "wall_s": round(wall, 1),
            "peak_rss_bytes": rss, "peak_rss_gib": round(rss / 2**30, 3), "estimated_peak_bytes": peak}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-memtracker", action="store_true")
    ap.add_argument("--out", default="benchmarks/results/speed")
    args = ap.parse_args()
    rows = []
    for label, path, cfg in CASES:
        wl = load_hf_config(path)
        bare(wl, cfg)  # warm-up: imports, kernel caches
        b, t = [], []
        for _ in range(args.repeat):
            b.append(bare(wl, cfg))
            t.append(traced(wl, cfg))
        row = {"model": label, "config": cfg.to_dict(), "bare_fake_s": round(min(b), 3),
               "memplan_trace_s": round(min(t), 3), "ratio": round(min(t) / min(b), 3)}
        if not args.no_memtracker and "GPT-2" in label:
            row["memtracker_s"] = round(memtracker(wl, cfg), 3)
            row["memtracker_ratio"] = round(row["memtracker_s"] / row["bare_fake_s"], 2)
        print(row, flush=True)
        rows.append(row)
    rss = rss_llama7b()
    print(rss, flush=True)
    result = {"benchmark": "speed", "torch": torch.__version__, "python": platform.python_version(),
              "steps_traced": 2, "cases": rows, "llama2_7b_rss": rss}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = ["# Speed: memplan trace vs. a bare fake-tensor step (same run, best of "
             f"{args.repeat}, 2 optimizer steps each)", "",
             "| model | bare fake step (s) | memplan trace (s) | ratio | MemTracker (s) | MemTracker ratio |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['bare_fake_s']} | {r['memplan_trace_s']} | **{r['ratio']}** | "
                     f"{r.get('memtracker_s', '-')} | {r.get('memtracker_ratio', '-')} |")
    lines += ["", f"`memplan {rss['command']}`: peak RSS **{rss['peak_rss_gib']} GiB**, "
              f"{rss['wall_s']} s wall (target: <= 2 GiB)."]
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
