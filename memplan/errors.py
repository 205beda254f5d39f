"""The project's exceptions.

`MemplanError` is the base. `UserError` means the input was wrong (exit code 2 at the CLI): its message is
one line saying what is wrong and how to fix it. `TraceError` means a model op could not be traced; it
names the op and the module and suggests the fallback. `BuildError` is a failure of `build_model()` under
fake tensors; `UserCodeError` a failure of the user's code that a real run confirms. Callers tell them
apart by type, never by message text.
"""
from __future__ import annotations


class MemplanError(Exception):
    """Base class of every error memplan raises on purpose."""


class UserError(MemplanError):
    """Bad input: missing file, malformed config, unknown option value. CLI exit code 2."""


class UserCodeError(UserError):
    """The user's own code (model file, build_model, make_batch, loss, step) raised, on real tensors too:
    a bug to fix there, not a limit of memplan's tracing. CLI exit code 2."""


class BuildError(UserError):
    """`build_model()` raised while building under fake tensors. The fake-tensor mode can be the cause
    (code that reads values back while building), so the one fallback path (memplan.core.fallback)
    retries with a real build before blaming the model."""


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
