"""Keep libraries on their real (eager) code paths while memplan traces on fake tensors.

Some libraries look for fake tensors and switch to the code path they use under `torch.compile` /
export: transformers' `is_tracing(tensor)` is true for a FakeTensor, so its attention-mask code never
skips the causal mask (a real eager run passes `is_causal=True` to SDPA instead and allocates no
mask) - every HF decoder's estimate would carry a (batch, 1, seq, seq) mask that the real step does
not have. During a memplan trace such checks answer "not tracing", as they do in the real run the
estimate stands for. torch.distributions' argument validation is off for the same reason. Values
those code paths then read (`padding_mask.all()`) come from the
recorder's value shadows, or are answered conservatively.
"""
from __future__ import annotations

import contextlib
import sys


def _not_fake(x) -> bool:
    return False


@contextlib.contextmanager
def eager_paths():
    """While active, libraries that test for fake tensors take their eager path."""
    patched = []
    iu = sys.modules.get("transformers.utils.import_utils")
    if iu is not None and callable(getattr(iu, "is_fake_tensor", None)):
        patched.append((iu, "is_fake_tensor", iu.is_fake_tensor))
        iu.is_fake_tensor = _not_fake
    # torch.distributions checks argument values (`constraint.check(x).all()`), which fake tensors
    # cannot answer; the real step passes those checks, so they are skipped while tracing
    import torch.distributions as dist

    validate = dist.Distribution._validate_args
    dist.Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        dist.Distribution.set_default_validate_args(validate)
        for mod, name, orig in reversed(patched):
            setattr(mod, name, orig)
