"""`prim.device` answered in the recording mode, as FakeTensorMode below it would answer it.

The autograd engine asks each tensor's device (`prim.device`) before it links or runs a node: about two
thirds of the ops a Llama layer's traced step dispatches, nearly all in backward. Each went through the
recording mode (which records nothing for it: no storage, no value) and then FakeTensorMode, whose
`dispatch` hands it to `_device_handler` (torch/_subclasses/fake_tensor.py): the tensor's `fake_device`,
or `meta` inside a kernel invocation of its fake mode. That path cost about a tenth of the CPU time of
block-once's reduced-depth traces of Llama-2-7B.

`device_of(args)` gives that answer directly where it is the one the next mode would give: the one
argument is a FakeTensor (not a subclass: DTensor and other wrappers go the usual way) and the only mode
left below the recording mode is a fake mode (no user mode, no proxy or functional mode in between); else
None, and the op is dispatched as before. Used only where torch's FakeTensorMode answers `prim.device`
with the function this was written against (`supported`). tests/trace/test_fastdevice.py traces with and
without it and compares every record, event, mark and note.
"""
from __future__ import annotations

import functools

import torch
from torch._subclasses import fake_tensor as _ft

_PRIM_DEVICE = torch.ops.prim.device.default
_META = torch.device("meta")


@functools.lru_cache(maxsize=None)
def supported() -> bool:
    """torch's fake mode answers `prim.device` with `_device_handler`, and the calls used here exist."""
    handlers = getattr(_ft, "_DISPATCH_META_HANDLERS", None)
    handler = getattr(_ft, "_device_handler", None)
    keys = getattr(torch._C, "_TorchDispatchModeKey", None)
    return (isinstance(handlers, dict) and handler is not None and handlers.get(_PRIM_DEVICE) is handler
            and keys is not None and hasattr(keys, "FAKE")
            and hasattr(torch._C, "_len_torch_dispatch_stack") and hasattr(torch._C, "_get_dispatch_mode"))


ENABLED = supported()
_FAKE = torch._C._TorchDispatchModeKey.FAKE if ENABLED else None


def device_of(args) -> torch.device | None:
    """The answer to `prim.device(*args)` from within a dispatch mode, or None: dispatch it."""
    if len(args) != 1 or type(args[0]) is not _ft.FakeTensor:
        return None
    if torch._C._len_torch_dispatch_stack() != 1 or torch._C._get_dispatch_mode(_FAKE) is None:
        return None
    a = args[0]
    return _META if a.fake_mode.in_kernel_invocation else a.fake_device
