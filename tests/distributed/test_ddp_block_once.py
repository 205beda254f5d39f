"""DDP ranks block-once: the gradient buckets proven to repeat layer by layer (memplan.distributed._ddp_buckets),
the rank's trace byte-identical to tracing every layer (ZeRO-1 ranks: test_zero1_splice.py)."""
import random

import pytest
import torch
from conftest import rank_both, tiny_llama_config

from memplan.distributed._ddp_buckets import Assignment, assign, repeat_reason
from memplan.trace import blocks
from memplan.trace.blocks import same_trace

MIB = 1 << 20


@pytest.fixture(autouse=True)
def _block_once_from_4_layers(monkeypatch):
    monkeypatch.setattr(blocks, "MIN_LAYERS", 4)




# ---- the proof, on assignments ------------------------------------------------------------------------
def test_replay_matches_torchs_assignment():
    """`assign` cuts buckets as torch's own `_compute_bucket_assignment_by_size` does (mixed dtypes, the
    small first bucket, a tensor alone over the limit, one unbounded limit)."""
    import torch.distributed as dist

    rng = random.Random(0)
    for limits in ([MIB, 25 * MIB], [1000, 5000], [2 ** 62], [64]):
        for _ in range(20):
            params = [torch.empty(rng.choice([1, 7, 100, 300, 1000, 70_000]),
                                  dtype=rng.choice([torch.float32, torch.bfloat16])) for _ in range(rng.randint(1, 40))]
            out = dist._compute_bucket_assignment_by_size(params, limits, [False] * len(params))
            want = sorted((tuple(b) for b in (out[0] if isinstance(out, tuple) else out)), key=min)
            got, _ = assign([p.numel() * p.element_size() for p in params], [str(p.dtype) for p in params], limits)
            assert got == want, (limits, [p.numel() for p in params])


def _model(layers: int, per_layer: list[int], limits, head=(4096,), tail=(2048, 4096)) -> Assignment:
    """Parameters in DDP's order: embeddings, `layers` identical layers, a final norm and head."""
    names, nbytes = [f"embed.{i}" for i in range(len(head))], list(head)
    for k in range(layers):
        names += [f"model.layers.{k}.p{j}" for j in range(len(per_layer))]
        nbytes += per_layer
    names += [f"head.{i}" for i in range(len(tail))]
    nbytes += list(tail)
    keys = ["f32"] * len(nbytes)
    buckets, _ = assign(nbytes, keys, limits)
    return Assignment(tuple(names), tuple(nbytes), tuple(keys), (False,) * len(nbytes), tuple(limits), tuple(buckets))


def test_one_bucket_per_dtype_repeats():
    """torch 2.13 without find_unused_parameters: one limit, sys.maxsize: one bucket, growing per layer."""
    assert repeat_reason(_model(3, [1000, 3000, 24], [2 ** 62]), "model.layers", 32, 0) == ""


def test_a_bucket_per_large_tensor_repeats():
    """Each layer's large tensors close a bucket each; the small ones after them stay open into the next
    layer by the same bytes every time: the same cut entering every layer."""
    assert repeat_reason(_model(3, [5000, 5000, 24, 24], [1000, 4000]), "model.layers", 80, 0) == ""


def test_buckets_across_layers_do_not_repeat():
    """Layers smaller than the limit: a bucket closes in a different place in each layer."""
    why = repeat_reason(_model(4, [1000, 1000, 24], [2048, 5000]), "model.layers", 32, 0)
    assert "cut at different places in different layers" in why


def test_one_bucket_that_would_be_cut_at_the_full_depth():
    """One bucket at the reduced depth whose bytes reach the limit at the full depth: not proven."""
    small = _model(3, [100, 100], [20_000])
    assert len(small.buckets) == 1
    assert repeat_reason(small, "model.layers", 20, 0) == ""
    assert "cut at different places" in repeat_reason(small, "model.layers", 60, 0)


def test_an_assignment_the_replay_does_not_give_is_not_proven():
    a = _model(3, [1000, 3000], [2 ** 62])
    other = Assignment(a.names, a.nbytes, a.keys, a.sparse, a.limits, ((0,), tuple(range(1, len(a.names)))))
    assert "not the size-greedy one" in repeat_reason(other, "model.layers", 32, 0)


# ---- ranks --------------------------------------------------------------------------------------------
def _rank_both(workload, cfg, sharding="ddp", rank=0):
    return rank_both(workload, cfg, sharding, rank)


def test_ddp_rank_block_once_is_byte_identical(tmp_path):
    from memplan.core.analyze import load_workload
    from memplan.workload import TrainConfig

    workload = load_workload(hf_config=tiny_llama_config(tmp_path))
    fast, full, info, full_info = _rank_both(workload, TrainConfig(batch_size=1, seq_len=16))
    assert fast.mode == "block-once", fast.mode_reason
    assert "traced 1, 2 and 3 layers" in fast.mode_reason and "buckets proven to repeat" in fast.mode_reason
    assert same_trace(fast, full) and info == full_info


def test_ddp_estimate_says_block_once(tmp_path):
    from memplan.core.analyze import load_workload
    from memplan.distributed import estimate_per_rank
    from memplan.workload import TrainConfig

    workload = load_workload(hf_config=tiny_llama_config(tmp_path))
    cfg = TrainConfig(batch_size=1, seq_len=16)
    fast = estimate_per_rank(workload, cfg, 8, "ddp", "910B3")
    full = estimate_per_rank(workload, cfg, 8, "ddp", "910B3", full_trace=True)
    assert fast.trace_mode == "block-once" and "buckets proven to repeat" in fast.trace_mode_reason
    assert fast.per_rank == full.per_rank and fast.notes == full.notes
    assert (fast.peak_allocated_bytes, fast.peak_reserved_bytes) == (full.peak_allocated_bytes,
                                                                     full.peak_reserved_bytes)


def _force_limits(monkeypatch, limits):
    """DDP's initial bucket limits as given (as with find_unused_parameters, or before torch 2.13)."""
    from torch.nn.parallel import distributed as ddp_mod

    cfg_cls = getattr(ddp_mod, "_BucketCapacityConfig", None)
    if cfg_cls is None or not hasattr(cfg_cls, "compute_bucket_size_limits"):
        pytest.skip("this torch computes DDP's bucket limits elsewhere")
    monkeypatch.setattr(cfg_cls, "compute_bucket_size_limits", lambda self, **kw: (list(limits), []))


@pytest.mark.parametrize("limits,proven", [((16384, 16384), True),
                                           pytest.param((100_000, 100_000), False, marks=pytest.mark.slow)], ids=str)
def test_ddp_rank_with_cut_buckets(tmp_path, monkeypatch, limits, proven):
    """Buckets cut inside the layers: block-once where the cut is the same entering every layer (each
    16 KiB projection closes a bucket; the norms' bytes stay open into the next layer), else the full
    trace with the reason; identical to tracing every layer either way."""
    from memplan.core.analyze import load_workload
    from memplan.workload import TrainConfig

    _force_limits(monkeypatch, limits)
    workload = load_workload(hf_config=tiny_llama_config(tmp_path))
    fast, full, info, full_info = _rank_both(workload, TrainConfig(batch_size=1, seq_len=16))
    assert fast.mode == ("block-once" if proven else "full"), fast.mode_reason
    if not proven:
        assert "cut at different places in different layers" in fast.mode_reason
    assert same_trace(fast, full) and info == full_info


@pytest.mark.slow
@pytest.mark.parametrize("kw", [dict(precision="bf16-amp", checkpoint=("model.layers.*",)),
                                dict(precision="bf16"), dict(optimizer="adafactor", clip_grad_norm=1.0),
                                dict(grad_accum=2)], ids=str)
def test_ddp_rank_block_once_across_options(tmp_path, kw):
    from memplan.core.analyze import load_workload
    from memplan.workload import TrainConfig

    workload = load_workload(hf_config=tiny_llama_config(tmp_path, layers=7))
    fast, full, info, full_info = _rank_both(workload, TrainConfig(batch_size=1, seq_len=16, **kw), rank=7)
    assert fast.mode == "block-once", fast.mode_reason
    assert same_trace(fast, full) and info == full_info
