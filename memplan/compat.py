"""Feature probes for torch / torch_npu / transformers versions, in one place.

`import_torch_npu(what)`: the one check that torch_npu is installed and importable (it needs the CANN
runtime; without it `import torch_npu` fails with `ImportError: libhccl.so ...`), as a one-line UserError.

`eager_paths()`: keep libraries on their real (eager) code paths while memplan traces on fake tensors.

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
import importlib.util
import sys

from memplan.errors import UserError


def require_torch_npu(what: str = "--device npu") -> None:
    """A one-line UserError when torch_npu is not installed (checked without importing torch)."""
    if importlib.util.find_spec("torch_npu") is None:
        raise UserError(f"{what}: torch_npu is not installed (pip install 'memplan[npu]', with CANN)")


def import_torch_npu(what: str = "--device npu"):
    """Import torch_npu (registers `torch.npu`) or raise a one-line UserError saying why it cannot be."""
    require_torch_npu(what)
    try:
        import torch_npu  # noqa: F401  (needs the CANN runtime)
    except Exception as exc:  # noqa: BLE001 - e.g. ImportError: libhccl.so without the CANN runtime
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UserError(f"{what}: torch_npu cannot be imported: {first}") from None
    return torch_npu


def torch_npu_installed() -> bool:
    """Whether torch_npu is installed at all (not whether it imports)."""
    return importlib.util.find_spec("torch_npu") is not None


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
