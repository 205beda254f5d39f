"""The Python API: `analyze`, `plan`, `validate`, `diagnose`, `preflight`, `guard` (re-exports only).

Everything the CLI does goes through these functions; they return frozen dataclasses and never print
(except `guard`, whose job is to print a diagnosis on stderr). Nothing inside memplan imports this
module: the layers below it import each other directly (docs/architecture.md).

Each name is imported from its module when first used, so a command loads only what it calls (`memplan
analyze` does not import the planner, networkx, the distributed or diagnose packages).
"""
import importlib

_FROM = {
    "memplan.core": ("Analysis", "DeviceTarget", "Estimate", "analyze", "estimate_by_fallback", "estimate_from_trace",
                     "load_workload", "phase_count", "resolve_device", "run_analysis", "simulate_allocator", "trace"),
    "memplan.diagnose": ("decode", "diagnose"),
    "memplan.diagnose.snapshot": ("read_snapshot",),
    "memplan.distributed": ("choose_sharding", "estimate_per_rank", "validate_distributed"),
    "memplan.distributed.deepspeed": ("estimate_deepspeed",),
    "memplan.plan": ("Plan", "plan"),
    "memplan.report.guard": ("guard",),
    "memplan.validate": ("Validation", "preflight", "validate"),
    "memplan.workload": ("TrainConfig", "Workload"),
}
_MODULE = {name: module for module, names in _FROM.items() for name in names}

__all__ = sorted(_MODULE)


def __getattr__(name):
    module = _MODULE.get(name)
    if module is None:
        raise AttributeError(f"module 'memplan.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
