"""Compatibility matrix: the same fixed check set under every torch that torch_npu ships for.

Each torch lives in its own venv (built by benchmarks/compat_envs.sh, outside the repository); this
script runs itself inside each one (`--worker`, with PYTHONPATH at this checkout) and collects:

- accuracy: `memplan.api.analyze` vs the real CPU run of the same step, for every fixture in
  fixtures/models at fp32 and bf16-amp (batch 2, sequence length 32 where the model takes one): the measurement code path of
  benchmarks/accuracy_cpu.py (`run_case`: PyTorch's own CPU-allocator events of the real step);
  decoder_1b is traced only (its real run needs ~40 GiB);
- validate: `memplan.api.validate` on mlp (cpu);
- plan: `memplan.api.plan` on mlp with a capacity below its estimate;
- diagnose: the log corpus (fixtures/logs/index.tsv): primary category right per file;
- gloo: the 2-rank DDP check of benchmarks/distributed_cpu.py on mlp, where the torch has the API;
- unseen: any extra model files given with --unseen (fp32 and bf16-amp, batch 2).

    bash benchmarks/compat_envs.sh                      # build the venvs (slow, once)
    python benchmarks/compat.py [--venvs /work/venvs] [--pinned /work/main/.venv] [--unseen FILE ...]
Writes benchmarks/results/compat.{json,md} from benchmarks/results/compat_runs/<torch>.json (one file
per torch; a rerun of some versions or checks replaces only those).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BATCH = 2
SEQ_LEN = 32   # for fixtures that take a sequence length: old torch's CPU bf16 kernels are slow (minutes per step)
PRECISIONS = ("fp32", "bf16-amp")
TRACE_ONLY = {"decoder_1b": "real run needs ~40 GiB: traced only"}
WORKER_TIMEOUT_S = 3600


# ---- worker: runs inside one venv -----------------------------------------------------------------
def _err(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


_PARTIAL: list = []   # [path] of the JSON-lines file that keeps each finished row (a killed worker loses none)


def _keep(check: str, value) -> None:
    if _PARTIAL:
        with open(_PARTIAL[0], "a") as f:
            f.write(json.dumps({"check": check, "value": value}, default=str) + "\n")


def check_accuracy(paths: list[str], check: str = "accuracy") -> list[dict]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from accuracy_cpu import run_case
    from memplan import api
    from memplan.workload import TrainConfig

    rows = []
    for path in paths:
        name = Path(path).stem
        for precision in PRECISIONS:
            cfg = TrainConfig(batch_size=BATCH, precision=precision, seq_len=SEQ_LEN)
            row = {"model": name, "precision": precision, "batch_size": BATCH, "seq_len": SEQ_LEN}
            try:
                if name in TRACE_ONLY:
                    est = api.analyze(path, config=cfg, fallback=False)
                    row.update(estimate_bytes=est.peak_allocated_bytes, skipped=TRACE_ONLY[name])
                else:
                    row.update(run_case(path, cfg))
            except Exception as exc:  # noqa: BLE001 - a matrix records every failure and goes on
                row["error"] = _err(exc)
            print(json.dumps(row), flush=True)
            _keep(check + "[]", row)
            rows.append(row)
    return rows


def check_validate() -> dict:
    from memplan import api

    v = api.validate(str(ROOT / "fixtures/models/mlp.py"), device="cpu", batch_size=4)
    return {"ok": bool(v.ok), "error_pct": v.error_pct, "failure": v.failure and v.failure.get("summary")}


def check_plan() -> dict:
    from memplan import api

    p = api.plan(str(ROOT / "fixtures/models/mlp.py"), capacity="400MB", batch_size=256)
    pred = p.predicted.peak_allocated_bytes if p.predicted is not None else None
    return {"ok": bool(p.fits), "batch_size": p.batch_size, "checkpoint": len(p.checkpoint),
            "predicted_bytes": pred, "changes": [c.title for c in p.changes][:4]}


def check_diagnose() -> dict:
    import csv

    from memplan import api

    with open(ROOT / "fixtures/logs/index.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    right, wrong = 0, []
    for row in rows:
        d = api.diagnose(str(ROOT / "fixtures/logs" / row["file"]))
        if str(d.primary_category) == row["category"] or getattr(d.primary_category, "value", None) == row["category"]:
            right += 1
        else:
            wrong.append(row["file"])
    return {"ok": not wrong, "right": right, "files": len(rows), "wrong": wrong[:5]}


def check_gloo() -> dict:
    from memplan import compat
    from memplan.distributed import validate_distributed
    from memplan.workload import TrainConfig

    if not compat.fake_process_group():
        return {"ok": None, "skipped": compat.missing("torch's fake process group")}
    v = validate_distributed(str(ROOT / "fixtures/models/mlp.py"), TrainConfig(batch_size=8), 2, "ddp", "cpu")
    return {"ok": bool(v.ok), "max_abs_error_pct": v.max_abs_error_pct,
            "errors": [e.get("error", "")[:300] for e in v.errors][:2]}


def worker(args) -> dict:
    import platform

    import torch

    out = {"torch": torch.__version__, "python": platform.python_version(), "checks": {}}
    if args.partial:
        _PARTIAL.append(args.partial)
        _keep("meta", {"torch": torch.__version__})
    try:
        import transformers
        out["transformers"] = transformers.__version__
    except Exception as exc:  # noqa: BLE001
        out["transformers"] = f"not importable: {_err(exc)}"
    paths = sorted(glob.glob(str(ROOT / "fixtures/models/*.py")))
    if args.only:
        paths = [p for p in paths if Path(p).stem in args.only]
    checks = {"accuracy": lambda: check_accuracy(paths), "unseen": lambda: check_accuracy(args.unseen or [], "unseen"),
              "validate": check_validate, "plan": check_plan, "diagnose": check_diagnose, "gloo": check_gloo}
    for name in args.checks.split(","):
        t0 = time.perf_counter()
        try:
            out["checks"][name] = checks[name]()
        except Exception as exc:  # noqa: BLE001
            out["checks"][name] = {"ok": False, "error": _err(exc), "trace": traceback.format_exc()[-2000:]}
        if not isinstance(out["checks"][name], list):
            _keep(name, out["checks"][name])
        print(f"[{torch.__version__}] {name} done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


# ---- orchestrator: one worker per venv --------------------------------------------------------------
def run_venv(python: str, args) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRANSFORMERS_VERBOSITY="error", PYTHONFAULTHANDLER="1")
    partial = Path(args.out + "_runs") / f"{Path(python).parents[1].name}.partial.jsonl"
    partial.unlink(missing_ok=True)
    cmd = [python, str(Path(__file__).resolve()), "--worker", "--checks", args.checks, "--partial", str(partial)]
    if args.only:
        cmd += ["--only", *args.only]
    if args.unseen:
        cmd += ["--unseen", *args.unseen]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        return from_partial(partial, python, f"stopped after {args.timeout} s: checks not listed did not run")
    last = [line for line in p.stdout.splitlines() if line.startswith("{\"torch\"")]
    if p.returncode != 0 or not last:
        return {"python": python, "error": f"worker exit {p.returncode}", "stderr": p.stderr[-3000:]}
    res = json.loads(last[-1])
    res["python_exe"] = python
    res["seconds"] = round(time.perf_counter() - t0, 1)
    return _stamp(res)


def tree_commit() -> str:
    """The memplan commit the worker imported (a copy of the tree says so in COMPAT_TREE_COMMIT)."""
    if os.environ.get("COMPAT_TREE_COMMIT"):
        return os.environ["COMPAT_TREE_COMMIT"]
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def from_partial(path: Path, python: str, note: str) -> dict:
    """What a stopped worker had finished (its JSON-lines file)."""
    res = {"python_exe": python, "note": note, "checks": {}}
    if not path.exists():
        return {"python": python, "error": note}
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d["check"] == "meta":
            res["torch"] = d["value"]["torch"]
        elif d["check"].endswith("[]"):
            res["checks"].setdefault(d["check"][:-2], []).append(d["value"])
        else:
            res["checks"][d["check"]] = d["value"]
    return _stamp(res)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--venvs", default=os.environ.get("COMPAT_VENVS", "/work/venvs"))
    ap.add_argument("--pinned", default=str(ROOT / ".venv"), help="the venv with the pinned torch")
    ap.add_argument("--versions", nargs="*", default=None, help="only these torch-<version> venvs")
    ap.add_argument("--checks", default="accuracy,unseen,validate,plan,diagnose,gloo")
    ap.add_argument("--only", nargs="*", default=None, help="only these fixtures")
    ap.add_argument("--unseen", nargs="*", default=None, help="model files no test has seen")
    ap.add_argument("--partial", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=float, default=WORKER_TIMEOUT_S, help="seconds per torch version")
    ap.add_argument("--from-partial", action="store_true",
                    help="only rebuild the report, taking stopped workers' finished rows from OUT_runs/*.partial.jsonl")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/compat"),
                    help="writes OUT.json / OUT.md, and one OUT_runs/<torch>.json per torch")
    args = ap.parse_args()
    if args.worker:
        res = worker(args)
        print(json.dumps(res, default=str))
        return
    pythons = sorted((p for p in glob.glob(os.path.join(args.venvs, "torch-*", "bin", "python"))
                      if Path(p).parents[1].joinpath(".compat-ok").exists()),   # finished by compat_envs.sh
                     key=lambda p: [int(x) for x in Path(p).parents[1].name[6:].split(".")])
    if args.versions:
        pythons = [p for p in pythons if Path(p).parents[1].name[6:] in args.versions]
    pinned = os.path.join(args.pinned, "bin", "python")
    if os.path.exists(pinned) and (not args.versions or "pinned" in args.versions):
        pythons.append(pinned)
    runs = Path(args.out + "_runs")
    runs.mkdir(parents=True, exist_ok=True)
    if args.from_partial:
        for f in runs.glob("*.partial.jsonl"):
            save_run(runs, from_partial(f, f.name.split(".partial")[0], "stopped: checks not listed did not run"),
                     keep_existing=True)
        pythons = []
    for py in pythons:
        print(f"== {py}", flush=True)
        res = run_venv(py, args)
        print(json.dumps(summarize(res)), flush=True)
        save_run(runs, res)
    from compat_report import write_report

    results = [json.loads(f.read_text()) for f in runs.glob("*.json")]
    results.sort(key=lambda r: [int(x) for x in str(r.get("torch", "0")).split("+")[0].split(".")[:3]])
    write_report(results, args.out)


def save_run(runs: Path, res: dict, keep_existing: bool = False) -> None:
    """OUT_runs/<torch>.json; a rerun of some checks keeps the other checks' last results (and with
    `keep_existing`, a finished check is not replaced by a stopped worker's partial one)."""
    name = res.get("torch") or res.get("python", "unknown").replace("/", "_")
    path = runs / f"{name}.json"
    if path.exists() and "checks" in res:
        prev = json.loads(path.read_text())
        merged = dict(prev.get("checks", {}))
        for k, v in res["checks"].items():
            if keep_existing and k in merged:
                continue
            if isinstance(v, list) and isinstance(merged.get(k), list):
                merged[k] = _merge_rows(merged[k], v)   # a rerun of some cases (--only) keeps the others
            else:
                merged[k] = v
        top = {} if keep_existing else {k: v for k, v in res.items() if k != "checks"}
        if not keep_existing and "note" not in res:
            prev.pop("note", None)   # this run finished: the old note (what did not run) is stale
        commits = {**prev.get("check_commits", {}),
                   **{k: v for k, v in res.get("check_commits", {}).items() if not (keep_existing and k in prev.get("checks", {}))}}
        res = {**prev, **top, "checks": merged, "check_commits": commits}
    path.write_text(json.dumps(res, indent=1, default=str))


def _case(row: dict) -> tuple:
    return row.get("model"), row.get("precision"), row.get("batch_size"), row.get("seq_len")


def _merge_rows(old: list, new: list) -> list:
    """The old case rows with those rerun replaced (same model, precision, batch, sequence length)."""
    fresh = {_case(r): r for r in new}
    kept = [fresh.pop(_case(r), r) for r in old]
    return kept + list(fresh.values())


def _stamp(res: dict) -> dict:
    """Each check (and each case row of a list check) records the memplan commit it ran from."""
    commit = tree_commit()
    for k, v in res.get("checks", {}).items():
        for row in v if isinstance(v, list) else []:
            if isinstance(row, dict):
                row.setdefault("memplan_commit", commit)
    res["check_commits"] = {k: commit for k in res.get("checks", {})}
    return res


def summarize(res: dict) -> dict:
    acc = res.get("checks", {}).get("accuracy")
    errs = [abs(r["error_pct"]) for r in acc or [] if isinstance(r, dict) and "error_pct" in r]
    return {"torch": res.get("torch"), "error": res.get("error"), "accuracy_cases": len(errs),
            "max_abs_error_pct": max(errs) if errs else None}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
