"""`memplan` entry point. Commands live one per module in this package, each imported when its command is
asked for (`memplan analyze` imports none of the others); no command module imports torch at import time,
so `memplan --help` is instant."""
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


class _LazyGroup(click.Group):
    """The command group that imports a command's module when the command is asked for: `memplan analyze`
    imports memplan.cli.analyze and none of the other commands' modules (nor what only they import, e.g.
    `shard`'s table renderer); `memplan --help` asks for every one of them, in name order as before."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in _COMMANDS if self.get_command(ctx, name) is not None)

    def get_command(self, ctx: click.Context, cmd_name: str):
        # an unknown name loads them all: click suggests the registered names close to it
        for name in [cmd_name] if cmd_name in _COMMANDS else _COMMANDS:
            if name not in self.commands:
                try:
                    mod = importlib.import_module(f"memplan.cli.{name}")
                except ModuleNotFoundError as exc:  # a command not built yet
                    if exc.name != f"memplan.cli.{name}":
                        raise
                    continue
                self.add_command(mod.command, name=name)
        return self.commands.get(cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="memplan")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Memory planner and OOM diagnostic analyzer for PyTorch training (Ascend NPU, CUDA, CPU)."""
    _EXIT["command"] = ctx.invoked_subcommand
    if ctx.invoked_subcommand not in _TORCH_FREE:
        from memplan.cli._output import fail
        from memplan.compat import check_torch
        from memplan.errors import UserError

        try:
            check_torch()   # reads the installed version; torch is not imported here
        except UserError as exc:
            fail(str(exc))


_NoArgsIsHelp = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2


# commands that run nothing on a device (fake tensors; the fallback's small real steps on the CPU)
_QUICK_EXIT = {"analyze", "plan", "shard", "devices", "diagnose", "decode"}
_UNSET = object()
_EXIT: dict = {"code": _UNSET, "last": False, "command": None}


def main() -> None:
    atexit.unregister(_at_exit)   # once, however often main() runs in one process
    count = getattr(atexit, "_ncallbacks", None)
    _EXIT.update(code=_UNSET, command=None, last=count is not None and count() == 0)
    atexit.register(_at_exit)    # with no handler before it: the last to run at exit
    try:
        _main()
    except SystemExit as exc:
        _EXIT["code"] = exc.code
        raise


def _at_exit() -> None:
    """At exit: stop the cyclic collector and freeze the heap, so that the interpreter's shutdown does
    not run its full collections over every object of torch and transformers (0.6 s CPU of a 4 s
    `analyze` of the Llama-2-70B shape, benchmarks/results/speed_analyze_profile.md). Then `_quick_exit`
    where that is safe; elsewhere modules are still torn down and their objects freed by reference
    counting (files flushed and closed); only garbage cycles left at exit stay uncollected, which Python
    does not promise to collect anyway. An atexit handler, so a caller that runs `main()` in its own
    process and goes on keeps its collector."""
    gc.disable()
    gc.freeze()
    if _EXIT["last"] and _EXIT["code"] is not _UNSET and _EXIT["command"] in _QUICK_EXIT and not _user_code():
        _quick_exit(_EXIT["code"])


def _user_code() -> bool:
    """Whether a model file (user code, which may leave files open for their finalizers to close) ran."""
    prefix = getattr(sys.modules.get("memplan.workload"), "USER_MODULE_PREFIX", None)
    return prefix is not None and any(name.startswith(prefix) for name in list(sys.modules))


def _quick_exit(code) -> None:
    """End the process now, with `code` as `sys.exit(code)` gives it: every other exit handler has run
    (this one was registered first, with none before it; handlers run last-registered first) and non-daemon
    threads were joined before them, so what is left of the interpreter's shutdown is tearing down the
    modules of torch and transformers object by object (about 0.2 s CPU and more wall time a process:
    benchmarks/results/speed_analyze_profile.md). Only for commands that touch no device, when no model
    file ran (its open files are then closed by the shutdown, as before); stdout and stderr are flushed
    first, and where that fails the shutdown goes on as before (and reports it)."""
    try:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
    except Exception:  # noqa: BLE001 - e.g. a closed pipe: the normal shutdown reports it
        return
    ctypes = sys.modules.get("ctypes")   # C libraries' stdio buffers too (torch imports ctypes)
    if ctypes is not None:
        try:
            ctypes.CDLL(None).fflush(None)
        except Exception:  # noqa: BLE001 - no C library handle here: nothing buffered through it either
            pass
    os._exit(0 if code is None else code if isinstance(code, int) else 1)


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
