"""`guard()`: explain an OOM or accelerator error of a training step on stderr, then re-raise it unchanged.

    with memplan.guard():          # or @memplan.guard() on the training function
        train()

On an OOM or an NPU / ACL / CANN / HCCL / CUDA / NCCL error it prints the diagnosis (`memplan.diagnose`,
with the last pre-flight estimate if any) to stderr and re-raises the very same exception object.
Anything else passes through untouched, silently.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import re
import sys

from memplan.diagnose import diagnose
from memplan.report.diagnosis_text import render_diagnosis
from memplan.units import fmt_bytes
from memplan.validate.backends import exception_text
from memplan.validate.preflight import last_estimate

log = logging.getLogger("memplan")


_ACRONYMS = re.compile(
    r"\b(NPU|ACL|CANN|HCCL|NCCL|CUDA|cuDNN|CUBLAS|cuBLAS|AICPU|AI ?Core|aclnn\w*|E[A-Z0-9]\d{4}|EL\d{4}"
    r"|ERR\d{5})\b")
_PHRASES = re.compile(r"out of memory|device-side assert|illegal memory access|can't allocate memory", re.I)


def is_device_failure(exc: BaseException) -> bool:
    """An OOM, or a RuntimeError whose text names an accelerator runtime (NPU/ACL/CANN/HCCL/CUDA/NCCL codes)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(exc, getattr(torch, "OutOfMemoryError", ())):
        return True
    if isinstance(exc, MemoryError):
        return True
    if not isinstance(exc, RuntimeError):
        return False
    text = str(exc)[:20000]
    return bool(_PHRASES.search(text) or _ACRONYMS.search(text))


def _memory_now() -> str | None:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for fam in ("cuda", "npu"):
        mod = getattr(torch, fam, None)
        try:
            if mod is not None and mod.is_available() and mod.is_initialized():
                return (f"{fam} memory held now: {fmt_bytes(mod.memory_allocated())} allocated, "
                        f"{fmt_bytes(mod.memory_reserved())} reserved "
                        f"(peak {fmt_bytes(mod.max_memory_reserved())} reserved)")
        except RuntimeError as exc:   # a faulted device may refuse to report
            log.debug("%s memory counters unreadable: %s", fam, exc)
            continue
    return None


def explain(exc: BaseException, estimate=None) -> str:
    """The text guard() prints for a caught device failure."""
    text = exception_text(exc)
    est = estimate if estimate is not None else last_estimate()
    est_dict = est.to_dict() if hasattr(est, "to_dict") else est
    lines = [f"memplan guard: the training step failed with {type(exc).__name__}"]
    if est is not None:
        g = est_dict.get
        lines.append(f"memplan predicted {fmt_bytes(g('peak_allocated_bytes'))} allocated / "
                     f"{fmt_bytes(g('peak_reserved_bytes'))} reserved, peak during {g('peak_phase')}")
    now = _memory_now()
    if now:
        lines.append(now)
    lines.append(render_diagnosis(diagnose(text, est_dict)))
    return "\n".join(lines)


class Guard(contextlib.ContextDecorator):
    """Context manager / decorator: explain OOM and accelerator errors on stderr, then re-raise them as is."""

    def __init__(self, estimate=None, *, file=None):
        self.estimate = estimate
        self.file = file
        self.caught: BaseException | None = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None or not isinstance(exc, Exception) or not is_device_failure(exc):
            return False
        self.caught = exc
        out = self.file if self.file is not None else sys.stderr
        try:
            msg = explain(exc, self.estimate)
        except Exception as err:  # noqa: BLE001 - the explanation must never replace the original error
            msg = f"memplan guard: could not diagnose {type(exc).__name__}: {type(err).__name__}: {err}"
        try:
            print(msg, file=out, flush=True)
        except (OSError, ValueError) as err:   # a closed or broken stream: the original error still propagates
            log.debug("guard could not print its diagnosis: %s", err)
        return False   # re-raise the original exception, unchanged


def guard(fn=None, *, estimate=None, file=None):
    """`with guard():`, `@guard()`, `@guard` or `guard(estimate)`: see the module docstring."""
    if fn is not None and callable(fn) and not hasattr(fn, "peak_allocated_bytes"):
        g = Guard(estimate=estimate, file=file)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with g:
                return fn(*args, **kwargs)
        return wrapper
    return Guard(estimate=fn if fn is not None else estimate, file=file)


__all__ = ["guard", "Guard", "explain", "is_device_failure"]
