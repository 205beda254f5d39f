"""`preflight(...)`: memplan inside a training script (its companion `guard()` is memplan.report.guard).

    est = memplan.preflight(build_model, make_batch, optimizer="adamw", device="cuda", batch_size=8)

`preflight` traces one steady-state step on fake tensors (no real memory is touched) and returns the
`Estimate`; when the workload does not fit the device it raises `MemoryPlanError` carrying the estimate,
the breakdown at the peak and the recommended change. The change comes from the planner
(`memplan.plan.advice.top_change`: the planner's steps in fast mode, on the trace already taken), so it is
the same advice `memplan plan` gives, and its predicted peak is re-traced, not guessed.

Known limitations: sharding cannot be checked on one process: when nothing fits on one device the
suggestion (ZeRO-3 over N devices, or a bigger device) is the planner's model, and says so.
"""
from __future__ import annotations

import functools

from memplan.core import DeviceTarget, resolve_device
from memplan.errors import MemoryPlanError, TraceError, UserError
from memplan.plan.evaluate import Evaluator
from memplan.plan.advice import top_change
from memplan.plan.change import Change
from memplan.units import fmt_bytes
from memplan.validate.backends import detect_family
from memplan.workload import TrainConfig, Workload

_last_estimate = None   # the most recent preflight estimate, used by guard()


def last_estimate():
    """The Estimate of the latest `preflight` call in this process (None before any)."""
    return _last_estimate


# ---------------------------------------------------------------------------------------------------
def _optimizer_factory(optimizer, family: str):
    """A name stays a TrainConfig choice; an Optimizer instance or class becomes a factory of the same kind,
    with torch's own default implementation for the target family (foreach on cuda / npu)."""
    import inspect

    import torch

    if optimizer is None or isinstance(optimizer, str):
        return None
    # wrappers (accelerate's AcceleratedOptimizer, Lightning's) keep the real one in `.optimizer`
    while isinstance(getattr(optimizer, "optimizer", None), torch.optim.Optimizer):
        optimizer = optimizer.optimizer
    if isinstance(optimizer, torch.optim.Optimizer):
        cls, kw = type(optimizer), dict(optimizer.defaults)
    elif isinstance(optimizer, type) and issubclass(optimizer, torch.optim.Optimizer):
        cls, kw = optimizer, {}
    elif callable(optimizer):
        return optimizer
    else:
        raise UserError("optimizer must be a name (adamw, adam, sgd, adafactor), a torch.optim.Optimizer "
                        "(instance or class) or a function params -> optimizer")
    try:
        accepted = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        accepted = {}
    kw = {k: v for k, v in kw.items() if k in accepted}
    if family != "cpu" and "foreach" in accepted and kw.get("foreach") is None and not kw.get("fused"):
        kw["foreach"] = True   # what torch picks on a CUDA / privateuse1 (npu) device
    return lambda params: cls(params, **kw)


def _resolve(device, capacity, alloc_conf):
    if isinstance(device, DeviceTarget):
        return device
    if device is None or str(device).lower() == "auto":
        fam = detect_family()
        device = None if fam == "cpu" else fam
    return resolve_device(device, capacity, alloc_conf)


def preflight(model_or_builder, batch_fn, optimizer="adamw", *, device="auto", capacity=None,
              alloc_conf=None, loss_fn=None, train_step=None, config=None, check_advice: bool = True,
              **train_options):
    """Estimate one steady-state training step before running it; raise `MemoryPlanError` if it cannot fit.

    `model_or_builder`: an `nn.Module` (its structure is re-created on fake tensors) or a zero-argument
    function that builds one. `batch_fn(batch_size[, seq_len])` makes a batch of CPU tensors. `optimizer`:
    a name, an Optimizer (instance or class) or `params -> Optimizer`. `device`: "auto" (the accelerator
    present, else CPU accounting), cpu, cuda, npu or a catalog name (`memplan devices`). `capacity`
    overrides the device's memory. `train_options` are TrainConfig fields (batch_size=8, precision="bf16-amp",
    grad_accum=4, checkpoint=("layers.*",), ...). Returns the `Estimate`. On a misfit the error carries the
    planner's change (a few more traces; `check_advice=False`: no advice, no further trace).
    """
    global _last_estimate
    if not callable(batch_fn):
        raise UserError("preflight needs batch_fn(batch_size) -> batch (a function, not a batch)")
    dev = _resolve(device, capacity, alloc_conf)
    cfg = config or TrainConfig()
    if isinstance(optimizer, str):
        cfg = cfg.with_(optimizer=optimizer)
    if train_options:
        if "checkpoint" in train_options and isinstance(train_options["checkpoint"], (list, str)):
            ck = train_options["checkpoint"]
            train_options["checkpoint"] = (ck,) if isinstance(ck, str) else tuple(ck)
        unknown = set(train_options) - set(TrainConfig.__dataclass_fields__)
        if unknown:
            raise UserError(f"unknown training option(s) {', '.join(sorted(unknown))} "
                            f"(TrainConfig fields: {', '.join(TrainConfig.__dataclass_fields__)})")
        cfg = cfg.with_(**train_options)
    cfg.validate()
    import torch

    name = None
    if isinstance(model_or_builder, torch.nn.Module):
        name = type(model_or_builder).__name__
        model_or_builder = functools.partial(clone_on_cpu, model_or_builder)
    elif getattr(model_or_builder, "__name__", "") == "build_model":
        name = str(getattr(model_or_builder, "__module__", "model")).rsplit(".", 1)[-1]
    workload = Workload.from_callables(model_or_builder, batch_fn, loss_fn=loss_fn,
                                       optimizer=_optimizer_factory(optimizer, dev.family), train_step=train_step,
                                       name=name)
    ev = Evaluator(workload, dev, dev.capacity_bytes)
    est = ev.estimate(cfg)
    _last_estimate = est
    if est.fits is False:
        change, why = _planner_change(ev, cfg) if check_advice else (None, "")
        err = MemoryPlanError(misfit_message(est, change) + why, estimate=est,
                              advice=change.render() if change else None)
        err.breakdown = dict(est.breakdown_at_peak)
        err.change = change
        raise err
    return est


def _planner_change(ev: Evaluator, cfg: TrainConfig) -> tuple[Change | None, str]:
    """The planner's change, or None and why not (a configuration it needed could not be traced)."""
    try:
        return top_change(ev, cfg), ""
    except TraceError as exc:
        return None, f" No change was checked: the planner could not trace one ({str(exc).splitlines()[0][:160]})."


def clone_on_cpu(module, keep=()):
    """A copy of `module` whose parameters and buffers are new CPU tensors of the same shapes and dtypes,
    created in the current (fake) tensor mode. The module may live on an accelerator with real weights:
    nothing is copied from it. Objects in `keep` (e.g. a Lightning trainer) are shared, not copied."""
    import copy

    import torch

    memo = {id(o): o for o in keep}
    for t in list(module.parameters()) + list(module.buffers()):
        new = torch.empty(t.shape, dtype=t.dtype, device="cpu")
        if isinstance(t, torch.nn.Parameter):
            new = torch.nn.Parameter(new, requires_grad=t.requires_grad)
        memo[id(t)] = new
    return copy.deepcopy(module, memo)


def misfit_message(est, change: Change | None) -> str:
    over = est.device_total_bytes - (est.capacity_bytes or 0)
    where = est.device or "the device"
    need = f"needs {fmt_bytes(est.device_total_bytes)}"
    if est.outside_allocator_bytes:
        need += (f" ({fmt_bytes(est.peak_reserved_bytes)} reserved by the allocator + "
                 f"{fmt_bytes(est.outside_allocator_bytes)} outside it)")
    total = est.peak_allocated_bytes or 1
    parts = ", ".join(f"{k} {fmt_bytes(v)} ({100 * v / total:.0f} %)"
                      for k, v in sorted(est.breakdown_at_peak.items(), key=lambda kv: -kv[1]) if v)
    msg = (f"{est.workload} does not fit on {where}: {need} of {fmt_bytes(est.capacity_bytes)}, "
           f"{fmt_bytes(over)} over. Peak during {est.peak_phase} (step {est.peak_step}): {parts}.")
    if change is not None:
        msg += f" Top change: {change.render()}."
    return msg


__all__ = ["preflight", "last_estimate", "clone_on_cpu", "misfit_message"]
