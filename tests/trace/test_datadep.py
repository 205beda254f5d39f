"""Data-dependent shapes: MoE routing, boolean masks and .item() / .tolist() in forward."""
import pytest
import torch
from torch import nn

from memplan import api
from memplan.measure.cpu import measure_cpu
from memplan.trace import datadep
from memplan.trace.tracer import trace_workload
from memplan.workload import TrainConfig, Workload, load_model_file

VOCAB, D, E, K, FF = 64, 32, 4, 2, 64


class MoE(nn.Module):
    """A Mixtral-style sparse MoE block: topk routing, then one eager loop over the experts that were
    hit, each taking its tokens with `torch.where` (nonzero) and adding back with `index_add_`."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(D, E, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(D, FF), nn.GELU(), nn.Linear(FF, D)) for _ in range(E))

    def forward(self, h):                                  # (T, D)
        probs = self.router(h).softmax(-1)
        w, idx = probs.topk(K, dim=-1)                     # (T, K)
        mask = nn.functional.one_hot(idx, E).permute(2, 1, 0)   # (E, K, T)
        hit = (mask.sum(dim=(1, 2)) > 0).nonzero()
        out = torch.zeros_like(h)
        for e in hit:
            e = e[0]
            slot, tok = torch.where(mask[e])
            y = self.experts[int(e)](h[tok]) * w[tok, slot, None]
            out.index_add_(0, tok, y)
        return out


class MoELM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.moe = MoE()
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids):                                # (B, S)
        h = self.emb(ids).reshape(-1, D)
        return self.head(self.moe(h))


def moe_workload():
    return Workload("moe", MoELM, lambda b, seq_len=64: torch.randint(0, VOCAB, (b, seq_len)), default_seq_len=64)


def test_moe_routing_traces_with_a_stated_worst_case(peaks):
    est, real, notes = peaks(moe_workload(), batch_size=4)
    assert any("routing" in n and "busiest expert" in n for n in notes), notes
    # every token to the same experts is an upper bound of any real routing, and not a wild one
    assert real <= est <= real * 1.25


def test_moe_balanced_policy_is_close_to_a_random_router(peaks):
    est, real, notes = peaks(moe_workload(), batch_size=4, moe_routing="balanced")
    assert any("'balanced'" in n for n in notes), notes
    assert abs(est - real) / real < 0.05


def test_unknown_routing_policy_is_refused():
    with pytest.raises(ValueError):
        with datadep.routing_policy("optimistic"):
            pass


PAD = 0


class Packed(nn.Module):
    """Reads values of its integer input: .item() for a length, .tolist() for lengths, and a boolean
    mask over the tokens (the shapes all depend on the batch's values)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.lin = nn.Linear(D, D)

    def forward(self, ids):
        keep = ids != PAD
        longest = int(keep.sum(-1).max().item())
        lengths = keep.sum(-1).tolist()
        h = self.lin(self.emb(ids[:, :longest]))
        tokens = self.emb(ids)[keep]                       # (n_real_tokens, D)
        return h.mean() * sum(lengths) + self.lin(tokens).sum()


def packed_batch(b, seq_len=48):
    ids = torch.randint(1, VOCAB, (b, seq_len))
    for i in range(b):                                     # right padding: row i keeps 48 - 8 i tokens
        ids[i, seq_len - 8 * i:] = PAD
    return ids


def test_item_tolist_and_boolean_mask_get_the_batch_values(peaks):
    wl = Workload("packed", Packed, packed_batch, default_seq_len=48)
    tr = trace_workload(wl, TrainConfig(batch_size=4))
    assert not any("answered with 0" in n for n in tr.notes), tr.notes
    assert any("sized from real values" in n for n in tr.notes), tr.notes
    # 48 + 40 + 32 + 24 = 144 real tokens of D fp32 values, selected by the boolean mask
    assert any(r.op == "index" and r.nbytes == 144 * D * 4 for r in tr.storages)
    # (the rest of the gap to the CPU allocator is index_put's backward kernel, not the sizes)
    est, real, _ = peaks(wl, batch_size=4)
    assert abs(est - real) / real < 0.2


class FromActivations(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(D, D)

    def forward(self, x):
        h = self.lin(x)
        return h[h > 0].sum() + torch.unique(h.detach().round()).numel()


def test_masks_of_unknown_values_are_sized_worst_case_and_said_so():
    wl = Workload("act", FromActivations, lambda b: torch.randn(b, 16, D))
    tr = trace_workload(wl, TrainConfig(batch_size=2))
    assert any("worst-case" in n and "aten::index.Tensor" in n and "aten::_unique2" in n for n in tr.notes), tr.notes


PATCHER = '''
import torch
import torch.nn as nn


class Patcher(nn.Module):
    """BLT-style: a token starts a new patch where a score of the model's own output passes a threshold;
    the patches (as many as starts) are then pooled and processed."""

    def __init__(self, d=16, threshold=0.5):
        super().__init__()
        self.score, self.threshold = nn.Linear(d, 1), threshold
        self.mix = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        score = 1.0 + 1e-3 * self.score(x).squeeze(-1).detach()   # above the threshold in the real run
        starts = score > self.threshold
        idx = torch.arange(t).expand(b, t)
        padded = torch.cat([idx, torch.full_like(idx, t)], dim=1)
        first = padded[torch.cat([starts, ~starts], dim=1)].reshape(b, t)[:, :int(starts.sum(1).max())]
        ids = (first.unsqueeze(1) <= torch.arange(t).view(1, t, 1)).sum(-1) - 1     # patch of each token
        pooled = torch.zeros(b, first.shape[1], d).scatter_reduce(1, ids.unsqueeze(-1).expand(b, t, d), x,
                                                                  "amax", include_self=False)
        return self.mix(pooled)


def build_model():
    return Patcher()


def make_batch(batch_size):
    return torch.randn(batch_size, 64, 16)
'''


def test_threshold_on_unknown_values_selects_everything(write_model):
    wl = load_model_file(write_model(PATCHER))
    cfg = TrainConfig(batch_size=2)
    est = api.analyze(wl, config=cfg)
    assert est.method == "trace"
    assert any("assumed True everywhere" in n for n in est.notes), est.notes
    assert est.peak_allocated_bytes == measure_cpu(wl, cfg).peak_allocated_bytes


SIGN_TEST = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    """Longformer-style: a float mask (0 local, large positive global, large negative masked) whose sign
    says which tokens take the global-attention path; none do in this batch."""

    def __init__(self, d=16):
        super().__init__()
        self.proj, self.glob = nn.Linear(d, d), nn.Linear(d, 4 * d)

    def forward(self, x):
        mask = x.new_ones(x.shape[0], x.shape[1], 512)             # too large for a value shadow
        mask = (1.0 - mask) * -10000.0
        h = self.proj(x)
        if (mask > 0).any():                                       # never in the real run
            h = h + self.glob(h).sum(-1, keepdim=True) * (mask < 0).float().sum()
        return h


def build_model():
    return Net()


def make_batch(batch_size):
    return torch.randn(batch_size, 64, 16)
'''


def test_sign_test_of_an_unknown_mask_is_not_a_threshold(write_model):
    # a comparison with 0 is a mask's sign test, not a BLT-style threshold: unknown, so `any()` is the
    # common case (False) and the global path is not taken, as in the real run
    wl = load_model_file(write_model(SIGN_TEST))
    cfg = TrainConfig(batch_size=2)
    est = api.analyze(wl, config=cfg, fallback=False)
    assert not any("assumed True everywhere" in n for n in est.notes), est.notes
    assert est.peak_allocated_bytes == measure_cpu(wl, cfg).peak_allocated_bytes
