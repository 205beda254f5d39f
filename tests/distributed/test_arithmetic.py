"""Per-rank arithmetic: hand-computed bytes for a toy model, and the ZeRO paper's model-state formulas."""
import pytest

from memplan.distributed import strategies as S

LLAMA2_7B_PARAMS = 6_738_415_616   # LlamaForCausalLM from fixtures/hf/llama-2-7b.json (untied lm_head)


def toy_params():
    # Linear(10, 6) + Linear(6, 3): weights (6, 10), (3, 6); biases (6,), (3,); fp32
    return [S.ParamInfo("a.weight", 60, 4, 6, True), S.ParamInfo("a.bias", 6, 4, 6, True),
            S.ParamInfo("b.weight", 18, 4, 3, True), S.ParamInfo("b.bias", 3, 4, 3, True)]


def test_fsdp_shards_pad_dim0_to_a_multiple_of_the_ranks():
    p = toy_params()
    # 2 ranks: 6 rows -> 3 each; 3 rows -> 2 each (padded to 4)
    assert [x.shard_bytes(2) for x in p] == [3 * 10 * 4, 3 * 4, 2 * 6 * 4, 2 * 4]
    # 4 ranks: 6 rows -> 2 each (padded to 8); 3 rows -> 1 each
    assert [x.shard_bytes(4) for x in p] == [2 * 10 * 4, 2 * 4, 1 * 6 * 4, 1 * 4]


def test_zero1_partition_is_greedy_largest_first():
    # sorted: a.weight 60, b.weight 18, a.bias 6, b.bias 3 -> rank0 {60}, rank1 {18, 6, 3}
    assert S.zero1_partition(toy_params(), 2) == [60 * 4, (18 + 6 + 3) * 4]


def _states(P, G, O, rest_fwd, rest_bwd, rest_opt):
    return [S.PhaseState("forward", P + O + rest_fwd, {"parameters": P, "optimizer_state": O, "activations": rest_fwd}),
            S.PhaseState("backward", P + G + O + rest_bwd,
                         {"parameters": P, "gradients": G, "optimizer_state": O, "temporaries": rest_bwd}),
            S.PhaseState("optimizer", P + G + O + rest_opt,
                         {"parameters": P, "gradients": G, "optimizer_state": O, "temporaries": rest_opt})]


def test_model_rank_bytes_by_hand():
    params = toy_params()
    P = G = 87 * 4            # 348 bytes
    O = 2 * P                 # Adam m, v
    states = _states(P, G, O, rest_fwd=1000, rest_bwd=400, rest_opt=200)
    # DDP: everything + buckets (= P); forward 348+696+1000+348 = 2392, backward 348*2+696+400+348 = 2140
    ddp = S.model_rank_bytes(states, params, "ddp", 2)
    assert ddp["phase_totals"] == {"forward": 2392, "backward": 2140, "optimizer": 1940}
    assert ddp["peak_phase"] == "forward" and ddp["peak_bytes"] == 2392
    # ZeRO-1, rank 0 owns 240 of 348 bytes
    z1 = S.model_rank_bytes(states, params, "zero1", 2, rank=0)
    assert z1["phase_totals"]["forward"] == 348 + 480 + 1000 + 348
    assert z1["phase_totals"]["optimizer"] == 348 + 348 + 480 + round(200 * 240 / 348) + 348
    # ZeRO-3 with two units (a.*, b.*): U_max = 264; shards 120+12+48+8 = 188
    units = [["a.weight", "a.bias"], ["b.weight", "b.bias"]]
    z3 = S.model_rank_bytes(states, params, "zero3", 2, units=units)
    assert z3["phase_totals"]["forward"] == 188 + 0 + 348 + 1000 + 348        # 2 units unsharded = all 348
    assert z3["phase_totals"]["backward"] == 188 + 174 + 348 + 400 + 348 + 264
    assert z3["phase_totals"]["optimizer"] == 188 + 174 + 348 + 100


@pytest.mark.parametrize("stage,expected", [
    (0, 16 * LLAMA2_7B_PARAMS),
    (1, 4 * LLAMA2_7B_PARAMS + 12 * LLAMA2_7B_PARAMS // 8),        # 5.5 bytes/param
    (2, 2 * LLAMA2_7B_PARAMS + 14 * LLAMA2_7B_PARAMS // 8),        # 3.75 bytes/param
    (3, 16 * LLAMA2_7B_PARAMS // 8),                               # 2 bytes/param
])
def test_zero_paper_formulas_llama2_7b_on_8_ranks(stage, expected):
    assert S.zero_paper_bytes(LLAMA2_7B_PARAMS, stage, 8) == expected


def test_zero_paper_numbers_in_gb():
    gb = [S.zero_paper_bytes(LLAMA2_7B_PARAMS, s, 8) / 1e9 for s in range(4)]
    assert [round(x, 1) for x in gb] == [107.8, 37.1, 25.3, 13.5]


def test_llama2_7b_parameter_count_from_the_config():
    from memplan.api import load_workload
    from memplan.distributed.estimate import model_params
    from memplan.workload import TrainConfig

    wl = load_workload(None, "fixtures/hf/llama-2-7b.json")
    params, units, names = model_params(wl, TrainConfig(seq_len=16))
    assert sum(p.numel for p in params) == LLAMA2_7B_PARAMS
    assert len(names) == 32 and names[0] == "model.layers.0"


def test_master_weights_model_gives_the_paper_split_for_zero_stages():
    """bf16 params/grads + 12 bytes/param optimizer: per-rank model states equal the paper's formulas."""
    n, psi = 8, 1_000_000
    params = [S.ParamInfo(f"w{i}", psi // n, 2, 1000, True) for i in range(n)]   # splits evenly
    P = G = 2 * psi
    states = _states(P, G, 4 * psi, 0, 0, 0)
    for sh, stage in (("ddp", 0), ("zero1", 1), ("zero3", 3)):
        m = S.model_rank_bytes(states, params, sh, n, opt_state_bytes=12 * psi)["components"]
        ms = sum(m.get(k, 0) for k in ("parameters", "gradients", "optimizer_state"))
        assert ms == S.zero_paper_bytes(psi, stage, n), sh
    # zero2 in the optimizer phase: sharded params too (FSDP2 reshards after backward): (2+2+K)/N
    m = S.model_rank_bytes(states, params, "zero2", n, opt_state_bytes=12 * psi)
    assert m["phase_totals"]["optimizer"] == 16 * psi // n


def test_comm_buffers():
    b, note = S.comm_buffer_bytes("npu", communicators=1)
    assert b == 400 * 1000 * 1000 and "HCCL_BUFFSIZE" in note
    assert S.comm_buffer_bytes("cpu")[0] == 0
