"""A rank's measured peak on the CPU, from PyTorch's CPU-allocator accounting under the profiler.

Same run and phase ranges as `memplan.measure`, with one difference that matters for
distributed jobs: gloo runs collectives on its own worker threads, and by default a free on such a
thread is invisible to the profiler's accounting. c10's `ProfiledCPUMemoryReporter` only updates its
table and its running total (`total_allocated`) when the *freeing thread* has memory profiling
enabled (a thread-local profiler state, which gloo's threads have only while a collective runs): the
free is neither recorded as an event nor subtracted from the total, so both the running sum of the
events and the allocator's own total stay too high by that block for the rest of the run.

Where it happens: a gloo work object holds its own references to its tensors until the worker thread
lets go of it (`ProcessGroupGloo::runLoop`, after `AsyncWork::execute` returns, under the work-queue
mutex). If the caller drops its last reference first, the worker frees the tensor. Two cases:
- gloo's reduce-scatter (`c10d::_reduce_scatter_base_`, FSDP2's gradient reduction) clones its input
  and keeps the clone in the work object: one FSDP unit's gradient bytes, often freed by gloo's thread;
- DDP's construction broadcasts the parameters through one flattened copy (`broadcast_coalesced` in
  c10d's comm.cpp: flatten, broadcast, wait, copy back, drop). Idle, the worker lets go long before
  the caller has copied back (about 10 ms); on a loaded machine the worker can be descheduled past that,
  and then all parameter bytes are freed on gloo's thread. Made certain by holding gloo's worker
  thread 100 ms after each `execute` (gdb on a rank, non-stop mode, a breakpoint after the call in
  `runLoop`): mlp ddp on 2 ranks reads -14.556 % on every rank, the CI failure to the digit.

The measurement therefore runs with c10's `caffe2_report_cpu_memory_usage` flag on
(`compat.cpu_allocator_counts_every_thread`): the reporter then counts every thread's allocations and
frees in `total_allocated`, so the total carried by each recorded event is the allocator's real level,
whichever thread freed what. The level used is that total minus the total when profiling began,
sampled at the profiled threads' events; a collective's buffer counts until it is really freed. The
running sum of the recorded events is kept for comparison (`running_sum_peak_bytes`;
`unmatched_bytes` is what the events miss, frees on gloo's threads).

Where the flag cannot be set (a c10 library without the exported symbol), the lost frees are put back
from the event record instead (`recovered_frees`): an allocation at an address the record still holds
live proves that the earlier block there was freed before it (taken at the reuse, or when its
collective op returned for a collective's temporary); a block allocated inside a `c10d::` collective
with no recorded free by the end was freed when its op returned. That fallback misses a block freed on
gloo's thread that is neither a collective's temporary nor reused (DDP's broadcast copy above).

Known limitations: the level is sampled at the profiled threads' allocator events; a short-lived
allocation of a gloo thread between two of them is not seen. A buffer that a descheduled gloo thread
really holds longer is measured as held (it is the run's real memory); it matters only if it is still
held at the step's peak (DDP's broadcast copy: over 100 ms after the broadcast, in the model build).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from memplan import compat
from memplan.measure import profiled_run
from memplan.step import Target
from memplan.workload import TrainConfig, Workload


@dataclass(frozen=True)
class RankMeasurement:
    peak_allocated_bytes: int        # the allocator's level over the optimizer steps
    peak_phase: str
    phase_peaks: dict = field(default_factory=dict)
    running_sum_peak_bytes: int = 0  # the recorded events' running sum over the same window, uncorrected
    unmatched_bytes: int = 0         # running sum - allocator total at the end: frees the events miss
    n_events: int = 0
    raw_peak_allocated_bytes: int = 0   # the allocator total without the recovered frees
    recovered_free_bytes: int = 0       # bytes of frees made on other threads, recovered (whole run)
    recovered_frees: int = 0
    every_thread: bool = False          # the allocator's total counted every thread (no recovery needed)


def measure_cpu_rank(workload: Workload, cfg: TrainConfig, target: Target = Target()) -> RankMeasurement:
    with compat.cpu_allocator_counts_every_thread() as every_thread:
        prof = profiled_run(workload, cfg, target)
    return _ledger(allocation_events(prof), cfg.steps, recover=not every_thread)


def allocation_events(prof) -> list[tuple]:
    """Every CPU-allocator event of a profiling session, in time order:
    `(time_ns, seq, size (+alloc / -free), allocator total, phase label, ptr, end_ns)` where `end_ns`
    is the end of the innermost `c10d::` op around the event (None outside a collective)."""
    from torch._C._profiler import _EventType

    events: list[tuple] = []
    seq = 0
    stack = [(n, "build::0::0", None) for n in reversed(prof.profiler.kineto_results.experimental_event_tree())]
    while stack:
        node, label, c10d_end = stack.pop()
        if node.tag == _EventType.Allocation:
            f = node.extra_fields
            if str(f.device) == "cpu":
                events.append((node.start_time_ns, seq, f.alloc_size, f.total_allocated, label, f.ptr, c10d_end))
                seq += 1
            continue
        name = node.name
        if name.startswith("memplan::"):
            label = name[len("memplan::"):]
        elif name.startswith("c10d::"):
            c10d_end = node.end_time_ns
        for child in reversed(node.children):
            stack.append((child, label, c10d_end))
    events.sort(key=lambda e: (e[0], e[1]))
    return events


def recovered_frees(events: list[tuple]) -> list[tuple[int, int]]:
    """`(time_ns, bytes)` of the frees that happened on threads the profiler does not see (see above)."""
    live: dict[int, tuple[int, int | None]] = {}    # ptr -> (size, end of its collective op)
    out: list[tuple[int, int]] = []
    for t, _s, size, _total, _label, ptr, c10d_end in events:
        if size > 0:
            old = live.pop(ptr, None)
            if old is not None:   # handed out again: the block there was freed before, unrecorded
                out.append((min(old[1], t) if old[1] is not None else t, old[0]))
            live[ptr] = (size, c10d_end)
        elif size < 0:
            live.pop(ptr, None)
    out.extend((end, size) for size, end in live.values() if end is not None)
    out.sort()
    return out


def _ledger(events: list[tuple], steps: int, recover: bool = True) -> RankMeasurement:
    """The level over the optimizer steps; `recover=False` where the allocator's total already counts
    every thread's frees."""
    if not events:
        return RankMeasurement(0, "", {}, 0, 0, 0, every_thread=not recover)
    lost = recovered_frees(events) if recover else []
    lost_t = [t for t, _ in lost]
    lost_cum = [0]
    for _t, b in lost:
        lost_cum.append(lost_cum[-1] + b)
    base = events[0][3] - events[0][2]   # the allocator's total before the first recorded event
    cur = 0
    peak = sum_peak = raw_peak = -1
    peak_phase = ""
    phase_peaks: dict[str, int] = {}
    prev_label = ""
    for t, _s, size, total, label, _ptr, _end in events:
        phase, step, _micro = label.split("::")
        cur += size
        raw = total - base
        lost_now = lost_cum[bisect.bisect_right(lost_t, t)]
        level = raw - lost_now
        in_steps = step != "0" and int(step) <= steps   # every optimizer step, as the estimate's window
        if in_steps and label != prev_label:   # a phase holds at least the level it starts at
            phase_peaks[phase] = max(phase_peaks.get(phase, -1), raw - size - lost_now)
        prev_label = label
        if in_steps:
            if level > peak:
                peak, peak_phase = level, phase
            if level > phase_peaks.get(phase, -1):
                phase_peaks[phase] = level
            sum_peak = max(sum_peak, cur)
            raw_peak = max(raw_peak, raw)
    unmatched = cur - (events[-1][3] - base)
    return RankMeasurement(max(peak, 0), peak_phase, phase_peaks, max(sum_peak, 0), unmatched, len(events),
                           max(raw_peak, 0), lost_cum[-1], len(lost), not recover)
