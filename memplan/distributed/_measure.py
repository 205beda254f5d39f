"""A rank's measured peak on the CPU, from PyTorch's CPU-allocator accounting under the profiler.

Same run and phase ranges as `memplan.validate.cpu_measure`, with one difference that matters for
distributed jobs: gloo runs collectives on its own worker threads, and the profiler only records
allocator events of threads it profiles. A tensor allocated on the training thread and released on a
gloo thread (the last reference to a collective's input dies with the work object there) has no free
event, so a running sum of the recorded events drifts upwards, by a different amount on each rank and
each run. Every recorded event also carries the allocator's own process-wide total
(`total_allocated`, c10's `ProfiledCPUMemoryReporter`), which sees all threads: the level used here is
that total minus the total when profiling began. The running sum is kept for comparison.

Known limitations: the level is sampled at the training thread's own allocator events; a short-lived
allocation of a gloo thread between two of them is not seen (gloo's CPU collectives work in place on
the tensors they are given).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from memplan.step import Target, run
from memplan.workload import TrainConfig, Workload


@dataclass(frozen=True)
class RankMeasurement:
    peak_allocated_bytes: int        # process-wide allocator total, over the optimizer steps
    peak_phase: str
    phase_peaks: dict = field(default_factory=dict)
    running_sum_peak_bytes: int = 0  # the single-thread running sum over the same window
    unmatched_bytes: int = 0         # running sum - allocator total at the end (frees on other threads)
    n_events: int = 0


def measure_cpu_rank(workload: Workload, cfg: TrainConfig, target: Target = Target()) -> RankMeasurement:
    from memplan.validate.quiet_profiler import memory_profile

    from memplan.validate.cpu_measure import _PhaseRanges

    hooks = _PhaseRanges()
    with memory_profile() as prof:
        try:
            run(workload, cfg, hooks, target)
        finally:
            hooks.close()
    return _ledger(prof, cfg.steps)


def _ledger(prof, steps: int) -> RankMeasurement:
    from memplan.validate.cpu_measure import allocation_events

    events = allocation_events(prof)
    if not events:
        return RankMeasurement(0, "", {}, 0, 0, 0)
    base = events[0][3] - events[0][2]   # the allocator's total before the first recorded event
    cur = 0
    peak = sum_peak = -1
    peak_phase = ""
    phase_peaks: dict[str, int] = {}
    for _t, _s, size, total, label in events:
        phase, step, _micro = label.split("::")
        cur += size
        level = total - base
        if step != "0" and int(step) <= steps:  # every optimizer step, as the estimate's window
            if level > peak:
                peak, peak_phase = level, phase
            if level > phase_peaks.get(phase, -1):
                phase_peaks[phase] = level
            sum_peak = max(sum_peak, cur)
    unmatched = cur - (events[-1][3] - base)
    return RankMeasurement(max(peak, 0), peak_phase, phase_peaks, max(sum_peak, 0), unmatched, len(events))
