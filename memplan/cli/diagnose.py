"""`memplan diagnose LOG... [--estimate analyze.json]`: explain OOMs and ACL/CANN/HCCL/CUDA errors in logs."""
from __future__ import annotations

import json

import click

from memplan.cli._output import EXIT_OK, debug_option, emit, format_option, run_command
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
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option("--estimate", "estimate_path", type=click.Path(dir_okay=False), default=None,
              help="An `memplan analyze --format json` result to relate memory failures to the predicted peak.")
@click.option("--all", "show_all", is_flag=True, help="Also list benign incidents (log noise) in the table.")
# Hook: a `--snapshot FILE` option (torch memory snapshot) goes here; its reader's result is passed on as
# diagnose(..., snapshot=...).
@format_option
@debug_option
def command(logs: tuple[str, ...], estimate_path: str | None, show_all: bool, fmt: str, debug: bool) -> None:
    """Explain what went wrong in training logs (`-` reads stdin) and what to change."""

    def work():
        from memplan.diagnose import diagnose

        return diagnose(list(logs), _load_estimate(estimate_path))

    result = run_command(debug, work)
    from memplan.diagnose._render import render_diagnosis
    from memplan.report.envelope import envelope

    emit(fmt, envelope("diagnose", result.to_dict()), lambda: render_diagnosis(result, show_all), EXIT_OK)
