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

The level is the recorded events' running sum (what the profiled threads allocated and freed) less
the frees made elsewhere, each put back at a time read from the record:
- a block allocated inside a `c10d::` collective (its temporary) with no recorded free: when its op
  returned (the work is done when the synchronous collective's `wait()` returns and the worker lets go
  of it right after; the training thread allocates nothing in between). A definition, so that the
  moment gloo's thread really lets go, a race, does not move the measurement;
- any other block with no recorded free: when the allocator's total fell by exactly its size more
  than the recorded events explain (`unseen_drops`). For that the run has c10's
  `caffe2_report_cpu_memory_usage` flag on (`compat.cpu_allocator_counts_every_thread`): the reporter
  then counts every thread's allocations and frees in `total_allocated` (events are still recorded
  only on profiled threads), so each event carries the allocator's real level. DDP's broadcast copy is
  put back when gloo's thread really freed it: in the model build on a loaded machine, not in the steps;
- failing both, at the reuse of its address (an allocation at an address the record still holds live
  proves the earlier block there was freed before it).
Without the flag (a c10 library that does not export it) the second rule finds nothing and the DDP
race above stays possible. `raw_peak_allocated_bytes` (the allocator's own total) and
`running_sum_peak_bytes` are kept for comparison.

Known limitations: the level is sampled at the profiled threads' allocator events; a short-lived
allocation of a gloo thread outside a collective is not seen. A block freed unseen together with
another one between the same two events is matched by neither (then its reuse, if any, is used). A
buffer that a descheduled gloo thread really holds longer than the caller is measured as held until
then (the run's real memory): DDP's broadcast copy counts only if held about 100 ms (past the model
build, up to the first step's peak; mlp here, held 100 ms by gdb: it did on a fast run).
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
    unmatched_bytes: int = 0         # running sum - allocator total at the end: with the flag, frees the
                                     # events miss (0 without it)
    n_events: int = 0
    raw_peak_allocated_bytes: int = 0   # the allocator's own total, uncorrected (every thread's, with the flag)
    recovered_free_bytes: int = 0       # bytes of frees made on other threads, recovered (whole run)
    recovered_frees: int = 0
    every_thread: bool = False          # the allocator's total counted every thread (unseen frees are timed)


def measure_cpu_rank(workload: Workload, cfg: TrainConfig, target: Target = Target()) -> RankMeasurement:
    with compat.cpu_allocator_counts_every_thread() as every_thread:
        prof = profiled_run(workload, cfg, target)
    return _ledger(allocation_events(prof), cfg.steps, every_thread)


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


def unseen_drops(events: list[tuple]) -> list[tuple[int, int]]:
    """`(time_ns, bytes)` at each event where the allocator's total fell by more than the event
    itself explains: frees on threads the profiler does not follow, between this event and the one
    before (only seen with the flag above; without it the total moves with the events)."""
    out = []
    for prev, ev in zip(events, events[1:]):
        d = (ev[3] - prev[3]) - ev[2]
        if d < 0:
            out.append((ev[0], -d))
    return out


def recovered_frees(events: list[tuple]) -> list[tuple[int, int]]:
    """`(time_ns, bytes)` of the frees that happened on threads the profiler does not see (see above)."""
    live: dict[int, tuple[int, int | None, int]] = {}    # ptr -> (size, end of its collective op, alloc time)
    unfreed: list[tuple[tuple, int | None]] = []         # (block, reuse of its address or None)
    for t, _s, size, _total, _label, ptr, c10d_end in events:
        if size > 0:
            old = live.pop(ptr, None)
            if old is not None:   # handed out again: the block there was freed before, unrecorded
                unfreed.append((old, t))
            live[ptr] = (size, c10d_end, t)
        elif size < 0:
            live.pop(ptr, None)
    unfreed.extend((block, None) for block in live.values())
    drops = [[t, b, False] for t, b in unseen_drops(events)]

    def take_drop(size, after, until):   # the first unused fall of the total by exactly `size`
        for d in drops:
            if not d[2] and d[0] > after and d[1] == size and (until is None or d[0] <= until):
                d[2] = True
                return d[0]
        return None

    out: list[tuple[int, int]] = []
    for (size, c10d_end, _t), until in unfreed:   # collectives' temporaries first: their drops are theirs
        if c10d_end is not None:
            take_drop(size, c10d_end, until)
            out.append((c10d_end if until is None else min(c10d_end, until), size))
    for (size, c10d_end, t_alloc), until in unfreed:
        if c10d_end is None:
            when = take_drop(size, t_alloc, until) or until
            if when is not None:
                out.append((when, size))
    out.sort()
    return out


def _ledger(events: list[tuple], steps: int, every_thread: bool = False) -> RankMeasurement:
    """The level over the optimizer steps: the recorded events' running sum less the recovered frees."""
    if not events:
        return RankMeasurement(0, "", {}, 0, 0, 0, every_thread=every_thread)
    lost = recovered_frees(events)
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
        level = cur - lost_now
        in_steps = step != "0" and int(step) <= steps   # every optimizer step, as the estimate's window
        if in_steps and label != prev_label:   # a phase holds at least the level it starts at
            phase_peaks[phase] = max(phase_peaks.get(phase, -1), cur - size - lost_now)
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
                           max(raw_peak, 0), lost_cum[-1], len(lost), every_thread)
