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

Known limitations: a module's saving is estimated from where its saved tensors were allocated, so a
saved tensor made in one module and saved by another is attributed to the first; the re-trace corrects
the choice but the alternatives are estimates unless re-traced. Modules with side effects in forward
(BatchNorm's running statistics) update them again when recomputed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import networkx as nx

from memplan.errors import TraceError, UserError
from memplan.workload import TrainConfig

RESOLUTION = 128          # discretisation of the memory need in the knapsack
MAX_TRANSIENTS = 16       # distinct recompute-transient values tried
MAX_ROUNDS = 3            # re-traces of the choice


# ---- what each module saves and costs ---------------------------------------------------------

@dataclass(frozen=True)
class ModuleProbe:
    """Per-module facts from one fake forward pass: structure, inputs/outputs, FLOPs."""

    root_class: str
    names: tuple[str, ...]                  # every module, named_modules() order ("" = the root)
    classes: dict                           # name -> class name
    order: dict                             # name -> position of its first call in forward (absent: never called)
    calls: dict                             # name -> number of calls in one forward
    in_bytes: dict                          # name -> bytes of tensor inputs (first call)
    out_bytes: dict                         # name -> bytes of tensor outputs (all calls)
    out_numel: dict
    flops: dict                             # name -> forward FLOPs of the subtree (all calls)
    forward_flops: int                      # the whole forward
    containers: dict                        # name -> "ModuleList" | "Sequential" | ... for containers


def _tensor_stats(obj) -> tuple[int, int]:
    import torch
    from torch.utils._pytree import tree_leaves

    seen, nbytes, numel = set(), 0, 0
    for t in tree_leaves(obj):
        if isinstance(t, torch.Tensor):
            try:
                st = t.untyped_storage()
                key, nb = st._cdata, st.nbytes()   # the StorageImpl: stable on every torch
            except Exception:
                key, nb = id(t), t.numel() * t.element_size()
            if key not in seen:
                seen.add(key)
                nbytes += nb
            numel += t.numel()
    return nbytes, numel


def probe_modules(workload, cfg: TrainConfig, family: str = "cpu") -> ModuleProbe:
    """Build the model and run one forward on fake tensors, recording per-module FLOPs and I/O sizes."""
    import warnings

    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
    from torch.utils.flop_counter import FlopCounterMode

    from memplan.step import NoHooks, Target, build, call_model, cast_batch

    class _Fake(FakeTensorMode):
        def __deepcopy__(self, memo):   # nn.Transformer deep-copies its layers: stay in this mode
            return self

    probe_cfg = cfg.with_(checkpoint=(), grad_accum=1)
    names: dict[int, str] = {}
    order: dict[str, int] = {}
    calls: dict[str, int] = {}
    in_b: dict[str, int] = {}
    out_b: dict[str, int] = {}
    out_n: dict[str, int] = {}

    def pre(mod, args, kwargs=None):
        n = names.get(id(mod))
        if n is None:
            return
        calls[n] = calls.get(n, 0) + 1
        if n not in order:
            order[n] = len(order)
            in_b[n] = _tensor_stats((args, kwargs))[0]

    def post(mod, args, out):
        n = names.get(id(mod))
        if n is None:
            return
        b, k = _tensor_stats(out)
        out_b[n] = out_b.get(n, 0) + b
        out_n[n] = out_n.get(n, 0) + k

    fake = _Fake(allow_non_fake_inputs=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore")
        with fake:
            model = build(workload, probe_cfg, NoHooks(), Target(family=family))
            names.update({id(m): n for n, m in model.named_modules()})
            batch = workload.batch(probe_cfg.batch_size, probe_cfg.seq_len)
            if isinstance(batch, list):
                batch = tuple(batch)
            if probe_cfg.precision == "bf16":
                batch = cast_batch(batch, torch.bfloat16)
            amp = {"fp16-amp": torch.float16, "bf16-amp": torch.bfloat16}.get(probe_cfg.precision)
            counter = FlopCounterMode(display=False, depth=None)
            h1 = register_module_forward_pre_hook(pre)
            h2 = register_module_forward_hook(post)
            try:
                with counter:
                    if amp is not None:
                        with torch.autocast(device_type="cpu", dtype=amp):
                            call_model(model, batch)
                    else:
                        call_model(model, batch)
            except Exception as exc:
                raise TraceError(f"the forward pass could not be run on fake tensors to count FLOPs: "
                                 f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
            finally:
                h1.remove()
                h2.remove()
    root_class = type(model).__name__
    flops: dict[str, int] = {}
    for key, per_op in counter.get_flop_counts().items():
        if key == "Global":
            continue
        name = "" if key == root_class else (key[len(root_class) + 1:] if key.startswith(root_class + ".") else None)
        if name is not None:
            flops[name] = int(sum(per_op.values()))
    total = int(sum(counter.get_flop_counts().get("Global", {}).values()))
    containers = {n: type(m).__name__ for n, m in model.named_modules()
                  if isinstance(m, (torch.nn.ModuleList, torch.nn.Sequential))}
    classes = {n: type(m).__name__ for n, m in model.named_modules()}
    all_names = tuple(n for n, _ in model.named_modules())
    del model, batch
    return ModuleProbe(root_class, all_names, classes, order, calls, in_b, out_b, out_n, flops, total, containers)


def saved_by_module(trace, root_class: str) -> dict[str, int]:
    """Bytes saved for backward in the steady-state step's first micro-step, by allocating module."""
    out: dict[str, int] = {}
    last = trace.steps
    for r in trace.storages:
        if r.category == "activations" and r.step == last and r.micro_step == 1:
            name = r.module or ""
            if name in (root_class, "<top>"):
                name = ""
            out[name] = out.get(name, 0) + r.nbytes
    return out


def _parent(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def module_graph(probe: ModuleProbe, own_saved: dict[str, int]) -> nx.DiGraph:
    """The module tree with per-module saved bytes, I/O, FLOPs, and sibling execution order."""
    g = nx.DiGraph()
    for n in probe.names:
        g.add_node(n, cls=probe.classes.get(n, ""), own_saved=0, saved=0,
                   in_bytes=probe.in_bytes.get(n, 0), out_bytes=probe.out_bytes.get(n, 0),
                   out_numel=probe.out_numel.get(n, 0), flops=probe.flops.get(n, 0),
                   calls=probe.calls.get(n, 0), order=probe.order.get(n))
    for n in probe.names:
        if n:
            g.add_edge(_parent(n), n, kind="child")
    for n, b in own_saved.items():
        if n not in g:           # saved by a name the structure does not know: count it at the root
            n = ""
        g.nodes[n]["own_saved"] += b
    for n in nx.dfs_postorder_nodes(g, ""):
        d = g.nodes[n]
        d["saved"] = d["own_saved"] + sum(g.nodes[c]["saved"] for c in _children(g, n))
        d["saving"] = max(0, d["saved"] - d["out_bytes"]) if n and d["calls"] else 0
        d["cost"] = max(d["flops"], d["out_numel"])
        kids = sorted((c for c in _children(g, n) if g.nodes[c]["order"] is not None),
                      key=lambda c: g.nodes[c]["order"])
        for a, b in zip(kids, kids[1:]):
            g.add_edge(a, b, kind="next")
    return g


def _children(g: nx.DiGraph, n: str):
    return [c for c in g.successors(n) if g.edges[n, c].get("kind") == "child"]


def find_blocks(g: nx.DiGraph) -> list[str]:
    """The repeated blocks: children of a ModuleList/Sequential, >= 2 of one class, saving the most."""
    best, best_saved = [], -1
    for n in g.nodes:
        kids = [c for c in _children(g, n) if g.nodes[c]["calls"]]
        if len(kids) < 2:
            continue
        by_cls: dict[str, list[str]] = {}
        for c in kids:
            by_cls.setdefault(g.nodes[c]["cls"], []).append(c)
        for cls, members in by_cls.items():
            if len(members) < 2 or len(members) < len(kids) / 2:
                continue
            saved = sum(g.nodes[c]["saved"] for c in members)
            if saved > best_saved:
                best, best_saved = members, saved
    return sorted(best, key=lambda c: g.nodes[c]["order"])


# ---- the knapsack ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Selection:
    names: tuple[str, ...]
    saving_bytes: int          # modelled: sum of savings
    transient_bytes: int       # modelled: the largest recompute transient
    cost_flops: int

    @property
    def net_bytes(self) -> int:
        return self.saving_bytes - self.transient_bytes


def _minplus(a, b):
    """c[k] = min_j a[k-j] + b[j] ("at least k units" arrays), with the argmin j."""
    import numpy as np

    K = len(a) - 1
    c = np.empty_like(a)
    arg = np.zeros(K + 1, dtype=np.int64)
    for k in range(K + 1):
        v = a[k::-1] + b[: k + 1]
        j = int(np.argmin(v))
        c[k], arg[k] = v[j], j
    return c, arg


def solve_tree_knapsack(g: nx.DiGraph, items: dict[str, tuple[int, int]], need_bytes: int,
                        resolution: int = RESOLUTION) -> tuple[float, list[str]] | None:
    """Cheapest antichain of `items` (name -> (saving bytes, cost)) whose savings reach `need_bytes`.

    Savings are rounded down to `need_bytes / resolution` units. Returns (cost, names) or None when the
    need cannot be met.
    """
    import numpy as np

    if need_bytes <= 0:
        return 0.0, []
    K = resolution
    unit = need_bytes / K
    w = {n: min(K, int(s // unit)) for n, (s, _c) in items.items()}
    w = {n: k for n, k in w.items() if k > 0}
    if not w:
        return None
    relevant: set[str] = set()
    for n in w:
        relevant.add(n)
        relevant.update(_ancestor_names(n))
    inf = float("inf")
    empty = np.full(K + 1, inf)
    empty[0] = 0.0
    table: dict[str, tuple] = {}
    tree = nx.DiGraph([(u, v) for u, v, k in g.edges(data="kind") if k == "child"])
    tree.add_nodes_from(g.nodes)
    for n in nx.dfs_postorder_nodes(tree, ""):
        if n not in relevant:
            continue
        acc = empty
        parts = []
        for c in tree.successors(n):
            if c in table:
                acc, arg = _minplus(acc, table[c][0])
                parts.append((c, arg))
        own = np.full(K + 1, inf)
        if n in w:
            own[: w[n] + 1] = items[n][1]
        take = own < acc
        table[n] = (np.minimum(acc, own), take, parts)
    if "" not in table or not math.isfinite(table[""][0][K]):
        return None

    chosen: list[str] = []

    def walk(n: str, k: int) -> None:
        _arr, take, parts = table[n]
        if k <= 0:
            return
        if take[k]:
            chosen.append(n)
            return
        for c, arg in reversed(parts):
            j = int(arg[k])
            walk(c, j)
            k -= j

    walk("", K)
    return float(table[""][0][K]), chosen


def _ancestor_names(n: str) -> list[str]:
    out = []
    while n:
        n = _parent(n)
        out.append(n)
    return out


def choose(g: nx.DiGraph, need_bytes: int, resolution: int = RESOLUTION) -> Selection | None:
    """Least-recompute set of modules whose modelled peak reduction (savings - transient) >= need."""
    items = {n: (d["saving"], d["cost"]) for n, d in g.nodes(data=True) if n and d["saving"] > 0}
    if not items:
        return None
    if need_bytes <= 0:
        return Selection((), 0, 0, 0)
    transients = sorted({g.nodes[n]["saved"] for n in items})
    if len(transients) > MAX_TRANSIENTS:
        idx = sorted({round(i * (len(transients) - 1) / (MAX_TRANSIENTS - 1)) for i in range(MAX_TRANSIENTS)})
        transients = [transients[i] for i in idx]
    best: Selection | None = None
    for m in transients:
        sub = {n: v for n, v in items.items() if g.nodes[n]["saved"] <= m}
        got = solve_tree_knapsack(g, sub, need_bytes + m, resolution)
        if got is None:
            continue
        cost, names = got
        sel = _selection(g, names)
        if best is None or (sel.cost_flops, sel.transient_bytes) < (best.cost_flops, best.transient_bytes):
            best = sel
    return best


def _selection(g: nx.DiGraph, names) -> Selection:
    names = sorted(names, key=lambda n: (g.nodes[n]["order"] if g.nodes[n]["order"] is not None else 1 << 30))
    return Selection(tuple(names), sum(g.nodes[n]["saving"] for n in names),
                     max((g.nodes[n]["saved"] for n in names), default=0),
                     sum(g.nodes[n]["cost"] for n in names))


def max_reduction(g: nx.DiGraph) -> Selection | None:
    """The set with the largest modelled net reduction (used when nothing reaches the need)."""
    lo, hi = 0, sum(d["saving"] for n, d in g.nodes(data=True) if n)
    best = None
    for _ in range(12):
        if hi - lo <= max(hi // 64, 1):
            break
        mid = (lo + hi) // 2
        sel = choose(g, mid)
        if sel is not None and sel.names:
            best, lo = sel, mid
        else:
            hi = mid
    return best


# ---- the plan for checkpointing ----------------------------------------------------------------

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
    sel = _selection(g, names)
    return est.device_total_bytes - sel.saving_bytes + sel.transient_bytes


def plan_checkpointing(ev, cfg: TrainConfig, *, every_k: int = 2, verify_alternatives: bool = True,
                       probe: ModuleProbe | None = None, relax: bool | None = None) -> CheckpointPlan:
    """Choose modules to checkpoint so that `cfg` fits `ev`'s budget at the least recompute cost.

    `relax`: when the re-traced choice fits with room to spare, solve again for less recompute and
    re-trace (default: with `verify_alternatives`)."""
    relax = verify_alternatives if relax is None else relax
    base = ev.estimate(cfg.with_(checkpoint=()))
    budget = ev.budget_bytes
    probe = probe or probe_modules(ev.workload, cfg, ev.dev.family)
    g = module_graph(probe, saved_by_module(ev.trace(cfg.with_(checkpoint=())), probe.root_class))
    blocks = tuple(find_blocks(g))
    step_flops = max(_step_flops(probe.forward_flops), 1)
    notes: list[str] = []

    def strategy(name, names, traced: bool) -> Strategy:
        names = tuple(names)
        sel = _selection(g, names)
        total, method = _modelled(base, g, names), "model"
        if not names:
            total, method = base.device_total_bytes, "trace"
        elif traced:
            try:
                total, method = ev.total(cfg.with_(checkpoint=names)), "trace"
            except TraceError as exc:
                notes.append(f"{name}: could not be traced ({str(exc).splitlines()[0][:100]})")
        return Strategy(name, names, total, method, sel.cost_flops, 100 * sel.cost_flops / step_flops,
                        total <= budget if total is not None else None)

    # what checkpointing cannot touch: the peak outside forward/backward
    ratio = base.device_total_bytes / max(base.peak_allocated_bytes, 1)
    floor = int(max([b for p, b in base.phase_peaks.items() if p not in ("forward", "backward")], default=0) * ratio)
    reason = ""
    need = base.device_total_bytes - budget
    chosen_sel: Selection | None = None
    est = None
    rounds = 0
    fits = base.device_total_bytes <= budget
    chosen: tuple[str, ...] = ()
    if fits:
        reason = "fits without checkpointing"
    elif floor > budget:
        reason = (f"the peak outside forward/backward ({base.peak_phase}) already exceeds the budget: "
                  "checkpointing cannot make it fit")
    else:
        best_fit: tuple | None = None       # (cost, names, estimate)
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
            c = cfg.with_(checkpoint=sel.names)
            try:
                e = ev.estimate(c)
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
            fits = True
        elif not reason:
            reason = "no set of modules reached the budget in the re-traced checkpointed step"
        if chosen_sel is not None:
            chosen = chosen_sel.names

    strategies = [strategy("none", (), False)]
    if blocks:
        strategies.append(strategy("every block", blocks, verify_alternatives))
        if every_k > 1 and len(blocks) >= 2 * every_k:
            strategies.append(strategy(_ordinal(every_k),
                                       blocks[::every_k], verify_alternatives))
    if chosen:
        sel = _selection(g, chosen)
        strategies.append(Strategy("chosen", chosen, est.device_total_bytes if est is not None else None,
                                   "trace", sel.cost_flops, 100 * sel.cost_flops / step_flops,
                                   est.device_total_bytes <= budget if est is not None else None))
    return CheckpointPlan(chosen, cfg.with_(checkpoint=chosen), est, fits, tuple(strategies), blocks,
                          probe.forward_flops, rounds, reason, tuple(notes))


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


def check_names(model, names) -> None:
    """Raise UserError if a chosen name is not a submodule of `model` (used by tests and the CLI)."""
    known = {n for n, _ in model.named_modules()}
    missing = [n for n in names if n not in known]
    if missing:
        raise UserError(f"not modules of this model: {', '.join(missing[:5])}")
