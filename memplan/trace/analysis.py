"""Reduce a Trace to the numbers people ask for: the peak, what it is made of, where it happens.

All figures are exact replays of the trace's allocation/free sequence (bytes requested, no allocator
rounding: that is `memplan.alloc`'s job).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from memplan.trace.events import CATEGORIES, Trace


@dataclass(frozen=True)
class ModuleRow:
    """Bytes attributed to one module (or, in a PyTorch snapshot, one stack frame): the trace summary and
    the report timeline both use this row, each filling what it measures."""

    module: str
    bytes_at_peak: int                                # live at the global peak
    by_category: dict = field(default_factory=dict)   # category -> bytes live at the peak
    activations_saved: int = 0  # bytes this module saved for backward over one micro-step (all, not only at peak)
    max_live: int = 0           # the most this module had live at any moment (timeline)
    allocated: int = 0          # sum of every allocation attributed to it, a churn measure (timeline)
    count: int = 0              # number of allocations (timeline)


@dataclass(frozen=True)
class TraceSummary:
    peak_allocated_bytes: int
    peak_event: int
    peak_phase: str
    peak_step: int
    peak_micro_step: int
    breakdown_at_peak: dict                 # category -> bytes
    phase_peaks: dict                       # phase -> peak bytes within the steady-state step
    first_step_peak_bytes: int
    run_peak_bytes: int
    modules: list = field(default_factory=list)   # ModuleRow, largest first
    n_events: int = 0
    n_storages: int = 0


def summarize(trace: Trace, top_modules: int = 50) -> TraceSummary:
    """The peak is taken over every traced optimizer step (model build excluded), i.e. what
    `max_memory_allocated()` reports when reset right after the model is built; when steps tie, the
    later (steady-state) one is reported. `phase_peaks` are those of the last (steady-state) step."""
    st = trace.storages
    ev = trace.events
    last = trace.steps
    w_start, w_end = trace.window(1)[0], trace.window(last)[1]
    l_start = trace.window(last)[0]
    s1_start, s1_end = trace.window(1)
    cur = 0
    run_peak = 0
    first_peak = 0
    peak = -1
    peak_idx = w_start
    phase_peaks: dict[str, int] = {}
    marks = trace.marks
    mi = 0
    phase = "build"
    for i, v in enumerate(ev):
        while mi < len(marks) and marks[mi][0] <= i:
            phase = marks[mi][1]
            mi += 1
            if l_start <= i < w_end:  # a phase without allocations still holds the level it starts at
                phase_peaks[phase] = max(phase_peaks.get(phase, 0), cur)
        if i == w_start:
            # the level held when the first step begins is part of the steps
            peak, peak_idx = cur, i - 1
        if i == l_start:
            phase_peaks[phase] = max(phase_peaks.get(phase, 0), cur)
        cur += st[v].nbytes if v >= 0 else -st[~v].nbytes
        if cur > run_peak:
            run_peak = cur
        if s1_start <= i < s1_end and cur > first_peak:
            first_peak = cur
        if w_start <= i < w_end and cur >= peak:
            peak, peak_idx = cur, i
        if l_start <= i < w_end and cur > phase_peaks.get(phase, -1):
            phase_peaks[phase] = cur
    # what is live at the peak
    live: set[int] = set()
    for v in ev[: peak_idx + 1]:
        if v >= 0:
            live.add(v)
        else:
            live.discard(~v)
    breakdown = {c: 0 for c in CATEGORIES}
    per_mod: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for sid in live:
        r = st[sid]
        breakdown[r.category] = breakdown.get(r.category, 0) + r.nbytes
        per_mod[r.module or "<top>"][r.category] += r.nbytes
    saved: dict[str, int] = defaultdict(int)
    for r in st:
        if r.category == "activations" and r.step == last and r.micro_step == 1:
            saved[r.module or "<top>"] += r.nbytes
    rows = [
        ModuleRow(m, sum(c.values()), dict(c), saved.get(m, 0)) for m, c in per_mod.items()
    ]
    for m, b in saved.items():
        if m not in per_mod:
            rows.append(ModuleRow(m, 0, {}, b))
    rows.sort(key=lambda r: (r.bytes_at_peak, r.activations_saved), reverse=True)
    phase, step, micro = trace.phase_at(peak_idx)
    return TraceSummary(
        peak_allocated_bytes=peak, peak_event=peak_idx, peak_phase=phase, peak_step=step,
        peak_micro_step=micro, breakdown_at_peak=breakdown, phase_peaks=phase_peaks,
        first_step_peak_bytes=first_peak, run_peak_bytes=run_peak, modules=rows[:top_modules],
        n_events=len(ev), n_storages=len(st),
    )
