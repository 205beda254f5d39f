"""Composite aten ops that take another branch for fake tensors than for real ones.

`at::linear` (aten/src/ATen/native/Linear.cpp) with a bias and an input it cannot flatten into one GEMM
(a non-contiguous input of 3 or more dims, e.g. an RNN's `batch_first` output) computes
`output = matmul(input, weight.t())` and then adds the bias *in place* (`output.add_(bias)`), unless the
bias is a tensor subclass (`isTensorSubclassLike`), where it uses `at::add(output, bias)`: a fake tensor
is such a subclass, so the fake trace would hold one output-sized buffer more than the real run. While
tracing, `torch.nn.functional.linear` marks its call, and the recorder gives that `add` the storage of
`output` (the in-place add of the real run).
"""
from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F


@contextlib.contextmanager
def linear_bias_in_place(mode):
    """While active, `F.linear` calls with a bias set `mode.in_linear` around the aten call."""
    orig = F.linear

    def linear(input, weight, bias=None):
        if bias is None or input.dim() < 3 or input.is_contiguous():
            return orig(input, weight, bias)
        mode.in_linear = True
        try:
            return orig(input, weight, bias)
        finally:
            mode.in_linear = False

    F.linear = linear
    try:
        yield
    finally:
        F.linear = orig
