"""Activation checkpointing: which modules to recompute, chosen at the least recompute cost that fits.

The model is a tree of modules (a networkx DiGraph: `child` edges from a module to its submodules,
`next` edges between siblings in execution order). Each module carries
- `saved`: bytes it saves for backward over one micro-step, from the trace (activations allocated inside
  its subtree, `activations_saved_bytes` per module, summed over the subtree);
- `in_bytes` / `out_bytes`: its inputs (what non-reentrant checkpointing keeps) and outputs;
- `flops`: its forward FLOPs, counted by `torch.utils.flop_counter.FlopCounterMode` on fake tensors
  (at least one per output element, so element-wise modules are not free): the recompute cost.

Checkpointing a module X frees what X saved except what is still saved outside it (its output, which
the next module usually saves): saving(X) = saved(X) - out_bytes(X). During backward X's activations
come back while it is recomputed, so the peak is about
    peak - sum(saving(X) for X chosen) + max(saved(X) for X chosen).
The choice is a covering knapsack over an antichain of the tree (checkpointing a module and one of its
submodules is pointless: only the outer one counts): minimise the recompute FLOPs subject to the
savings reaching the shortfall plus the largest recompute transient. It is solved exactly by dynamic
programming on the tree (savings discretised in `RESOLUTION` steps of the need, rounded down, so the
saving is never overestimated), once per value of the transient. The chosen set is then re-traced with
`TrainConfig.checkpoint` set to its exact names; if the trace disagrees with the model the need is
corrected by the difference and the choice solved again.

Sources: Chen et al. 2016 (sqrt(n) checkpointing, the "every k-th block" baseline); Checkmate (Jain et
al., MLSys 2020) and PyTorch's `torch/distributed/_tools/sac_ilp.py` (checkpointing as an optimisation
over memory and recompute cost).

The module probe is memplan.plan.checkpoint_probe, the knapsack memplan.plan.knapsack; this module is
the plan loop (choose, re-trace, correct) and the snippet users paste.

Known limitations: a module's saving is estimated from where its saved tensors were allocated, so a
saved tensor made in one module and saved by another is attributed to the first; the re-trace corrects
the choice but the alternatives are estimates unless re-traced. Modules with side effects in forward
(BatchNorm's running statistics) update them again when recomputed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memplan.errors import TraceError
from memplan.plan.checkpoint_probe import ModuleProbe, saved_by_module
from memplan.plan.knapsack import Selection, choose, find_blocks, max_reduction, module_graph, selection
from memplan.plan.probe_once import probe_block_once
from memplan.trace.blocks import hf_stack
from memplan.workload import TrainConfig

if TYPE_CHECKING:
    import networkx as nx

MAX_ROUNDS = 3            # re-traces of the choice
# the traced / modelled saving of checkpointing every block scales the need at most this far: with every
# block checkpointed another peak (logits, the optimizer) can cap the saving, which then says less about
# the few blocks a plan needs (scaled fully, Llama-2-7B on a 910B got 21 checkpointed layers where 12 fit)
MIN_CALIBRATION = 0.75


@dataclass(frozen=True)
class Strategy:
    name: str                     # none | every block | every k-th block | chosen
    modules: tuple[str, ...]
    predicted_total_bytes: int | None
    method: str                   # trace | model
    recompute_flops: int
    recompute_pct: float          # recompute FLOPs / (forward + backward FLOPs, taken as 3x forward)
    fits: bool | None

    def to_dict(self) -> dict:
        return {"name": self.name, "modules": list(self.modules), "n_modules": len(self.modules),
                "predicted_total_bytes": self.predicted_total_bytes, "method": self.method,
                "recompute_flops": self.recompute_flops, "recompute_pct": round(self.recompute_pct, 2),
                "fits": self.fits}


@dataclass(frozen=True)
class CheckpointPlan:
    chosen: tuple[str, ...]
    config: TrainConfig
    estimate: object               # re-traced Estimate of `config`, or None
    fits: bool
    strategies: tuple[Strategy, ...]
    blocks: tuple[str, ...]
    forward_flops: int
    rounds: int
    reason: str = ""
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        return {"chosen": list(self.chosen), "fits": self.fits, "blocks": list(self.blocks),
                "forward_flops": self.forward_flops, "rounds": self.rounds, "reason": self.reason,
                "predicted_total_bytes": None if self.estimate is None else self.estimate.device_total_bytes,
                "strategies": [s.to_dict() for s in self.strategies], "notes": list(self.notes)}


def _ordinal(k: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(k % 10 if k % 100 not in (11, 12, 13) else 0, "th")
    return f"every {k}{suffix} block"


def _step_flops(forward_flops: int) -> int:
    return 3 * forward_flops      # backward ~ 2x forward (Kaplan et al. 2020; Korthikanti et al. 2022)


def _modelled(est, g: nx.DiGraph, names) -> int:
    sel = selection(g, names)
    return est.device_total_bytes - sel.saving_bytes + sel.transient_bytes


def plan_checkpointing(ev, cfg: TrainConfig, *, every_k: int = 2, verify_alternatives: bool = True,
                       probe: ModuleProbe | None = None, relax: bool | None = None) -> CheckpointPlan:
    """Choose modules to checkpoint so that `cfg` fits `ev`'s budget at the least recompute cost.

    `relax`: when the re-traced choice fits with room to spare, solve again for less recompute and
    re-trace (default: with `verify_alternatives`)."""
    relax = verify_alternatives if relax is None else relax
    base = ev.estimate(cfg.with_(checkpoint=()))
    budget = ev.budget_bytes
    probe = probe or probe_block_once(ev.workload, cfg, ev.dev.family)
    g = module_graph(probe, saved_by_module(ev.trace(cfg.with_(checkpoint=())), probe.root_class))
    blocks = tuple(find_blocks(g))
    notes: list[str] = []
    # what checkpointing cannot touch: the peak outside forward/backward
    ratio = base.device_total_bytes / max(base.peak_allocated_bytes, 1)
    floor = int(max([b for p, b in base.phase_peaks.items() if p not in ("forward", "backward")], default=0) * ratio)
    chosen_sel, est, rounds, reason = None, None, 0, ""
    fits = base.device_total_bytes <= budget
    if fits:
        reason = "fits without checkpointing"
    elif floor > budget:
        reason = (f"the peak outside forward/backward ({base.peak_phase}) already exceeds the budget: "
                  "checkpointing cannot make it fit")
    else:
        need = _calibrated_need(ev, cfg, g, blocks, base, verify_alternatives, notes)
        chosen_sel, est, rounds, fits, reason = _choose_and_retrace(ev, cfg, g, need, relax, notes)
    chosen: tuple[str, ...] = chosen_sel.names if chosen_sel is not None else ()
    alt = _Alternatives(ev, cfg, g, base, max(_step_flops(probe.forward_flops), 1), notes)
    strategies = [alt.strategy("none", (), False)]
    if blocks:
        strategies.append(alt.strategy("every block", blocks, verify_alternatives))
        if every_k > 1 and len(blocks) >= 2 * every_k:
            strategies.append(alt.strategy(_ordinal(every_k), blocks[::every_k], verify_alternatives))
    if chosen:
        sel = selection(g, chosen)
        strategies.append(Strategy("chosen", chosen, est.device_total_bytes if est is not None else None,
                                   "trace", sel.cost_flops, 100 * sel.cost_flops / alt.step_flops,
                                   est.device_total_bytes <= budget if est is not None else None))
    return CheckpointPlan(chosen, cfg.with_(checkpoint=chosen), est, fits, tuple(strategies), blocks,
                          probe.forward_flops, rounds, reason, tuple(notes))


def _block_once(workload, cfg: TrainConfig) -> bool:
    """Whether `cfg` is traced block-once (memplan.trace.blocks): a cheap trace."""
    return hf_stack(workload, cfg)[0] is not None


def _calibrated_need(ev, cfg: TrainConfig, g, blocks, base, traced_anyway: bool, notes: list) -> int:
    """The reduction to reach, in the knapsack's modelled bytes: the shortfall, divided by the ratio of the
    traced to the modelled saving of checkpointing every block (kept within MIN_CALIBRATION..1/that) when
    that trace is taken anyway (thorough mode) or cheap (block-once applies to it), so that the first
    re-traced choice is more likely to fit."""
    need = base.device_total_bytes - ev.budget_bytes
    if not blocks:
        return need
    every = cfg.with_(checkpoint=blocks)
    if not (traced_anyway or ev.traced(every) or _block_once(ev.workload, every)):
        return need
    try:
        actual = base.device_total_bytes - ev.total(every)
    except TraceError:
        return need
    modelled = selection(g, blocks).net_bytes
    if modelled <= 0 or actual <= 0:
        return need
    ratio = min(max(actual / modelled, MIN_CALIBRATION), 1 / MIN_CALIBRATION)
    if abs(ratio - 1) < 0.01:
        return need
    notes.append(f"modelled savings scaled by {ratio:.3f}: checkpointing every block saves "
                 f"{actual} B in its trace, {modelled} B in the model (scale kept within "
                 f"{MIN_CALIBRATION}..{1 / MIN_CALIBRATION:.2f})")
    return int(need / ratio)


def _choose_and_retrace(ev, cfg: TrainConfig, g, need: int, relax: bool, notes: list):
    """Solve the knapsack for `need`, re-trace the choice, correct the need by what the trace says, at
    most MAX_ROUNDS times. Returns (selection, its estimate, rounds, fits, reason)."""
    budget = ev.budget_bytes
    chosen_sel: Selection | None = None
    est, rounds, reason = None, 0, ""
    best_fit: tuple | None = None       # (cost, selection, estimate)
    tried: set[tuple] = set()
    while rounds < MAX_ROUNDS:
        sel = choose(g, need)
        if sel is None or not sel.names:
            sel = max_reduction(g)
            if sel is None:
                reason = "no module saves activations that checkpointing could drop"
                break
            notes.append("even the largest modelled reduction falls short; re-tracing it anyway")
        if sel.names in tried:
            break
        tried.add(sel.names)
        rounds += 1
        try:
            e = ev.estimate(cfg.with_(checkpoint=sel.names))
        except TraceError as exc:
            reason = f"the checkpointed model could not be traced: {str(exc).splitlines()[0][:160]}"
            break
        if e.device_total_bytes <= budget:
            if best_fit is None or sel.cost_flops < best_fit[0]:
                best_fit = (sel.cost_flops, sel, e)
            slack = budget - e.device_total_bytes
            if slack < 0.02 * budget or sel.cost_flops == 0 or not relax:
                break
            need = need - slack // 2          # relax: there is room for less recompute
        else:
            need = need + (e.device_total_bytes - budget) + max(budget // 200, 1)
        chosen_sel, est = sel, e
    if best_fit is not None:
        _c, chosen_sel, est = best_fit
        return chosen_sel, est, rounds, True, reason
    if not reason:
        reason = "no set of modules reached the budget in the re-traced checkpointed step"
    return chosen_sel, est, rounds, False, reason


class _Alternatives:
    """Baseline strategies (none, every block, every k-th block), modelled or re-traced."""

    def __init__(self, ev, cfg: TrainConfig, g, base, step_flops: int, notes: list):
        self.ev, self.cfg, self.g, self.base, self.step_flops, self.notes = ev, cfg, g, base, step_flops, notes

    def strategy(self, name, names, traced: bool) -> Strategy:
        names = tuple(names)
        sel = selection(self.g, names)
        total, method = _modelled(self.base, self.g, names), "model"
        if not names:
            total, method = self.base.device_total_bytes, "trace"
        elif traced or self.ev.traced(self.cfg.with_(checkpoint=names)):
            try:
                total, method = self.ev.total(self.cfg.with_(checkpoint=names)), "trace"
            except TraceError as exc:
                self.notes.append(f"{name}: could not be traced ({str(exc).splitlines()[0][:100]})")
        return Strategy(name, names, total, method, sel.cost_flops, 100 * sel.cost_flops / self.step_flops,
                        total <= self.ev.budget_bytes if total is not None else None)


# ---- what the user pastes -----------------------------------------------------------------------

def snippet(names, blocks=()) -> str:
    """Code that applies non-reentrant checkpointing to exactly `names` (module names of the model)."""
    names = list(names)
    if not names:
        return ""
    listing = "\n".join(f"    {n!r}," for n in names)
    return (
        "import functools\n"
        "import torch.utils.checkpoint as ckpt\n\n"
        "def checkpoint_modules(model, names):\n"
        "    \"\"\"Non-reentrant activation checkpointing of the named submodules (chosen by memplan plan).\"\"\"\n"
        "    for name in names:\n"
        "        module = model.get_submodule(name)\n"
        "        module.forward = functools.partial(ckpt.checkpoint, module.forward, use_reentrant=False)\n\n"
        f"checkpoint_modules(model, [\n{listing}\n])\n"
    )


