"""Trace one rank of a distributed job: the real torch wrapper (DDP, ZeroRedundancyOptimizer, FSDP2
`fully_shard`) around fake tensors, on torch's fake process group (`dist.init_process_group("fake")`
with `FakeStore`, torch/testing/_internal/distributed/fake_pg.py), in this one process.

Collectives of the fake group complete at once without touching data; everything else (DDP's gradient
buckets, ZeRO's parameter partition, FSDP's padded shards, all-gather outputs, reduce-scatter inputs,
prefetch order) is torch's own code allocating fake tensors, which memplan's recorder sees. These
places need help, all documented where they are done:
- DDP: no init-time broadcast (`init_sync=False`), a comm hook that hands back the bucket, no bucket
  rebuild at the second forward (`_wrap._NoRebuild`).
- FSDP2 frees and re-allocates unsharded parameters with `UntypedStorage.resize_`, which is not an
  aten op: `alloc_storage` / `free_storage` are wrapped to tell the recorder.
- parameters, gradients and optimizer state behind DTensors (FSDP) and inside ZeroRedundancyOptimizer
  are tagged through their local tensors.
- on the CPU (gloo), FSDP2's collectives get the temporaries gloo's own collectives allocate: a
  buffer of the all-gather's output size and a copy of the reduce-scatter's input
  (`_gloo_collective_copies`).
"""
from __future__ import annotations

import contextlib

import torch
from torch.utils._pytree import tree_flatten

from memplan import compat
from memplan.errors import UserError
from memplan.step import Target, run
from memplan.trace.events import Trace
from memplan.trace.block_once import trace_block_once
from memplan.trace.block_runs import layer_runs
from memplan.trace.blocks import MIXED, hf_stack
from memplan.trace.model_stacks import file_stack, inspected_model
from memplan.trace.optsplice import optimizer_only, splice_optimizer
from memplan.trace.recorder import Recorder, RecordingMode
from memplan.trace.tracer import TraceHooks, trace_workload
from memplan.workload import TrainConfig, Workload
from memplan.distributed._ddp_buckets import repeat_reason
from memplan.distributed._wrap import depth_free_units, wrap_workload


# Why FSDP1 ranks are traced in full, not block-once (memplan.trace.blocks). (ZeRO-1 ranks are DDP ranks with
# their own optimizer phase spliced in: `_zero1_optimizer`, `_zero1_spliced`.)
FULL_TRACE_REASONS = {"fsdp1": "FSDP1 flattens each unit's parameters into one flat parameter: traced in full"}
FSDP_MIN_DEPTH = 2   # with one layer, its all-gathers are issued from the root unit: no seam between layers


def _local(t):
    """The local tensor behind a DTensor (FSDP's sharded parameters and gradients), else `t`."""
    return t._local_tensor if hasattr(t, "_local_tensor") else t


class _DistTraceHooks(TraceHooks):
    """The tracer's retagging, through DTensors and ZeroRedundancyOptimizer's local optimizer."""

    def model_built(self, model):
        if self.mode is not None:   # as on one device: build-time float shadows are dropped
            self.mode.model_built()
        self.names.update({id(m): (_strip(n) or type(m).__name__) for n, m in model.named_modules()})
        for mname, mod in model.named_modules():
            label = _strip(mname) or type(model).__name__
            for p in mod.parameters(recurse=False):
                self.owner.setdefault(id(p), label)
                self.rec.retag(_local(p), "parameters", label)
            for b in mod.buffers(recurse=False):
                self.rec.retag(_local(b), "parameters", label)

    def after_backward(self, model):
        for p in model.parameters():
            if p.grad is not None:
                self.rec.retag(_local(p.grad), "gradients", self.owner.get(id(p)))

    def after_optimizer(self, model, optimizer):
        inner = getattr(optimizer, "optim", optimizer)   # ZeroRedundancyOptimizer keeps its shard's optimizer
        for p, state in inner.state.items():
            for v in state.values():
                if isinstance(v, torch.Tensor):
                    self.rec.retag(_local(v), "optimizer_state", self.owner.get(id(p)))


class _DistRecordingMode(RecordingMode):
    """The recorder's dispatch mode, counting the local tensor behind each DTensor output.

    A DTensor is a wrapper subclass: its own "storage" is a placeholder of the global size that holds
    no memory; the memory is its `_local_tensor`, made by the op on the local shards underneath.
    """

    def _see_outputs(self, func, out) -> bool:
        return super()._see_outputs(func, _unwrap(out))

    def _engine_accumulate(self, args, kwargs, out) -> None:
        super()._engine_accumulate(_unwrap(args), kwargs, _unwrap(out))

    # Values. A DTensor's values are its local shard's, a fake tensor's: unknown to the recorder, not a
    # small real tensor to compute a value shadow from (that shadow was a DTensor over fake shards, whose
    # `.item()` DTensor refuses for a partial placement: Adafactor's `param.norm(2).item()` under FSDP).
    def _shadow(self, func, args, kwargs, out) -> None:
        if _has_dtensor(args, kwargs):
            return self._stale(func, args)
        return super()._shadow(func, args, kwargs, out)

    def _unfakeable(self, func, args, kwargs, exc):
        """An op DTensor itself refuses (not a fake tensor's limit: none in the exception's chain) fails a
        real run the same way: reported as the training step's failure, with the reason, not as an op memplan
        cannot trace (torch.optim.Adafactor's in-place ops on FSDP2's partial norms, torch 2.13)."""
        if not _fake_limit(exc) and _has_dtensor(args, kwargs):
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise type(exc)(f"{first} ({_DTENSOR_REFUSAL.format(torch=torch.__version__)})") from exc
        return super()._unfakeable(func, args, kwargs, exc)

    def _item(self, t):
        """`.item()` of a DTensor reads its local shard: a known value, else 0 as for any fake tensor
        (counted in the trace's notes, as Adafactor's reads on one device are)."""
        return super()._item(t if t in self.shadows else _local(t))


_DTENSOR_REFUSAL = ("torch {torch}'s DTensor refuses this op on FSDP2's sharded tensors, so a real run fails the same "
                    "way; ddp, zero1 and fsdp1 step plain tensors")


def _has_dtensor(args, kwargs) -> bool:
    """Whether an op's arguments hold a DTensor (FSDP2's sharded parameters, gradients and their norms)."""
    return any(hasattr(a, "_local_tensor") for a in tree_flatten((args, kwargs))[0])


def _fake_limit(exc: BaseException) -> bool:
    """Whether a fake tensor's limit is in the exception's chain (DTensor wraps its shard's failures)."""
    from torch._subclasses.fake_tensor import (
        DataDependentOutputException, DynamicOutputShapeException, UnsupportedOperatorException,
    )
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (DataDependentOutputException, DynamicOutputShapeException, UnsupportedOperatorException)):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _unwrap(out):
    if isinstance(out, torch.Tensor):
        return _local(out)
    if isinstance(out, (tuple, list)):
        return type(out)(_unwrap(o) for o in out)
    return out


def _strip(name: str) -> str:
    name = name.replace("_fsdp_wrapped_module.", "").removesuffix("_fsdp_wrapped_module")   # FSDP1's wrappers
    return name[len("module."):] if name.startswith("module.") else ("" if name == "module" else name)


@contextlib.contextmanager
def fake_process_group(world_size: int, rank: int):
    """torch's fake process group as the default group for the duration (refused if one exists)."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise UserError("a torch.distributed process group is already initialized in this process; "
                        "memplan traces ranks with its own fake group")
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world_size)
    try:
        yield
    finally:
        dist.destroy_process_group()


@contextlib.contextmanager
def _fsdp_storage_events(rec: Recorder):
    """Report FSDP2's `UntypedStorage.resize_` allocations and frees to the recorder (nothing to report
    on a torch without FSDP2)."""
    hooks = compat.fsdp2_storage_hooks()
    saved = [(m, name, getattr(m, name)) for m, name, _ in hooks]

    def reporting(orig, kind):
        def helper(tensor):
            orig(tensor)
            rec.see(tensor, f"fsdp.{kind}_storage")
        return helper

    for (m, name, kind), (_, _, orig) in zip(hooks, saved):
        setattr(m, name, reporting(orig, kind))
    try:
        yield
    finally:
        for m, name, orig in saved:
            setattr(m, name, orig)


@contextlib.contextmanager
def _fsdp1_storage_events(rec: Recorder):
    """Report FSDP1's `_alloc_storage` / `_free_storage` (storage `_resize_`, torch/distributed/utils.py,
    imported by name into torch/distributed/fsdp/_flat_param.py) to the recorder."""
    try:
        from torch.distributed.fsdp import _flat_param as fp
    except ImportError:
        yield
        return
    orig_alloc, orig_free = fp._alloc_storage, fp._free_storage

    def alloc_storage(tensor, size):
        orig_alloc(tensor, size)
        rec.see(tensor, "fsdp1.alloc_storage")

    def free_storage(tensor):
        orig_free(tensor)
        rec.see(tensor, "fsdp1.free_storage")

    fp._alloc_storage, fp._free_storage = alloc_storage, free_storage
    try:
        yield
    finally:
        fp._alloc_storage, fp._free_storage = orig_alloc, orig_free


@contextlib.contextmanager
def _gloo_collective_copies():
    """Allocate, around FSDP2's collectives, the temporaries gloo's CPU collectives make (the fake
    process group makes none). Seen in the CPU allocator's record of real gloo ranks:
    - `c10d::_allgather_base_` allocates a buffer of the output's size and frees it before it returns;
    - `c10d::_reduce_scatter_base_` clones its input (`aten::clone`) and holds the clone in the work
      object until the collective is done; FSDP2 waits for it at once, so the clone lives for the call.
    The reduce-scatter's clone (one unit's padded, unsharded gradient bytes) sits on top of the
    reduce-scatter input and the new sharded gradient: with a large root unit (BERT's word embeddings)
    it makes the rank's peak. NCCL and HCCL make neither copy in the caching allocator.
    """
    C = compat.fsdp2_collectives()
    if C is None:   # a torch without FSDP2's collective classes: nothing to patch
        yield
        return
    ag, rs = C.DefaultAllGather.__call__, C.DefaultReduceScatter.__call__

    def all_gather(self, output_tensor, input_tensor, group, async_op=False):
        buf = torch.empty_like(output_tensor)
        del buf
        return ag(self, output_tensor, input_tensor, group, async_op)

    def reduce_scatter(self, output_tensor, input_tensor, group, op, async_op=False):
        copy = input_tensor.clone()
        work = rs(self, output_tensor, input_tensor, group, op, async_op)
        del copy
        return work

    C.DefaultAllGather.__call__, C.DefaultReduceScatter.__call__ = all_gather, reduce_scatter
    try:
        yield
    finally:
        C.DefaultAllGather.__call__, C.DefaultReduceScatter.__call__ = ag, rs


@contextlib.contextmanager
def _gloo_fsdp1_collective_copies():
    """gloo's temporaries around the collectives FSDP1 calls on CPU tensors: `dist.all_gather` of a
    tensor list (torch/distributed/fsdp/_flat_param.py `_all_gather_flat_param`) allocates a buffer of
    the outputs' total size, freed before it returns; `dist.reduce_scatter_single` (_runtime_utils.py
    `_reduce_grad`; `reduce_scatter_tensor` before 2.13) copies its input for the call, as for FSDP2.
    Measured on 2 gloo ranks: mlp's forward peak is one unsharded unit plus the all-gather buffer,
    llama_small's backward peak (bf16-mp, fp32 reduce) is the root unit's reduce-scatter input plus its
    copy. Patched for FSDP1 traces only."""
    import torch.distributed as dist

    def all_gather(orig):
        def call(tensor_list, tensor, *args, **kwargs):
            buf = torch.empty(sum(t.numel() for t in tensor_list), dtype=tensor.dtype)
            del buf
            return orig(tensor_list, tensor, *args, **kwargs)
        return call

    def reduce_scatter(orig):
        def call(output, input, *args, **kwargs):
            copy = input.clone()
            work = orig(output, input, *args, **kwargs)
            del copy
            return work
        return call

    wrap = {"all_gather": all_gather, "reduce_scatter_single": reduce_scatter,
            "reduce_scatter_tensor": reduce_scatter}
    saved = {n: getattr(dist, n) for n in wrap if hasattr(dist, n)}
    for n, orig in saved.items():
        setattr(dist, n, wrap[n](orig))
    try:
        yield
    finally:
        for n, orig in saved.items():
            setattr(dist, n, orig)


def _dist_trace_context(family: str, sharding: str):
    """The extra context of a distributed trace: FSDP2's and FSDP1's storage events, and gloo's
    collective copies when the job runs on the CPU (family `cpu`: gloo)."""

    @contextlib.contextmanager
    def ctx(rec: Recorder):
        with contextlib.ExitStack() as stack:
            stack.enter_context(_fsdp_storage_events(rec))
            stack.enter_context(_fsdp1_storage_events(rec))
            if family == "cpu":
                stack.enter_context(_gloo_collective_copies())
                if sharding == "fsdp1":
                    stack.enter_context(_gloo_fsdp1_collective_copies())
            yield

    return ctx


def trace_rank(workload: Workload, cfg: TrainConfig, sharding: str, world_size: int, rank: int = 0,
               target: Target = Target(), bucket_cap_mb: float | None = None,
               units: tuple[str, ...] = (), full_trace: bool = False) -> tuple[Trace, dict]:
    """Trace rank `rank` of a `world_size`-rank job wrapped in `sharding`; returns (trace, info).
    FSDP (zero2, zero3, fsdp) and DDP: block-once (memplan.trace.blocks; a model file's stack cut in the
    tracer: memplan.trace.model_stacks) when the model's layers are proven identical, each reduced depth
    wrapped the same way (FSDP: units chosen by depth-free globs; DDP: its gradient buckets proven to repeat
    layer by layer, memplan.distributed._ddp_buckets, else the full trace). ZeRO-1: the rank's DDP trace
    (block-once as above) with the optimizer phase of ZeroRedundancyOptimizer on this rank spliced in from an
    optimizer-only run (`_zero1_optimizer`, `_zero1_spliced`). FSDP1 is traced in full
    (`FULL_TRACE_REASONS`), as is everything with `full_trace`."""
    cfg.validate()
    info: dict = {}
    run_target = Target(family=target.family, run_device="cpu", name=target.name)
    fsdp = sharding in ("zero2", "zero3", "fsdp")
    full_units, globs = _units(workload, units) if fsdp and not full_trace else (None, None)

    bucket_calls: list | None = [] if sharding in ("ddp", "zero1") and not full_trace else None

    def one(wl: Workload, on_phase=None, unit_globs=units, wl_cfg: TrainConfig = cfg, wrap_as: str = sharding,
            runner=run) -> Trace:
        with fake_process_group(world_size, rank):
            mesh = None
            if fsdp:
                from torch.distributed.device_mesh import init_device_mesh

                mesh = init_device_mesh("cpu", (world_size,))   # made before fake mode: it reads real ranks
            w, run_cfg = wrap_workload(wl, wl_cfg, wrap_as, run_device="cpu", family=target.family, mesh=mesh,
                                       fake=True, bucket_cap_mb=bucket_cap_mb, units=unit_globs,
                                       world_size=world_size, info=info,
                                       bucket_calls=bucket_calls if wrap_as == "ddp" else None)
            return trace_workload(w, run_cfg, run_target, on_phase=on_phase, hooks_cls=_DistTraceHooks,
                                  mode_cls=_DistRecordingMode, extra_context=_dist_trace_context(target.family, sharding),
                                  runner=runner)

    mini, why = (None, "")
    if sharding == "zero1" and not full_trace:   # the optimizer-only run only where forward/backward is block-once
        why = _layers_repeat(workload, cfg)
        mini, why = (None, why) if why else _zero1_optimizer(workload, cfg, run_target, one)
    if full_trace or sharding in FULL_TRACE_REASONS or why or (full_units is not None and globs is None):
        trace = one(workload)
        trace.mode, trace.mode_reason = "full", why or _full_reason(workload, cfg, sharding, full_trace)
    else:
        # ZeRO-1's forward and backward are DDP's: its rank is traced as a DDP rank, its optimizer phase spliced in
        base_as = "ddp" if sharding == "zero1" else sharding
        trace = trace_block_once(workload, cfg, run_target, min_depth=1 if bucket_calls is not None else FSDP_MIN_DEPTH,
                                 trace_fn=lambda wl, on_phase=None: one(wl, on_phase, globs or units, wrap_as=base_as),
                                 runs_fn=lambda wl, c, on_phase=None: one(wl, on_phase, globs or units, c,
                                                                          wrap_as=base_as))
        if bucket_calls and trace.mode == "block-once":
            why = _ddp_buckets_repeat(workload, cfg, bucket_calls)
            if why:
                trace = one(workload, wrap_as=base_as)
                trace.mode, trace.mode_reason = "full", why
            else:
                trace.mode_reason += "; DDP's gradient buckets proven to repeat layer by layer"
        if mini is not None:
            trace = _zero1_spliced(workload, trace, mini, one)
    if full_units is not None:
        info["fsdp_units"] = full_units   # the full model's, not the last reduced depth's
    trace.steps = cfg.steps
    return trace, info


def _layers_repeat(workload: Workload, cfg: TrainConfig) -> str:
    """"" where block-once may write the rank's forward and backward (a stack of identical layers, or runs of
    them: memplan.trace.block_once decides), else why not: a ZeRO-1 rank is then traced in full at once (its
    optimizer-only run would be work on top of a full trace)."""
    stack, why = (hf_stack if workload.extra.get("hf_config") is not None else file_stack)(workload, cfg)
    if stack is not None:
        return ""
    if why == MIXED:
        runs, why_not = layer_runs(workload, cfg)
        return "" if runs is not None else f"{why}; {why_not}"
    return why


def _zero1_optimizer(workload: Workload, cfg: TrainConfig, target: Target, one) -> tuple[Trace | None, str]:
    """The optimizer-only run of a ZeRO-1 rank (memplan.trace.optsplice): this rank's ZeroRedundancyOptimizer
    -- the step on its partition, the parameter broadcasts, zero_grad of every gradient -- under the same
    wrapper, fake process group and rank, on every layer (the greedy partition differs from layer to layer);
    or None and why the rank is traced in full. Trace notes (Adafactor's `.item()` reads) refuse it before the
    DDP trace is made: the same optimizer on every parameter notes them there too, and the splice cannot
    tell the optimizer's share (`splice_optimizer`)."""
    mini, why = optimizer_only(workload, cfg, target, scalars_refused=True,
                               mini_fn=lambda runner: one(workload, wrap_as="zero1", runner=runner))
    if mini is not None and mini.notes:
        mini, why = None, "the optimizer phase leaves trace notes, whose share of the DDP trace's notes is unknown"
    return mini, (f"distributed (ZeRO-1): the optimizer splice is not proven: {why}" if mini is None else "")


def _zero1_spliced(workload: Workload, base: Trace, mini: Trace, one) -> Trace:
    """A ZeRO-1 rank: its trace as a DDP rank (`base`, block-once where proven) with its optimizer and
    zero_grad phases replaced by the optimizer-only run's (`_zero1_optimizer`), or the full trace with the
    reason where the splice is not proven."""
    spliced, why = splice_optimizer(base, mini)
    if spliced is not None:
        spliced.mode_reason = (f"{base.mode_reason} (forward and backward as a DDP rank); ZeroRedundancyOptimizer's "
                               "step on this rank's partition, its parameter broadcasts and zero_grad traced alone "
                               "on every layer and spliced in (memplan.trace.optsplice)")
        return spliced
    trace = one(workload)
    trace.mode, trace.mode_reason = "full", f"distributed (ZeRO-1): the optimizer splice is not proven: {why}"
    return trace


def _ddp_buckets_repeat(workload: Workload, cfg: TrainConfig, calls: list) -> str:
    """"" when the deepest reduced trace's DDP buckets repeat layer by layer at the full depth
    (memplan.distributed._ddp_buckets), else why the rank is traced in full."""
    deepest = max(calls, key=lambda a: len(a.names))
    stack, why = (hf_stack if workload.extra.get("hf_config") is not None else file_stack)(workload, cfg)
    if stack is not None:
        return repeat_reason(deepest, stack.path, stack.n_layers, stack.first_uniform)
    runs, _ = layer_runs(workload, cfg) if why == MIXED else (None, "")
    if runs is None:
        return why
    # runs of layers (checkpointing differs between them): only one bucket per dtype is proven
    return repeat_reason(deepest, runs.path, runs.n_layers, 0, one_bucket_only=True)


def _full_reason(workload: Workload, cfg: TrainConfig, sharding: str, full_trace: bool) -> str:
    """Why a rank is traced in full before block-once is tried: asked to, the sharding, a model file
    without a stack to cut (memplan.trace.model_stacks says why), or FSDP units named by layer index."""
    if full_trace:
        return "--full-trace"
    if sharding in FULL_TRACE_REASONS:
        return FULL_TRACE_REASONS[sharding]
    if workload.extra.get("hf_config") is None:
        stack, why = file_stack(workload, cfg)
        if stack is None:
            return why
    return "the FSDP units cannot be chosen without naming layer indices"


def _units(workload: Workload, units: tuple[str, ...]) -> tuple[list[str] | None, tuple[str, ...] | None]:
    """The full model's FSDP units and depth-free globs choosing them (`_wrap.depth_free_units`), from the
    model built on the meta device (an HF config) or on fake tensors, unrecorded (a model file:
    memplan.trace.model_stacks, which cuts its stack); (None, None) for a model file that cannot be built
    that way (traced in full)."""
    if workload.extra.get("hf_config") is None:
        try:
            model = inspected_model(workload)
        except Exception:  # noqa: BLE001 - block-once is an optimisation; the full trace reports the failure
            return None, None
    else:
        with torch.device("meta"):
            model = workload.build_model()
    return depth_free_units(model, units)
