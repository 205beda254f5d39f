"""`memplan` entry point. Commands live one per module in this package and are imported lazily-cheap:
no command module imports torch at import time, so `memplan --help` is instant."""
from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys

import click

from memplan import __version__

# Each module memplan.cli.<name> defines a click command called `command`.
_COMMANDS = ("analyze", "plan", "validate", "shard", "devices", "diagnose", "decode")


# commands that never import torch (they read logs, error codes and the device catalog)
_TORCH_FREE = {"devices", "diagnose", "decode"}


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="memplan")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Memory planner and OOM diagnostic analyzer for PyTorch training (Ascend NPU, CUDA, CPU)."""
    if ctx.invoked_subcommand not in _TORCH_FREE:
        from memplan.cli._output import fail
        from memplan.compat import check_torch
        from memplan.errors import UserError

        try:
            check_torch()   # reads the installed version; torch is not imported here
        except UserError as exc:
            fail(str(exc))


for _name in _COMMANDS:
    try:
        _mod = importlib.import_module(f"memplan.cli.{_name}")
    except ModuleNotFoundError as exc:  # a command not built yet
        if exc.name != f"memplan.cli.{_name}":
            raise
        continue
    cli.add_command(_mod.command, name=_name)


_NoArgsIsHelp = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2


def main() -> None:
    atexit.unregister(_no_collection_at_exit)   # once, however often main() runs in one process
    atexit.register(_no_collection_at_exit)
    _main()


def _no_collection_at_exit() -> None:
    """At exit: stop the cyclic collector and freeze the heap, so that the interpreter's shutdown does
    not run its full collections over every object of torch and transformers (0.6 s CPU of a 4 s
    `analyze` of the Llama-2-70B shape, benchmarks/results/speed_analyze_profile.md). Modules are still
    torn down and their objects freed by reference counting (files flushed and closed); only garbage
    cycles left at exit stay uncollected, which Python does not promise to collect anyway. An atexit
    handler, so a caller that runs `main()` in its own process and goes on keeps its collector."""
    gc.disable()
    gc.freeze()


def _main() -> None:
    # keep third-party chatter (transformers' one-time warnings) out of memplan's output
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        code = cli.main(prog_name="memplan", standalone_mode=False)
    except _NoArgsIsHelp as exc:  # `memplan` / `memplan shard` alone: the help, as click prints it
        click.echo(exc.format_message(), err=True)
        sys.exit(exc.exit_code)
    except click.UsageError as exc:  # a bad option or argument: one line, like every other input error
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        click.echo(f"memplan: error: {exc.format_message()}{where}", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"memplan: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("memplan: error: interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
