"""Helpers for the validate tests: fixture paths, a CLI runner, small model files written on demand."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "fixtures" / "models"


def run_cli(*args: str):
    from memplan.cli.main import cli

    res = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return res


def as_json(res) -> dict:
    return json.loads(res.stdout)


def _model_file(tmp_path):
    """Write a model file from source text and return its path."""

    def write(source: str, name: str = "model.py") -> Path:
        p = tmp_path / name
        p.write_text(textwrap.dedent(source))
        return p

    return write


# A small MLP whose forward fails on real tensors only (the fake-tensor trace passes): a forced failure.
FAILING_MODEL = '''
import torch
from torch import nn
from torch._subclasses.fake_tensor import is_fake

LIVE = []   # weak references to tensors made in the real run (tests check they are freed)


class Boom(nn.Module):
    def forward(self, x):
        if not is_fake(x):
            import weakref
            keep = torch.empty(1 << 20)
            LIVE.append(weakref.ref(keep))
            {raise_stmt}
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 64)
        self.boom = Boom()
        self.out = nn.Linear(64, 4)

    def forward(self, x):
        return self.out(self.boom(self.fc(x)))


def build_model():
    return Net()


def make_batch(batch_size):
    return torch.randn(batch_size, 64)
'''

CUDA_OOM = ('raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total '
            'capacity of 79.25 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has '
            '78.13 GiB memory in use. Of the allocated memory 70.50 GiB is allocated by PyTorch, and 7.12 GiB '
            'is reserved by PyTorch but unallocated.")')
ABSURD_ALLOC = "torch.empty(1 << 62, dtype=torch.uint8)"

# A tiny MLP: fast enough for CLI tests.
TINY_MODEL = '''
import torch
from torch import nn


def build_model():
    return nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 8))


def make_batch(batch_size):
    return torch.randn(batch_size, 64)
'''

# Holds 4 MiB more on real tensors than on fake ones: the estimate misses it (error far over 5 %).
DRIFTING_MODEL = TINY_MODEL.replace('''def build_model():''', '''from torch._subclasses.fake_tensor import is_fake


class Drift(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 8))

    def forward(self, x):
        y = self.body(x)
        if not is_fake(x):
            y = y + torch.zeros(1 << 20).sum()   # 4 MiB the fake trace never sees
        return y


def build_model():
    return Drift()


def _unused():''')
