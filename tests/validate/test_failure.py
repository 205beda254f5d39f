"""Failures are results: a forced OOM during validate, and guard() around a training loop."""
from __future__ import annotations

import gc
import importlib.util
import io

import pytest
import torch

from memplan.report.guard import guard
from memplan.validate import validate
from memplan.report.guard import Guard, is_device_failure

from validate_helpers import ABSURD_ALLOC, CUDA_OOM, FAILING_MODEL


def _load(path):
    spec = importlib.util.spec_from_file_location("failing_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_injected_oom_is_diagnosed_and_memory_freed(model_file):
    from memplan.workload import workload_from_module

    path = model_file(FAILING_MODEL.format(raise_stmt=CUDA_OOM))
    mod = _load(path)
    v = validate(workload_from_module(mod, str(path)), device="cpu")
    assert not v.ok and v.failed
    f = v.failure
    assert f["exception_type"] == "torch.OutOfMemoryError"
    assert f["phase"] == "forward" and f["step"] == 1 and f["module"] == "boom"
    assert f["summary"].startswith("predicted ") and "during forward of boom" in f["summary"]
    # 7.12 GiB reserved but unallocated >= the 2 GiB request: fragmentation by the category's definition
    assert f["diagnosis"]["primary_category"] == "fragmentation"
    assert v.to_dict()["failure"]["diagnosis"]["incidents"]
    gc.collect()
    assert mod.LIVE and all(r() is None for r in mod.LIVE)   # the failed step's tensors were released


def test_real_cpu_allocator_failure(model_file):
    v = validate(str(model_file(FAILING_MODEL.format(raise_stmt=ABSURD_ALLOC))), device="cpu")
    assert v.failed
    assert "DefaultCPUAllocator" in v.failure["message"]
    assert v.failure["diagnosis"]["primary_category"] == "absurd-request"
    assert v.failure["peak_allocated_bytes"] > 0


def _oom():
    return torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
                                  "of 79.25 GiB of which 1.10 GiB is free.")


def test_guard_context_manager_reraises_same_object():
    err, buf = _oom(), io.StringIO()
    with pytest.raises(torch.OutOfMemoryError) as info:
        with guard(file=buf):
            raise err
    assert info.value is err
    out = buf.getvalue()
    assert "memplan guard" in out and "capacity" in out


def test_guard_decorator_both_spellings(capsys):
    err = RuntimeError("ACL stream synchronize failed, error code is 507015\n[ERROR] EZ9999: Inner Error!")

    @guard
    def train():
        raise err

    @guard()
    def train2():
        raise err

    for fn in (train, train2):
        with pytest.raises(RuntimeError) as info:
            fn()
        assert info.value is err
        assert "memplan guard" in capsys.readouterr().err
    assert train.__name__ == "train"


def test_guard_ignores_other_errors_and_passes_results(capsys):
    with pytest.raises(ValueError):
        with guard():
            raise ValueError("not a device problem")
    assert capsys.readouterr().err == ""

    @guard()
    def f(x):
        return x + 1
    assert f(1) == 2


def test_guard_with_estimate():
    from memplan.validate import preflight

    est = preflight(lambda: torch.nn.Linear(8, 8), lambda b: torch.randn(b, 8), device="cpu")
    buf = io.StringIO()
    with pytest.raises(torch.OutOfMemoryError):
        with Guard(est, file=buf):
            raise _oom()
    assert "memplan predicted" in buf.getvalue()


def test_is_device_failure():
    assert is_device_failure(_oom())
    assert is_device_failure(RuntimeError("NPU out of memory. Tried to allocate 20.00 MiB"))
    assert is_device_failure(RuntimeError("call aclnnMatmul failed, detail:EZ1001"))
    assert not is_device_failure(RuntimeError("mat1 and mat2 shapes cannot be multiplied"))
    assert not is_device_failure(KeyError("x"))
