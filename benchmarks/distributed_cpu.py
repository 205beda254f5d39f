"""Distributed CPU benchmark: real 2-rank gloo jobs vs memplan's per-rank estimates, and the planner's
choice for Llama-2-7B on 8 x 64 GB 910B with the ZeRO arithmetic.

Part 1, for each fixture x strategy (DDP, ZeRO-1 via ZeroRedundancyOptimizer, FSDP2 fully_shard):
`memplan.distributed.validate_distributed` estimates every rank with the fake-process-group trace,
launches 2 gloo ranks on 127.0.0.1 (one process each, torchrun-style environment), measures each
rank's peak over the last optimizer step from the CPU allocator, and compares.
Part 2: `choose_sharding` for fixtures/hf/llama-2-7b.json (seq 4096, micro-batch 1, bf16 with an fp32
master copy modelled as the ZeRO paper does) on 8 x 910B, and the traced model states against the
paper's formulas.

    python benchmarks/distributed_cpu.py [--fixtures mlp,bert_classifier,gpt2] [--skip-plan]
Writes benchmarks/results/distributed_cpu.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIXTURES = {  # name: (batch size, seq len)
    "mlp": (8, None), "bert_classifier": (2, 64), "gpt2": (2, 64), "llama_gqa": (2, 64),
}
STRATEGIES = ("ddp", "zero1", "fsdp")


def run_validations(names, strategies, repeats):
    from memplan.distributed import validate_distributed
    from memplan.workload import TrainConfig

    rows = []
    for name in names:
        bs, seq = FIXTURES[name]
        for sh in strategies:
            for rep in range(repeats):
                t0 = time.perf_counter()
                v = validate_distributed(str(ROOT / "fixtures/models" / f"{name}.py"),
                                         TrainConfig(batch_size=bs, seq_len=seq), 2, sh, "cpu")
                for r in v.ranks:
                    rows.append({"fixture": name, "sharding": sh, "repeat": rep, "rank": r["rank"],
                                 "batch_size": bs, "seq_len": seq,
                                 "predicted_bytes": r["predicted"]["peak_allocated_bytes"],
                                 "measured_bytes": r["measured"]["peak_allocated_bytes"],
                                 "error_pct": r["error_pct"], "predicted_phase": r["predicted"]["peak_phase"],
                                 "measured_phase": r["measured"]["peak_phase"],
                                 "predicted_phase_peaks": r["predicted"]["phase_peaks"],
                                 "measured_phase_peaks": r["measured"]["phase_peaks"],
                                 "seconds": round(time.perf_counter() - t0, 1)})
                for e in v.errors:
                    rows.append({"fixture": name, "sharding": sh, "repeat": rep, "rank": e["rank"],
                                 "error": e["error"]})
                print(name, sh, rep, [(r["rank"], r["error_pct"]) for r in v.ranks], v.errors[:1], flush=True)
    return rows


def run_plan():
    from memplan.distributed import choose_sharding
    from memplan.workload import TrainConfig

    t0 = time.perf_counter()
    cfg = TrainConfig(batch_size=1, seq_len=4096, precision="bf16")
    plan = choose_sharding(None, cfg, 8, None, device="910B3", hf_config=str(ROOT / "fixtures/hf/llama-2-7b.json"),
                           master_weights=True, retrace=False)
    d = plan.to_dict()
    d["seconds"] = round(time.perf_counter() - t0, 1)
    return d


def write_md(res, path):
    from memplan.units import fmt_bytes

    L = ["# Distributed CPU benchmark (gloo, 2 ranks)", "",
         "Each rank's measured peak (CPU allocator, last optimizer step) vs memplan's per-rank estimate "
         "(torch's own wrapper traced on fake tensors with the fake process group). Error = (predicted - measured) / measured.", "",
         "| fixture | sharding | rank | repeat | predicted | measured | error |", "|---|---|---|---|---|---|---|"]
    for r in res["validations"]:
        if "error" in r:
            L.append(f"| {r['fixture']} | {r['sharding']} | {r['rank']} | {r['repeat']} | failed: {r['error']} | | |")
            continue
        L.append(f"| {r['fixture']} | {r['sharding']} | {r['rank']} | {r['repeat']} | {fmt_bytes(r['predicted_bytes'])} | "
                 f"{fmt_bytes(r['measured_bytes'])} | {r['error_pct']:+.2f} % |")
    errs = [abs(r["error_pct"]) for r in res["validations"] if r.get("error_pct") is not None]
    if errs:
        within = sum(e <= 5 for e in errs)
        L += ["", f"{within} of {len(errs)} rank measurements within 5 %; max |error| {max(errs):.2f} %."]
    p = res.get("plan")
    if p:
        L += ["", "## Planner: Llama-2-7B, seq 4096, micro-batch 1, bf16 + fp32 master (ZeRO mixed precision), 8 x 910B", "",
              f"capacity per device {fmt_bytes(p['capacity_bytes'])}; chosen: **{p['sharding']}**, micro-batch "
              f"{p['batch_size']} x {p['grad_accum_steps']} accumulation.", "",
              "| sharding | ZeRO formula | paper model states/rank | memplan model states/rank | peak allocated/rank | per device (+HCCL, runtime) |",
              "|---|---|---|---|---|---|"]
        for a in p["arithmetic"]:
            L.append(f"| {a['sharding']} | {a['zero_paper_formula']}, K=12, Nd=8 | {fmt_bytes(a['zero_paper_bytes_per_rank'])} | "
                     f"{fmt_bytes(a['model_states_bytes_per_rank'])} | {fmt_bytes(a['peak_allocated_bytes'])} | "
                     f"{fmt_bytes(a['device_total_bytes'])} |")
        L += ["", "Candidates tried:", "", "| sharding | micro-batch | method | per device | fits |", "|---|---|---|---|---|"]
        for c in p["candidates"]:
            L.append(f"| {c['sharding']} | {c['batch_size']} | {c['method']} | {fmt_bytes(c['device_total_bytes'])} | {c['fits']} |")
        if p.get("torchrun"):
            L += ["", "```", p["torchrun"], *p["code"], "```"]
    Path(path).write_text("\n".join(L) + "\n", encoding="utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", default="mlp,bert_classifier,gpt2")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--skip-plan", action="store_true")
    ap.add_argument("--skip-validate", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/distributed_cpu"))
    a = ap.parse_args(argv)
    import torch

    res = {"torch": torch.__version__, "world_size": 2, "backend": "gloo"}
    if not a.skip_validate:
        res["validations"] = run_validations(a.fixtures.split(","), a.strategies.split(","), a.repeats)
    if not a.skip_plan:
        res["plan"] = run_plan()
    Path(a.out + ".json").write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
    write_md({"validations": res.get("validations", []), "plan": res.get("plan")}, a.out + ".md")
    print(Path(a.out + ".md").read_text())


if __name__ == "__main__":
    main()
