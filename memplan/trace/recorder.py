"""The recorder: a private TorchDispatchMode that logs every storage allocation and free.

Shape of `__torch_dispatch__` (as in PyTorch's own FlopCounterMode / MemTracker): run the op, look at
the output tensors, record storages never seen before. A storage's free is seen through a weakref
callback on its Python object, which PyTorch keeps alive exactly as long as the C++ storage (storage
PyObject preservation). No per-module loop runs per op: the current module is a stack maintained by
global module hooks, the current phase is set by the step driver and by global optimizer hooks.

Categories: storages start as `temporaries` (or `inputs` / `other` by phase); a saved-tensor pack hook
turns forward outputs saved for backward into `activations`; the driver retags parameters, gradients
and optimizer state. A storage's final category holds for its whole life.
"""
from __future__ import annotations

import operator
import os
import sys
import weakref
from collections import Counter

import torch
from torch._subclasses.fake_tensor import (
    DataDependentOutputException, DynamicOutputShapeException, FakeTensor,
)
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes
from torch.utils._pytree import tree_flatten, tree_unflatten
from torch.utils.weak import WeakIdKeyDictionary

from memplan import compat
from memplan.trace import custom_ops, datadep, fastdevice, nodynamo, views
from memplan.trace.events import StorageRecord, Trace
from memplan.trace.kernels import WRAPPED_DTYPES, put_back, real_layouts, take_device_mode

aten = torch.ops.aten
_LOCAL_SCALAR = aten._local_scalar_dense.default
_ADD = aten.add.Tensor
_PRIM_DEVICE = torch.ops.prim.device.default
_STORAGE_USE_COUNT = torch._C._storage_Use_Count
# A fresh temporary's storage use count as seen from a Python dispatch mode (the tensor plus the
# Python-visible wrapper); a real tensor held only by the autograd engine has use count 1.
_FAKE_STEALABLE_USE_COUNT = 2
_ASSUMED = {aten.all: True, aten.any: False}
_NONFINITE_TESTS = frozenset((aten.isnan.default, aten.isinf.default, aten.isposinf.default,
                              aten.isneginf.default))
_cdata = operator.attrgetter("_cdata")
# Random draws in [low, high) (default [0, 1)): a one-element draw usually steers control flow (LayerDrop,
# stochastic depth: `if torch.rand([]) < p: skip the layer`). Its value in a real run is a coin toss the
# trace cannot replay, so it gets a fixed shadow at the top of the range: nothing is dropped, every layer
# runs -- the run's peak without drops, which drops only lower.
_UNIT_RANDOM = {aten.rand.default: None, aten.rand.generator: None, aten.rand_like.default: None,
                aten.uniform_.default: 2}   # value: index of the `to` argument

# Factories whose values are whatever the memory held: a value shadow of one is zeros (deterministic), not
# garbage that would differ between traces (block-once compares traces of different depths)
_UNINITIALIZED = frozenset((aten.empty.memory_format, aten.empty_like.default, aten.empty_strided.default,
                            aten.new_empty.default, aten.new_empty_strided.default))

# A Python number passed where an op takes a tensor (`x * 0.5`, `x + 1`) becomes a 0-dim host tensor, a
# "wrapped number" (double, long, bool or complex double), made with the CPU allocator before the op;
# the dispatch mode sees the number again, never that tensor. Autograd may keep it until its node runs
# in backward (MulBackward0 saves `other`), without calling saved-tensor hooks.
def _tensor_slots(func) -> tuple:
    """(position, name) of the schema's positional Tensor arguments."""
    return tuple((i, a.name) for i, a in enumerate(func._schema.arguments)
                 if not a.kwarg_only and isinstance(a.type, torch.TensorType))


# In-place ops on a view whose autograd node keeps a wrapped number (the node is then inside the
# base's CopySlices, out of reach): the gradient for `self` needs `other` (tools/autograd/
# derivatives.yaml, mul.Tensor and div.Tensor; their in-place forms share the formulas)
_INPLACE_KEEPS_NUMBER = {aten.mul_.Tensor: "other", aten.div_.Tensor: "other"}


# dynamo's `disable` wrappers around a dispatch mode's `__torch_dispatch__` (torch >= 2.x)
_DISPATCH_WRAPPERS = tuple(os.path.join(os.path.dirname(torch.__file__), p) for p in ("_dynamo", "_compile.py"))


def _engine_code() -> bool:
    """Whether the running op was issued by the autograd engine's C++ (a built-in node's formula, the
    engine's sum of two gradients): the nearest Python frame below the dispatch modes is then the one that
    started the engine (`Variable._execution_engine.run_backward`). An op from Python code that runs during
    backward (a custom Function's backward, a saved-tensor hook recomputing a checkpointed forward, a
    tensor hook) has that code as its frame."""
    f = sys._getframe(2)
    while f is not None and (f.f_code.co_name == "__torch_dispatch__"
                             or f.f_code.co_filename.startswith(_DISPATCH_WRAPPERS)):
        f = f.f_back
    return f is not None and "run_backward" in f.f_code.co_names


_CATEGORY_BY_PHASE = {
    "build": "other", "inputs": "inputs", "forward": "temporaries", "backward": "temporaries",
    "optimizer": "temporaries", "zero_grad": "temporaries", "step": "temporaries", "end": "other",
}


class _Ref(weakref.ref):
    """Weak reference to a storage that knows its record id and its key in the live table."""

    __slots__ = ("key", "sid")


class _Held:
    """torch without storage PyObject preservation (2.1): each `untyped_storage()` call makes a new
    wrapper, so a weakref to one says nothing about the storage (and dangles: touching it crashes).
    The recorder then holds one wrapper per live storage and calls a storage dead when that wrapper is
    its last user (`_storage_Use_Count == 1`), checked before every new allocation and phase mark."""

    __slots__ = ("storage", "key", "sid")

    def __init__(self, storage, key: int, sid: int):
        self.storage, self.key, self.sid = storage, key, sid


class Recorder:
    """Owns the Trace being written and the bookkeeping; the dispatch mode calls `see`."""

    def __init__(self) -> None:
        self.trace = Trace()
        self._ev = self.trace.events
        self._st = self.trace.storages
        self._live: dict[int, _Ref | _Held] = {}   # storage key -> weakref (or holder) carrying the record id
        self._hold = not compat.storage_pyobject_preserved()
        # key of a storage: its Python object where that lives as long as the storage, else the StorageImpl
        self._key = _cdata if self._hold else id
        # use count of a temporary the engine may overwrite, seen from here (+1 for the held wrapper)
        self.stealable_use_count = _FAKE_STEALABLE_USE_COUNT + self._hold
        self.module_stack: list[str] = [""]
        self.phase = "build"
        self.step = 0
        self.micro = 0
        self.in_optimizer = False
        self.bw_module = ""
        self.scalar_calls = 0
        self.build_scalar_calls = 0   # of which while the model was built (its structure may depend on them)
        self.on_scalar_read = None    # called at each counted read (a caller that refuses them stops at the first)
        self.closed = False

    # ---- recording ----------------------------------------------------------------------------
    def _on_dead(self, ref: _Ref) -> None:
        if self.closed:
            return
        if self._live.get(ref.key) is ref:
            del self._live[ref.key]
        if ref.sid is not None:
            self._ev.append(~ref.sid)

    def _watch(self, st, key: int, sid: int) -> None:
        if self._hold:
            self._live[key] = _Held(st, key, sid)
            return
        ref = _Ref(st, self._on_dead)
        ref.key = key
        ref.sid = sid
        self._live[key] = ref

    def _sweep(self) -> None:
        """Held storages (see `_Held`) whose only user is the recorder are freed now."""
        dead = [h for h in self._live.values() if _STORAGE_USE_COUNT(h.key) == 1]
        for h in dead:
            del self._live[h.key]
            if h.sid is not None:
                self._ev.append(~h.sid)

    def steal(self, src: torch.Tensor, out: torch.Tensor) -> bool:
        """`out` reuses the memory of `src` (the real kernel would have written in place): the record of
        `src` moves to `out`'s storage and `src`'s storage will die without a free event."""
        sref = self._live.get(self._key(src.untyped_storage()))
        ost = out.untyped_storage()
        okey = self._key(ost)
        if sref is None or okey in self._live or ost.nbytes() != self._st[sref.sid].nbytes:
            return False
        sid, sref.sid = sref.sid, None
        del self._live[sref.key]
        self._watch(ost, okey, sid)
        return True

    def see(self, t: torch.Tensor, opname: str) -> None:
        st = t.untyped_storage()
        key = self._key(st)
        ref = self._live.get(key)
        nbytes = st.nbytes()
        if ref is not None:
            old = ref.sid
            if self._st[old].nbytes == nbytes:
                return
            # resized in place: the real allocator allocates the new size, copies, frees the old one
            if nbytes:
                ref.sid = self._new_record(nbytes, opname, t)
                self._ev.append(ref.sid)
                self._ev.append(~old)
            else:
                del self._live[key]
                self._ev.append(~old)
            return
        if nbytes == 0:
            return
        if self._hold:
            self._sweep()
        sid = self._new_record(nbytes, opname, t)
        self._watch(st, key, sid)
        self._ev.append(sid)

    def _new_record(self, nbytes: int, opname: str, t: torch.Tensor) -> int:
        phase = "optimizer" if self.in_optimizer else self.phase
        if phase == "step" and torch._C._current_autograd_node() is not None:
            phase = "backward"
        module = self.bw_module if phase == "backward" else self.module_stack[-1]
        self._st.append(StorageRecord(nbytes, _CATEGORY_BY_PHASE.get(phase, "temporaries"), module, phase,
                                      opname, self.step, self.micro, str(t.dtype)[6:]))
        return len(self._st) - 1

    def scratch(self, plan: list, record_outputs, opname: str) -> None:
        """Replay a kernel rule's plan (memplan.trace.kernels): scratch allocations and frees around the
        moment the op's outputs are recorded."""
        sids: list[int] = []
        done = False
        if self._hold:
            self._sweep()
        for step in plan:
            if step == "outputs":
                record_outputs()
                done = True
            elif isinstance(step, int):
                phase = "optimizer" if self.in_optimizer else self.phase
                module = self.bw_module if phase == "backward" else self.module_stack[-1]
                self._st.append(StorageRecord(step, "temporaries", module, phase, opname + "[scratch]",
                                              self.step, self.micro, ""))
                sids.append(len(self._st) - 1)
                self._ev.append(sids[-1])
            else:
                self._ev.append(~sids[step.index])
        if not done:
            record_outputs()

    def sid_of(self, t: torch.Tensor) -> int | None:
        ref = self._live.get(self._key(t.untyped_storage()))
        return None if ref is None else ref.sid

    def retag(self, t: torch.Tensor, category: str, module: str | None = None,
              only_from: tuple[str, ...] | None = None) -> None:
        """Set the category of the storage behind `t` (a storage not seen yet is recorded first)."""
        sid = self.sid_of(t)
        if sid is None:
            if t.untyped_storage().nbytes() == 0:
                return
            self.see(t, "<untracked>")
            sid = self.sid_of(t)
            if sid is None:
                return
        rec = self._st[sid]
        if only_from is not None and rec.category not in only_from:
            return
        rec.category = category
        if module is not None:
            rec.module = module

    def mark(self, phase: str, step: int, micro: int) -> None:
        if self._hold:
            self._sweep()
        self.phase, self.step, self.micro = phase, step, micro
        if phase == "backward":
            # what backward allocates before it unpacks a saved tensor (the loss's gradient) belongs to
            # the top level, in every step alike, not to the module the previous backward ended in
            self.bw_module = ""
        self.trace.marks.append((len(self._ev), phase, step, micro))

    def close(self) -> Trace:
        """Stop watching: storages still alive are freed at the end of the trace."""
        for ref in list(self._live.values()):
            self._ev.append(~ref.sid)
        self._live.clear()
        self.closed = True
        return self.trace


_MISSING = object()
_ROUTING = datadep.ROUTING_OPS
_WORST = datadep.WORST_CASE
# Floating tensors of known values without a shadow of their own: constant-filled factories are noted
# (value: the fill, or the index of the fill argument as a str), and an out-of-place scatter into one
# with routing indices (JetMoE's `zeros(T, E).scatter(1, top_k_indices, 1)`, then `.sum(0).tolist()` as
# split sizes) gets a real shadow, made only then
_FILLS = {aten.zeros.default: 0, aten.zeros_like.default: 0, aten.new_zeros.default: 0,
          aten.ones.default: 1, aten.ones_like.default: 1, aten.new_ones.default: 1,
          aten.full.default: "1", aten.full_like.default: "1", aten.new_full.default: "2"}
_SCATTERS = frozenset((aten.scatter.value, aten.scatter.src, aten.scatter_add.default))
# A float tensor of unknown values compared with a number (BLT's `entropies > threshold`, whose True
# entries start patches): True everywhere, as datadep's worst case selects every element -- stated in the
# notes. Unlike that rule the mask gets a shadow, so what is derived from it (its negation, a
# concatenation, a count read with `.item()`) stays consistent with it.
_THRESHOLDS = frozenset((aten.gt.Scalar, aten.ge.Scalar, aten.lt.Scalar, aten.le.Scalar))
_VALUE_OPS = {**_FILLS, **dict.fromkeys(_SCATTERS), **dict.fromkeys(_THRESHOLDS)}


BUILD_SHADOW_MAX_NUMEL = 1 << 16
"""While the model is built, tensors up to this size (floating ones too) get real value shadows, so the
constructor's scalar reads (`[x.item() for x in torch.linspace(0, rate, depth)]`, Hiera's
`torch.tensor(depths).cumsum(0).tolist()`) see real values."""


def _small(out) -> bool:
    if isinstance(out, torch.Tensor):
        return out.numel() <= BUILD_SHADOW_MAX_NUMEL
    if isinstance(out, (tuple, list)):
        return all(o.numel() <= BUILD_SHADOW_MAX_NUMEL for o in out if isinstance(o, torch.Tensor))
    return False


def _has_nonfloat(out) -> bool:
    """Whether an op's output has an integer/bool tensor (one that may get a value shadow)."""
    if isinstance(out, torch.Tensor):
        return not out.is_floating_point()
    if isinstance(out, (tuple, list)):
        return any(isinstance(o, torch.Tensor) and not o.is_floating_point() for o in out)
    return False


class RecordingMode(TorchDispatchMode):
    """Private dispatch mode: runs the op, records new output storages. Sits on top of FakeTensorMode.

    Scalar shadows: fake tensors have no values, but training code reads a few scalars back into
    Python (`.item()` of Adam's step counter, GradScaler's found_inf and scale). Every 0-dim tensor whose
    value can be computed from known scalars (constants, optimizer step counters, loss scale) gets a
    real 0-dim "shadow" that the same ops update, so `.item()` answers with the real value. A scalar
    computed from full tensors (e.g. found_inf after unscaling gradients) keeps its previous value:
    memplan assumes finite gradients. Any other `.item()` answers 0 and is counted in the trace's notes.

    Value shadows: small integer/bool tensors computed from shadowed inputs (the batch's token ids,
    factories such as `arange`, routing indices) get real shadows too, so data-dependent ops on them
    (`nonzero`, boolean masks, `unique`, `.item()`, `.tolist()`) get their true sizes; routing indices
    over fake floats and data-dependent ops on unknown values follow `memplan.trace.datadep`'s policy.
    Custom ops without fake kernels use `memplan.trace.custom_ops`. Both are consulted only when an op
    fails under fake tensors, or (routing) by one dict lookup per op; `counts` tallies what was done.
    """

    def __init__(self, recorder: Recorder, kernel_rules: dict | None = None,
                 fake_kernels: dict | None = None):
        super().__init__()
        self.rec = recorder
        self.kernel_rules = kernel_rules or {}
        self.fake_kernels = fake_kernels or {}
        self.last_failed_op: str | None = None
        self.assumed = 0  # all()/any() of unknown values answered with the common case
        self.shadows = WeakIdKeyDictionary()
        self.fills = WeakIdKeyDictionary()   # floating factory output -> its constant fill value
        self.assumed_values = WeakIdKeyDictionary()   # shadows that rest on an assumption (`_THRESHOLDS`)
        self._mutable: dict = {}
        self.counts: Counter = Counter()   # (rule, op name) -> times: exact | routing | worst | custom | zeros
        self.unfaked: dict[str, tuple[str, str]] = {}   # op run on zeros -> (module, op packet name)
        self.in_linear = False   # inside F.linear's matmul + bias branch (memplan.trace.composites)
        self._opname = compat.op_name_getter()
        self.host_scalars = False   # record wrapped numbers (host tensors: device memory on CPU targets)
        self._slots: dict = {}
        self._wrapped_pending: tuple | None = None   # (the last op, its output, its wrapped numbers)
        self._inplace_views: list = []               # views just changed in place (memplan.trace.views)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        fmode = take_device_mode()
        if fmode is not None:   # an op the autograd engine runs in backward: as in forward, without it
            try:
                return RecordingMode.__torch_dispatch__(self, func, types, args, kwargs)
            finally:
                put_back(fmode)
        if func is _PRIM_DEVICE and fastdevice.ENABLED and not kwargs:   # the engine asks a tensor's device:
            device = fastdevice.device_of(args)                         # nothing to record (see below)
            if device is not None:
                return device
        if func is _LOCAL_SCALAR:
            return self._item(args[0])
        if self._wrapped_pending and func is not _PRIM_DEVICE and not func.is_view:
            self._settle_wrapped()
        if self._inplace_views and func is not _PRIM_DEVICE and not func.is_view:
            for v in self._inplace_views:
                views.real_view_grad(v)
            self._inplace_views.clear()
        engine = ((func is _ADD or self.host_scalars) and torch._C._current_autograd_node() is not None
                  and _engine_code())
        wrapped = self._wrapped_args(func, args) if self.host_scalars and not engine else None
        kwargs = kwargs or {}
        try:
            out = func(*args, **kwargs)
        except Exception as exc:
            out = self._unfakeable(func, args, kwargs, exc)
        if func is _ADD:
            if engine:
                self._engine_accumulate(args, kwargs, out)
            elif self.in_linear:
                self._linear_bias(args, out)
        rule = self.kernel_rules.get(func)
        plan = rule(args, kwargs, out) if rule is not None else None
        if plan:
            # the kernel's scratch around its outputs; the outputs then get shadows like any op's
            out = real_layouts(plan, out)
            seen = []
            self.rec.scratch(plan, lambda: seen.append(self._see_outputs(func, out)), self._opname(func))
            scalar_out = seen[0]
        else:
            scalar_out = self._see_outputs(func, out)
        if func in _UNIT_RANDOM and isinstance(out, torch.Tensor) and out.numel() == 1 \
                and out.is_floating_point():
            self._random_draw(func, args, kwargs, out)
            return out
        mutable = self._mutable.get(func)
        if mutable is None:
            mutable = self._mutable[func] = func._schema.is_mutable
        if scalar_out or (_small(out) if self.building else
                          (len(self.shadows) and (mutable or _has_nonfloat(out)))):
            self._shadow(func, args, kwargs, out)
        if func in _VALUE_OPS and isinstance(out, torch.Tensor) and out.numel() <= datadep.SHADOW_MAX_NUMEL:
            self._known_values(func, args, kwargs, out)
        routing = _ROUTING.get(func)
        if routing is not None:
            self._route(routing, func, args, kwargs, out)
        elif func in _NONFINITE_TESTS and out not in self.shadows and out.numel() <= datadep.SHADOW_MAX_NUMEL:
            self._finite(out)
        if wrapped:
            self._wrapped_pending = (func, out, wrapped)
        if mutable and isinstance(out, torch.Tensor) and out.requires_grad and out._is_view() \
                and torch.is_grad_enabled():
            self._inplace_views.append(out)   # its rebuilt gradient node: memplan.trace.views
        return out

    def _wrapped_args(self, func, args) -> list | None:
        """The op's wrapped numbers (`WRAPPED_DTYPES`), recorded before its outputs as the real allocator
        sees them, each as a stand-in host tensor: [(argument name, stand-in)], None when there are none.
        Not for ops the autograd engine issues (`_engine_code`): a wrapped number there is the one a node
        saved (counted); Python code run during backward (a custom Function's backward: reentrant
        checkpointing, Reformer's reversible layers recompute the forward there; a saved-tensor hook
        recomputing a non-reentrant checkpoint) makes new ones."""
        slots = self._slots.get(func)
        if slots is None:
            slots = self._slots[func] = _tensor_slots(func)
        found = None
        for i, name in slots:
            if i < len(args):
                dtype = WRAPPED_DTYPES.get(type(args[i]))
                if dtype is not None:
                    with _disable_current_modes():
                        stand_in = torch.empty((), dtype=dtype)
                    self.rec.see(stand_in, "<wrapped number>")
                    found = found or []
                    found.append((name, stand_in))
        return found

    def _settle_wrapped(self) -> None:
        """After the op that made them (its autograd node now exists): a wrapped number the node saved
        lives on as that node's saved tensor, whose storage takes over the stand-in's record (freed when
        backward releases the node's saved tensors); the others are freed now. Called at the next op
        that is neither `prim.device` (autograd asks the device before it links the node) nor a view op:
        reading `grad_fn` of a view locks its view metadata, which autograd holds while it replays view
        ops to rebuild that view's node after an in-place op (Longformer's `q /= sqrt(d)` on a view)."""
        func, out, wrapped = self._wrapped_pending
        self._wrapped_pending = None
        o = next((o for o in (out if isinstance(out, (tuple, list)) else (out,))
                  if isinstance(o, torch.Tensor) and o.requires_grad), None)
        if o is None:
            return
        if o._is_view() and self._mutable.get(func):
            # in place on a view (`_INPLACE_KEEPS_NUMBER`): the numbers the op's node keeps stay
            # recorded until the base's CopySlices has run in backward
            node = o._base.grad_fn
            kept = [s for name, s in wrapped if _INPLACE_KEEPS_NUMBER.get(func) == name]
            if node is not None and kept:
                node.register_hook(lambda grad_in, grad_out, kept=kept: kept.clear())
            return
        node = o.grad_fn
        if node is None:
            return
        for name, stand_in in wrapped:
            saved = getattr(node, "_saved_" + name, None)
            if isinstance(saved, torch.Tensor) and not isinstance(saved, FakeTensor) and saved.dim() == 0:
                self.rec.steal(stand_in, saved)

    # ---- ops fake tensors cannot run -----------------------------------------------------------
    def _unfakeable(self, func, args, kwargs, exc):
        """An op failed under fake tensors: a custom op's fake kernel, a data-dependent op's size
        policy (memplan.trace.datadep), or a custom op run on zeros; else re-raise."""
        kernel = custom_ops.lookup(self.fake_kernels, func)
        if kernel is not None:
            self.counts["custom", func.name()] += 1
            return kernel(*args, **kwargs)
        if isinstance(exc, (DynamicOutputShapeException, DataDependentOutputException)) or func in _WORST:
            out = self._exact(func, args, kwargs)
            if out is not _MISSING:
                assumed = any(o in self.assumed_values for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor))
                self.counts["worst" if assumed else "exact", func.name()] += 1
                return out
            handler = _WORST.get(func)
            if handler is not None:
                sizer = datadep.Sizer(self._shadow_of, self.rec.see, self._attach)
                out = handler(sizer, args, kwargs)
                exact = sizer.exact and not any(a in self.assumed_values for a in tree_flatten((args, kwargs))[0]
                                                if isinstance(a, torch.Tensor))
                self.counts["exact" if exact else "worst", func.name()] += 1
                return out
        rec = self.rec
        module = rec.bw_module if rec.phase == "backward" else rec.module_stack[-1]
        out = custom_ops.zeros_run(func, args, kwargs)
        if out is not None:
            self.counts["zeros", func.name()] += 1
            self.unfaked[str(func)] = self.unfaked[func.name()] = (module, str(func.overloadpacket))
            return out
        self.last_failed_op = str(func.overloadpacket)
        self.last_failed_module = module
        raise exc

    @property
    def building(self) -> bool:
        return self.rec.phase == "build"

    def model_built(self) -> None:
        """The model is built: float shadows made for build-time reads (e.g. stochastic-depth rates from
        `torch.linspace(...)`) are dropped; 0-dim and integer shadows stay, as during the step."""
        for t in [t for t in self.shadows.keys() if t.dim() and t.is_floating_point()]:
            self.shadows.pop(t, None)

    def _shadow_of(self, t):
        s = self.shadows.get(t)
        if s is None and t.dim() == 0 and isinstance(t, FakeTensor) and t.constant is not None:
            s = t.constant
        return s

    def _attach(self, fake, real) -> None:
        if real.numel() <= datadep.SHADOW_MAX_NUMEL:
            self.shadows[fake] = real

    def _exact(self, func, args, kwargs):
        """Run the op for real on the shadows of all its tensor inputs; fake outputs of the true
        shapes (with shadows). `_MISSING` when an input has no shadow."""
        flat, spec = tree_flatten((args, kwargs))
        real = []
        device = None
        assumed = False
        for a in flat:
            if isinstance(a, torch.Tensor):
                device = device or a.device
                s = self._shadow_of(a) if isinstance(a, FakeTensor) else a
                if s is None:
                    return _MISSING
                assumed = assumed or a in self.assumed_values
                real.append(s)
            else:
                real.append(a)
        rargs, rkwargs = tree_unflatten(real, spec)
        with _disable_current_modes():
            rout = func(*rargs, **rkwargs)
        rflat, ospec = tree_flatten(rout)
        fakes = []
        for r in rflat:
            if isinstance(r, torch.Tensor):
                f = torch.empty_strided(r.shape, r.stride(), dtype=r.dtype, device=device)
                if not r.is_floating_point():
                    self._attach(f, r)
                if assumed:
                    self.assumed_values[f] = True
                fakes.append(f)
            else:
                fakes.append(r)
        return tree_unflatten(fakes, ospec)

    def _route(self, synth, func, args, kwargs, out) -> None:
        """Indices picked from fake floats (router logits) get values by the routing policy."""
        target = out[1] if isinstance(out, (tuple, list)) else out
        if target in self.shadows or target.numel() > datadep.SHADOW_MAX_NUMEL:
            return
        with _disable_current_modes():
            pos, idx = synth(args, kwargs, out)
        self.shadows[out[pos] if pos is not None else out] = idx
        self.counts["routing", func.name()] += 1

    def _see_outputs(self, func, out) -> bool:
        """Record the op's output storages; True when one of them is 0-dim."""
        see = self.rec.see
        name = self._opname(func)
        scalar_out = False
        if isinstance(out, torch.Tensor):
            see(out, name)
            scalar_out = out.dim() == 0
        elif isinstance(out, (tuple, list)):
            for o in out:
                if isinstance(o, torch.Tensor):
                    see(o, name)
                    scalar_out = scalar_out or o.dim() == 0
                elif isinstance(o, (tuple, list)):
                    for x in o:
                        if isinstance(x, torch.Tensor):
                            see(x, name)
        return scalar_out

    def _engine_accumulate(self, args, kwargs, out) -> None:
        """The autograd engine sums two gradients for the same input with `old + new`, in place into
        `old` when it holds the last reference to it (torch/csrc/autograd/input_buffer.cpp, `accumulate`
        and `can_accumulate_inplace`: a plain contiguous tensor whose storage nobody else uses). Under
        fake tensors that test always fails (they are tensor subclasses), so the real in-place reuse is
        replayed here."""
        if len(args) != 2 or kwargs.get("alpha", 1) != 1:
            return
        a, b = args
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return
        if (a._base is None and a.is_contiguous()
                and _STORAGE_USE_COUNT(a.untyped_storage()._cdata) <= self.rec.stealable_use_count):
            self.rec.steal(a, out)

    def _linear_bias(self, args, out) -> None:
        """`at::linear`'s bias add after a matmul is in place in the real run (memplan.trace.composites)."""
        a = args[0]
        if isinstance(a, torch.Tensor) and a.shape == out.shape and a.dtype == out.dtype and a.is_contiguous():
            self.rec.steal(a, out)

    def _item(self, t):
        s = self.shadows.get(t)
        if s is None:
            s = getattr(t, "constant", None)
        if s is not None:
            with _disable_current_modes():
                return s.item()
        self.rec.scalar_calls += 1
        if self.building:
            self.rec.build_scalar_calls += 1
        if self.rec.on_scalar_read is not None:
            self.rec.on_scalar_read()
        return False if t.dtype == torch.bool else (0.0 if t.dtype.is_floating_point else 0)

    def _shadow(self, func, args, kwargs, out) -> None:
        flat, spec = tree_flatten((args, kwargs))
        real = []
        shadows = self.shadows
        assumed = False
        for a in flat:
            if isinstance(a, torch.Tensor):
                assumed = assumed or a in self.assumed_values
                s = shadows.get(a)
                if s is None:
                    if a.dim() != 0:
                        if isinstance(a, FakeTensor) or a.numel() > datadep.SHADOW_MAX_NUMEL:
                            self._assume(func, args, out)
                            return self._stale(func, args)
                        s = a   # a small real tensor (e.g. a constant made outside the fake mode)
                    elif isinstance(a, FakeTensor):
                        s = a.constant
                        if s is None:
                            return self._stale(func, args)
                        s = s.clone()
                        shadows[a] = s
                    else:
                        s = a
                real.append(s)
            else:
                real.append(a)
        fo = tree_flatten(out)[0]
        if sum(f.numel() for f in fo if isinstance(f, torch.Tensor)) > datadep.SHADOW_MAX_NUMEL:
            return self._stale(func, args)
        rargs, rkwargs = tree_unflatten(real, spec)
        with _disable_current_modes():
            rout = func(*rargs, **rkwargs)
            if func in _UNINITIALIZED:   # no values to know: zeros, the same in every trace
                rout = rout.zero_()
        ro = tree_flatten(rout)[0]
        building = self.building
        for f, r in zip(fo, ro):
            if isinstance(f, torch.Tensor) and isinstance(r, torch.Tensor) and (
                    f.dim() == 0 or not f.is_floating_point() or building):
                shadows[f] = r
                if assumed:
                    self.assumed_values[f] = True

    def _known_values(self, func, args, kwargs, out) -> None:
        """Note a constant fill (`_FILLS`); shadow a scatter whose inputs all have known values, or a
        comparison of unknown floats with a number (`_THRESHOLDS`)."""
        if func in _THRESHOLDS:
            # not while the model is built: there it is weight init (`trunc_normal_`'s resampling loop,
            # whose mask of large unshadowed weights is then unknown and assumed empty, as in a real run)
            # nor for a sign test (`x > 0`, `x < 0`): that is a mask's, as Longformer's `attention_mask > 0`
            # (0 local, a large positive value global), left unknown as any mask is (rule 3 of `datadep`)
            x = args[0]
            if not self.building and args[1] != 0 and isinstance(x, FakeTensor) and x.is_floating_point() and x.dim() \
                    and out not in self.shadows and self._shadow_of(x) is None:
                with _disable_current_modes():
                    self.shadows[out] = torch.ones(out.shape, dtype=torch.bool)
                self.assumed_values[out] = True
                self.counts["threshold", func.name()] += 1
            return
        if not out.is_floating_point():
            return
        fill = _FILLS.get(func, _MISSING)
        if fill is not _MISSING:
            value = kwargs.get("fill_value", args[int(fill)] if len(args) > int(fill) else None) \
                if isinstance(fill, str) else fill
            if isinstance(value, (int, float, bool)):
                self.fills[out] = value
            return
        flat, spec = tree_flatten((args, kwargs))
        real = []
        for a in flat:
            if isinstance(a, torch.Tensor):
                s = self._shadow_of(a)
                if s is None and a in self.fills:
                    with _disable_current_modes():
                        s = torch.full(a.shape, self.fills[a], dtype=a.dtype)
                if s is None:
                    return
                a = s
            real.append(a)
        rargs, rkwargs = tree_unflatten(real, spec)
        with _disable_current_modes():
            self.shadows[out] = func(*rargs, **rkwargs)

    def _random_draw(self, func, args, kwargs, out) -> None:
        """A one-element uniform draw: shadowed by the largest value below its upper bound."""
        pos = _UNIT_RANDOM[func]
        high = 1.0
        if pos is not None:
            high = kwargs.get("to", args[pos] if len(args) > pos else 1.0)
        with _disable_current_modes():
            hi = torch.full((), float(high), dtype=torch.float64)
            value = torch.nextafter(hi.to(out.dtype).double(), torch.tensor(float("-inf"), dtype=torch.float64))
            value = value.to(out.dtype)
            if value >= hi:   # rounded up again in a narrow dtype: one step down in that dtype's spacing
                value = (hi - torch.finfo(out.dtype).eps * abs(float(high) or 1.0)).to(out.dtype)
            self.shadows[out] = value.reshape(out.shape).clone()

    def _finite(self, out) -> None:
        """`isnan` / `isinf` of unknown values: all False (finite values assumed, as for all()/any())."""
        with _disable_current_modes():
            self.shadows[out] = torch.zeros(out.shape, dtype=torch.bool)
        self.assumed += 1

    def _assume(self, func, args, out) -> None:
        """`all()` / `any()` / `sum()` of a boolean tensor of unknown values: assume the common case --
        masks are full, nothing is NaN or inf -- so `all` is True, `any` is False and a mask's `sum` is its
        size (e.g. transformers then skips building a padding mask, as it does for a batch without
        padding). Counted in the trace's notes."""
        if not (isinstance(out, torch.Tensor) and out.dim() == 0):
            return
        packet = func.overloadpacket
        value = _ASSUMED.get(packet)
        if value is not None and out.dtype == torch.bool:
            real = torch.tensor(value)
        elif packet is aten.sum and args and isinstance(args[0], torch.Tensor) and args[0].dtype == torch.bool:
            real = torch.tensor(args[0].numel(), dtype=out.dtype)
        else:
            return
        with _disable_current_modes():
            self.shadows[out] = real.clone()
        self.assumed += 1

    def _stale(self, func, args) -> None:
        """A mutated tensor whose new value is unknown loses its (non-scalar) shadow. 0-dim shadows
        keep their value on purpose (found_inf: finite gradients are assumed)."""
        if self._mutable.get(func) and args and isinstance(args[0], torch.Tensor) and args[0].dim():
            self.shadows.pop(args[0], None)


nodynamo.install(RecordingMode)   # each op without dynamo's disable wrapper while dynamo is idle
