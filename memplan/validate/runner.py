"""`validate(...)`: estimate a workload, run it for real on a device backend, and compare.

The estimate (`memplan.core.run_analysis`) and the run (`backends.*.measure`) use the same `Workload`, the same
`TrainConfig` and the same step driver, for the same target family, so predicted and measured describe the
same steps. A failed run (OOM, ACL/CANN/HCCL error, an exception in the user's step) is a result: it is
decoded by `memplan.diagnose` with the estimate and reported next to the prediction ("predicted 58.1 GiB,
died at 60.9 GiB reserved during backward").

Errors are `100 * (predicted - measured) / measured`: positive means memplan over-predicts.

Known limitations: the CPU has no caching allocator, so reserved is compared only on cuda / npu. With a
plan JSON the workload is re-traced for the validating device; the plan's own `predicted` is reported
beside it (it was computed for the plan's target, which may differ).
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from memplan.alloc.config import ENV_VARS, env_var
from memplan.core import load_workload, resolve_device, run_analysis
from memplan.errors import UserError
from memplan.units import fmt_bytes, parse_capacity
from memplan.validate.backends import family_of, get_backend
from memplan.workload import TrainConfig, Workload, read_json
from memplan.diagnose import diagnose

DEFAULT_TOLERANCE_PCT = 5.0


@dataclass(frozen=True)
class Validation:
    """Predicted vs measured for one workload on one device (JSON keys per DESIGN.md)."""

    workload: str
    config: dict
    backend: str                       # cpu | cuda | npu: where it ran
    device: str                        # the device's own name
    target: str | None                 # the estimate's device (catalog name), None = plain CPU accounting
    predicted: dict                    # peak_allocated_bytes, peak_reserved_bytes, peak_phase, phase_peaks, ...
    measured: dict                     # the same keys; None where the backend cannot measure
    error_pct: float | None            # allocated
    reserved_error_pct: float | None
    phases: tuple = ()                 # per-phase rows {phase, predicted_bytes, measured_bytes, error_pct}
    tolerance_pct: float = DEFAULT_TOLERANCE_PCT
    ok: bool = False
    failure: dict | None = None        # backends.Failure.to_dict() + summary + diagnosis
    checks: dict = field(default_factory=dict)
    plan: dict | None = None           # what the plan JSON said, when one was given
    notes: tuple = ()
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.failure is not None

    def to_dict(self) -> dict:
        return {
            "workload": self.workload, "config": self.config, "backend": self.backend, "device": self.device,
            "target": self.target, "predicted": self.predicted, "measured": self.measured,
            "error_pct": self.error_pct, "reserved_error_pct": self.reserved_error_pct,
            "phases": list(self.phases), "tolerance_pct": self.tolerance_pct, "ok": self.ok,
            "failure": self.failure, "checks": self.checks, "plan": self.plan, "notes": list(self.notes),
            "seconds": self.seconds,
        }


def error_pct(predicted: int | None, measured: int | None) -> float | None:
    if predicted is None or measured is None or measured == 0:
        return None
    return round(100.0 * (predicted - measured) / measured, 4)


# ---------------------------------------------------------------------------------------------------
def read_plan(path_or_dict) -> tuple[dict, dict, dict]:
    """A plan JSON -> (TrainConfig changes, env, the plan's own summary). Unknown keys are ignored."""
    data = read_json(path_or_dict) if isinstance(path_or_dict, (str, os.PathLike)) else dict(path_or_dict)
    fields = set(TrainConfig.__dataclass_fields__)
    changes: dict = {}
    cfg = data.get("config")
    if cfg is not None:
        if not isinstance(cfg, dict):
            raise UserError("plan: 'config' must be an object of TrainConfig fields")
        changes.update({k: v for k, v in cfg.items() if k in fields})
    if "batch_size" in data:
        changes["batch_size"] = data["batch_size"]
    if "grad_accum_steps" in data:
        changes["grad_accum"] = data["grad_accum_steps"]
    if "checkpoint" in data:
        changes["checkpoint"] = data["checkpoint"]
    if "checkpoint" in changes:
        ck = changes["checkpoint"]
        if isinstance(ck, str):
            ck = [ck]
        if not isinstance(ck, (list, tuple)) or not all(isinstance(c, str) for c in ck):
            raise UserError("plan: 'checkpoint' must be a list of module names")
        changes["checkpoint"] = tuple(ck)
    for k in ("batch_size", "grad_accum", "steps"):
        if k in changes and (not isinstance(changes[k], int) or isinstance(changes[k], bool)):
            raise UserError(f"plan: {k} must be an integer, got {changes[k]!r}")
    env = data.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(v, (str, int, float)) for v in env.values()):
        raise UserError("plan: 'env' must be an object of environment variables")
    env = {str(k): str(v) for k, v in env.items()}
    pred = data.get("predicted") if isinstance(data.get("predicted"), dict) else {}
    summary = {"predicted_peak_allocated_bytes": pred.get("peak_allocated_bytes"),
               "predicted_peak_reserved_bytes": pred.get("peak_reserved_bytes"),
               "device": pred.get("device") or data.get("device"), "env": env,
               "changes": data.get("changes")}
    return changes, env, summary


@contextmanager
def _env(env: dict):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _alloc_conf_from(env: dict, family: str) -> str | None:
    return env.get(env_var(family)) if family in ENV_VARS else None


# ---------------------------------------------------------------------------------------------------
def validate(model: str | Workload | None = None, *, hf_config: str | None = None, task: str | None = None,
             config: TrainConfig | None = None, device: str | None = None, capacity: int | str | None = None,
             alloc_conf: str | None = None, plan=None, tolerance: float = DEFAULT_TOLERANCE_PCT,
             return_trace: bool = False, on_phase=None, **train_options):
    """Estimate `model`, run it for real on `device` (cpu | cuda | npu | a catalog name | None = detect),
    and compare peak allocated / reserved, in total and per phase.

    `plan`: a plan JSON path or dict (batch_size, grad_accum_steps, checkpoint, env, config) applied on
    top of `config` / `train_options`. `capacity` on cuda / npu is enforced for real through the
    per-process memory fraction. With `return_trace=True` returns `(validation, trace)`.
    """
    if tolerance is None or tolerance < 0:
        raise UserError(f"tolerance must be >= 0 (percent), got {tolerance}")
    t0 = time.perf_counter()
    workload = load_workload(model, hf_config, task)
    cfg = config or TrainConfig()
    env, plan_summary = {}, None
    if plan is not None:
        changes, env, plan_summary = read_plan(plan)
        cfg = cfg.with_(**changes)
        if device is None and plan_summary.get("device"):
            device = plan_summary["device"]
    if train_options:
        cfg = cfg.with_(**train_options)
    cfg.validate()
    family = family_of(device)
    try:
        backend = get_backend(family)         # unavailable -> one-line UserError, before any tracing
    except UserError as exc:
        if device is not None and family is not None and device.lower() != family:
            raise UserError(f"--device {device} is a {family} device: " + str(exc).split(": ", 1)[-1]) from None
        raise
    family = backend.name
    alloc_conf = alloc_conf or _alloc_conf_from(env, family)
    # the estimate: a catalog name as given; a bare family reads the present device (cuda/npu) or plain cpu
    named = device is not None and device.lower().split(":")[0] not in ("auto", "cpu", "cuda", "npu")
    dev = resolve_device(device if named else family, capacity, alloc_conf)
    cap = parse_capacity(capacity) if capacity is not None else None
    with _env(env):
        a = run_analysis(workload, config=cfg, device=dev, on_phase=on_phase, fallback=False)
        est, trace = a.estimate, a.trace
        m = backend.measure(workload, cfg, capacity=cap, on_phase=on_phase)
    v = compare(est, m, cfg, tolerance, plan_summary, time.perf_counter() - t0)
    return (v, trace) if return_trace else v


def compare(est, m, cfg: TrainConfig, tolerance: float, plan_summary: dict | None = None,
            seconds: float = 0.0) -> Validation:
    """Build the `Validation` from an Estimate and a backends.Measurement."""
    cpu = m.backend == "cpu"
    predicted = {
        "peak_allocated_bytes": est.peak_allocated_bytes,
        "peak_reserved_bytes": est.peak_reserved_bytes,
        "device_total_bytes": est.device_total_bytes,
        "peak_phase": est.peak_phase,
        "phase_peaks": dict(est.phase_peaks),
        "breakdown_at_peak": dict(est.breakdown_at_peak),
        "capacity_bytes": est.capacity_bytes,
        "fits": est.fits,
    }
    measured = {
        "peak_allocated_bytes": m.peak_allocated_bytes,
        "peak_reserved_bytes": m.peak_reserved_bytes,
        "device_used_bytes": m.device_used_bytes,
        "device_total_bytes": m.device_total_bytes,
        "peak_phase": m.peak_phase,
        "phase_peaks": dict(m.phase_peaks),
        "phase_peaks_reserved": dict(m.phase_peaks_reserved) or None,
        "baseline_allocated_bytes": m.baseline_allocated_bytes,
        "baseline_reserved_bytes": m.baseline_reserved_bytes,
    }
    err = error_pct(est.peak_allocated_bytes, m.peak_allocated_bytes)
    rerr = None if cpu else error_pct(est.peak_reserved_bytes, m.peak_reserved_bytes)
    phases = tuple(
        {"phase": p, "predicted_bytes": est.phase_peaks.get(p), "measured_bytes": m.phase_peaks.get(p),
         "error_pct": error_pct(est.phase_peaks.get(p), m.phase_peaks.get(p)),
         "measured_reserved_bytes": m.phase_peaks_reserved.get(p)}
        for p in list(dict.fromkeys([*est.phase_peaks, *m.phase_peaks]))
    )
    notes = list(m.notes)
    failure = None
    if m.failure is not None:
        failure = _failure_report(est, m)
        ok = False
    else:
        ok = err is not None and abs(err) <= tolerance and (rerr is None or abs(rerr) <= tolerance)
        if err is not None and abs(err) > tolerance:
            notes.append(f"allocated error {err:+.2f} % is over the tolerance of {tolerance} %")
        if rerr is not None and abs(rerr) > tolerance:
            notes.append(f"reserved error {rerr:+.2f} % is over the tolerance of {tolerance} %")
    if plan_summary and plan_summary.get("predicted_peak_allocated_bytes") is not None:
        pe = error_pct(plan_summary["predicted_peak_allocated_bytes"], est.peak_allocated_bytes)
        if pe is not None and abs(pe) > 0.5:
            notes.append(f"the plan's own prediction differs from this re-trace by {pe:+.2f} % "
                         "(it was computed for another target or version)")
    return Validation(
        workload=est.workload, config=cfg.to_dict(), backend=m.backend, device=m.device_name, target=est.device,
        predicted=predicted, measured=measured, error_pct=err, reserved_error_pct=rerr, phases=phases,
        tolerance_pct=float(tolerance), ok=ok, failure=failure, checks=dict(m.checks), plan=plan_summary,
        notes=tuple(notes), seconds=round(seconds, 3),
    )


def _failure_report(est, m) -> dict:
    f = m.failure
    where = f"during {f.phase}" + (f" of {f.module}" if f.module else "") + f" (step {f.step}"
    where += f", micro-step {f.micro_step})" if f.micro_step > 1 else ")"
    if f.reserved_bytes is not None:
        died = f"died at {fmt_bytes(f.reserved_bytes)} reserved ({fmt_bytes(f.allocated_bytes)} allocated)"
    elif f.peak_allocated_bytes is not None:
        died = f"died after reaching {fmt_bytes(f.peak_allocated_bytes)} allocated"
    else:
        died = "died"
    pred = (fmt_bytes(est.peak_reserved_bytes) + " reserved" if m.backend != "cpu"
            else fmt_bytes(est.peak_allocated_bytes) + " allocated")
    summary = f"predicted {pred}, {died} {where}: {f.exception_type}: {f.message}"
    try:
        d = diagnose(f.text, est.to_dict()).to_dict()
    except Exception as exc:  # never let the explanation hide the failure itself
        d = {"primary_category": "unknown", "incidents": [], "notes": [f"diagnose failed: {exc}"]}
    return {**f.to_dict(), "summary": summary, "diagnosis": d}
