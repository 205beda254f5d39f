"""preflight(): an Estimate when it fits, MemoryPlanError with the breakdown and a checked change when not."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from memplan.errors import MemoryPlanError, UserError
from memplan.core import Estimate
from memplan.validate import preflight
from memplan.validate.preflight import _block_glob, last_estimate


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 128))
                                    for _ in range(3))

    def forward(self, x):
        for layer in self.layers:
            x = x + layer(x)
        return x


def batch(b):
    return torch.randn(b, 256, 128)


def test_fits_with_large_capacity():
    est = preflight(Blocks, batch, batch_size=2, capacity="8GiB", device="cpu")
    assert isinstance(est, Estimate) and est.fits is True
    assert last_estimate() is est


def test_tiny_capacity_raises_with_breakdown_and_checked_change():
    with pytest.raises(MemoryPlanError) as info:
        preflight(Blocks, batch, batch_size=8, capacity="20MiB", device="cpu")
    e = info.value
    assert isinstance(e.estimate, Estimate) and e.estimate.fits is False
    assert e.breakdown == e.estimate.breakdown_at_peak and e.breakdown["activations"] > 0
    assert "does not fit" in str(e) and "Top change" in str(e)
    assert e.advice and "re-traced" in e.advice       # the change was traced, not guessed
    assert e.change.config                             # expressed as TrainConfig edits
    assert e.change.predicted_total_bytes < e.estimate.device_total_bytes


def test_module_instance_and_optimizer_instance():
    model = Blocks()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    est = preflight(model, batch, opt, device="cpu", batch_size=1)
    assert est.breakdown_at_peak["optimizer_state"] > 0        # SGD momentum buffers, from the instance
    assert est.workload == "Blocks"
    # the real model is untouched
    assert all(p.grad is None for p in model.parameters())


def test_bad_arguments():
    with pytest.raises(UserError):
        preflight(Blocks, batch(1))               # a batch, not a function
    with pytest.raises(UserError):
        preflight(Blocks, batch, batch_sise=2)    # a typo in a training option


def test_block_glob():
    rows = [{"module": m} for m in ("model.layers.0.mlp", "model.layers.1.attn", "model.layers.2", "lm_head")]
    assert _block_glob(rows) == "model.layers.*"
    assert _block_glob([{"module": "fc"}]) is None
