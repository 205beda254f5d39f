"""Replay real CUDA allocator histories (recorded by benchmarks/gpu_accuracy.py with
torch.cuda.memory._record_memory_history) and compare with the recorded peaks."""
import json
from pathlib import Path

import pytest

from memplan.alloc import simulate

FIXTURES = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "alloc_traces").glob("*.json"))


@pytest.mark.skipif(not FIXTURES, reason="no recorded allocator traces (run benchmarks/gpu_accuracy.py on a GPU)")
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_replay_matches_recorded_reserved(path):
    fx = json.loads(path.read_text())
    assert fx["schema"] == "memplan-alloc-trace/1"
    sim = simulate([(bool(a), s, n) for a, s, n in fx["events"]], "cuda", fx.get("alloc_conf") or None)
    measured = fx["measured"]
    assert sim.peak_reserved_bytes == pytest.approx(measured["max_memory_reserved"], rel=0.02)
    assert sim.peak_allocated_bytes == pytest.approx(measured["max_memory_allocated"], rel=0.02)
