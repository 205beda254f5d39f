"""A forward recomputed in backward (activation checkpointing) runs the target device's attention kernel, as
the forward did: the device's routing (memplan.trace.kernels.DeviceFunctionMode) stays on through backward.
Before, torch's handling of `loss.backward()` took the mode off for the whole backward pass, and GPT-2 with
every block checkpointed raised CheckpointError on a GPU/NPU target in bf16 (31 tensors saved in forward,
30 in the recomputation: the CPU's math attention instead of flash)."""
from __future__ import annotations

import json
from collections import Counter

import pytest
import torch
import torch.utils.checkpoint as ckpt
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

from memplan.core import run_analysis
from memplan.trace import kernels

from conftest import HF

FLASH = torch.ops.aten._scaled_dot_product_flash_attention.default


class _Ops(TorchDispatchMode):
    """Counts the aten ops that run below it."""

    def __init__(self):
        super().__init__()
        self.seen = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen[func] += 1
        return func(*args, **(kwargs or {}))


def _attention(x):
    q = x.view(1, 2, 8, 32)
    return torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).sum()


def _backward(entry, loss, x):
    if entry == "Tensor.backward":
        loss.backward()
    elif entry == "autograd.backward":
        torch.autograd.backward(loss)
    else:
        torch.autograd.grad(loss, x)


@pytest.mark.parametrize("reentrant", [False, True])
@pytest.mark.parametrize("entry", ["Tensor.backward", "autograd.backward", "autograd.grad"])
def test_recomputation_runs_the_devices_attention(entry, reentrant):
    if entry != "Tensor.backward" and kernels.compat.redispatch_torch_function() is None:
        pytest.skip("this torch handles the call without a way to keep the mode on (no redispatch_function)")
    if entry == "autograd.grad" and reentrant:
        pytest.skip("reentrant checkpointing refuses torch.autograd.grad")
    ops = _Ops()
    with FakeTensorMode(), kernels.DeviceFunctionMode("cuda"), ops:
        x = torch.randn(1, 16, 32, dtype=torch.bfloat16, requires_grad=True)
        loss = ckpt.checkpoint(_attention, x, use_reentrant=reentrant)
        assert ops.seen[FLASH] == 1
        _backward(entry, loss, x)
    assert ops.seen[FLASH] == 2          # forward, then the recomputation in backward
    assert ops.seen[torch.ops.aten._scaled_dot_product_flash_attention_backward.default] == 1


@pytest.mark.parametrize("device", ["910B3", "A100-80GB"])
def test_gpt2_every_block_checkpointed(tmp_path, device):
    cfg = json.loads((HF / "gpt2.json").read_text())
    cfg.update(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64, n_ctx=64)
    path = tmp_path / "gpt2_tiny.json"
    path.write_text(json.dumps(cfg))
    a = run_analysis(hf_config=str(path), batch_size=1, seq_len=8, precision="bf16-amp", checkpoint=("*.h.*",),
                     device=device, fallback=False, full_trace=True)
    assert a.estimate.method == "trace"
    made = Counter(r.phase for r in a.trace.storages if r.op == "_scaled_dot_product_flash_attention")
    assert made["forward"] == made["backward"] > 0    # each block's attention recomputed with the same kernel
