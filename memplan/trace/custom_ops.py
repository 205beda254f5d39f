"""Fake kernels for custom ops that have none: the ones memplan ships, and the user's own.

A fused op from a vendor library (torch_npu's `npu_*` ops, flash-attn) or from the user's own C++/CUDA
extension may have a real kernel but no fake (meta) kernel, so FakeTensorMode cannot say what it
returns. The recorder consults this registry only when such an op fails under fake tensors (no
per-op cost): the fake kernel is called with the op's (fake) arguments and must return tensors of the
right shapes and dtypes, made with `torch.empty` / `x.new_empty` / `torch.empty_like` (they become fake
because the fake mode is active).

Where a kernel comes from, first match wins:
1. the model file's `MEMPLAN_FAKE_KERNELS = {"mylib::fused_norm": fn, ...}` dict;
2. `@fake_kernel("mylib::fused_norm")` on a function (anywhere imported before tracing, e.g. the model
   file);
3. the kernels shipped here, written against the ops' documented signatures (torch_npu op-plugin
   `npu_*` ops, flash-attn 2 `flash_attn::*`). They only ever run when the op exists in the process
   (a model calls it) and has no fake kernel of its own (recent torch_npu releases ship meta kernels
   for many of these; theirs are then used).
A custom op with none of these but with a CPU kernel is run for real on zero-filled inputs when its
inputs are small (`ZEROS_RUN_MAX_BYTES`), as FakeTensorMode itself does for aten ops; the trace notes
say so. Keys are qualified op names, `namespace::name` (any overload) or `namespace::name.overload`.

Known limitations: extensions that are not dispatcher ops (apex's `fused_layer_norm_cuda` called from
an `autograd.Function`, raw pybind calls on `data_ptr()`) cannot be faked at all; tracing then fails
and memplan falls back to measuring (`memplan.trace.fallback`). Scratch memory a fused kernel
allocates inside itself (e.g. npu_fusion_attention's dropout mask when keep_prob < 1) is not counted.
"""
from __future__ import annotations

import sys
from typing import Callable

import torch
from memplan.errors import UserError

ZEROS_RUN_MAX_BYTES = 64 << 20
"""Largest total input size of a custom op without a fake kernel that is run for real on zeros."""

_USER: dict[str, Callable] = {}
_SHIPPED: dict[str, Callable] = {}


def fake_kernel(qualname: str, *, _registry: dict | None = None):
    """Decorator: register `fn` as the fake kernel of the custom op `qualname` ("ns::op")."""
    reg = _USER if _registry is None else _registry
    if "::" not in qualname:
        raise ValueError(f"fake kernels are keyed by qualified op names like 'mylib::op', got {qualname!r}")

    def deco(fn):
        if _registry is not None and qualname in reg:
            raise ValueError(f"a fake kernel for {qualname} is already registered")
        reg[qualname] = fn
        return fn
    return deco


def _shipped(qualname: str):
    return fake_kernel(qualname, _registry=_SHIPPED)


def kernels_for(workload=None) -> dict[str, Callable]:
    """Every fake kernel in force for `workload`: the model file's dict, then the decorator's
    registry, then memplan's own."""
    found: dict[str, Callable] = dict(_SHIPPED)
    found.update(_USER)
    if workload is not None:
        found.update(_from_model_file(workload))
        extra = getattr(workload, "extra", None) or {}
        found.update(extra.get("fake_kernels") or {})
    return found


def _from_model_file(workload) -> dict:
    mod = sys.modules.get(getattr(workload.build_model, "__module__", None) or "")
    kernels = getattr(mod, "MEMPLAN_FAKE_KERNELS", None) if mod is not None else None
    if kernels is None:
        return {}
    if not isinstance(kernels, dict) or not all(isinstance(k, str) and callable(v) for k, v in kernels.items()):
        raise UserError(f"{workload.source}: MEMPLAN_FAKE_KERNELS must map 'namespace::op' names to functions")
    return dict(kernels)


def lookup(kernels: dict, func) -> Callable | None:
    """The fake kernel for an OpOverload, by `ns::name.overload`, then `ns::name`."""
    if not kernels:
        return None
    return kernels.get(func.name()) or kernels.get(func._schema.name)


def zeros_run(func, args, kwargs):
    """Run a non-aten op with a CPU kernel for real on zero-filled copies of its inputs and return
    fake outputs of the same shapes; None when it does not apply."""
    from torch.utils._python_dispatch import _disable_current_modes
    from torch.utils._pytree import tree_flatten, tree_unflatten

    if func.namespace in ("aten", "prim", "prims"):
        return None
    flat, spec = tree_flatten((args, kwargs))
    total = sum(a.numel() * a.element_size() for a in flat if isinstance(a, torch.Tensor))
    if total > ZEROS_RUN_MAX_BYTES:
        return None
    device = next((a.device for a in flat if isinstance(a, torch.Tensor)), torch.device("cpu"))
    if device.type != "cpu":
        return None
    with _disable_current_modes():
        real = [torch.zeros(a.shape, dtype=a.dtype) if isinstance(a, torch.Tensor) else a for a in flat]
        rargs, rkwargs = tree_unflatten(real, spec)
        try:
            rout = func(*rargs, **rkwargs)
        except Exception:  # noqa: BLE001 - no CPU kernel either: the caller reports the original error
            return None
    rflat, ospec = tree_flatten(rout)
    fakes = [torch.empty_strided(r.shape, r.stride(), dtype=r.dtype, device=device)
             if isinstance(r, torch.Tensor) else r for r in rflat]
    return tree_unflatten(fakes, ospec)


# ---- torch_npu (op-plugin) -------------------------------------------------------------------------
# Signatures: Ascend/op-plugin `op_plugin/config/op_plugin_functions.yaml` and the torch_npu API docs
# (torch_npu.npu_rms_norm, npu_rotary_mul, npu_swiglu, npu_fusion_attention, npu_add_rms_norm).

def _rstd_shape(x: torch.Tensor, gamma: torch.Tensor) -> list[int]:
    return list(x.shape[: x.dim() - gamma.dim()]) + [1] * gamma.dim()


@_shipped("npu::npu_rms_norm")
def _npu_rms_norm(x, gamma, epsilon=1e-6):
    # (Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor y, Tensor rstd); rstd is fp32
    return torch.empty_like(x), x.new_empty(_rstd_shape(x, gamma), dtype=torch.float32)


@_shipped("npu::npu_rms_norm_backward")
def _npu_rms_norm_backward(dy, x, gamma, rstd):
    # -> (Tensor dx, Tensor dgamma); dgamma is fp32
    return torch.empty_like(x), gamma.new_empty(gamma.shape, dtype=torch.float32)


@_shipped("npu::npu_add_rms_norm")
def _npu_add_rms_norm(x1, x2, gamma, epsilon=1e-6):
    # (x1, x2, gamma, epsilon) -> (Tensor y, Tensor rstd, Tensor x = x1 + x2)
    return torch.empty_like(x1), x1.new_empty(_rstd_shape(x1, gamma), dtype=torch.float32), torch.empty_like(x1)


@_shipped("npu::npu_rotary_mul")
def _npu_rotary_mul(x, r1, r2, rotary_mode="half"):
    return torch.empty_like(x)


@_shipped("npu::npu_rotary_mul_backward")
def _npu_rotary_mul_backward(grad, x, r1, r2, rotary_mode="half"):
    # -> (dx, dr1, dr2)
    return torch.empty_like(x), torch.empty_like(r1), torch.empty_like(r2)


@_shipped("npu::npu_swiglu")
def _npu_swiglu(x, dim=-1):
    shape = list(x.shape)
    shape[dim] //= 2
    return x.new_empty(shape)


@_shipped("npu::npu_swiglu_backward")
def _npu_swiglu_backward(grad_output, x, dim=-1):
    return torch.empty_like(x)


@_shipped("npu::fast_gelu")
def _npu_fast_gelu(x):
    return torch.empty_like(x)


@_shipped("npu::npu_fast_gelu_backward")
def _npu_fast_gelu_backward(grad, x):
    return torch.empty_like(x)


def _fa_dims(query, key, head_num, layout):
    """(B, N, S1) of npu_fusion_attention's softmax statistics for an input layout."""
    if layout == "BSH":
        return query.size(0), head_num, query.size(1)
    if layout == "SBH":
        return query.size(1), head_num, query.size(0)
    if layout == "BSND":
        return query.size(0), head_num, query.size(1)
    if layout == "TND":
        return None, head_num, query.size(0)
    return query.size(0), head_num, query.size(2)  # BNSD


@_shipped("npu::npu_fusion_attention")
def _npu_fusion_attention(query, key, value, head_num, input_layout, *args, **kwargs):
    # -> (attention_out, softmax_max, softmax_sum, softmax_out, seed, offset, numels); the softmax
    # statistics are fp32 (B, N, S1, 8) ((T, N, 8) for TND); softmax_out is empty
    b, n, s1 = _fa_dims(query, key, head_num, input_layout)
    stats = [s1, n, 8] if b is None else [b, n, s1, 8]
    out = torch.empty_like(query)
    if value.shape[-1] != query.shape[-1] and input_layout in ("BSND", "BNSD", "TND"):
        out = query.new_empty(list(query.shape[:-1]) + [value.shape[-1]])
    return (out, query.new_empty(stats, dtype=torch.float32), query.new_empty(stats, dtype=torch.float32),
            query.new_empty([0]), 0, 0, 0)


@_shipped("npu::npu_fusion_attention_grad")
def _npu_fusion_attention_grad(query, key, value, dy, head_num, input_layout, *args, pse=None, **kwargs):
    # -> (dq, dk, dv, dpse)
    dpse = torch.empty_like(pse) if pse is not None else query.new_empty([0])
    return torch.empty_like(query), torch.empty_like(key), torch.empty_like(value), dpse


# ---- flash-attn 2 (flash_attn/flash_attn_interface.py; its own fake kernels exist from 2.6.3) ------

def _round_multiple(x: int, m: int) -> int:
    return (x + m - 1) // m * m


@_shipped("flash_attn::_flash_attn_forward")
def _flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal, window_size_left=-1,
                        window_size_right=-1, softcap=0.0, alibi_slopes=None, return_softmax=False):
    # q: (B, S, H, D) -> (out, softmax_lse (B, H, S) fp32, S_dmask, rng_state (2,) int64)
    b, s, h, _ = q.shape
    sk = k.shape[1]
    dmask = (q.new_empty((b, h, _round_multiple(s, 128), _round_multiple(sk, 128)))
             if return_softmax and dropout_p > 0 else q.new_empty((0,)))
    return (torch.empty_like(q), q.new_empty((b, h, s), dtype=torch.float32), dmask,
            q.new_empty((2,), dtype=torch.int64))


@_shipped("flash_attn::_flash_attn_backward")
def _flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, *args, **kwargs):
    # dq, dk, dv are written in place; returns softmax_d (B, H, round_multiple(S, 128)) fp32
    b, s, h, _ = q.shape
    return q.new_empty((b, h, _round_multiple(s, 128)), dtype=torch.float32)


# ---- aten ops whose meta kernel is stricter than the CPU kernel ------------------------------------

@_shipped("aten::_grouped_mm")
def _grouped_mm(mat_a, mat_b, offs=None, bias=None, out_dtype=None):
    # torch's meta kernel checks CUDA's constraints (bf16 only, 16-byte aligned strides); the CPU kernel
    # (MoE "grouped_mm" experts in transformers) takes fp32 too. Output shapes as in
    # torch/_meta_registrations.py `_create_grouped_mm_output_tensor`.
    if mat_a.dim() == 2:
        size = [offs.size(0), mat_a.size(0), mat_b.size(1)] if mat_b.dim() == 2 else [mat_a.size(0), mat_b.size(-1)]
    else:
        size = [mat_a.size(1), mat_b.size(1)] if mat_b.dim() == 2 else [mat_a.size(0), mat_a.size(1), mat_b.size(-1)]
    return mat_a.new_empty(size, dtype=out_dtype or mat_a.dtype)
