"""The planner's answer as one `Change`: what `memplan.preflight` offers when a job does not fit.

`top_change(ev, cfg)` runs the planner's own steps (`planner.plan_on`: allocator settings, optimizer
implementation, micro-batch with accumulation, checkpointing, then numerics changes) in its cheaper
form: fast mode (single changes outside the plan are modelled, not traced) and no micro-batch larger than
the one given, so a pre-flight check costs a few traces, not a full search. The configuration it
returns is the plan's, re-traced; when nothing fits on one device, the planner's "what would fit"
(sharding over N devices, or a device with more memory) is returned instead, marked as modelled.
"""
from __future__ import annotations

from dataclasses import fields

from memplan.plan.evaluate import Evaluator
from memplan.plan.change import Change
from memplan.plan.planner import Plan, plan_on
from memplan.units import fmt_bytes
from memplan.workload import TrainConfig


def top_change(ev: Evaluator, cfg: TrainConfig) -> Change | None:
    """The planner's recommendation for `cfg` within `ev`'s budget, as one Change (None: no advice)."""
    return plan_change(plan_on(ev, cfg, thorough=False, max_batch=max(cfg.batch_size, 1)), cfg)


def plan_change(p: Plan, cfg: TrainConfig) -> Change | None:
    """The changes a plan applies to `cfg`, combined into one Change with the plan's re-traced total; when
    the plan does not fit, what would (sharding or a bigger device), else None."""
    base_total = p.baseline.device_total_bytes
    if not p.fits or p.predicted is None:
        return _what_would_fit(p.if_nothing_fits or {}, base_total)
    applied = [c for c in p.changes if c.applied]
    edits = config_edits(cfg, p.config, p.grad_accum_steps)
    alloc = next(iter(p.env.values()), None)
    title = " + ".join(c.title for c in applied) or ", ".join(f"{k}={v!r}" for k, v in edits.items())
    kind = applied[0].kind if len(applied) == 1 else "plan"
    total = p.predicted.device_total_bytes
    return Change("plan" if kind == "plan" else applied[0].id, kind, title, all(c.same_math for c in applied),
                  True, "trace", total, base_total - total, True, p.snippet,
                  "; ".join(c.note for c in applied if c.note), config=edits, alloc_conf=alloc)


def config_edits(cfg: TrainConfig, new: TrainConfig, grad_accum: int) -> dict:
    """The TrainConfig fields that differ from `cfg` to `new`, with the plan's real accumulation steps (a
    plan traces at most 2 micro-steps)."""
    edits = {f.name: getattr(new, f.name) for f in fields(TrainConfig)
             if getattr(new, f.name) != getattr(cfg, f.name)}
    edits.pop("grad_accum", None)
    if grad_accum != cfg.grad_accum:
        edits["grad_accum"] = grad_accum
    return edits


def _what_would_fit(nothing: dict, base_total: int) -> Change | None:
    """The planner's "if nothing fits" as a Change, modelled (a sharded step is not traced on one process)."""
    shard = nothing.get("sharding")
    if shard:
        per_rank = shard["per_rank_bytes"]
        return Change("sharding", "sharding",
                      f"shard parameters, gradients and optimizer state over {shard['devices']} devices "
                      "(ZeRO-3 / FSDP)", True, False, "model", per_rank, base_total - per_rank, True,
                      note=f"{shard['method']}: {shard['how']}")
    bigger = nothing.get("bigger_devices") or []
    if bigger:
        lowest = nothing["lowest_traced_total_bytes"]
        names = ", ".join(f"{d['device']} ({fmt_bytes(d['capacity_bytes'])})" for d in bigger)
        return Change("device", "device", f"a device with more memory: {names}", True, False, "model", lowest,
                      base_total - lowest, True, note=nothing.get("note", ""))
    return None
