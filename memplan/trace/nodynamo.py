"""The tracer's dispatch modes called without dynamo's `disable` wrapper while dynamo is not running.

torch wraps the `__torch_dispatch__` of every TorchDispatchMode subclass in `torch._disable_dynamo`
(`TorchDispatchMode.__init_subclass__`), so that a frame dynamo is compiling never inlines a mode: each
call sets the frame-evaluation callback to none, sets it again from the compile stance, calls the mode,
and restores both (torch/_dynamo/eval_frame.py, `DisableContext.__call__`). The tracer's two modes
(the recording mode on top of FakeTensorMode) take that path once per op each -- about a tenth of the
CPU time of block-once's reduced-depth traces of Llama-2-7B (benchmarks/results/speed_analyze_profile.md).

When no callback is set (no compiled frame is running) and the stance is the default one, those calls
set the callback to none and back to none: they change nothing. Then the mode is called directly; in
any other state (a `torch.compile`d function running, `torch.compiler.set_stance`) through torch's
wrapper as before. Installed (`install`) only where torch wraps modes with the function this was written
against and has the callback getter and stance it reads (`supported`); elsewhere torch's wrapper runs.
The function keeps the name `__torch_dispatch__` (memplan.trace.recorder's `_engine_code` skips the
dispatch frames by that name). tests/trace/test_nodynamo.py traces with and without it and compares.
"""
from __future__ import annotations

import functools

import torch


def _probe(*args, **kwargs):   # only wrapped, to recognise torch's wrapper by its code
    return None


@functools.lru_cache(maxsize=None)
def _torch_parts():
    """(the code of torch's disable wrapper, the callback getter, dynamo's eval_frame module) or None."""
    try:
        import torch._dynamo.eval_frame as eval_frame
        from torch._C._dynamo.eval_frame import get_eval_frame_callback

        code = torch._disable_dynamo(_probe, recursive=True).__code__
    except (ImportError, AttributeError, TypeError):
        return None
    if not hasattr(eval_frame, "_stance") or not hasattr(eval_frame._stance, "stance"):
        return None
    return code, get_eval_frame_callback, eval_frame


def supported() -> bool:
    return _torch_parts() is not None


def _wrapped_dispatch(cls):
    """The class's `__torch_dispatch__` as torch wrapped it (from its own dict or its nearest base's),
    and the function inside torch's wrapper; (None, None) when it is not torch's wrapper."""
    parts = _torch_parts()
    for klass in cls.__mro__:
        fn = klass.__dict__.get("__torch_dispatch__")
        if fn is None:
            continue
        inner = getattr(fn, "__wrapped__", None)
        if parts is None or getattr(fn, "__code__", None) is not parts[0] or inner is None:
            return None, None
        return fn, inner
    return None, None


def install(cls) -> bool:
    """Give `cls` (a TorchDispatchMode subclass) the direct call while dynamo is idle; says whether."""
    wrapped, inner = _wrapped_dispatch(cls)
    if wrapped is None:
        return False
    _, callback, eval_frame = _torch_parts()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if callback() is None and eval_frame._stance.stance == "default":
            return inner(self, func, types, args, kwargs)
        return wrapped(self, func, types, args, kwargs)

    __torch_dispatch__.__wrapped__ = wrapped
    __torch_dispatch__.__qualname__ = f"{cls.__qualname__}.__torch_dispatch__"
    cls.__torch_dispatch__ = __torch_dispatch__
    return True
