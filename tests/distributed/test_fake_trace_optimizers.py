"""Optimizers under every sharding on the fake process group: a value read from a DTensor (`.item()` of a
sharded parameter's norm) is answered as on one device, and an op that DTensor itself refuses is reported as
the training step's failure -- the one a real run of the same step meets -- not as memplan's."""
import textwrap

import pytest
import torch

from memplan.errors import TraceError
from memplan.workload import TrainConfig

MLP = "fixtures/models/mlp.py"
SHARDINGS = ("ddp", "zero1", "zero2", "zero3", "fsdp", "fsdp1")


def _estimate(model, sharding, **kw):
    from memplan.distributed import estimate_per_rank

    return estimate_per_rank(model, TrainConfig(batch_size=4, **kw), 2, sharding)


def _norm_scaled_sgd(tmp_path, read: bool):
    """A model file whose optimizer scales each update by `p.norm().item()` (as LAMB-like trust ratios do),
    or by a constant: the same allocations either way."""
    scale = "p.norm().item() + 1.0" if read else "1.0"
    body = f'''
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 128), nn.GELU(),
                                         nn.Linear(128, 10))

            def forward(self, x, y=None):
                return self.net(x)

        def build_model():
            return Net()

        def make_batch(batch_size):
            return torch.randn(batch_size, 64), torch.randint(0, 10, (batch_size,))

        class NormScaled(torch.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, dict(lr=1e-3))

            @torch.no_grad()
            def step(self):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.add_(p.grad, alpha=-group["lr"] / ({scale}))

        def make_optimizer(params):
            return NormScaled(params)
    '''
    path = tmp_path / f"norm_scaled_{int(read)}.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


@pytest.mark.parametrize("sharding", ("zero3", pytest.param("zero2", marks=pytest.mark.slow)))
def test_item_of_a_dtensor_is_answered_as_on_one_device(tmp_path, sharding):
    """`.item()` of a sharded parameter's norm (a DTensor with a partial placement) used to fail the trace
    with `aten._local_scalar_dense`; it is answered 0, counted in the notes, and allocates nothing: the
    estimate equals the same optimizer's without the read."""
    reading = _estimate(_norm_scaled_sgd(tmp_path, True), sharding)
    plain = _estimate(_norm_scaled_sgd(tmp_path, False), sharding)
    assert reading.peak_allocated_bytes == plain.peak_allocated_bytes
    assert [r["peak_allocated_bytes"] for r in reading.per_rank] == [r["peak_allocated_bytes"] for r in plain.per_rank]
    assert any(".item()" in n for n in reading.notes) and not any(".item()" in n for n in plain.notes)


def _real_adafactor_step_error() -> str | None:
    """One real torch.optim.Adafactor step on FSDP2-sharded real tensors (fake process group: collectives
    are no-ops): the error a real run meets, or None."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    from memplan import compat
    from memplan.distributed._fake_trace import fake_process_group

    if not compat.has_adafactor():
        pytest.skip("this torch has no torch.optim.Adafactor")
    from torch.distributed.fsdp import fully_shard

    with fake_process_group(2, 0):
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8))
        fully_shard(model, mesh=init_device_mesh("cpu", (2,)))
        opt = torch.optim.Adafactor(model.parameters(), lr=1e-2)
        model(torch.randn(4, 16)).sum().backward()
        try:
            opt.step()
        except RuntimeError as exc:
            return str(exc).splitlines()[0]
        finally:
            assert dist.is_initialized()
    return None


def test_adafactor_under_fsdp2_matches_a_real_step():
    """Adafactor on FSDP2's DTensors: the trace gets past the `.item()` reads; where a real step with this
    torch raises (DTensor refuses the in-place op on a partial norm), memplan says so, as the step's failure;
    where it does not, the trace gives an estimate."""
    real = _real_adafactor_step_error()
    if real is None:
        est = _estimate(MLP, "zero3", optimizer="adafactor")
        assert est.peak_allocated_bytes > 0
        return
    with pytest.raises(TraceError) as err:
        _estimate(MLP, "zero3", optimizer="adafactor")
    msg = str(err.value)
    assert "_local_scalar_dense" not in msg and "cannot be traced on fake tensors" not in msg
    assert msg.startswith("the training step raised RuntimeError during optimizer: ")
    assert real in msg and "a real run fails the same way" in msg and err.value.op is None


def test_adafactor_under_fsdp2_cli_exit_code():
    """The CLI's answer: one line, exit code 2 (bad input), no traceback."""
    from click.testing import CliRunner

    from memplan.cli.main import cli

    res = CliRunner().invoke(cli, ["analyze", MLP, "--optimizer", "adafactor", "--world-size", "4",
                                    "--sharding", "zero3"])
    if _real_adafactor_step_error() is None:
        assert res.exit_code == 0, res.output
        return
    assert res.exit_code == 2, res.output
    lines = [l for l in res.output.splitlines() if l.strip()]
    assert len(lines) == 1 and "a real run fails the same way" in lines[0] and "Traceback" not in res.output


@pytest.mark.parametrize("sharding", ("ddp", "zero1", pytest.param("fsdp1", marks=pytest.mark.slow)))
def test_adafactor_on_plain_tensor_shardings(sharding):
    """DDP, ZeRO-1 and FSDP1 step plain tensors: Adafactor's reads are answered 0 and the rank is estimated,
    with less optimizer state than AdamW's."""
    ada = _estimate(MLP, sharding, optimizer="adafactor")
    adamw = _estimate(MLP, sharding)
    state = [e.per_rank[0]["breakdown_at_peak"]["optimizer_state"] for e in (ada, adamw)]
    assert 0 < state[0] < state[1]
    assert any(".item()" in n for n in ada.notes)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ("adamw", "adam", "sgd", "adafactor", "adamw-8bit"))
@pytest.mark.parametrize("sharding", SHARDINGS)
def test_optimizer_sharding_matrix(optimizer, sharding):
    """Every optimizer memplan offers under every sharding: an estimate, or (Adafactor on FSDP2's DTensors,
    where a real step raises too) the step's failure with the reason -- never a fake-tensor read error."""
    try:
        est = _estimate(MLP, sharding, optimizer=optimizer)
    except TraceError as exc:
        assert optimizer == "adafactor" and sharding in ("zero2", "zero3", "fsdp"), exc
        assert "a real run fails the same way" in str(exc) and _real_adafactor_step_error() is not None
        return
    assert est.peak_allocated_bytes > 0 and len(est.per_rank) >= 1


def test_rank_hooks_drop_build_time_shadows_as_on_one_device():
    """The distributed tracer's hooks tell the recording mode the model is built, as the one-device hooks do
    (build-time float shadows, e.g. stochastic-depth rates, are dropped before the step)."""
    import torch

    from memplan.distributed._fake_trace import _DistTraceHooks
    from memplan.trace.recorder import Recorder

    class Mode:
        built = 0

        def model_built(self):
            self.built += 1

    hooks = _DistTraceHooks(Recorder())
    hooks.mode = Mode()
    hooks.model_built(torch.nn.Linear(2, 2))
    assert hooks.mode.built == 1
