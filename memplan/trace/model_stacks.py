"""Block-once for model files: the repeated stack of a model file's model, cut to few layers in the tracer.

memplan.trace.blocks writes an N-layer trace from traces of the same model with d, d+1 and d+2 layers;
for a Hugging Face config it gets those models by rebuilding with a smaller `num_hidden_layers`. A model
file has no such knob, so here the d-layer model is the file's own model with its stack cut to d layers,
inside the tracer, after `build_model()` and before the step:

- the model is first built on fake tensors without recording (only inspected) to find the stack: the
  one outermost `nn.ModuleList` / `nn.Sequential` whose children are named 0..N-1, all of one class, at
  least `blocks.MIN_LAYERS` of them (shorter lists stay as built), identical from some layer on by the
  checks blocks.py makes (class, parameter and buffer shapes and dtypes, requires_grad, hooks, plain
  attributes other than the layer index, checkpointing);
- a second fake build counts the layer class's constructions (`__init__` calls and `copy.deepcopy` of an
  instance, as `nn.TransformerEncoder` clones its prototype layer) and where each ends: its position in
  the stack, or elsewhere (the prototype); every layer must be one construction;
- in each reduced trace `build_model()` runs as it is, with the same count: the constructions that end
  at positions below d are built as usual, the others with the recording mode popped (the fake-tensor
  mode below it builds them: their parameters, buffers and constructor temporaries never reach the
  trace, nor do later in-place ops on their parameters and buffers, such as a `model.apply(init)` over
  every layer); the constructions must end where they were counted (else: the full trace), and the
  stack is then cut to its first d layers;
- the three traces must be written byte for byte by the same rule (`blocks.synthesize`: the d+2 trace
  from the d and d+1 ones; where no rule is found from d, once more from d+1 with a d+3 trace), which
  also catches a model whose step depends on the number of layers in another way (it allocates by
  `len(self.layers)`); a config constant that only sizes something is the full N in every reduced trace,
  as in the full one, and a loop that indexes the cut list up to it fails the reduced trace.

The reduced traces are taken through whatever `trace_fn` the caller has: the default tracer, one FSDP
rank of memplan.distributed._fake_trace (each cut model wrapped by `fully_shard` as the full one, its
units chosen on the fake-built model by depth-free globs, from 2 layers), the optimizer-only run of
memplan.trace.optsplice (the plan's splice). `.item()` reads outside `build_model()` (Adafactor's step
counter) are answered 0 at every depth, the reduced traces as the full one, and their count grows per
layer (`blocks.scaled_notes`); `clip_grad_norm`'s stacked per-parameter norms grow by the same bytes per
layer (`blocks.sized_keys`): both are written at the full depth and checked at d+2 like everything else.

Refused (the full trace runs; `trace.mode_reason` says why): a fine-tuning front end (LoRA / PEFT /
freezing by memplan.finetune), a custom `train_step`, a model that cannot be built on fake tensors,
no stack or several, layers that differ or checkpointing that differs between them, fewer than
`blocks.MIN_LAYERS` layers, a reduced trace whose notes say values were guessed (data-dependent ops on
unknown values, `.item()` reads while the model is built, assumed masks, routing policies), one layer
object repeated in the list, a layer class with a `__deepcopy__` of its own; FSDP1 ranks, as for Hugging
Face configs (memplan.distributed._fake_trace `FULL_TRACE_REASONS`).

Known limitations: an init pass that replaces the cut layers' tensors with new ones (not in place)
records them, and the d+2 check then refuses; memplan.plan still counts a model file's traces as full
ones when it decides what is cheap to trace.
"""
from __future__ import annotations

import contextlib
import copy
import types
import warnings
from dataclasses import dataclass, replace

from memplan.errors import UserError
from memplan.step import frozen_heap
from memplan.trace import blocks
from memplan.trace.events import Trace

MIN_CANDIDATE = 4   # a container of fewer identical children is not looked at as a stack
_DETERMINISTIC_RULES = ("exact", "custom", "zeros")   # memplan.trace.tracer notes that guess no value


@dataclass(frozen=True)
class FileStack:
    """The repeated layers of a model file's model: where (`path`), how many, the first layer from which
    all are identical, their class (whose constructions are counted in the reduced builds) and where each
    construction ends (`slots`)."""

    path: str
    n_layers: int
    first_uniform: int
    layer_class: type
    slots: tuple = ()   # per construction of the class (`__init__` or `copy.deepcopy`), in order: the stack
                        # position it ends at, None if elsewhere (nn.TransformerEncoder's prototype layer)


class _NotCut(UserError):
    """Raised inside a reduced build when the stack cannot be cut as proven; the caller traces in full."""


# ---- when it applies ---------------------------------------------------------------------------------
def file_stack(workload, cfg) -> tuple[FileStack | None, str]:
    """The repeated stack of a model-file workload, or (None, why not)."""
    if workload.extra.get("finetune"):
        return None, "a model file with a fine-tuning front end (LoRA / PEFT / freezing): not proven for block-once"
    if workload.train_step is not None:
        return None, "a model file with its own train_step: not proven for block-once"
    try:
        model = inspected_model(workload)
    except Exception as exc:  # noqa: BLE001 - block-once is an optimisation; the full trace decides
        return None, f"a model file whose model cannot be built on fake tensors ({type(exc).__name__})"
    found = _stacks(model)
    big = [f for f in found if len(model.get_submodule(f)) >= blocks.MIN_LAYERS]   # shorter lists stay as built
    if not found:
        return None, "a model file without a stack of identical layers (nn.ModuleList / nn.Sequential)"
    if not big:
        return None, (f"a model file with fewer than {blocks.MIN_LAYERS} layers in {found[0]}: block-once would "
                      "not be faster")
    if len(big) > 1:
        return None, f"a model file with several stacks of layers ({', '.join(big)})"
    path = big[0]
    layers = model.get_submodule(path)
    n = len(layers)
    ckpt = blocks._checkpointed(model, path, cfg.checkpoint)
    if len(set(ckpt)) > 1:
        return None, f"a model file: {blocks.MIXED}"
    first = blocks._first_uniform(layers, ckpt, types.SimpleNamespace(), n)
    if first is None or first + 4 > n:
        return None, "a model file whose layers differ (structure, attributes, hooks or checkpointing)"
    cls = type(layers[0])
    try:
        slots = blocks.remembered(_SLOTS, workload, (path, cls), lambda: _slots(workload, path, cls))
    except Exception as exc:  # noqa: BLE001 - an optimisation; the full trace decides
        return None, f"a model file whose layers' constructions cannot be counted ({type(exc).__name__})"
    if slots is None:
        return None, f"a model file: the layers of {path} are not built one construction each"
    return FileStack(path, n, first, cls, slots), ""


def _slots(workload, path: str, cls) -> tuple | None:
    """Where each construction of `cls` ends in a fake build of the model: its stack position or None;
    None when the stack's layers are not each one construction."""
    from memplan.trace.tracer import _FakeMode   # imports torch

    made: list = []
    with warnings.catch_warnings(), _FakeMode(allow_non_fake_inputs=True), \
            _counted(cls, made, lambda k, make: make()):
        warnings.filterwarnings("ignore", message=".*data pointer of FakeTensor.*")
        layers = list(workload.build_model().get_submodule(path))
    where = {id(m): i for i, m in enumerate(layers)}
    slots = tuple(where.get(id(m)) for m in made)
    if sorted(x for x in slots if x is not None) != list(range(len(layers))):
        return None
    return slots


_INSPECTED: list[tuple] = []   # (workload, None, model): the last models built on fake tensors to be inspected
_SLOTS: list[tuple] = []       # (workload, (path, layer class), slots): the last counts of their constructions


def inspected_model(workload):
    """The model on fake tensors, no recording (only inspected, never run), built once per workload (a
    plan asks again for each configuration it traces)."""
    return blocks.remembered(_INSPECTED, workload, None, lambda: _inspect(workload))


def _inspect(workload):
    import torch

    from memplan.trace.tracer import _FakeMode   # imports torch

    with warnings.catch_warnings(), _FakeMode(allow_non_fake_inputs=True):   # not the meta device: an explicit
        warnings.filterwarnings("ignore", message=".*data pointer of FakeTensor.*")   # device="cpu" stays fake
        model = workload.build_model()   # (the tracer ignores the same warning: copy.deepcopy of fake tensors)
    if not isinstance(model, torch.nn.Module):
        raise TypeError("build_model() did not return a torch.nn.Module")
    return model


def _stacks(model) -> list[str]:
    """The outermost module lists / sequentials whose children are named 0..n-1 and of one class."""
    import torch

    found = []
    for name, m in model.named_modules():
        if not isinstance(m, (torch.nn.ModuleList, torch.nn.Sequential)) or len(m) < MIN_CANDIDATE:
            continue
        if list(m._modules) != [str(i) for i in range(len(m))] or len({type(x) for x in m}) != 1:
            continue
        if not name or any(name.startswith(f + ".") for f in found):
            continue   # the model itself as the stack is not covered; a stack inside a layer is not the stack
        found.append(name)
    return found


# ---- the reduced builds ------------------------------------------------------------------------------
def cut_workload(workload, stack: FileStack, depth: int):
    """The workload whose model is the file's with the stack cut to its first `depth` layers (the others
    built unrecorded, see the module's docstring); only inside memplan's tracer."""
    inner = workload.build_model

    def build_model():
        return _build_cut(inner, stack, depth)

    return replace(workload, build_model=build_model)


@contextlib.contextmanager
def _counted(cls, made: list, run):
    """`cls`'s constructions -- `__init__` calls and `copy.deepcopy` of an instance -- appended to `made` in
    order; construction k is made by `run(k, make)`, which calls `make()` (it returns the new instance)."""
    if getattr(cls, "__deepcopy__", None) is not None:
        raise _NotCut(f"{cls.__name__} has a __deepcopy__ of its own")
    own_init, orig = cls.__dict__.get("__init__"), cls.__init__

    def init(self, *args, **kwargs):
        made.append(self)
        run(len(made) - 1, lambda: orig(self, *args, **kwargs) or self)

    def deepcopy(self, memo):
        made.append(None)
        k = len(made) - 1
        cls.__deepcopy__ = None   # copy.deepcopy's own way for this copy (a nested one is not counted)
        try:
            made[k] = run(k, lambda: copy.deepcopy(self, memo))
        finally:
            cls.__deepcopy__ = deepcopy
        return made[k]

    cls.__init__, cls.__deepcopy__ = init, deepcopy
    try:
        yield
    finally:
        del cls.__deepcopy__
        if own_init is None:
            del cls.__init__
        else:
            cls.__init__ = own_init


def _build_cut(build, stack: FileStack, depth: int):
    """`build()` with the layers past `depth` built unrecorded, then the stack cut to `depth` layers."""
    import itertools

    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack, _pop_mode_temporarily

    from memplan.trace.recorder import RecordingMode   # imports torch

    modes = _get_current_dispatch_mode_stack()
    if not modes or not isinstance(modes[-1], RecordingMode):
        raise _NotCut("a cut model is built only inside memplan's tracer, its recording mode on top")
    real = modes[-1].rec
    made: list = []
    muting: list = []
    unseen: dict = {}   # storage key -> storage of the cut layers' parameters and buffers (held: no key reused)

    def run(k, make):
        slot = stack.slots[k] if k < len(stack.slots) else None
        if muting or slot is None or slot < depth:   # (inside a cut one: the count then refuses the cut)
            return make()
        if _get_current_dispatch_mode_stack()[-1] is not modes[-1]:
            raise _NotCut("build_model() entered a dispatch mode of its own")
        muting.append(k)
        try:
            with _pop_mode_temporarily():   # the fake-tensor mode below builds it; nothing is recorded
                out = make()
        finally:
            muting.pop()
        for t in itertools.chain(out.parameters(), out.buffers()):
            st = t.untyped_storage()
            unseen[real._key(st)] = st
        return out

    see, key = real.see, real._key

    def see_unmuted(t, opname):   # an op on a cut layer's tensor (an init pass over every layer)
        if key(t.untyped_storage()) not in unseen:
            see(t, opname)

    real.see = see_unmuted
    try:
        with _counted(stack.layer_class, made, run):
            model = build()
    finally:
        del real.see
    return _cut(model, stack, depth, made)


def _cut(model, stack: FileStack, depth: int, made: list):
    try:
        layers = model.get_submodule(stack.path)
    except (AttributeError, TypeError) as exc:
        raise _NotCut(f"the built model has no {stack.path}") from exc
    if len(made) != len(stack.slots) or len(layers) != stack.n_layers or any(
            slot is not None and layers[slot] is not m for m, slot in zip(made, stack.slots)):
        raise _NotCut(f"the layers of {stack.path} are not built as when they were counted "
                      f"({len(made)} constructions, {len(stack.slots)} before)")
    for k in list(layers._modules)[depth:]:
        del layers._modules[k]
    return model


# ---- the trace ---------------------------------------------------------------------------------------
def guessed_notes(notes: list[str]) -> list[str]:
    """The trace notes that say values were guessed on fake tensors (all but memplan.trace.tracer's notes
    of ops sized from real values, fake kernels and ops run on zeros, and of `.item()` reads outside
    `build_model()`: each is answered 0, in the reduced traces as in the full one, so the step does the
    same whatever the depth; a read while the model is built is still refused)."""
    from memplan.trace.tracer import _RULE_NOTES, SCALAR_READS_NOTE   # imports torch

    reads = SCALAR_READS_NOTE.split("{n}")[1]
    sure = tuple(_RULE_NOTES[r].split("{")[0] for r in _DETERMINISTIC_RULES)
    return [n for n in notes if not n.startswith(sure) and not (n.split(" ", 1)[0].isdigit() and n.endswith(reads))]


def trace_file_stack(workload, stack: FileStack, trace_fn, on_phase=None,
                     min_depth: int = 1) -> tuple[Trace | None, str]:
    """The block-once trace of a model file from its model cut to d, d+1 and d+2 layers, or (None, why);
    where the chunks one layer adds are not found from d layers (the seam after the first layer can look
    like what follows it), once more from d+1 (one more trace, d+3 layers). `trace_fn(workload, on_phase)`
    traces one cut workload (the default tracer, an FSDP rank, the optimizer-only run); `min_depth`: the
    fewest layers to trace (2 for FSDP ranks)."""
    d = max(min_depth, stack.first_uniform + 1)
    if d + 2 >= stack.n_layers:
        return None, f"a model file with fewer than {d + 3} layers in {stack.path}: block-once would not be faster"
    traces: dict[int, Trace] = {}
    why = ""
    for first in (d, d + 1):
        depths = [first, first + 1, first + 2]
        if depths[-1] >= stack.n_layers:
            break
        try:
            with frozen_heap():   # the heap is scanned once for the reduced traces
                for k in depths:
                    if k not in traces:
                        traces[k] = trace_fn(cut_workload(workload, stack, k), on_phase if k == depths[-1] else None)
        except _NotCut as exc:
            return None, f"a model file: {exc}"
        except Exception as exc:  # noqa: BLE001 - the full trace reports the real failure
            return None, f"a model file: a reduced-depth trace failed ({type(exc).__name__})"
        guessed = guessed_notes(traces[depths[-1]].notes)
        if guessed:
            return None, f"a model file whose trace guesses values on fake tensors ({guessed[0][:80]}...)"
        trace, why = blocks.synthesize([traces[k] for k in depths], depths, stack.path, stack.n_layers)
        if trace is not None:
            trace.mode = "block-once"
            trace.mode_reason = (f"{stack.n_layers} identical layers in {stack.path} (a model file): traced with "
                                 f"the stack cut to {', '.join(map(str, sorted(traces)))} layers in the tracer, "
                                 f"the rest written from them (checked exact at {depths[-1]})")
            return trace, ""
    return None, f"a model file: {why}"
