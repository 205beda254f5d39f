"""Optimizer splice: the trace of a configuration that differs from a traced one only in its optimizer,
without tracing forward and backward again.

The optimizer phase sees the parameters and their gradients, nothing of forward or backward. So memplan
runs a short "optimizer-only" trace: the model is built (the same build as the base trace's, checked
record for record), each step's gradients are made as fake tensors of the parameters' shapes (matched to
the base trace's gradient records by owning module and size), and the new optimizer's state creation,
step, clipping and `zero_grad` run as in `memplan.step.run`. Its optimizer and zero_grad events replace
the base trace's, the base's optimizer-owned records drop out (their final frees too), the new state's
final frees join the last free run, and the records are renumbered in allocation order: the event stream
a full trace of the new configuration would write (tests/trace/test_optsplice.py compares them byte for
byte).

Two users: the plan's `Evaluator` (an optimizer change, `trace_new_optimizer`), and a ZeRO-1 rank
(memplan.distributed._fake_trace: the DDP rank's trace, the optimizer-only run made by `optimizer_only`
under the rank's DDP + ZeroRedundancyOptimizer and fake process group).

Nothing is assumed that is not checked; `splice_optimizer` returns `(None, why)` and the caller traces in
full when: the step is the user's (`train_step`), the optimizer is the user's (`make_optimizer`),
a GradScaler runs (fp16-amp), a parameter carries hooks (an optimizer step in backward), the base trace has optimizer records outside the optimizer phases, the builds differ, the
gradients do not match, the base's or the new optimizer's phases free or keep something the other does
not, or the trace notes could depend on the optimizer. Gradient accumulation (K > 1) is covered: the
base's micro-steps are its own (the optimizer runs after the last), the gradients at the optimizer phase
are matched as at K = 1, and the optimizer-only run marks its phases with micro-step K as the driver does.
"""
from __future__ import annotations

import functools
import gc
from array import array
from collections import defaultdict
from dataclasses import fields

from memplan.errors import UserError
from memplan.step import build, make_optimizer, run_collector
from memplan.trace.block_once import trace_block_once
from memplan.trace.events import StorageRecord, Trace

OPT_PHASES = ("optimizer", "zero_grad")
_CHANGED_ONLY = ("optimizer", "optimizer_impl")


def differs_in_optimizer_only(a, b) -> bool:
    """Whether TrainConfigs `a` and `b` differ, and only in the optimizer or its implementation."""
    if a == b:
        return False
    return all(getattr(a, f.name) == getattr(b, f.name) for f in fields(a) if f.name not in _CHANGED_ONLY)


def why_not(workload, cfg) -> str | None:
    """The reason the optimizer phase of `cfg` cannot be spliced, from the configuration alone."""
    if workload.train_step is not None:
        return "the step is the model file's train_step"
    if workload.make_optimizer is not None:
        return "the optimizer is the model file's make_optimizer"
    if cfg.precision == "fp16-amp":
        return "a GradScaler unscales gradients"
    return None


# ---- the optimizer-only run ----------------------------------------------------------------------
def _optimizer_run(workload, cfg, hooks, target, scalars_refused: bool = False):
    """`memplan.step.run` without forward and backward: build, then per step fake gradients
    (phase `backward`), the optimizer step and `zero_grad`, as the driver runs them. The trace-note
    counters restart after the build: the notes say what the optimizer phases added. `scalars_refused`:
    the first `.item()` the optimizer phases read on a value memplan cannot compute (a trace note) ends
    the run (`_NoSplice`), for a caller that would refuse the notes anyway after the whole run."""
    import torch

    with run_collector():
        model = build(workload, cfg, hooks, target)
        if any(getattr(p, "_post_accumulate_grad_hooks", None) or getattr(p, "_backward_hooks", None)
               for p in model.parameters()):
            raise _NoSplice("a parameter has gradient hooks (an optimizer step may run in backward)")
        optimizer = make_optimizer(workload, cfg, model, target.family)
        hooks.rec.scalar_calls = hooks.rec.build_scalar_calls = hooks.mode.assumed = 0
        if scalars_refused:
            hooks.rec.on_scalar_read = _refuse_scalar_read
        hooks.mode.counts.clear()
        for step in range(1, cfg.steps + 1):
            gc.collect()
            hooks.phase("backward", step, 1)
            with torch.no_grad():
                for p in model.parameters():
                    if p.requires_grad:
                        p.grad = torch.empty_like(p)
            hooks.after_backward(model)
            hooks.phase("optimizer", step, cfg.grad_accum)   # the driver's micro-step: the last one
            if cfg.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad_norm)
            optimizer.step()
            hooks.after_optimizer(model, optimizer)
            hooks.phase("zero_grad", step, cfg.grad_accum)
            optimizer.zero_grad(set_to_none=True)
        hooks.phase("end", cfg.steps + 1, 0)
        del model, optimizer


class _NoSplice(UserError):
    """Raised inside the optimizer-only run when the splice cannot be proven; the caller traces in full."""


def _refuse_scalar_read() -> None:
    raise _NoSplice("the optimizer phase reads values memplan cannot compute on fake tensors (.item(): trace "
                    "notes), whose share of the base trace's notes is unknown")


def optimizer_trace(workload, cfg, target) -> Trace:
    """The optimizer-only trace of `cfg`: block-once over identical layers where memplan.trace.blocks
    proves it (the optimizer's events repeat per layer as forward's do; a model file's stack cut in the
    tracer: memplan.trace.model_stacks), else every parameter."""
    from memplan.trace.tracer import trace_workload   # imports torch

    def trace_fn(wl, on_phase=None):
        return trace_workload(wl, cfg, target, on_phase=on_phase, runner=_optimizer_run)

    return trace_block_once(workload, cfg, target, trace_fn=trace_fn)


# ---- the splice --------------------------------------------------------------------------------------
def _segments(tr: Trace):
    """`(start, end, phase, step, micro_step)` per phase band."""
    marks = tr.marks
    ends = [m[0] for m in marks[1:]] + [len(tr.events)]
    return [(idx, end, phase, step, micro) for (idx, phase, step, micro), end in zip(marks, ends)]


def _owner_of_alloc(tr: Trace) -> dict[int, tuple[str, int]]:
    """sid -> (phase, step) of the band it is allocated in; also checks sids are allocated in order."""
    where = {}
    for start, end, phase, step, _micro in _segments(tr):
        for e in tr.events[start:end]:
            if e >= 0:
                where[e] = (phase, step)
    return where


def _grad_map(base: Trace, mini: Trace, base_where, mini_where, step: int) -> dict[int, int] | None:
    """mini gradient sid -> base gradient sid for `step`, matched by (module, bytes, dtype)."""
    def live_grads(tr, where, phases):
        live = set()
        for start, end, phase, s, _micro in _segments(tr):
            if phase == "optimizer" and s == step:
                break
            for e in tr.events[start:end]:
                if e >= 0:
                    live.add(e)
                else:
                    live.discard(~e)
        keyed = defaultdict(list)
        for sid in sorted(live):
            r = tr.storages[sid]
            if r.category == "gradients" and where[sid][1] == step and where[sid][0] in phases:
                keyed[(r.module, r.nbytes, r.dtype)].append(sid)
        return keyed

    b = live_grads(base, base_where, ("forward", "backward", "inputs"))
    m = live_grads(mini, mini_where, ("backward",))
    if {k: len(v) for k, v in b.items()} != {k: len(v) for k, v in m.items()}:
        return None
    return {ms: bs for k in m for ms, bs in zip(m[k], b[k])}


def splice_optimizer(base: Trace, mini: Trace) -> tuple[Trace | None, str]:
    """The trace `base` would be with `mini`'s optimizer (see the module docstring), or None and why not."""
    bseg, mseg = _segments(base), _segments(mini)
    bwhere, mwhere = _owner_of_alloc(base), _owner_of_alloc(mini)
    if any(r.phase == "optimizer" and bwhere[sid][0] not in OPT_PHASES for sid, r in enumerate(base.storages)):
        return None, "the base trace allocates optimizer memory outside the optimizer phase"
    # the builds: equal record for record, so build sids map to themselves
    nb = next(e for s, e, ph, *_ in bseg if ph == "build")
    nm = next(e for s, e, ph, *_ in mseg if ph == "build")
    if base.events[:nb] != mini.events[:nm]:
        return None, "the optimizer-only run built the model differently"
    built = [e for e in mini.events[:nm] if e >= 0]
    if any(base.storages[s] != mini.storages[s] for s in built):
        return None, "the optimizer-only run built the model differently"
    mapped = {s: s for s in built}
    for step in range(1, base.steps + 1):
        gm = _grad_map(base, mini, bwhere, mwhere, step)
        if gm is None:
            return None, f"the gradients of step {step} do not match the parameters'"
        mapped.update(gm)
    if any(mini.storages[m].category != base.storages[b].category for m, b in mapped.items()):
        return None, "the new optimizer keeps a parameter or gradient as its state"
    mini_own = {s for s, (ph, _) in mwhere.items() if ph in OPT_PHASES}
    if set(mwhere) - mini_own - set(mapped):
        return None, "the optimizer-only run allocated more than gradients outside the optimizer phase"
    base_own = {s for s, (ph, _) in bwhere.items() if ph in OPT_PHASES}
    notes, why = _spliced_notes(base, mini)
    if notes is None:
        return None, why
    tokens, marks, why = _tokens(base, mini, bseg, mseg, mapped, base_own, mini_own)
    if why:
        return None, why
    out = _renumber(base, mini, tokens, marks)
    out.notes = notes
    return out, ""


def _spliced_notes(base: Trace, mini: Trace) -> tuple[list[str] | None, str]:
    """The notes of the spliced trace. A base trace without notes added nothing to any note counter, so
    the new notes are what the new optimizer's phases added (the optimizer-only trace's notes); with
    notes, the base optimizer's share is unknown (block-once traces keep no counters per phase)."""
    if base.notes:
        return None, "the base trace has notes, and its optimizer's share of them is unknown"
    return list(mini.notes), ""


def _tokens(base, mini, bseg, mseg, mapped, base_own, mini_own):
    """The spliced event stream as (source, sid, alloc?) tokens and its marks, or a reason it cannot be."""
    mini_band = {(ph, st): (s, e) for s, e, ph, st, _m in mseg if ph in OPT_PHASES}
    tokens, marks = [], []
    for start, end, phase, step, micro in bseg:
        marks.append((len(tokens), phase, step, micro))
        bev = base.events[start:end]
        if phase in OPT_PHASES:
            ms, me = mini_band.get((phase, step), (None, None))
            if ms is None:
                return None, None, f"the optimizer-only run has no {phase} band for step {step}"
            base_frees = {~e for e in bev if e < 0 and ~e not in base_own}
            mini_frees = set()
            for e in mini.events[ms:me]:
                if e >= 0:
                    tokens.append(("m", e, True))
                elif ~e in mapped:
                    mini_frees.add(mapped[~e])
                    tokens.append(("b", mapped[~e], False))
                elif ~e in mini_own:
                    tokens.append(("m", ~e, False))
                else:
                    return None, None, "the optimizer-only run freed a record it did not make"
            if base_frees != mini_frees:
                return None, None, f"the {phase} band of step {step} frees other records than the base's"
            continue
        for e in bev:
            sid = e if e >= 0 else ~e
            if sid in base_own:
                if phase != "end":
                    return None, None, "an optimizer record of the base trace is freed outside the optimizer phase"
                continue
            tokens.append(("b", sid, e >= 0))
        if phase == "end":
            if any(e >= 0 for e in bev):
                return None, None, "the base trace allocates at its end"
            tail = _mini_end_frees(mini, mseg, mini_own)
            if tail is None:
                return None, None, "the new optimizer's records are freed outside its phases"
            tokens.extend(("m", s, False) for s in tail)
    return tokens, marks, ""


def _mini_end_frees(mini, mseg, mini_own):
    """The new optimizer's records freed in the optimizer-only run's end band (its state), or None
    when one of them is freed elsewhere than the optimizer phases and the end."""
    out = []
    for start, end, phase, *_ in mseg:
        for e in mini.events[start:end]:
            if e < 0 and ~e in mini_own:
                if phase == "end":
                    out.append(~e)
                elif phase not in OPT_PHASES:
                    return None
    return out


def _renumber(base: Trace, mini: Trace, tokens, marks) -> Trace:
    """Records in allocation order, events on the new numbering (one event per token, so the marks'
    token positions are event indices), free runs sorted. The records are the base's and the mini trace's
    own objects, shared: a returned trace's records are not changed (memplan.trace.events.Trace)."""
    new_id: dict[tuple[str, int], int] = {}
    storages: list[StorageRecord] = []
    events = array("q")
    for src, sid, alloc in tokens:
        if alloc:
            new_id[(src, sid)] = len(storages)
            storages.append((base if src == "b" else mini).storages[sid])
            events.append(new_id[(src, sid)])
        else:
            events.append(~new_id[(src, sid)])
    out = Trace(storages=storages, events=events, marks=marks, steps=base.steps, mode=base.mode,
                mode_reason=base.mode_reason)
    out.sort_free_runs()
    return out


def optimizer_only(workload, cfg, target, mini_fn=None, scalars_refused: bool = False) -> tuple[Trace | None, str]:
    """The optimizer-only trace of `cfg` to splice, or None and why it cannot be (`why_not`, `_NoSplice`).
    `mini_fn(runner)`: how it is traced, `runner` being its step driver (default: `optimizer_trace`; the
    distributed tracer traces it under the rank's own wrapper and fake process group: ZeRO-1's
    ZeroRedundancyOptimizer on a DDP rank, memplan.distributed._fake_trace). `scalars_refused` (with
    `mini_fn`): the run stops at the optimizer's first scalar read, for a caller that refuses trace notes."""
    why = why_not(workload, cfg)
    if why:
        return None, why
    runner = functools.partial(_optimizer_run, scalars_refused=True) if scalars_refused else _optimizer_run
    try:
        return (optimizer_trace(workload, cfg, target) if mini_fn is None else mini_fn(runner)), ""
    except _NoSplice as exc:
        return None, str(exc)


def trace_new_optimizer(workload, cfg, target, base: Trace) -> tuple[Trace | None, str]:
    """The trace of `cfg` from `base` (the trace of a configuration differing only in the optimizer) and
    an optimizer-only run, or None and why it cannot be proven equal to the full trace."""
    mini, why = optimizer_only(workload, cfg, target)
    if mini is None:
        return None, why
    return splice_optimizer(base, mini)
