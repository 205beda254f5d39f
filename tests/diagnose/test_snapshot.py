"""The snapshot reader on hand-computed and generated snapshots (the schema of
`torch.cuda.memory._snapshot()`), its streaming path, and its speed."""
from __future__ import annotations

import json
import pickle
import time

import pytest

from memplan.errors import UserError
from memplan.diagnose import snapshot as snapmod
from snapshot_synth import synthetic_snapshot, write_synthetic_snapshot
from memplan.report.html import html_document
from memplan.report.markdown import render_markdown
from memplan.diagnose.snapshot import read_snapshot
from memplan.report.snapshot_timeline import timeline_from_snapshot
from report_builders import MiB, small_snapshot


@pytest.fixture
def small_path(tmp_path):
    p = tmp_path / "snap.pickle"
    with open(p, "wb") as f:
        pickle.dump(small_snapshot(), f)  # exactly what torch.cuda.memory._dump_snapshot does
    return p


def test_hand_computed_snapshot(small_path):
    a = read_snapshot(small_path)
    d = a.main
    assert d.baseline_allocated == 900_000
    assert d.peak_allocated == 4_900_000 and d.peak_index == 5 and d.peak_time_us == 105
    assert d.n_entries == 8 and d.n_allocs == 3
    assert [(g.where, g.bytes, g.count) for g in d.by_frame] == [
        ("train.py:20:step", 3_000_000, 1), ("train.py:10:step", 1_000_000, 1),
        ("<no stack>", 900_000, 2)]
    assert ("torch.nn.modules.linear", 4_000_000, 2) in [(g.where, g.bytes, g.count) for g in d.by_module]
    assert [b.size for b in d.largest_at_peak] == [3_000_000, 1_000_000, 500_000, 400_000]
    assert (d.reserved, d.allocated, d.requested) == (10 * MiB, 4_718_592, 4_400_000)
    assert d.cached_free == 5_767_168 and d.largest_free_block == 4 * MiB
    assert d.fragmentation == pytest.approx(5_767_168 / (10 * MiB))
    assert d.external_fragmentation == pytest.approx(1 - 4 * MiB / 5_767_168)
    assert d.peak_reserved == 10 * MiB
    assert d.ooms == ({"index": 7, "size": 8_000_000, "device_free": 123, "where": "train.py:20:step"},)
    assert d.largest_blocks[0].size == 4 * MiB and d.largest_blocks[0].state == "inactive"
    js = json.loads(json.dumps(a.to_dict()))
    assert js["peak_allocated_bytes"] == 4_900_000 and js["peak_reserved_bytes"] == 10 * MiB


def test_snapshot_timeline_and_renderers(small_path):
    tl = timeline_from_snapshot(read_snapshot(small_path), capacity=16 * MiB)
    assert tl.peak.bytes == 4_900_000 == max(tl.total)
    assert tl.peak.index in tl.x
    assert tl.total[:3] == (900_000, 1_900_000, 3_900_000)  # baseline, then the first allocations
    assert tl.total[tl.x.index(5)] == 4_900_000 and tl.total[-1] == 4_400_000
    for i in range(len(tl.x)):
        assert sum(s[i] for s in tl.stacks) == tl.total[i]
    assert tl.reserved.max == 10 * MiB
    assert 'data-peak-bytes="4900000"' in html_document(tl)
    assert "train.py:20:step" in render_markdown(tl)


def test_segments_only_and_bad_files(tmp_path):
    snap = small_snapshot()
    p = tmp_path / "segs.pickle"
    p.write_bytes(pickle.dumps(snap["segments"]))  # the old list-of-segments format
    d = read_snapshot(p).main
    assert d.n_entries == 0 and d.peak_allocated == 4_400_000 and d.reserved == 10 * MiB
    bad = tmp_path / "bad.pickle"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(UserError, match="not a PyTorch memory snapshot"):
        read_snapshot(bad)
    with pytest.raises(UserError, match="not found"):
        read_snapshot(tmp_path / "missing.pickle")
    other = tmp_path / "other.pickle"
    other.write_bytes(pickle.dumps({"hello": 1}))
    with pytest.raises(UserError, match="no 'segments'"):
        read_snapshot(other)


def test_generated_snapshot_matches_generator(tmp_path):
    snap, exp = synthetic_snapshot(steps=3, layers=12, frames_depth=6)
    p = tmp_path / "gen.pickle"
    p.write_bytes(pickle.dumps(snap))
    d = read_snapshot(p, top=1000).main
    assert (d.peak_allocated, d.peak_index, d.n_entries) == (exp.peak_allocated, exp.peak_event,
                                                              exp.n_entries)
    by_file: dict[str, int] = {}
    for g in d.by_frame:
        f = g.where.split(":")[0]
        by_file[f] = by_file.get(f, 0) + g.bytes
    assert by_file == exp.live_at_peak_by_file
    assert d.peak_reserved == exp.peak_reserved and d.reserved == exp.reserved_end


def test_streaming_equals_whole_load(tmp_path, monkeypatch):
    """A torch-layout pickle (segments first) big enough for the streaming hook to run many times."""
    snap, exp = synthetic_snapshot(steps=120, layers=48, frames_depth=12)
    p = tmp_path / "big.pickle"
    p.write_bytes(pickle.dumps(snap))
    monkeypatch.setattr(snapmod, "_HOOK_BYTES", 256 << 10)
    obj, st = snapmod._load(str(p))
    assert st.tracked, "the trace list was not found while streaming"
    assert len(obj["device_traces"][0]) < exp.n_entries  # entries were folded and dropped
    streamed = read_snapshot(p, top=1000)
    monkeypatch.setattr(snapmod, "_HOOK_BYTES", 1 << 40)  # never fires: plain whole load
    whole = read_snapshot(p, top=1000)
    assert streamed.to_dict() == whole.to_dict()
    assert streamed.main.peak_allocated == exp.peak_allocated
    # frames of blocks present before the trace survive the emptying of trace entries
    assert any(b.where.startswith("model_") for b in streamed.main.largest_blocks)


@pytest.mark.slow   # a throughput floor: a benchmark more than a behaviour (the reading itself is tested above)
def test_written_snapshot_speed(tmp_path):
    """A 24 MB streamed file; the full 1 GB figure is in benchmarks/snapshot_speed.py."""
    p = tmp_path / "large.pickle"
    exp = write_synthetic_snapshot(p, target_bytes=24 << 20, frames_depth=24)
    assert pickle.load(open(p, "rb"))["device_traces"][0][0]["action"] == "segment_alloc"
    t0 = time.perf_counter()
    d = read_snapshot(p).main
    dt = time.perf_counter() - t0
    assert (d.peak_allocated, d.peak_index, d.n_entries) == (exp.peak_allocated, exp.peak_event,
                                                              exp.n_entries)
    assert d.peak_reserved == exp.peak_reserved
    assert exp.file_bytes / dt > 4e6, f"{exp.file_bytes / dt / 1e6:.1f} MB/s"  # ~40 MB/s here


@pytest.mark.slow
def test_one_gigabyte_snapshot_under_a_minute(tmp_path):
    p = tmp_path / "huge.pickle"
    exp = write_synthetic_snapshot(p, target_bytes=1 << 30, frames_depth=32)
    t0 = time.perf_counter()
    d = read_snapshot(p).main
    assert time.perf_counter() - t0 < 60
    assert d.peak_allocated == exp.peak_allocated
