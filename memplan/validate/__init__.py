"""Run the real training loop on a device, measure its memory, compare with the estimate; and the
in-script helper `preflight` (estimate before touching memory; `guard` is memplan.report.guard).

    from memplan.validate import validate, preflight
    v = validate("model.py", device="cuda", batch_size=8)     # -> Validation (predicted vs measured)
    est = preflight(build_model, make_batch, device="npu", batch_size=8)   # or MemoryPlanError

Integrations (optional imports): `memplan.validate.integrations.HFPreflightCallback`,
`LightningPreflightCallback`.
"""
from memplan.validate.preflight import preflight
from memplan.validate.runner import Validation, validate

__all__ = ["validate", "preflight", "Validation"]
