"""`memplan plan MODEL --device NAME|--capacity SIZE`: what to change so the training job fits."""
from __future__ import annotations

import click

from memplan.cli._job import job_inputs, job_options
from memplan.cli._options import device_options, precheck, workload_options
from memplan.cli._output import EXIT_BAD_NEWS, EXIT_OK, debug_option, emit, quiet_option, report_written, run_command


def _check_report(path: str) -> None:
    from memplan.report.plan_text import check_plan_report_path

    check_plan_report_path(path)


@click.command()
@workload_options
@job_options
@device_options
@click.option("--target-global-batch", type=click.IntRange(min=1), default=None,
              help="Global batch to reach with accumulation (default: -b x --grad-accum x --dp-size, kept).")
@click.option("--maximize-batch", is_flag=True,
              help="Find the largest micro-batch that fits instead of keeping the global batch.")
@click.option("--dp-size", type=click.IntRange(min=1), default=1, show_default=True, help="Data-parallel ranks.")
@click.option("--margin", type=click.FloatRange(0, 100, max_open=True), default=5.0, show_default=True,
              help="Percent of capacity kept free.")
@click.option("--seq-len-search", is_flag=True, help="Find the longest --seq-len at the given batch instead.")
@click.option("--same-math-only", is_flag=True, help="Never change precision or optimizer.")
@click.option("--thorough/--fast", default=None, help="Re-trace every alternative (default: when a trace is quick).")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False), help="Also write .md or .html.")
@quiet_option
@click.option("--format", "fmt", type=click.Choice(["table", "json", "llamafactory", "trainer-args"]), default="table",
              show_default=True, help="Output format; llamafactory / trainer-args: the plan as those config keys.")
@debug_option
def command(model, hf_config, task, device, capacity, alloc_conf, target_global_batch, maximize_batch, dp_size,
            margin, seq_len_search, same_math_only, thorough, report_path, quiet, fmt, debug, **kw):
    """Recommend batch size, accumulation, checkpointing and allocator/optimizer settings for MODEL.

    The global batch you train with (-b x --grad-accum x --dp-size, or --target-global-batch) is kept:
    the plan splits it into the largest micro-batch that fits and accumulation steps. Precision or
    optimizer changes are planned only when nothing with the same math fits (--same-math-only: never)."""
    def check():
        if maximize_batch and target_global_batch:
            from memplan.errors import UserError

            raise UserError("--maximize-batch lets the global batch grow: it excludes --target-global-batch")
        precheck(kw, model, hf_config, device, capacity, alloc_conf, need_budget=True,
                 report_path=report_path, report_check=_check_report)

    run_command(debug, check)

    def work():
        from memplan import api
        from memplan.report.progress import progress

        workload, cfg, _job = job_inputs(model, hf_config, task, kw)
        with progress(None, "tracing", quiet=quiet, fmt=fmt) as bar:
            p = api.plan(workload, config=cfg, device=device,
                     capacity=capacity, alloc_conf=alloc_conf, margin=margin / 100.0,
                     target_global_batch=target_global_batch, dp_size=dp_size, seq_len_search=seq_len_search,
                     same_math_only=same_math_only, thorough=thorough, maximize_batch=maximize_batch,
                     on_trace=lambda label: bar.update(1, f"tracing {label}"))
        if report_path:
            from memplan.report.plan_text import write_plan_report

            write_plan_report(report_path, p)
            report_written(report_path, quiet)
        return p

    p = run_command(debug, work)
    from memplan.report.plan_text import render_plan

    code = EXIT_OK if p.fits else EXIT_BAD_NEWS
    if fmt in ("llamafactory", "trainer-args"):
        from memplan.configs.writer import plan_keys, render

        keys, notes = plan_keys(p.config, p.batch_size, p.grad_accum_steps, p.checkpoint, fmt)
        if fmt == "trainer-args":
            for line in notes + [f"export {k}={v}" for k, v in p.env.items()]:
                click.echo(f"memplan: {line}", err=True)
        emit("table", "plan", {}, lambda: render(keys, notes, p.env, fmt), code)
    emit(fmt, "plan", p.to_dict(), lambda: render_plan(p), code)
