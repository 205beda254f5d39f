"""torch without storage PyObject preservation (2.1): the recorder holds one wrapper per storage and
reads its use count instead of a weakref (memplan.trace.recorder._Held). On this torch both ways must
give the same events, byte for byte."""
from __future__ import annotations

import pytest

from memplan import compat
from memplan.trace import recorder
from memplan.trace.analysis import summarize
from memplan.trace.tracer import trace_workload
from memplan.workload import TrainConfig, load_model_file


@pytest.mark.parametrize("name, cfg", [
    ("mlp", TrainConfig(batch_size=4)),
    pytest.param("gpt2", TrainConfig(batch_size=1, seq_len=32, precision="bf16-amp"), marks=pytest.mark.slow),
])
def test_held_storages_match_weakrefs(model_path, monkeypatch, name, cfg):
    wl = load_model_file(model_path(name))
    weak = trace_workload(wl, cfg)
    monkeypatch.setattr(recorder.compat, "storage_pyobject_preserved", lambda: False)
    assert recorder.Recorder()._hold
    held = trace_workload(wl, cfg)
    a, b = summarize(weak), summarize(held)
    assert (b.peak_allocated_bytes, b.peak_phase) == (a.peak_allocated_bytes, a.peak_phase)
    assert b.phase_peaks == a.phase_peaks
    assert len(held.storages) == len(weak.storages)


def test_probe_matches_this_torch():
    import torch

    t = torch.zeros(1)
    assert compat.storage_pyobject_preserved() == (t.untyped_storage() is t.untyped_storage())
