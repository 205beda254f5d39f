"""`memplan validate MODEL`: run the real training steps on a device, measure them, compare with the estimate."""
from __future__ import annotations

import click

from memplan.cli._options import device_options, precheck, workload_options
from memplan.cli._output import (EXIT_BAD_NEWS, EXIT_OK, debug_option, emit, format_option, quiet_option,
                                 report_written, run_command)


def _check_report(path: str) -> None:
    from memplan.report.validation_text import check_validation_report_path

    check_validation_report_path(path)


@click.command()
@workload_options
@device_options
@click.option("--plan", "plan_path", default=None, type=click.Path(dir_okay=False),
              help="A `memplan plan --format json` result: validate its batch size, accumulation, "
                   "checkpointing and env instead of the options above.")
@click.option("--tolerance", type=click.FloatRange(min=0), default=5.0, show_default=True,
              help="Largest acceptable |error| in percent; exit 1 above it.")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False),
              help="Also write an HTML timeline with the measured peaks drawn over the prediction.")
@quiet_option
@format_option
@debug_option
def command(model, hf_config, task, device, capacity, alloc_conf, plan_path, tolerance, report_path, quiet, fmt,
            debug, **kw):
    """Run --steps real training steps of MODEL (the first is warm-up) on --device (cpu | cuda | npu | a
    catalog name; default: the accelerator present, else cpu) and compare the measured peak memory with
    memplan's estimate. Exit 1 when the error exceeds --tolerance or the run failed (OOM, ACL error)."""

    cfg = run_command(debug, lambda: precheck(kw, model, hf_config, device, capacity, alloc_conf,
                                              report_path=report_path,
                                              report_check=_check_report, plan_path=plan_path, real_run=True))

    def work():
        from memplan import api
        from memplan.report.progress import progress
        from memplan.report.validation_text import write_report

        with progress(2 * api.phase_count(cfg), "tracing, then running", quiet=quiet, fmt=fmt) as bar:
            v, trace = api.validate(model, hf_config=hf_config, task=task, config=cfg, device=device,
                                capacity=capacity, alloc_conf=alloc_conf, plan=plan_path, tolerance=tolerance,
                                return_trace=True, on_phase=lambda *a: bar.update(1))
        if report_path:
            write_report(report_path, v, trace)
            report_written(report_path, quiet)
        return v

    v = run_command(debug, work)
    from memplan.report.validation_text import render_text

    emit(fmt, "validate", v.to_dict(), lambda: render_text(v), EXIT_OK if v.ok else EXIT_BAD_NEWS)
