"""Hugging Face `TrainingArguments` (a JSON or YAML file of its keys) as a memplan job.

The step `Trainer` runs (transformers 5.x `Trainer._inner_training_loop` / `training_step`), and how
memplan models it:
- `compute_loss` returns the loss alone: the model output (logits) is released before backward
  (`TrainConfig.keep_outputs=False`);
- `max_grad_norm` (default 1.0) clips with `torch.nn.utils.clip_grad_norm_` after the micro-steps;
- `model.zero_grad()` sets gradients to None (torch >= 2.0 default);
- `optim` default `adamw_torch_fused` (torch >= 2.8): `torch.optim.AdamW(fused=True)`;
- `bf16` / `fp16`: fp32 weights under autocast (accelerate's native AMP), whose forward wrapper converts
  fp16/bf16 outputs to fp32 (`ModelPrep.amp_outputs_fp32`); fp16 adds a GradScaler;
- `gradient_checkpointing` / `activation_checkpointing`: the model's own `activation_checkpointing_enable`
  (non-reentrant by default in transformers 5).

Known limitations: with `gradient_accumulation_steps` K > 1 the Trainer fetches the K micro-batches of a
step before running them (`get_batch_samples`); memplan makes each micro-batch when it runs it, so K - 1
extra batches of token ids (small next to activations) are not counted.
"""
from __future__ import annotations

import json
import os

from memplan.configs._job import JobConfig, KeyUse, as_bool, as_int, check_unknown, trainer_keys
from memplan.configs.deepspeed import read_deepspeed
from memplan.errors import UserError
from memplan.finetune import ModelPrep
from memplan.workload import TrainConfig

# optim value -> (memplan optimizer, implementation, what it stands for)
OPTIM = {
    "adamw_torch": ("adamw", "default", "torch.optim.AdamW with torch's default implementation for the device"),
    "adamw_torch_fused": ("adamw", "fused", "torch.optim.AdamW(fused=True)"),
    "adamw_torch_npu_fused": ("adamw", "fused", "torch_npu's NpuFusedAdamW, modelled as fused AdamW (no scratch)"),
    "adafactor": ("adafactor", "default", "transformers' Adafactor(relative_step=False), modelled by "
                  "torch.optim.Adafactor: factored second moments, no first moment (approximation)"),
    "adamw_8bit": ("adamw-8bit", "default", "bitsandbytes AdamW8bit: blockwise 8-bit moments (state model)"),
    "adamw_bnb_8bit": ("adamw-8bit", "default", "bitsandbytes AdamW8bit: blockwise 8-bit moments (state model)"),
    "paged_adamw_8bit": ("adamw-8bit", "default", "bitsandbytes PagedAdamW8bit: blockwise 8-bit moments in paged "
                         "(unified) memory, counted on the device (state model)"),
    "sgd": ("sgd", "default", "torch.optim.SGD; memplan's SGD keeps a momentum buffer, Trainer's plain SGD none: "
            "an upper bound by one parameter-sized buffer"),
}
DEFAULTS = {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "max_grad_norm": 1.0,
            "optim": "adamw_torch_fused"}   # transformers 5.23 training_args.py defaults

# keys read by `read_trainer_keys`; every other key of TrainingArguments is reported as not affecting memory
READ = ("per_device_train_batch_size", "per_gpu_train_batch_size", "adafactor", "gradient_accumulation_steps", "bf16", "fp16", "optim", "max_grad_norm",
        "gradient_checkpointing", "activation_checkpointing", "gradient_checkpointing_kwargs",
        "activation_checkpointing_kwargs", "deepspeed", "fsdp", "fsdp_config", "learning_rate")
WHY_IGNORED = {
    "torch_compile": "memplan traces the eager step; compiled graphs can save less",
    "use_cpu": "the device comes from --device",
    "tf32": "a matmul precision: no memory effect",
    "per_device_eval_batch_size": "evaluation is not the training step",
}
FSDP_SHARDING = {"full_shard": "zero3", "hybrid_shard": "zero3", "shard_grad_op": "zero2",
                 "hybrid_shard_zero2": "zero2"}


FSDP_BF16 = ("per rank: precision bf16-mp, reduce bf16, autocast over the bf16 parameters (accelerate 1.x "
             "FullyShardedDataParallelPlugin.set_mixed_precision: param_dtype = reduce_dtype = bf16, and "
             "Accelerator.prepare_model wraps forward in autocast); traced with FSDP2's MixedPrecisionPolicy")


def read_trainer_keys(data: dict, source: str) -> tuple[dict, list, dict]:
    """The TrainingArguments keys of `data` that change memory: (settings, used rows, read keys).
    settings: batch_size, grad_accum, precision, optimizer, optimizer_impl, clip_grad_norm, lr,
    checkpointing (kwargs or None), deepspeed (path or dict or None), sharding (or None)."""
    used: list[KeyUse] = []
    data = _aliases(data)
    get = lambda k: data.get(k, DEFAULTS.get(k))  # noqa: E731
    s: dict = {"batch_size": as_int("per_device_train_batch_size", get("per_device_train_batch_size")),
               "grad_accum": as_int("gradient_accumulation_steps", get("gradient_accumulation_steps"))}
    used += [KeyUse("per_device_train_batch_size", s["batch_size"], "batch size (per rank)"),
             KeyUse("gradient_accumulation_steps", s["grad_accum"], "grad accumulation")]
    bf16, fp16 = as_bool("bf16", data.get("bf16", False)), as_bool("fp16", data.get("fp16", False))
    if bf16 and fp16:
        raise UserError(f"{source}: bf16 and fp16 are both true (contradictory; transformers refuses it too)")
    s["precision"] = "bf16-amp" if bf16 else "fp16-amp" if fp16 else "fp32"
    used.append(KeyUse("bf16" if bf16 else "fp16" if fp16 else "bf16/fp16", True if bf16 or fp16 else False,
                       f"precision {s['precision']} (fp32 weights, autocast)" if bf16 or fp16 else "precision fp32"))
    optim = str(get("optim"))
    if optim not in OPTIM:
        raise UserError(f"{source}: optim {optim!r} is not modelled by memplan (modelled: {', '.join(OPTIM)})")
    s["optimizer"], s["optimizer_impl"], what = OPTIM[optim]
    used.append(KeyUse("optim", optim, what))
    clip = get("max_grad_norm")
    s["clip_grad_norm"] = float(clip) if clip not in (None, 0, 0.0) else None
    used.append(KeyUse("max_grad_norm", clip, "clip_grad_norm_ after the micro-steps" if s["clip_grad_norm"]
                       else "no clipping"))
    if "learning_rate" in data:
        s["lr"] = float(data["learning_rate"])
    s["checkpointing"] = _checkpointing(data, used)
    s["deepspeed"] = data.get("deepspeed") or None
    if s["deepspeed"] is not None:
        used.append(KeyUse("deepspeed", s["deepspeed"] if isinstance(s["deepspeed"], str) else "{...}",
                           "DeepSpeed ZeRO per-rank model (memplan.distributed.deepspeed)"))
    s["sharding"] = _fsdp(data, used, source)
    if s["sharding"] and s["deepspeed"]:
        raise UserError(f"{source}: both deepspeed and fsdp are set (contradictory: pick one)")
    if s["sharding"] and bf16:
        used.append(KeyUse("fsdp + bf16", True, FSDP_BF16))
    return s, used, set(READ)


def _aliases(data: dict) -> dict:
    """transformers 4.x spellings: `per_gpu_train_batch_size` (deprecated alias), `adafactor: true`
    (before `optim`)."""
    data = dict(data)
    if "per_gpu_train_batch_size" in data and "per_device_train_batch_size" not in data:
        data["per_device_train_batch_size"] = data["per_gpu_train_batch_size"]
    if data.get("adafactor") is True and "optim" not in data:
        data["optim"] = "adafactor"
    return data


def _checkpointing(data: dict, used: list) -> dict | None:
    on = [k for k in ("activation_checkpointing", "gradient_checkpointing") if data.get(k) not in (None, False)]
    if not on or not as_bool(on[0], data[on[0]]):
        return None
    kw = data.get("activation_checkpointing_kwargs") or data.get("gradient_checkpointing_kwargs") or {}
    if isinstance(kw, str):
        try:
            kw = json.loads(kw)
        except json.JSONDecodeError:
            raise UserError(f"{on[0]}_kwargs: expected a JSON object, got {kw!r}") from None
    used.append(KeyUse(on[0], True, "model.activation_checkpointing_enable(" +
                       (", ".join(f"{k}={v}" for k, v in kw.items()) or "use_reentrant=False") + ")"))
    return dict(kw)


def _fsdp(data: dict, used: list, source: str) -> str | None:
    value = data.get("fsdp")
    if not value:
        return None
    words = value.split() if isinstance(value, str) else list(value)
    modes = [FSDP_SHARDING[w] for w in words if w in FSDP_SHARDING]
    if not modes:
        raise UserError(f"{source}: fsdp {value!r} names no sharding mode ({', '.join(FSDP_SHARDING)})")
    used.append(KeyUse("fsdp", value, f"sharding {modes[0]} (needs --world-size)"))
    return modes[0]


def ignored_rows(data: dict, read: set) -> list[tuple[str, str]]:
    return [(k, WHY_IGNORED.get(k, "no effect on the memory of a training step")) for k in sorted(data)
            if k not in read]


def read(data: dict, source: str):
    """A TrainingArguments mapping -> JobConfig."""
    check_unknown(data, trainer_keys(), source, "transformers TrainingArguments")
    s, used, read_keys = read_trainer_keys(data, source)
    train = TrainConfig(batch_size=s["batch_size"], precision=s["precision"], optimizer=s["optimizer"],
                        optimizer_impl=s["optimizer_impl"], lr=s.get("lr", 1e-4), grad_accum=s["grad_accum"],
                        clip_grad_norm=s["clip_grad_norm"], keep_outputs=False).validate()
    prep = ModelPrep(activation_checkpointing=s["checkpointing"], amp_outputs_fp32=s["precision"] != "fp32")
    ds = _deepspeed(s["deepspeed"], source, train)
    return JobConfig(source=source, format="trainer-args", train=train, prep=prep, deepspeed=ds,
                     sharding=s["sharding"], used=tuple(used), ignored=tuple(ignored_rows(data, read_keys)))


def _deepspeed(value, source: str, train):
    if value is None:
        return None
    return read_deepspeed(value, base_dir=os.path.dirname(os.path.abspath(source)), train=train)
