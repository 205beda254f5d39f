"""memplan: memory planner and OOM diagnostic analyzer for PyTorch training.

The Python API lives in `memplan.api` (`analyze`, `plan`, `validate`, `diagnose`, `preflight`, `guard`);
the pre-flight helpers are also here, imported lazily (torch is only loaded when one is used):
`memplan.preflight`, `memplan.guard`, `memplan.analyze`. (`memplan.plan`, `memplan.validate` and
`memplan.diagnose` are the subpackages.)
"""
__version__ = "0.1.0"

_LAZY = {
    "analyze": ("memplan.api", "analyze"),
    "preflight": ("memplan.validate", "preflight"),
    "guard": ("memplan.report.guard", "guard"),
    "Validation": ("memplan.validate", "Validation"),
    "decode": ("memplan.diagnose", "decode"),
    "TrainConfig": ("memplan.workload", "TrainConfig"),
    "Estimate": ("memplan.core", "Estimate"),
    "MemoryPlanError": ("memplan.errors", "MemoryPlanError"),
    "MemplanError": ("memplan.errors", "MemplanError"),
    "UserError": ("memplan.errors", "UserError"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'memplan' has no attribute {name!r}")
