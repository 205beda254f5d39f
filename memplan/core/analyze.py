"""`analyze`: load a workload, trace one steady-state training step on fake tensors, estimate its peak on
a device, and fall back to small real CPU measurements when the trace cannot be done.

This is the one analysis path: the CLI (`memplan analyze`), the Python API (`memplan.api.analyze`),
the planner, validate, preflight, the tests and benchmarks/coverage.py all go through it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from memplan.core.device import DeviceTarget, resolve_device, simulate_allocator
from memplan.core.estimate import Estimate, estimate_from_trace
from memplan.core.fallback import can_fall_back, estimate_by_fallback
from memplan.errors import UserError
from memplan.hf import load_hf_config
from memplan.step import Target
from memplan.trace.block_once import trace_block_once
from memplan.trace.optsplice import trace_new_optimizer
from memplan.workload import TrainConfig, Workload, check_source, load_model_file


@dataclass(frozen=True)
class Analysis:
    """What an analysis produced: the estimate, and (when traced) the trace and the allocator replay,
    so no caller traces or replays again (e.g. for a report)."""

    estimate: Estimate
    trace: object = None        # memplan.trace.events.Trace; None for a fallback estimate
    sim: object = None          # memplan.alloc.AllocSim; None for plain CPU accounting or a fallback
    device: DeviceTarget | None = None
    workload: Workload | None = None
    config: TrainConfig | None = None


def load_workload(model: str | Workload | None = None, hf_config: str | None = None,
                  task: str | None = None) -> Workload:
    """A `Workload` as given, or loaded from a model file or a Hugging Face config."""
    if isinstance(model, Workload):
        return model
    check_source(model, hf_config)
    if hf_config:
        return load_hf_config(hf_config, task=task)
    return load_model_file(model)


def train_config(config: TrainConfig | None = None, **train_options) -> TrainConfig:
    """`config` (default TrainConfig()) with `train_options` applied, validated once here."""
    cfg = config or TrainConfig()
    return (cfg.with_(**train_options) if train_options else cfg).validate()


def trace(workload: Workload, cfg: TrainConfig, dev: DeviceTarget, on_phase=None, full_trace: bool = False):
    """The fake-tensor trace of `cfg`'s training steps, with `dev`'s kernel choices: block-once when the
    model's repeated layers are proven identical (memplan.trace.blocks), else (or with `full_trace`) every
    op of every layer; `trace.mode` says which."""
    target = Target(family=dev.family, run_device="cpu", name=dev.name)
    if full_trace:
        from memplan.trace.tracer import trace_workload   # imports torch: only when a trace is asked for

        tr = trace_workload(workload, cfg, target, on_phase=on_phase)
        tr.mode_reason = "--full-trace"
        return tr
    return trace_block_once(workload, cfg, target, on_phase=on_phase)


def trace_optimizer_change(workload: Workload, cfg: TrainConfig, dev: DeviceTarget, base):
    """The trace of `cfg` from `base`, the trace of a configuration that differs only in the optimizer:
    the new optimizer's phase traced alone and spliced in (memplan.trace.optsplice), or `(None, why)`
    where that cannot be proven equal to tracing `cfg` itself."""
    return trace_new_optimizer(workload, cfg, Target(family=dev.family, run_device="cpu", name=dev.name), base)


def phase_count(cfg: TrainConfig) -> int:
    """How many phase changes a traced run goes through (for progress bars)."""
    return 1 + cfg.steps * (3 * cfg.grad_accum + 2) + 1


def run_analysis(model: str | Workload | None = None, *, hf_config: str | None = None, task: str | None = None,
                 config: TrainConfig | None = None, device: str | DeviceTarget | None = None,
                 capacity: int | str | None = None, alloc_conf: str | None = None, on_phase=None,
                 fallback: bool = True, full_trace: bool = False, **train_options) -> Analysis:
    """Trace, replay the allocator and estimate; on a failure `can_fall_back` accepts (and `fallback`),
    measure small real CPU steps and extrapolate (`Estimate.method == "fallback"`, stated in its notes).
    `full_trace` traces every layer even when block-once applies (`Estimate.trace_mode`)."""
    cfg = train_config(config, **train_options)       # input errors first: before the model file runs
    dev = resolve_device(device, capacity, alloc_conf)
    workload = load_workload(model, hf_config, task)
    t0 = time.perf_counter()
    try:
        tr = trace(workload, cfg, dev, on_phase=on_phase, full_trace=full_trace)
    except UserError as exc:
        if not fallback or not can_fall_back(exc):
            raise
        est = estimate_by_fallback(workload, cfg, dev, reason=str(exc), error=exc)
        return Analysis(est, device=dev, workload=workload, config=cfg)
    sim = simulate_allocator(tr, dev)
    est = estimate_from_trace(workload, cfg, dev, tr, time.perf_counter() - t0, sim=sim)
    return Analysis(est, tr, sim, dev, workload, cfg)


def analyze(model: str | Workload | None = None, **kwargs) -> Estimate:
    """Estimate the peak memory of one steady-state training step (see `run_analysis` for the arguments;
    `train_options` are TrainConfig fields: batch_size=..., precision=...). With `fallback=True` (the
    default, as in `memplan analyze`) an untraceable model is measured for real and extrapolated."""
    return run_analysis(model, **kwargs).estimate
