"""The Python API: `analyze`, `plan`, `validate`, `diagnose`, `preflight`.

Everything the CLI does goes through these functions; they return frozen dataclasses and never print.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from memplan.errors import TraceError, UserError
from memplan.estimate import Estimate
from memplan.step import Target
from memplan.workload import TrainConfig, Workload


@dataclass(frozen=True)
class DeviceTarget:
    """Where the job will run: the kernels/optimizer defaults to imitate and the memory to compare with."""

    name: str | None            # catalog name; None = plain CPU accounting
    family: str                 # cpu | cuda | npu
    capacity_bytes: int | None  # what the framework reports as total (override with --capacity)
    outside_allocator_bytes: int = 0
    alloc_conf: str | None = None
    outside_allocator_known: bool = True  # False: the catalog has no figure (counted as 0, said so)
    spec: object = None         # the catalog entry, when there is one


def resolve_device(device: str | None = None, capacity: int | str | None = None,
                   alloc_conf: str | None = None) -> DeviceTarget:
    """A catalog name (`A100-80GB`, `910B3`), `cuda` / `npu` (read the present device), `cpu`, or None."""
    from memplan.units import parse_capacity

    cap = parse_capacity(capacity) if capacity is not None else None
    if device is None or device.lower() == "cpu":
        return DeviceTarget(name=device.lower() if device else None, family="cpu", capacity_bytes=cap,
                            alloc_conf=alloc_conf)
    from memplan.alloc import config_from_env, parse_alloc_conf, lookup

    spec = lookup(device)
    # check the allocator configuration now, so a malformed one is a one-line input error
    if alloc_conf is not None:
        parse_alloc_conf(alloc_conf, spec.family)
    else:
        config_from_env(spec.family)
    return DeviceTarget(
        name=spec.name, family=spec.family,
        capacity_bytes=cap if cap is not None else spec.capacity_bytes,
        outside_allocator_bytes=spec.outside_allocator_bytes or 0, alloc_conf=alloc_conf, spec=spec,
        outside_allocator_known=spec.outside_allocator_bytes is not None,
    )


def simulate_allocator(trace, dev: DeviceTarget):
    """Replay a trace through the target device's caching allocator (None for plain CPU accounting)."""
    if dev.family == "cpu":
        return None
    from memplan.alloc import config_from_env, parse_alloc_conf, simulate

    conf = parse_alloc_conf(dev.alloc_conf, dev.family) if dev.alloc_conf is not None else config_from_env(dev.family)
    return simulate(trace, dev.spec if dev.spec is not None else dev.family, conf, capacity=dev.capacity_bytes,
                    outside_allocator_bytes=dev.outside_allocator_bytes)


def load_workload(model: str | Workload | None = None, hf_config: str | None = None,
                  task: str | None = None) -> Workload:
    if isinstance(model, Workload):
        return model
    from memplan.workload import check_source

    check_source(model, hf_config)
    if hf_config:
        return Workload.from_hf_config(hf_config, task=task)
    return Workload.from_file(model)


def estimate_from_trace(workload: Workload, cfg: TrainConfig, dev: DeviceTarget, trace,
                        seconds: float = 0.0) -> Estimate:
    from memplan.trace.analysis import summarize

    s = summarize(trace)
    reserved, frag = s.peak_allocated_bytes, 0
    notes = list(trace.notes)
    if not dev.outside_allocator_known:
        notes.append(f"memory held outside the allocator on {dev.name} (runtime, HCCL/NCCL buffers) is not in "
                     "the catalog: leave headroom, or give the usable amount with --capacity")
    sim = simulate_allocator(trace, dev)
    if sim is not None:
        reserved, frag = sim.peak_reserved_bytes, sim.fragmentation_at_peak_bytes
        notes.extend(sim.notes or [])
        if sim.oom is not None:
            phase, step, micro = trace.phase_at(sim.oom.event_index)
            r = trace.storages[trace.events[sim.oom.event_index]] if trace.events[sim.oom.event_index] >= 0 else None
            where = f" in {r.module or 'the top level'} ({r.op})" if r is not None else ""
            notes.append(f"the caching allocator would run out during {phase} of step {step}{where}")
    modules = [
        {"module": r.module, "bytes_at_peak": r.bytes_at_peak, "by_category": r.by_category,
         "activations_saved_bytes": r.activations_saved}
        for r in s.modules
    ]
    from memplan.step import resolve_optimizer_impl

    config = cfg.to_dict()
    if cfg.optimizer_impl == "default" and workload.make_optimizer is None:
        config["optimizer_impl_resolved"] = next(
            k for k, v in {"for-loop": {"foreach": False}, "foreach": {"foreach": True}}.items()
            if v == resolve_optimizer_impl("default", dev.family))
    return Estimate(
        workload=workload.name, config=config, device=dev.name, capacity_bytes=dev.capacity_bytes,
        peak_allocated_bytes=s.peak_allocated_bytes, peak_reserved_bytes=reserved,
        outside_allocator_bytes=dev.outside_allocator_bytes, outside_allocator_known=dev.outside_allocator_known,
        peak_phase=s.peak_phase, peak_step=s.peak_step,
        peak_micro_step=s.peak_micro_step, breakdown_at_peak=s.breakdown_at_peak, phase_peaks=s.phase_peaks,
        first_step_peak_bytes=s.first_step_peak_bytes, modules=modules, fragmentation_bytes=frag,
        notes=notes, trace_seconds=round(seconds, 3), n_events=s.n_events,
    )


def trace(workload: Workload, cfg: TrainConfig, dev: DeviceTarget, on_phase=None):
    from memplan.trace.tracer import trace_workload

    return trace_workload(workload, cfg, Target(family=dev.family, run_device="cpu", name=dev.name),
                          on_phase=on_phase)


def phase_count(cfg: TrainConfig) -> int:
    """How many phase changes a traced run goes through (for progress bars)."""
    return 1 + cfg.steps * (3 * cfg.grad_accum + 2) + 1


def analyze(model: str | Workload | None = None, *, hf_config: str | None = None, task: str | None = None,
            config: TrainConfig | None = None, device: str | DeviceTarget | None = None,
            capacity: int | str | None = None, alloc_conf: str | None = None,
            return_trace: bool = False, on_phase=None, fallback: bool = False, **train_options):
    """Trace one steady-state training step on fake tensors and estimate its peak memory.

    `train_options` are TrainConfig fields (batch_size=..., precision=...). With `return_trace=True`
    returns `(estimate, trace)`. With `fallback=True`, an op that cannot be traced on fake tensors makes
    memplan measure small real steps on the CPU and extrapolate (`Estimate.method == "fallback"`, stated
    in its notes; the trace is then None).
    """
    workload = load_workload(model, hf_config, task)
    cfg = (config or TrainConfig()).with_(**train_options) if train_options else (config or TrainConfig())
    cfg.validate()
    dev = device if isinstance(device, DeviceTarget) else resolve_device(device, capacity, alloc_conf)
    t0 = time.perf_counter()
    try:
        tr = trace(workload, cfg, dev, on_phase=on_phase)
    except TraceError as exc:
        if not fallback or exc.op is None:  # a failure in the user's own code is not a tracing limit
            raise
        from memplan.trace.fallback import estimate_by_fallback

        est = estimate_by_fallback(workload, cfg, dev, reason=str(exc), error=exc)
        return (est, None) if return_trace else est
    est = estimate_from_trace(workload, cfg, dev, tr, time.perf_counter() - t0)
    return (est, tr) if return_trace else est


def validate(*args, **kwargs):
    """Run the real loop on a device and compare with the estimate (memplan.validate.validate)."""
    from memplan.validate import validate as _validate

    return _validate(*args, **kwargs)


def preflight(*args, **kwargs):
    """Estimate before touching real memory; raise MemoryPlanError when it does not fit."""
    from memplan.validate import preflight as _preflight

    return _preflight(*args, **kwargs)


def guard(*args, **kwargs):
    """Context manager / decorator: explain an OOM or ACL error, then re-raise it unchanged."""
    from memplan.validate import guard as _guard

    return _guard(*args, **kwargs)


def diagnose(paths_or_text, estimate=None):
    """Explain OOM messages and ACL / CANN / HCCL errors in logs (memplan.diagnose.diagnose)."""
    from memplan.diagnose import diagnose as _diagnose

    return _diagnose(paths_or_text, estimate=estimate)


def plan(*args, **kwargs):
    """Recommend batch size, accumulation, checkpointing and allocator policy (memplan.plan.plan)."""
    from memplan.plan import plan as _plan

    return _plan(*args, **kwargs)
