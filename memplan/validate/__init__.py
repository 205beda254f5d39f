"""Run the real training loop on a device, measure its memory, compare with the estimate; and the
in-script helpers: `preflight` (estimate before touching memory) and `guard` (explain OOM / ACL errors).

    from memplan.validate import validate, preflight, guard
    v = validate("model.py", device="cuda", batch_size=8)     # -> Validation (predicted vs measured)
    est = preflight(build_model, make_batch, device="npu", batch_size=8)   # or MemoryPlanError
    with guard():
        train()

Integrations (optional imports): `memplan.validate.integrations.HFPreflightCallback`,
`LightningPreflightCallback`.
"""
from memplan.validate.preflight import guard, preflight
from memplan.validate.runner import Validation, validate

__all__ = ["validate", "preflight", "guard", "Validation"]
