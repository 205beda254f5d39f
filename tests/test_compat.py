"""memplan.compat: feature probes, the supported range, never-empty messages, transformers <-> torch."""
from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

from memplan import compat
from memplan.errors import UserError


def test_describe_is_never_empty():
    assert compat.describe(ImportError("")) == "ImportError"
    assert compat.describe(ImportError("  \n")) == "ImportError"
    assert compat.describe(ValueError("bad\nsecond line")) == "ValueError: bad"


def test_version_tuple():
    assert compat.version_tuple("2.1.2+cu121") == (2, 1, 2)
    assert compat.version_tuple("2.5.0a0+git123") == (2, 5, 0)
    assert compat.version_tuple("2.1.0.post12") == (2, 1, 0)


def test_aten_op_is_none_where_this_torch_lacks_the_operator():
    assert compat.aten_op("add", "Tensor") is torch.ops.aten.add.Tensor
    assert compat.aten_op("no_such_operator_in_any_torch") is None
    assert compat.aten_op("add", "no_such_overload") is None


def test_kernel_rules_skip_operators_an_old_torch_lacks():
    # torch 2.1-2.4 have no aten._safe_softmax and 2.1 no _scaled_dot_product_flash_attention_for_cpu:
    # the rule tables are built without them instead of failing at import (every trace failed on 2.1).
    # A fresh interpreter, so the rule tables of this process stay as they are.
    import subprocess
    import sys

    code = (
        "from memplan import compat\n"
        "real = compat.aten_op\n"
        "missing = {'_safe_softmax', '_scaled_dot_product_flash_attention_for_cpu'}\n"
        "compat.aten_op = lambda n, o='default': None if n in missing else real(n, o)\n"
        "from memplan.trace import kernels\n"
        "names = {str(op) for op in kernels.rules_for('cpu')}\n"
        "assert 'aten._safe_softmax.default' not in names, names\n"
        "assert 'aten.native_layer_norm.default' in names, names\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


def test_torch_below_the_floor_is_one_line(monkeypatch):
    monkeypatch.setattr(compat, "installed", lambda dist: "2.0.1" if dist == "torch" else None)
    with pytest.raises(UserError, match=r"^torch 2\.0\.1 is not supported: memplan supports torch 2\.1 to"):
        compat.check_torch()


def test_cli_refuses_an_unsupported_torch_with_exit_2(monkeypatch):
    from memplan.cli.main import cli

    monkeypatch.setattr(compat, "installed", lambda dist: "1.13.1" if dist == "torch" else None)
    res = CliRunner().invoke(cli, ["analyze", "fixtures/models/mlp.py"])
    assert res.exit_code == 2
    assert "torch 1.13.1 is not supported" in res.output and "Traceback" not in res.output
    assert CliRunner().invoke(cli, ["devices"]).exit_code == 0   # torch-free commands still work


def test_transformers_mismatch_names_the_versions(monkeypatch):
    versions = {"transformers": "5.18.0", "torch": "2.4.1"}
    monkeypatch.setattr(compat, "installed", versions.get)
    monkeypatch.setattr(compat, "_declared_torch_floor", lambda dist: (2, 5))
    line = compat.transformers_mismatch()
    assert "transformers 5.18.0 needs torch>=2.5 but torch 2.4.1 is installed" in line
    versions["torch"] = "2.6.0"
    assert compat.transformers_mismatch() is None


def test_build_model_import_error_is_never_empty(monkeypatch, tmp_path):
    from memplan import api

    f = tmp_path / "m.py"
    f.write_text("def build_model():\n    raise ImportError('')\n\ndef make_batch(n):\n    return None\n")
    monkeypatch.setattr(compat, "transformers_mismatch", lambda: None)
    with pytest.raises(UserError, match=r"build_model\(\) raised ImportError$"):
        api.analyze(str(f), batch_size=1, fallback=False)
    monkeypatch.setattr(compat, "transformers_mismatch", lambda: "transformers 5 needs torch>=2.5")
    with pytest.raises(UserError, match=r"raised ImportError; transformers 5 needs torch>=2.5$"):
        api.analyze(str(f), batch_size=1, fallback=False)


def test_probes_answer_for_this_torch():
    assert callable(compat.op_name_getter())
    assert compat.op_name_getter()(torch.ops.aten.add.Tensor) == "add"
    assert compat.has_adafactor() == hasattr(torch.optim, "Adafactor")
    assert isinstance(compat.fused_on_cpu("AdamW"), bool)
    assert isinstance(compat.sdpa_has_enable_gqa(), bool)
    assert isinstance(compat.storage_pyobject_preserved(), bool)
    assert "is not in torch" in compat.missing("torch.optim.Foo", "use bar")


def test_missing_optimizer_is_one_line_not_the_users_fault(monkeypatch, model_path):
    from memplan import api

    if hasattr(torch.optim, "Adafactor"):
        monkeypatch.delattr(torch.optim, "Adafactor")
    with pytest.raises(UserError, match=r"^torch\.optim\.Adafactor is not in torch .*; choose another --optimizer$"):
        api.analyze(model_path("mlp"), batch_size=2, optimizer="adafactor", fallback=False)


def test_fused_without_a_cpu_kernel_is_one_line(monkeypatch, model_path):
    from memplan import api

    monkeypatch.setattr(compat, "fused_on_cpu", lambda cls: False)
    with pytest.raises(UserError, match=r"^a CPU fused torch\.optim\.AdamW kernel .* is not in torch .*foreach"):
        api.analyze(model_path("mlp"), batch_size=2, optimizer_impl="fused", fallback=False)
"""Module.to / casts on fake parameters while tracing (memplan.compat.fake_module_conversion)."""


def test_module_to_on_fake_parameters_keeps_ties_and_identity():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from memplan.compat import fake_module_conversion

    with fake_module_conversion(), FakeTensorMode():
        emb = torch.nn.Embedding(10, 4)
        head = torch.nn.Linear(4, 10, bias=False)
        head.weight = emb.weight
        model = torch.nn.Sequential(emb, head)
        same = model[1].weight
        model.to("cpu")                                   # nothing changes: the very same parameter
        assert model[1].weight is same
        model.to(torch.bfloat16)
        assert model[0].weight.dtype == torch.bfloat16 and model[0].weight is model[1].weight


def test_torch_without_swap_tensors_traces(monkeypatch):
    """torch 2.1/2.2 have no `torch.utils.swap_tensors` (nor swap parameters with it): the trace's
    no-op-swap patch stands aside instead of failing every trace with AttributeError."""
    from memplan.trace import composites

    orig = torch.utils.swap_tensors
    monkeypatch.setattr(compat, "has_swap_tensors", lambda: False)
    monkeypatch.delattr(torch.utils, "swap_tensors")
    with composites.unchanged_conversions():
        assert not hasattr(torch.utils, "swap_tensors")
    monkeypatch.undo()
    assert torch.utils.swap_tensors is orig


def test_fsdp2_storage_hooks_by_either_name(monkeypatch):
    """FSDP2's storage helpers are alloc_storage / free_storage from torch 2.4 and unsafe_alloc_storage /
    unsafe_free_storage in 2.3: the fake-process-group trace hooks whichever this torch has."""
    compat.fsdp2_storage_hooks.cache_clear()
    hooks = compat.fsdp2_storage_hooks()
    if compat.fully_shard() is None:
        assert hooks == ()
        return
    assert {kind for _, _, kind in hooks} == {"alloc", "free"}
    param_mod = hooks[0][0]
    for name in ("alloc_storage", "free_storage"):   # as torch 2.3 names them
        monkeypatch.setattr(param_mod, "unsafe_" + name, getattr(param_mod, name), raising=False)
        monkeypatch.delattr(param_mod, name)
    compat.fsdp2_storage_hooks.cache_clear()
    try:
        names = {name for m, name, _ in compat.fsdp2_storage_hooks() if m is param_mod}
        assert names == {"unsafe_alloc_storage", "unsafe_free_storage"}
    finally:
        monkeypatch.undo()
        compat.fsdp2_storage_hooks.cache_clear()
