"""The planner on small workloads with a capacity budget: its answers are re-traced and hold."""
import json

import pytest
import torch
from click.testing import CliRunner
from torch import nn

from memplan import api
from memplan.plan import plan
from memplan.plan.evaluate import Evaluator
from memplan.plan.policy import choose_alloc_conf
from memplan.workload import TrainConfig, Workload

MLP = "fixtures/models/mlp.py"


def _stack_workload():
    """Activation-heavy: 4 wide blocks on a small input, so checkpointing matters."""

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Linear(64, 1024)
            self.act = nn.GELU()
            self.down = nn.Linear(1024, 64)

        def forward(self, x):
            return x + self.down(self.act(self.up(x)))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList(Block() for _ in range(4))
            self.head = nn.Linear(64, 1)

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.head(x)

    return Workload.from_callables(Net, lambda n: torch.randn(n, 512, 64), name="stack")


@pytest.fixture(scope="module")
def mlp_base():
    return api.analyze(MLP, batch_size=1)


def test_largest_batch_fits_and_the_next_does_not(mlp_base):
    per_sample = api.analyze(MLP, batch_size=2).peak_allocated_bytes - mlp_base.peak_allocated_bytes
    cap = int((mlp_base.peak_allocated_bytes + 40 * max(per_sample, 1)) / 0.95)
    p = plan(MLP, capacity=cap, thorough=False, maximize_batch=True)
    assert p.fits and p.batch_size is not None and p.batch_size > 1
    assert p.predicted.device_total_bytes <= p.budget_bytes
    nxt = api.analyze(MLP, batch_size=p.batch_size + 1)
    assert nxt.device_total_bytes > p.budget_bytes
    assert p.batch_search.n_probes <= 6                 # two small traces + verification, not a sweep
    d = p.to_dict()
    for key in ("batch_size", "grad_accum_steps", "checkpoint", "env", "predicted", "changes", "fits", "snippet"):
        assert key in d
    json.dumps(d, default=str)


def test_checkpointing_when_batch_one_does_not_fit():
    w = _stack_workload()
    base = api.analyze(w, batch_size=1)
    acts = base.breakdown_at_peak.get("activations", 0)
    assert acts > 0
    cap = int((base.device_total_bytes - 0.5 * acts) / 0.95)
    p = plan(w, config=TrainConfig(batch_size=1), capacity=cap, thorough=True, same_math_only=True)
    assert p.fits, p.notes
    cp = p.checkpointing
    assert cp is not None and cp.chosen and p.checkpoint
    chosen = {s.name: s for s in cp.strategies}
    assert chosen["none"].fits is False
    assert chosen["chosen"].method == "trace" and chosen["chosen"].fits
    if "every block" in chosen and chosen["every block"].fits:
        assert chosen["chosen"].recompute_flops <= chosen["every block"].recompute_flops
    # the exact names are real submodules, and the re-trace used them
    names = {n for n, _ in w.build_model().named_modules()}
    assert set(p.checkpoint) <= names
    assert p.predicted.config["checkpoint"] == list(p.checkpoint)
    assert "use_reentrant=False" in p.snippet


@pytest.mark.slow
def test_target_global_batch_uses_accumulation(mlp_base):
    cap = int(mlp_base.device_total_bytes * 1.02 / 0.95)
    p = plan(MLP, capacity=cap, target_global_batch=64, dp_size=2, thorough=False)
    assert p.fits
    a = p.accumulation
    assert a.dp_size * a.grad_accum_steps * a.micro_batch == a.global_batch >= 64
    assert p.grad_accum_steps == a.grad_accum_steps and p.batch_size == a.micro_batch


def test_nothing_fits_says_what_would(mlp_base):
    p = plan(MLP, capacity=mlp_base.device_total_bytes // 4, thorough=False, same_math_only=True)
    assert not p.fits and p.predicted is None
    n = p.if_nothing_fits
    assert n["sharding"] is None or n["sharding"]["devices"] >= 2
    assert n["bigger_devices"] or n["sharding"]


def test_alloc_policy_on_npu_respects_exclusions(mlp_base):
    w = api.load_workload(MLP)
    dev = api.resolve_device("910B3")
    ev = Evaluator(w, dev, dev.capacity_bytes)
    pol = choose_alloc_conf(ev, TrainConfig(batch_size=1))
    st = {t.conf: t for t in pol.trials}
    assert st["expandable_segments:True,max_split_size_mb:512"].status == "excluded"
    assert st["garbage_collection_threshold:0.8"].status == "no effect"
    assert pol.env_var == "PYTORCH_NPU_ALLOC_CONF"
    if pol.best is not None:
        assert st[pol.best].device_total_bytes < st[""].device_total_bytes
    assert ev.n_traces == 1                             # candidates are replays of one trace


def test_cli_json_and_exit_codes(mlp_base):
    from memplan.cli.main import cli

    runner = CliRunner()
    cap = str(mlp_base.device_total_bytes // 4)
    r = runner.invoke(cli, ["plan", MLP, "--capacity", cap, "--fast", "--same-math-only", "--format", "json"],
                      catch_exceptions=False)
    assert r.exit_code == 1, r.output
    d = json.loads(r.output)
    assert d["command"] == "plan" and d["fits"] is False and d["schema_version"] == 1
    for key in ("batch_size", "grad_accum_steps", "checkpoint", "env", "predicted", "changes", "if_nothing_fits"):
        assert key in d
    r = runner.invoke(cli, ["plan", MLP], catch_exceptions=False)
    assert r.exit_code == 2


@pytest.mark.slow
def test_cli_human_output_fits(mlp_base):
    from memplan.cli.main import cli

    cap = str(int(mlp_base.device_total_bytes * 1.05 / 0.95))
    r = CliRunner().invoke(cli, ["plan", MLP, "--capacity", cap, "--fast"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "Ready to paste:" in r.output and "micro_batch_size" in r.output
