"""The project's exceptions.

`MemplanError` is the base. `UserError` means the input was wrong (exit code 2 at the CLI): its message is
one line saying what is wrong and how to fix it. `TraceError` means a model op could not be traced; it
names the op and the module and suggests the fallback.
"""
from __future__ import annotations


class MemplanError(Exception):
    """Base class of every error memplan raises on purpose."""


class UserError(MemplanError):
    """Bad input: missing file, malformed config, unknown option value. CLI exit code 2."""


class TraceError(UserError):
    """A model op could not be traced on fake tensors."""

    def __init__(self, message: str, *, op: str | None = None, module: str | None = None):
        super().__init__(message)
        self.op = op
        self.module = module


class MemoryPlanError(MemplanError):
    """Raised by `memplan.preflight` when the workload does not fit the device."""

    def __init__(self, message: str, estimate=None, advice: str | None = None):
        super().__init__(message)
        self.estimate = estimate
        self.advice = advice
