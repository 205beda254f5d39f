"""The Trace: what one traced training run allocated and freed, in order.

A Trace is device-neutral: it records storage allocations and frees exactly as PyTorch's caching
allocators would see them requested (bytes = the storage's `nbytes`), with no rounding. Allocator
models (`memplan.alloc`) replay it to get reserved bytes for a target device.

Layout (compact, so a 7B model's trace stays small):
- `storages[sid]`: one `StorageRecord` per allocation (sid = index).
- `events`: a flat `array('q')`; value `sid` >= 0 is the allocation of `storages[sid]`, value `~sid`
  (i.e. `-sid - 1`) is its free. The event's index is its time.
- `marks`: `(event_index, phase, step, micro_step)` whenever the phase changes; a band runs from one mark
  to the next.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from enum import Enum


class Category(str, Enum):
    """What a block of memory is for."""

    PARAMETERS = "parameters"
    """Model parameters and buffers."""
    GRADIENTS = "gradients"
    """`.grad` of parameters."""
    OPTIMIZER_STATE = "optimizer_state"
    """Tensors kept in `optimizer.state` between steps (Adam's moments, step counters)."""
    ACTIVATIONS = "activations"
    """Forward outputs saved for backward."""
    TEMPORARIES = "temporaries"
    """Everything transient: intermediate outputs, gradient flow, optimizer scratch."""
    INPUTS = "inputs"
    """The batch made by `make_batch`."""
    OTHER = "other"
    """Anything else (e.g. tensors created while building the model that are not its state)."""


CATEGORIES: tuple[str, ...] = tuple(c.value for c in Category)


@dataclass(slots=True)
class StorageRecord:
    """One allocation. `category` may be refined after allocation (e.g. a forward output that turns out
    to be saved for backward becomes an activation); the final category holds for its whole life."""

    nbytes: int
    category: str
    module: str
    phase: str
    op: str
    step: int
    micro_step: int
    dtype: str = ""


@dataclass
class Trace:
    storages: list[StorageRecord] = field(default_factory=list)
    events: array = field(default_factory=lambda: array("q"))
    marks: list[tuple[int, str, int, int]] = field(default_factory=list)
    steps: int = 0
    """Number of optimizer steps traced; the steady-state window is the last one."""
    notes: list[str] = field(default_factory=list)
    mode: str = "full"
    """How it was traced: `full` (every op run on fake tensors) or `block-once` (memplan.trace.blocks)."""
    mode_reason: str = ""
    step_once: bool = False
    """Step 2's forward and backward were written from step 1's (memplan.trace.step_once)."""
    step_once_why: str = ""
    """Why step 2 ran in full when step-once was on (empty when it was used or off)."""
    replay_memo: dict = field(default_factory=dict, repr=False, compare=False)
    """Allocator replays of this trace by their inputs (memplan.alloc.simulator); a trace (its records
    included: a spliced trace shares them with its sources, memplan.trace.optsplice) is not changed once
    it is returned, and the key holds its length besides."""

    def sort_free_runs(self) -> None:
        """Order each run of consecutive frees (no allocation or phase mark between them) by record id.

        Frees in one run commute: no peak, live set at a peak, phase peak or allocator state after the
        run depends on their order. Some runs come in an order that is not deterministic (autocast's
        cache of cast weights is cleared from a hash map keyed by address when the autocast region
        exits), so this makes two traces of the same run identical event for event."""
        ev = self.events
        cuts = {idx for idx, *_ in self.marks}
        n = len(ev)
        i = 0
        while i < n:
            if ev[i] >= 0:
                i += 1
                continue
            j = i + 1
            while j < n and ev[j] < 0 and j not in cuts:
                j += 1
            if j - i > 1:
                ev[i:j] = array("q", sorted(ev[i:j], reverse=True))   # ~sid descending = sid ascending
            i = j

    def window(self, step: int) -> tuple[int, int]:
        """Event index range `[start, end)` of optimizer step `step` (1-based)."""
        start = end = None
        for idx, _phase, s, _m in self.marks:
            if s == step and start is None:
                start = idx
            if s > step and end is None:
                end = idx
        if start is None:
            raise ValueError(f"step {step} was not traced")
        return start, (len(self.events) if end is None else end)

    def phase_at(self, event_index: int) -> tuple[str, int, int]:
        """`(phase, step, micro_step)` in force at an event index."""
        cur = ("build", 0, 0)
        for idx, phase, s, m in self.marks:
            if idx > event_index:
                break
            cur = (phase, s, m)
        return cur
