"""`--moe-routing worst|balanced` against real runs whose router is forced to that routing.

The router's scores are `gate(x) + pattern`: on fake tensors `gate(x)` has no values, so the trace's
top-k follows memplan's routing policy; in the real run a large fixed `pattern` decides, and it is
built to pick exactly the experts the policy picks. Each policy's estimate must equal its real run."""
import pytest

from memplan import api
from memplan.measure.cpu import measure_cpu
from memplan.workload import TrainConfig, load_model_file

MOE = '''
import torch
import torch.nn as nn

ROUTING, E, K, D, S = {routing!r}, 4, 2, 32, 16
SPLIT = {split!r}   # JetMoE-style: per-expert counts from a scatter into zeros, `.tolist()`, then split


def pattern(tokens):
    """Large scores that make top-k pick what memplan.trace.datadep's policy picks."""
    rows = torch.arange(tokens).unsqueeze(1)
    cols = torch.arange(K).unsqueeze(0)
    spread = (rows * K + cols) % E
    if ROUTING == "worst":
        first = -(-E // K)
        idx = torch.where(rows < first, spread, cols.expand(tokens, K))
    else:
        idx = spread
    p = torch.zeros(tokens, E)
    p.scatter_(1, idx, (100.0 - cols.float()).expand(tokens, K))
    return p


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D, E, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))
                                     for _ in range(E))

    def forward(self, x):
        b, s, d = x.shape
        h = x.reshape(-1, d)
        scores = self.gate(h) * 1e-3 + pattern(h.shape[0])
        w, idx = scores.softmax(-1).topk(K, dim=-1)
        if SPLIT:
            sizes = torch.zeros(h.shape[0], E, dtype=w.dtype).scatter(1, idx, 1).long().sum(0).tolist()
            order = idx.flatten().sort(0)[1]
            parts = h[order.div(K, rounding_mode="trunc")].split(sizes, dim=0)
            y = torch.cat([expert(p) for expert, p in zip(self.experts, parts)])
            return (y * w.flatten()[order, None]).reshape(b, s * K, d)
        out = torch.zeros_like(h)
        for e, expert in enumerate(self.experts):
            tok, slot = (idx == e).nonzero(as_tuple=True)
            if tok.numel():
                out.index_add_(0, tok, expert(h[tok]) * w[tok, slot, None])
        return out.reshape(b, s, d)


def build_model():
    return MoE()


def make_batch(batch_size):
    return torch.randn(batch_size, S, D)
'''


@pytest.mark.parametrize("split", [False, True], ids=["index-loop", "split-sizes"])
@pytest.mark.parametrize("routing", ["worst", "balanced"])
def test_routing_policy_matches_a_run_routed_that_way(write_model, routing, split):
    wl = load_model_file(write_model(MOE.format(routing=routing, split=split)))
    cfg = TrainConfig(batch_size=4, moe_routing=routing)
    est = api.analyze(wl, config=cfg)
    assert any(f"{routing!r} routing policy" in n for n in est.notes), est.notes
    meas = measure_cpu(wl, cfg)
    # exact up to a few scalar bytes; the other policy is far off the same run
    assert abs(est.peak_allocated_bytes - meas.peak_allocated_bytes) <= 64, (est.peak_allocated_bytes,
                                                                             meas.peak_allocated_bytes)
    other = "balanced" if routing == "worst" else "worst"
    wrong = api.analyze(wl, config=cfg.with_(moe_routing=other))
    assert abs(wrong.peak_allocated_bytes - meas.peak_allocated_bytes) > 1024


def test_worst_routing_bounds_balanced(write_model):
    wl = load_model_file(write_model(MOE.format(routing="balanced", split=False)))
    worst = api.analyze(wl, config=TrainConfig(batch_size=4, moe_routing="worst"))
    balanced = api.analyze(wl, config=TrainConfig(batch_size=4, moe_routing="balanced"))
    assert worst.peak_allocated_bytes > balanced.peak_allocated_bytes
