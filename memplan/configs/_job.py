"""What a training config file says about memory: `JobConfig`, and the report of how each key was read.

Every reader returns a `JobConfig`: the `TrainConfig` of the step, the model it names, which parameters
train (`FinetuneSpec`), how the front end prepares the model (`ModelPrep`), DeepSpeed / FSDP settings,
and a mapping report: for each key memplan read, its value and what it maps to; every other key the
file holds, with why it does not change the estimate. Unknown or contradictory keys raise `UserError`
(one line, exit 2), as the tools themselves refuse them (HfArgumentParser: "Some keys are not used").
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache

from memplan.errors import UserError
from memplan.finetune import FinetuneSpec, ModelPrep
from memplan.workload import FSDP_SHARDINGS, TrainConfig

_DATA = os.path.join(os.path.dirname(__file__), "data", "keys.json")


@lru_cache(maxsize=1)
def known_keys() -> dict:
    """Key names of transformers' TrainingArguments and LLaMA-Factory's argument groups (data/keys.json,
    with the source versions they were read from)."""
    with open(_DATA, encoding="utf-8") as f:
        return json.load(f)


@dataclass(frozen=True)
class KeyUse:
    key: str
    value: object
    maps_to: str


@dataclass(frozen=True)
class JobConfig:
    """A training job as a config file describes it."""

    source: str
    format: str                                  # trainer-args | llamafactory
    train: TrainConfig
    model: str | None = None                     # model_name_or_path: a local dir, or an id in the HF cache
    finetune: FinetuneSpec = field(default_factory=FinetuneSpec)
    prep: ModelPrep = field(default_factory=ModelPrep)
    deepspeed: object = None                     # memplan.configs.deepspeed.DeepSpeedConfig
    sharding: str | None = None                  # from `fsdp`: zero2 | zero3
    attn_implementation: str | None = None       # eager | sdpa (None: the model's default)
    used: tuple = ()                             # KeyUse rows
    ignored: tuple = ()                          # (key, why) rows
    notes: tuple = ()

    def per_rank_config(self, cfg: TrainConfig, sharding: str) -> TrainConfig:
        """`cfg` as the job runs it on `sharding`: a Trainer / LLaMA-Factory job with `fsdp` and bf16 runs
        FSDP's mixed precision (param and reduce dtype bf16) with autocast on top, as accelerate does."""
        if self.sharding and sharding in FSDP_SHARDINGS and cfg.precision == "bf16-amp":
            return cfg.with_(precision="bf16-mp", reduce_dtype="bf16", mp_autocast=True)
        return cfg

    def mapping(self) -> dict:
        """The mapping report, for JSON output and the text table."""
        return {"source": self.source, "format": self.format,
                "used": [{"key": u.key, "value": u.value, "maps_to": u.maps_to} for u in self.used],
                "ignored": [{"key": k, "why": w} for k, w in self.ignored], "notes": list(self.notes)}


def load_mapping(path: str) -> dict:
    """A JSON or YAML file holding one mapping of keys to values."""
    if not os.path.exists(path):
        raise UserError(f"config file not found: {path}")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.endswith((".yaml", ".yml")):
        try:
            import yaml
        except ImportError:
            raise UserError("reading YAML needs pyyaml: pip install pyyaml") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise UserError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping of keys to values at the top level")
    return data


def as_bool(key: str, value) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if value in (0, 1):
        return bool(value)
    raise UserError(f"{key}: expected true or false, got {value!r}")


def as_int(key: str, value, minimum: int = 1) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise UserError(f"{key}: expected an integer, got {value!r}") from None
    if n != value and not (isinstance(value, str) and str(n) == value.strip()):
        raise UserError(f"{key}: expected an integer, got {value!r}")
    if n < minimum:
        raise UserError(f"{key}: must be >= {minimum}, got {n}")
    return n


def trainer_keys() -> set:
    """TrainingArguments keys of transformers 5.x and of the 4.x line (LLaMA-Factory runs on 4.x)."""
    keys = known_keys()
    return set(keys["trainer_args"]) | set(keys["trainer_args_4x"])


def check_unknown(data: dict, known: set, source: str, what: str) -> None:
    unknown = sorted(k for k in data if k not in known)
    if unknown:
        raise UserError(f"{source}: unknown key(s) for {what}: {', '.join(unknown)}")
