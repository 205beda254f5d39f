"""Where one `memplan analyze` process spends its time (Llama-2-70B shape and Llama-2-7B, 4096 tokens, bf16-amp,
910B3, block-once), by part, with the same command as benchmarks/speed.py.

The command runs in a child process through memplan's own entry point (`memplan.cli.main.main`), with
its functions wrapped to time each part (wall and CPU seconds): the interpreter and memplan's CLI
imports, loading the workload (imports torch and transformers, reads the config, imports the model
class), checking the layers (`hf_stack`: the model on the meta device), each reduced-depth trace,
writing the N-layer trace from them (`synthesize`), the allocator replay, the estimate, the JSON output,
and the interpreter's shutdown (from the handlers at exit to the process's end, seen by the parent; the
child's own handler is registered while the command runs, as a library's would be, so memplan's exit
handler still runs last and ends the process as it does for a user: memplan.cli.main._quick_exit).
Two more processes give the import floor: `import torch`, and `import torch, transformers` + the model
class (`hf_imports`).

    python benchmarks/speed_analyze_profile.py [--repeat 2] [--out benchmarks/results/speed_analyze_profile]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speed import CASES, ROOT, _timed, analyze_cmd  # noqa: E402  (the same commands as the speed benchmark)

_CHILD = r"""
import atexit, json, sys, time
W0, C0 = time.perf_counter(), time.process_time()
parts = []
def wrap(mod, name, label):
    fn = getattr(mod, name)
    def timed(*a, **k):
        w, c = time.perf_counter(), time.process_time()
        try:
            return fn(*a, **k)
        finally:
            parts.append((label, time.perf_counter() - w, time.process_time() - c))
    setattr(mod, name, timed)
import memplan.cli.main as entry
import memplan.cli.analyze as cli_analyze
parts.append(("interpreter + memplan CLI imports", time.perf_counter() - W0, time.process_time() - C0))
def after_load():   # torch and transformers are loaded now: wrap the rest without importing them earlier
    atexit.register(report)   # during the command, as a library's handler: memplan's own exit handler runs last
    import memplan.core.analyze  # noqa: F401
    import memplan.trace.block_once as bo, memplan.trace.blocks as blocks, memplan.trace.tracer as tracer
    core = sys.modules["memplan.core.analyze"]
    wrap(bo, "hf_stack", "check the layers (hf_stack: model on meta)")
    wrap(tracer, "trace_workload", "trace one reduced depth")
    wrap(blocks, "synthesize", "write the N-layer trace (synthesize)")
    wrap(core, "trace", "trace, all of it")
    wrap(core, "simulate_allocator", "allocator replay")
    wrap(core, "estimate_from_trace", "estimate from the trace")
load = cli_analyze.job_inputs
def job_inputs(*a, **k):
    w, c = time.perf_counter(), time.process_time()
    try:
        return load(*a, **k)
    finally:
        parts.append(("load the workload (torch, transformers, config, model class)", time.perf_counter() - w,
                      time.process_time() - c))
        after_load()
cli_analyze.job_inputs = job_inputs
emit = cli_analyze.emit
out_start = []
def timed_emit(*a, **k):
    out_start.append((time.perf_counter(), time.process_time()))
    return emit(*a, **k)
cli_analyze.emit = timed_emit
def report():
    w, c = time.perf_counter(), time.process_time()
    parts.append(("JSON output", w - out_start[0][0], c - out_start[0][1]))
    with open(REPORT, "w") as f:
        json.dump({"parts": parts, "to_exit_handlers": [w - W0, c - C0], "exit_handlers_at": time.time()}, f)
sys.argv = ["memplan"] + ARGS
entry.main()
"""

_FLOOR = {"import torch": "import time; import torch",
          "import torch, transformers + the model class": (
              "import sys, time; sys.path.insert(0, {root!r}); from memplan.hf import load_hf_config; "
              "load_hf_config({config!r})")}
_FLOOR_END = "; print(time.process_time())"   # CPU seconds up to the end of the script: before the shutdown


def _child(config, seq, precision, device) -> dict:
    cmd = analyze_cmd(config, 1, seq, precision, device, False)
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    src = f"REPORT = {path!r}; ARGS = {cmd[3:]!r}\n" + _CHILD
    wall, _, cpu = _timed([sys.executable, "-c", src])
    end = time.time()
    with open(path) as f:
        got = json.load(f)
    os.unlink(path)
    parts: dict[str, list] = {}
    for label, w, c in got["parts"]:
        acc = parts.setdefault(label, [0.0, 0.0, 0])
        acc[0], acc[1], acc[2] = acc[0] + w, acc[1] + c, acc[2] + 1
    parts["interpreter shutdown (exit handlers to process end, wall)"] = [end - got["exit_handlers_at"], None, 1]
    return {"process_wall_s": wall, "process_cpu_s": cpu, "to_exit_handlers_wall_cpu_s": got["to_exit_handlers"],
            "parts": parts}


def profile(label, config, seq, precision, device, repeat: int) -> dict:
    runs = [_child(config, seq, precision, device) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["process_cpu_s"])
    floor = {}
    for name, src in _FLOOR.items():
        times = [_timed([sys.executable, "-c", src.format(root=ROOT, config=config) + _FLOOR_END])
                 for _ in range(repeat)]
        floor[name] = [round(min(t[0] for t in times), 2), round(min(t[2] for t in times), 2),
                       round(min(float(t[1]) for t in times), 2)]
    return {"model": label, "config": config, "seq_len": seq, "precision": precision, "device": device,
            "process_wall_s": round(best["process_wall_s"], 2), "process_cpu_s": round(best["process_cpu_s"], 2),
            "parts": {k: [round(v[0], 3), None if v[1] is None else round(v[1], 3), v[2]]
                      for k, v in best["parts"].items()},
            "floor_processes_wall_cpu_s": floor}   # [wall, CPU, CPU before shutdown]


def write(rows: list[dict], out: str, load_before, repeat: int) -> None:
    result = {"benchmark": "speed_analyze_profile", "python": platform.python_version(), "cpus": os.cpu_count(),
              "load_avg_before": [round(x, 1) for x in load_before],
              "load_avg_after": [round(x, 1) for x in os.getloadavg()], "repeat": repeat, "cases": rows}
    with open(out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = ["# Where one `memplan analyze` process spends its time (block-once)", "",
             f"`python benchmarks/speed_analyze_profile.py`: the command of benchmarks/speed.py, the process with the "
             f"least CPU time of {repeat}, {os.cpu_count()} CPUs shared, load average "
             f"{result['load_avg_before'][0]} -> {result['load_avg_after'][0]}. Wall seconds, CPU seconds in brackets; "
             "nested parts (indented) count in the part above them too.", ""]
    for r in rows:
        lines += [f"## {r['model']}: s{r['seq_len']} {r['precision']} {r['device']}", "",
                  "| part | seconds | calls |", "|---|---|---|"]
        for k, (w, c, n) in r["parts"].items():
            name = f"&nbsp;&nbsp;{k}" if k in _NESTED else k
            lines.append(f"| {name} | {w}" + (f" ({c})" if c is not None else "") + f" | {n} |")
        lines.append(f"| **the whole process** | **{r['process_wall_s']} ({r['process_cpu_s']})** | |")
        lines += ["", "Import floor, processes alone (gc on, as a plain script runs): " + "; ".join(
            f"`{k}` {w} s ({c} s; {e} s CPU before the interpreter's shutdown)"
            for k, (w, c, e) in r["floor_processes_wall_cpu_s"].items()) + ".", ""]
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines))


_NESTED = {"check the layers (hf_stack: model on meta)", "trace one reduced depth",
           "write the N-layer trace (synthesize)"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default="benchmarks/results/speed_analyze_profile")
    args = ap.parse_args()
    load = os.getloadavg()
    rows = []
    for label, config, _batch, seq, precision, device, *checkpoint in CASES:
        if "Llama-2" in label and not checkpoint:   # the cases without checkpointing
            rows.append(profile(label, config, seq, precision, device, args.repeat))
            print(json.dumps(rows[-1]), flush=True)
    write(rows, args.out, load, args.repeat)


if __name__ == "__main__":
    main()
