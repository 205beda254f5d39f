"""torch 2.3: FakeTensorMode's dispatch cache rebuilds cached view outputs with meta `set_`, and meta
`set_` there shrinks the shared storage to the view's extent (torch >= 2.4 only ever grows it). Each
`weight[padding_idx]` then shrank an embedding's storage to one row and the trace read that as the
storage being freed: BERT lost its word embeddings (-13 %). memplan turns the cache off where
`compat.meta_set_keeps_storage_size()` says so. Here the old `set_` is emulated on this torch."""
from __future__ import annotations

import pytest
import torch

from memplan import compat
from memplan.trace.analysis import summarize
from memplan.trace.tracer import trace_workload
from memplan.workload import TrainConfig, load_model_file

VOCAB, DIM = 4096, 64
MODEL = f'''
import torch
from torch import nn

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding({VOCAB}, {DIM}, padding_idx=0)
        self.out = nn.Linear({DIM}, 8)

    def forward(self, x, y=None):
        return self.out(self.emb(x)).mean(1)

def build_model():
    return Tagger()

def make_batch(batch_size, seq_len=8):
    return torch.randint(0, {VOCAB}, (batch_size, seq_len)), torch.randint(0, 8, (batch_size,))
'''

_SET = torch.Tensor.set_


def _old_meta_set_(self, source=None, storage_offset=0, size=None, stride=None):
    """meta `set_` as in torch <= 2.3: the storage's nbytes becomes the new view's extent."""
    out = _SET(self, source, storage_offset, size, stride) if size is not None else _SET(self, source)
    if self.device.type == "meta" and isinstance(source, torch.UntypedStorage) and self.numel():
        extent = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        source.resize_(extent * self.element_size())
    return out


@pytest.fixture
def old_meta_set(monkeypatch):
    compat.meta_set_keeps_storage_size.cache_clear()
    monkeypatch.setattr(torch.Tensor, "set_", _old_meta_set_)
    yield
    monkeypatch.undo()
    compat.meta_set_keeps_storage_size.cache_clear()


def _params_at_peak(tmp_path) -> int:
    path = tmp_path / "embedding_model.py"
    path.write_text(MODEL)
    trace = trace_workload(load_model_file(str(path)), TrainConfig(batch_size=2, seq_len=8))
    return summarize(trace).breakdown_at_peak.get("parameters", 0)


def test_probe_sees_this_torch_and_the_old_set():
    st = torch.empty(16, device="meta").untyped_storage()
    torch.empty(0, device="meta").set_(st, 0, (1,), (1,))
    assert compat.meta_set_keeps_storage_size() == (st.nbytes() == 64)


def test_probe_detects_the_old_set(old_meta_set):
    assert not compat.meta_set_keeps_storage_size()


def test_embedding_parameter_survives_the_old_set(tmp_path, old_meta_set, monkeypatch):
    expected = VOCAB * DIM * 4 + (DIM * 8 + 8) * 4
    assert compat.meta_set_keeps_storage_size() is False
    assert _params_at_peak(tmp_path) == expected
    # the emulation is the real failure: with the cache left on, the embedding's storage is lost
    monkeypatch.setattr(compat, "meta_set_keeps_storage_size", lambda: True)
    assert _params_at_peak(tmp_path) < expected


def test_this_torch_keeps_its_cache_where_safe(tmp_path):
    from memplan.trace.tracer import _FakeMode

    assert _FakeMode().cache_enabled in (False, True)
    if compat.meta_set_keeps_storage_size():
        assert _FakeMode().cache_enabled == torch._subclasses.fake_tensor.FakeTensorMode().cache_enabled
    assert _params_at_peak(tmp_path) == VOCAB * DIM * 4 + (DIM * 8 + 8) * 4
