"""Autocast over FSDP, and FSDP's own mixed precision as the alternative.

`torch.autocast` caches the low-precision cast of every fp32 leaf parameter that requires grad
(`cached_cast` in aten/src/ATen/autocast_mode.cpp: `can_try_cache` = cast to the device's
lower-precision dtype, fp32 input, requires_grad, is_leaf, not a view, `cache_enabled`), keyed by the
parameter, and frees the cache only when the outermost autocast region exits (`clear_cache()` from
`torch.autocast.__exit__` when the nesting level drops to 0, torch/amp/autocast_mode.py). The check
is the same for every device type: CPU, CUDA (pytorch at 008ec6b1), and torch_npu's
`AutocastPrivateUse1` kernels (Ascend/pytorch torch_npu/csrc/aten/AutoCastOps.cpp at cfb19ef5,
`KERNEL_PRIVATEUSEONE(..., lower_precision_fp)`) go through the same `cached_cast`.

Under FSDP the parameters the model uses in forward are the all-gathered, unsharded ones: each unit's
unsharded fp32 parameter is a leaf `nn.Parameter` that requires grad, so autocast caches its bf16 copy,
and that copy outlives FSDP's resharding after the unit's forward: at the end of forward every rank
holds one bf16 copy of *every* weight, whatever the world size. With activation checkpointing nothing
else keeps those copies (the checkpointed region saves no casts), so the cache alone holds them.
FSDP1 is not affected: it exposes the unsharded parameters as views into its flat parameter
(`FlatParamHandle._use_unsharded_views`), and `cached_cast` skips views (`!arg.is_view()`).
Two ways out, both re-traced here before they are offered:
- FSDP's mixed precision (FSDP2 `MixedPrecisionPolicy(param_dtype=torch.bfloat16)`; FSDP1
  `MixedPrecision(param_dtype=...)`): parameters are all-gathered in bf16, no autocast cast of weights
  at all, and the unsharded bf16 parameters are freed at reshard;
- `torch.autocast(..., cache_enabled=False)`: the same math, each weight cast again at each use (and
  in checkpointing's recomputation), freed with the op's other temporaries.
"""
from __future__ import annotations

from memplan.plan.change import Change
from memplan.units import fmt_bytes
from memplan.workload import FSDP_SHARDINGS, TrainConfig

ALTERNATIVES = (
    ("fsdp-mixed-precision",
     "FSDP2 MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) instead of autocast",
     {"precision": "bf16-mp", "reduce_dtype": "fp32", "autocast_cache": True}, False,
     "fully_shard(module, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, "
     "reduce_dtype=torch.float32))  # every unit and the root; no torch.autocast",
     "bf16 parameters all-gathered and freed at reshard; norms and softmax run in bf16 unless the model "
     "upcasts (autocast keeps them in fp32)"),
    ("autocast-no-cache", "torch.autocast(..., cache_enabled=False)",
     {"autocast_cache": False}, True,
     "with torch.autocast(device_type, dtype=torch.bfloat16, cache_enabled=False):",
     "same math: each weight is cast at each use instead of once per step"),
)


def autocast_over_fsdp(cfg: TrainConfig, sharding: str) -> bool:
    """Whether the job runs autocast with its weight cache over FSDP2's all-gathered parameters."""
    return (cfg.precision.endswith("-amp") and cfg.autocast_cache and sharding in FSDP_SHARDINGS
            and sharding != "fsdp1")


def cache_note(cfg: TrainConfig, sharding: str, trainable_fp32_numel: int) -> str | None:
    """The finding as one note, with the most the cache can hold (one low-precision copy of every
    trainable fp32 weight), or None when it does not apply."""
    if not autocast_over_fsdp(cfg, sharding):
        return None
    held = 2 * trainable_fp32_numel
    return (f"autocast's weight-cast cache (cache_enabled=True) keeps a {cfg.precision[:4]} copy of every "
            f"all-gathered weight until autocast exits: up to {fmt_bytes(held)} per rank at the end of forward, "
            "whatever the world size; FSDP's MixedPrecisionPolicy (--precision bf16-mp) or "
            "--no-autocast-cache avoid it (`memplan shard plan` re-traces both)")


def precision_changes(estimate_fn, cfg: TrainConfig, sharding: str, base_total: int,
                      capacity: int | None) -> list[Change]:
    """The alternatives to autocast over FSDP, each re-traced with `estimate_fn(cfg) -> RankEstimate`
    (torch's wrapper on the fake process group). Empty when the job does not run autocast over FSDP."""
    if not autocast_over_fsdp(cfg, sharding) or cfg.precision != "bf16-amp":
        return []
    out = []
    for cid, title, edit, same_math, code, note in ALTERNATIVES:
        est = estimate_fn(cfg.with_(**edit))
        total = est.device_total_bytes
        out.append(Change(id=cid, kind="precision", title=title, same_math=same_math, applied=False,
                          method="trace", predicted_total_bytes=total, saving_bytes=base_total - total,
                          fits=None if capacity is None else total <= capacity, code=code, note=note,
                          config=edit))
    return out
