"""A DeepSpeed config (`ds_config.json`): the settings that change per-rank memory.

Key names and defaults are DeepSpeed's (deepspeed 0.19.8, `deepspeed/runtime/zero/config.py`
`DeepSpeedZeroConfig`, `offload_config.py`): stage 0; reduce_bucket_size and allgather_bucket_size 5e8
elements; stage3_prefetch_bucket_size 5e7; stage3_param_persistence_threshold 1e5;
stage3_max_live_parameters 1e9; contiguous_gradients true; overlap_comm defaults to (stage == 3)
(`overlap_comm_valid`). "auto" values are what the HF integration fills in from the model
(`transformers/integrations/deepspeed.py` `trainer_config_finalize`): reduce_bucket_size = hidden²,
stage3_prefetch_bucket_size = 0.9·hidden², stage3_param_persistence_threshold = 10·hidden; they stay
`None` here and are resolved with the model (`resolved(hidden_size)`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace

from memplan.configs._job import KeyUse, as_bool, as_int, load_mapping
from memplan.errors import UserError

ZERO_DEFAULTS = {"reduce_bucket_size": 500_000_000, "allgather_bucket_size": 500_000_000,
                 "stage3_prefetch_bucket_size": 50_000_000, "stage3_param_persistence_threshold": 100_000,
                 "stage3_max_live_parameters": 1_000_000_000}
ZERO_READ = ("stage", "offload_optimizer", "offload_param", "contiguous_gradients", "overlap_comm",
             *ZERO_DEFAULTS)
TOP_READ = ("zero_optimization", "bf16", "fp16", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
            "gradient_clipping", "train_batch_size")
OFFLOAD_DEVICES = ("cpu", "nvme", "none")


@dataclass(frozen=True)
class DeepSpeedConfig:
    source: str
    stage: int = 0
    offload_optimizer: str | None = None     # cpu | nvme
    offload_param: str | None = None         # cpu | nvme (stage 3 only)
    precision: str | None = None             # bf16 | fp16 | None (fp32); "auto" -> None until resolved
    reduce_bucket_size: int | None = ZERO_DEFAULTS["reduce_bucket_size"]          # None = auto
    allgather_bucket_size: int = ZERO_DEFAULTS["allgather_bucket_size"]
    prefetch_bucket_size: int | None = ZERO_DEFAULTS["stage3_prefetch_bucket_size"]
    param_persistence_threshold: int | None = ZERO_DEFAULTS["stage3_param_persistence_threshold"]
    max_live_parameters: int = ZERO_DEFAULTS["stage3_max_live_parameters"]
    contiguous_gradients: bool = True
    overlap_comm: bool = False
    micro_batch: int | None = None
    grad_accum: int | None = None
    gradient_clipping: float | None = None
    used: tuple = ()
    ignored: tuple = ()

    def resolved(self, hidden_size: int | None) -> "DeepSpeedConfig":
        """'auto' bucket sizes as the HF integration fills them from the model's hidden size."""
        h = hidden_size or 0
        return replace(self,
                       reduce_bucket_size=self.reduce_bucket_size if self.reduce_bucket_size is not None else h * h,
                       prefetch_bucket_size=self.prefetch_bucket_size if self.prefetch_bucket_size is not None
                       else int(0.9 * h * h),
                       param_persistence_threshold=self.param_persistence_threshold
                       if self.param_persistence_threshold is not None else 10 * h)


def read_deepspeed(value, base_dir: str = ".", train=None) -> DeepSpeedConfig:
    """A ds_config path (relative paths from `base_dir`, then the working directory) or dict."""
    if isinstance(value, dict):
        data, source = value, "<deepspeed dict>"
    else:
        path = str(value)
        if not os.path.isabs(path) and not os.path.exists(path) and os.path.exists(os.path.join(base_dir, path)):
            path = os.path.join(base_dir, path)
        data, source = load_mapping(path), path
    return parse(data, source, train)


def _auto(key: str, value, conv):
    return None if value == "auto" else conv(key, value)


def parse(data: dict, source: str, train=None) -> DeepSpeedConfig:
    zero = data.get("zero_optimization", {}) or {}
    if not isinstance(zero, dict):
        raise UserError(f"{source}: zero_optimization must be an object")
    used: list[KeyUse] = []
    stage = as_int("zero_optimization.stage", zero.get("stage", 0), minimum=0)
    if stage > 3:
        raise UserError(f"{source}: zero_optimization.stage must be 0-3, got {stage}")
    used.append(KeyUse("zero_optimization.stage", stage, f"ZeRO stage {stage}"))
    off_opt = _offload(zero, "offload_optimizer", source, used)
    off_par = _offload(zero, "offload_param", source, used)
    if off_par and stage != 3:
        raise UserError(f"{source}: offload_param needs ZeRO stage 3 (stage is {stage})")
    if off_opt and stage == 0:
        raise UserError(f"{source}: offload_optimizer needs ZeRO stage 1-3 (stage is 0)")
    precision = _precision(data, source, train, used)
    vals = {k: _auto(k, zero.get(k, d), lambda k, v: as_int(k, int(float(v)), minimum=0))
            for k, d in ZERO_DEFAULTS.items()}
    for k in ZERO_DEFAULTS:
        if k in zero:
            used.append(KeyUse(f"zero_optimization.{k}", zero[k], "buffer size (elements)"))
    overlap = as_bool("overlap_comm", zero.get("overlap_comm", stage == 3))
    contiguous = as_bool("contiguous_gradients", zero.get("contiguous_gradients", True))
    used += [KeyUse("zero_optimization.overlap_comm", overlap, "double reduce buckets" if overlap else "one bucket"),
             KeyUse("zero_optimization.contiguous_gradients", contiguous, "gradient partition buffer")]
    ignored = [(f"zero_optimization.{k}", "no modelled effect on memory") for k in zero if k not in ZERO_READ]
    ignored += [(k, "no modelled effect on memory") for k in data if k not in TOP_READ]
    mb, ga = data.get("train_micro_batch_size_per_gpu"), data.get("gradient_accumulation_steps")
    clip = data.get("gradient_clipping")
    return DeepSpeedConfig(
        source=source, stage=stage, offload_optimizer=off_opt, offload_param=off_par, precision=precision,
        reduce_bucket_size=vals["reduce_bucket_size"],
        allgather_bucket_size=vals["allgather_bucket_size"] or ZERO_DEFAULTS["allgather_bucket_size"],
        prefetch_bucket_size=vals["stage3_prefetch_bucket_size"],
        param_persistence_threshold=vals["stage3_param_persistence_threshold"],
        max_live_parameters=vals["stage3_max_live_parameters"] or ZERO_DEFAULTS["stage3_max_live_parameters"],
        contiguous_gradients=contiguous, overlap_comm=overlap,
        micro_batch=None if mb in (None, "auto") else as_int("train_micro_batch_size_per_gpu", mb),
        grad_accum=None if ga in (None, "auto") else as_int("gradient_accumulation_steps", ga),
        gradient_clipping=None if clip in (None, "auto") else float(clip),
        used=tuple(used), ignored=tuple(ignored))


def _offload(zero: dict, key: str, source: str, used: list) -> str | None:
    spec = zero.get(key)
    if not spec:
        return None
    device = spec.get("device", "none") if isinstance(spec, dict) else None
    if device not in OFFLOAD_DEVICES:
        raise UserError(f"{source}: zero_optimization.{key}.device must be one of {', '.join(OFFLOAD_DEVICES)}")
    if device == "none":
        return None
    used.append(KeyUse(f"zero_optimization.{key}.device", device, f"{key.split('_')[1]} states in host memory"
                       if device == "cpu" else f"{key.split('_')[1]} states on NVMe (host buffers only)"))
    return device


def _precision(data: dict, source: str, train, used: list) -> str | None:
    on = []
    for name in ("bf16", "fp16"):
        sect = data.get(name) or {}
        enabled = sect.get("enabled", False) if isinstance(sect, dict) else sect
        if enabled == "auto":
            # the HF integration copies TrainingArguments' bf16 / fp16 flags
            enabled = train is not None and train.precision.startswith(name[:2] if name == "bf16" else "fp16")
        if as_bool(f"{name}.enabled", enabled):
            on.append(name)
    if len(on) > 1:
        raise UserError(f"{source}: bf16 and fp16 are both enabled (contradictory)")
    if on:
        used.append(KeyUse(f"{on[0]}.enabled", True, f"{on[0]} model weights and gradients, fp32 master weights "
                           "in the optimizer"))
    return on[0] if on else None
