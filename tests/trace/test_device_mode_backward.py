"""The device's function mode (memplan.trace.kernels.DeviceFunctionMode) is off torch's function-mode stack
while the recording mode handles an op the autograd engine runs in backward, as it is for forward's ops
(`take_device_mode`): it no longer sees the tensor methods and ops the dispatch modes call there, the
forward code backward recomputes (checkpointing) still runs the device's attention, and every trace is
the one it was."""
from __future__ import annotations

import json
from collections import Counter

import pytest
import torch

from memplan.core import run_analysis
from memplan.trace import kernels, recorder
from memplan.trace.blocks import same_trace

from conftest import HF


def _gpt2_tiny(tmp_path):
    cfg = json.loads((HF / "gpt2.json").read_text())
    cfg.update(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64, n_ctx=64)
    path = tmp_path / "gpt2_tiny.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def _ops_seen_by_the_mode(monkeypatch, **kw) -> Counter:
    """Per phase: the aten ops (OpOverloads, called from inside the dispatch modes) the device's function
    mode handled during one trace."""
    seen: Counter = Counter()
    phase = ["build"]
    orig = kernels.DeviceFunctionMode.__torch_function__

    def spy(self, func, types, args=(), kwargs=None):
        if isinstance(func, torch._ops.OpOverload):
            seen[phase[0]] += 1
        return orig(self, func, types, args, kwargs)

    monkeypatch.setattr(kernels.DeviceFunctionMode, "__torch_function__", spy)
    run_analysis(fallback=False, full_trace=True, on_phase=lambda p, s, m: phase.__setitem__(0, p), **kw)
    monkeypatch.undo()
    return seen


def test_engine_ops_do_not_go_through_the_device_mode(monkeypatch):
    kw = dict(hf_config=str(HF / "llama_small.json"), batch_size=1, seq_len=32, precision="bf16-amp",
              device="910B3")
    assert _ops_seen_by_the_mode(monkeypatch, **kw)["backward"] == 0
    monkeypatch.setattr(recorder, "take_device_mode", lambda: None)   # as before: the mode stays on
    assert _ops_seen_by_the_mode(monkeypatch, **kw)["backward"] > 0


def test_the_mode_is_put_back():
    mode = kernels.DeviceFunctionMode("npu")
    with mode:
        assert kernels.take_device_mode() is mode
        assert kernels.take_device_mode() is None     # off the stack now
        kernels.put_back(mode)
        assert torch.overrides._get_current_function_mode() is mode
    assert kernels.take_device_mode() is None


def _cases(tmp_path):
    llama = dict(hf_config=str(HF / "llama_small.json"), batch_size=1, seq_len=32, precision="bf16-amp")
    return [
        dict(llama, device="910B3", checkpoint=("model.layers.1",)),
        dict(llama, device="A100-80GB", precision="fp32"),
        dict(hf_config=_gpt2_tiny(tmp_path), batch_size=1, seq_len=8, precision="bf16-amp", checkpoint=("*.h.*",),
             device="A100-80GB"),   # every block's attention recomputed in backward with flash
    ]


@pytest.mark.parametrize("case", range(3))
def test_same_trace_as_with_the_mode_on(monkeypatch, tmp_path, case):
    kw = _cases(tmp_path)[case]
    off = run_analysis(fallback=False, full_trace=True, **kw).trace
    monkeypatch.setattr(recorder, "take_device_mode", lambda: None)
    on = run_analysis(fallback=False, full_trace=True, **kw).trace
    assert same_trace(off, on)
    if kw.get("checkpoint") == ("*.h.*",):
        made = Counter(r.phase for r in off.storages if r.op == "_scaled_dot_product_flash_attention")
        assert made["forward"] == made["backward"] > 0
