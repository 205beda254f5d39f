"""Timeline from a Trace: hand-computed numbers, and the peak kept through downsampling."""
from __future__ import annotations

import time

from hypothesis import given, settings, strategies as st

from memplan.report.timeline import Curve, downsample_indices, timeline_from_trace
from report_builders import small_trace, spike_trace


def test_small_trace_numbers():
    tl = timeline_from_trace(small_trace(), capacity=6000)
    assert tl.n_events == 13
    assert tl.total == (1000, 1500, 1700, 4700, 5400, 4700, 5700, 2700, 3200, 3000, 5000, 5400, 5000)
    assert tl.x == tuple(range(13))
    p = tl.peak
    assert (p.index, p.bytes, p.phase, p.step) == (6, 5700, "backward", 1)
    assert dict(p.by_category) == {"parameters": 1500, "gradients": 1000, "optimizer_state": 0,
                                   "activations": 3000, "temporaries": 0, "inputs": 200, "other": 0}
    assert p.top_modules == (("fc1", 5000), ("fc2", 500), ("<none>", 200))
    mods = {m.module: m for m in tl.modules}
    assert (mods["fc1"].max_live, mods["fc1"].bytes_at_peak, mods["fc1"].allocated, mods["fc1"].count) == (
        5000, 5000, 7000, 4)
    assert (mods["fc2"].max_live, mods["fc2"].bytes_at_peak) == (1200, 500)
    assert [(b.phase, b.start, b.end, b.peak) for b in tl.bands] == [
        ("build", 0, 2, 1500), ("inputs", 2, 3, 1700), ("forward", 3, 6, 5400),
        ("backward", 6, 10, 5700), ("optimizer", 10, 13, 5400)]
    # stacks add up to the total at every sample
    for i in range(len(tl.x)):
        assert sum(s[i] for s in tl.stacks) == tl.total[i]
    assert tl.headroom == 300
    d = tl.to_dict()
    assert d["peak"]["bytes"] == 5700 and d["headroom"] == 300


def test_reserved_and_measured_curves():
    tl = timeline_from_trace(small_trace(), reserved_curve=[(0, 2048), (6, 8192), (12, 6144)],
                             measured=[("measured", [(6, 5800), (11, 5500)])])
    assert tl.peak_reserved == 8192
    assert tl.reserved.x == (0, 6, 12)
    assert tl.measured[0].kind == "points" and tl.measured[0].max == 5800
    assert tl.headroom is None


def test_peak_survives_downsampling():
    tr = spike_trace()
    tl = timeline_from_trace(tr, max_points=200)
    assert len(tl.x) <= 200
    assert tl.peak.bytes == 1000 + 10_000_000
    assert tl.peak.index == 1 + 2 * 31_337
    assert tl.peak.index in tl.x
    assert max(tl.total) == tl.peak.bytes
    assert tl.x[0] == 0 and tl.x[-1] == tl.n_events - 1
    assert list(tl.x) == sorted(set(tl.x))


def test_speed_one_million_events():
    tr = spike_trace(n=500_000, spike_at=7)  # 1,000,001 events
    t0 = time.perf_counter()
    tl = timeline_from_trace(tr)
    assert time.perf_counter() - t0 < 8.0  # ~0.6 s here; generous for shared CI cores
    assert tl.peak.bytes == 10_001_000 and len(tl.x) <= 2000


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=3000), st.integers(4, 300))
def test_downsample_keeps_max_and_bounds(values, max_points):
    keep = downsample_indices(values, max_points)
    assert len(keep) <= max(max_points, 4)
    assert keep == sorted(set(keep))
    assert keep[0] == 0 and keep[-1] == len(values) - 1
    assert max(values[i] for i in keep) == max(values)


def test_curve_passthrough():
    c = Curve("m", (1, 2), (3, 4))
    tl = timeline_from_trace(small_trace(), measured=[c])
    assert tl.measured == (c,)
