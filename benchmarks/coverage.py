"""Coverage benchmark: does memplan produce an estimate on the architectures people train, and how good?

Every causal-LM, masked-LM, seq2seq, image- and audio-classification, CTC and speech-to-text
architecture the installed `transformers` can build from a config (benchmarks/coverage_zoo.py derives a
small config from each config class), timm models when timm is installed, and recurrent / speech models
written with torch.nn (benchmarks/recurrent_zoo.py: every fp32 RNN/GRU/LSTM variant of rnn_cpu.py, a
DeepSpeech2-style CTC model, an LSTM tagger). For each:
1. `memplan analyze` by tracing (fake tensors; batch 2, sequence 64 or the model's own input size,
   fp32 AdamW, 2 steps), recording success and, on failure, the cause;
2. when the trace fails (or the build fails only under fake tensors), the fallback
   (`memplan.core.fallback`, through `memplan.api.analyze`: small real steps, extrapolated); a workload whose real step fails in
   the fallback too is counted invalid, like one whose real measurement fails;
3. for models cheap enough (`--measure-max-params`), the real CPU measurement (`measure_cpu`, the CPU
   allocator's own ledger) at the same size, and the estimate's error against it.
`--fallback-check N` also runs the fallback on N traceable models at batch 4 and compares it with the
real measurement there, to calibrate the fallback's stated expected error.

Each model runs in a worker process with a per-model timeout; a worker that hangs is killed and
replaced. Results: benchmarks/results/coverage.json and coverage.md.

    python benchmarks/coverage.py [--jobs 2] [--timeout 240] [--only llama] [--limit 20]
"""
from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import platform
import select
import signal
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

RESULT = "@@coverage-result "
BATCH = 2
TIMM_MODELS = ("resnet18", "efficientnet_b0", "mobilenetv3_small_100", "vit_tiny_patch16_224",
               "convnext_atto", "regnetx_002", "deit_tiny_patch16_224", "swin_tiny_patch4_window7_224",
               "densenet121", "mixer_b16_224")


# ---- one model (in a worker) -----------------------------------------------------------------------

def _hf_workload(task, model_type, cls_name):
    import coverage_zoo as zoo

    from memplan.workload import Workload

    cls, cfg, n_params, how = zoo.build_small(model_type, cls_name)

    def build_model():
        model = cls._from_config(cfg) if hasattr(cls, "_from_config") else cls(cfg)
        if hasattr(model, "set_default_language") and getattr(cfg, "languages", None):
            model.set_default_language(cfg.languages[0])   # X-MOD: adapters are chosen per language
        return model

    wl = Workload(name=f"{model_type}/{cls_name}", build_model=build_model,
                  make_batch=zoo.make_batch_fn(task, cls, cfg), default_seq_len=zoo.seq_len_for(cfg),
                  extra={"architecture": cls_name})
    return wl, n_params, how


def _timm_workload(name):
    import timm
    import torch

    from memplan.workload import Workload

    with torch.device("meta"):
        n_params = sum(p.numel() for p in timm.create_model(name, pretrained=False, num_classes=10).parameters())

    def build_model():
        return timm.create_model(name, pretrained=False, num_classes=10)

    def make_batch(batch_size):
        return torch.randn(batch_size, 3, 224, 224)

    def loss_fn(out, batch):
        return torch.nn.functional.cross_entropy(out, torch.zeros(out.shape[0], dtype=torch.long))

    return Workload(name=f"timm/{name}", build_model=build_model, make_batch=make_batch, loss_fn=loss_fn,
                    extra={"architecture": name}), n_params, "timm default"


def _cause(exc) -> str:
    """A short, groupable cause for a failure."""
    op = getattr(exc, "op", None)
    cause = exc.__cause__ or exc
    name = type(cause).__name__
    if op:
        return f"{name} in {op}"
    text = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
    return f"{name}: {text[:90]}"


def _real_step_failure(exc) -> str | None:
    """The real step's own error when the model fails on real tensors too (`UserCodeError` from the one
    fallback path, or any other input error): the workload is then invalid, not a tracing failure.
    None for a trace failure the fallback could not rescue (e.g. too big to measure on this machine)."""
    from memplan.errors import TraceError, UserError

    if isinstance(exc, TraceError) or not isinstance(exc, UserError):
        return None
    c = exc.__cause__ or exc
    return f"{type(c).__name__}: {(str(c).strip().splitlines() or [''])[0][:90]}"


def run_one(item: dict, measure_max_params: int, fallback_check: bool, fallback_max_params: int = 0) -> dict:
    import torch

    from memplan.api import analyze, estimate_by_fallback
    from memplan.errors import TraceError
    from memplan.measure import measure_cpu
    from memplan.workload import TrainConfig

    torch.manual_seed(0)
    res = dict(item)
    # the step driver runs gc.collect() between steps; with transformers' many modules loaded each
    # collection walks a large heap, so the long-lived objects are moved out of the collector's view
    gc.collect()
    gc.freeze()
    t0 = time.perf_counter()
    try:
        if item["source"] == "timm":
            wl, n_params, how = _timm_workload(item["cls"])
        elif item["source"] == "torch":
            import recurrent_zoo

            (wl, n_params), how = recurrent_zoo.workload(item["cls"]), "as written"
        else:
            wl, n_params, how = _hf_workload(item["task"], item["model_type"], item["cls"])
    except Exception as exc:  # noqa: BLE001
        res.update(status="not-buildable", cause=_cause(exc))
        return res
    res.update(params=n_params, config=how)
    cfg = TrainConfig(batch_size=BATCH)
    # the one analysis path users run (memplan analyze / memplan.api.analyze), fallback included; the
    # fallback is skipped above --fallback-max-params only to bound the benchmark's time
    fallback = not fallback_max_params or n_params <= fallback_max_params
    try:
        est = analyze(wl, config=cfg, fallback=fallback)
        if est.method == "fallback":
            failed = next((n for n in est.notes if n.startswith("the fake-tensor trace failed: ")), "")
            res.update(status="fallback", estimate=est.peak_allocated_bytes, fallback_note=est.notes[0],
                       cause=failed[len("the fake-tensor trace failed: "):][:90])
        else:
            res.update(status="traced", estimate=est.peak_allocated_bytes, trace_s=est.trace_seconds,
                       notes=[n for n in est.notes if "scalar reads" in n or "sized" in n or "routing" in n
                              or "custom ops" in n or "assumed" in n])
    except Exception as exc:  # noqa: BLE001 - a TraceError, a UserError (bad batch, bad build) or a bug
        if isinstance(exc, TraceError):
            res.update(status="trace-failed", cause=_cause(exc), error=str(exc)[:300])
        else:
            res.update(status="error", cause=_cause(exc), error=str(exc)[:300],
                       tb=traceback.format_exc(limit=-3)[-600:])
        real = _real_step_failure(exc)
        if real:
            res["real_error"] = real
    if n_params <= measure_max_params and res.get("status") in ("traced", "fallback", "error", "trace-failed"):
        try:
            m = measure_cpu(wl, cfg)
            res["measured"] = m.peak_allocated_bytes
            if res.get("estimate"):
                res["error_pct"] = 100.0 * (res["estimate"] - m.peak_allocated_bytes) / m.peak_allocated_bytes
        except Exception as exc:  # noqa: BLE001
            res["measure_error"] = _cause(exc)
    if fallback_check and res.get("status") == "traced" and "measured" in res:
        try:
            big = cfg.with_(batch_size=4)
            fb = estimate_by_fallback(wl, big, reason="(fallback check)")
            m4 = measure_cpu(wl, big)
            res["fallback_check_pct"] = 100.0 * (fb.peak_allocated_bytes - m4.peak_allocated_bytes) / m4.peak_allocated_bytes
        except Exception as exc:  # noqa: BLE001
            res["fallback_check_error"] = _cause(exc)
    res["seconds"] = round(time.perf_counter() - t0, 2)
    return res


def worker(measure_max_params: int, per_model_timeout: int, fallback_check: bool,
           fallback_max_params: int = 0) -> None:
    import warnings

    warnings.filterwarnings("ignore")

    def on_alarm(signum, frame):
        raise TimeoutError("per-model timeout")

    signal.signal(signal.SIGALRM, on_alarm)
    for line in sys.stdin:
        item = json.loads(line)
        signal.alarm(per_model_timeout)
        try:
            res = run_one(item, measure_max_params, fallback_check and item.get("check", False),
                          fallback_max_params)
        except TimeoutError:
            res = dict(item, status="timeout")
        except BaseException as exc:  # noqa: BLE001
            res = dict(item, status="error", cause=_cause(exc))
        finally:
            signal.alarm(0)
        sys.stdout.write(RESULT + json.dumps(res) + "\n")
        sys.stdout.flush()


# ---- the parent ------------------------------------------------------------------------------------

class _Worker:
    def __init__(self, args):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker",
               "--measure-max-params", str(args.measure_max_params), "--timeout", str(args.timeout),
               "--fallback-max-params", str(args.fallback_max_params)]
        if args.fallback_check:
            cmd += ["--fallback-check", str(args.fallback_check)]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True, bufsize=1, cwd=ROOT)
        self.item = None
        self.started = 0.0

    def send(self, item):
        self.item, self.started = item, time.monotonic()
        self.p.stdin.write(json.dumps(item) + "\n")
        self.p.stdin.flush()

    def kill(self):
        self.p.kill()
        self.p.wait()


def items(args) -> list[dict]:
    import coverage_zoo as zoo

    out = [dict(source="hf", task=t, model_type=m, cls=c) for t, m, c in zoo.architectures()]
    try:
        import timm  # noqa: F401
        out += [dict(source="timm", task="image-classification", model_type="timm", cls=n) for n in TIMM_MODELS]
    except ImportError:
        pass
    import recurrent_zoo

    out += [dict(source="torch", task="recurrent/speech", model_type="torch.nn", cls=n) for n in recurrent_zoo.names()]
    if args.only:
        keys = [k for k in args.only.split(",") if k]
        out = [i for i in out if any(k in i["model_type"] or k in i["cls"] or k == "task:" + i["task"]
                                     for k in keys)]
    if args.limit:
        out = out[: args.limit]
    for k, i in enumerate(out):
        i["check"] = args.fallback_check > 0 and k % max(len(out) // args.fallback_check, 1) == 0
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=240, help="seconds per model (trace + measurement)")
    ap.add_argument("--measure-max-params", type=int, default=20_000_000)
    ap.add_argument("--fallback-max-params", type=int, default=0,
                    help="run the fallback on trace failures of models up to this size (0: all; the fallback "
                         "itself refuses models whose real step would not fit in memory)")
    ap.add_argument("--fallback-check", type=int, default=0, metavar="N")
    ap.add_argument("--only", default=None, help="comma-separated substrings of model_type or class name, "
                                                 "or task:NAME for a whole task")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--resume-from", default=None, metavar="JSONL",
                    help="rows of an interrupted run (its coverage.partial.jsonl): kept, and not run again")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of the existing coverage.json that this run does not redo (a partial "
                         "rerun); the result says which rows are from this run")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.measure_max_params, args.timeout, args.fallback_check > 0, args.fallback_max_params)
        return 0
    todo = items(args)
    results: list[dict] = _resumed(args.resume_from)
    done = {_key(r) for r in results}
    todo = [i for i in todo if _key(i) not in done]
    total = len(todo) + len(results)
    workers = [_Worker(args) for _ in range(max(args.jobs, 1))]
    t0 = time.monotonic()
    queue = list(todo)
    hard = args.timeout + 60
    os.makedirs(args.out, exist_ok=True)
    partial = open(os.path.join(args.out, "coverage.partial.jsonl"), "w")
    for w in workers:
        if queue:
            w.send(queue.pop(0))
    while any(w.item for w in workers):
        busy = [w for w in workers if w.item]
        ready, _, _ = select.select([w.p.stdout for w in busy], [], [], 5)
        for w in busy:
            res = None
            if w.p.stdout in ready:
                line = w.p.stdout.readline()
                if line.startswith(RESULT):
                    res = json.loads(line[len(RESULT):])
                elif line == "":   # the worker died
                    res = dict(w.item, status="crashed")
                else:
                    continue
            elif time.monotonic() - w.started > hard:
                res = dict(w.item, status="timeout")
            if res is None:
                continue
            results.append(res)
            partial.write(json.dumps(res) + "\n")
            partial.flush()
            print(f"[{len(results)}/{total} {time.monotonic() - t0:6.0f}s] {res['model_type']:28s} "
                  f"{res['cls']:45s} {res['status']:13s} "
                  f"{format(res['error_pct'], '+.3f') if 'error_pct' in res else '':>7} {res.get('cause', '')}",
                  flush=True)
            if res["status"] in ("crashed", "timeout"):
                w.kill()
                workers[workers.index(w)] = w = _Worker(args)
            w.item = None
            if queue:
                w.send(queue.pop(0))
    for w in workers:
        w.p.stdin.close()
        w.kill()
    partial.close()
    rerun = [_key(r) for r in results]
    if args.merge:
        results, rerun = _merged(os.path.join(args.out, "coverage.json"), results)
    write_results(results, time.monotonic() - t0, args, rerun if args.merge else None)
    return 0


def _key(r: dict) -> tuple:
    return (r["source"], r["task"], r["model_type"], r["cls"])


def _resumed(path: str | None) -> list[dict]:
    if not path:
        return []
    rows = [json.loads(line) for line in open(path) if line.strip()]
    return [r for r in rows if r["status"] not in ("crashed", "timeout")]


def _merged(path: str, results: list[dict]) -> tuple[list[dict], list]:
    """The previous full run's rows, with those of this run in their place (and new ones added), and the
    keys of every row rerun since that full run (earlier merged reruns included)."""
    with open(path) as f:
        prev = json.load(f)
    new = {_key(r): r for r in results}
    rerun = {tuple(k) for k in prev.get("rerun") or []} | set(new)
    kept = [new.pop(_key(r), r) for r in prev["results"]]
    return kept + list(new.values()), sorted(rerun)


def write_results(results, seconds, args, rerun: list | None = None) -> None:
    summary = summarize(results, seconds, args)
    if rerun is not None:
        summary["rows_from_this_run"] = len(rerun)
        summary["rows_from_previous_run"] = len(results) - len(rerun)
    with open(os.path.join(args.out, "coverage.json"), "w") as f:
        json.dump({"summary": summary, "results": results, "rerun": rerun}, f, indent=1)
    with open(os.path.join(args.out, "coverage.md"), "w") as f:
        f.write(render_md(summary, results))
    print(json.dumps(summary, indent=1))


def summarize(results: list[dict], seconds: float, args) -> dict:
    import torch
    import transformers

    buildable = [r for r in results if r["status"] not in ("not-buildable",)]
    # a workload whose real step fails as well is a bad generic batch/config, not a tracing problem
    # (measured directly, or by the fallback's own real step)
    valid = [r for r in buildable if not ((r.get("measure_error") or r.get("real_error"))
                                          and r["status"] in ("error", "trace-failed"))]
    traced = [r for r in valid if r["status"] == "traced"]
    any_est = [r for r in valid if r["status"] in ("traced", "fallback")]
    errs = [abs(r["error_pct"]) for r in valid if "error_pct" in r and r["status"] == "traced"]
    fb_errs = [abs(r["error_pct"]) for r in valid if "error_pct" in r and r["status"] == "fallback"]
    checks = [abs(r["fallback_check_pct"]) for r in results if "fallback_check_pct" in r]
    causes = collections.Counter(r.get("cause", "?") for r in valid if r["status"] not in ("traced",))
    return {
        "transformers": transformers.__version__, "torch": torch.__version__, "python": platform.python_version(),
        "batch_size": BATCH, "seconds": round(seconds),
        "architectures": len(results), "buildable": len(buildable), "valid_workloads": len(valid),
        "not_buildable": len(results) - len(buildable),
        "invalid_workloads": len(buildable) - len(valid),
        "traced": len(traced), "traced_pct": round(100 * len(traced) / max(len(valid), 1), 1),
        "estimated": len(any_est), "estimated_pct": round(100 * len(any_est) / max(len(valid), 1), 1),
        "measured": len(errs),
        "median_abs_error_pct": round(statistics.median(errs), 4) if errs else None,
        "p90_abs_error_pct": round(sorted(errs)[int(0.9 * (len(errs) - 1))], 4) if errs else None,
        "max_abs_error_pct": round(max(errs), 4) if errs else None,
        "over_3pct": sum(e > 3 for e in errs),
        "fallback_measured": len(fb_errs),
        "fallback_max_abs_error_pct": round(max(fb_errs), 3) if fb_errs else None,
        "fallback_check_batch4_max_abs_error_pct": round(max(checks), 3) if checks else None,
        "fallback_check_n": len(checks),
        "failure_causes": dict(causes.most_common()),
    }


def render_md(s: dict, results: list[dict]) -> str:
    lines = [
        "# Coverage benchmark", "",
        f"transformers {s['transformers']}, torch {s['torch']}; batch {s['batch_size']}, fp32 AdamW, "
        f"small configs derived from each config class (benchmarks/coverage_zoo.py); {s['seconds']} s.", "",
        *([f"Partial reruns merged into the previous full run (`--merge`): {s['rows_from_this_run']} rows "
           f"rerun with this code (listed under `rerun` in coverage.json), {s['rows_from_previous_run']} kept "
           "from the full run; the time above is the last rerun's.", ""] if "rows_from_this_run" in s else []),
        "| | count | share |", "|---|---:|---:|",
        f"| architectures (7 task mappings{' + timm' if any(r['source'] == 'timm' for r in results) else ''}"
        f"{' + torch.nn recurrent/speech' if any(r['source'] == 'torch' for r in results) else ''}) "
        f"| {s['architectures']} | |",
        f"| not buildable from a generic small config | {s['not_buildable']} | |",
        f"| buildable, but the generic batch fails for real too | {s['invalid_workloads']} | |",
        f"| **valid workloads** | {s['valid_workloads']} | 100 % |",
        f"| estimated by tracing | {s['traced']} | {s['traced_pct']} % |",
        f"| estimated by tracing or fallback | {s['estimated']} | {s['estimated_pct']} % |", "",
        f"Traced and measured on the CPU: {s['measured']}; |error| median {s['median_abs_error_pct']} %, "
        f"p90 {s['p90_abs_error_pct']} %, max {s['max_abs_error_pct']} %; over 3 %: {s['over_3pct']}.", "",
        f"Fallback estimates measured: {s['fallback_measured']} (max |error| {s['fallback_max_abs_error_pct']} %, "
        "at the measured size). Fallback check (extrapolated from batch 1 and 2 to batch 4 on traceable "
        f"models, n={s['fallback_check_n']}): max |error| {s['fallback_check_batch4_max_abs_error_pct']} %.", "",
        "## Failures by cause (valid workloads not traced)", "",
        "| cause | count |", "|---|---:|",
    ]
    lines += [f"| `{c}` | {n} |" for c, n in s["failure_causes"].items()]
    lines += ["", "## Largest errors (traced, measured)", "", "| architecture | task | error % | notes |",
              "|---|---|---:|---|"]
    worst = sorted((r for r in results if "error_pct" in r and r["status"] == "traced"),
                   key=lambda r: -abs(r["error_pct"]))[:15]
    lines += [f"| {r['cls']} | {r['task']} | {r['error_pct']:+.3f} | {'; '.join(r.get('notes', []))[:160]} |"
              for r in worst]
    lines += ["", "## Every architecture", "", "| model_type | class | task | status | error % | cause |",
              "|---|---|---|---|---:|---|"]
    for r in sorted(results, key=lambda r: (r["task"], r["model_type"], r["cls"])):
        e = f"{r['error_pct']:+.3f}" if "error_pct" in r else ""
        lines.append(f"| {r['model_type']} | {r['cls']} | {r['task']} | {r['status']} | {e} | "
                     f"{(r.get('cause') or r.get('measure_error') or r.get('real_error') or '')[:80]} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
