"""The traced model is the user's model: scalars read while it is built get their real values, and
torch.utils.checkpoint inside the user's code (reentrant or not) is traced as it runs."""
import pytest

from memplan import api
from memplan.measure.cpu import measure_cpu
from memplan.workload import TrainConfig, load_model_file

SWIN_LIKE = '''
import torch
import torch.nn as nn
import torch.utils.checkpoint as cp

USE_CKPT, REENTRANT = {ckpt!r}, {reentrant!r}


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        keep = 1 - self.p
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
        return x * mask.div_(keep)


class Block(nn.Module):
    def __init__(self, dim, drop_path, shift):
        super().__init__()
        self.shift = shift
        self.norm1 = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        if self.shift:
            h = torch.roll(h, shifts=(-2, -2), dims=(1, 2))
        h = self.proj(h)
        if self.shift:
            h = torch.roll(h, shifts=(2, 2), dims=(1, 2))
        x = x + self.drop_path(h)
        return x + self.drop_path(self.mlp(self.norm2(x)))


class Net(nn.Module):
    def __init__(self, depth=4, dim=24):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, 4, 4)
        # timm / official Swin: stochastic-depth rates read back with .item() at build time
        dpr = [x.item() for x in torch.linspace(0, 0.3, depth)]
        self.blocks = nn.ModuleList(Block(dim, dpr[i], i % 2 == 1) for i in range(depth))
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        x = self.embed(x).permute(0, 2, 3, 1)
        for b in self.blocks:
            x = cp.checkpoint(b, x, use_reentrant=REENTRANT) if USE_CKPT else b(x)
        return self.head(x.mean((1, 2)))


def build_model():
    return Net()


def make_batch(batch_size):
    return torch.randn(batch_size, 3, 32, 32)
'''


@pytest.mark.parametrize("ckpt,reentrant", [(False, False), (True, False), (True, True)],
                         ids=["plain", "checkpoint", "checkpoint-reentrant"])
def test_build_time_item_reads_real_values(write_model, ckpt, reentrant):
    wl = load_model_file(write_model(SWIN_LIKE.format(ckpt=ckpt, reentrant=reentrant)))
    cfg = TrainConfig(batch_size=2)
    est = api.analyze(wl, config=cfg)
    assert not any("answered with 0" in n for n in est.notes), est.notes
    meas = measure_cpu(wl, cfg)
    assert est.peak_allocated_bytes == meas.peak_allocated_bytes, (est.peak_allocated_bytes,
                                                                   meas.peak_allocated_bytes)


def test_unknown_build_time_reads_are_reported(write_model):
    src = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        w = torch.randn(512, 512)          # too big for a build-time shadow
        n = int(w.abs().max().item() > 100) + 1  # a value memplan cannot know without real data
        self.layers = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(n)])

    def forward(self, x):
        return self.layers(x)

def build_model():
    return Net()

def make_batch(batch_size):
    return torch.randn(batch_size, 8)
'''
    est = api.analyze(load_model_file(write_model(src)), config=TrainConfig(batch_size=2))
    assert any("while build_model() ran" in n and "structure may differ" in n for n in est.notes), est.notes


HIERA_LIKE = '''
import math
import torch

class Net(torch.nn.Module):
    def __init__(self, depths=(1, 2, 1), dim=16):
        super().__init__()
        # transformers' Hiera: stage boundaries from an integer tensor read back with .tolist()
        ends = [0] + torch.tensor(depths).cumsum(0).tolist()
        rates = [x.item() for x in torch.linspace(0, 0.2, sum(depths))]
        scratch = torch.empty(4, dtype=torch.long)   # never read: must not break the build
        self.stages = torch.nn.ModuleList(
            torch.nn.Sequential(*[torch.nn.Linear(dim, dim) for _ in range(ends[i + 1] - ends[i])])
            for i in range(len(depths)))
        self.rates = rates

    def forward(self, x):
        for s in self.stages:
            x = torch.nn.functional.gelu(s(x))
        return x.sum()

def build_model():
    return Net()

def make_batch(batch_size):
    return torch.randn(batch_size, 16)

def loss_fn(out, batch):
    return out
'''


def test_build_time_tolist_of_integer_tensors(write_model):
    wl = load_model_file(write_model(HIERA_LIKE))
    cfg = TrainConfig(batch_size=2)
    est = api.analyze(wl, config=cfg, fallback=False)
    assert est.method != "fallback" and not any("answered with 0" in n for n in est.notes), est.notes
    assert est.peak_allocated_bytes == measure_cpu(wl, cfg).peak_allocated_bytes
