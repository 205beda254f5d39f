"""All printing and exiting of the CLI goes through here.

`run_command(debug, fn)` calls the library, turns `UserError` into one line on stderr and exit code 2
(the traceback only with --debug), and returns the library's result.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from typing import Any, Callable, Iterator

import click

from memplan.errors import UserError
from memplan.report.envelope import envelope

EXIT_OK, EXIT_BAD_NEWS, EXIT_BAD_INPUT = 0, 1, 2


def fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    click.echo(f"memplan: error: {message}", err=True)
    sys.exit(code)


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout meanwhile -- the user's prints while their model file is
    imported, built, traced or run, C-level output, child processes -- to stderr, so that stdout holds
    only memplan's own answer (`--format json` stays parseable)."""
    sys.stdout.flush()
    try:
        real = sys.stdout.fileno() == 1
    except (AttributeError, OSError, ValueError):  # a captured stream (tests): Python-level only
        real = False
    saved = os.dup(1) if real else None
    if real:
        os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if saved is not None:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)


def run_command(debug: bool, fn: Callable[[], Any]) -> Any:
    """Run the library call `fn` -- the one place the user's code runs -- with stdout sent to stderr."""
    try:
        with stdout_to_stderr():
            return fn()
    except UserError as exc:
        if debug:
            traceback.print_exc()
        fail(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    except SystemExit as exc:  # the user's code called sys.exit() / exit() while memplan ran it
        if debug:
            traceback.print_exc()
        fail(f"the model code exited (sys.exit({exc.code!r})) while memplan ran it: "
             "a model file's functions must return, not exit")
    except KeyboardInterrupt:
        fail("interrupted", 130)


def report_written(path: str | None, quiet: bool = False) -> None:
    """The one line that says where a --report went (stderr; silent with -q)."""
    if path and not quiet:
        click.echo(f"report written to {path}", err=True)


def emit(fmt: str, command: str, payload: dict, human: Callable[[], str], exit_code: int = EXIT_OK) -> None:
    """Print the JSON payload (fmt == 'json') in the versioned envelope, or the human rendering, then
    exit with `exit_code`. This is the one place the JSON envelope is applied."""
    if fmt == "json":
        click.echo(json.dumps(envelope(command, payload), indent=2, default=str))
    else:
        click.echo(human())
    sys.exit(exit_code)


debug_option = click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
quiet_option = click.option("-q", "--quiet", is_flag=True,
                            help="No progress or status lines on stderr (errors are still shown).")
format_option = click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
    help="Output format.",
)
