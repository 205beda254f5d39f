"""The gradient node autograd gives a view after an in-place op on it, as a real run has it.

After an in-place op on a view (`q /= 2` on a linear's 3-d output, `x[:, 0] *= 2`), autograd rebuilds
the view's gradient node the next time the view is used (torch/csrc/autograd/variable.cpp,
`VariableHooks::grad_fn`). For a plain strided tensor it is `AsStridedBackward0`, whose
`as_strided_backward` (tools/autograd/FunctionsManual.cpp) scatters the view's gradient into a new
zero-filled storage covering the base, `grad.new_zeros(base_size)`, and hands the base's `CopySlices` a
base-shaped view of it. A fake tensor is a tensor subclass (Python dispatch), for which autograd records
the view ops instead and rebuilds the node by replaying them (`ViewBackward0`, `TransposeBackward0`, ...):
views of the gradient, no storage. Here the replayed node that feeds the base's `CopySlices` gets a hook
that returns what `as_strided_backward` returns, so that storage is allocated and lives as in the real
run. Not modelled: bases whose own geometry overlaps (an expanded base: `as_strided_backward`'s index
counts) and other views of the same base used after the in-place op (rebuilt the same way for real).
"""
from __future__ import annotations

import torch

_MAX_HOPS = 8   # replayed view ops between the view and its base


def _min_storage(sizes, strides, offset: int) -> int:
    """aten `_min_storage_size`: elements a geometry reaches, from element 0 of the storage."""
    if any(s == 0 for s in sizes):
        return 0
    return offset + 1 + sum((n - 1) * st for n, st in zip(sizes, strides))


def _as_strided_grad(grad: torch.Tensor, view_geom: tuple, base_geom: tuple) -> torch.Tensor:
    (vs, vst, voff), (bs, bst, boff) = view_geom, base_geom
    shared = min(voff, boff)
    size = max(_min_storage(bs, bst, boff - shared), _min_storage(vs, vst, voff - shared))
    storage = grad.new_zeros(size)
    out = storage.as_strided(bs, bst, boff - shared)
    out.copy_(grad)
    return out


def real_view_grad(view: torch.Tensor) -> None:
    """Called after an in-place op on `view` (not while autograd rebuilds a view's node: reading
    `grad_fn` locks the view's metadata): hook its rebuilt node as described above."""
    if torch._C._is_view_replay_enabled():
        return   # the real run replays view ops too
    base = view._base
    target = base.grad_fn if base is not None else None
    node = view.grad_fn
    if target is None or node is None or base.layout != torch.strided or not view.is_floating_point():
        return
    view_geom = (tuple(view.shape), tuple(view.stride()), view.storage_offset())
    base_geom = (tuple(base.shape), tuple(base.stride()), base.storage_offset())
    for _ in range(_MAX_HOPS):
        nexts = [i for i, (f, _n) in enumerate(node.next_functions) if f is target]
        if nexts:
            break
        if not node.next_functions or node.next_functions[0][0] is None:
            return
        node = node.next_functions[0][0]
    else:
        return
    i = nexts[0]

    def hook(grad_inputs, grad_outputs):
        g = grad_inputs[i]
        if g is None or tuple(g.shape) != base_geom[0]:
            return None
        return tuple(_as_strided_grad(g, view_geom, base_geom) if k == i else x
                     for k, x in enumerate(grad_inputs))

    node.register_hook(hook)
