"""The checkpointing choice as a covering knapsack over the module tree (memplan.plan.checkpoint).

`module_graph` builds the tree (networkx DiGraph: `child` edges to submodules, `next` edges between
siblings in execution order) with per-module saved bytes, I/O and FLOPs; `choose` picks an antichain that
minimises recompute FLOPs while the savings cover the need plus the largest recompute transient, solved
exactly by dynamic programming on the tree (`solve_tree_knapsack`, savings discretised in `RESOLUTION`
steps of the need, rounded down). Sources: Checkmate (Jain et al., MLSys 2020); PyTorch's
`torch/distributed/_tools/sac_ilp.py`.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memplan.plan.checkpoint_probe import ModuleProbe

if TYPE_CHECKING:   # networkx is imported where a graph is built: only `plan` needs it (import time)
    import networkx as nx

RESOLUTION = 128          # discretisation of the memory need in the knapsack
MAX_TRANSIENTS = 16       # distinct recompute-transient values tried


def _parent(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def module_graph(probe: ModuleProbe, own_saved: dict[str, int]) -> nx.DiGraph:
    """The module tree with per-module saved bytes, I/O, FLOPs, and sibling execution order."""
    import networkx as nx

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
    """c[k] = min_j a[k-j] + b[j] ("at least k units" arrays), with the argmin j (the first, on ties):
    one (K+1) x (K+1) table of a[k-j] + b[j], j > k masked with inf, reduced along j."""
    import numpy as np

    back, late = _shifts(len(a))
    v = a[back] + b
    v[late] = np.inf
    arg = np.argmin(v, axis=1)
    return v[np.arange(len(a)), arg], arg.astype(np.int64)


@functools.lru_cache(maxsize=4)
def _shifts(n: int):
    """For the min-plus table of arrays of length n: the index k-j (clipped at 0) and the mask j > k."""
    import numpy as np

    d = np.subtract.outer(np.arange(n), np.arange(n))
    return np.maximum(d, 0), d < 0


def solve_tree_knapsack(g: nx.DiGraph, items: dict[str, tuple[int, int]], need_bytes: int,
                        resolution: int = RESOLUTION) -> tuple[float, list[str]] | None:
    """Cheapest antichain of `items` (name -> (saving bytes, cost)) whose savings reach `need_bytes`.

    Savings are rounded down to `need_bytes / resolution` units. Returns (cost, names) or None when the
    need cannot be met.
    """
    import networkx as nx
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
        sel = selection(g, names)
        if best is None or (sel.cost_flops, sel.transient_bytes) < (best.cost_flops, best.transient_bytes):
            best = sel
    return best


def selection(g: nx.DiGraph, names) -> Selection:
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
