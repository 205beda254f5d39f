"""Composite aten ops that take another branch for fake tensors than for real ones.

`at::linear` (aten/src/ATen/native/Linear.cpp) with a bias and an input it cannot flatten into one GEMM
(a non-contiguous input of 3 or more dims, e.g. an RNN's `batch_first` output) computes
`output = matmul(input, weight.t())` and then adds the bias *in place* (`output.add_(bias)`), unless the
bias is a tensor subclass (`isTensorSubclassLike`), where it uses `at::add(output, bias)`: a fake tensor
is such a subclass, so the fake trace would hold one output-sized buffer more than the real run. While
tracing, `torch.nn.functional.linear` marks its call, and the recorder gives that `add` the storage of
`output` (the in-place add of the real run).

`nn.Module._apply` (`module.to(dtype)`, `.float()`) always swaps a fake parameter with its converted
copy (`torch.utils.swap_tensors`), which fails while weak references to it exist (the fake mode's and
memplan's). A conversion that changes nothing (`.to()` the dtype it already has, as switch_transformers'
router does on every call) is a no-op on a real parameter; while tracing, swapping a tensor with an
alias of the same storage, shape, strides and dtype is a no-op too.

`format(t)` of a 0-dim tensor is `format(t.item())` only for plain tensors (`Tensor.__format__` checks
`type(self) is Tensor`): `f"expert_{idx}"` names a module with a real tensor, and a fake tensor's repr
with a fake one. While tracing a 0-dim fake tensor formats as its value (its shadow, through `.item()`).
"""
from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F

from memplan import compat


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

    with _patched(F, "linear", linear):
        yield


@contextlib.contextmanager
def _patched(owner, name: str, value):
    orig = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, orig)


def _same_tensor(a, b) -> bool:
    return (a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
            and a.storage_offset() == b.storage_offset()
            and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
            and a.untyped_storage()._cdata == b.untyped_storage()._cdata)


@contextlib.contextmanager
def unchanged_conversions():
    """While active, `torch.utils.swap_tensors(a, b)` of two views of the same data is a no-op (torch
    without it does not swap parameters: nothing to do)."""
    if not compat.has_swap_tensors():
        yield
        return
    orig = torch.utils.swap_tensors

    def swap_tensors(t1, t2):
        if isinstance(t1, torch.Tensor) and isinstance(t2, torch.Tensor) and _same_tensor(t1, t2):
            return None
        return orig(t1, t2)

    with _patched(torch.utils, "swap_tensors", swap_tensors):
        yield


@contextlib.contextmanager
def scalar_format():
    """While active, a 0-dim FakeTensor formats as its `.item()`, as a real 0-dim tensor does."""
    from torch._subclasses.fake_tensor import FakeTensor

    orig = torch.Tensor.__format__

    def fmt(self, spec):
        if isinstance(self, FakeTensor) and self.dim() == 0:
            return self.item().__format__(spec)
        return orig(self, spec)

    with _patched(torch.Tensor, "__format__", fmt):
        yield


@contextlib.contextmanager
def eager_branches(mode):
    """All of the above, for one trace."""
    with linear_bias_in_place(mode), unchanged_conversions(), scalar_format():
        yield
