"""The Python API: `analyze`, `plan`, `validate`, `diagnose`, `preflight`.

Everything the CLI does goes through these functions; they return frozen dataclasses and never print.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from memplan.errors import UserError
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
    spec: object = None         # the catalog entry, when there is one


def resolve_device(device: str | None = None, capacity: int | str | None = None,
                   alloc_conf: str | None = None) -> DeviceTarget:
    """A catalog name (`A100-80GB`, `910B3`), `cuda` / `npu` (read the present device), `cpu`, or None."""
    from memplan.units import parse_size

    cap = parse_size(capacity) if capacity is not None else None
    if device is None or device.lower() == "cpu":
        return DeviceTarget(name=device.lower() if device else None, family="cpu", capacity_bytes=cap,
                            alloc_conf=alloc_conf)
    from memplan.alloc import catalog

    spec = catalog.resolve(device)
    return DeviceTarget(
        name=spec.name, family=spec.family,
        capacity_bytes=cap if cap is not None else spec.capacity_bytes,
        outside_allocator_bytes=spec.outside_allocator_bytes, alloc_conf=alloc_conf, spec=spec,
    )


def load_workload(model: str | Workload | None = None, hf_config: str | None = None,
                  task: str | None = None) -> Workload:
    if isinstance(model, Workload):
        return model
    if hf_config and model:
        raise UserError("give either a model file or --hf-config, not both")
    if hf_config:
        return Workload.from_hf_config(hf_config, task=task)
    if not model:
        raise UserError("no model: give a model file (model.py) or --hf-config config.json")
    return Workload.from_file(model)


def estimate_from_trace(workload: Workload, cfg: TrainConfig, dev: DeviceTarget, trace,
                        seconds: float = 0.0) -> Estimate:
    from memplan.trace.analysis import summarize

    s = summarize(trace)
    reserved, frag = s.peak_allocated_bytes, 0
    notes = list(trace.notes)
    if dev.family != "cpu":
        from memplan.alloc import simulate_trace

        sim = simulate_trace(trace, dev)
        reserved, frag = sim.peak_reserved_bytes, sim.fragmentation_bytes
        notes.extend(getattr(sim, "notes", []) or [])
    modules = [
        {"module": r.module, "bytes_at_peak": r.bytes_at_peak, "by_category": r.by_category,
         "activations_saved_bytes": r.activations_saved}
        for r in s.modules
    ]
    return Estimate(
        workload=workload.name, config=cfg.to_dict(), device=dev.name, capacity_bytes=dev.capacity_bytes,
        peak_allocated_bytes=s.peak_allocated_bytes, peak_reserved_bytes=reserved,
        outside_allocator_bytes=dev.outside_allocator_bytes, peak_phase=s.peak_phase, peak_step=s.peak_step,
        peak_micro_step=s.peak_micro_step, breakdown_at_peak=s.breakdown_at_peak, phase_peaks=s.phase_peaks,
        first_step_peak_bytes=s.first_step_peak_bytes, modules=modules, fragmentation_bytes=frag,
        notes=notes, trace_seconds=round(seconds, 3), n_events=s.n_events,
    )


def trace(workload: Workload, cfg: TrainConfig, dev: DeviceTarget):
    from memplan.trace.tracer import trace_workload

    return trace_workload(workload, cfg, Target(family=dev.family, run_device="cpu"))


def analyze(model: str | Workload | None = None, *, hf_config: str | None = None, task: str | None = None,
            config: TrainConfig | None = None, device: str | DeviceTarget | None = None,
            capacity: int | str | None = None, alloc_conf: str | None = None,
            return_trace: bool = False, **train_options):
    """Trace one steady-state training step on fake tensors and estimate its peak memory.

    `train_options` are TrainConfig fields (batch_size=..., precision=...). With `return_trace=True`
    returns `(estimate, trace)`.
    """
    workload = load_workload(model, hf_config, task)
    cfg = (config or TrainConfig()).with_(**train_options) if train_options else (config or TrainConfig())
    cfg.validate()
    dev = device if isinstance(device, DeviceTarget) else resolve_device(device, capacity, alloc_conf)
    t0 = time.perf_counter()
    tr = trace(workload, cfg, dev)
    est = estimate_from_trace(workload, cfg, dev, tr, time.perf_counter() - t0)
    return (est, tr) if return_trace else est
