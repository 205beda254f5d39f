"""Text renderings of memplan.distributed results (`memplan shard ...`, `analyze --world-size`)."""
from __future__ import annotations
from memplan.report.text import trace_mode_line
from memplan.units import fmt_bytes


def render_rank_estimate(est) -> str:
    from tabulate import tabulate


    rows = [[r["rank"], fmt_bytes(r["peak_allocated_bytes"]), fmt_bytes(r["peak_reserved_bytes"]), r["peak_phase"]]
            for r in est.per_rank]
    lines = [f"{est.workload}: {est.sharding} on {est.world_size} ranks ({est.method}: {est.method_note})"]
    if est.trace_mode:
        lines.append(trace_mode_line(est.trace_mode, est.trace_mode_reason))
    if est.strategy_info.get("mp_policy"):
        lines.append(f"mixed precision: {est.strategy_info['mp_policy']}")
    lines += [tabulate(rows, headers=["rank", "peak allocated", "peak reserved", "phase"]), ""]
    bd = est.per_rank[0]["breakdown_at_peak"]
    lines.append(tabulate([[k, fmt_bytes(v)] for k, v in bd.items() if v], headers=["rank 0 at peak", "bytes"]))
    lines.append(f"communication buffers (outside the allocator): {fmt_bytes(est.comm_buffer_bytes)} — "
                 f"{est.comm_buffer_note}")
    ms = est.model_states
    lines.append(f"ZeRO paper model states per rank ({ms['zero_paper_formula']}): "
                 f"{fmt_bytes(ms['zero_paper_bytes_per_rank'])} for Ψ = {ms['num_params']:,}")
    if est.capacity_bytes is not None:
        verdict = "fits" if est.fits else "does NOT fit"
        lines.append(f"per device: {fmt_bytes(est.device_total_bytes)} of {fmt_bytes(est.capacity_bytes)} — {verdict}")
    lines += [f"note: {n}" for n in est.notes]
    return "\n".join(lines)


def render_sharding_plan(plan) -> str:
    from tabulate import tabulate


    lines = []
    if plan.fits:
        lines.append(f"{plan.workload}: {plan.sharding} on {plan.world_size} ranks, micro-batch {plan.batch_size} "
                     f"x {plan.grad_accum_steps} accumulation (global batch {plan.global_batch})")
    else:
        lines.append(f"{plan.workload}: nothing fits {fmt_bytes(plan.capacity_bytes)} per device on "
                     f"{plan.world_size} ranks")
    rows = [[c["sharding"], c["batch_size"], c["method"], fmt_bytes(c["device_total_bytes"]),
             "yes" if c["fits"] else "no"] for c in plan.candidates]
    lines += ["", tabulate(rows, headers=["sharding", "micro-batch", "method", "per device", "fits"]), ""]
    ar = [[a["sharding"], a["zero_paper_formula"], fmt_bytes(a["zero_paper_bytes_per_rank"]),
           fmt_bytes(a["model_states_bytes_per_rank"]), fmt_bytes(a["peak_allocated_bytes"])] for a in plan.arithmetic]
    lines.append(tabulate(ar, headers=["sharding", "ZeRO formula (K=12)", "paper", "model states (traced split)",
                                       "peak allocated"]))
    if plan.fits:
        lines += ["", "launch:", f"  {plan.torchrun}", "code:"] + [f"  {c}" for c in plan.code]
        lines += [f"env: {k}={v}" for k, v in plan.env.items()]
    lines += [f"note: {n}" for n in plan.notes]
    if plan.precision_changes:
        lines += ["", "instead of autocast over FSDP (re-traced on the fake process group):"]
        for ch in plan.precision_changes:
            verdict = "" if ch["fits"] is None else (", fits" if ch["fits"] else ", does not fit")
            lines.append(f"  {ch['title']}: {fmt_bytes(ch['predicted_total_bytes'])} per device "
                         f"(saves {fmt_bytes(ch['saving_bytes'])}{verdict})")
            lines.append(f"    {ch['code']}")
    return "\n".join(lines)


def render_dist_validation(v) -> str:
    from tabulate import tabulate


    rows = [[r["rank"], fmt_bytes(r["predicted"]["peak_allocated_bytes"]), fmt_bytes(r["measured"]["peak_allocated_bytes"]),
             f"{r['error_pct']:+.2f} %" if r["error_pct"] is not None else "-"] for r in v.ranks]
    lines = [f"{v.workload}: {v.sharding}, {v.world_size} ranks, {v.backend} on {v.device}",
             tabulate(rows, headers=["rank", "predicted", "measured", "error"])]
    for e in v.errors:
        lines.append(f"rank {e['rank']} failed: {e['error']}")
    lines.append(("PASS" if v.ok else "FAIL") + f" (tolerance {v.tolerance_pct} %)")
    return "\n".join(lines)
