"""`memplan analyze MODEL`: trace one training step on fake tensors and report its peak memory."""
from __future__ import annotations

import click

from memplan.cli._options import device_options, distributed_options, train_config, workload_options
from memplan.cli._output import EXIT_BAD_NEWS, EXIT_OK, debug_option, emit, format_option, run_command


@click.command()
@workload_options
@device_options
@distributed_options
@click.option("--top", type=int, default=10, show_default=True, help="Module rows to show.")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False),
              help="Also write a report: .html (timeline), .md (Markdown) or .png.")
@click.option("--fallback/--no-fallback", default=True, show_default=True,
              help="When an op cannot be traced on fake tensors, measure small real CPU steps and extrapolate "
                   "(always stated in the report).")
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
@format_option
@debug_option
def command(model, hf_config, task, device, capacity, alloc_conf, world_size, sharding, top, report_path, fallback,
            quiet, fmt, debug, **kw):
    """Estimate the peak memory of training MODEL (a model file, or --hf-config) on fake tensors."""
    if world_size:
        return _per_rank(model, hf_config, device, capacity, world_size, sharding, fmt, debug, kw)

    def work():
        from memplan import api

        cfg = train_config(kw)
        if report_path:
            from memplan.report.write import check_report_path

            check_report_path(report_path)
        from memplan.report.progress import progress

        with progress(api.phase_count(cfg), "tracing", quiet=quiet, fmt=fmt) as bar:
            a = api.run_analysis(model, hf_config=hf_config, task=task, config=cfg, device=device,
                                 capacity=capacity, alloc_conf=alloc_conf,
                                 on_phase=lambda *a: bar.update(1), fallback=fallback)
        if report_path and a.trace is None:
            click.echo("memplan: no timeline for a fallback estimate: --report was not written", err=True)
        elif report_path:
            from memplan.report.write import write_report

            write_report(report_path, a.estimate, a.trace, sim=a.sim)
        return a.estimate

    est = run_command(debug, work)
    from memplan.report.text import render_estimate

    code = EXIT_BAD_NEWS if est.fits is False else EXIT_OK
    emit(fmt, "analyze", est.to_dict(), lambda: render_estimate(est, top=top), code)


def _per_rank(model, hf_config, device, capacity, world_size, sharding, fmt, debug, kw):
    """`--world-size N`: the per-rank estimate of memplan.distributed, enveloped as `analyze`."""

    def work():
        from memplan import api

        dev = api.resolve_device(device, capacity)
        return api.estimate_per_rank(model, train_config(kw), world_size, sharding, dev, hf_config=hf_config)

    est = run_command(debug, work)
    from memplan.report.shard_text import render_rank_estimate

    emit(fmt, "analyze", est.to_dict(), lambda: render_rank_estimate(est),
         EXIT_BAD_NEWS if est.fits is False else EXIT_OK)
