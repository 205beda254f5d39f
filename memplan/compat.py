"""What the installed torch, torch_npu and transformers can do: feature probes, in one place.

memplan supports every torch that torch_npu has a release for (2.1 to the newest). Their APIs differ;
the rest of memplan asks this module ("is there a CPU fused AdamW?", "where is FSDP2's fully_shard?")
instead of comparing version numbers itself. Each probe looks at the feature, not at the version
string, and is computed once. Where a feature is missing, `missing(...)` gives the one line that says so.

Version numbers are read only where no feature can be probed before torch is imported: the supported
range (checked from the installed package's metadata, before `import torch`) and the transformers ↔
torch pairing (transformers' own declared torch requirement).

`import_torch_npu(what)`: the one check that torch_npu is installed and importable (it needs the CANN
runtime; without it `import torch_npu` fails with `ImportError: libhccl.so ...`), as a one-line UserError.

`eager_paths()`: keep libraries on their real (eager) code paths while memplan traces on fake tensors.
Some libraries look for fake tensors and switch to the code path they use under `torch.compile` /
export: transformers' `is_tracing(tensor)` is true for a FakeTensor, so its attention-mask code never
skips the causal mask (a real eager run passes `is_causal=True` to SDPA instead and allocates no
mask) - every HF decoder's estimate would carry a (batch, 1, seq, seq) mask that the real step does
not have. During a memplan trace such checks answer "not tracing", as they do in the real run the
estimate stands for. torch.distributions' argument validation is off for the same reason. Values
those code paths then read (`padding_mask.all()`) come from the recorder's value shadows, or are
answered conservatively.

Known limitations: torch_npu's probes (memplan.validate.backends, memplan.alloc.config) read the
installed torch_npu version, because its allocator options are parsed in C++ and cannot be probed
without a device; the table they follow is docs/torch_npu_versions.md.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.metadata as _md
import importlib.util
import re
import sys

from memplan.errors import UserError

# The oldest torch memplan is tested on (benchmarks/results/compat.md): torch_npu's oldest line is 2.1.
TORCH_FLOOR = (2, 1)
SUPPORTED_RANGE = "torch 2.1 to 2.15 (every torch that torch_npu has a release for, and the newest)"


def version_tuple(text: str) -> tuple[int, ...]:
    """'2.1.2+cu121' -> (2, 1, 2); '2.5.0a0' -> (2, 5, 0)."""
    parts = []
    for p in text.split("+")[0].split(".")[:3]:
        m = re.match(r"\d+", p)
        if not m:
            break
        parts.append(int(m.group()))
    return tuple(parts)


@functools.lru_cache(maxsize=None)
def installed(dist: str) -> str | None:
    """The installed version of a distribution, without importing it; None when absent (read once per
    process: each look-up scans sys.path, and the allocator-setting parser asks for torch_npu's on every
    setting a plan tries)."""
    try:
        return _md.version(dist)
    except _md.PackageNotFoundError:
        return None


def check_torch() -> None:
    """One line and UserError (exit 2) for a torch older than memplan supports; checked before import."""
    have = installed("torch")
    if have is None:
        raise UserError("torch is not installed: install the torch your device needs (for Ascend: the one "
                        "your torch_npu was built for), then memplan")
    if version_tuple(have)[:2] < TORCH_FLOOR:
        raise UserError(f"torch {have} is not supported: memplan supports {SUPPORTED_RANGE}")


def describe(exc: BaseException) -> str:
    """`Type: first line of the message`, or the type alone: never an empty message."""
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


# ---- transformers ↔ torch ------------------------------------------------------------------------
def _declared_torch_floor(dist: str) -> tuple[int, ...] | None:
    """The torch floor a package declares for its torch extra (transformers: `torch>=2.2; extra == "torch"`)."""
    try:
        reqs = _md.requires(dist) or []
    except _md.PackageNotFoundError:
        return None
    for req in reqs:
        m = re.match(r"\s*torch\s*>=\s*([0-9.]+)", req)
        if m and "extra" in req:
            return version_tuple(m.group(1))
    return None


def transformers_mismatch() -> str | None:
    """One line when the installed transformers declares a newer torch than the installed one."""
    tf, torch_v = installed("transformers"), installed("torch")
    if tf is None or torch_v is None:
        return None
    floor = _declared_torch_floor("transformers")
    if floor is None or version_tuple(torch_v) >= floor:
        return None
    want = ".".join(map(str, floor))
    return (f"transformers {tf} needs torch>={want} but torch {torch_v} is installed: install a transformers "
            f"that supports torch {'.'.join(map(str, version_tuple(torch_v)[:2]))} "
            f"({_TRANSFORMERS_FOR_OLD_TORCH}) or a newer torch")


# transformers lines and the torch each declares (their METADATA, `torch>=X; extra == "torch"`)
_TRANSFORMERS_FOR_OLD_TORCH = "transformers<5 for torch 2.2-2.4, transformers<4.47 for torch 2.1"


# ---- torch features --------------------------------------------------------------------------------
def _torch():
    import torch

    return torch


@functools.lru_cache(maxsize=None)
def op_name_getter():
    """A function OpOverload -> its bare name ('add' for aten.add.Tensor). torch >= 2.4 keeps it in
    `_opname`; older OpOverloads only have `__name__` ('add.Tensor')."""
    import operator

    torch = _torch()
    if hasattr(torch.ops.aten.add.Tensor, "_opname"):
        return operator.attrgetter("_opname")
    return lambda func: func.__name__.split(".")[0]


def aten_op(name: str, overload: str = "default"):
    """`torch.ops.aten.<name>.<overload>`, or None where this torch has no such operator (e.g.
    `_safe_softmax`, the math SDPA's softmax from torch 2.5): for tables of per-op rules built at import."""
    try:
        packet = getattr(_torch().ops.aten, name)
    except (AttributeError, RuntimeError):   # which one a missing operator raises depends on the version
        return None
    return getattr(packet, overload, None)


@functools.lru_cache(maxsize=None)
def storage_pyobject_preserved() -> bool:
    """Whether a storage's Python object lives exactly as long as the storage (one object per storage,
    so weakrefs to it report the storage's death; torch >= 2.2). Without it every `untyped_storage()`
    is a fresh wrapper and a weakref to one dangles."""
    torch = _torch()
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        t = torch.zeros(1)
        return t.untyped_storage() is t.untyped_storage()


@functools.lru_cache(maxsize=None)
def meta_set_keeps_storage_size() -> bool:
    """Whether `set_` of a meta tensor onto a storage leaves that storage's size alone when the new view
    needs less (torch >= 2.4). Older meta `set_` sets the storage's nbytes to the view's extent, and
    torch 2.3's FakeTensorMode dispatch cache rebuilds every cached view output with `set_`: each
    `weight[i]` then shrinks the weight's (fake) storage to one row, and the trace would read that as
    the storage being freed (BERT's word embeddings vanished from the parameters on torch 2.3)."""
    torch = _torch()
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        st = torch.empty(16, device="meta").untyped_storage()
        torch.empty(0, device="meta").set_(st, 0, (1,), (1,))
        return st.nbytes() == 16 * 4


def has_swap_tensors() -> bool:
    """`torch.utils.swap_tensors` (torch >= 2.3; `Module._apply` swaps parameters with it)."""
    return hasattr(_torch().utils, "swap_tensors")


@functools.lru_cache(maxsize=None)
def has_adafactor() -> bool:
    return hasattr(_torch().optim, "Adafactor")


@functools.lru_cache(maxsize=None)
def fused_on_cpu(optimizer: str) -> bool:
    """Whether torch.optim.<optimizer>(fused=True) runs on CPU tensors (CPU fused kernels: torch >= 2.4)."""
    torch = _torch()
    cls = getattr(torch.optim, optimizer, None)
    if cls is None:
        return False
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        p = torch.nn.Parameter(torch.zeros(2))
        p.grad = torch.zeros(2)
        try:
            opt = cls([p], lr=0.1, fused=True)
            opt.step()
        except (RuntimeError, TypeError, ValueError, NotImplementedError):
            return False
    return True


@functools.lru_cache(maxsize=None)
def sdpa_has_enable_gqa() -> bool:
    """Whether F.scaled_dot_product_attention takes `enable_gqa` (torch >= 2.5)."""
    torch = _torch()
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        q = torch.zeros(1, 2, 1, 4)
        k = torch.zeros(1, 1, 1, 4)
        try:
            torch.nn.functional.scaled_dot_product_attention(q, k, k, enable_gqa=True)
        except TypeError:
            return False
        except RuntimeError:
            return True   # the keyword exists; the shapes are what it disliked
    return True


def redispatch_torch_function():
    """`torch.overrides.redispatch_function` (skip one hop of `__torch_function__` handling: a mode that
    re-enters itself can call the function it handles without handling the call again), or None where torch
    lacks it (the ones before its `_skip_one_hop_torch_function`)."""
    return getattr(_torch().overrides, "redispatch_function", None)


@functools.lru_cache(maxsize=None)
def has_custom_op() -> bool:
    """torch.library.custom_op / register_fake (torch >= 2.4)."""
    lib = _torch().library
    return hasattr(lib, "custom_op") and hasattr(lib, "register_fake")


def _fsdp2_name(name: str):
    """An FSDP2 name from `torch.distributed.fsdp` (public from 2.6) or `torch.distributed._composable.fsdp`
    (2.4-2.5), or None."""
    for mod in ("torch.distributed.fsdp", "torch.distributed._composable.fsdp"):
        try:
            obj = getattr(__import__(mod, fromlist=[name]), name, None)
        except ImportError:
            continue
        if obj is not None:
            return obj
    return None


# FSDP2's storage alloc/free helpers: their names by torch line (2.4+: alloc_storage / free_storage in
# _fsdp_param, also used from _fsdp_param_group in newer torch; 2.3: unsafe_alloc_storage / unsafe_free_storage)
_FSDP2_STORAGE_FUNCS = {"alloc_storage": "alloc", "free_storage": "free",
                        "unsafe_alloc_storage": "alloc", "unsafe_free_storage": "free"}


@functools.lru_cache(maxsize=None)
def fully_shard():
    """FSDP2's `fully_shard`, or None."""
    return _fsdp2_name("fully_shard")


@functools.lru_cache(maxsize=None)
def fsdp2_storage_hooks() -> tuple:
    """`(module, name, "alloc" | "free")` for each FSDP2 storage alloc/free helper this torch has (in
    `_fsdp_param` and `_fsdp_param_group`, where FSDP2 calls them); empty without FSDP2."""
    for pkg in ("torch.distributed.fsdp._fully_shard", "torch.distributed._composable.fsdp"):
        try:
            p = __import__(f"{pkg}._fsdp_param", fromlist=["FSDPParam"])
            g = __import__(f"{pkg}._fsdp_param_group", fromlist=["FSDPParamGroup"])
        except ImportError:
            continue
        return tuple((m, name, kind) for m in (p, g) for name, kind in _FSDP2_STORAGE_FUNCS.items()
                     if callable(getattr(m, name, None)))
    return ()


@functools.lru_cache(maxsize=None)
def fsdp2_mixed_precision_policy():
    """FSDP2's `MixedPrecisionPolicy`, or None."""
    return _fsdp2_name("MixedPrecisionPolicy")


@functools.lru_cache(maxsize=None)
def fsdp2_collectives():
    """FSDP2's `_fsdp_collectives` module when it has the DefaultAllGather / DefaultReduceScatter
    classes (torch >= 2.6), else None."""
    try:
        from torch.distributed.fsdp._fully_shard import _fsdp_collectives as c
    except ImportError:
        return None
    return c if hasattr(c, "DefaultAllGather") and hasattr(c, "DefaultReduceScatter") else None


@functools.lru_cache(maxsize=None)
def ddp_has_init_sync() -> bool:
    """Whether DistributedDataParallel takes `init_sync` (skip the initial parameter broadcast)."""
    import inspect

    from torch.nn.parallel import DistributedDataParallel

    return "init_sync" in inspect.signature(DistributedDataParallel.__init__).parameters


def _c10_flag(name: str):
    """A c10 command-line flag (`C10_DEFINE_bool`) of the c10 library next to torch, as a ctypes bool;
    None where the library or the exported symbol is not found."""
    import ctypes
    import glob
    import os

    lib_dir = os.path.join(os.path.dirname(_torch().__file__), "lib")
    for path in sorted(glob.glob(os.path.join(lib_dir, "*c10.*"))):
        if path.endswith((".so", ".dylib", ".dll")):
            try:
                return ctypes.c_bool.in_dll(ctypes.CDLL(path), name)
            except (OSError, ValueError):
                return None
    return None


@contextlib.contextmanager
def cpu_allocator_counts_every_thread():
    """c10's `caffe2_report_cpu_memory_usage` flag on for the duration. c10's CPU-allocator reporter
    (`ProfiledCPUMemoryReporter` in c10/core/CPUAllocator.cpp) updates its running total
    (`total_allocated`, reported with every profiler allocation event) only on a thread with memory
    profiling on, *or* when that flag is set: with it, every thread's allocations and frees are
    counted (events are still recorded only on profiled threads). Yields whether the flag was set."""
    flag = _c10_flag("FLAGS_caffe2_report_cpu_memory_usage")
    if flag is None:
        yield False
        return
    before = flag.value
    flag.value = True
    try:
        yield True
    finally:
        flag.value = before


@functools.lru_cache(maxsize=None)
def fake_process_group() -> bool:
    """torch's fake process group (`init_process_group("fake", store=FakeStore())`)."""
    try:
        from torch.testing._internal.distributed.fake_pg import FakeStore  # noqa: F401
    except ImportError:
        return False
    return True


@functools.lru_cache(maxsize=None)
def param_flag_passes_as_uninitialized() -> bool:
    """Whether a tensor flagged `_is_param` (what `nn.Parameter(fake)` gives: a FakeTensor, not a
    Parameter subclass) also passes `isinstance(t, UninitializedParameter)` (torch < 2.5: the metaclass's
    flag check answered for every Parameter subclass). DistributedDataParallel then refuses every fake
    parameter as uninitialized."""
    torch = _torch()
    t = torch.empty(0)
    t._is_param = True
    return isinstance(t, torch.nn.parameter.UninitializedParameter)


@contextlib.contextmanager
def exact_parameter_subclass_checks():
    """While active, the `_is_param` flag makes a tensor an instance of `Parameter` only, not of its
    subclasses (`UninitializedParameter`), as in torch >= 2.5; a no-op where that already holds."""
    if not param_flag_passes_as_uninitialized():
        yield
        return
    from torch.nn.parameter import Parameter, _ParameterMeta

    orig = _ParameterMeta.__instancecheck__

    def check(cls, instance):
        return orig(cls, instance) if cls is Parameter else type.__instancecheck__(cls, instance)

    _ParameterMeta.__instancecheck__ = check
    try:
        yield
    finally:
        _ParameterMeta.__instancecheck__ = orig


@contextlib.contextmanager
def _skipped_ddp_init_sync():
    """DDP without `init_sync` (torch 2.6 and older): skip its init-time parameter check and broadcast, as
    `init_sync=False` does (on fake tensors they would read data that does not exist)."""
    if ddp_has_init_sync():
        yield
        return
    import torch.nn.parallel.distributed as ddp_mod

    names = ("_verify_param_shape_across_processes", "_sync_module_states")
    orig = {n: getattr(ddp_mod, n) for n in names}
    for n in names:
        setattr(ddp_mod, n, lambda *args, **kwargs: None)
    try:
        yield
    finally:
        for n, fn in orig.items():
            setattr(ddp_mod, n, fn)


@contextlib.contextmanager
def fake_ddp_init():
    """While active, DistributedDataParallel can be built on fake parameters in a fake process group
    (the per-rank trace): they are not taken for uninitialized ones, and nothing is synced at init."""
    with exact_parameter_subclass_checks(), _skipped_ddp_init_sync():
        yield


def grad_scaler(device: str):
    """A GradScaler for `device`: torch.amp.GradScaler(device) (torch >= 2.3), torch.cuda.amp's before
    that on cuda; None where this torch has none (the CPU before 2.3)."""
    torch = _torch()
    cls = getattr(torch.amp, "GradScaler", None)
    if cls is not None:
        return cls(device)
    if device == "cuda":
        return torch.cuda.amp.GradScaler()
    return None


def missing(feature: str, instead: str | None = None) -> str:
    """The one line that says a feature is not in this torch (and what memplan does instead)."""
    line = f"{feature} is not in torch {_torch().__version__}"
    return f"{line}; {instead}" if instead else line


# ---- torch_npu and library code paths ---------------------------------------------------------------
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
