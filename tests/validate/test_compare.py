"""The comparison logic (tolerance, errors, plan JSON) on hand-made numbers, no run needed."""
from __future__ import annotations

import json

import pytest

from memplan.errors import UserError
from memplan.core import Estimate
from memplan.validate.backends import Measurement
from memplan.validate.runner import compare, error_pct, read_plan
from memplan.workload import TrainConfig

MiB = 1 << 20


def _est(alloc=100 * MiB, reserved=110 * MiB):
    return Estimate(workload="w", config=TrainConfig().to_dict(), device="X", capacity_bytes=None,
                    peak_allocated_bytes=alloc, peak_reserved_bytes=reserved, outside_allocator_bytes=0,
                    peak_phase="backward", peak_step=2, peak_micro_step=1, breakdown_at_peak={},
                    phase_peaks={"forward": 80 * MiB, "backward": alloc}, first_step_peak_bytes=alloc, modules=[])


def _meas(alloc, reserved=None, backend="cuda"):
    return Measurement(backend, "dev", alloc, reserved, "backward", {"forward": 80 * MiB, "backward": alloc},
                       {"backward": reserved} if reserved else {})


def test_error_sign_and_none():
    assert error_pct(110, 100) == 10.0
    assert error_pct(90, 100) == -10.0
    assert error_pct(1, None) is None and error_pct(None, 1) is None and error_pct(1, 0) is None


@pytest.mark.parametrize("measured,tol,ok", [(100 * MiB, 5, True), (104 * MiB, 5, True), (90 * MiB, 5, False),
                                             (90 * MiB, 15, True)])
def test_tolerance_on_allocated(measured, tol, ok):
    v = compare(_est(), _meas(measured, 110 * MiB), TrainConfig(), tol)
    assert v.ok is ok


def test_reserved_counts_on_accelerators_only():
    v = compare(_est(), _meas(100 * MiB, 150 * MiB), TrainConfig(), 5)
    assert not v.ok and v.reserved_error_pct < -5
    v = compare(_est(), _meas(100 * MiB, None, backend="cpu"), TrainConfig(), 5)
    assert v.ok and v.reserved_error_pct is None


def test_read_plan(tmp_path):
    p = tmp_path / "plan.json"
    p.write_text(json.dumps({"batch_size": 4, "grad_accum_steps": 2, "checkpoint": ["layers.0"],
                             "env": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
                             "config": {"precision": "bf16-amp", "bogus": 1},
                             "predicted": {"peak_allocated_bytes": 123, "device": "A100-80GB"}}))
    changes, env, summary = read_plan(str(p))
    assert changes == {"precision": "bf16-amp", "batch_size": 4, "grad_accum": 2, "checkpoint": ("layers.0",)}
    assert env == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    assert summary["predicted_peak_allocated_bytes"] == 123 and summary["device"] == "A100-80GB"


def test_read_plan_rejects_bad_fields():
    with pytest.raises(UserError):
        read_plan({"batch_size": "eight"})
    with pytest.raises(UserError):
        read_plan({"checkpoint": 3})
