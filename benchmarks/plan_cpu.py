"""Benchmark of `memplan plan` on the CPU: are its answers true when run for real, and is it quick?

1. Batch size (>= 4 fixtures): a capacity budget per fixture; the plan's recommended micro-batch is run
   for real (`measure_cpu`: PyTorch's CPU allocator events) and must stay within the budget (capacity less
   the 5 % margin); it must be >= 90 % of the true largest batch, found by measuring every batch size
   1, 2, 3, ... for real until one exceeds the same budget (memory grows monotonically with batch).
2. Checkpointing: a budget where micro-batch 1 without checkpointing does not fit; the chosen modules,
   run for real, fit, and cost no more recompute than checkpointing every block (FLOPs from
   FlopCounterMode, and measured wall time of a real training step on this CPU).
3. Speed: `memplan plan` on fixtures/hf/llama-2-7b.json for a 910B (64 GB), seq 4096, bf16-amp, timed
   against one `memplan analyze` of the same configuration (both as fresh CLI processes).

Writes benchmarks/results/plan_cpu.json and .md. Run: .venv/bin/python benchmarks/plan_cpu.py [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from memplan import api  # noqa: E402
from memplan.plan import plan  # noqa: E402
from memplan.plan.evaluate import Evaluator  # noqa: E402
from memplan.plan.checkpoint import plan_checkpointing  # noqa: E402
from memplan.step import run  # noqa: E402
from memplan.units import fmt_bytes  # noqa: E402
from memplan.measure import measure_cpu  # noqa: E402
from memplan.workload import TrainConfig  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "benchmarks", "results")
MARGIN = 0.05

# (fixture, seq_len or None, target largest batch used to size the capacity)
BATCH_CASES = [
    ("mlp", None, 12),
    ("cnn_resnet", None, 10),
    ("bert_classifier", 64, 10),
    ("frozen_backbone", 64, 10),
    ("custom_step", None, 12),
]


def _measure(w, cfg):
    return measure_cpu(w, cfg).peak_allocated_bytes


def batch_case(name: str, seq: int | None, target: int) -> dict:
    w = api.load_workload(os.path.join(ROOT, "fixtures", "models", f"{name}.py"))
    cfg = TrainConfig(batch_size=1, seq_len=seq)
    # size the capacity from two traces so that about `target` samples fit (the plan does not see this)
    e1 = api.analyze(w, config=cfg)
    e2 = api.analyze(w, config=cfg.with_(batch_size=2))
    slope = max(e2.peak_allocated_bytes - e1.peak_allocated_bytes, 1)
    capacity = int((e1.peak_allocated_bytes + (target - 0.5) * slope) / (1 - MARGIN))
    budget = int(capacity * (1 - MARGIN))
    t0 = time.perf_counter()
    p = plan(w, config=cfg, capacity=capacity, margin=MARGIN, maximize_batch=True)  # the largest micro-batch
    plan_s = time.perf_counter() - t0
    rec = p.batch_size
    rec_measured = _measure(w, cfg.with_(batch_size=rec)) if rec else None
    # exhaustive real search: every batch size until one exceeds the budget
    measured: dict[int, int] = {}
    b = 1
    t0 = time.perf_counter()
    while True:
        measured[b] = _measure(w, cfg.with_(batch_size=b))
        if measured[b] > budget or b > 4 * target:
            break
        b += 1
    search_s = time.perf_counter() - t0
    true_best = max((x for x, m in measured.items() if m <= budget), default=0)
    ratio = (rec / true_best) if (rec and true_best) else None
    return {
        "fixture": name, "seq_len": seq, "capacity_bytes": capacity, "budget_bytes": budget,
        "recommended_batch": rec, "recommended_measured_bytes": rec_measured,
        "recommended_predicted_bytes": p.predicted.device_total_bytes if p.predicted else None,
        "under_budget": rec_measured is not None and rec_measured <= budget,
        "true_largest_batch": true_best, "ratio_to_true": ratio,
        "ok": bool(rec_measured is not None and rec_measured <= budget and ratio is not None and ratio >= 0.9),
        "plan_traces": p.n_traces, "plan_seconds": round(plan_s, 2),
        "batch_probes": [x for x, _t, _ok in p.batch_search.probes] if p.batch_search else [],
        "affine": p.batch_search.affine if p.batch_search else None,
        "real_search_measurements": len(measured), "real_search_seconds": round(search_s, 2),
        "measured_by_batch": measured,
    }


def _step_seconds(w, cfg, repeats: int = 2) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        run(w, cfg)
        best = min(best, time.perf_counter() - t0)
    return best / cfg.steps


def checkpoint_case(name: str, batch: int, seq: int | None, frac: float) -> dict:
    """Budget = `frac` of the peak without checkpointing: activations must go, the optimizer peak stays."""
    w = api.load_workload(os.path.join(ROOT, "fixtures", "models", f"{name}.py"))
    cfg = TrainConfig(batch_size=batch, seq_len=seq)
    none = api.analyze(w, config=cfg)
    capacity = int(frac * none.peak_allocated_bytes / (1 - MARGIN))
    budget = int(capacity * (1 - MARGIN))
    dev = api.resolve_device(None, capacity)
    ev = Evaluator(w, dev, budget)
    t0 = time.perf_counter()
    cp = plan_checkpointing(ev, cfg, verify_alternatives=True)
    choose_s = time.perf_counter() - t0
    rows = []
    for s in cp.strategies:
        c = cfg.with_(checkpoint=s.modules)
        m = _measure(w, c)
        rows.append({**s.to_dict(), "measured_bytes": m, "measured_fits": m <= budget,
                     "step_seconds": round(_step_seconds(w, c), 4)})
    by = {r["name"]: r for r in rows}
    ch, every, nn = by.get("chosen"), by.get("every block"), by["none"]
    ok = bool(ch and not nn["measured_fits"] and ch["measured_fits"]
              and (every is None or ch["recompute_flops"] <= every["recompute_flops"]))
    return {"fixture": name, "batch": batch, "seq_len": seq, "capacity_bytes": capacity, "budget_bytes": budget,
            "chosen": list(cp.chosen), "strategies": rows, "choose_seconds": round(choose_s, 2),
            "chosen_vs_every_block_time": (round(ch["step_seconds"] / every["step_seconds"], 3)
                                           if ch and every else None),
            "ok": ok}


def speed_case() -> dict:
    args = ["--hf-config", os.path.join(ROOT, "fixtures/hf/llama-2-7b.json"), "--device", "910B3",
            "--seq-len", "4096", "--precision", "bf16-amp"]
    env = dict(os.environ, TRANSFORMERS_VERBOSITY="error")

    def timed(cmd):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "memplan", *cmd], capture_output=True, text=True, env=env, cwd=ROOT)
        return time.perf_counter() - t0, r

    ta, ra = timed(["analyze", *args])
    tp, rp = timed(["plan", *args, "--maximize-batch", "-q", "--format", "json"])
    d = json.loads(rp.stdout) if rp.stdout.strip().startswith("{") else {}
    return {"analyze_seconds": round(ta, 2), "analyze_exit": ra.returncode, "plan_seconds": round(tp, 2),
            "plan_exit": rp.returncode, "ratio": round(tp / ta, 2), "ok": tp / ta <= 4.0,
            "plan_fits": d.get("fits"), "plan_traces": d.get("n_traces"), "plan_batch_size": d.get("batch_size"),
            "plan_checkpoint_modules": len(d.get("checkpoint") or []), "plan_env": d.get("env"),
            "plan_config": d.get("config"),
            "plan_predicted_total_bytes": (d.get("predicted") or {}).get("device_total_bytes"),
            "if_nothing_fits": d.get("if_nothing_fits"),
            "changes": [(c["title"], c["applied"], c["method"], c["predicted_total_bytes"]) for c in d.get("changes", [])]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="2 batch fixtures, no speed case")
    ap.add_argument("--only", choices=["batch", "checkpoint", "speed"], default=None)
    a = ap.parse_args()
    torch.manual_seed(0)
    res = {"machine": {"python": platform.python_version(), "torch": torch.__version__,
                       "cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()},
           "margin": MARGIN}
    if a.only in (None, "batch"):
        res["batch"] = []
        for case in BATCH_CASES[:2] if a.quick else BATCH_CASES:
            r = batch_case(*case)
            print(f"batch {r['fixture']}: recommended {r['recommended_batch']} (measured "
                  f"{fmt_bytes(r['recommended_measured_bytes'])} <= {fmt_bytes(r['budget_bytes'])}: {r['under_budget']}), "
                  f"true {r['true_largest_batch']}, ratio {r['ratio_to_true']}, {r['plan_traces']} traces "
                  f"{r['plan_seconds']} s", flush=True)
            res["batch"].append(r)
    if a.only in (None, "checkpoint"):
        res["checkpoint"] = [checkpoint_case("llama_gqa", 4, 256, 0.8)]
        for r in res["checkpoint"]:
            print(f"checkpoint {r['fixture']}: ok={r['ok']} chosen={r['chosen']}", flush=True)
            for s in r["strategies"]:
                print(f"   {s['name']:16s} modules {s['n_modules']:2d} predicted {fmt_bytes(s['predicted_total_bytes'])}"
                      f" measured {fmt_bytes(s['measured_bytes'])} fits {s['measured_fits']} recompute "
                      f"{s['recompute_pct']} % step {s['step_seconds']} s", flush=True)
    if a.only in (None, "speed") and not a.quick:
        res["speed"] = speed_case()
        print(f"speed: analyze {res['speed']['analyze_seconds']} s, plan {res['speed']['plan_seconds']} s, "
              f"ratio {res['speed']['ratio']}", flush=True)
    res["machine"]["load_avg_at_end"] = os.getloadavg()
    os.makedirs(OUT, exist_ok=True)
    name = "plan_cpu" if not a.quick else "plan_cpu_quick"
    path = os.path.join(OUT, name + ".json")
    if a.only is not None and os.path.exists(path):      # update one section of the committed results
        with open(path) as f:
            old = json.load(f)
        old.update({k: v for k, v in res.items() if k != "machine"})
        old.setdefault("machine_by_section", {})[a.only] = res["machine"]
        res = old
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(res, f, indent=2, default=str)
    with open(os.path.join(OUT, name + ".md"), "w") as f:
        f.write(_markdown(res))


def _markdown(res: dict) -> str:
    out = ["# memplan plan on CPU", "",
           f"torch {res['machine']['torch']}, {res['machine']['cpus']} CPUs (shared; load average "
           f"{res['machine']['load_avg_at_start'][0]:.1f} at start), margin {100 * res['margin']:g} %.", ""]
    if "batch" in res:
        out += ["## Largest micro-batch vs. an exhaustive real search", "",
                "| fixture | budget | recommended | measured at recommended | true largest (real) | ratio | traces | plan s | real search s | ok |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for r in res["batch"]:
            out.append(f"| {r['fixture']} | {fmt_bytes(r['budget_bytes'])} | {r['recommended_batch']} | "
                       f"{fmt_bytes(r['recommended_measured_bytes'])} | {r['true_largest_batch']} | "
                       f"{r['ratio_to_true'] and round(r['ratio_to_true'], 3)} | {r['plan_traces']} | {r['plan_seconds']} | "
                       f"{r['real_search_seconds']} | {'yes' if r['ok'] else 'NO'} |")
        out.append("")
    if "checkpoint" in res:
        for r in res["checkpoint"]:
            out += [f"## Checkpointing: {r['fixture']} batch {r['batch']} seq {r['seq_len']}, budget "
                    f"{fmt_bytes(r['budget_bytes'])}", "",
                    f"chosen: {', '.join(r['chosen'])}", "",
                    "| strategy | modules | predicted | measured | fits (real) | recompute FLOPs % | step s (real) |",
                    "|---|---|---|---|---|---|---|"]
            for s in r["strategies"]:
                out.append(f"| {s['name']} | {s['n_modules']} | {fmt_bytes(s['predicted_total_bytes'])} ({s['method']}) | "
                           f"{fmt_bytes(s['measured_bytes'])} | {s['measured_fits']} | {s['recompute_pct']} | {s['step_seconds']} |")
            out += ["", f"ok (chosen fits for real where none does not, recompute FLOPs <= every block): {r['ok']}", ""]
    if "speed" in res:
        s = res["speed"]
        out += ["## Speed: Llama-2-7B, 910B (64 GB), seq 4096, bf16-amp", "",
                f"`memplan analyze`: {s['analyze_seconds']} s; `memplan plan`: {s['plan_seconds']} s "
                f"({s['plan_traces']} traces); ratio {s['ratio']} (limit 4): {'ok' if s['ok'] else 'OVER'}", "",
                f"plan: fits={s['plan_fits']}, batch {s['plan_batch_size']}, {s['plan_checkpoint_modules']} modules "
                f"checkpointed, env {s['plan_env']}, predicted {fmt_bytes(s['plan_predicted_total_bytes'])}", ""]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
