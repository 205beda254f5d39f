"""Accelerator backends. Without the hardware only the one-line refusal is tested; the measurements run
where a GPU / an NPU with torch_npu is present (markers `gpu`, `npu`). No device numbers are faked."""
from __future__ import annotations

import importlib.util

import pytest
import torch

from memplan.errors import UserError
from memplan.validate import validate
from memplan.validate.backends import NpuBackend, detect_family, family_of, get_backend

from validate_helpers import MODELS


def _npu_ready() -> bool:
    if importlib.util.find_spec("torch_npu") is None:
        return False
    try:
        NpuBackend().check()
        return True
    except UserError:
        return False


def test_family_of():
    assert family_of(None) is None and family_of("auto") is None
    assert family_of("cpu") == "cpu" and family_of("cuda:1") == "cuda" and family_of("npu") == "npu"
    assert family_of("A100-80GB") == "cuda" and family_of("910B3") == "npu"


def test_detect_without_accelerators():
    if torch.cuda.is_available() or _npu_ready():
        pytest.skip("an accelerator is present")
    assert detect_family() == "cpu"


def test_npu_refusal_is_one_line():
    if _npu_ready():
        pytest.skip("an NPU is present")
    with pytest.raises(UserError) as info:
        get_backend("npu")
    assert "\n" not in str(info.value) and "torch_npu" in str(info.value)


def _check_accelerator(v, family):
    assert v.backend == family and v.failure is None
    m = v.measured
    assert m["peak_allocated_bytes"] > 0 and m["peak_reserved_bytes"] >= m["peak_allocated_bytes"]
    assert m["device_used_bytes"] is not None and v.reserved_error_pct is not None
    assert abs(v.error_pct) <= 5


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_validate_mlp():
    _check_accelerator(validate(str(MODELS / "mlp.py"), device="cuda", batch_size=2, tolerance=100), "cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_capacity_forces_a_real_oom():
    v = validate(str(MODELS / "mlp.py"), device="cuda", batch_size=64, capacity="64MiB")
    assert v.failed and v.failure["exception_type"].endswith("OutOfMemoryError")
    assert v.failure["diagnosis"]["primary_category"] in ("capacity", "fragmentation")
    assert torch.cuda.memory_allocated() == 0


@pytest.mark.npu
@pytest.mark.skipif(not _npu_ready(), reason="needs an Ascend NPU with torch_npu and CANN")
def test_npu_validate_mlp():
    _check_accelerator(validate(str(MODELS / "mlp.py"), device="npu", batch_size=2, tolerance=100), "npu")


@pytest.mark.npu
@pytest.mark.skipif(not _npu_ready(), reason="needs an Ascend NPU with torch_npu and CANN")
def test_npu_amp_uses_torch_npu_grad_scaler():
    v = validate(str(MODELS / "mlp.py"), device="npu", batch_size=2, precision="fp16-amp", tolerance=100)
    assert v.failure is None and v.measured["peak_allocated_bytes"] > 0
