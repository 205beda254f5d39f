"""The core: device targets, the estimate of a trace, and the one analysis path (trace, or fall back to
real CPU measurements). Everything above it (plan, validate, diagnose, distributed, report, the API and
the CLI) asks the core; the core never imports them."""
from memplan.core.analyze import (Analysis, analyze, load_workload, phase_count, run_analysis, trace,
                                  trace_optimizer_change, train_config)
from memplan.core.device import CPU, DeviceTarget, resolve_device, simulate_allocator
from memplan.core.estimate import Estimate, estimate_from_trace
from memplan.core.fallback import can_fall_back, estimate_by_fallback

__all__ = ["Analysis", "CPU", "DeviceTarget", "Estimate", "analyze", "can_fall_back", "estimate_by_fallback",
           "estimate_from_trace", "load_workload", "phase_count", "resolve_device", "run_analysis",
           "simulate_allocator", "trace", "trace_optimizer_change", "train_config"]
