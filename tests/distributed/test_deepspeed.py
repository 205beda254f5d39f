"""memplan.distributed.deepspeed: the ZeRO buffer arithmetic, checked against DeepSpeed's own formulas."""
import pytest

from memplan.configs.deepspeed import parse
from memplan.distributed.deepspeed import deepspeed_rank_bytes, largest_layer
from memplan.distributed.strategies import ParamInfo, PhaseState

PSI = 1_000_000
PARAMS = [ParamInfo(f"layers.{i}.w", PSI // 4, 2, 1000, True) for i in range(4)]
STATES = [PhaseState("forward", 2 * PSI + 5_000_000, {"parameters": 2 * PSI}),
          PhaseState("backward", 4 * PSI + 6_000_000, {"parameters": 2 * PSI, "gradients": 2 * PSI}),
          PhaseState("optimizer", 8 * PSI, {"parameters": 2 * PSI, "gradients": 2 * PSI, "optimizer_state": 4 * PSI})]


def ds(**zero):
    return parse({"bf16": {"enabled": True}, "zero_optimization": zero}, "<test>")


def test_zero2_model_states_are_deepspeeds_2_plus_18_over_n():
    n = 4
    e = deepspeed_rank_bytes(STATES, PARAMS, ds(stage=2, reduce_bucket_size=1000), n)
    opt = e.phase_components["optimizer"]
    states = sum(opt[k] for k in ("weights_16bit", "fp32_master_weights", "optimizer_moments", "gradients",
                                  "fp32_gradient_partition"))
    assert states == 2 * PSI + 18 * PSI // n == e.model_states["device_bytes"]
    assert e.phase_components["backward"]["reduce_buckets"] == 1000 * 2        # one bf16 bucket
    assert "gradients" not in e.phase_components["forward"]                     # dropped after the step
    assert e.host_bytes == 0


def test_overlap_comm_doubles_stage2_buckets_and_offload_moves_optimizer_to_host():
    n = 2
    e = deepspeed_rank_bytes(STATES, PARAMS, ds(stage=2, reduce_bucket_size=1000, overlap_comm=True,
                                                offload_optimizer={"device": "cpu"}), n)
    assert e.phase_components["backward"]["reduce_buckets"] == 2 * 1000 * 2
    assert e.host_components == {"fp32_master_weights": 4 * PSI // n, "optimizer_moments": 8 * PSI // n,
                                 "fp32_gradient_partition": 4 * PSI // n}
    assert "fp32_gradient_partition" not in e.phase_components["optimizer"]


def test_zero3_partitions_weights_and_keeps_one_persistent_bucket():
    n = 8
    e = deepspeed_rank_bytes(STATES, PARAMS, ds(stage=3, reduce_bucket_size=1000, stage3_prefetch_bucket_size=0),
                             n, units=[[p.name] for p in PARAMS])
    for phase in ("forward", "backward", "optimizer"):
        assert e.phase_components[phase]["reduce_bucket"] == 2000
        assert e.phase_components[phase]["weights_16bit"] == 2 * PSI // n
    assert e.phase_components["forward"]["gathered_parameters"] == 2 * (PSI // 4)   # one unit, no prefetch
    assert e.model_states["device_bytes"] == 4 * (PSI // 4) + 18 * PSI // n       # estimate_zero3_..., no offload
    off = deepspeed_rank_bytes(STATES, PARAMS, ds(stage=3, offload_param={"device": "cpu"},
                                                  offload_optimizer={"device": "cpu"}), n)
    assert off.host_components["weights_16bit"] == 2 * PSI // n


def test_largest_layer_counts_a_modules_own_parameters():
    ps = [ParamInfo("a.w", 10, 4, 1, True), ParamInfo("a.b", 5, 4, 1, True), ParamInfo("b.c.w", 12, 4, 1, True)]
    assert largest_layer(ps) == 15


def test_deepspeeds_own_estimators_agree_when_installed():
    dsm = pytest.importorskip("deepspeed.runtime.zero.stage_1_and_2", reason="deepspeed is not installed")
    _cpu, gpu = dsm.estimate_zero2_model_states_mem_needs(PSI, num_gpus_per_node=4, cpu_offload=False)
    assert deepspeed_rank_bytes(STATES, PARAMS, ds(stage=2), 4).model_states["device_bytes"] == gpu
