"""Speed: `memplan analyze` block-once vs. the full trace vs. a bare fake-tensor process, side by side.

Three processes per model, one after the other (so they see the same machine load), each timed from
start to exit (imports included, as a user waits for them):
- bare: imports torch and transformers, builds the model and runs the same 2 optimizer steps
  (`memplan.step.run`, same device family so the same optimizer implementation) under a plain
  FakeTensorMode with no recording at all -- the cost floor of any fake-tensor estimator that runs
  every layer;
- `memplan analyze --format json` (block-once where it applies: memplan.trace.blocks);
- `memplan analyze --full-trace --format json` (every layer traced).
The two analyses must agree exactly (peak allocated and reserved, breakdown, phase peaks, module rows,
event count), else the benchmark fails.

    python benchmarks/speed.py [--repeat 1] [--only NAME]
    python benchmarks/speed.py --files [--repeat 1]   # model files (memplan.trace.model_stacks):
        # decoder_1b written with 22, 32 and 80 layers; with gradient clipping and with Adafactor; FSDP
        # ranks (--world-size 8 --sharding zero3 / zero2) -> benchmarks/results/speed_model_files.{json,md}
    python benchmarks/speed.py --ddp [--repeat 1]     # DDP and ZeRO-1 ranks (Llama-2-7B, decoder_1b at 32
        # layers), block-once vs. --full-trace -> benchmarks/results/speed_ddp.{json,md}
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [
    # label, HF config, batch, seq, precision, device[, --checkpoint glob]
    ("GPT-2 (124M)", "fixtures/hf/gpt2.json", 4, 512, "fp32", None),
    ("TinyLlama-1.1B", "fixtures/hf/tinyllama-1.1b.json", 1, 2048, "fp32", None),
    ("Llama-2-7B", "fixtures/hf/llama-2-7b.json", 1, 4096, "bf16-amp", "910B3"),
    ("Llama-2-70B shape", "fixtures/hf/llama-2-70b.json", 1, 4096, "bf16-amp", "910B3"),
    # issue 18's own 70B command: every decoder layer checkpointed
    ("Llama-2-70B shape", "fixtures/hf/llama-2-70b.json", 1, 4096, "bf16-amp", "910B3", "model.layers.*"),
]
DIST_CASES = [
    # label, HF config, seq, precision, device, world size, sharding
    ("Llama-2-7B", "fixtures/hf/llama-2-7b.json", 4096, "bf16-amp", "910B3", 8, "zero3"),
    ("Llama-2-70B shape", "fixtures/hf/llama-2-70b.json", 4096, "bf16-amp", "910B3", 8, "fsdp"),
]
FILE_CASES = [
    # label, fixture, (its layer-count text, with {n} for the count), layers, batch, seq, precision, device
    ("decoder_1b", "fixtures/models/decoder_1b.py", ("= 2048, 22,", "= 2048, {n},"), n, 8, 1024, "bf16-amp",
     "910B3")
    for n in (22, 32, 80)
]
FILE_OPTION_CASES = [   # (the fixture at 32 layers) label, extra analyze options: block-once vs. --full-trace
    ("clip_grad_norm 1.0", ["--clip-grad-norm", "1.0"]),
    ("adafactor", ["--optimizer", "adafactor"]),
]
FILE_DIST_CASES = [     # (the fixture at 32 layers) world size, sharding
    (8, "zero3"), (8, "zero2"),
]
DDP_CASES = [   # --ddp: DDP (block-once where its buckets repeat) and ZeRO-1 (the DDP rank, its optimizer spliced in) ranks
    ("Llama-2-7B", "fixtures/hf/llama-2-7b.json", 4096, "bf16-amp", "910B3", 8, "ddp"),
    ("Llama-2-7B", "fixtures/hf/llama-2-7b.json", 4096, "bf16-amp", "910B3", 8, "zero1"),
]
FILE_DDP_CASES = [(8, "ddp"), (8, "zero1")]   # decoder_1b at 32 layers
# --ddp: ranks with checkpointing on some layers only (what `memplan plan` recommends on Llama-2-7B):
# block-once over runs of identical layers (memplan.trace.block_runs) vs. --full-trace
MIXED_CHECKPOINT = [f"model.layers.{i}" for i in range(5)] + ["model.layers.5.self_attn", "model.layers.5.mlp"]
RUNS_CASES = [("Llama-2-7B", "fixtures/hf/llama-2-7b.json", 4096, "bf16-amp", "910B3", 8, s)
              for s in ("zero3", "ddp")]
_SAME = ("peak_allocated_bytes", "peak_reserved_bytes", "peak_phase", "breakdown_at_peak", "phase_peaks",
         "first_step_peak_bytes", "modules", "n_events", "fragmentation_bytes")

_BARE = """
import os, sys
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
sys.path.insert(0, {root!r})
from memplan.core.device import resolve_device
from memplan.hf import load_hf_config
from memplan.step import Target, run
from memplan.trace.tracer import _FakeMode
from memplan.workload import TrainConfig
dev = resolve_device({device!r})
cfg = TrainConfig(batch_size={batch}, seq_len={seq}, precision={precision!r}, checkpoint={checkpoint!r})
with _FakeMode(allow_non_fake_inputs=True):
    run(load_hf_config({config!r}), cfg, target=Target(family=dev.family, name=dev.name))
"""


# the floor of any process that builds the model with transformers: the same imports, config and model
# class (built on the meta device), no step
_IMPORTS = _BARE.split("dev = resolve_device")[0] + """import torch
with torch.device("meta"):   # imports the model class; no memory, no step
    load_hf_config({config!r}).build_model()
"""

# memplan's own load, the floor of `memplan analyze --hf-config` before it traces anything: what its CLI does
# first (memplan.cli._job: the collector off while torch and transformers load, the config read and its model
# class imported), then the process ends at once, as the CLI does (memplan.cli.main._quick_exit)
_LOAD = """
import gc, os, sys
gc.disable()
sys.path.insert(0, {root!r})
from memplan.hf import load_hf_config
load_hf_config({config!r})
sys.stdout.flush()
os._exit(0)
"""


_BARE_FILE = """
import os, sys
sys.path.insert(0, {root!r})
from memplan.core.device import resolve_device
from memplan.step import Target, run
from memplan.trace.tracer import _FakeMode
from memplan.workload import TrainConfig, load_model_file
dev = resolve_device({device!r})
cfg = TrainConfig(batch_size={batch}, seq_len={seq}, precision={precision!r})
with _FakeMode(allow_non_fake_inputs=True):
    run(load_model_file({path!r}), cfg, target=Target(family=dev.family, name=dev.name))
"""


def _timed(cmd: list[str]) -> tuple[float, str, float]:
    """(wall seconds, stdout, CPU seconds: user + system) of one process. On a shared machine the wall
    time follows the load; the CPU time is the work the process did."""
    env = dict(os.environ, PYTHONPATH=ROOT, TRANSFORMERS_VERBOSITY="error")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, out, cpu


def analyze_cmd(config, batch, seq, precision, device, full: bool, checkpoint: str | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "memplan", "analyze", "--hf-config", config, "--batch-size", str(batch),
           "--seq-len", str(seq), "--precision", precision, "--format", "json", "-q"]
    if device:
        cmd += ["--device", device]
    if checkpoint:
        cmd += ["--checkpoint", checkpoint]
    return cmd + (["--full-trace"] if full else [])


def run_case(label, config, batch, seq, precision, device, checkpoint: str | None = None, *, repeat: int) -> dict:
    bare_src = _BARE.format(root=ROOT, device=device, batch=batch, seq=seq, precision=precision, config=config,
                            checkpoint=(checkpoint,) if checkpoint else ())
    walls: dict[str, list[float]] = {"bare": [], "block": [], "full": []}
    cpus: dict[str, list[float]] = {"bare": [], "block": [], "full": []}
    results = {}
    for _ in range(repeat):
        wall, _, cpu = _timed([sys.executable, "-c", bare_src])
        walls["bare"].append(wall)
        cpus["bare"].append(cpu)
        wall, _, cpu = _timed([sys.executable, "-c", _IMPORTS.format(root=ROOT, config=config)])
        walls.setdefault("imports", []).append(wall)
        cpus.setdefault("imports", []).append(cpu)
        wall, _, cpu = _timed([sys.executable, "-c", _LOAD.format(root=ROOT, config=config)])
        walls.setdefault("load", []).append(wall)
        cpus.setdefault("load", []).append(cpu)
        for key, full in (("block", False), ("full", True)):
            wall, out, cpu = _timed(analyze_cmd(config, batch, seq, precision, device, full, checkpoint))
            walls[key].append(wall)
            cpus[key].append(cpu)
            results[key] = json.loads(out)
    row = {"model": label, "config": config, "batch_size": batch, "seq_len": seq, "precision": precision,
           "device": device or "cpu", "checkpoint": checkpoint}
    row.update(_compared(label, walls, cpus, results))
    return row


def _compared(label: str, walls: dict, cpus: dict, results: dict) -> dict:
    """The side-by-side figures of one case (best wall and CPU seconds per process, ratios to the bare
    process); stops the benchmark when block-once and the full trace disagree."""
    block, full = results["block"], results["full"]
    diff = [k for k in _SAME if block[k] != full[k]]
    if diff:
        raise SystemExit(f"{label}: block-once and full trace differ in {diff}")
    best = {k: min(v) for k, v in walls.items()}
    cpu = {k: min(v) for k, v in cpus.items()}
    row = {"trace_mode": block["trace_mode"], "trace_mode_reason": block["trace_mode_reason"],
           "bare_fake_process_s": round(best["bare"], 2),
           "analyze_block_once_s": round(best["block"], 2), "analyze_full_trace_s": round(best["full"], 2),
           "block_once_over_bare": round(best["block"] / best["bare"], 3),
           "full_over_bare": round(best["full"] / best["bare"], 3)}
    if "imports" in best:
        row.update({"imports_only_s": round(best["imports"], 2), "imports_only_cpu_s": round(cpu["imports"], 2)})
    if "load" in best:
        row.update({"load_only_s": round(best["load"], 2), "load_only_cpu_s": round(cpu["load"], 2),
                    "load_over_bare": round(best["load"] / best["bare"], 3),
                    "load_over_bare_cpu": round(cpu["load"] / cpu["bare"], 3)})
    row.update({"bare_fake_process_cpu_s": round(cpu["bare"], 2), "analyze_block_once_cpu_s": round(cpu["block"], 2),
                "analyze_full_trace_cpu_s": round(cpu["full"], 2),
                "block_once_over_bare_cpu": round(cpu["block"] / cpu["bare"], 3),
                "full_over_bare_cpu": round(cpu["full"] / cpu["bare"], 3),
                "identical": True, "peak_allocated_bytes": block["peak_allocated_bytes"],
                "peak_reserved_bytes": block["peak_reserved_bytes"], "n_events": block["n_events"]})
    return row


def file_cmd(path, batch, seq, precision, device, full: bool) -> list[str]:
    cmd = [sys.executable, "-m", "memplan", "analyze", path, "--batch-size", str(batch), "--seq-len", str(seq),
           "--precision", precision, "--format", "json", "-q", "--device", device]
    return cmd + (["--full-trace"] if full else [])


def _file_with_layers(fixture, count, n, tmp: str) -> str:
    """The fixture written with `n` layers (its layer-count text replaced), in `tmp`."""
    with open(os.path.join(ROOT, fixture)) as f:
        text = f.read()
    old, new = count
    if text.count(old) != 1:
        raise SystemExit(f"{fixture}: {old!r} does not give its layer count once")
    path = os.path.join(tmp, f"{os.path.splitext(os.path.basename(fixture))[0]}_{n}.py")
    with open(path, "w") as f:
        f.write(text.replace(old, new.format(n=n)))
    return path


def run_file_case(label, fixture, count, n, batch, seq, precision, device, repeat: int, tmp: str) -> dict:
    """A model file written with `n` layers: bare fake process, `analyze` (block-once by
    memplan.trace.model_stacks) and `analyze --full-trace`, side by side; the two analyses must agree."""
    path = _file_with_layers(fixture, count, n, tmp)
    bare_src = _BARE_FILE.format(root=ROOT, device=device, batch=batch, seq=seq, precision=precision, path=path)
    walls: dict[str, list[float]] = {"bare": [], "block": [], "full": []}
    cpus: dict[str, list[float]] = {"bare": [], "block": [], "full": []}
    results = {}
    for _ in range(repeat):
        for key, cmd in (("bare", [sys.executable, "-c", bare_src]),
                         ("block", file_cmd(path, batch, seq, precision, device, False)),
                         ("full", file_cmd(path, batch, seq, precision, device, True))):
            wall, out, cpu = _timed(cmd)
            walls[key].append(wall)
            cpus[key].append(cpu)
            if key != "bare":
                results[key] = json.loads(out)
    row = {"model": f"{label} ({n} layers)", "file": fixture, "layers": n, "batch_size": batch, "seq_len": seq,
           "precision": precision, "device": device}
    row.update(_compared(f"{label} x{n}", walls, cpus, results))
    return row


def run_file_option_case(case, label, extra, repeat: int, tmp: str) -> dict:
    """The model file (FILE_CASES' `case`) analyzed with `extra` options: block-once vs. `--full-trace`
    (processes, side by side, best of `repeat`); the two analyses must agree."""
    name, fixture, count, n, batch, seq, precision, device = case
    cmd = file_cmd(_file_with_layers(fixture, count, n, tmp), batch, seq, precision, device, False) + extra
    walls: dict[str, list[float]] = {"block": [], "full": []}
    cpus: dict[str, list[float]] = {"block": [], "full": []}
    results = {}
    for _ in range(repeat):
        for key, more in (("block", []), ("full", ["--full-trace"])):
            wall, out, cpu = _timed(cmd + more)
            walls[key].append(wall)
            cpus[key].append(cpu)
            results[key] = json.loads(out)
    block, full = results["block"], results["full"]
    diff = [k for k in _SAME + ("notes",) if block[k] != full[k]]
    if diff:
        raise SystemExit(f"{name} {label}: block-once and full trace differ in {diff}")
    bw, fw, bc, fc = min(walls["block"]), min(walls["full"]), min(cpus["block"]), min(cpus["full"])
    return {"model": f"{name} ({n} layers)", "options": label, "trace_mode": block["trace_mode"],
            "trace_mode_reason": block["trace_mode_reason"], "analyze_block_once_s": round(bw, 2),
            "analyze_full_trace_s": round(fw, 2), "block_once_over_full": round(bw / fw, 3),
            "analyze_block_once_cpu_s": round(bc, 2), "analyze_full_trace_cpu_s": round(fc, 2),
            "block_once_over_full_cpu": round(bc / fc, 3), "identical": True,
            "peak_reserved_bytes": block["peak_reserved_bytes"], "n_events": block["n_events"]}


def run_file_dist_case(case, world, sharding, repeat: int, tmp: str) -> dict:
    """The model file (FILE_CASES' `case`) per rank under `sharding`: block-once vs. `--full-trace`."""
    name, fixture, count, n, batch, seq, precision, device = case
    path = _file_with_layers(fixture, count, n, tmp)
    row = run_dist_case(f"{name} ({n} layers)", fixture, seq, precision, device, world, sharding,
                        cmd=file_cmd(path, batch, seq, precision, device, False), repeat=repeat)
    return dict(row, batch_size=batch)


_OPT_ONLY = """
import json, sys, time
sys.path.insert(0, {root!r})
from memplan.core.device import resolve_device
from memplan.step import Target
from memplan.trace.blocks import same_trace
from memplan.trace.optsplice import _optimizer_run, optimizer_trace
from memplan.trace.tracer import trace_workload
from memplan.workload import TrainConfig, load_model_file
dev = resolve_device({device!r})
target = Target(family=dev.family, run_device="cpu", name=dev.name)
wl = load_model_file({path!r})
cfg = TrainConfig(batch_size={batch}, seq_len={seq}, precision={precision!r}, optimizer={optimizer!r}).validate()
trace_workload(wl, cfg, target, runner=_optimizer_run)   # warm-up: the first trace pays one-time costs
out = {{"block": [], "full": [], "block_cpu": [], "full_cpu": []}}
for _ in range({repeat}):
    for key, fn in (("block", lambda: optimizer_trace(wl, cfg, target)),
                    ("full", lambda: trace_workload(wl, cfg, target, runner=_optimizer_run))):
        w, c = time.perf_counter(), time.process_time()
        tr = fn()
        out[key].append(time.perf_counter() - w)
        out[key + "_cpu"].append(time.process_time() - c)
        out[key + "_trace"] = tr
out["same"] = same_trace(out.pop("block_trace"), out.pop("full_trace"))
out["mode"] = optimizer_trace(wl, cfg, target).mode
print(json.dumps(out))
"""


def run_file_optimizer_only(case, optimizer: str, repeat: int, tmp: str) -> dict:
    """The plan's optimizer-only trace of the model file (memplan.trace.optsplice, what the optimizer splice
    traces): block-once vs. every layer, in one process after a warm-up, best of `repeat`; must be equal."""
    name, fixture, count, n, batch, seq, precision, device = case
    path = _file_with_layers(fixture, count, n, tmp)
    src = _OPT_ONLY.format(root=ROOT, device=device, path=path, batch=batch, seq=seq, precision=precision,
                           optimizer=optimizer, repeat=repeat)
    out = json.loads(_timed([sys.executable, "-c", src])[1])
    if not out["same"]:
        raise SystemExit(f"{name} {optimizer}: the optimizer-only traces differ")
    bw, fw, bc, fc = (min(out[k]) for k in ("block", "full", "block_cpu", "full_cpu"))
    return {"model": f"{name} ({n} layers)", "options": f"optimizer-only trace, {optimizer}", "trace_mode": out["mode"],
            "analyze_block_once_s": round(bw, 2), "analyze_full_trace_s": round(fw, 2),
            "block_once_over_full": round(bw / fw, 3), "analyze_block_once_cpu_s": round(bc, 2),
            "analyze_full_trace_cpu_s": round(fc, 2), "block_once_over_full_cpu": round(bc / fc, 3),
            "identical": True}


def _ratio_lines(rows: list[dict], what) -> list[str]:
    """Table rows of block-once vs. full trace (options or distributed cases)."""
    return [f"| {r['model']} | {what(r)} | {r['trace_mode']} | {r['analyze_block_once_s']} "
            f"({r['analyze_block_once_cpu_s']}) | {r['analyze_full_trace_s']} ({r['analyze_full_trace_cpu_s']}) | "
            f"**{r['block_once_over_full']}** (**{r['block_once_over_full_cpu']}**) |" for r in rows]


def write_files(rows: list[dict], repeat: int, out: str, options: list | None = None,
                dist: list | None = None) -> None:
    import torch

    result = {"benchmark": "speed_model_files", "torch": torch.__version__, "python": platform.python_version(),
              "cpus": os.cpu_count(), "load_avg_at_end": os.getloadavg(), "steps_traced": 2, "repeat": repeat,
              "cases": rows, "options": options or [], "distributed": dist or []}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    r0 = rows[0]
    lines = ["# Speed: `memplan analyze model.py` (block-once, memplan.trace.model_stacks) vs. full trace vs. "
             "a bare fake-tensor process", "",
             f"`{r0['file']}` written with N layers; `-b {r0['batch_size']} --seq-len {r0['seq_len']} --precision "
             f"{r0['precision']} --device {r0['device']}`. Wall time of whole processes (imports included), best of "
             f"{repeat}, 2 optimizer steps each, {os.cpu_count()} CPUs shared with other jobs (load average at the "
             f"end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}); in brackets CPU seconds (user + system). "
             "Block-once and full trace gave identical estimates (peak allocated and reserved, breakdown, phase "
             "peaks, module rows, event count) in every row. `bare`: the same model file built and stepped under "
             "a plain FakeTensorMode, no recording.", "",
             f"    python benchmarks/speed.py --files{f' --repeat {repeat}' if repeat > 1 else ''}", "",
             "| model | mode | bare fake (s) | analyze block-once (s) | analyze full (s) | block-once / bare | "
             "full / bare |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['trace_mode']} | {r['bare_fake_process_s']} "
                     f"({r['bare_fake_process_cpu_s']}) | {r['analyze_block_once_s']} ({r['analyze_block_once_cpu_s']}) | {r['analyze_full_trace_s']} "
                     f"({r['analyze_full_trace_cpu_s']}) | **{r['block_once_over_bare']}** "
                     f"(**{r['block_once_over_bare_cpu']}**) | {r['full_over_bare']} ({r['full_over_bare_cpu']}) |")
    lines += ["", f"Block-once mode: {r0['trace_mode_reason']}"]
    head = ["| model | {} | mode | analyze block-once (s) | analyze full (s) | block-once / full |",
            "|---|---|---|---|---|---|"]
    if options:
        lines += ["", "With training options that used to force the full trace of a model file (same command, "
                  "block-once vs. `--full-trace`, identical estimates and notes), and the plan's optimizer-only "
                  "trace (what its optimizer splice traces; in one process after a warm-up, so without imports; "
                  "identical traces):", "", head[0].format("options"),
                  head[1]] + _ratio_lines(options, lambda r: r["options"])
    if dist:
        lines += ["", "FSDP ranks (`--world-size N --sharding S`, ranks 0 and N-1 traced; each cut depth wrapped "
                  "as the full model), block-once vs. `--full-trace`, identical per-rank estimates:", "",
                  head[0].format("ranks"), head[1]]
        lines += _ratio_lines(dist, lambda r: f"{r['sharding']} x{r['world_size']}")
        lines += ["", f"FSDP block-once mode: {dist[0]['trace_mode_reason']}"]
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


def run_dist_case(label, config, seq, precision, device, world, sharding, cmd=None, repeat: int = 1) -> dict:
    """`analyze --world-size --sharding` block-once vs. `--full-trace` (processes, side by side, best of
    `repeat`); the per-rank estimates must be equal. `cmd`: the analyze command (default: the HF config's)."""
    cmd = (cmd or analyze_cmd(config, 1, seq, precision, device, False)) + ["--world-size", str(world),
                                                                            "--sharding", sharding]
    out = {}
    for _ in range(repeat):
        for key, extra in (("block", []), ("full", ["--full-trace"])):
            wall, text, cpu = _timed(cmd + extra)
            best = out.get(key)
            out[key] = (min(wall, best[0]) if best else wall, json.loads(text), min(cpu, best[2]) if best else cpu)
    (bw, block, bc), (fw, full, fc) = out["block"], out["full"]
    same = ("per_rank", "peak_allocated_bytes", "peak_reserved_bytes", "strategy_info", "notes")
    diff = [k for k in same if block[k] != full[k]]
    if diff:
        raise SystemExit(f"{label} {sharding}: block-once and full trace differ in {diff}")
    return {"model": label, "config": config, "seq_len": seq, "precision": precision, "device": device,
            "world_size": world, "sharding": sharding, "trace_mode": block["trace_mode"],
            "trace_mode_reason": block["trace_mode_reason"], "analyze_block_once_s": round(bw, 2),
            "analyze_full_trace_s": round(fw, 2), "block_once_over_full": round(bw / fw, 3),
            "analyze_block_once_cpu_s": round(bc, 2), "analyze_full_trace_cpu_s": round(fc, 2),
            "block_once_over_full_cpu": round(bc / fc, 3), "identical": True,
            "peak_reserved_bytes": block["peak_reserved_bytes"]}


def plan_vs_analyze(config="fixtures/hf/llama-2-7b.json", seq=4096, precision="bf16-amp", device="910B3") -> dict:
    """`memplan plan` against one `memplan analyze` of the same workload (processes, side by side)."""
    analyze = analyze_cmd(config, 1, seq, precision, device, False)
    plan = [sys.executable, "-m", "memplan", "plan", "--hf-config", config, "--seq-len", str(seq),
            "--precision", precision, "--device", device, "--format", "json", "-q"]
    a_wall = _timed(analyze)[0]
    p_wall, out, _ = _timed(plan)
    result = json.loads(out)
    return {"command": " ".join(plan[2:]), "analyze_s": round(a_wall, 2), "plan_s": round(p_wall, 2),
            "plan_over_analyze": round(p_wall / a_wall, 3), "plan_batch_size": result.get("batch_size"),
            "plan_checkpoint": result.get("checkpoint")}


def write(rows: list[dict], repeat: int, out: str, plan: dict | None = None, dist: list | None = None) -> None:
    import torch

    result = {"benchmark": "speed", "torch": torch.__version__, "python": platform.python_version(),
              "cpus": os.cpu_count(), "load_avg_at_end": os.getloadavg(), "steps_traced": 2,
              "repeat": repeat, "cases": rows, "plan_vs_analyze": plan, "distributed": dist or []}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = ["# Speed: `memplan analyze` (block-once) vs. full trace vs. a bare fake-tensor process",
             "", f"Wall time of whole processes (imports included), best of {repeat}, 2 optimizer steps each, "
             f"{os.cpu_count()} CPUs shared with other jobs (load average at the end: "
             f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}). Block-once and full trace gave identical "
             "estimates (peak allocated and reserved, breakdown, phase peaks, module rows, event count) in every "
             "row.", "",
             "Wall seconds, and in brackets CPU seconds (user + system: the work done, which the load does not "
             "change as much); the ratios are wall (CPU). `imports`: a process that only imports what the bare "
             "one imports and loads the config (torch, transformers, the model class) and builds the whole model on the "
             "meta device: the floor of the bare process. `load`: a process that does only what `memplan analyze` "
             "does before it traces (the collector off, the config read, its model class imported; memplan.hf) "
             "and exits as its CLI does: the floor of `memplan analyze`; `load / bare` is the least ratio any "
             "analyze could reach against that bare process.",
             "",
             "| model | config | mode | imports (s) | load (s) | bare fake (s) | analyze block-once (s) | "
             "analyze full (s) | load / bare | block-once / bare | full / bare |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ckpt = f" `--checkpoint '{r['checkpoint']}'`" if r.get("checkpoint") else ""
        lines.append(f"| {r['model']} | b{r['batch_size']} s{r['seq_len']} {r['precision']} {r['device']}{ckpt} | "
                     f"{r['trace_mode']} | {r['imports_only_s']} ({r['imports_only_cpu_s']}) | "
                     f"{r['load_only_s']} ({r['load_only_cpu_s']}) | "
                     f"{r['bare_fake_process_s']} ({r['bare_fake_process_cpu_s']}) | "
                     f"{r['analyze_block_once_s']} ({r['analyze_block_once_cpu_s']}) | {r['analyze_full_trace_s']} "
                     f"({r['analyze_full_trace_cpu_s']}) | {r['load_over_bare']} ({r['load_over_bare_cpu']}) | "
                     f"**{r['block_once_over_bare']}** "
                     f"(**{r['block_once_over_bare_cpu']}**) | {r['full_over_bare']} ({r['full_over_bare_cpu']}) |")
    if dist:
        lines += ["", "Distributed (`--world-size N --sharding S`, ranks 0 and N-1 traced), block-once vs. "
                  "`--full-trace`, identical per-rank estimates:", "",
                  "| model | config | mode | analyze block-once (s) | analyze full (s) | block-once / full |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {d['model']} | s{d['seq_len']} {d['precision']} {d['device']} {d['sharding']} x{d['world_size']} "
                  f"| {d['trace_mode']} | {d['analyze_block_once_s']} ({d['analyze_block_once_cpu_s']}) | "
                  f"{d['analyze_full_trace_s']} ({d['analyze_full_trace_cpu_s']}) | **{d['block_once_over_full']}** "
                  f"(**{d['block_once_over_full_cpu']}**) |" for d in dist]
    if plan:
        lines += ["", f"`{plan['command']}`: **{plan['plan_s']} s**, one `memplan analyze` of the same "
                  f"workload {plan['analyze_s']} s: plan / analyze = **{plan['plan_over_analyze']}**."]
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


def run_ddp(repeat: int, out: str) -> None:
    """DDP and ZeRO-1 ranks, block-once vs. `--full-trace` (identical per-rank estimates), an HF config and a
    model file: benchmarks/results/speed_ddp.{json,md}."""
    import tempfile

    import torch

    rows = []
    for c in DDP_CASES:
        rows.append(run_dist_case(*c, repeat=repeat))
        print(json.dumps(rows[-1]), flush=True)
    at32 = next(c for c in FILE_CASES if c[3] == 32)
    with tempfile.TemporaryDirectory() as tmp:
        for world, sharding in FILE_DDP_CASES:
            rows.append(run_file_dist_case(at32, world, sharding, repeat, tmp))
            print(json.dumps(rows[-1]), flush=True)
    ckpt = [a for g in MIXED_CHECKPOINT for a in ("--checkpoint", g)]
    for label, config, seq, precision, device, world, sharding in RUNS_CASES:
        cmd = analyze_cmd(config, 1, seq, precision, device, False) + ckpt
        row = run_dist_case(label, config, seq, precision, device, world, sharding, cmd=cmd, repeat=repeat)
        rows.append(dict(row, model=f"{label}, checkpoint layers 0-4 + 5's attention and MLP"))
        print(json.dumps(rows[-1]), flush=True)
    load = os.getloadavg()
    result = {"benchmark": "speed_ddp", "torch": torch.__version__, "python": platform.python_version(),
              "cpus": os.cpu_count(), "load_avg_at_end": load, "steps_traced": 2, "repeat": repeat, "cases": rows}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = ["# Speed: DDP and ZeRO-1 ranks, and ranks with checkpointing on some layers, block-once vs. full trace", "",
             "`memplan analyze ... --world-size 8 --sharding S` against the same with `--full-trace`: wall time of "
             f"whole processes (imports included), best of {repeat}, run side by side, {os.cpu_count()} CPUs shared "
             f"with other jobs (load average at the end: {', '.join(f'{x:.1f}' for x in load)}); in brackets CPU "
             "seconds (user + system). Per-rank estimates, strategy info and notes identical in every row (the "
             "benchmark fails otherwise). DDP traces rank 0, ZeRO-1 and FSDP ranks 0 and 7.", "",
             f"    python benchmarks/speed.py --ddp{f' --repeat {repeat}' if repeat > 1 else ''}", "",
             "| model | ranks | mode | analyze block-once (s) | analyze full (s) | block-once / full |",
             "|---|---|---|---|---|---|"]
    lines += _ratio_lines(rows, lambda r: f"{r['sharding']} x{r['world_size']}")
    lines += [""] + [f"- {r['model']} {r['sharding']}: {r['trace_mode']}: {r['trace_mode_reason']}" for r in rows]
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", default=None, help="run only the cases whose label contains this text")
    ap.add_argument("--no-plan", action="store_true", help="skip plan vs. analyze on Llama-2-7B")
    ap.add_argument("--no-dist", action="store_true", help="skip the distributed (--world-size) cases")
    ap.add_argument("--files", action="store_true",
                    help="model files instead (decoder_1b at 22, 32, 80 layers): speed_model_files.{json,md}")
    ap.add_argument("--ddp", action="store_true",
                    help="DDP and ZeRO-1 ranks only (Llama-2-7B, decoder_1b at 32 layers): speed_ddp.{json,md}")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.ddp:
        run_ddp(args.repeat, args.out or "benchmarks/results/speed_ddp")
        return
    if args.files:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            rows, options, dist = [], [], []
            for c in FILE_CASES:
                rows.append(run_file_case(*c, repeat=args.repeat, tmp=tmp))
                print(json.dumps(rows[-1]), flush=True)
            at32 = next(c for c in FILE_CASES if c[3] == 32)
            for label, extra in FILE_OPTION_CASES:
                options.append(run_file_option_case(at32, label, extra, args.repeat, tmp))
                print(json.dumps(options[-1]), flush=True)
            for optimizer in ("adafactor", "adamw"):
                options.append(run_file_optimizer_only(at32, optimizer, args.repeat, tmp))
                print(json.dumps(options[-1]), flush=True)
            for world, sharding in ([] if args.no_dist else FILE_DIST_CASES):
                dist.append(run_file_dist_case(at32, world, sharding, args.repeat, tmp))
                print(json.dumps(dist[-1]), flush=True)
        write_files(rows, args.repeat, args.out or "benchmarks/results/speed_model_files", options, dist)
        return
    args.out = args.out or "benchmarks/results/speed"
    rows = []
    for case in CASES:
        if args.only and args.only not in case[0]:
            continue
        row = run_case(*case, repeat=args.repeat)
        print(json.dumps(row), flush=True)
        rows.append(row)
    dist = [] if args.no_dist else [run_dist_case(*c) for c in DIST_CASES if not args.only or args.only in c[0]]
    for d in dist:
        print(json.dumps(d), flush=True)
    plan = None if args.no_plan else plan_vs_analyze()
    if plan:
        print(json.dumps(plan), flush=True)
    write(rows, args.repeat, args.out, plan, dist)


if __name__ == "__main__":
    main()
