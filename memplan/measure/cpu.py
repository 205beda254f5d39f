"""Measured truth on the CPU: PyTorch's own CPU-allocator accounting of a real training run.

The run is the very same step driver the tracer uses (`memplan.step.run`), on real tensors, under
`torch.profiler.profile(profile_memory=True)`. Every allocation and free of the CPU allocator is
reported to the profiler with its size and the allocator's running total (c10's
`ProfiledCPUMemoryReporter`); nothing here looks at memplan's tracer. Phases are `record_function`
ranges opened by the driver's phase callback, so each allocator event is attributed to the phase whose
range encloses it.

Known limitations: memory allocated by libraries outside PyTorch's CPU allocator (oneDNN scratchpads
that do not use it, Python objects) is not counted, as it is not by `max_memory_allocated` on a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from memplan.measure.profiler import memory_profile
from memplan.step import NoHooks, Target, run
from memplan.workload import TrainConfig, Workload


@dataclass(frozen=True)
class CpuMeasurement:
    peak_allocated_bytes: int            # peak over the optimizer steps (model build excluded)
    peak_phase: str
    run_peak_allocated_bytes: int        # peak over the whole run, model build included
    phase_peaks: dict = field(default_factory=dict)   # phase -> peak bytes within the last (steady-state) step
    ledger_check_bytes: int = 0          # |our running sum - the allocator's own running total| at the end
    n_events: int = 0


class PhaseRanges(NoHooks):
    """Opens one profiler range per phase: memplan::<phase>::<step>::<micro>."""

    def __init__(self):
        self._cur = None

    def phase(self, phase, step, micro_step):
        self.close()
        import torch

        self._cur = torch.autograd.profiler.record_function(f"memplan::{phase}::{step}::{micro_step}")
        self._cur.__enter__()

    def close(self):
        if self._cur is not None:
            self._cur.__exit__(None, None, None)
            self._cur = None


def measure_cpu(workload: Workload, cfg: TrainConfig, target: Target = Target()) -> CpuMeasurement:
    """Run the workload for real on the CPU and return its peak from the CPU allocator's accounting."""
    cfg.validate()
    return ledger(profiled_run(workload, cfg, target), cfg.steps)


def profiled_run(workload: Workload, cfg: TrainConfig, target: Target = Target()):
    """Run the workload for real under a memory profiling session with one `memplan::` range per phase;
    returns the profiler (read it with `allocation_events`)."""
    hooks = PhaseRanges()
    with memory_profile() as prof:
        try:
            run(workload, cfg, hooks, target)
        finally:
            hooks.close()
    return prof


def allocation_events(prof) -> list[tuple[int, int, int, int, str]]:
    """Every CPU-allocator event of a profiling session, in time order:
    `(time_ns, seq, size (+alloc / -free), allocator running total, phase label "phase::step::micro")`.
    The label is that of the innermost `memplan::` range around the event ("build::0::0" outside any)."""
    from torch._C._profiler import _EventType

    events: list[tuple[int, int, int, int, str]] = []
    seq = 0
    stack = [(n, "build::0::0") for n in reversed(prof.profiler.kineto_results.experimental_event_tree())]
    while stack:
        node, label = stack.pop()
        if node.tag == _EventType.Allocation:
            f = node.extra_fields
            if str(f.device) == "cpu":
                events.append((node.start_time_ns, seq, f.alloc_size, f.total_allocated, label))
                seq += 1
            continue
        name = node.name
        if name.startswith("memplan::"):
            label = name[len("memplan::"):]
        for child in reversed(node.children):
            stack.append((child, label))
    events.sort()
    return events


def ledger(prof, steps: int) -> CpuMeasurement:
    events = allocation_events(prof)
    cur = peak = run_peak = 0
    peak_phase = ""
    phase_peaks: dict[str, int] = {}
    last = str(steps)
    started = in_last = False
    prev_label = ""
    for _t, _s, size, _total, label in events:
        phase, step, _micro = label.split("::")
        in_steps = step != "0" and int(step) <= steps
        if in_steps and not started:
            # the level held when the first step begins is part of the steps
            started = True
            peak, peak_phase = cur, phase
        if step == last and (not in_last or label != prev_label):
            # a phase holds at least the level it starts at
            in_last = True
            phase_peaks[phase] = max(phase_peaks.get(phase, 0), cur)
        prev_label = label
        cur += size
        run_peak = max(run_peak, cur)
        if in_steps and cur >= peak:
            peak, peak_phase = cur, phase
        if step == last and cur > phase_peaks.get(phase, -1):
            phase_peaks[phase] = cur
    # the allocator's running total counts from whatever earlier profiled runs left behind
    base = events[0][3] - events[0][2] if events else 0
    check = abs(cur - (events[-1][3] - base)) if events else 0
    return CpuMeasurement(peak, peak_phase, run_peak, phase_peaks, check, len(events))
