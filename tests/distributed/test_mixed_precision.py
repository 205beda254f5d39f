"""FSDP's mixed precision (bf16-mp: FSDP2 MixedPrecisionPolicy) next to autocast, and autocast's
weight-cast cache over FSDP's all-gathered parameters."""
import json

import pytest
from click.testing import CliRunner

from memplan.errors import UserError
from memplan.workload import TrainConfig, check_precision_sharding

MLP = "fixtures/models/mlp.py"
MLP_PARAMS = 9_648_228          # 4 Linear layers of fixtures/models/mlp.py, weights and biases


def test_bf16_mp_needs_an_fsdp_sharding():
    check_precision_sharding("bf16-mp", "zero3")
    check_precision_sharding("bf16-amp", None)
    for sh in (None, "ddp", "zero1"):
        with pytest.raises(UserError, match="FSDP's mixed-precision policy"):
            check_precision_sharding("bf16-mp", sh)


def test_reduce_dtype_and_cache_flags_are_checked():
    TrainConfig(precision="bf16-mp", reduce_dtype="fp32").validate()
    TrainConfig(precision="bf16-amp", autocast_cache=False).validate()
    with pytest.raises(UserError, match="reduce dtype"):
        TrainConfig(precision="bf16-amp", reduce_dtype="fp32").validate()
    with pytest.raises(UserError, match="autocast precision"):
        TrainConfig(precision="fp32", autocast_cache=False).validate()
    assert TrainConfig(precision="bf16-mp", reduce_dtype="fp32").to_dict()["reduce_dtype"] == "fp32"
    assert "autocast_cache" not in TrainConfig().to_dict()       # defaults keep the JSON as it was


def test_cli_bad_precision_sharding_is_one_line_exit_2():
    from memplan.cli.main import cli

    for args in (["analyze", MLP, "--precision", "bf16-mp"],
                 ["analyze", MLP, "--precision", "bf16-mp", "--world-size", "2", "--sharding", "ddp"],
                 ["analyze", MLP, "--reduce-dtype", "fp32"],
                 ["shard", "estimate", MLP, "--precision", "fp32", "--no-autocast-cache"]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 2, (args, res.output)
        assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output, res.output


def test_autocast_cache_holds_gathered_weights_in_forward():
    """Traced on the fake process group (zero3, 2 ranks, checkpointed layers): the cache adds to the
    forward peak only; FSDP's policy gathers bf16 parameters and is lower still; an fp32 reduce dtype
    costs fp32 reduce-scatter inputs in backward."""
    from memplan.distributed import estimate_per_rank

    def est(**kw):
        e = estimate_per_rank(MLP, TrainConfig(batch_size=8, checkpoint=("net.*",), **kw), 2, "zero3", ranks=(0,))
        return e, e.per_rank[0]["phase_peaks"]

    amp, p_amp = est(precision="bf16-amp")
    _, p_off = est(precision="bf16-amp", autocast_cache=False)
    mp, p_mp = est(precision="bf16-mp")
    _, p_mp32 = est(precision="bf16-mp", reduce_dtype="fp32")
    assert 0 < p_amp["forward"] - p_off["forward"] <= 2 * MLP_PARAMS
    assert p_amp["backward"] == p_off["backward"]
    assert p_mp["forward"] < p_off["forward"] and p_mp["backward"] < p_mp32["backward"]
    assert any("weight-cast cache" in n and "18.40 MiB" in n for n in amp.notes)   # 2 x MLP_PARAMS bytes
    assert mp.strategy_info["mp_policy"] == "MixedPrecisionPolicy(param_dtype=torch.bfloat16)"
    assert not any("weight-cast cache" in n for n in mp.notes)


def test_model_method_gathers_bf16_under_the_policy():
    from memplan.distributed import strategies as S

    p = [S.ParamInfo("w", 100, 4, 10, True)]
    states = [S.PhaseState("forward", 1000, {"parameters": 400})]
    full = S.model_rank_bytes(states, p, "zero2", 2, 0, None)["components"]["unsharded_parameters"]
    half = S.model_rank_bytes(states, p, "zero2", 2, 0, None, gather_ratio=0.5)["components"]["unsharded_parameters"]
    assert (full, half) == (400, 200)
    assert S.single_device_config(TrainConfig(precision="bf16-mp")).precision == "bf16-amp"
    assert not S.single_device_config(TrainConfig(precision="bf16-mp")).autocast_cache


def test_precision_changes_are_retraced_alternatives():
    from types import SimpleNamespace

    from memplan.distributed.mixed_precision import precision_changes

    seen = []

    def fake_estimate(cfg):
        seen.append(cfg)
        return SimpleNamespace(device_total_bytes=60 if cfg.precision == "bf16-mp" else 80)

    cfg = TrainConfig(precision="bf16-amp")
    ch = precision_changes(fake_estimate, cfg, "zero3", 100, 70)
    assert [c.id for c in ch] == ["fsdp-mixed-precision", "autocast-no-cache"]
    assert [c.saving_bytes for c in ch] == [40, 20] and [c.fits for c in ch] == [True, False]
    assert all(c.method == "trace" and c.kind == "precision" for c in ch)
    assert seen[0].reduce_dtype == "fp32" and seen[1].autocast_cache is False
    assert precision_changes(fake_estimate, cfg, "ddp", 100, 70) == []
    assert precision_changes(fake_estimate, cfg.with_(autocast_cache=False), "zero3", 100, 70) == []


def test_cli_shard_estimate_bf16_mp_json():
    from memplan.cli.main import cli

    res = CliRunner().invoke(cli, ["shard", "estimate", MLP, "--world-size", "2", "--sharding", "zero2", "-b", "8",
                                   "--precision", "bf16-mp", "--reduce-dtype", "fp32", "--format", "json"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["config"]["precision"] == "bf16-mp" and d["config"]["reduce_dtype"] == "fp32"
    assert "reduce_dtype=torch.float32" in d["strategy_info"]["mp_policy"]


@pytest.mark.slow
def test_fsdp_mixed_precision_two_gloo_ranks_within_half_percent():
    """The real FSDP2 MixedPrecisionPolicy and uncached autocast on 2 gloo ranks vs their traces."""
    from memplan.distributed import validate_distributed

    for kw in ({"precision": "bf16-mp", "reduce_dtype": "fp32"}, {"precision": "bf16-amp", "autocast_cache": False},
               {"precision": "bf16-amp"}):
        v = validate_distributed(MLP, TrainConfig(batch_size=8, checkpoint=("net.*",), **kw), 2, "zero3", "cpu",
                                 timeout_s=300)
        assert not v.errors, v.errors
        for r in v.ranks:
            assert abs(r["error_pct"]) <= 0.5, (kw, r)


def test_trainer_args_fsdp_bf16_maps_to_accelerates_policy():
    from memplan.configs import read_train_config

    job = read_train_config("fixtures/train_configs/trainer_args_fsdp.json")
    assert job.sharding == "zero3" and job.train.precision == "bf16-amp"   # one device: autocast, as before
    per_rank = job.per_rank_config(job.train, "zero3")
    assert (per_rank.precision, per_rank.reduce_dtype, per_rank.mp_autocast) == ("bf16-mp", "bf16", True)
    assert job.per_rank_config(job.train, "ddp") == job.train
    assert any(u.key == "fsdp + bf16" and "MixedPrecisionPolicy" in u.maps_to for u in job.used)


def test_fsdp1_views_are_not_cached_and_its_policy_is_traced():
    """FSDP1's unsharded parameters are views of its flat parameter: autocast's cache skips them."""
    from memplan.distributed import estimate_per_rank

    def est(**kw):
        return estimate_per_rank(MLP, TrainConfig(batch_size=8, checkpoint=("net.*",), **kw), 2, "fsdp1", ranks=(0,))

    on, off, mp = est(precision="bf16-amp"), est(precision="bf16-amp", autocast_cache=False), est(precision="bf16-mp")
    assert on.per_rank[0]["phase_peaks"] == off.per_rank[0]["phase_peaks"]
    assert not any("weight-cast cache" in n for n in on.notes)
    assert mp.strategy_info["mp_policy"] == "MixedPrecision(param_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)"
    assert mp.peak_allocated_bytes < on.peak_allocated_bytes
    assert "FSDP1" in mp.method_note


@pytest.mark.slow
def test_fsdp1_mixed_precision_two_gloo_ranks_within_half_percent():
    from memplan.distributed import validate_distributed

    v = validate_distributed(MLP, TrainConfig(batch_size=8, precision="bf16-mp", reduce_dtype="fp32"), 2, "fsdp1",
                             "cpu", timeout_s=300)
    assert not v.errors, v.errors
    for r in v.ranks:
        assert abs(r["error_pct"]) <= 0.5, r


@pytest.mark.slow
def test_shard_plan_offers_the_retraced_alternatives_to_autocast_over_fsdp():
    from memplan.distributed import choose_sharding
    from memplan.report.shard_text import render_sharding_plan

    cfg = TrainConfig(batch_size=8, precision="bf16-amp", checkpoint=("net.*",))
    plan = choose_sharding(MLP, cfg, 2, "1GiB", shardings=("zero3",))
    assert plan.fits and plan.sharding == "zero3"
    base = plan.predicted["device_total_bytes"]
    ids = [c["id"] for c in plan.precision_changes]
    assert ids == ["fsdp-mixed-precision", "autocast-no-cache"]
    for c in plan.precision_changes:
        assert c["method"] == "trace" and c["fits"] is True
        assert c["predicted_total_bytes"] + c["saving_bytes"] == base
    assert plan.precision_changes[0]["predicted_total_bytes"] < base
    assert "instead of autocast over FSDP" in render_sharding_plan(plan)
    mp = choose_sharding(MLP, cfg.with_(precision="bf16-mp", checkpoint=()), 2, "1GiB", shardings=("ddp", "zero3"))
    assert mp.sharding == "zero3" and not mp.precision_changes        # bf16-mp: FSDP shardings only
    assert any("mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16)" in line for line in mp.code)


@pytest.mark.slow
def test_cli_trainer_config_fsdp_bf16_runs_accelerates_policy_per_rank():
    from memplan.cli.main import cli

    res = CliRunner().invoke(cli, ["analyze", "--hf-config", "fixtures/hf/llama_small.json", "--seq-len", "64",
                                   "--train-config", "fixtures/train_configs/trainer_args_fsdp.json",
                                   "--world-size", "2", "--format", "json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["sharding"] == "zero3" and d["config"]["precision"] == "bf16-mp" and d["config"]["mp_autocast"]
    assert d["strategy_info"]["mp_policy"] == ("MixedPrecisionPolicy(param_dtype=torch.bfloat16, "
                                               "reduce_dtype=torch.bfloat16)")
