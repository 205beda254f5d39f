"""Trace a full training run on fake tensors: no real memory, no device needed.

`trace_workload(workload, cfg)` builds the model and runs `cfg.steps` optimizer steps under
`FakeTensorMode` with the recorder on top, and returns the `Trace`.
"""
from __future__ import annotations

import contextlib
import warnings

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import _disable_current_modes
from torch.utils._pytree import tree_flatten

from memplan.errors import TraceError, UserError
from memplan.step import Target, run
from memplan.trace.events import Trace
from memplan.trace import datadep, fastkey, nodynamo
from memplan import compat
from memplan.compat import eager_paths, fake_module_conversion
from memplan.trace.composites import eager_branches
from memplan.trace.custom_ops import kernels_for
from memplan.trace.kernels import device_rules, function_mode
from memplan.trace.packed import padded_sequences
from memplan.trace.recorder import Recorder, RecordingMode
from memplan.trace import step_once as step_once_mod
from memplan.workload import TrainConfig, Workload


class TraceHooks:
    """Step-driver callbacks that mark phases and retag parameters, gradients and optimizer state."""

    def __init__(self, rec: Recorder):
        self.rec = rec
        self.names: dict[int, str] = {}
        self.owner: dict[int, str] = {}   # id(parameter) -> owning module's name
        self.on_phase = None              # progress callback (phase, step, micro_step)
        self.mode: RecordingMode | None = None
        self.real_batch = None            # () -> a real batch, for value shadows of integer inputs
        self.step_once: step_once_mod.StepOnce | None = None   # set by trace_workload for the default hooks

    def phase(self, phase, step, micro_step):
        self.rec.mark(phase, step, micro_step)
        if self.on_phase is not None:
            self.on_phase(phase, step, micro_step)
        if phase == "forward" and step == 1 and self.step_once is not None:
            self.step_once.open_chunk()

    def replay_forward_backward(self, model, step, micro_step) -> bool:
        """Step-once (memplan.trace.step_once): write this step's forward and backward from step 1's."""
        return self.step_once is not None and self.step_once.replay(self, model, step, micro_step)

    def model_built(self, model):
        if self.mode is not None:
            self.mode.model_built()
        self.names.update({id(m): (n or type(m).__name__) for n, m in model.named_modules()})
        for mname, mod in model.named_modules():
            label = mname or type(model).__name__
            for p in mod.parameters(recurse=False):
                self.owner.setdefault(id(p), label)  # a tied parameter belongs to its first owner
                self.rec.retag(p, "parameters", self.owner[id(p)])
            for b in mod.buffers(recurse=False):
                self.owner.setdefault(id(b), label)
                self.rec.retag(b, "parameters", self.owner[id(b)])

    def batch_made(self, batch):
        """Give the batch's integer/bool tensors (token ids, labels, masks) real value shadows, from a
        second, real call of make_batch: data-dependent ops on them then get their true sizes."""
        if self.mode is None or self.real_batch is None:
            return
        fakes = [t for t in tree_flatten(batch)[0]
                 if isinstance(t, torch.Tensor) and not t.is_floating_point()]
        if not fakes:
            return
        try:
            with _disable_current_modes():
                real = self.real_batch()
        except Exception:  # noqa: BLE001 - the shadows are an optimisation; the fake batch is made
            return
        real = [t for t in tree_flatten(real)[0]
                if isinstance(t, torch.Tensor) and not t.is_floating_point()]
        if len(real) != len(fakes):
            return
        for f, r in zip(fakes, real):
            if f.shape == r.shape and f.dtype == r.dtype and r.numel() <= datadep.SHADOW_MAX_NUMEL:
                self.mode.shadows[f] = r

    def after_backward(self, model):
        if self.step_once is not None and self.rec.step == 1:
            self.step_once.close_chunk(model)
        for p in model.parameters():
            if p.grad is not None:
                self.rec.retag(p.grad, "gradients", self.owner.get(id(p)))

    def after_optimizer(self, model, optimizer):
        for p, state in optimizer.state.items():
            for v in state.values():
                if isinstance(v, torch.Tensor):
                    self.rec.retag(v, "optimizer_state", self.owner.get(id(p)))


@contextlib.contextmanager
def _global_hooks(rec: Recorder, hooks: TraceHooks, cpu_target: bool = True):
    """Module stack, optimizer phase and saved-tensor hooks; all removed on exit."""
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    stack = rec.module_stack
    names = hooks.names

    def pre(mod, args):
        stack.append(names.get(id(mod)) or type(mod).__name__)

    def post(mod, args, out):
        if len(stack) > 1:
            stack.pop()

    def opt_pre(opt, args, kwargs):
        rec.in_optimizer = True

    def opt_post(opt, args, kwargs):
        rec.in_optimizer = False

    records, sid_of = rec._st, rec.sid_of

    def pack(t):
        if rec.phase != "backward":
            sid = sid_of(t)
            if sid is not None:
                r = records[sid]
                if r.category == "temporaries":
                    r.category = "activations"
        if t.grad_fn is not None:
            # the autograd engine saves an op's own output without its grad_fn (SavedVariable keeps
            # `tensor_data()`); a pack hook returning that output itself makes node -> saved tensor ->
            # grad_fn -> node, a cycle through C++ that Python's collector cannot see: a node the
            # backward pass never runs (an unused output's branch) would then never be freed. A
            # detached alias shares the storage and breaks the cycle.
            return t.detach()
        return t

    def unpack(t):
        sid = sid_of(t)
        if sid is not None:
            rec.bw_module = records[sid].module
        return t

    handles = [
        register_module_forward_pre_hook(pre),
        register_module_forward_hook(post, always_call=True),
        register_optimizer_step_pre_hook(opt_pre),
        register_optimizer_step_post_hook(opt_post),
    ]
    orig_get_rng_state = torch.get_rng_state
    if cpu_target:
        # activation checkpointing saves the CPU generator's state (a real 5 KiB tensor, made outside the
        # dispatcher) per checkpointed call; on the CPU it is part of the allocator's ledger
        def get_rng_state():
            state = orig_get_rng_state()
            rec.see(state, "get_rng_state")
            return state

        torch.get_rng_state = get_rng_state
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            yield
    finally:
        torch.get_rng_state = orig_get_rng_state
        for h in handles:
            h.remove()




class _FakeMode(FakeTensorMode):
    """FakeTensorMode that survives `copy.deepcopy`: a fake tensor's deep copy (e.g. `nn.Transformer`
    cloning its layers) must stay in this mode, or each later op on it converts it again into a fresh
    storage."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not compat.meta_set_keeps_storage_size():
            # torch 2.3's dispatch cache rebuilds cached view outputs with meta `set_`, which there
            # shrinks the shared storage to the view: the trace would see the base storage freed
            self.cache_enabled = False

    def __deepcopy__(self, memo):
        return self


fastkey.install(_FakeMode)   # the dispatch cache's key built cheaper, same hits (memplan.trace.fastkey)
nodynamo.install(_FakeMode)  # each op without dynamo's disable wrapper while dynamo is idle (memplan.trace.nodynamo)
FakeMode = _FakeMode        # the same class, for other packages (memplan.plan.checkpoint_probe's module probe)


def trace_workload(workload: Workload, cfg: TrainConfig, target: Target = Target(), on_phase=None, *,
                   hooks_cls=None, mode_cls=None, extra_context=None, runner=run,
                   step_once: bool | None = None) -> Trace:
    """Run the workload's training steps on fake tensors and return what was allocated and freed.

    `hooks_cls` / `mode_cls` replace the step hooks and the recording mode with subclasses (the
    distributed tracer counts DTensor shards that way); `extra_context(recorder)` is entered with the
    other modes (e.g. FSDP's storage resizes); `runner` replaces the step driver (memplan.trace.optsplice
    runs the optimizer phase only); `step_once`: step 2's forward and backward written from step 1's where
    proven exact (memplan.trace.step_once; default hooks only; None: `step_once.ENABLED`; `trace.step_once`
    says whether it was used).
    `cfg` is validated by the caller (memplan.core)."""
    rec = Recorder()
    hooks = (hooks_cls or TraceHooks)(rec)
    hooks.on_phase = on_phase
    mode = (mode_cls or RecordingMode)(rec, device_rules(target.family, target.name),
                                       fake_kernels=kernels_for(workload))
    mode.host_scalars = target.family == "cpu"
    extra = extra_context(rec) if extra_context is not None else contextlib.nullcontext()
    fmode = function_mode(target.family)
    hooks.mode = mode
    if hooks_cls is None and (step_once_mod.ENABLED if step_once is None else step_once):
        hooks.step_once = step_once_mod.StepOnce(rec, mode)
    hooks.real_batch = lambda: workload.batch(cfg.batch_size, cfg.seq_len)
    fake = _FakeMode(allow_non_fake_inputs=True)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*data pointer of FakeTensor.*")
            with eager_paths(), fake_module_conversion(), datadep.routing_policy(cfg.moe_routing), \
                    padded_sequences(mode._attach), eager_branches(mode), fake, mode, \
                    (fmode or contextlib.nullcontext()), _global_hooks(rec, hooks, target.family == "cpu"), extra:
                runner(workload, cfg, hooks, target)
    except UserError:
        raise
    except Exception as exc:
        raise _trace_error(exc, rec, mode) from exc
    trace = rec.close()
    trace.sort_free_runs()
    trace.steps = cfg.steps
    if hooks.step_once is not None:
        trace.step_once = bool(hooks.step_once.replayed)
        trace.step_once_why = "" if trace.step_once else (
            hooks.step_once.why_not if hooks.step_once.asked else _NOT_DEFAULT_STEP)
    if rec.scalar_calls:
        trace.notes.append(SCALAR_READS_NOTE.format(n=rec.scalar_calls))
    if rec.build_scalar_calls:
        trace.notes.append(
            f"{rec.build_scalar_calls} of them while build_model() ran, on values memplan could not compute: "
            "the traced model's structure may differ from the real one where the constructor branches on them"
        )
    if mode.assumed:
        trace.notes.append(f"{mode.assumed} all()/any()/sum() of boolean masks unknown on fake tensors assumed full "
                           "(full masks, finite values)")
    trace.notes.extend(coverage_notes(mode.counts, cfg.moe_routing))
    return trace


SCALAR_READS_NOTE = "{n} data-dependent scalar reads (.item()) answered with 0 on fake tensors"
_NOT_DEFAULT_STEP = "step 2 is not the default step with one micro-step and no GradScaler (or only one step ran)"

_RULE_NOTES = {
    "exact": "data-dependent ops sized from real values (integer inputs, factories, routing): {ops}",
    "routing": ("routing indices chosen from fake values ({ops}) follow the {policy!r} routing policy"
                "{policy_text} (it changes sizes only where the indices route tokens or select rows, as in MoE; "
                "indices that only accompany values, e.g. max-pooling's, leave every size as traced)"),
    "worst": ("data-dependent ops on unknown values sized worst-case, every element selected ({ops}): "
              "an upper bound there"),
    "threshold": ("comparisons of unknown values with a number ({ops}) assumed True everywhere (every "
                  "element selected, e.g. every byte starts a BLT patch): an upper bound downstream"),
    "custom": "custom ops traced with fake kernels from memplan's registry or the model file: {ops}",
    "zeros": "custom ops without fake kernels run for real on zero-filled inputs to get their shapes: {ops}",
}
_POLICY_TEXT = {
    "worst": (": worst case, every token to the same top-k experts (all tokens to the busiest expert); "
              "expert transients are an upper bound, tokens routed in total are unchanged"),
    "balanced": ": tokens spread evenly over the experts (the expected load of a balanced router)",
}


def coverage_notes(counts, policy: str | None = None) -> list[str]:
    """One note per rule that sized something (memplan.trace.datadep, memplan.trace.custom_ops)."""
    policy = policy or datadep.ROUTING_POLICY
    notes = []
    for rule, text in _RULE_NOTES.items():
        ops = sorted((op, n) for (r, op), n in counts.items() if r == rule)
        if ops:
            listed = ", ".join(f"{op} x{n}" for op, n in ops)
            notes.append(text.format(ops=listed, policy=policy, policy_text=_POLICY_TEXT[policy]))
    return notes


def _trace_error(exc: Exception, rec: Recorder, mode: RecordingMode) -> TraceError:
    op = getattr(mode, "last_failed_op", None)
    module = getattr(mode, "last_failed_module", None)
    if module is None:
        module = rec.module_stack[-1] if rec.phase != "backward" else rec.bw_module
    where = f" in module '{module}'" if module else ""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    for name, (mod, qual) in getattr(mode, "unfaked", {}).items():
        if op is None and name in first:   # an op run on zeros in forward that cannot go backward
            op, module, where = qual, mod, f" in module '{mod}'" if mod else ""
    if op is None:  # the user's code failed, not a fake-tensor kernel
        return TraceError(f"the training step raised {type(exc).__name__}{where} during {rec.phase}: {first}",
                          module=module)
    opname = f"op {op}"
    msg = (
        f"{opname}{where} cannot be traced on fake tensors during {rec.phase} "
        f"({type(exc).__name__}: {first}); "
        "fallback: let memplan measure small real CPU steps and extrapolate (analyze without --no-fallback), "
        "or give the op a fake kernel in the model file (MEMPLAN_FAKE_KERNELS, see docs/coverage.md)"
    )
    return TraceError(msg, op=op, module=module)
