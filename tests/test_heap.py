"""The collector around traces (memplan.step.frozen_heap, run; the CLI's import of torch and transformers):
the heap that was there before is frozen once and left alone, the collector's state is restored after; the
entry point leaves no full collection to the interpreter's shutdown."""
from __future__ import annotations

import gc
from pathlib import Path

import pytest

from memplan.step import frozen_heap, run

ROOT = Path(__file__).resolve().parents[1]


def test_nested_frozen_heap_leaves_the_unfreezing_to_the_outer_one():
    before = gc.get_freeze_count()
    assert before == 0, "another test left the heap frozen"
    with frozen_heap():
        outer = gc.get_freeze_count()
        assert outer > 0
        with frozen_heap():
            assert gc.get_freeze_count() >= outer
        assert gc.get_freeze_count() >= outer      # the inner one did not unfreeze
    assert gc.get_freeze_count() == 0


def test_run_freezes_what_came_before_and_restores_the_collector():
    from memplan.core import load_workload
    from memplan.workload import TrainConfig

    workload = load_workload(str(ROOT / "fixtures" / "models" / "mlp.py"))
    cfg = TrainConfig(batch_size=2).validate()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    run(workload, cfg)
    assert gc.isenabled() and gc.get_freeze_count() == 0      # frozen for the run only
    with frozen_heap():
        run(workload, cfg)
        assert gc.get_freeze_count() > 0                    # the caller unfreezes
        run(workload, cfg)
    assert gc.isenabled() and gc.get_freeze_count() == 0


class _Cycle:
    def __init__(self):
        self.me = self


def test_a_run_collects_its_own_cycles_and_leaves_the_old_heap_unscanned():
    """`step.run_collector`: the run's cyclic garbage is gone when the run returns, by a collection of the
    run's objects only; garbage from before the run is neither freed during it nor scanned at its end (it
    is the interpreter's to collect later), so a long process pays no full collection per trace."""
    import weakref

    from memplan.core import load_workload
    from memplan.step import NoHooks
    from memplan.workload import TrainConfig

    made = []

    class Hooks(NoHooks):
        def model_built(self, model):
            made.append(weakref.ref(_Cycle()))

    workload = load_workload(str(ROOT / "fixtures" / "models" / "mlp.py"))
    cfg = TrainConfig(batch_size=2).validate()
    gc.disable()                       # no automatic collection between the lines below
    try:
        old = weakref.ref(_Cycle())     # cyclic garbage from before the run
        run(workload, cfg, Hooks())
        assert made and made[0]() is None, "the run's own cycle outlived the run"
        assert old() is not None, "the run scanned (and freed) the heap from before it"
        assert gc.get_freeze_count() == 0 and not gc.isenabled()    # unfrozen; the collector as it was (off)
        gc.collect()
        assert old() is None
    finally:
        gc.enable()


def test_cli_loads_the_workload_without_collections_then_freezes_its_heap_for_the_command():
    import click

    from memplan.cli._job import _settled

    seen = []

    def load(x):
        seen.append(gc.isenabled())
        return x + 1

    with click.Context(click.Command("x")):
        assert _settled(load, 1) == 2 and seen == [False]
        assert gc.isenabled() and gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0            # unfrozen when the command ends
    assert _settled(load, 2) == 3 and gc.get_freeze_count() == 0   # no command: nothing frozen


def test_main_leaves_no_collection_for_the_shutdown(monkeypatch, capsys):
    """The entry point registers (once) an exit handler that stops the collector and freezes the heap
    before the interpreter's shutdown (whose full collections over torch's objects cost about half a
    second a process), on success and on error; the process that called it keeps its collector."""
    import atexit

    from memplan.cli import main as entry

    registered = []
    monkeypatch.setattr(atexit, "register", lambda fn: registered.append(fn))
    monkeypatch.setattr(atexit, "unregister", lambda fn: registered.remove(fn) if fn in registered else None)
    for argv, code in ((["memplan", "devices", "--format", "json"], 0), (["memplan", "devices", "--bogus"], 2)):
        monkeypatch.setattr("sys.argv", argv)
        with pytest.raises(SystemExit) as exc:
            entry.main()
        assert exc.value.code == code
    assert '"command": "devices"' in capsys.readouterr().out
    assert registered == [entry._at_exit] and gc.isenabled() and gc.get_freeze_count() == 0
    monkeypatch.setattr(entry, "_quick_exit", lambda code: None)   # memplan's own exit: tests/cli/test_quick_exit.py
    try:
        registered[0]()
        assert not gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()
