"""Data-dependent ops on fake tensors: ops whose output *shape* depends on tensor *values*.

Fake tensors have shapes but no values, so `nonzero`, boolean-mask indexing, `masked_select`,
`unique`, `bincount` and friends cannot be sized by FakeTensorMode (it raises
`DynamicOutputShapeException`). Sizes must be concrete for memory accounting, so memplan sizes them by
one of three rules, in this order, and says which in the trace's notes:

1. **exact** - the op's inputs have real values: small integer/bool tensors computed only from the
   batch's integer inputs (token ids, labels, masks), from factories (`arange`, `ones(dtype=bool)`),
   from constants, or from routing indices (rule 2). The recorder keeps a real "value shadow" of such
   tensors (at most `SHADOW_MAX_NUMEL` elements each) and runs the op for real on the shadows; the
   fake output gets the true shape and its own shadow.
2. **routing** - indices chosen from fake *float* values (`topk`, `argmax`, `max(dim)`, `sort` over
   router logits) have no values; memplan gives them values by a stated policy
   (`ROUTING_POLICY`): `"worst"` (default) makes every row pick the first k entries, i.e. every token
   goes to the same top-k experts - "all tokens to the busiest expert", the largest per-expert batch
   an eager MoE loop can see - except that the first ceil(E / k) rows touch every expert once, so
   every expert is used (gets gradients and optimizer state) as under any real router. Tokens routed
   in total (T x k) are unchanged, so the experts' saved activations are the same as for any routing;
   per-expert transients are an upper bound.
   `"balanced"` spreads rows round-robin over the entries (T x k / E tokens per expert, the
   expected load of a well-trained router).
3. **worst case** - a data-dependent op on values nobody knows (e.g. a mask computed from
   activations): every element is selected (`nonzero` -> numel rows, `masked_select` / boolean
   index -> numel, `unique` -> numel distinct values, `bincount` -> max(minlength, numel) bins).

Known limitations: rule 3 can overestimate a lot where a mask is sparse in practice (e.g. selecting
the few masked tokens of an MLM batch from activations); `repeat_interleave` with unknown tensor repeats
has no bound and still fails (memplan then falls back to measuring, `memplan.trace.fallback`).
"""
from __future__ import annotations

import contextlib
from typing import Callable

import torch
from torch.utils._python_dispatch import _disable_current_modes

from memplan.trace import packed
from memplan.workload import MOE_ROUTINGS

aten = torch.ops.aten

SHADOW_MAX_NUMEL = 1 << 22
"""Largest tensor (elements) that gets a real value shadow; bigger ones are sized by rule 3."""

ROUTING_POLICIES = MOE_ROUTINGS
ROUTING_POLICY = "worst"


@contextlib.contextmanager
def routing_policy(policy: str):
    """Temporarily set the routing policy (`"worst"` or `"balanced"`)."""
    global ROUTING_POLICY
    if policy not in ROUTING_POLICIES:
        raise ValueError(f"unknown routing policy {policy!r} (choose from {', '.join(ROUTING_POLICIES)})")
    prev, ROUTING_POLICY = ROUTING_POLICY, policy
    try:
        yield
    finally:
        ROUTING_POLICY = prev


# ---- rule 2: routing indices -----------------------------------------------------------------------

def _first_k(shape, dim: int, k: int, n: int) -> torch.Tensor:
    """Indices of shape `shape` whose entries along `dim` are 0..k-1 (worst) or round-robin (balanced)."""
    dim = dim % len(shape) if shape else 0
    moved = list(shape[:dim]) + list(shape[dim + 1:]) + [k]
    rows = 1
    for s in moved[:-1]:
        rows *= s
    spread = (torch.arange(rows).unsqueeze(1) * k + torch.arange(k).unsqueeze(0)) % max(n, 1)
    if ROUTING_POLICY == "balanced":
        idx = spread
    else:
        # the first ceil(n / k) rows touch every entry once (every expert gets gradients and
        # optimizer state, as under any real router), all the other rows pick entries 0..k-1
        idx = torch.arange(k).expand(rows, k).clone()
        first = min(rows, -(-n // k))
        idx[:first] = spread[:first]
    return idx.reshape(moved).movedim(-1, dim).contiguous()


def _topk(args, kwargs, out):
    x, k = args[0], args[1]
    dim = args[2] if len(args) > 2 else kwargs.get("dim", -1)
    n = x.shape[dim] if x.dim() else 1
    return 1, _first_k(tuple(out[1].shape), dim, k, n)


def _sort(args, kwargs, out):
    x = args[0]
    dim = kwargs.get("dim", args[1] if len(args) > 1 and isinstance(args[1], int) else -1)
    n = x.shape[dim] if x.dim() else 1
    idx_pos = 1 if isinstance(out, (tuple, list)) else None
    shape = tuple((out[1] if idx_pos else out).shape)
    if not shape:
        return idx_pos, torch.zeros((), dtype=torch.long)
    return idx_pos, torch.arange(n).reshape([n if d == dim % len(shape) else 1 for d in range(len(shape))]
                                            ).expand(shape).contiguous()


def _arg_reduce(args, kwargs, out):
    """argmax / max(dim) over router logits: top-1 routing, the policy of `_first_k` with k = 1 (a Switch
    router's argmax; all zeros would leave every other expert without tokens, gradients and optimizer
    state, below any real run). A reduction over all elements picks the first."""
    pos = 1 if isinstance(out, (tuple, list)) else None
    t = out[1] if pos else out
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is None or not x.dim() or not t.dim():
        return pos, torch.zeros(tuple(t.shape), dtype=torch.long)
    dim %= x.dim()
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    shape = tuple(t.shape) if keepdim else tuple(t.shape[:dim]) + (1,) + tuple(t.shape[dim:])
    idx = _first_k(shape, dim, 1, x.shape[dim])
    return pos, (idx if keepdim else idx.squeeze(dim))


ROUTING_OPS: dict = {
    aten.topk.default: _topk,
    aten.sort.default: _sort, aten.sort.stable: _sort,
    aten.argsort.default: _sort, aten.argsort.stable: _sort,
    aten.argmax.default: _arg_reduce, aten.argmin.default: _arg_reduce,
    aten.max.dim: _arg_reduce, aten.min.dim: _arg_reduce,
}
"""op -> fn(args, kwargs, fake out) -> (index of the indices output or None, real index values)."""


# ---- rule 3: worst case ----------------------------------------------------------------------------

class Sizer:
    """What a worst-case handler may ask of the recorder: a tensor's shadow, and recording a scratch
    tensor the real kernel allocates (e.g. the nonzero indices of a boolean index)."""

    def __init__(self, shadow: Callable, see: Callable, attach: Callable):
        self.shadow = shadow
        self.see = see
        self.attach = attach
        self.exact = True

    def count_true(self, mask: torch.Tensor, broadcast_numel: int | None = None) -> int:
        s = self.shadow(mask)
        total = broadcast_numel if broadcast_numel is not None else mask.numel()
        if s is None:
            self.exact = False
            return total
        with _disable_current_modes():
            n = int(s.count_nonzero())
        return n * (total // max(mask.numel(), 1))

    def real(self, fn, *args):
        """`fn(*args)` on real tensors (shadows), outside the fake mode."""
        with _disable_current_modes():
            return fn(*args)


def _long(shape, like: torch.Tensor) -> torch.Tensor:
    return torch.empty(shape, dtype=torch.long, device=like.device)


def _nonzero(sz: Sizer, args, kwargs):
    x = args[0]
    out = _long((sz.count_true(x), x.dim()), x)
    if not sz.exact and x.numel() <= SHADOW_MAX_NUMEL:
        # every element selected: the indices are known too (all of them, in order)
        sz.attach(out, sz.real(lambda: torch.ones(tuple(x.shape), dtype=torch.bool).nonzero()))
    return out


def _masked_select(sz: Sizer, args, kwargs):
    x, mask = args[0], args[1]
    shape = torch.broadcast_shapes(x.shape, mask.shape)
    numel = 1
    for s in shape:
        numel *= s
    return torch.empty((sz.count_true(mask, numel),), dtype=x.dtype, device=x.device)


def _index(sz: Sizer, args, kwargs):
    x, indices = args[0], list(args[1])
    new = []
    for idx in indices:
        if idx is not None and idx.dtype in (torch.bool, torch.uint8):
            n = sz.count_true(idx)
            nz = _long((n, idx.dim()), idx)
            sz.see(nz, "aten.nonzero")  # the real kernel turns the mask into indices first
            s = sz.shadow(idx)
            if s is not None:
                cols = sz.real(lambda m: m.nonzero().unbind(1), s)
                new.extend(_with_shadow(sz, c_fake, c) for c_fake, c in zip(nz.unbind(1), cols))
            else:
                new.extend(nz.unbind(1))
        else:
            new.append(idx)
    return aten.index.Tensor(x, new)


def _with_shadow(sz: Sizer, fake, real):
    sz.attach(fake, real)
    return fake


def _unique_like(x, n, inverse_shape, with_inverse, with_counts, dim=None):
    if dim is None:
        out = torch.empty((n,), dtype=x.dtype, device=x.device)
    else:
        shape = list(x.shape)
        shape[dim] = n
        out = torch.empty(shape, dtype=x.dtype, device=x.device)
    inv = _long(inverse_shape if with_inverse else (0,), x)
    cnt = _long((n,) if with_counts else (0,), x)
    return out, inv, cnt


def _unique2(sz: Sizer, args, kwargs):
    x = args[0]
    inv = args[2] if len(args) > 2 else kwargs.get("return_inverse", False)
    cnt = args[3] if len(args) > 3 else kwargs.get("return_counts", False)
    sz.exact = False
    return _unique_like(x, x.numel(), x.shape, inv, cnt)


def _unique(sz: Sizer, args, kwargs):
    x = args[0]
    inv = args[2] if len(args) > 2 else kwargs.get("return_inverse", False)
    sz.exact = False
    out, i, _ = _unique_like(x, x.numel(), x.shape, inv, False)
    return out, i


def _unique_dim(sz: Sizer, args, kwargs):
    x, dim = args[0], args[1]
    inv = args[3] if len(args) > 3 else kwargs.get("return_inverse", False)
    cnt = args[4] if len(args) > 4 else kwargs.get("return_counts", False)
    sz.exact = False
    return _unique_like(x, x.shape[dim], (x.shape[dim],), inv, cnt, dim)


def _unique_consecutive(sz: Sizer, args, kwargs):
    x = args[0]
    inv = args[1] if len(args) > 1 else kwargs.get("return_inverse", False)
    cnt = args[2] if len(args) > 2 else kwargs.get("return_counts", False)
    dim = args[3] if len(args) > 3 else kwargs.get("dim")
    sz.exact = False
    if dim is None:
        return _unique_like(x, x.numel(), x.shape, inv, cnt)
    return _unique_like(x, x.shape[dim], (x.shape[dim],), inv, cnt, dim)


def _unique_dim_consecutive(sz: Sizer, args, kwargs):
    x, dim = args[0], args[1]
    inv = args[2] if len(args) > 2 else kwargs.get("return_inverse", False)
    cnt = args[3] if len(args) > 3 else kwargs.get("return_counts", False)
    sz.exact = False
    return _unique_like(x, x.shape[dim], (x.shape[dim],), inv, cnt, dim)


def _bincount(sz: Sizer, args, kwargs):
    x = args[0]
    weights = args[1] if len(args) > 1 else kwargs.get("weights")
    minlength = args[2] if len(args) > 2 else kwargs.get("minlength", 0)
    sz.exact = False
    dtype = torch.long if weights is None else weights.dtype
    return torch.empty((max(minlength, x.numel()),), dtype=dtype, device=x.device)


def _equal(sz: Sizer, args, kwargs):
    sz.exact = False
    return False


def _ctc_loss(sz: Sizer, args, kwargs):
    """aten/src/ATen/native/LossCTC.cpp `ctc_loss_cpu_template`: log_alpha is (batch, T, 2 * max target
    length + 1); the longest target comes from the lengths' shadow (else the targets' width)."""
    log_probs, targets, target_lengths = args[0], args[1], args[3]
    s = sz.shadow(target_lengths)
    if s is None:
        sz.exact = False
        longest = targets.shape[-1] if targets.dim() == 2 else targets.numel()
    else:
        longest = sz.real(lambda t: int(t.max()) if t.numel() else 0, s)
    batch = log_probs.shape[1] if log_probs.dim() == 3 else 1
    nll = log_probs.new_empty((batch,) if log_probs.dim() == 3 else ())
    alpha = log_probs.new_empty((batch, log_probs.shape[0], 2 * longest + 1))
    return nll, alpha


WORST_CASE: dict = {
    aten._ctc_loss.Tensor: _ctc_loss,
    aten._pack_padded_sequence.default: packed.pack_padded_sequence,
    aten.nonzero.default: _nonzero,
    aten.masked_select.default: _masked_select,
    aten.index.Tensor: _index,
    aten._unique2.default: _unique2,
    aten._unique.default: _unique,
    aten.unique_dim.default: _unique_dim,
    aten.unique_consecutive.default: _unique_consecutive,
    aten.unique_dim_consecutive.default: _unique_dim_consecutive,
    aten.bincount.default: _bincount,
    aten.equal.default: _equal,
}
"""op -> fn(sizer, args, kwargs) -> fake output sized by rule 1 where the masks have shadows, else 3."""
