"""A plan written back in the format of the config it came from: LLaMA-Factory YAML or TrainingArguments JSON.

Only the keys a plan decides are written (batch, accumulation, precision, optimizer, checkpointing,
sequence length); the rest of the user's file stays as it is. Allocator settings are environment
variables, written as comments.
"""
from __future__ import annotations

import json

from memplan.errors import UserError

WRITE_FORMATS = ("llamafactory", "trainer-args")
OPTIM_NAME = {("adamw", "fused"): "adamw_torch_fused", ("adamw", "default"): "adamw_torch",
              ("adamw", "foreach"): "adamw_torch", ("adamw", "for-loop"): "adamw_torch", ("adafactor", None): "adafactor",
              ("adamw-8bit", None): "adamw_8bit", ("sgd", None): "sgd"}


def plan_keys(cfg, batch_size: int | None, grad_accum: int, checkpoint: tuple, fmt: str) -> tuple[dict, list[str]]:
    """(keys to set, comments) for a plan's TrainConfig `cfg` in `fmt`."""
    if fmt not in WRITE_FORMATS:
        raise UserError(f"unknown config format {fmt!r} (choose from {', '.join(WRITE_FORMATS)})")
    keys: dict = {"per_device_train_batch_size": batch_size or cfg.batch_size,
                  "gradient_accumulation_steps": grad_accum}
    notes: list[str] = []
    optim = OPTIM_NAME.get((cfg.optimizer, cfg.optimizer_impl)) or OPTIM_NAME.get((cfg.optimizer, None))
    if optim is None:
        notes.append(f"optimizer {cfg.optimizer} has no TrainingArguments optim name")
    else:
        keys["optim"] = optim
    keys["bf16"] = cfg.precision in ("bf16-amp", "bf16") and not (fmt == "llamafactory" and cfg.precision == "bf16")
    keys["fp16"] = cfg.precision == "fp16-amp"
    if cfg.precision == "bf16":
        if fmt == "llamafactory":
            keys["pure_bf16"] = True
        else:
            notes.append("pure bf16 weights have no TrainingArguments key: cast the model with model.to(torch.bfloat16)")
    if fmt == "llamafactory":
        keys["disable_gradient_checkpointing"] = not checkpoint
        if cfg.seq_len:
            keys["cutoff_len"] = cfg.seq_len
    else:
        keys["gradient_checkpointing"] = bool(checkpoint)
    if checkpoint:
        notes.append(f"memplan's plan checkpoints {', '.join(checkpoint)}; the Trainer's checkpointing wraps every "
                     "decoder layer (at least that much memory saved)")
    return keys, notes


def render(keys: dict, notes: list[str], env: dict, fmt: str) -> str:
    comments = [f"# {n}" for n in notes] + [f"# export {k}={v}" for k, v in env.items()]
    if fmt == "llamafactory":
        body = "\n".join(f"{k}: {json.dumps(v)}" for k, v in keys.items())   # JSON scalars are valid YAML
        return "\n".join(["# memplan plan (LLaMA-Factory keys)", *comments, body])
    return json.dumps(keys, indent=2)   # JSON has no comments: the CLI prints the notes on stderr
