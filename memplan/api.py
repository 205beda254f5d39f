"""The Python API: `analyze`, `plan`, `validate`, `diagnose`, `preflight`, `guard` (re-exports only).

Everything the CLI does goes through these functions; they return frozen dataclasses and never print
(except `guard`, whose job is to print a diagnosis on stderr). Nothing inside memplan imports this
module: the layers below it import each other directly (docs/architecture.md).
"""
from memplan.core import (Analysis, DeviceTarget, Estimate, analyze, estimate_by_fallback, estimate_from_trace,
                          load_workload, phase_count, resolve_device, run_analysis, simulate_allocator, trace)
from memplan.diagnose import decode, diagnose
from memplan.diagnose.snapshot import read_snapshot
from memplan.distributed import choose_sharding, estimate_per_rank, validate_distributed
from memplan.distributed.deepspeed import estimate_deepspeed
from memplan.plan import Plan, plan
from memplan.report.guard import guard
from memplan.validate import Validation, preflight, validate
from memplan.workload import TrainConfig, Workload

__all__ = ["Analysis", "DeviceTarget", "Estimate", "Plan", "TrainConfig", "Validation", "Workload", "analyze",
           "choose_sharding", "decode", "diagnose", "estimate_by_fallback", "estimate_deepspeed", "estimate_from_trace", "estimate_per_rank", "guard", "load_workload", "phase_count", "plan",
           "preflight", "read_snapshot", "resolve_device", "run_analysis", "simulate_allocator", "trace", "validate",
           "validate_distributed"]
