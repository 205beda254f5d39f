"""`memplan shard ...`: per-rank estimates, a sharding plan and a real distributed check.

    memplan shard estimate MODEL --world-size 8 --sharding zero3 --device 910B3
    memplan shard plan --hf-config llama.json --world-size 8 --device 910B3
    memplan shard validate MODEL --world-size 2 --sharding ddp --device cpu

Thin: options -> one memplan.distributed call -> render. Heavy imports stay inside the commands.
"""
from __future__ import annotations

import click

from memplan.cli._options import precheck, workload_options
from memplan.cli._output import (EXIT_BAD_NEWS, EXIT_OK, debug_option, emit, format_option, quiet_option,
                                 run_command)

SHARDING_CHOICES = ("ddp", "zero1", "zero2", "zero3", "fsdp")


def _dist_options(fn):
    fn = click.option("--world-size", type=int, default=2, show_default=True, help="Data-parallel ranks.")(fn)
    fn = click.option("--sharding", type=click.Choice(SHARDING_CHOICES), default="ddp", show_default=True,
                      help="ddp | zero1 (ZeroRedundancyOptimizer) | zero2 / zero3 / fsdp (FSDP2 fully_shard).")(fn)
    return fn


@click.group()
def command() -> None:
    """Data-parallel training: per-rank memory for DDP, ZeRO-1/2/3 and FSDP."""


@command.command("estimate")
@workload_options
@_dist_options
@click.option("--device", default=None, help="Target device (catalog name) or cpu.")
@click.option("--capacity", default=None, help="Usable device memory per rank, e.g. 60GiB.")
@click.option("--method", type=click.Choice(["trace", "model"]), default="trace", show_default=True,
              help="trace: torch's wrapper on a fake process group; model: single-device trace + arithmetic.")
@click.option("--bucket-cap-mb", type=float, default=None, help="DDP bucket_cap_mb (default 25).")
@quiet_option
@format_option
@debug_option
def estimate_cmd(model, hf_config, task, world_size, sharding, device, capacity, method, bucket_cap_mb, quiet,
                 fmt, debug, **kw):
    """Per-rank peak memory of MODEL trained on WORLD_SIZE ranks with SHARDING."""
    cfg = run_command(debug, lambda: precheck(kw, model, hf_config, device, capacity))

    def work():
        from memplan.api import resolve_device
        from memplan.distributed import estimate_per_rank
        from memplan.report.progress import progress

        dev = resolve_device(device, capacity)
        with progress(None, f"tracing {world_size} ranks ({sharding})", quiet=quiet, fmt=fmt):
            return estimate_per_rank(model, cfg, world_size, sharding, dev, hf_config=hf_config,
                                     method=method, bucket_cap_mb=bucket_cap_mb)

    est = run_command(debug, work)
    emit(fmt, est.to_dict(), lambda: render_estimate(est), EXIT_BAD_NEWS if est.fits is False else EXIT_OK)


@command.command("plan")
@workload_options
@click.option("--world-size", type=int, default=8, show_default=True, help="Devices (data-parallel ranks).")
@click.option("--device", default=None, help="Target device (catalog name).")
@click.option("--capacity", default=None, help="Usable memory per device (overrides the catalog).")
@click.option("--global-batch", type=int, default=None, help="Global batch to keep (default: batch x accum x ranks).")
@click.option("--master-weights", is_flag=True, help="Model an fp32 master copy in the optimizer (ZeRO's mixed precision).")
@click.option("--no-retrace", is_flag=True, help="Skip re-tracing the chosen plan on the fake process group.")
@quiet_option
@format_option
@debug_option
def plan_cmd(model, hf_config, task, world_size, device, capacity, global_batch, master_weights, no_retrace,
             quiet, fmt, debug, **kw):
    """The least sharding and micro-batch that fit, with the torchrun command and code to apply it."""
    cfg = run_command(debug, lambda: precheck(kw, model, hf_config, device, capacity, need_budget=True))

    def work():
        from memplan.distributed import choose_sharding
        from memplan.report.progress import progress

        with progress(None, f"searching sharding on {world_size} ranks", quiet=quiet, fmt=fmt):
            return choose_sharding(model, cfg, world_size, capacity, device=device, hf_config=hf_config,
                                   global_batch=global_batch, retrace=not no_retrace, master_weights=master_weights)

    plan = run_command(debug, work)
    emit(fmt, plan.to_dict(), lambda: render_plan(plan), EXIT_OK if plan.fits else EXIT_BAD_NEWS)


@command.command("validate")
@workload_options
@_dist_options
@click.option("--device", type=click.Choice(["cpu", "cuda", "npu"]), default="cpu", show_default=True,
              help="cpu: gloo on this machine; cuda: nccl; npu: hccl.")
@click.option("--tolerance", type=float, default=5.0, show_default=True, help="Allowed error per rank, %.")
@click.option("--timeout", type=float, default=600.0, show_default=True, help="Seconds for the whole job.")
@quiet_option
@format_option
@debug_option
def validate_cmd(model, hf_config, task, world_size, sharding, device, tolerance, timeout, quiet, fmt, debug,
                 **kw):
    """Launch WORLD_SIZE real ranks (torchrun-style, 127.0.0.1) and compare each rank's peak."""
    cfg = run_command(debug, lambda: precheck(kw, model, hf_config))

    def work():
        from memplan.distributed import validate_distributed
        from memplan.report.progress import progress

        with progress(None, f"running {world_size} ranks ({sharding}, {device})", quiet=quiet, fmt=fmt):
            return validate_distributed(model, cfg, world_size, sharding, device, hf_config=hf_config,
                                        task=task, tolerance_pct=tolerance, timeout_s=timeout)

    v = run_command(debug, work)
    emit(fmt, v.to_dict(), lambda: render_validation(v), EXIT_OK if v.ok else EXIT_BAD_NEWS)


# ---- rendering ------------------------------------------------------------------------------------
def render_estimate(est) -> str:
    from tabulate import tabulate

    from memplan.units import fmt_bytes

    rows = [[r["rank"], fmt_bytes(r["peak_allocated_bytes"]), fmt_bytes(r["peak_reserved_bytes"]), r["peak_phase"]]
            for r in est.per_rank]
    lines = [f"{est.workload}: {est.sharding} on {est.world_size} ranks ({est.method}: {est.method_note})",
             tabulate(rows, headers=["rank", "peak allocated", "peak reserved", "phase"]), ""]
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


def render_plan(plan) -> str:
    from tabulate import tabulate

    from memplan.units import fmt_bytes

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
    return "\n".join(lines)


def render_validation(v) -> str:
    from tabulate import tabulate

    from memplan.units import fmt_bytes

    rows = [[r["rank"], fmt_bytes(r["predicted"]["peak_allocated_bytes"]), fmt_bytes(r["measured"]["peak_allocated_bytes"]),
             f"{r['error_pct']:+.2f} %" if r["error_pct"] is not None else "-"] for r in v.ranks]
    lines = [f"{v.workload}: {v.sharding}, {v.world_size} ranks, {v.backend} on {v.device}",
             tabulate(rows, headers=["rank", "predicted", "measured", "error"])]
    for e in v.errors:
        lines.append(f"rank {e['rank']} failed: {e['error']}")
    lines.append(("PASS" if v.ok else "FAIL") + f" (tolerance {v.tolerance_pct} %)")
    return "\n".join(lines)
