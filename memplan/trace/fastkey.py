"""A cheaper fake-tensor dispatch-cache key for memplan's tracer: the same cache hits, built faster.

FakeTensorMode caches each op's output metadata under a key made from the op and its arguments; a fake
tensor argument enters the key as its whole `TensorMetadata`, flattened field by field, each size and
stride with its type (`FakeTensorMode._prep_args_for_hash`). Building that key was about a third of a
trace's CPU time (cProfile of a 7-layer Llama-2-7B trace). For a strided tensor with concrete sizes
the metadata's memory format is a function of its sizes and strides, and its sparse fields are fixed
by the layout, so here a tensor enters as one tuple: dtype, sizes, strides, device, storage offset,
storage bytes, requires_grad, is_quantized, is_conj, is_neg, is_inference -- after the same checks
that make torch bypass the cache (another mode's fake tensor, a constant, a sparse layout). Lists
and tuples enter as their type and length, ints, floats, bools, strings, None, dtypes, devices,
layouts and memory formats as their type and value; anything else (symbolic sizes, dicts, graph
modules, functions) goes through torch's own function. Each tensor's tuple follows a marker object
that torch's keys never hold, and a list's length is an int where torch writes a string, so keys of
the two kinds, which share FakeTensorMode's class-wide cache, never compare equal.

Installed (`install`) only where torch's function has the signature and `TensorMetadata` the fields
this was written against (`supported`); elsewhere torch's key is used. A trace is the same either way
(tests/trace/test_fastkey.py traces with both keys and compares every record, event, mark and note).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

import torch
from torch._subclasses import fake_tensor as _ft

_PARAMS = ["self", "result", "args", "state", "id_hashed_objects"]
_FIELDS = {"dtype", "shape", "stride", "device", "layout", "memory_format", "storage_offset",
           "storage_bytes", "requires_grad", "is_quantized", "is_conj", "is_neg", "is_inference",
           "is_sparse", "is_coalesced", "dense_dim", "sparse_dim"}
_PLAIN = frozenset({int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout,
                    torch.memory_format})
_TENSOR = object()   # marks a tensor's tuple in the key


@functools.lru_cache(maxsize=None)
def supported() -> bool:
    """Torch's key function and `TensorMetadata` are the ones this module was written against."""
    fn = getattr(_ft.FakeTensorMode, "_prep_args_for_hash", None)
    meta = getattr(_ft, "TensorMetadata", None)
    if fn is None or meta is None or not dataclasses.is_dataclass(meta):
        return False
    return (list(inspect.signature(fn).parameters) == _PARAMS
            and {f.name for f in dataclasses.fields(meta)} == _FIELDS
            and hasattr(_ft, "_BypassDispatchCache"))


def install(mode_cls) -> bool:
    """Give `mode_cls` (a FakeTensorMode subclass) the cheaper key where `supported()`; says whether."""
    if not supported():
        return False
    mode_cls._prep_args_for_hash = _prep_args_for_hash
    return True


def _prep_args_for_hash(self, result, args, state, id_hashed_objects):
    """`FakeTensorMode._prep_args_for_hash` with one tuple per strided, concretely sized fake tensor."""
    torch_own = _ft.FakeTensorMode._prep_args_for_hash
    if isinstance(args, dict):
        return torch_own(self, result, args, state, id_hashed_objects)
    if isinstance(args, (list, tuple)):
        result.append(type(args))
        result.append(len(args))
    for arg in args:
        if isinstance(arg, _ft.FakeTensor):
            if arg.fake_mode is not self:
                raise _ft._BypassDispatchCache("not our fake")
            if arg.constant is not None:
                raise _ft._BypassDispatchCache("constant attribute")
            if arg.layout is not torch.strided or arg._has_symbolic_sizes_strides:
                torch_own(self, result, (arg,), state, id_hashed_objects)
                continue
            result.append(_TENSOR)
            result.append((arg.dtype, tuple(arg.shape), arg.stride(), arg.device, arg.storage_offset(),
                           arg.untyped_storage().nbytes(), arg.requires_grad, arg.is_quantized,
                           arg.is_conj(), arg.is_neg(), arg.is_inference()))
        elif type(arg) in _PLAIN:
            result.append(type(arg))
            result.append(arg)
        elif isinstance(arg, (list, tuple)):
            _prep_args_for_hash(self, result, arg, state, id_hashed_objects)
        else:
            torch_own(self, result, (arg,), state, id_hashed_objects)
