"""Measured truth of real runs on the CPU: PyTorch's own CPU-allocator accounting under the profiler.

Used by validate (the cpu backend), by the fallback estimate (memplan.core.fallback), by the
distributed per-rank measurement and by the fake-kernel probe of memplan.trace.kernels.
"""
from memplan.measure.cpu import (CpuMeasurement, PhaseRanges, allocation_events, ledger, measure_cpu,
                                 profiled_run)
from memplan.measure.profiler import memory_profile

__all__ = ["CpuMeasurement", "PhaseRanges", "allocation_events", "ledger", "measure_cpu", "memory_profile",
           "profiled_run"]
