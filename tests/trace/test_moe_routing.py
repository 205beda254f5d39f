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
    # exact to the byte (wrapped numbers counted); the other policy is far off the same run
    assert est.peak_allocated_bytes == meas.peak_allocated_bytes, (est.peak_allocated_bytes,
                                                                   meas.peak_allocated_bytes)
    other = "balanced" if routing == "worst" else "worst"
    wrong = api.analyze(wl, config=cfg.with_(moe_routing=other))
    assert abs(wrong.peak_allocated_bytes - meas.peak_allocated_bytes) > 1024


def test_worst_routing_bounds_balanced(write_model):
    wl = load_model_file(write_model(MOE.format(routing="balanced", split=False)))
    worst = api.analyze(wl, config=TrainConfig(batch_size=4, moe_routing="worst"))
    balanced = api.analyze(wl, config=TrainConfig(batch_size=4, moe_routing="balanced"))
    assert worst.peak_allocated_bytes > balanced.peak_allocated_bytes


SWITCH = '''
import torch
import torch.nn as nn

ROUTING, E, D, S, CAP = {routing!r}, 4, 32, 16, 64


def pattern(tokens):
    """Large scores that make argmax pick what memplan.trace.datadep's top-1 policy picks."""
    rows = torch.arange(tokens)
    pick = torch.where(rows < E, rows, 0) if ROUTING == "worst" else rows % E
    return torch.zeros(tokens, E).scatter_(1, pick.unsqueeze(1), 100.0)


class Switch(nn.Module):
    """SwitchTransformers' routing: top-1 by argmax, a capacity mask from a cumsum of the one-hot
    choices, and a loop over the experts `nonzero` finds in the mask."""
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D, E, bias=False)
        self.experts = nn.ModuleDict({{f"expert_{{e}}": nn.Sequential(nn.Linear(D, 4 * D), nn.ReLU(),
                                                                    nn.Linear(4 * D, D)) for e in range(E)}})

    def forward(self, x):
        b, s, d = x.shape
        h = x.reshape(-1, d)
        probs = (self.gate(h) * 1e-3 + pattern(h.shape[0])).softmax(-1)
        mask = torch.nn.functional.one_hot(probs.argmax(-1), num_classes=E)
        mask = (mask * (mask.cumsum(0) <= CAP)).t()
        weight = probs.max(-1).values
        out = torch.zeros_like(h)
        for e in torch.greater(mask.sum(-1), 0).nonzero():
            (tok,) = torch.where(mask[e].squeeze(0))
            out.index_add_(0, tok, self.experts[f"expert_{{e[0]}}"](h[tok]) * weight[tok, None])
        return out.reshape(b, s, d)


def build_model():
    return Switch()


def make_batch(batch_size):
    return torch.randn(batch_size, S, D)
'''


@pytest.mark.parametrize("routing", ["worst", "balanced"])
def test_top1_argmax_routing_uses_every_expert(write_model, routing):
    """A Switch-style argmax router: each policy's estimate equals its run, so every expert has
    gradients and AdamW state (argmax answered all zeros once: one expert, 7.5 % under the real run)."""
    wl = load_model_file(write_model(SWITCH.format(routing=routing)))
    cfg = TrainConfig(batch_size=4, moe_routing=routing)
    est = api.analyze(wl, config=cfg)
    meas = measure_cpu(wl, cfg)
    assert est.peak_allocated_bytes == meas.peak_allocated_bytes, (est.peak_allocated_bytes,
                                                                   meas.peak_allocated_bytes)
    if routing == "balanced":
        worst = api.analyze(wl, config=cfg.with_(moe_routing="worst"))
        assert worst.peak_allocated_bytes >= meas.peak_allocated_bytes, (worst.peak_allocated_bytes,
                                                                         meas.peak_allocated_bytes)
