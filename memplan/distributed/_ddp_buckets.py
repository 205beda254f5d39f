"""Whether DDP's gradient buckets repeat layer by layer: the proof a DDP rank needs to be traced block-once
(memplan.trace.blocks writes N layers from traces of d, d+1 and d+2 layers, which holds only where one more
layer adds the same events wherever it is added).

DDP cuts its buckets once, at construction (`torch.distributed._compute_bucket_assignment_by_size`, the
C++ `compute_bucket_assignment_by_size` in torch/csrc/distributed/c10d/reducer.cpp; memplan declines the
rebuild at the second forward, memplan.distributed._wrap `_NoRebuild`): parameters in the order DDP lists
them, one open bucket per (dtype, device), a bucket closed as soon as its bytes reach the current size
limit, the limit then moving to the next one of the list (torch 2.13 without `find_unused_parameters`:
one limit, `sys.maxsize`, so one bucket per dtype; earlier: 1 MiB, then `bucket_cap_mb`), buckets
ordered by their first parameter. The assignment is recorded from torch's own call in the deepest
reduced trace (`recording`), replayed by `assign` (where the replay differs from torch's result, no proof)
and proven to repeat (`repeat_reason`) when:
- each dtype's parameters stay in one bucket at the full depth (its bytes then stay under the first
  limit: one bucket growing by the same bytes per layer, a record block-once sizes by its growth), or
- the state of the cut -- per dtype, the limit in use and the bytes still open -- is the same entering
  layers d and d+1 (d: block-once's base depth, the deepest reduced trace's less 2): the layers being
  identical, it is then the same entering every later layer and what follows the stack, at every depth
  from d on, and each layer from d on cuts the same buckets (the layers before d, in every trace, may
  differ: the small first bucket).
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Assignment:
    """One call: the parameters' names, bytes and bucket keys in DDP's order, the limits, the buckets."""

    names: tuple[str, ...]
    nbytes: tuple[int, ...]
    keys: tuple[str, ...]
    sparse: tuple[bool, ...]
    limits: tuple[int, ...]
    buckets: tuple[tuple[int, ...], ...]


@contextlib.contextmanager
def recording(model, calls: list):
    """Append to `calls` each bucket assignment torch computes for `model`'s parameters meanwhile."""
    import torch.distributed as dist

    names = {id(p): n for n, p in model.named_parameters()}
    orig = dist._compute_bucket_assignment_by_size

    def compute(params, limits, *rest, **kwargs):
        out = orig(params, limits, *rest, **kwargs)
        sparse = rest[0] if rest else kwargs.get("expect_sparse_gradient")
        buckets = out[0] if isinstance(out, tuple) else out
        calls.append(Assignment(tuple(names.get(id(p), "") for p in params),
                                tuple(p.numel() * p.element_size() for p in params),
                                tuple(f"{p.dtype}/{p.device}" for p in params),
                                tuple(bool(s) for s in (sparse or [False] * len(params))),
                                tuple(int(x) for x in limits), tuple(tuple(int(i) for i in b) for b in buckets)))
        return out

    dist._compute_bucket_assignment_by_size = compute
    try:
        yield
    finally:
        dist._compute_bucket_assignment_by_size = orig


def assign(nbytes, keys, limits) -> tuple[list[tuple[int, ...]], list[dict]]:
    """torch's assignment replayed: the buckets (ordered by first parameter) and, per parameter, the state
    of the cut before it ({key: (limit index, open bytes)})."""
    open_: dict[str, list[int]] = {}
    size: dict[str, int] = {}
    at: dict[str, int] = {}
    done, states = [], []
    for i, (nb, key) in enumerate(zip(nbytes, keys)):
        states.append({k: (at[k], size[k]) for k in at})
        at.setdefault(key, 0)
        open_.setdefault(key, []).append(i)
        size[key] = size.get(key, 0) + nb
        if size[key] >= limits[at[key]]:
            done.append(tuple(open_.pop(key)))
            size[key] = 0
            at[key] = min(at[key] + 1, len(limits) - 1)
    done.extend(tuple(b) for b in open_.values() if b)
    return sorted(done, key=min), states


def repeat_reason(a: Assignment, path: str, n_layers: int, first_uniform: int, one_bucket_only: bool = False) -> str:
    """"" when the buckets of the model with `n_layers` layers in `path` repeat layer by layer from the
    block-once base depth on (see the module docstring), from the assignment of the deepest reduced model
    (the base depth + 2 layers, the base past `first_uniform`); else why not. `one_bucket_only`: only the
    first case proves it (runs of layers, memplan.trace.block_runs, whose base depth is not one number)."""
    if any(a.sparse):
        return "distributed (DDP): a parameter with sparse gradients gets a bucket of its own (not proven)"
    buckets, states = assign(a.nbytes, a.keys, a.limits)
    if buckets != sorted(a.buckets, key=min):
        return "distributed (DDP): torch's bucket assignment is not the size-greedy one memplan checks"
    pat = re.compile(re.escape(path) + r"\.(\d+)\.")
    layer = [int(m.group(1)) if (m := pat.match(n)) else -1 for n in a.names]
    depth = max(layer) + 1
    starts = {}
    for i, k in enumerate(layer):
        starts.setdefault(k, i)
    if depth < first_uniform + (1 if one_bucket_only else 3) or any(k not in starts for k in range(depth)):
        return "distributed (DDP): the reduced model's parameters do not show the stack's layers"
    layer_bytes: dict[tuple[str, int], int] = {}
    total: dict[str, int] = {}
    for nb, key, k in zip(a.nbytes, a.keys, layer):
        total[key] = total.get(key, 0) + nb
        if k >= first_uniform:
            layer_bytes[key, k] = layer_bytes.get((key, k), 0) + nb
    per_layer: dict[str, int] = {}   # the most one layer adds (all the same over identical layers)
    for (key, _), nb in layer_bytes.items():
        per_layer[key] = max(per_layer.get(key, 0), nb)
    one_bucket = {key for key, t in total.items() if t + (n_layers - depth) * per_layer.get(key, 0) < a.limits[0]}
    cut = {k for k in per_layer if k not in one_bucket}
    if one_bucket_only and cut:
        return (f"distributed (DDP): the gradient buckets ({a.limits[-1] / 2 ** 20:g} MiB) are cut inside the "
                "stack, proven to repeat over identical layers only, not over runs of layers")
    s0, s1 = states[starts[depth - 2]], states[starts[depth - 1]]   # entering the base depth's next layers
    if any(s0.get(k, (0, 0)) != s1.get(k, (0, 0)) for k in cut):
        return (f"distributed (DDP): the gradient buckets ({a.limits[-1] / 2 ** 20:g} MiB) are cut at different "
                "places in different layers, so what one more layer adds depends on the depth")
    return ""
