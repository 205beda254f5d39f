"""All printing and exiting of the CLI goes through here.

`run_command(debug, fn)` calls the library, turns `UserError` into one line on stderr and exit code 2
(the traceback only with --debug), and returns the library's result.
"""
from __future__ import annotations

import json
import sys
import traceback
from typing import Any, Callable

import click

from memplan.errors import UserError
from memplan.report.envelope import envelope

EXIT_OK, EXIT_BAD_NEWS, EXIT_BAD_INPUT = 0, 1, 2


def fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    click.echo(f"memplan: error: {message}", err=True)
    sys.exit(code)


def run_command(debug: bool, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except UserError as exc:
        if debug:
            traceback.print_exc()
        fail(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    except KeyboardInterrupt:
        fail("interrupted", 130)


def emit(fmt: str, command: str, payload: dict, human: Callable[[], str], exit_code: int = EXIT_OK) -> None:
    """Print the JSON payload (fmt == 'json') in the versioned envelope, or the human rendering, then
    exit with `exit_code`. This is the one place the JSON envelope is applied."""
    if fmt == "json":
        click.echo(json.dumps(envelope(command, payload), indent=2, default=str))
    else:
        click.echo(human())
    sys.exit(exit_code)


debug_option = click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
format_option = click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
    help="Output format.",
)
