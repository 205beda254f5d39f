"""Training config files as memplan input: HF `TrainingArguments`, LLaMA-Factory YAML, DeepSpeed JSON.

Pure parsing (no torch import): each reader returns a `JobConfig` with the `TrainConfig`, the model it
names, the fine-tuning spec, the model preparation, DeepSpeed / FSDP settings, and the mapping report
(which key maps to what; which keys do not change memory, and why). docs/train_configs.md lists them.
"""
from __future__ import annotations

from memplan.configs import llamafactory, trainer_args
from memplan.configs._job import JobConfig, KeyUse, load_mapping
from memplan.configs.deepspeed import DeepSpeedConfig, read_deepspeed

FORMATS = ("auto", "trainer-args", "llamafactory")
# keys only LLaMA-Factory has: a file holding any of them is a LLaMA-Factory config
_LF_MARKERS = ("model_name_or_path", "finetuning_type", "stage", "cutoff_len", "template", "dataset",
               "lora_rank", "lora_target", "pure_bf16", "disable_gradient_checkpointing", "flash_attn")


def detect_format(data: dict) -> str:
    return "llamafactory" if any(k in data for k in _LF_MARKERS) else "trainer-args"


def read_train_config(path: str, fmt: str = "auto") -> JobConfig:
    """Read a TrainingArguments or LLaMA-Factory file (JSON or YAML) into a `JobConfig`."""
    data = load_mapping(path)
    fmt = detect_format(data) if fmt == "auto" else fmt
    reader = llamafactory if fmt == "llamafactory" else trainer_args
    return reader.read(data, path)


__all__ = ["DeepSpeedConfig", "FORMATS", "JobConfig", "KeyUse", "detect_format", "read_deepspeed",
           "read_train_config"]
