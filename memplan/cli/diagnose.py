"""`memplan diagnose LOG... [--estimate analyze.json]`: explain OOMs and ACL/CANN/HCCL/CUDA errors in logs."""
from __future__ import annotations

import json
import os

import click

from memplan.cli._output import EXIT_OK, debug_option, emit, format_option, quiet_option, report_written, run_command
from memplan.errors import UserError


def _load_estimate(path: str | None) -> dict | None:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise UserError(f"no such estimate file: {path}") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the estimate {path}: {exc}") from None
    if not isinstance(data, dict) or not any(k in data for k in ("peak_allocated_bytes", "peak_reserved_bytes")):
        raise UserError(f"{path} is not an analyze JSON: expected peak_allocated_bytes / peak_reserved_bytes "
                        "(write it with `memplan analyze ... --format json`)")
    return data


@click.command()
@click.argument("logs", nargs=-1, required=False, metavar="[LOG...]")
@click.option("--estimate", "estimate_path", type=click.Path(dir_okay=False), default=None,
              help="An `memplan analyze --format json` result to relate memory failures to the predicted peak.")
@click.option("--all", "show_all", is_flag=True, help="Also list benign incidents (log noise) in the table.")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), default=None,
              help="A PyTorch memory snapshot (torch.cuda.memory._dump_snapshot, or torch_npu's): the peak, "
                   "what was live at it, fragmentation, the largest blocks.")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False),
              help="With --snapshot: also write its timeline (.html, .md or .png).")
@quiet_option
@format_option
@debug_option
def command(logs: tuple[str, ...], estimate_path: str | None, show_all: bool, snapshot_path: str | None,
            report_path: str | None, quiet: bool, fmt: str, debug: bool) -> None:
    """Explain what went wrong in training logs (`-` reads stdin) and what to change."""
    if snapshot_path is not None:
        return _snapshot(snapshot_path, report_path, logs, fmt, debug, quiet)
    if not logs:
        run_command(debug, lambda: _refuse("give a log file (or - for stdin), or --snapshot snapshot.pickle"))
    if report_path:
        run_command(debug, lambda: _refuse("--report draws a snapshot's timeline: give --snapshot too "
                                           "(a log diagnosis has no timeline)"))
    estimate = run_command(debug, lambda: _check_inputs(logs, estimate_path))

    def work():
        from memplan import api

        result = api.diagnose(list(logs), estimate)
        if result.input_problem:  # empty, binary, or no log line: bad input, not a diagnosis
            raise UserError(result.input_problem)
        return result

    result = run_command(debug, work)
    from memplan.report.diagnosis_text import render_diagnosis

    emit(fmt, "diagnose", result.to_dict(), lambda: render_diagnosis(result, show_all), EXIT_OK)


def _refuse(message: str):
    raise UserError(message)


def _check_inputs(logs: tuple[str, ...], estimate_path: str | None) -> dict | None:
    """Every log file exists (a command-line argument is a path, or - for stdin) and the estimate reads,
    before the diagnosis machinery is imported; returns the estimate."""
    for item in logs:
        if item != "-" and not os.path.exists(item):
            raise UserError(f"no such log file: {item}")
    return _load_estimate(estimate_path)


def _snapshot(path: str, report_path: str | None, logs: tuple[str, ...], fmt: str, debug: bool,
              quiet: bool) -> None:
    def work():
        from memplan import api

        if not os.path.exists(path):
            raise UserError(f"snapshot not found: {path}")
        if report_path:
            from memplan.report.write import check_report_path

            check_report_path(report_path)
        an = api.read_snapshot(path)
        diag = None
        if logs:
            diag = api.diagnose(list(logs))
        if report_path:
            from memplan.report.snapshot_timeline import timeline_from_snapshot
            from memplan.report.write import render_timeline

            render_timeline(timeline_from_snapshot(an), report_path)
            report_written(report_path, quiet)
        return an, diag

    an, diag = run_command(debug, work)
    from memplan.report.diagnosis_text import render_diagnosis
    from memplan.report.snapshot_text import render_snapshot

    payload = {"snapshot": an.to_dict()}
    if diag is not None:
        payload.update(diag.to_dict())

    def human():
        text = render_snapshot(an)
        if diag is not None:
            text += "\n\n" + render_diagnosis(diag, False)
        return text

    emit(fmt, "diagnose", payload, human, EXIT_OK)
