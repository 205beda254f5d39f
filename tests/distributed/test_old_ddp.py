"""The per-rank DDP trace on torch without DDP's `init_sync` and with the torch < 2.5 Parameter
metaclass (every `_is_param` tensor, i.e. every fake parameter, also passed as an
`UninitializedParameter`, so DDP refused the model). Both are emulated on this torch; the trace must
give the same per-rank estimate as this torch's own path."""
from __future__ import annotations

import pytest
import torch
from torch.nn.parameter import Parameter, UninitializedParameter, _ParameterMeta

from memplan import compat
from memplan.workload import TrainConfig

MLP = "fixtures/models/mlp.py"


def _old_instancecheck(cls, instance):
    """torch < 2.5: the `_is_param` flag answers for Parameter and for all its subclasses."""
    return type.__instancecheck__(cls, instance) or (
        isinstance(instance, torch.Tensor) and getattr(instance, "_is_param", False))


@pytest.fixture
def old_torch_ddp(monkeypatch):
    compat.param_flag_passes_as_uninitialized.cache_clear()
    monkeypatch.setattr(_ParameterMeta, "__instancecheck__", _old_instancecheck)
    monkeypatch.setattr(compat, "ddp_has_init_sync", lambda: False)
    yield
    monkeypatch.undo()
    compat.param_flag_passes_as_uninitialized.cache_clear()


def _flagged():
    t = torch.empty(0)
    t._is_param = True
    return t


def test_flag_probe_answers_for_this_torch():
    assert compat.param_flag_passes_as_uninitialized() == isinstance(_flagged(), UninitializedParameter)


def test_exact_checks_while_active_only(old_torch_ddp):
    import torch.nn.parallel.distributed as ddp_mod

    assert compat.param_flag_passes_as_uninitialized()
    verify = ddp_mod._verify_param_shape_across_processes
    with compat.fake_ddp_init():
        assert not isinstance(_flagged(), UninitializedParameter)
        assert isinstance(_flagged(), Parameter)
        assert ddp_mod._verify_param_shape_across_processes is not verify
        assert ddp_mod._verify_param_shape_across_processes(None, []) is None
    assert isinstance(_flagged(), UninitializedParameter)   # the emulated old check is back
    assert ddp_mod._verify_param_shape_across_processes is verify


def test_fake_pg_ddp_trace_on_emulated_old_torch(monkeypatch):
    from memplan.distributed import estimate_per_rank

    cfg = TrainConfig(batch_size=8)
    now = estimate_per_rank(MLP, cfg, 2, "ddp")
    compat.param_flag_passes_as_uninitialized.cache_clear()
    monkeypatch.setattr(_ParameterMeta, "__instancecheck__", _old_instancecheck)
    monkeypatch.setattr(compat, "ddp_has_init_sync", lambda: False)
    try:
        old = estimate_per_rank(MLP, cfg, 2, "ddp")
    finally:
        monkeypatch.undo()
        compat.param_flag_passes_as_uninitialized.cache_clear()
    assert old.method == now.method == "trace"
    assert old.peak_allocated_bytes == now.peak_allocated_bytes
    assert [r["peak_allocated_bytes"] for r in old.per_rank] == [r["peak_allocated_bytes"] for r in now.per_rank]
