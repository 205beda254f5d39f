"""ZeRO-1 ranks: forward and backward traced as a DDP rank (block-once where DDP's are), the optimizer phase of
the rank's own ZeroRedundancyOptimizer traced alone on every layer and spliced in (memplan.trace.optsplice) --
byte-identical to the full trace (every record, event, mark and note), or the full trace with the reason."""
import pytest
import torch
from conftest import rank_both, tiny_llama_config

from memplan.trace import blocks
from memplan.trace.blocks import same_trace


@pytest.fixture(autouse=True)
def _block_once_from_4_layers(monkeypatch):
    monkeypatch.setattr(blocks, "MIN_LAYERS", 4)


def _rank_both(workload, cfg, rank):
    return rank_both(workload, cfg, "zero1", rank)


def _tiny(tmp_path, layers):
    from memplan.core.analyze import load_workload

    tmp_path.mkdir(parents=True, exist_ok=True)
    return load_workload(hf_config=tiny_llama_config(tmp_path, layers=layers))


def _spliced(trace) -> bool:
    return "ZeroRedundancyOptimizer's step on this rank's partition" in trace.mode_reason


def test_zero1_rank_is_the_ddp_rank_with_its_optimizer_spliced_in(tmp_path):
    """Rank 7 identical to its full trace; what is spliced is the rank's own partition: ranks 0 and 7 hold
    state for other parameters (the greedy partition)."""
    from memplan.distributed._fake_trace import trace_rank
    from memplan.step import Target
    from memplan.workload import TrainConfig

    workload = _tiny(tmp_path, layers=4)
    cfg = TrainConfig(batch_size=1, seq_len=16, precision="bf16-amp", clip_grad_norm=1.0)
    fast, full, info, full_info = _rank_both(workload, cfg, rank=7)
    assert fast.mode == "block-once" and _spliced(fast), fast.mode_reason
    assert "traced 1, 2 and 3 layers" in fast.mode_reason and "buckets proven to repeat" in fast.mode_reason
    assert full.mode == "full" and full.mode_reason == "--full-trace"
    assert same_trace(fast, full) and info == full_info
    r0, _ = trace_rank(workload, cfg, "zero1", 8, 0, Target(family="npu", name="910B3"))
    state = [sorted((r.module, r.nbytes) for r in t.storages if r.category == "optimizer_state") for t in (r0, fast)]
    assert _spliced(r0) and state[0] and state[1] and state[0] != state[1]


@pytest.mark.slow
def test_zero1_estimate_is_the_full_traces(tmp_path):
    from memplan.distributed import estimate_per_rank
    from memplan.workload import TrainConfig

    workload, cfg = _tiny(tmp_path, layers=4), TrainConfig(batch_size=1, seq_len=16)
    fast = estimate_per_rank(workload, cfg, 8, "zero1", "910B3")
    full = estimate_per_rank(workload, cfg, 8, "zero1", "910B3", full_trace=True)
    assert fast.trace_mode == "block-once" and "spliced in" in fast.trace_mode_reason
    assert [r["rank"] for r in fast.per_rank] == [0, 7]
    assert fast.per_rank == full.per_rank and fast.notes == full.notes and fast.strategy_info == full.strategy_info


def test_zero1_rank_with_accumulation(tmp_path):
    """Two micro-steps, DDP reducing each: the optimizer phase after the last one, spliced."""
    from memplan.workload import TrainConfig

    fast, full, info, full_info = _rank_both(_tiny(tmp_path, layers=4), TrainConfig(batch_size=1, seq_len=16,
                                                                                     grad_accum=2), 7)
    assert fast.mode == "block-once" and _spliced(fast), fast.mode_reason
    assert same_trace(fast, full) and info == full_info


def test_a_grad_scaler_is_traced_in_full_with_the_reason(tmp_path):
    """Refused before anything is traced: a GradScaler unscales the gradients (not spliced)."""
    from memplan.distributed import estimate_per_rank
    from memplan.workload import TrainConfig

    est = estimate_per_rank(_tiny(tmp_path, layers=4), TrainConfig(batch_size=1, seq_len=16, precision="fp16-amp"),
                            8, "zero1", ranks=(7,))
    assert est.trace_mode == "full"
    assert est.trace_mode_reason == ("distributed (ZeRO-1): the optimizer splice is not proven: a GradScaler "
                                     "unscales gradients")


@pytest.mark.slow
@pytest.mark.parametrize("kw", [dict(precision="fp32"), dict(precision="bf16"),
                                dict(precision="bf16-amp", checkpoint=("model.layers.*",)),
                                dict(precision="fp32", clip_grad_norm=1.0, checkpoint=("model.layers.*",)),
                                dict(optimizer="sgd"), dict(optimizer="adam", optimizer_impl="for-loop"),
                                dict(precision="bf16-amp", grad_accum=3, clip_grad_norm=1.0)], ids=str)
@pytest.mark.parametrize("rank", [0, 7])
def test_zero1_rank_across_options(tmp_path, kw, rank):
    from memplan.workload import TrainConfig

    fast, full, info, full_info = _rank_both(_tiny(tmp_path, layers=7), TrainConfig(batch_size=1, seq_len=16, **kw),
                                             rank)
    assert fast.mode == "block-once" and _spliced(fast), fast.mode_reason
    assert same_trace(fast, full) and info == full_info


@pytest.mark.slow
def test_zero1_over_runs_of_layers_and_unproven_buckets(tmp_path, monkeypatch):
    """The DDP rank traced over runs of layers, or in full where its buckets are not proven to repeat: the
    optimizer still spliced onto it, identical to the full trace."""
    from memplan.workload import TrainConfig
    from test_ddp_block_once import _force_limits

    runs = TrainConfig(batch_size=1, seq_len=16, checkpoint=("model.layers.0", "model.layers.1.self_attn"))
    fast, full, info, full_info = _rank_both(_tiny(tmp_path / "runs", layers=16), runs, 7)
    assert fast.mode == "block-once" and "3 runs of identical layers" in fast.mode_reason and _spliced(fast)
    assert same_trace(fast, full) and info == full_info
    _force_limits(monkeypatch, (100_000, 100_000))
    fast, full, info, full_info = _rank_both(_tiny(tmp_path, layers=7), TrainConfig(batch_size=1, seq_len=16), 7)
    assert fast.mode == "full" and "cut at different places" in fast.mode_reason and _spliced(fast)
    assert same_trace(fast, full) and info == full_info


def test_no_repeated_layers_is_traced_in_full_at_once(tmp_path):
    """Runs of layers too short to gain: block-once's reason, no optimizer-only run spliced onto a full trace."""
    from memplan.distributed import estimate_per_rank
    from memplan.workload import TrainConfig

    cfg = TrainConfig(batch_size=1, seq_len=16, checkpoint=("model.layers.0", "model.layers.1.self_attn"))
    est = estimate_per_rank(_tiny(tmp_path, layers=4), cfg, 8, "zero1", ranks=(7,))
    assert est.trace_mode == "full" and "would not be faster" in est.trace_mode_reason
    assert "spliced" not in est.trace_mode_reason


@pytest.mark.slow
def test_notes_in_the_optimizer_phase_are_traced_in_full(tmp_path):
    """Adafactor reads `.item()` (answered 0, noted): the DDP trace's notes would hold its share; not spliced."""
    from memplan.workload import TrainConfig

    fast, full, info, full_info = _rank_both(_tiny(tmp_path, layers=4),
                                             TrainConfig(batch_size=1, seq_len=16, optimizer="adafactor"), 7)
    assert fast.mode == "full" and "(.item(): trace notes)" in fast.mode_reason and fast.notes
    assert same_trace(fast, full) and info == full_info


def test_a_refused_scalar_read_ends_the_optimizer_only_run_at_once(tmp_path, monkeypatch):
    """ZeRO-1 refuses an optimizer phase with trace notes: its optimizer-only run stops at Adafactor's first
    `.item()` read (one read, not every parameter's of both steps), and says why; Adam reads none."""
    from memplan.core.device import resolve_device
    from memplan.step import Target
    from memplan.trace import optsplice
    from memplan.trace.tracer import trace_workload
    from memplan.workload import TrainConfig

    reads = []
    refuse = optsplice._refuse_scalar_read
    monkeypatch.setattr(optsplice, "_refuse_scalar_read", lambda: (reads.append(1), refuse()))
    dev = resolve_device("cpu")
    target = Target(family=dev.family, name=dev.name)
    wl = _tiny(tmp_path, layers=2)

    def mini(optimizer, refused):
        cfg = TrainConfig(batch_size=1, seq_len=16, optimizer=optimizer)
        return optsplice.optimizer_only(wl, cfg, target, scalars_refused=refused, mini_fn=lambda runner: (
            trace_workload(wl, cfg, target, runner=runner)))

    tr, why = mini("adafactor", True)
    assert tr is None and "(.item(): trace notes)" in why and reads == [1]
    tr, why = mini("adafactor", False)
    assert tr is not None and tr.notes and reads == [1]
    tr, why = mini("adamw", True)
    assert tr is not None and not tr.notes and reads == [1]


@pytest.mark.slow
@pytest.mark.parametrize("kw", [dict(precision="bf16-amp", clip_grad_norm=1.0),
                                dict(precision="fp32", checkpoint=("model.layers.*",))], ids=str)
def test_llama2_7b_zero1_rank_at_a_short_sequence(kw, monkeypatch):
    """The real shape (32 layers, 8 ranks: a layer's 7 projections spread over the ranks differently in each
    layer), rank 7, a short sequence."""
    from pathlib import Path

    from memplan.core.analyze import load_workload
    from memplan.workload import TrainConfig

    hf = Path(__file__).resolve().parents[2] / "fixtures" / "hf" / "llama-2-7b.json"
    monkeypatch.setattr(blocks, "MIN_LAYERS", 16)   # the real threshold (the autouse fixture lowers it)
    fast, full, info, full_info = _rank_both(load_workload(hf_config=str(hf)),
                                             TrainConfig(batch_size=1, seq_len=64, **kw), 7)
    assert fast.mode == "block-once" and _spliced(fast), fast.mode_reason
    assert same_trace(fast, full) and info == full_info
