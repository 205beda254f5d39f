"""`plan(...)`: what to change so that a training job fits, every recommendation re-traced.

The order follows cost to the user, cheapest first:
1. allocator settings (a replay of the baseline trace per candidate; free at run time);
2. the optimizer implementation (same math);
3. the micro-batch (largest that fits, with gradient accumulation to keep or reach the global batch);
4. activation checkpointing, only when even micro-batch 1 does not fit (recompute costs time);
5. numerics changes (bf16 AMP, Adafactor, SGD), only when nothing above fits and `same_math_only` is off,
   applied one at a time in order of their traced saving.
A configuration is "fitting" when its device total (allocator reserved peak + memory outside the
allocator) is within the capacity less the margin. The plan's configuration is re-traced and its estimate
is what is reported; each single change is re-traced on its own to rank it (or, for models whose trace
has more than `FAST_TRACE_EVENTS` events, modelled from the baseline breakdown unless it is applied -- the
`method` of each change says which). When nothing fits, the plan says what would: sharding model states
over N devices (an approximate ZeRO-3 per-rank estimate) or a catalog device with more memory.

Known limitations: changes are combined greedily, not searched jointly; the ZeRO-3 figure divides
parameters, gradients and optimizer state by N and adds two gathered blocks, nothing more (no
communication buffers, no activation sharding).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

from memplan.alloc import load_catalog
from memplan.core import Estimate, load_workload, resolve_device, train_config
from memplan.errors import TraceError, UserError
from memplan.units import fmt_bytes
from memplan.plan import accum as _accum
from memplan.plan import batch as _batch
from memplan.plan import checkpoint as _ckpt
from memplan.plan import policy as _policy
from memplan.plan.evaluate import Evaluator
from memplan.plan.change import Change
from memplan.plan.snippet import plan_snippet
from memplan.step import frozen_heap
from memplan.workload import TrainConfig

FAST_TRACE_EVENTS = 12000   # above this, a trace takes several seconds: model what is not applied


@dataclass(frozen=True)
class Plan:
    workload: str
    device: str | None
    family: str
    capacity_bytes: int
    margin: float
    budget_bytes: int
    fits: bool
    config: TrainConfig                       # the recommended configuration (as traced)
    batch_size: int | None
    seq_len: int | None
    grad_accum_steps: int
    global_batch: int | None
    dp_size: int
    checkpoint: tuple[str, ...]
    env: dict
    predicted: Estimate | None                # the re-traced estimate of `config`
    baseline: Estimate
    changes: tuple[Change, ...]
    alloc_policy: _policy.AllocPolicy
    batch_search: _batch.SizeSearch | None = None
    seq_search: _batch.SizeSearch | None = None
    checkpointing: _ckpt.CheckpointPlan | None = None
    accumulation: _accum.Accumulation | None = None
    if_nothing_fits: dict | None = None
    snippet: str = ""
    notes: tuple[str, ...] = ()
    thorough: bool = True
    n_traces: int = 0
    trace_seconds: float = 0.0
    seconds: float = 0.0
    numerics_reason: str = ""                 # why the plan changes precision / optimizer ("" when it does not)
    trace_counts: dict | None = None          # traces by mode and allocator replays (Evaluator.counts)
    trace_log: tuple = ()                     # per trace: configuration, seconds, mode

    def to_dict(self) -> dict:
        def est(e):
            return None if e is None else e.to_dict()

        return {
            "workload": self.workload, "device": self.device, "family": self.family,
            "capacity_bytes": self.capacity_bytes, "margin": self.margin, "budget_bytes": self.budget_bytes,
            "fits": self.fits, "batch_size": self.batch_size, "seq_len": self.seq_len,
            "grad_accum_steps": self.grad_accum_steps, "global_batch": self.global_batch, "dp_size": self.dp_size,
            "checkpoint": list(self.checkpoint), "env": dict(self.env), "config": self.config.to_dict(),
            "predicted": est(self.predicted), "baseline": est(self.baseline),
            "changes": [c.to_dict() for c in self.changes],
            "alloc_policy": self.alloc_policy.to_dict(),
            "batch_search": self.batch_search.to_dict() if self.batch_search else None,
            "seq_len_search": self.seq_search.to_dict() if self.seq_search else None,
            "checkpointing": self.checkpointing.to_dict() if self.checkpointing else None,
            "accumulation": self.accumulation.to_dict() if self.accumulation else None,
            "if_nothing_fits": self.if_nothing_fits, "snippet": self.snippet, "notes": list(self.notes),
            "thorough": self.thorough, "n_traces": self.n_traces, "trace_seconds": round(self.trace_seconds, 2),
            "seconds": round(self.seconds, 2), "numerics_reason": self.numerics_reason,
            "trace_counts": self.trace_counts, "traces": list(self.trace_log),
        }


def _floor_bytes(ev: Evaluator, cfg: TrainConfig) -> int:
    """A lower bound no same-math change can go under: parameters + optimizer state + all gradients
    (allocated bytes) + the memory outside the allocator."""
    est = ev.estimate(cfg)
    tr = ev.trace(cfg)
    last = tr.steps
    grads = sum(r.nbytes for r in tr.storages if r.category == "gradients" and r.step == last)
    b = est.breakdown_at_peak
    alloc = b.get("parameters", 0) + b.get("optimizer_state", 0) + grads
    return int(alloc) + est.outside_allocator_bytes


def _same_states(ev: Evaluator, c: TrainConfig) -> TrainConfig:
    """A traced configuration with the same model states as `c` (same precision and optimizer), else `c`:
    parameters, gradients and optimizer state do not depend on batch, checkpointing or implementation."""
    for t in ev._traces:
        if t.precision == c.precision and t.optimizer == c.optimizer and t.grad_accum == c.grad_accum:
            return t
    return c


def plan(model=None, *, hf_config: str | None = None, task: str | None = None, config: TrainConfig | None = None,
         device=None, capacity=None, alloc_conf: str | None = None, margin: float = 0.05,
         target_global_batch: int | None = None, dp_size: int = 1, seq_len_search: bool = False,
         same_math_only: bool = False, thorough: bool | None = None, max_batch: int = 1 << 16,
         maximize_batch: bool = False, on_trace=None, **train_options) -> Plan:
    """Recommend batch size, accumulation, checkpointing, allocator and optimizer settings that fit.

    The global batch (micro-batch x accumulation x `dp_size`) is kept: `target_global_batch` when given,
    else the one of `config`; the micro-batch is the largest that fits and divides it. `maximize_batch`
    asks instead for the largest micro-batch that fits (the global batch then changes).

    `device`: a catalog name or a `DeviceTarget`; `capacity` overrides its memory (a plain capacity
    with no device plans for plain CPU accounting). `margin`: fraction of the capacity kept free.
    `thorough`: re-trace every single change and checkpointing alternative (default: when the baseline
    trace has at most FAST_TRACE_EVENTS events). `on_trace(label)` is called before each new trace.
    """
    t_start = time.perf_counter()
    cfg = train_config(config, **train_options)
    dev = resolve_device(device, capacity, alloc_conf)
    _check_inputs(dev, margin, dp_size, target_global_batch, maximize_batch, seq_len_search)
    workload = load_workload(model, hf_config, task)
    ev = Evaluator(workload, dev, int(dev.capacity_bytes * (1.0 - margin)), on_trace)
    with frozen_heap():   # the heap of torch and transformers is collected once for all the plan's traces
        return plan_on(ev, cfg, margin=margin, target_global_batch=target_global_batch, dp_size=dp_size,
                       seq_len_search=seq_len_search, same_math_only=same_math_only, thorough=thorough,
                       max_batch=max_batch, maximize_batch=maximize_batch, t_start=t_start)


def plan_on(ev: Evaluator, cfg: TrainConfig, *, margin: float = 0.0, target_global_batch: int | None = None,
            dp_size: int = 1, seq_len_search: bool = False, same_math_only: bool = False,
            thorough: bool | None = None, max_batch: int = 1 << 16, maximize_batch: bool = False,
            t_start: float | None = None) -> Plan:
    """The planner's steps for `cfg` on `ev` (its workload, device and budget; traces it already holds are
    reused). `plan()` and `preflight()` both come here."""
    # the global batch to keep (None: the largest micro-batch is wanted, or the sequence length is searched)
    keep = None if maximize_batch or seq_len_search else (
        target_global_batch or cfg.batch_size * cfg.grad_accum * dp_size)
    t_start = time.perf_counter() if t_start is None else t_start
    workload, dev, budget = ev.workload, ev.dev, ev.budget_bytes
    original_conf = dev.alloc_conf
    notes: list[str] = []

    base = ev.estimate(cfg)
    if thorough is None:
        thorough = base.n_events <= FAST_TRACE_EVENTS
    if not thorough:
        notes.append(f"fast mode (baseline trace: {base.n_events} events, {base.trace_seconds:.1f} s): single changes "
                     "not in the plan are modelled from the baseline breakdown, not re-traced (--thorough re-traces "
                     "them)")
    # 1. allocator settings, chosen on the baseline trace (the final choice is re-checked at the end)
    pol = _policy.choose_alloc_conf(ev, cfg)
    if pol.best is not None:
        ev.set_alloc_conf(pol.best)
    # 2. single changes, each against the baseline configuration
    singles, eight = _single_changes(ev, cfg, workload, thorough, notes)
    # 3-4. same math first: optimizer implementation, micro-batch, checkpointing; 5. numerics changes
    max_micro = max_batch if keep is None else min(max_batch, -(-keep // dp_size))  # no larger than needed
    search = _Search(ev, workload, cfg, budget, thorough, seq_len_search, max_micro, notes)
    found, cur, numerics_used = _search(search, singles, base, same_math_only)
    numerics_reason = _why_numerics(ev, cfg, budget) if numerics_used and found is not None else ""
    final, accumulation = _accumulate(search, found, keep, dp_size)
    # the allocator setting, re-chosen on the final trace
    pol = _final_alloc_policy(ev, final if final is not None else cur, original_conf, pol)
    predicted = _predicted(ev, final, accumulation, cfg)
    plan_fits = predicted is not None and predicted.device_total_bytes <= budget
    changes, env = _ranked_changes(search, pol, singles, eight, base, final, cur, numerics_used, accumulation,
                                   predicted, plan_fits)
    nothing = None if plan_fits else _what_would_fit(ev, base, cfg, budget, margin, dev, search.probe)
    k = accumulation.grad_accum_steps if accumulation else cfg.grad_accum
    result = Plan(
        workload=workload.name, device=dev.name, family=dev.family, capacity_bytes=dev.capacity_bytes,
        margin=margin, budget_bytes=budget, fits=plan_fits, config=final if final is not None else cur,
        batch_size=final.batch_size if final is not None else None,
        seq_len=final.seq_len if final is not None else cfg.seq_len, grad_accum_steps=k,
        global_batch=(final.batch_size * k * dp_size) if final is not None else None, dp_size=dp_size,
        checkpoint=tuple(final.checkpoint) if final is not None else (), env=env, predicted=predicted,
        baseline=base, changes=tuple(changes), alloc_policy=pol, batch_search=search.batch_search,
        seq_search=search.seq_search, checkpointing=search.ckpt_plan, accumulation=accumulation,
        if_nothing_fits=nothing, notes=tuple(notes), thorough=thorough, n_traces=ev.n_traces,
        trace_seconds=ev.trace_seconds, seconds=time.perf_counter() - t_start, numerics_reason=numerics_reason,
        trace_counts=ev.counts(), trace_log=tuple(ev.log),
    )
    return replace(result, snippet=plan_snippet(result))


def _check_inputs(dev, margin: float, dp_size: int, target_global_batch: int | None,
                  maximize_batch: bool = False, seq_len_search: bool = False) -> None:
    if maximize_batch and seq_len_search:
        raise UserError("--maximize-batch and --seq-len-search exclude each other: search one size at a time")
    if maximize_batch and target_global_batch is not None:
        raise UserError("--maximize-batch lets the global batch grow: it excludes --target-global-batch")
    if dev.capacity_bytes is None:
        raise UserError("plan needs a memory budget: give --device NAME or --capacity SIZE")
    if not 0.0 <= margin < 1.0:
        raise UserError(f"--margin must be a percentage in [0, 100), got {100 * margin:g}")
    if dp_size < 1:
        raise UserError(f"--dp-size must be >= 1, got {dp_size}")
    if target_global_batch is not None and target_global_batch < 1:
        raise UserError(f"--target-global-batch must be >= 1, got {target_global_batch}")


def _single_changes(ev: Evaluator, cfg: TrainConfig, workload, thorough: bool, notes: list[str]):
    """Each candidate change on its own against the baseline: (id -> (candidate, total, method)), and the
    analytic 8-bit Adam advice."""
    family = ev.dev.family
    cands, cnotes = _policy.candidates(cfg, family, workload)
    notes.extend(cnotes)
    singles: dict[str, tuple[_policy.Candidate, int | None, str]] = {}
    cur_est = ev.estimate(cfg)
    for c in cands:
        total, method = None, "trace"
        if thorough:
            try:
                total = ev.total(c.apply(cfg))
            except (TraceError, UserError) as exc:
                notes.append(f"{c.title}: could not be traced ({str(exc).splitlines()[0][:120]})")
                continue
        else:
            total, method = _model_change(cur_est, c, cfg, family), "model"
        singles[c.id] = (c, total, method)
    return singles, _policy.eight_bit_adam(cur_est, cfg, workload)


@dataclass
class _Search:
    """The size / checkpointing search of one plan, and what it found along the way."""

    ev: Evaluator
    workload: object
    cfg: TrainConfig
    budget: int
    thorough: bool
    seq_len_search: bool
    max_batch: int
    notes: list
    batch_search: _batch.SizeSearch | None = None
    seq_search: _batch.SizeSearch | None = None
    ckpt_plan: _ckpt.CheckpointPlan | None = None
    probe: object = None

    def lowest_impl(self, c: TrainConfig) -> TrainConfig:
        """When the peak is in `optimizer.step()`, the implementation with the least scratch (traced)."""
        ev, family = self.ev, self.ev.dev.family
        if self.workload.make_optimizer is not None or self.workload.train_step is not None:
            return c
        if ev.fits(c) or ev.estimate(c).peak_phase != "optimizer":
            return c
        best, best_total = c, ev.total(c)
        for impl in ("fused", "for-loop"):
            if impl == _policy.effective_impl(c, family) or (impl == "fused" and c.optimizer == "adafactor"):
                continue
            alt = c.with_(optimizer_impl=impl)
            try:
                t = ev.total(alt)
            except (TraceError, UserError):
                continue
            if t < best_total - _policy.MIN_GAIN_BYTES:
                best, best_total = alt, t
        return best

    def size_search(self, c: TrainConfig) -> TrainConfig | None:
        """The largest batch (or sequence) that fits `c`, or None."""
        if self.seq_len_search:
            self.seq_search = _batch.largest_fitting(self.ev, c, "seq_len", multiple=8, max_value=1 << 20)
            return c.with_(seq_len=self.seq_search.best) if self.seq_search.best else None
        self.batch_search = _batch.largest_fitting(self.ev, c, "batch_size", max_value=self.max_batch)
        return c.with_(batch_size=self.batch_search.best) if self.batch_search.best else None

    def try_config(self, c: TrainConfig) -> TrainConfig | None:
        """Largest size that fits `c`, with checkpointing when even the smallest does not."""
        if _floor_bytes(self.ev, _same_states(self.ev, c)) > self.budget:
            return None
        c = self.lowest_impl(c)
        got = self.size_search(c)
        if got is not None:
            return got
        small = c if self.seq_len_search else c.with_(batch_size=1)
        if self.probe is None:
            try:
                self.probe = _ckpt.probe_block_once(self.workload, small, self.ev.dev.family)
            except TraceError as exc:
                self.notes.append(f"activation checkpointing not planned: {exc}")
                return None
        self.ckpt_plan = _ckpt.plan_checkpointing(self.ev, small, verify_alternatives=self.thorough,
                                                  probe=self.probe)
        if not self.ckpt_plan.fits:
            return None
        if not self.thorough and not self.seq_len_search and self._no_room_for_two(small):
            return self.ckpt_plan.config
        return self.size_search(self.ckpt_plan.config)

    def _no_room_for_two(self, small: TrainConfig) -> bool:
        """Fast mode: a larger batch needs at least the per-sample part of what is not model state again."""
        e1 = self.ckpt_plan.estimate
        per_sample = (max(e1.peak_allocated_bytes - _floor_bytes(self.ev, self.ckpt_plan.config), 0)
                      // max(small.batch_size, 1))
        if self.budget - e1.device_total_bytes < per_sample // 2:
            self.notes.append("micro-batch 1 with checkpointing leaves too little room for a second sample; "
                              "larger batches were not traced (fast mode)")
            return True
        return False


def _search(s: _Search, singles: dict, base: Estimate, same_math_only: bool):
    """Same-math changes first; then numerics changes one at a time in order of their traced saving.
    Returns (the configuration found or None, the last configuration tried, the numerics changes used)."""
    cfg, cur = s.cfg, s.cfg
    found = s.try_config(cur)
    numerics_used: list[_policy.Candidate] = []
    if found is not None:
        return found, cur, numerics_used
    if same_math_only:
        s.notes.append("same-math changes only (numerics changes were not allowed)")
        return None, cur, numerics_used
    order = sorted((x for x in singles.values() if not x[0].same_math and x[1] is not None), key=lambda x: x[1])
    for cand, _total, _m in order:
        nxt = cand.apply(cur.with_(optimizer_impl=cfg.optimizer_impl))
        if (not s.thorough and cand.kind == "optimizer" and base.peak_phase == "optimizer"
                and s.workload.make_optimizer is None):
            # fast mode: the peak is in optimizer.step(), so take the least-scratch implementation now
            # rather than tracing the default first (the for-loop keeps ~2 of the largest parameter)
            nxt = nxt.with_(optimizer_impl="for-loop")
        if nxt.optimizer != cur.optimizer and any(u.kind == "optimizer" for u in numerics_used):
            continue  # one optimizer replacement at most
        cur = nxt
        numerics_used.append(cand)
        try:
            found = s.try_config(cur)
        except TraceError as exc:
            s.notes.append(f"{cand.title}: could not be traced ({str(exc).splitlines()[0][:120]})")
            found = None
        if found is not None:
            break
    return found, cur, numerics_used


def _accumulate(s: _Search, found: TrainConfig | None, target: int | None, dp_size: int):
    """Gradient accumulation for the global batch to keep (`target`; None: the largest micro-batch found
    is the plan, with the accumulation as given): (final config, Accumulation)."""
    cfg, ev = s.cfg, s.ev
    if found is None or s.seq_len_search:
        return found, None
    if target is None:
        return found.with_(grad_accum=min(cfg.grad_accum, 2)), None
    accumulation = _accum.accumulation(target, found.batch_size, dp_size)
    final = found.with_(batch_size=accumulation.micro_batch, grad_accum=min(accumulation.grad_accum_steps, 2))
    if accumulation.grad_accum_steps > 1 and not ev.fits(final):
        # gradients live through the next micro-step's forward: search again with accumulation
        s2 = _batch.largest_fitting(ev, found.with_(grad_accum=2), "batch_size", max_value=s.max_batch)
        if s2.best:
            s.batch_search = s2
            s.notes.append("micro-batch searched again with accumulation: gradients stay allocated "
                           "through the forward of micro-steps 2..K")
            accumulation = _accum.accumulation(target, s2.best, dp_size)
            final = found.with_(batch_size=accumulation.micro_batch,
                                grad_accum=min(accumulation.grad_accum_steps, 2))
    return final, accumulation


def _final_alloc_policy(ev: Evaluator, final_cfg: TrainConfig, original_conf, pol):
    """Re-choose the allocator setting on the final configuration's trace and put it in force."""
    ev.set_alloc_conf(original_conf)
    try:
        pol = _policy.choose_alloc_conf(ev, final_cfg)
    except TraceError:
        pass
    ev.set_alloc_conf(pol.best if pol.best is not None else original_conf)
    return pol


def _predicted(ev: Evaluator, final: TrainConfig | None, accumulation, cfg: TrainConfig) -> Estimate | None:
    """The re-traced estimate of the plan's configuration (traced with at most 2 micro-steps)."""
    if final is None:
        return None
    predicted = ev.estimate(final)
    k = accumulation.grad_accum_steps if accumulation else cfg.grad_accum
    if final.grad_accum != k:
        predicted = replace(predicted, config={**predicted.config, "grad_accum": k},
                            notes=list(predicted.notes) + [
                                f"traced with 2 micro-steps per optimizer step: micro-steps 2..{k} repeat "
                                "the same memory pattern"])
    return predicted


def _ranked_changes(s: _Search, pol, singles, eight, base: Estimate, final, cur, numerics_used, accumulation,
                    predicted, plan_fits: bool) -> tuple[list[Change], dict]:
    """Every change considered, applied ones first, by saving; and the environment the plan sets."""
    ev, cfg, budget, family = s.ev, s.cfg, s.budget, s.ev.dev.family
    base_total = base.device_total_bytes
    changes: list[Change] = []
    env = {}
    if pol.best is not None and pol.env_var:
        env[pol.env_var] = pol.best
        sim_total = ev.estimate(cfg, alloc_conf=pol.best).device_total_bytes
        changes.append(Change(f"alloc:{pol.best}", "allocator", f"{pol.env_var}={pol.best}", True, True, "replay",
                              sim_total, base_total - sim_total, sim_total <= budget, f"export {pol.env_var}={pol.best!r}",
                              "; ".join(pol.notes)))
    final_or_cur = final if final is not None else cur
    for cid, (c, total, method) in singles.items():
        was_applied = final is not None and (
            (c.kind == "optimizer-impl" and _policy.effective_impl(final_or_cur, family) == c.id.split(":")[1]
             and _policy.effective_impl(final_or_cur, family) != _policy.effective_impl(cfg, family))
            or c in numerics_used)
        changes.append(Change(cid, c.kind, c.title, c.same_math, bool(was_applied), method, total,
                              None if total is None else base_total - total,
                              None if total is None else total <= budget, c.code, c.note))
    if eight is not None:
        t = base_total - eight.saving_bytes
        changes.append(Change(eight.id, "optimizer", eight.title, False, False, "analytic", t, eight.saving_bytes,
                              t <= budget, eight.code, eight.note))
    if s.ckpt_plan is not None and s.ckpt_plan.chosen:
        changes.append(_checkpoint_change(ev, s.ckpt_plan, final is not None))
    if final is not None and (final.batch_size != cfg.batch_size or (accumulation and accumulation.grad_accum_steps > 1)):
        k = accumulation.grad_accum_steps if accumulation else cfg.grad_accum
        changes.append(Change("batch", "batch", f"micro-batch {final.batch_size}" + (f" x {k} accumulation steps" if k > 1 else ""),
                              True, True, "trace", predicted.device_total_bytes if predicted else None,
                              base_total - predicted.device_total_bytes if predicted else None, plan_fits,
                              f"micro_batch_size = {final.batch_size}\ngrad_accum_steps = {k}",
                              accumulation.note if accumulation else ""))
    changes.sort(key=lambda c: (not c.applied, c.kind == "batch", -(c.saving_bytes or 0)))
    return changes, env


def _why_numerics(ev: Evaluator, cfg: TrainConfig, budget: int) -> str:
    """Why no same-math configuration fits, in one sentence (the plan then changes the numerics)."""
    floor = _floor_bytes(ev, cfg)
    if floor > budget:
        return (f"nothing with the same math fits: parameters, gradients and optimizer state alone take "
                f"{fmt_bytes(floor)} of the {fmt_bytes(budget)} budget")
    return ("nothing with the same math fits: micro-batch 1 is over the budget and activation checkpointing "
            "does not bring it under")


def _checkpoint_change(ev: Evaluator, ckpt_plan, applied: bool) -> Change:
    ce = ckpt_plan.estimate
    return Change("checkpoint", "checkpoint", f"activation checkpointing of {len(ckpt_plan.chosen)} modules", True,
                  applied, "trace", ce.device_total_bytes if ce else None,
                  (ev.estimate(ckpt_plan.config.with_(checkpoint=())).device_total_bytes
                   - ce.device_total_bytes) if ce else None,
                  ckpt_plan.fits, _ckpt.snippet(ckpt_plan.chosen),
                  f"recompute {_chosen_pct(ckpt_plan):.1f} % of the step's FLOPs")


def _chosen_pct(cp) -> float:
    for s in cp.strategies:
        if s.name == "chosen":
            return s.recompute_pct
    return 0.0


def _model_change(est: Estimate, c, cfg: TrainConfig, family: str) -> int:
    """A single change's device total modelled from the baseline breakdown (fast mode only)."""
    b = est.breakdown_at_peak
    total = est.device_total_bytes
    ratio = total / max(est.peak_allocated_bytes, 1)
    state = b.get("optimizer_state", 0)
    params = b.get("parameters", 0)
    in_opt = est.peak_phase == "optimizer"
    saving = 0
    if c.id == "optimizer:adafactor":
        saving = state
    elif c.id == "optimizer:sgd":
        saving = state // 2
    elif c.kind == "optimizer-impl" and in_opt:
        temps = b.get("temporaries", 0)
        new = {"fused": 0, "foreach": params, "for-loop": 0}.get(c.id.split(":")[1], temps)
        saving = max(0, temps - new)
    elif c.id == "precision:bf16-amp" and not in_opt:
        saving = b.get("activations", 0) // 2
    return int(total - saving * ratio)


def _what_would_fit(ev: Evaluator, base: Estimate, cfg: TrainConfig, budget: int, margin: float, dev, probe) -> dict:
    """Sharding over N devices (approximate ZeRO-3 per rank) or a catalog device with more memory."""

    # the lowest configuration traced is the starting point
    best_cfg, best_total = cfg, base.device_total_bytes
    for c in list(ev._traces):
        try:
            t = ev.total(c)
        except TraceError:
            continue
        if t < best_total:
            best_cfg, best_total = c, t
    est = ev.estimate(best_cfg)
    tr = ev.trace(best_cfg)
    last = tr.steps
    grads = sum(r.nbytes for r in tr.storages if r.category == "gradients" and r.step == last)
    params = est.breakdown_at_peak.get("parameters", 0)
    state = est.breakdown_at_peak.get("optimizer_state", 0)
    states = params + grads + state
    ratio = est.device_total_bytes / max(est.peak_allocated_bytes, 1)
    rest = max(est.peak_allocated_bytes - params - state - min(grads, est.breakdown_at_peak.get("gradients", 0)), 0)
    gathered = 2 * _largest_block_params(ev, best_cfg, probe)
    shard = None
    for n in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        per_rank = int((states / n + rest + gathered) * ratio) + est.outside_allocator_bytes
        if per_rank <= budget:
            shard = {"devices": n, "per_rank_bytes": per_rank, "method": "approximate ZeRO-3",
                     "how": f"parameters, gradients and optimizer state ({states} B) divided over {n} ranks, "
                            f"activations and temporaries ({rest} B) unchanged, plus two gathered blocks "
                            f"({gathered} B); allocator overhead x{ratio:.2f} as traced",
                     "config": best_cfg.to_dict()}
            break
    bigger = []
    for d in load_catalog():
        if d.capacity_bytes * (1 - margin) >= best_total and d.capacity_bytes > (dev.capacity_bytes or 0):
            bigger.append({"device": d.name, "family": d.family, "capacity_bytes": d.capacity_bytes})
    bigger.sort(key=lambda d: (d["family"] != dev.family, d["capacity_bytes"]))
    return {"lowest_traced_total_bytes": best_total, "lowest_traced_config": best_cfg.to_dict(),
            "sharding": shard, "bigger_devices": bigger[:3],
            "note": "approximate: the sharding figure is a per-rank estimate, not a trace of a sharded step; "
                    "a bigger device is compared on this device's traced total"}


def _largest_block_params(ev: Evaluator, cfg: TrainConfig, probe) -> int:
    """Parameter bytes of the largest repeated block (what ZeRO-3 gathers at a time), else of the largest module."""
    est = ev.estimate(cfg)
    per_mod = {r["module"]: r["by_category"].get("parameters", 0) for r in est.modules}
    if probe is not None:
        g = _ckpt.module_graph(probe, {})
        blocks = _ckpt.find_blocks(g)
        if blocks:
            b0 = blocks[0]
            return sum(v for m, v in per_mod.items() if m == b0 or m.startswith(b0 + "."))
    return max(per_mod.values(), default=0)
