"""memplan.trace.nodynamo: the tracer's modes are called directly while dynamo is idle (the trace is the one
torch's disable wrapper gives, record for record), through torch's wrapper otherwise, and left alone where
torch's wrapper is not the one it was written against."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from memplan.core import run_analysis
from memplan.trace import nodynamo, recorder, tracer
from memplan.trace.blocks import same_trace

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not nodynamo.supported(), reason="torch wraps dispatch modes another way here")


def _mode_class():
    """A dispatch mode that notes which file called its `__torch_dispatch__` (memplan's direct call or
    dynamo's wrapper)."""
    class Mode(TorchDispatchMode):
        callers: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Mode.callers.append(sys._getframe(1).f_code.co_filename)
            return func(*args, **(kwargs or {}))

    return Mode


def test_the_tracer_uses_it():
    for cls in (recorder.RecordingMode, tracer._FakeMode):
        assert cls.__dict__["__torch_dispatch__"].__code__.co_filename == nodynamo.__file__


def test_direct_while_idle_wrapped_under_a_stance():
    Mode = _mode_class()
    assert nodynamo.install(Mode)
    with Mode():
        torch.ones(2) + 1
    assert Mode.callers and set(Mode.callers) == {nodynamo.__file__}
    Mode.callers.clear()
    with torch.compiler.set_stance("eager_on_recompile"), Mode():
        torch.ones(2) + 1
    assert Mode.callers and nodynamo.__file__ not in Mode.callers


def test_left_out_where_torch_differs(monkeypatch):
    Mode = _mode_class()
    raw = Mode.__dict__["__torch_dispatch__"].__wrapped__
    monkeypatch.setattr(Mode, "__torch_dispatch__", raw)   # not torch's wrapper
    assert not nodynamo.install(Mode)
    assert Mode.__dict__["__torch_dispatch__"] is raw


def _trace(**kw):
    return run_analysis(fallback=False, **kw).trace


@pytest.mark.parametrize("full", [False, True])
def test_same_trace_as_through_torchs_wrapper(monkeypatch, full):
    kw = dict(hf_config=str(ROOT / "fixtures" / "hf" / "llama_small.json"), batch_size=1, seq_len=32,
              precision="bf16-amp", checkpoint=("model.layers.1",), device="910B3", full_trace=full)
    direct = _trace(**kw)
    with monkeypatch.context() as m:
        m.setattr(recorder.RecordingMode, "__torch_dispatch__", recorder.RecordingMode.__torch_dispatch__.__wrapped__)
        m.delattr(tracer._FakeMode, "__torch_dispatch__")
        assert "__torch_dispatch__" not in tracer._FakeMode.__dict__
        wrapped = _trace(**kw)
    assert same_trace(direct, wrapped) and direct.mode == wrapped.mode
