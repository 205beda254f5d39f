"""memplan.trace.fastdevice: the recording mode answers `prim.device` as FakeTensorMode would (the trace is
the same, record for record, with and without it), only where the fake mode is the next one to answer,
and not where torch answers it another way."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

from memplan.core import run_analysis
from memplan.trace import fastdevice, tracer
from memplan.trace.blocks import same_trace

ROOT = Path(__file__).resolve().parents[2]
HF = ROOT / "fixtures" / "hf"
pytestmark = pytest.mark.skipif(not fastdevice.supported(), reason="torch's fake mode answers prim.device otherwise")
_DEVICE = torch.ops.prim.device.default


class _Asks(TorchDispatchMode):
    """Notes what `device_of` answers for each `prim.device` it sees, then dispatches the op."""

    def __init__(self):
        super().__init__()
        self.answers = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is _DEVICE:
            self.answers.append((fastdevice.device_of(args), out))
        return out


class _Passes(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_the_fake_modes_answer_where_it_is_next():
    with tracer._FakeMode(), _Asks() as asks:
        x = torch.empty(3)
        torch.ops.prim.device.default(x)
    assert asks.answers == [(torch.device("cpu"), torch.device("cpu"))]
    with tracer._FakeMode(), _Passes(), _Asks() as asks:   # a user mode below: it must see the op
        torch.ops.prim.device.default(torch.empty(3))
    assert asks.answers == [(None, torch.device("cpu"))]


def _fake_sees_device(monkeypatch, **kw) -> int:
    seen = []
    orig = FakeTensorMode.dispatch

    def spy(self, func, types, args=(), kwargs=None):
        if func is _DEVICE:
            seen.append(1)
        return orig(self, func, types, args, kwargs)

    monkeypatch.setattr(FakeTensorMode, "dispatch", spy)
    run_analysis(fallback=False, full_trace=True, **kw)
    monkeypatch.undo()
    return len(seen)


def test_the_recorder_answers_it(monkeypatch):
    kw = dict(hf_config=str(HF / "llama_small.json"), batch_size=1, seq_len=32, precision="bf16-amp", device="910B3")
    fast = _fake_sees_device(monkeypatch, **kw)   # a few come from outside the recording mode
    monkeypatch.setattr(fastdevice, "ENABLED", False)
    slow = _fake_sees_device(monkeypatch, **kw)
    assert 10 * fast < slow, (fast, slow)


_CASES = [
    dict(hf_config=str(HF / "llama_small.json"), batch_size=1, seq_len=32, precision="bf16-amp", device="910B3",
         checkpoint=("model.layers.1",)),
    dict(hf_config=str(HF / "llama_small.json"), batch_size=1, seq_len=32, precision="fp32"),   # the CPU
    dict(model=str(ROOT / "fixtures" / "models" / "mlp.py"), batch_size=2, precision="fp32"),
]


@pytest.mark.parametrize("case", range(len(_CASES)))
@pytest.mark.parametrize("full", [False, True])
def test_same_trace_as_through_the_fake_mode(monkeypatch, case, full):
    kw = _CASES[case]
    fast = run_analysis(fallback=False, full_trace=full, **kw).trace
    monkeypatch.setattr(fastdevice, "ENABLED", False)
    slow = run_analysis(fallback=False, full_trace=full, **kw).trace
    assert same_trace(fast, slow) and fast.mode == slow.mode
