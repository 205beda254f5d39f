"""The allocator replay memo (memplan.alloc.simulator): a trace replayed again under the same allocator
inputs returns the first replay's figures without replaying; settings the engine ignores do not make a
new replay, settings it reads do; and the plan's estimates are those of fresh replays."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memplan.alloc import simulator
from memplan.core.analyze import run_analysis
from memplan.core.device import resolve_device, simulate_allocator

MLP = str(Path(__file__).resolve().parents[2] / "fixtures" / "models" / "mlp.py")


@pytest.fixture(scope="module")
def trace():
    return run_analysis(model=MLP, batch_size=4, device="910B3", fallback=False).trace


def _counting(monkeypatch) -> list:
    calls: list = []
    real = simulator._replay

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(simulator, "_replay", counted)
    return calls


def test_same_inputs_replay_once(monkeypatch, trace):
    trace.replay_memo.clear()
    calls = _counting(monkeypatch)
    dev = resolve_device("910B3", None, None)
    first = simulate_allocator(trace, dev)
    again = simulate_allocator(trace, dev)
    assert len(calls) == 1 and again == first


def test_ignored_settings_hit_and_read_ones_replay(monkeypatch, trace):
    trace.replay_memo.clear()
    calls = _counting(monkeypatch)
    dev = resolve_device("910B3", None, None)
    base = simulate_allocator(trace, dev)
    # without a per-process memory fraction the threshold does nothing (as in the real allocator)
    gc_conf = simulate_allocator(trace, replace(dev, alloc_conf="garbage_collection_threshold:0.8"))
    assert len(calls) == 1
    assert gc_conf.peak_reserved_bytes == base.peak_reserved_bytes
    assert gc_conf.config.raw == "garbage_collection_threshold:0.8" and gc_conf.notes != base.notes
    simulate_allocator(trace, replace(dev, alloc_conf="expandable_segments:True"))
    simulate_allocator(trace, replace(dev, alloc_conf="roundup_power2_divisions:4"))
    assert len(calls) == 3


def test_memo_equals_fresh_replays(trace):
    """Every allocator candidate: the memoised figures equal a replay of a copy of the trace (no memo)."""
    from memplan.plan.policy import alloc_candidates, check_alloc_conf

    dev = resolve_device("910B3", None, None)
    trace.replay_memo.clear()
    for conf in alloc_candidates("npu", None) * 2:
        if check_alloc_conf(conf, "npu") is not None:
            continue
        d = replace(dev, alloc_conf=conf or None)
        fresh = replace(trace, replay_memo={})
        assert simulate_allocator(trace, d) == simulate_allocator(fresh, d), conf
