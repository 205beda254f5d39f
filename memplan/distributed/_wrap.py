"""Wrap a workload in a torch.distributed strategy: the same wrapping for the fake-process-group trace
and for the real gloo / nccl / hccl run, so that what is estimated is what is measured.

| sharding | model wrapper                                            | optimizer                          |
|----------|----------------------------------------------------------|------------------------------------|
| ddp      | `DistributedDataParallel(bucket_cap_mb=...)`             | the configured one                 |
| zero1    | `DistributedDataParallel`                                | `ZeroRedundancyOptimizer(cls, ...)` |
| zero2    | FSDP2 `fully_shard(reshard_after_forward=False)` per unit | the configured one (on shards)     |
| zero3    | FSDP2 `fully_shard(reshard_after_forward=True)` per unit  | the configured one (on shards)     |
| fsdp     | same as zero3 (FSDP2's default)                          |                                    |

ZeRO-2 has no dedicated torch implementation; FSDP2 with `reshard_after_forward=False` (FSDP1's
`SHARD_GRAD_OP`) is torch's equivalent: gradients and optimizer state sharded, parameters gathered once
per step and kept unsharded from forward to backward.

The model is cast (bf16), moved to its device and checkpointed *before* it is wrapped, so module names
and globs mean the same as on one device; the step driver then finds nothing left to do.
"""
from __future__ import annotations

import contextlib
import fnmatch
import functools
import re
from dataclasses import replace

from memplan.distributed import _ddp_buckets
from memplan import compat
from memplan.errors import UserError
from memplan.workload import SHARDINGS, TrainConfig, Workload, check_precision_sharding
from memplan.step import apply_checkpointing
from memplan.step import cast_batch
from memplan.step import optimizer_class

DEFAULT_BUCKET_CAP_MB = 25          # torch/nn/parallel/distributed.py `_DEFAULT_BUCKET_CAP_MB`
FIRST_BUCKET_BYTES = 1024 * 1024    # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES (c10d reducer)


def check_sharding(sharding: str) -> str:
    s = (sharding or "").lower()
    if s not in SHARDINGS:
        raise UserError(f"unknown sharding {sharding!r} (choose from {', '.join(SHARDINGS)})")
    return s


def fsdp_units(model, patterns: tuple[str, ...] = ()) -> list[str]:
    """Names of the submodules that become FSDP units (the root is always one more).

    With `patterns` (fnmatch globs): the outermost matching modules. Otherwise the children of the
    largest `ModuleList` / `Sequential` holding parameters (the transformer blocks, the MLP's layers),
    which is what torchtitan and the FSDP2 examples shard.
    """
    import torch

    names = [n for n, _ in model.named_modules() if n]
    if patterns:
        chosen: list[str] = []
        for n in names:
            if any(fnmatch.fnmatchcase(n, p) for p in patterns) and not any(n.startswith(c + ".") for c in chosen):
                chosen.append(n)
        if not chosen:
            raise UserError(f"--fsdp-unit {' '.join(patterns)} matches no module; names look like: "
                            f"{', '.join(names[:8])}")
        return chosen
    best, best_n = None, 0
    for n, m in model.named_modules():
        if isinstance(m, (torch.nn.ModuleList, torch.nn.Sequential)):
            kids = [c for c in m.children() if any(True for _ in c.parameters())]
            size = sum(p.numel() for p in m.parameters())
            if len(kids) >= 2 and size > best_n:
                best, best_n = n, size
    if best is None:
        return []
    prefix = best + "." if best else ""
    mod = model.get_submodule(best) if best else model
    return [prefix + n for n, c in mod.named_children() if any(True for _ in c.parameters())]


def depth_free_units(model, patterns: tuple[str, ...] = ()) -> tuple[list[str], tuple[str, ...] | None]:
    """The FSDP units of `model` (`fsdp_units`) and globs that choose the same units in `model` without
    naming a layer index (`model.layers.3` -> `model.layers.*`), so that the same model built with fewer
    layers gets the same units per layer (block-once); None when no such globs choose exactly them."""
    names = fsdp_units(model, patterns)
    globs = tuple(dict.fromkeys(re.sub(r"(^|\.)\d+(?=\.|$)", r"\1*", n) for n in names))
    try:
        same = bool(names) and fsdp_units(model, globs) == names
    except UserError:
        same = False
    return names, (globs if same else None)


def _cast_and_checkpoint(model, cfg: TrainConfig, run_device: str):
    import torch


    if run_device != "cpu":
        model = model.to(run_device)
    if cfg.precision == "bf16":
        prev = torch.__future__.get_overwrite_module_params_on_conversion()
        torch.__future__.set_overwrite_module_params_on_conversion(True)
        try:
            model = model.to(torch.bfloat16)
        finally:
            torch.__future__.set_overwrite_module_params_on_conversion(prev)
    apply_checkpointing(model, cfg.checkpoint)
    return model


def mp_policy(cfg: TrainConfig):
    """FSDP2's `MixedPrecisionPolicy` for `bf16-mp` (param_dtype bf16; reduce_dtype fp32, bf16 or torch's
    default None = the param dtype), else None."""
    if cfg.precision != "bf16-mp":
        return None
    import torch

    cls = compat.fsdp2_mixed_precision_policy()
    if cls is None:
        raise UserError(compat.missing("FSDP2 MixedPrecisionPolicy (needed for bf16-mp)", "torch >= 2.4"))
    reduce = {"fp32": torch.float32, "bf16": torch.bfloat16, None: None}[cfg.reduce_dtype]
    return cls(param_dtype=torch.bfloat16, reduce_dtype=reduce)


def mp_policy_text(cfg: TrainConfig, fsdp1: bool = False) -> str:
    """The policy as the code that makes it (FSDP2's `MixedPrecisionPolicy`, or FSDP1's `MixedPrecision`)."""
    reduce = {"fp32": "torch.float32", "bf16": "torch.bfloat16"}.get(cfg.reduce_dtype)
    name = "MixedPrecision" if fsdp1 else "MixedPrecisionPolicy"
    return (f"{name}(param_dtype=torch.bfloat16" + (f", reduce_dtype={reduce}" if reduce else "")
            + (", buffer_dtype=torch.bfloat16)" if fsdp1 else ")"))


def _fsdp2(model, cfg: TrainConfig, sharding: str, names: list[str], mesh):
    """FSDP2: `fully_shard` on each unit and the root (zero2: `reshard_after_forward=False`), with the
    `MixedPrecisionPolicy` of bf16-mp."""
    fully_shard = compat.fully_shard()
    if fully_shard is None:
        raise UserError(compat.missing(f"FSDP2 fully_shard (needed for {sharding})",
                                       "use ddp or zero1 on this torch, or torch >= 2.4"))
    reshard = sharding != "zero2"
    mp = mp_policy(cfg)
    extra = {"mp_policy": mp} if mp is not None else {}
    for n in names:
        fully_shard(model.get_submodule(n), mesh=mesh, reshard_after_forward=reshard, **extra)
    fully_shard(model, mesh=mesh, reshard_after_forward=reshard, **extra)
    return model


def _fsdp1(model, cfg: TrainConfig, names: list[str], run_device: str):
    """FSDP1: `FullyShardedDataParallel(FULL_SHARD, use_orig_params=True)`, the `names` units wrapped by
    an auto-wrap policy, FSDP1's `MixedPrecision(param_dtype=bf16, reduce_dtype, buffer_dtype=bf16)`
    for bf16-mp."""
    import torch
    from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision, ShardingStrategy
    from torch.distributed.fsdp.wrap import lambda_auto_wrap_policy

    unit_ids = {id(model.get_submodule(n)) for n in names}
    policy = functools.partial(lambda_auto_wrap_policy, lambda_fn=lambda m: id(m) in unit_ids)
    mp = None
    if cfg.precision == "bf16-mp":
        reduce = {"fp32": torch.float32, "bf16": torch.bfloat16, None: None}[cfg.reduce_dtype]
        mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=reduce, buffer_dtype=torch.bfloat16)
    return FullyShardedDataParallel(model, auto_wrap_policy=policy, sharding_strategy=ShardingStrategy.FULL_SHARD,
                                    mixed_precision=mp, device_id=torch.device(run_device), use_orig_params=True)


def _fake_allreduce_hook(state, bucket):
    """A DDP comm hook for the fake process group: the real default hook divides the bucket in place and
    all-reduces it in place; the fake group's future carries no tensor, so hand the bucket back."""
    import torch

    fut = torch.futures.Future()
    fut.set_result(bucket.buffer().div_(state))
    return fut


class _NoRebuild:
    """The reducer seen through a proxy that declines the one-time bucket rebuild at the second forward.

    The rebuild broadcasts bucket indices through the process group with real (CPU) index tensors,
    which fake tensors cannot hold. It re-creates buckets of the same total size in gradient-ready
    order; the transient overlap (old and new buckets) at the start of step 2's forward is not traced.
    """

    def __init__(self, reducer):
        object.__setattr__(self, "_r", reducer)

    def _rebuild_buckets(self):
        return False

    def __getattr__(self, name):
        return getattr(self._r, name)


def wrap_workload(workload: Workload, cfg: TrainConfig, sharding: str, *, run_device: str = "cpu",
                  family: str = "cpu", mesh=None, fake: bool = False,
                  bucket_cap_mb: float | None = None, units: tuple[str, ...] = (),
                  world_size: int = 1, info: dict | None = None,
                  bucket_calls: list | None = None) -> tuple[Workload, TrainConfig]:
    """A workload whose model and optimizer are the strategy's, and the config to run it with.

    `fake=True`: the process group is torch's fake one (no communication): DDP skips its init-time
    broadcasts and uses a comm hook that returns the bucket. `mesh`: the FSDP device mesh, made before
    entering fake mode. `info` (a dict) receives what was chosen (FSDP units, DDP bucket sizes);
    `bucket_calls` (a list), DDP's bucket assignment (memplan.distributed._ddp_buckets).
    """
    import torch

    sharding = check_sharding(sharding)
    check_precision_sharding(cfg.precision, sharding)
    info = info if info is not None else {}
    orig_build = workload.build_model
    cap = DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb

    def build():
        model = orig_build()
        if not isinstance(model, torch.nn.Module):
            raise UserError(f"build_model() must return a torch.nn.Module, got {type(model).__name__}")
        model = _cast_and_checkpoint(model, cfg, run_device)
        if sharding in ("ddp", "zero1"):
            from torch.nn.parallel import DistributedDataParallel as DDP

            ids = [torch.device(run_device).index] if run_device != "cpu" else None
            sync = {"init_sync": not fake} if compat.ddp_has_init_sync() else {}   # in torch 2.8, not in 2.6
            recording = (_ddp_buckets.recording(model, bucket_calls) if bucket_calls is not None
                         else contextlib.nullcontext())
            with compat.fake_ddp_init() if fake else contextlib.nullcontext(), recording:
                ddp = DDP(model, device_ids=ids, bucket_cap_mb=cap, **sync)
            if fake:
                ddp.register_comm_hook(world_size, _fake_allreduce_hook)
                ddp.reducer = _NoRebuild(ddp.reducer)
            info["ddp_bucket_cap_mb"] = cap
            return ddp
        info["fsdp_units"] = fsdp_units(model, units)
        if cfg.precision == "bf16-mp":
            info["mp_policy"] = mp_policy_text(cfg, fsdp1=sharding == "fsdp1")
        if sharding == "fsdp1":
            return _fsdp1(model, cfg, info["fsdp_units"], run_device)
        return _fsdp2(model, cfg, sharding, info["fsdp_units"], mesh)

    make_opt = workload.make_optimizer
    if sharding == "zero1":
        if workload.make_optimizer is not None:
            raise UserError("zero1 wraps the optimizer in ZeroRedundancyOptimizer: it needs --optimizer, "
                            "not the model file's make_optimizer()")

        def make_opt(params):
            from torch.distributed.optim import ZeroRedundancyOptimizer

            cls, kw = optimizer_class(cfg, family)
            return ZeroRedundancyOptimizer(params, optimizer_class=cls, lr=cfg.lr, **kw)

    make_batch = workload.make_batch
    run_cfg = cfg.with_(checkpoint=())
    if cfg.precision == "bf16":
        # the step driver would cast the model again after wrapping, replacing the Parameter objects the
        # wrapper holds; the model is cast above, the batch here, and the driver runs it as fp32

        @functools.wraps(workload.make_batch)   # keeps its signature (seq_len or not)
        def make_batch(*args, __orig=workload.make_batch, **kwargs):
            b = __orig(*args, **kwargs)
            return cast_batch(tuple(b) if isinstance(b, list) else b, torch.bfloat16)

        run_cfg = run_cfg.with_(precision="fp32")
    elif cfg.precision == "bf16-mp":   # fp32 parameters; FSDP's policy casts (autocast only with mp_autocast)
        run_cfg = run_cfg.with_(precision="bf16-amp" if cfg.mp_autocast else "fp32", reduce_dtype=None,
                                mp_autocast=False)
    wl = replace(workload, build_model=build, make_optimizer=make_opt, make_batch=make_batch,
                 name=f"{workload.name}[{sharding}]")
    return wl, run_cfg
