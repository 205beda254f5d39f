"""preflight(): an Estimate when it fits, MemoryPlanError with the breakdown and a checked change when not."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from memplan.errors import MemoryPlanError, UserError
from memplan.core import Estimate
from memplan.validate import preflight
from memplan.validate.preflight import last_estimate


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
    assert e.change.fits and e.change.predicted_total_bytes <= e.estimate.capacity_bytes
    # the change is the configuration `memplan plan` recommends (fast mode, no larger batch)
    from memplan.plan import plan
    from memplan.plan.advice import config_edits
    from memplan.workload import TrainConfig, Workload

    change = e.change
    cfg = TrainConfig(batch_size=8)
    p = plan(Workload.from_callables(Blocks, batch), config=cfg, capacity="20MiB", margin=0.0, thorough=False,
             max_batch=8)
    assert p.fits and change.config == config_edits(cfg, p.config, p.grad_accum_steps)
    assert change.predicted_total_bytes == p.predicted.device_total_bytes
    assert change.config["batch_size"] * change.config["grad_accum"] >= 8     # the global batch is kept


def test_no_advice_without_check():
    with pytest.raises(MemoryPlanError) as info:
        preflight(Blocks, batch, batch_size=8, capacity="20MiB", device="cpu", check_advice=False)
    assert info.value.change is None and "Top change" not in str(info.value)


def test_nothing_fits_on_one_device_suggests_sharding_or_a_bigger_device():
    with pytest.raises(MemoryPlanError) as info:
        preflight(Blocks, batch, batch_size=1, capacity="256KiB", device="cpu")
    change = info.value.change
    assert change is not None and change.kind in ("sharding", "device") and change.method == "model"
    assert "model" in change.render()


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


def test_untraceable_advice_still_raises_the_misfit(monkeypatch):
    import importlib

    from memplan.errors import TraceError

    pf_module = importlib.import_module("memplan.validate.preflight")   # the module, not the function

    def fail(ev, cfg):
        raise TraceError("aten::nonzero has no fake kernel")

    monkeypatch.setattr(pf_module, "top_change", fail)
    with pytest.raises(MemoryPlanError) as info:
        preflight(Blocks, batch, batch_size=8, capacity="20MiB", device="cpu")
    assert info.value.change is None and "No change was checked" in str(info.value)
