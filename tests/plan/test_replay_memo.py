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


def _figures(sim) -> dict:
    """Everything a replay decides (the AllocSim less the settings it was given and their notes)."""
    d = sim.to_dict() if hasattr(sim, "to_dict") else dict(vars(sim))
    return {k: v for k, v in d.items() if k not in ("config", "notes")}


def test_max_split_above_every_block_is_the_default_replay(monkeypatch, trace):
    """max_split_size above the largest segment the trace can make: no replay of its own, and the figures
    of a replay without the memo."""
    trace.replay_memo.clear()
    calls = _counting(monkeypatch)
    dev = resolve_device("910B3", None, None)
    base = simulate_allocator(trace, dev)
    for conf in ("max_split_size_mb:128", "max_split_size_mb:512"):
        sim = simulate_allocator(trace, replace(dev, alloc_conf=conf))
        assert sim.config.raw == conf
        assert _figures(sim) == _figures(base)
        events = list(simulator._events(trace))       # an event list: replayed, never memoised
        fresh = simulator.simulate(events, dev.spec, conf, capacity=dev.capacity_bytes,
                                   outside_allocator_bytes=dev.outside_allocator_bytes)
        assert _figures(fresh) == _figures(sim)
    assert len(calls) == 3                             # the base, and the two fresh ones


def test_max_split_at_or_below_a_block_replays(monkeypatch, trace):
    from memplan.alloc.config import AllocConfig

    trace.replay_memo.clear()
    calls = _counting(monkeypatch)
    simulator.simulate(trace, "npu")
    simulator.simulate(trace, "npu", AllocConfig(family="npu", max_split_size=2 << 20))   # = a small segment
    assert len(calls) == 2


def test_engine_ignores_a_max_split_above_every_block():
    """The claim the memo rests on, on random alloc/free streams under a tight limit (so that the release
    and retry paths run): with every segment below max_split_size the replay is the default's."""
    import random

    from memplan.alloc._rules import get_allocation_size, round_size
    from memplan.alloc.config import AllocConfig

    rng = random.Random(7)
    for family in ("cuda", "npu"):
        for _ in range(40):
            sizes = [rng.choice([rng.randrange(1, 1 << 20), rng.randrange(1 << 20, 12 << 20),
                                 rng.randrange(12 << 20, 40 << 20)]) for _ in range(60)]
            events, live = [], []
            for sid, n in enumerate(sizes):
                events.append((True, sid, n))
                live.append((sid, n))
                while live and rng.random() < 0.45:
                    s, m = live.pop(rng.randrange(len(live)))
                    events.append((False, s, m))
            pad = 32 if family == "npu" else 0
            top = max(get_allocation_size(round_size(n, (0,) * 16, pad)) for n in sizes)
            cap = rng.randrange(top, 6 * top)
            plain = simulator.simulate(events, family, AllocConfig(family=family), capacity=cap)
            split = simulator.simulate(events, family, AllocConfig(family=family, max_split_size=top + 1), capacity=cap)
            assert _figures(split) == _figures(plain)
