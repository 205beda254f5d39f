"""`preflight(...)`: memplan inside a training script (its companion `guard()` is memplan.report.guard).

    est = memplan.preflight(build_model, make_batch, optimizer="adamw", device="cuda", batch_size=8)

`preflight` traces one steady-state step on fake tensors (no real memory is touched) and returns the
`Estimate`; when the workload does not fit the device it raises `MemoryPlanError` carrying the estimate,
the breakdown at the peak and the top recommended change. Every suggested change is re-traced before it
is offered (at most `MAX_CHECKED` of them), so its predicted peak is stated, not guessed.


Known limitations: the recommended change is a rule on the breakdown (largest category first), checked by
re-tracing; the planner (`memplan plan`) searches the space properly. Sharding advice cannot be checked on
one process and is offered as text only.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field, replace

from memplan.core import DeviceTarget, analyze, resolve_device
from memplan.errors import MemoryPlanError, UserError
from memplan.units import fmt_bytes
from memplan.validate.backends import detect_family
from memplan.workload import TrainConfig, Workload

MAX_CHECKED = 3
_last_estimate = None   # the most recent preflight estimate, used by guard()


@dataclass(frozen=True)
class Change:
    """One recommended change: what to do, the TrainConfig / env edits that express it, and its check."""

    text: str
    config: dict = field(default_factory=dict)
    alloc_conf: str | None = None
    saving_bytes: int = 0                       # rough, for ordering only
    predicted_total_bytes: int | None = None    # after re-tracing
    fits: bool | None = None

    def render(self) -> str:
        if self.predicted_total_bytes is None:
            return self.text
        verdict = "fits" if self.fits else "still does not fit"
        return f"{self.text} -> predicted {fmt_bytes(self.predicted_total_bytes)} ({verdict}, re-traced)"


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
    grad_accum=4, checkpoint=("layers.*",), ...). Returns the `Estimate`.
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
    est = analyze(workload, config=cfg, device=dev, fallback=False)
    _last_estimate = est
    if est.fits is False:
        change = top_change(est, cfg, workload, dev, check=check_advice)
        err = MemoryPlanError(misfit_message(est, change), estimate=est,
                              advice=change.render() if change else None)
        err.breakdown = dict(est.breakdown_at_peak)
        err.change = change
        raise err
    return est


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


# ---------------------------------------------------------------------------------------------------
def _block_glob(modules: list) -> str | None:
    """The repeated-block glob (e.g. 'model.layers.*') with the most distinct indices among module names."""
    seen: dict[str, set] = {}
    for row in modules:
        name = row.get("module") or ""
        for m in re.finditer(r"(?:^|\.)(\d+)(?=\.|$)", name):
            prefix = name[:m.start(1)]
            seen.setdefault(prefix, set()).add(m.group(1))
            break
    best = max(seen.items(), key=lambda kv: (len(kv[1]), -len(kv[0])), default=None)
    if best is None or len(best[1]) < 2:
        return None
    return best[0] + "*"


def candidates(est, cfg) -> list[Change]:
    """Changes worth trying, largest expected saving first (rough numbers, for ordering)."""
    b = est.breakdown_at_peak
    act = b.get("activations", 0) + b.get("temporaries", 0) + b.get("inputs", 0)
    state = b.get("parameters", 0) + b.get("gradients", 0) + b.get("optimizer_state", 0)
    over = max(est.device_total_bytes - (est.capacity_bytes or 0), 0)
    out: list[Change] = []
    if est.capacity_bytes is not None and est.outside_allocator_bytes >= est.capacity_bytes:
        return [Change(f"a device with more memory: the runtime alone holds {fmt_bytes(est.outside_allocator_bytes)} "
                       f"outside the allocator, more than the {fmt_bytes(est.capacity_bytes)} capacity")]
    B, K = cfg.batch_size, cfg.grad_accum
    if B > 1 and act > 0:
        keep = max(act - over, 0) / act
        nb = max(1, min(B - 1, int(B * keep * 0.9)))   # a 10 % margin: activations are not exactly linear
        k2 = math.ceil(B * K / nb)
        out.append(Change(f"micro-batch {B} -> {nb} with grad accumulation {K} -> {k2} (global batch "
                          f"{B * K} -> {nb * k2})", {"batch_size": nb, "grad_accum": k2},
                          saving_bytes=int(act * (1 - nb / B))))
    glob = _block_glob(est.modules)
    if glob and not cfg.checkpoint and b.get("activations", 0) > 0:
        out.append(Change(f"activation checkpointing of {glob!r} (HF: model.gradient_checkpointing_enable())",
                          {"checkpoint": (glob,)}, saving_bytes=int(b.get("activations", 0) * 0.7)))
    if cfg.precision == "fp32" and state > 0:
        out.append(Change("train in bf16 (halves parameters, gradients and optimizer state)",
                          {"precision": "bf16"}, saving_bytes=state // 2))
    if est.peak_phase == "optimizer" and cfg.optimizer_impl != "fused" and b.get("temporaries", 0) > 0:
        out.append(Change("use the fused optimizer (optimizer_impl='fused': no per-step scratch copies)",
                          {"optimizer_impl": "fused"}, saving_bytes=b.get("temporaries", 0)))
    frag = getattr(est, "fragmentation_bytes", 0) or 0
    if frag > 0 and est.device and "expandable_segments:true" not in (str(est.notes) + "").lower():
        var = "PYTORCH_NPU_ALLOC_CONF" if any(s in str(est.device).lower() for s in ("910", "ascend", "npu")) \
            else "PYTORCH_CUDA_ALLOC_CONF"
        out.append(Change(f"set {var}=expandable_segments:True (the cache holds {fmt_bytes(frag)} "
                          "it cannot reuse at the peak)", {}, alloc_conf="expandable_segments:True",
                          saving_bytes=frag))
    if b.get("optimizer_state", 0) >= max(act, 1):
        out.append(Change("shard the optimizer state across ranks (ZeRO-1 / FSDP) or use a lighter optimizer "
                          "(Adafactor, 8-bit Adam)", {}, saving_bytes=b.get("optimizer_state", 0) // 2))
    out.sort(key=lambda c: -c.saving_bytes)
    return out


def top_change(est, cfg, workload=None, dev=None, *, check: bool = True) -> Change | None:
    """The first candidate that fits once re-traced (or the best one checked, or the first unchecked)."""
    cands = candidates(est, cfg)
    if not cands:
        return None
    if not check or workload is None or dev is None:
        return cands[0]
    checked = []
    for c in cands:
        if len(checked) >= MAX_CHECKED:
            break
        if not c.config and c.alloc_conf is None:
            continue   # text-only advice (sharding): nothing to re-trace on one process
        try:
            d2 = replace(dev, alloc_conf=c.alloc_conf) if c.alloc_conf else dev
            e2 = analyze(workload, config=cfg.with_(**c.config), device=d2, fallback=False)
        except UserError:
            continue
        c = replace(c, predicted_total_bytes=e2.device_total_bytes, fits=e2.fits)
        if e2.fits:
            return c
        checked.append(c)
    if checked:
        return min(checked, key=lambda c: c.predicted_total_bytes)
    return cands[0]


#


__all__ = ["preflight", "Change", "candidates", "top_change", "last_estimate", "clone_on_cpu"]
