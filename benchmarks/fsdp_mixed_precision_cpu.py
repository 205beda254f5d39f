"""FSDP mixed precision vs autocast: real 2-rank gloo runs against memplan's per-rank estimates, and the
autocast weight-cache finding at the Llama-2-70B shape.

Part 1 (`--part real`): for each fixture x precision mode, FSDP2 `fully_shard` (zero3) with activation
checkpointing on 2 gloo ranks (`memplan.distributed.validate_distributed`, the path of
`memplan shard validate`): each rank's estimate (torch's wrapper traced on the fake process group) vs
its measured peak (CPU allocator, last optimizer step), and the measured forward-phase peaks, which
show what autocast's weight-cast cache holds in a real run. Modes:
- bf16-amp: `torch.autocast(cpu, bf16)` (cache_enabled=True, torch's default) over fp32 FSDP params;
- bf16-amp no-cache: the same with `cache_enabled=False`;
- bf16-mp: `MixedPrecisionPolicy(param_dtype=torch.bfloat16)` (reduce dtype = param dtype), no autocast;
- bf16-mp reduce-fp32: `MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)`.
Part 2 (`--part shape70b`): rank 0 of fixtures/hf/llama-2-70b.json on 64 ranks, zero3, seq 4096,
micro-batch 1, every decoder layer checkpointed, traced (no real run: the shape does not fit this
machine) in three of the modes: the forward temporaries autocast's cache holds, and what each alternative
leaves.

    python benchmarks/fsdp_mixed_precision_cpu.py [--part real|shape70b|all] [--fixtures gpt2] [--modes ...]
Writes benchmarks/results/fsdp_mixed_precision_cpu.{json,md} after each case; a run replaces the rows of
the cases it ran and keeps the others (and the other part's).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIXTURES = {  # name: (model file, hf config, batch, seq, checkpoint glob)
    "gpt2": ("fixtures/models/gpt2.py", None, 2, 64, "transformer.h.*"),
    "llama_small": (None, "fixtures/hf/llama_small.json", 2, 64, "model.layers.*"),
}
MODES = {  # label: TrainConfig edits
    "bf16-amp": {"precision": "bf16-amp"},
    "bf16-amp no-cache": {"precision": "bf16-amp", "autocast_cache": False},
    "bf16-mp": {"precision": "bf16-mp"},
    "bf16-mp reduce-fp32": {"precision": "bf16-mp", "reduce_dtype": "fp32"},
}
OUT = ROOT / "benchmarks/results/fsdp_mixed_precision_cpu"


FSDP1_CASES = (("llama_small", "bf16-amp"), ("llama_small", "bf16-mp reduce-fp32"), ("gpt2", "bf16-mp reduce-fp32"))
"""FSDP1 (`FullyShardedDataParallel(FULL_SHARD, use_orig_params=True)` + `MixedPrecision`) cases."""


def run_real(cases, res, timeout_s=600.0):
    """Each (fixture, mode, sharding) case in turn; its rows replace that case's earlier ones in `res`
    and the results are written after each case."""
    for case in cases:
        rows = _real_case(*case, timeout_s=timeout_s)
        res["real"] = [r for r in res.get("real", []) if (r["fixture"], r["mode"], r.get("sharding")) != case] + rows
        save(res)


def real_cases(names, modes, fsdp1_modes) -> list[tuple[str, str, str]]:
    cases = [(n, m, "zero3") for n in names for m in modes]
    return cases + [(n, m, "fsdp1") for n, m in FSDP1_CASES if n in names and m in fsdp1_modes]


def _real_case(name, label, sharding, timeout_s=600.0):
    from memplan.distributed import validate_distributed
    from memplan.workload import TrainConfig

    rows = []
    model, hf, bs, seq, ckpt = FIXTURES[name]
    cfg = TrainConfig(batch_size=bs, seq_len=seq, checkpoint=(ckpt,), **MODES[label])
    t0 = time.perf_counter()
    v = validate_distributed(str(ROOT / model) if model else None, cfg, 2, sharding, "cpu",
                             hf_config=str(ROOT / hf) if hf else None, timeout_s=timeout_s)
    for r in v.ranks:
        rows.append({"fixture": name, "mode": label, "sharding": sharding, "rank": r["rank"],
                     "batch_size": bs, "seq_len": seq, "checkpoint": ckpt,
                     "predicted_bytes": r["predicted"]["peak_allocated_bytes"],
                     "measured_bytes": r["measured"]["peak_allocated_bytes"], "error_pct": r["error_pct"],
                     "predicted_phase_peaks": r["predicted"]["phase_peaks"],
                     "measured_phase_peaks": r["measured"]["phase_peaks"],
                     "seconds": round(time.perf_counter() - t0, 1)})
    rows += [{"fixture": name, "mode": label, "sharding": sharding, "rank": e["rank"], "error": e["error"]}
             for e in v.errors]
    print(name, label, sharding, [(r["rank"], r["error_pct"]) for r in v.ranks], v.errors[:1], flush=True)
    return rows


def run_shape70b(modes, world=64):
    from memplan.distributed import estimate_per_rank
    from memplan.workload import TrainConfig

    rows = []
    for label in modes:
        cfg = TrainConfig(batch_size=1, seq_len=4096, checkpoint=("model.layers.*",), **MODES[label])
        t0 = time.perf_counter()
        est = estimate_per_rank(None, cfg, world, "zero3", None, hf_config=str(ROOT / "fixtures/hf/llama-2-70b.json"),
                                ranks=(0,))
        r = est.per_rank[0]
        rows.append({"mode": label, "world_size": world, "sharding": "zero3", "peak_allocated_bytes": r["peak_allocated_bytes"],
                     "peak_phase": r["peak_phase"], "breakdown_at_peak": r["breakdown_at_peak"],
                     "phase_peaks": r["phase_peaks"], "num_params": est.model_states["num_params"],
                     "notes": est.notes, "seconds": round(time.perf_counter() - t0, 1)})
        print(label, r["peak_allocated_bytes"], r["peak_phase"], flush=True)
    return rows


def write_md(res, path):
    from memplan.units import fmt_bytes

    L = ["# FSDP mixed precision vs autocast (CPU, gloo)", "",
         f"torch {res.get('torch')}. zero3: FSDP2 `fully_shard` per decoder block + root; fsdp1: FSDP1 "
         "`FullyShardedDataParallel(FULL_SHARD, use_orig_params=True)` with the blocks auto-wrapped and "
         "`MixedPrecision(param_dtype=bf16, reduce_dtype, buffer_dtype=bf16)` for bf16-mp; every block "
         "checkpointed, 2 real gloo ranks. Predicted: memplan's per-rank trace (torch's wrapper on the fake "
         "process group); measured: the CPU allocator over the last optimizer step. Error = (predicted - "
         "measured) / measured.", "",
         "| fixture | sharding | mode | rank | predicted | measured | error | predicted forward peak | measured forward peak |",
         "|---|---|---|---|---|---|---|---|---|"]
    for r in res.get("real", []):
        if "error" in r:
            L.append(f"| {r['fixture']} | {r.get('sharding')} | {r['mode']} | {r['rank']} | failed: {r['error']} | | | | |")
            continue
        fwd = r["measured_phase_peaks"].get("forward")
        pfwd = r["predicted_phase_peaks"].get("forward")
        L.append(f"| {r['fixture']} | {r['sharding']} | {r['mode']} | {r['rank']} | {fmt_bytes(r['predicted_bytes'])} | "
                 f"{fmt_bytes(r['measured_bytes'])} | {r['error_pct']:+.3f} % | {fmt_bytes(pfwd) if pfwd else '-'} | "
                 f"{fmt_bytes(fwd) if fwd else '-'} |")
    errs = [abs(r["error_pct"]) for r in res.get("real", []) if r.get("error_pct") is not None]
    if errs:
        L += ["", f"{sum(e <= 0.5 for e in errs)} of {len(errs)} rank measurements within 0.5 %; "
                  f"max |error| {max(errs):.3f} %."]
    L += _cache_lines(res.get("real", []), fmt_bytes)
    big = res.get("shape70b", [])
    if big:
        L += ["", "## Llama-2-70B shape, 64 ranks, zero3, seq 4096, micro-batch 1, all layers checkpointed (traced, rank 0)", "",
              "| mode | peak | phase | forward peak | forward temporaries at peak | backward peak |", "|---|---|---|---|---|---|"]
        for r in big:
            b = r["breakdown_at_peak"]
            L.append(f"| {r['mode']} | {fmt_bytes(r['peak_allocated_bytes'])} | {r['peak_phase']} | "
                     f"{fmt_bytes(r['phase_peaks'].get('forward', 0))} | "
                     f"{fmt_bytes(b.get('temporaries', 0)) if r['peak_phase'] == 'forward' else '-'} | "
                     f"{fmt_bytes(r['phase_peaks'].get('backward', 0))} |")
        n = big[0]["num_params"]
        L += ["", f"One bf16 copy of all {n:,} parameters is {fmt_bytes(2 * n)}."]
    Path(path).write_text("\n".join(L) + "\n", encoding="utf-8")


def _cache_lines(rows, fmt_bytes) -> list[str]:
    """What autocast's weight cache adds to rank 0's forward peak: bf16-amp minus bf16-amp no-cache."""
    def fwd(fixture, sharding, mode, key):
        for r in rows:
            if (r["fixture"], r.get("sharding"), r["mode"], r["rank"]) == (fixture, sharding, mode, 0) and "error" not in r:
                return r[key].get("forward")
        return None

    out = []
    for fx, sh in sorted({(r["fixture"], r.get("sharding")) for r in rows}):
        m = [fwd(fx, sh, mode, "measured_phase_peaks") for mode in ("bf16-amp", "bf16-amp no-cache")]
        p = [fwd(fx, sh, mode, "predicted_phase_peaks") for mode in ("bf16-amp", "bf16-amp no-cache")]
        if None not in m and None not in p:
            out.append(f"- {fx} ({sh}): autocast's cache adds {fmt_bytes(m[0] - m[1])} to the measured forward peak "
                       f"(traced: {fmt_bytes(p[0] - p[1])}).")
    return ["", "Autocast weight cache, real runs (rank 0, forward phase):", ""] + out if out else []


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("real", "shape70b", "all"), default="all")
    ap.add_argument("--fixtures", default=",".join(FIXTURES))
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated labels of MODES (part real)")
    ap.add_argument("--modes70b", default="bf16-amp,bf16-amp no-cache,bf16-mp reduce-fp32")
    ap.add_argument("--fsdp1-modes", default=",".join(m for _, m in FSDP1_CASES),
                    help="modes of FSDP1_CASES to run (part real)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for each real 2-rank job")
    ap.add_argument("--md-only", action="store_true", help="rewrite the .md from the committed .json")
    a = ap.parse_args(argv)
    if a.md_only:
        write_md(json.loads(OUT.with_suffix(".json").read_text()), OUT.with_suffix(".md"))
        return
    import torch

    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    prev = OUT.with_suffix(".json")
    res = json.loads(prev.read_text()) if prev.exists() else {}
    res.update({"torch": torch.__version__, "world_size_real": 2, "backend": "gloo"})
    if a.part in ("real", "all"):
        fsdp1 = [m.strip() for m in a.fsdp1_modes.split(",") if m.strip()]
        run_real(real_cases(a.fixtures.split(","), modes, fsdp1), res, a.timeout)
    if a.part in ("shape70b", "all"):
        res["shape70b"] = run_shape70b([m.strip() for m in a.modes70b.split(",")])
    save(res)
    print(OUT.with_suffix(".md").read_text())


def save(res):
    OUT.with_suffix(".json").write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
    write_md(res, OUT.with_suffix(".md"))


if __name__ == "__main__":
    main()
