"""`memplan analyze MODEL`: trace one training step on fake tensors and report its peak memory."""
from __future__ import annotations

import click

from memplan.cli._job import job_inputs, job_options
from memplan.cli._options import device_options, distributed_options, precheck, workload_options
from memplan.cli._output import (EXIT_BAD_NEWS, EXIT_OK, debug_option, emit, format_option, quiet_option,
                                 report_written, run_command)


@click.command()
@workload_options
@job_options
@device_options
@distributed_options
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="Module rows to show.")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False),
              help="Also write a report: .html (timeline), .md (Markdown) or .png.")
@click.option("--fallback/--no-fallback", default=True, show_default=True,
              help="When an op cannot be traced on fake tensors, measure small real CPU steps and extrapolate "
                   "(always stated in the report).")
@click.option("--full-trace", is_flag=True,
              help="Trace every layer even when identical layers could be traced once (block-once).")
@quiet_option
@format_option
@debug_option
def command(model, hf_config, task, device, capacity, alloc_conf, world_size, sharding, top, report_path, fallback,
            full_trace, quiet, fmt, debug, **kw):
    """Estimate the peak memory of training MODEL (a model file, or --hf-config) on fake tensors."""
    run_command(debug, lambda: precheck(kw, model, hf_config, device, capacity, alloc_conf,
                                        report_path=report_path, sharding=sharding if world_size else None))
    if kw.get("deepspeed_config") or _config_has_deepspeed(kw):
        return _deepspeed(model, hf_config, task, world_size or 1, fmt, debug, kw)
    if world_size:
        return _per_rank(model, hf_config, task, device, capacity, world_size, sharding, fmt, debug, kw, quiet,
                         full_trace)

    def work():
        from memplan import api

        workload, cfg, job = job_inputs(model, hf_config, task, kw)
        from memplan.report.progress import progress

        with progress(api.phase_count(cfg), "tracing", quiet=quiet, fmt=fmt) as bar:
            a = api.run_analysis(workload, config=cfg, device=device,
                                 capacity=capacity, alloc_conf=alloc_conf,
                                 on_phase=lambda *a: bar.update(1), fallback=fallback,
                                 full_trace=full_trace)
        if report_path and a.trace is None:
            click.echo("memplan: no timeline for a fallback estimate: --report was not written", err=True)
        elif report_path:
            from memplan.report.write import write_report

            write_report(report_path, a.estimate, a.trace, sim=a.sim)
            report_written(report_path, quiet)
        return a.estimate, job

    est, job = run_command(debug, work)
    code = EXIT_BAD_NEWS if est.fits is False else EXIT_OK
    d = est.to_dict()
    if job is not None:
        d["train_config"] = job.mapping()
    emit(fmt, "analyze", d, lambda: _with_mapping(job, _rendered(est, top)), code)


def _rendered(est, top: int) -> str:
    """The table output (its renderer imported only for it: `--format json` does not need it)."""
    from memplan.report.text import render_estimate

    return render_estimate(est, top=top)


def _with_mapping(job, text: str) -> str:
    if job is None:
        return text
    from memplan.report.jobs import render_mapping

    return render_mapping(job) + "\n\n" + text


def _per_rank(model, hf_config, task, device, capacity, world_size, sharding, fmt, debug, kw, quiet, full_trace):
    """`--world-size N`: the per-rank estimate of memplan.distributed, enveloped as `analyze`."""

    def work():
        from memplan import api
        from memplan.report.progress import progress

        dev = api.resolve_device(device, capacity)
        workload, cfg, job = job_inputs(model, hf_config, task, kw)
        sh = sharding
        if job is not None and job.sharding:   # the config's fsdp, unless --sharding was given
            if click.get_current_context().get_parameter_source("sharding") == click.core.ParameterSource.DEFAULT:
                sh = job.sharding
            cfg = job.per_rank_config(cfg, sh)
        with progress(None, f"tracing {world_size} ranks ({sh})", quiet=quiet, fmt=fmt):
            return api.estimate_per_rank(workload, cfg, world_size, sh, dev, full_trace=full_trace)

    est = run_command(debug, work)
    from memplan.report.shard_text import render_rank_estimate

    emit(fmt, "analyze", est.to_dict(), lambda: render_rank_estimate(est),
         EXIT_BAD_NEWS if est.fits is False else EXIT_OK)


def _config_has_deepspeed(kw) -> bool:
    if not kw.get("train_config"):
        return False
    from memplan.configs import load_mapping

    return bool(load_mapping(kw["train_config"]).get("deepspeed"))


def _deepspeed(model, hf_config, task, world_size, fmt, debug, kw):
    """A DeepSpeed config: per-rank device and host memory of its ZeRO stage (a model, stated)."""

    def work():
        from memplan import api
        from memplan.cli._job import deepspeed_of

        workload, cfg, job = job_inputs(model, hf_config, task, kw)
        return api.estimate_deepspeed(workload, cfg, deepspeed_of(job, kw, cfg), world_size), job

    est, job = run_command(debug, work)
    from memplan.report.jobs import render_deepspeed

    d = est.to_dict()
    if job is not None:
        d["train_config"] = job.mapping()
    emit(fmt, "analyze", d, lambda: _with_mapping(job, render_deepspeed(est)), EXIT_OK)
