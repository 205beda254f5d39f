"""memplan.trace.fastkey: the tracer's cheaper fake-tensor dispatch-cache key gives the trace torch's own
key gives -- every record, event, mark and note -- with the same cache hits, misses and bypasses; and it
is left out where torch's key function is not the one it was written against."""
from __future__ import annotations

from pathlib import Path

import pytest
from torch._subclasses.fake_tensor import FakeTensorMode

from memplan.core import run_analysis
from memplan.errors import TraceError
from memplan.trace import fastkey, tracer
from memplan.trace.blocks import same_trace

ROOT = Path(__file__).resolve().parents[2]
HF = ROOT / "fixtures" / "hf"
MODELS = ROOT / "fixtures" / "models"
pytestmark = pytest.mark.skipif(not fastkey.supported(), reason="torch's dispatch-cache key is another one here")


def _counts():
    return FakeTensorMode.cache_hits, FakeTensorMode.cache_misses, sum(FakeTensorMode.cache_bypasses.values())


def _trace(**kw):
    """The full trace from an empty dispatch cache (or the error the step raised), and the cache's hits,
    misses and bypasses during it."""
    FakeTensorMode.cache.clear()
    before = _counts()
    try:
        tr = run_analysis(fallback=False, full_trace=True, **kw).trace
    except TraceError as exc:
        tr = str(exc)
    return tr, tuple(a - b for a, b in zip(_counts(), before))


def _both(monkeypatch, **kw):
    fast = _trace(**kw)
    with monkeypatch.context() as m:
        m.setattr(tracer._FakeMode, "_prep_args_for_hash", FakeTensorMode._prep_args_for_hash)
        own = _trace(**kw)
    return fast, own


def _check(fast, own):
    (tr_fast, n_fast), (tr_own, n_own) = fast, own
    assert n_fast[0] > 0               # the cache was used, and hit
    assert n_fast == n_own
    if isinstance(tr_own, str):        # the step fails with torch's key too: then alike
        assert tr_fast == tr_own
    else:
        assert same_trace(tr_fast, tr_own)


def test_the_tracer_uses_it():
    assert tracer._FakeMode._prep_args_for_hash is fastkey._prep_args_for_hash


@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
def test_mlp(monkeypatch, precision):
    _check(*_both(monkeypatch, model=str(MODELS / "mlp.py"), batch_size=2, precision=precision))


def test_llama_small_checkpointed(monkeypatch):
    _check(*_both(monkeypatch, hf_config=str(HF / "llama_small.json"), batch_size=1, seq_len=32,
                  precision="bf16-amp", checkpoint=("model.layers.1",), device="910B3"))


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
@pytest.mark.parametrize("name", sorted(p.stem for p in MODELS.glob("*.py")))
def test_every_model_file(monkeypatch, name, precision):
    _check(*_both(monkeypatch, model=str(MODELS / f"{name}.py"), batch_size=2, precision=precision))


@pytest.mark.slow
@pytest.mark.parametrize("checkpoint", [(), ("*.layers.*", "*.h.*")])
@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
@pytest.mark.parametrize("name", ["gpt2", "llama_small", "qwen2-0.5b", "tinyllama-1.1b"])
def test_hf_configs(monkeypatch, name, precision, checkpoint):
    _check(*_both(monkeypatch, hf_config=str(HF / f"{name}.json"), batch_size=1, seq_len=32,
                  precision=precision, checkpoint=checkpoint, device="910B3"))


def test_left_out_where_torch_differs(monkeypatch):
    class Mode(FakeTensorMode):
        pass

    monkeypatch.setattr(fastkey, "_FIELDS", fastkey._FIELDS | {"a_new_field"})
    fastkey.supported.cache_clear()
    try:
        assert not fastkey.supported()
        assert not fastkey.install(Mode)
        assert "_prep_args_for_hash" not in Mode.__dict__
    finally:
        monkeypatch.undo()
        fastkey.supported.cache_clear()
    assert fastkey.install(Mode) and Mode._prep_args_for_hash is fastkey._prep_args_for_hash
