"""The entry point ends a process whose command touched no device and ran no model file right after the
last exit handler (memplan.cli.main._quick_exit): the exit code and every line of output as before, exit
handlers registered while the command ran still run; the module teardown is skipped. Anywhere else (a
model file ran, a handler was registered before memplan's, another command, output that cannot be
flushed) the interpreter's shutdown runs as before."""
from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from memplan.cli import main as entry

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import atexit, os, sys
def finalized(event, args, write=os.write):   # the interpreter's own teardown, after the exit handlers
    if event in ("cpython.PyInterpreterState_Clear", "cpython._PySys_ClearAuditHooks"):
        write(2, b"torn down\\n")
sys.addaudithook(finalized)
if {user!r}:
    import types, memplan.workload   # as load_model_file leaves it
    sys.modules["memplan_user_model_x"] = types.ModuleType("memplan_user_model_x")
import memplan.cli.main as m
inner = m._main
def _main():                   # a handler registered while the command runs (as a library or model would)
    atexit.register(lambda: sys.__stderr__.write("handler ran\\n"))
    inner()
m._main = _main
sys.argv = ["memplan"] + {args!r}
m.main()
"""


def _run(args, user=False):
    return subprocess.run([sys.executable, "-c", _SCRIPT.format(args=args, user=user)], cwd=ROOT,
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_quick_exit_keeps_the_code_the_output_and_the_handlers():
    ok = _run(["devices", "--format", "json"])
    assert ok.returncode == 0 and json.loads(ok.stdout)["command"] == "devices"
    assert "handler ran" in ok.stderr and "torn down" not in ok.stderr
    bad = _run(["devices", "--bogus"])
    assert bad.returncode == 2 and "memplan: error" in bad.stderr
    assert "handler ran" in bad.stderr and "torn down" not in bad.stderr


def test_after_a_model_file_the_shutdown_runs():
    r = _run(["devices", "--format", "json"], user=True)
    assert r.returncode == 0 and json.loads(r.stdout)["command"] == "devices"
    assert "handler ran" in r.stderr and "torn down" in r.stderr


def test_a_model_file_run_ends_without_finalizer_tracebacks():
    # `make demo`'s command: a model file ran, so the interpreter's shutdown runs; the model inspected on fake tensors
    # (memplan.trace.model_stacks) is released at exit while torch is whole (memplan.trace.blocks._release), not in
    # the module teardown, where torch's StorageWeakRef finalizers printed 'Exception ignored in' tracebacks
    r = subprocess.run([sys.executable, "-m", "memplan", "analyze", "fixtures/models/gpt2.py", "-b", "1",
                        "--seq-len", "32", "--format", "json"], cwd=ROOT, capture_output=True, text=True,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode in (0, 1) and json.loads(r.stdout)["command"] == "analyze"
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]


def test_remembered_caches_are_emptied_at_exit():
    from memplan.trace import blocks

    cache: list = []
    workload = object()
    assert blocks.remembered(cache, workload, "k", lambda: "v") == "v" and cache
    assert any(c is cache for c in blocks._CACHES)
    blocks._release()
    assert cache == []
    assert blocks.remembered(cache, workload, "k", lambda: "again") == "again"   # made anew after the release


@pytest.fixture
def exits(monkeypatch):
    """The entry point as after `main()` ran `devices` (code 0) with its handler first; `os._exit` noted."""
    seen = []
    monkeypatch.setattr(entry.os, "_exit", seen.append)
    monkeypatch.setattr(entry.gc, "freeze", lambda: None)
    monkeypatch.setattr(entry.gc, "disable", lambda: None)
    monkeypatch.setitem(entry._EXIT, "code", 0)
    monkeypatch.setitem(entry._EXIT, "last", True)
    monkeypatch.setitem(entry._EXIT, "command", "devices")
    for name in [n for n in sys.modules if n.startswith("memplan_user_model_")]:   # earlier tests' model files
        monkeypatch.delitem(sys.modules, name)
    return seen


def test_quick_exit_where_safe(exits, monkeypatch):
    entry._at_exit()
    assert exits == [0]
    monkeypatch.setitem(entry._EXIT, "code", "a message")   # sys.exit("...") exits with 1
    entry._at_exit()
    assert exits == [0, 1]


@pytest.mark.parametrize("change", ["not last", "no code", "validate", "model file", "no flush"])
def test_no_quick_exit_otherwise(exits, monkeypatch, change):
    if change == "not last":
        monkeypatch.setitem(entry._EXIT, "last", False)
    elif change == "no code":
        monkeypatch.setitem(entry._EXIT, "code", entry._UNSET)
    elif change == "validate":   # runs real steps on a device: its runtime's own teardown stays
        monkeypatch.setitem(entry._EXIT, "command", "validate")
    elif change == "model file":
        import memplan.workload  # noqa: F401

        monkeypatch.setitem(sys.modules, "memplan_user_model_m", types.ModuleType("memplan_user_model_m"))
    else:
        class Closed:
            def flush(self):
                raise BrokenPipeError

        monkeypatch.setattr(sys, "stdout", Closed())
    entry._at_exit()
    assert exits == []
