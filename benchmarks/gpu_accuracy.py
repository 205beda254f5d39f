"""GPU accuracy benchmark: real training steps on CUDA vs memplan's allocator simulation (and, once wired,
memplan's full estimate).

For each model file in fixtures/models/*.py (contract: build_model(), make_batch(batch_size[, seq_len]),
optional loss_fn, make_optimizer, train_step) this runs, in a fresh subprocess per model:
  2 optimizer steps on cuda (AdamW unless the file has make_optimizer; default step: forward, loss,
  backward, optimizer.step(), zero_grad(set_to_none=True)), with torch.cuda.memory._record_memory_history
  on from before the model is built. It records max_memory_allocated / max_memory_reserved, trims the
  allocator history to its alloc / free / segment events, saves it as a small JSON fixture under
  fixtures/alloc_traces/ (replayed by tests/alloc/test_replay.py), replays it through
  memplan.alloc.simulate, and writes benchmarks/results/gpu_accuracy.{json,md}.

Run on a CUDA machine (under 10 minutes for the fixture models):
    python benchmarks/gpu_accuracy.py [--batch-size 4] [--seq-len 128] [--alloc-conf expandable_segments:True]
Without a GPU it exits with a message (exit code 2); `--help` works anywhere.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE_SCHEMA = "memplan-alloc-trace/1"
KEEP_ACTIONS = ("alloc", "free_completed", "segment_alloc", "segment_free", "segment_map", "segment_unmap")


def _load_model_file(path: Path):
    spec = importlib.util.spec_from_file_location(f"memplan_bench_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _to(obj, device):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: _to(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to(v, device) for v in obj)
    return obj


def _call(model, batch):
    if isinstance(batch, tuple):
        return model(*batch)
    if isinstance(batch, dict):
        return model(**batch)
    return model(batch)


def _default_loss(output):
    import torch

    if getattr(output, "loss", None) is not None:
        return output.loss
    if isinstance(output, torch.Tensor):
        return output.float().mean()
    if isinstance(output, dict):
        output = list(output.values())
    for o in output:
        if isinstance(o, torch.Tensor) and o.is_floating_point():
            return o.float().mean()
    raise TypeError("cannot derive a loss from the model output; define loss_fn in the model file")


def _make_batch(mod, batch_size: int, seq_len: int | None):
    params = inspect.signature(mod.make_batch).parameters
    if seq_len is not None and "seq_len" in params:
        return mod.make_batch(batch_size, seq_len=seq_len)
    return mod.make_batch(batch_size)


def trim_history(snapshot: dict) -> tuple[list[list[int]], dict]:
    """Allocator history -> [[is_alloc, sid, nbytes], ...] (single stream) plus a few counters."""
    traces = snapshot.get("device_traces") or [[]]
    entries = traces[0]
    sid_of: dict[int, tuple[int, int]] = {}
    events: list[list[int]] = []
    reserved = peak = 0
    streams = set()
    counts: dict[str, int] = {}
    next_sid = 0
    for e in entries:
        action = e.get("action")
        if action not in KEEP_ACTIONS:
            continue
        counts[action] = counts.get(action, 0) + 1
        streams.add(e.get("stream", 0))
        addr, size = int(e["addr"]), int(e["size"])
        if action == "alloc":
            sid, next_sid = next_sid, next_sid + 1
            sid_of[addr] = (sid, size)
            events.append([1, sid, size])
        elif action == "free_completed":
            if addr in sid_of:
                sid, size0 = sid_of.pop(addr)
                events.append([0, sid, size0])
        elif action in ("segment_alloc", "segment_map"):
            reserved += size
            peak = max(peak, reserved)
        else:
            reserved -= size
    return events, {"counts": counts, "streams": len(streams), "trace_reserved_peak": peak,
                    "entries": len(entries)}


def run_one(path: Path, args) -> dict:
    """Child process: train, record, save the fixture, return the measured numbers."""
    import torch

    mod = _load_model_file(path)
    dev = torch.device("cuda")
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(enabled="all", context=None, max_entries=args.max_entries)
    t0 = time.perf_counter()
    model = mod.build_model().to(dev)
    model.train()
    opt = mod.make_optimizer(model.parameters()) if hasattr(mod, "make_optimizer") else \
        torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _step in range(args.steps):
        batch = _to(_make_batch(mod, args.batch_size, args.seq_len), dev)
        if hasattr(mod, "train_step"):
            mod.train_step(model, batch, opt)
        else:
            out = _call(model, batch)
            loss = mod.loss_fn(out, batch) if hasattr(mod, "loss_fn") else _default_loss(out)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        del batch
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    measured = {"max_memory_allocated": int(torch.cuda.max_memory_allocated()),
                "max_memory_reserved": int(torch.cuda.max_memory_reserved())}
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    events, info = trim_history(snapshot)
    free, total = torch.cuda.mem_get_info()
    fixture = {
        "schema": TRACE_SCHEMA, "model": path.stem, "torch_version": torch.__version__,
        "device_name": torch.cuda.get_device_name(), "total_memory": int(total),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "batch_size": args.batch_size,
        "seq_len": args.seq_len, "steps": args.steps, "measured": {**measured, **info}, "events": events,
    }
    out = Path(args.traces_dir) / f"{path.stem}_bs{args.batch_size}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fixture, separators=(",", ":")))
    return {"model": path.stem, "seconds": round(seconds, 2), "fixture": str(out.relative_to(ROOT)),
            "device_name": fixture["device_name"], "num_events": len(events), **measured, **info}


def memplan_estimate(path: Path, args) -> dict | None:
    """memplan's estimate for the same workload (fake-tensor trace on the CPU + the CUDA allocator model
    of the present GPU), and `memplan validate` of it on the GPU (predicted vs measured, per phase)."""
    try:
        from memplan import api
    except ImportError:
        return None
    out: dict = {}
    try:
        est = api.analyze(str(path), batch_size=args.batch_size, seq_len=args.seq_len, device="cuda",
                          steps=args.steps)
        out.update(peak_allocated_bytes=est.peak_allocated_bytes, peak_reserved_bytes=est.peak_reserved_bytes)
    except Exception as exc:  # report, do not fail the benchmark
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    try:
        v = api.validate(str(path), device="cuda", batch_size=args.batch_size, seq_len=args.seq_len,
                         steps=args.steps).to_dict()
        out["validate"] = {k: v.get(k) for k in ("predicted", "measured", "error_pct", "reserved_error_pct", "ok")}
    except Exception as exc:
        out["validate"] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def _pct(pred, meas):
    if pred is None or not meas:
        return None
    return round(100.0 * (pred - meas) / meas, 3)


def compare(row: dict, fixture_path: Path, args) -> dict:
    sys.path.insert(0, str(ROOT))
    from memplan.alloc import simulate

    fx = json.loads(fixture_path.read_text())
    sim = simulate([(bool(a), s, n) for a, s, n in fx["events"]], "cuda", fx["alloc_conf"] or None)
    row["replay_peak_allocated_bytes"] = sim.peak_allocated_bytes
    row["replay_peak_reserved_bytes"] = sim.peak_reserved_bytes
    row["replay_allocated_error_pct"] = _pct(sim.peak_allocated_bytes, row["max_memory_allocated"])
    row["replay_reserved_error_pct"] = _pct(sim.peak_reserved_bytes, row["max_memory_reserved"])
    est = memplan_estimate(ROOT / args.models_dir / f"{row['model']}.py", args)
    row["estimate"] = est
    if est and "peak_allocated_bytes" in est:
        row["estimate_allocated_error_pct"] = _pct(est["peak_allocated_bytes"], row["max_memory_allocated"])
        row["estimate_reserved_error_pct"] = _pct(est["peak_reserved_bytes"], row["max_memory_reserved"])
    return row


def write_results(rows: list[dict], args) -> None:
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_accuracy.json").write_text(json.dumps({"rows": rows, "args": vars(args)}, indent=2))
    mib = 1024 * 1024
    lines = ["# GPU accuracy", "", f"Batch size {args.batch_size}, seq len {args.seq_len}, {args.steps} steps, "
             f"PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')!r}.", "",
             "| model | device | measured alloc MiB | measured reserved MiB | replay reserved MiB | replay err % "
             "| estimate alloc err % | estimate reserved err % |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | error: {r['error']} | | | | | | |")
            continue
        lines.append(
            f"| {r['model']} | {r['device_name']} | {r['max_memory_allocated'] / mib:.1f} | "
            f"{r['max_memory_reserved'] / mib:.1f} | {r['replay_peak_reserved_bytes'] / mib:.1f} | "
            f"{r['replay_reserved_error_pct']} | {r.get('estimate_allocated_error_pct', '-')} | "
            f"{r.get('estimate_reserved_error_pct', '-')} |")
    lines += ["", "Targets: estimate allocated within 2 %, reserved within 5 %; replay of the recorded allocator "
              "history within 2 % (tests/alloc/test_replay.py)."]
    (out / "gpu_accuracy.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models-dir", default="fixtures/models")
    p.add_argument("--only", action="append", help="model file stem(s) to run")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--alloc-conf", default=None, help="PYTORCH_CUDA_ALLOC_CONF for the runs")
    p.add_argument("--traces-dir", default="fixtures/alloc_traces")
    p.add_argument("--out-dir", default="benchmarks/results")
    p.add_argument("--max-entries", type=int, default=2_000_000)
    p.add_argument("--timeout", type=int, default=240, help="seconds per model")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    os.chdir(ROOT)
    if args.alloc_conf is not None:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = args.alloc_conf
    if args.child:
        print(json.dumps(run_one(Path(args.child), args)))
        return 0
    import torch

    if not torch.cuda.is_available():
        print("gpu_accuracy: no CUDA device here; run this script on a machine with a GPU", file=sys.stderr)
        return 2
    models = sorted(Path(args.models_dir).glob("*.py"))
    models = [m for m in models if not m.name.startswith("_") and (not args.only or m.stem in args.only)]
    rows = []
    for m in models:
        cmd = [sys.executable, __file__, "--child", str(m)] + [a for a in (argv or sys.argv[1:])]
        try:
            cp = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=os.environ.copy())
        except subprocess.TimeoutExpired:
            rows.append({"model": m.stem, "error": f"timeout after {args.timeout}s"})
            continue
        if cp.returncode != 0:
            rows.append({"model": m.stem, "error": (cp.stderr.strip().splitlines() or ["failed"])[-1]})
            continue
        row = json.loads(cp.stdout.strip().splitlines()[-1])
        rows.append(compare(row, ROOT / row["fixture"], args))
        print(json.dumps({k: row.get(k) for k in ("model", "max_memory_reserved", "replay_peak_reserved_bytes",
                                                   "replay_reserved_error_pct")}), flush=True)
    write_results(rows, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
