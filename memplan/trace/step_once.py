"""Step-once: the second optimizer step's forward and backward written from the first step's recording.

A traced run takes two optimizer steps (the second is the steady state: optimizer state exists). With the
default step (one micro-step, no GradScaler, no user `train_step`) the second step's forward and backward
run the same ops on the same shapes in the same order as the first's; only their storages are new, and the
optimizer state made in step 1 lives on untouched through them. So the tracer records step 1's
forward + backward once (the "chunk": from the `forward` mark to the end of backward) and, in step 2,
appends the chunk again with every storage renumbered (the records as step 1 left them, `step` = 2), then
gives each parameter a fresh fake gradient that carries the renumbered record of its step-1 gradient, so
the real optimizer step and `zero_grad` of step 2 run and free them as in a full trace.

The chunk is replayed only when it is proven self-contained at its end (`StepOnce.close_chunk`):
- its allocations are exactly the records made inside it, in record order (so renumbering is a shift and
  the trace's free-run ordering is kept);
- it frees only storages it allocated; what it leaves alive is exactly the parameters' `.grad` storages
  (whole storages, offset 0), and no parameter had a gradient before it;
- it changed no record made before it (category or module), took no data-dependent decision (scalar
  reads, assumed masks, datadep / custom-op rule counts) and added no note;
- no parameter has gradient hooks and no module has forward / backward hooks of its own;
- its phase marks are `forward` then `backward`.
Otherwise (and for a custom step, accumulation, GradScaler, another hooks class such as the distributed
tracer's) step 2 runs for real. `Trace.step_once` says whether the replay was used.

Known limitations: the argument that step 2 repeats step 1 is structural (same code, same shapes, a batch
of the same shapes); a forward that branches on the optimizer step count, on Python state changed by
step 1 or on random numbers that change sizes would differ in a full trace. Tests compare both traces
byte for byte over the HF config and model fixtures.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch

ENABLED = True
"""Whether `trace_workload` uses step-once by default (tests and benchmarks turn it off to compare)."""

@dataclass
class _Chunk:
    ev0: int                 # first event index of the chunk
    st0: int                 # first record id made in it
    mark0: int               # first mark of it (its `forward` mark)
    counters: tuple          # data-dependent counters at its start
    before: list             # (category, module) of every record made before it
    ev1: int = -1
    st1: int = -1
    mark1: int = -1
    grads: tuple = ()        # (parameter index, sid, shape, stride, dtype) of each gradient left alive
    bw_module: str = ""


def _counters(rec, mode) -> tuple:
    counts = dict(mode.counts) if mode is not None else {}
    assumed = mode.assumed if mode is not None else 0
    return (rec.scalar_calls, rec.build_scalar_calls, assumed, len(rec.trace.notes), counts)


class StepOnce:
    """Records step 1's forward + backward chunk and replays it for step 2 when that is proven exact."""

    def __init__(self, rec, mode=None):
        self.rec = rec
        self.mode = mode
        self.chunk: _Chunk | None = None
        self.why_not = ""        # why step 2 ran for real (empty while the replay is possible)
        self.replayed = 0
        self.asked = False       # step.run asked for a replay (the default step with one micro-step)

    # ---- step 1: record the chunk ---------------------------------------------------------------
    def open_chunk(self) -> None:
        """At step 1's `forward` mark (already appended)."""
        rec = self.rec
        self.chunk = _Chunk(len(rec._ev), len(rec._st), len(rec.trace.marks) - 1, _counters(rec, self.mode),
                            [(r.category, r.module) for r in rec._st])

    def close_chunk(self, model) -> None:
        """At the end of step 1's backward (before its gradients are retagged): check the chunk."""
        c, rec = self.chunk, self.rec
        if c is None or c.ev1 >= 0:
            return
        c.ev1, c.st1, c.mark1, c.bw_module = len(rec._ev), len(rec._st), len(rec.trace.marks), rec.bw_module
        why = self._check(c, model)
        if why:
            self.why_not, self.chunk = why, None

    def _check(self, c: _Chunk, model) -> str:
        rec = self.rec
        hooked = _hooks(model)
        if hooked:
            return hooked
        if _counters(rec, self.mode) != c.counters:
            return "step 1's forward/backward took data-dependent decisions or added notes"
        if [m[1] for m in rec.trace.marks[c.mark0:c.mark1]] != ["forward", "backward"]:
            return "step 1's forward/backward has other phase marks"
        if any((r.category, r.module) != old for r, old in zip(rec._st, c.before)):
            return "step 1's forward/backward changed a record made before it"
        alive: set[int] = set()
        expect = c.st0
        for e in rec._ev[c.ev0:c.ev1]:
            if e >= 0:
                if e != expect:
                    return "step 1's forward/backward allocations are not its records in order"
                alive.add(e)
                expect += 1
            elif ~e in alive:
                alive.discard(~e)
            else:
                return "step 1's forward/backward freed a storage made before it"
        if expect != c.st1:
            return "step 1's forward/backward made records it did not allocate"
        grads = []
        for i, p in enumerate(model.parameters()):
            g = p.grad
            if g is None:
                continue
            sid = rec.sid_of(g)
            if sid is None or sid not in alive or g.storage_offset() != 0 \
                    or g.untyped_storage().nbytes() != rec._st[sid].nbytes:
                return "a gradient is not a whole storage made in step 1's backward"
            alive.discard(sid)
            grads.append((i, sid, tuple(g.shape), tuple(g.stride()), g.dtype))
        if alive:
            return "step 1's forward/backward left storages alive besides the gradients"
        c.grads = tuple(grads)
        return ""

    # ---- step 2: replay ---------------------------------------------------------------------------
    def replay(self, hooks, model, step: int, micro: int) -> bool:
        """Write step `step`'s forward + backward from the chunk; False (nothing written) when not proven."""
        self.asked = True
        c = self.chunk
        if c is None or c.ev1 < 0:
            return False
        params = list(model.parameters())
        self.why_not = _hooks(model)
        if self.why_not:
            return False
        if any(p.grad is not None for p in params):
            self.why_not = "a parameter had a gradient before step 2's forward"
            return False
        rec = self.rec
        shift = len(rec._st) - c.st0
        ev = rec._ev
        bw_at = rec.trace.marks[c.mark0 + 1][0]
        for phase, lo, hi in (("forward", c.ev0, bw_at), ("backward", bw_at, c.ev1)):
            hooks.phase(phase, step, micro)
            ev.extend([e + shift if e >= 0 else e - shift for e in ev[lo:hi]])
        rec._st.extend(replace(r, step=step) for r in rec._st[c.st0:c.st1])
        rec.bw_module = c.bw_module
        self._adopt_grads(params, shift)
        self.replayed += 1
        return True

    def _adopt_grads(self, params, shift: int) -> None:
        """Fresh fake gradients carrying the replayed records (made with the recorder muted)."""
        rec = self.rec
        rec.see = _unseen
        try:
            for i, sid, shape, stride, dtype in self.chunk.grads:
                p = params[i]
                g = torch.empty_strided(shape, stride, dtype=dtype, device=p.device)
                p.grad = g
                st = g.untyped_storage()
                rec._watch(st, rec._key(st), sid + shift)
        finally:
            del rec.see


def _hooks(model) -> str:
    """Why a model's hooks may make step 2 differ from step 1 (empty: none): a parameter's gradient hooks
    (an optimizer step may run in backward) or a module's own forward / backward hooks (user code run in
    every step, whose effects the recording cannot see)."""
    if any(getattr(p, "_post_accumulate_grad_hooks", None) or getattr(p, "_backward_hooks", None)
           for p in model.parameters()):
        return "a parameter has gradient hooks"
    if any(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or m._backward_pre_hooks
           for m in model.modules()):
        return "a module has forward or backward hooks"
    return ""


def _unseen(t, opname) -> None:
    """`Recorder.see` while step-once makes the gradients whose records it has written."""
