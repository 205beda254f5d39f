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


@contextlib.contextmanager
def fake_module_conversion():
    """While active, `Module.to(...)` / `.float()` / `.half()` on a module whose parameters are fake
    tensors replaces each converted parameter with a new `Parameter`, as torch does for real tensors
    when `torch.__future__.set_overwrite_module_params_on_conversion(True)`.

    torch's own `Module._apply` always swaps a FakeTensor parameter in place
    (`torch.utils.swap_tensors`), which refuses tensors that have weak references - and every fake
    tensor has one (FakeTensorMode's memo). So any library that moves or casts a module while it is
    built (PEFT's `get_peft_model` moves each adapter to its base layer's device and dtype) fails
    with "_apply(): Couldn't swap Linear.weight". The replacement has the same memory effect (the
    converted copy is allocated, the old one freed when unreferenced); a conversion that changes
    nothing keeps the very same parameter, and parameters tied before stay tied."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensor

    orig = torch.nn.Module._apply
    memo: dict[int, object] = {}
    depth = [0]

    def _apply(self, fn, recurse=True):
        params = [p for p in self.parameters() if p is not None]
        if not params or not all(isinstance(p, FakeTensor) for p in params):
            return orig(self, fn, recurse)
        depth[0] += 1
        try:
            if recurse:
                for child in self.children():
                    child._apply(fn)
            for key, p in list(self._parameters.items()):
                if p is not None:
                    self._parameters[key] = _converted(p, fn)
            for key, b in list(self._buffers.items()):
                if b is not None:
                    self._buffers[key] = fn(b)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                memo.clear()
        return self

    def _converted(p, fn):
        if id(p) in memo:               # a parameter shared by several modules: convert it once
            return memo[id(p)]
        with torch.no_grad():
            applied = fn(p)
        if applied is p:
            new = p
        else:
            new = torch.nn.Parameter(applied, requires_grad=p.requires_grad)
            if p.grad is not None:
                with torch.no_grad():
                    new.grad = fn(p.grad)
        memo[id(p)] = new
        return new

    torch.nn.Module._apply = _apply
    try:
        yield
    finally:
        torch.nn.Module._apply = orig
