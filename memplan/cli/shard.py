"""`memplan shard ...`: per-rank estimates, a sharding plan and a real distributed check.

    memplan shard estimate MODEL --world-size 8 --sharding zero3 --device 910B3
    memplan shard plan --hf-config llama.json --world-size 8 --device 910B3
    memplan shard validate MODEL --world-size 2 --sharding ddp --device cpu

Thin: options -> one memplan.api call (memplan.distributed) -> render (memplan.report.shard_text). Heavy imports stay inside the commands.
"""
from __future__ import annotations

import click

from memplan.cli._options import precheck, workload_options
from memplan.cli._output import (EXIT_BAD_NEWS, EXIT_OK, debug_option, emit, format_option, quiet_option,
                                 run_command)
from memplan.report.shard_text import render_dist_validation, render_rank_estimate, render_sharding_plan
from memplan.workload import SHARDINGS


def _dist_options(fn):
    fn = click.option("--world-size", type=click.IntRange(min=1), default=2, show_default=True,
                      help="Data-parallel ranks.")(fn)
    fn = click.option("--sharding", type=click.Choice(SHARDINGS), default="ddp", show_default=True,
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
@click.option("--bucket-cap-mb", type=click.FloatRange(min=0, min_open=True), default=None,
              help="DDP bucket_cap_mb (default 25).")
@quiet_option
@format_option
@debug_option
def estimate_cmd(model, hf_config, task, world_size, sharding, device, capacity, method, bucket_cap_mb, quiet,
                 fmt, debug, **kw):
    """Per-rank peak memory of MODEL trained on WORLD_SIZE ranks with SHARDING."""
    cfg = run_command(debug, lambda: precheck(kw, model, hf_config, device, capacity, sharding=sharding))

    def work():
        from memplan import api
        from memplan.report.progress import progress

        dev = api.resolve_device(device, capacity)
        with progress(None, f"tracing {world_size} ranks ({sharding})", quiet=quiet, fmt=fmt):
            return api.estimate_per_rank(model, cfg, world_size, sharding, dev, hf_config=hf_config,
                                         method=method, bucket_cap_mb=bucket_cap_mb)

    est = run_command(debug, work)
    emit(fmt, "shard-estimate", est.to_dict(), lambda: render_rank_estimate(est), EXIT_BAD_NEWS if est.fits is False else EXIT_OK)


@command.command("plan")
@workload_options
@click.option("--world-size", type=click.IntRange(min=1), default=8, show_default=True,
              help="Devices (data-parallel ranks).")
@click.option("--device", default=None, help="Target device (catalog name).")
@click.option("--capacity", default=None, help="Usable memory per device (overrides the catalog).")
@click.option("--global-batch", type=click.IntRange(min=1), default=None, help="Global batch to keep (default: batch x accum x ranks).")
@click.option("--master-weights", is_flag=True, help="Model an fp32 master copy in the optimizer (ZeRO's mixed precision).")
@click.option("--no-retrace", is_flag=True, help="Skip re-tracing the chosen plan on the fake process group.")
@quiet_option
@format_option
@debug_option
def plan_cmd(model, hf_config, task, world_size, device, capacity, global_batch, master_weights, no_retrace,
             quiet, fmt, debug, **kw):
    """The least sharding and micro-batch that fit, with the torchrun command and code to apply it."""
    cfg = run_command(debug, lambda: precheck(kw, model, hf_config, device, capacity, need_budget=True,
                                              sharding="choose"))

    def work():
        from memplan import api
        from memplan.report.progress import progress

        with progress(None, f"searching sharding on {world_size} ranks", quiet=quiet, fmt=fmt):
            return api.choose_sharding(model, cfg, world_size, capacity, device=device, hf_config=hf_config,
                                       global_batch=global_batch, retrace=not no_retrace,
                                       master_weights=master_weights)

    plan = run_command(debug, work)
    emit(fmt, "shard-plan", plan.to_dict(), lambda: render_sharding_plan(plan), EXIT_OK if plan.fits else EXIT_BAD_NEWS)


@command.command("validate")
@workload_options
@_dist_options
@click.option("--device", type=click.Choice(["cpu", "cuda", "npu"]), default="cpu", show_default=True,
              help="cpu: gloo on this machine; cuda: nccl; npu: hccl.")
@click.option("--tolerance", type=click.FloatRange(min=0), default=5.0, show_default=True,
              help="Allowed error per rank, %.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True, help="Seconds for the whole job.")
@quiet_option
@format_option
@debug_option
def validate_cmd(model, hf_config, task, world_size, sharding, device, tolerance, timeout, quiet, fmt, debug,
                 **kw):
    """Launch WORLD_SIZE real ranks (torchrun-style, 127.0.0.1) and compare each rank's peak."""
    cfg = run_command(debug, lambda: precheck(kw, model, hf_config, device, sharding=sharding))

    def work():
        from memplan import api
        from memplan.report.progress import progress

        with progress(None, f"running {world_size} ranks ({sharding}, {device})", quiet=quiet, fmt=fmt):
            return api.validate_distributed(model, cfg, world_size, sharding, device, hf_config=hf_config,
                                            task=task, tolerance_pct=tolerance, timeout_s=timeout)

    v = run_command(debug, work)
    emit(fmt, "shard-validate", v.to_dict(), lambda: render_dist_validation(v), EXIT_OK if v.ok else EXIT_BAD_NEWS)


# ---- rendering ------------------------------------------------------------------------------------
