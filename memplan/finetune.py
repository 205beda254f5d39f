"""Fine-tuning as people run it: PEFT adapters and the Hugging Face `Trainer`'s way of preparing a model.

A `FinetuneSpec` says which parameters train: all (`full`), the last layers (`freeze`, LLaMA-Factory's
rule) or a PEFT adapter (`lora` from `--lora`, or any PEFT method from an `adapter_config.json`).
`ModelPrep` says what the training front end does to the model before the first step, in its order:
load dtype (LLaMA-Factory loads the weights in the compute dtype), PEFT, casting the trainable
parameters to fp32, activation checkpointing enabled the model's own way
(`activation_checkpointing_enable`, what `Trainer` calls), and accelerate's mixed-precision forward
wrapper, which converts fp16/bf16 outputs (the logits) to fp32 (`accelerate.utils.convert_outputs_to_fp32`,
applied by `Accelerator.prepare_model` when mixed precision is on).

`prepare(workload, spec, prep)` returns a new `Workload` whose `build_model` does all that; the tracer
and the real measurement both run it, so adapters, frozen base weights, their gradients (none) and
optimizer state (adapters only) are what they are in the real step. Parsing here imports no torch.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from memplan.errors import UserError
from memplan.workload import Workload, read_json

FINETUNING_TYPES = ("full", "lora", "freeze", "peft")
LORA_KEYS = {"r": "rank", "rank": "rank", "alpha": "alpha", "lora_alpha": "alpha", "dropout": "dropout",
             "lora_dropout": "dropout", "target": "target", "target_modules": "target", "dora": "use_dora"}


@dataclass(frozen=True)
class FinetuneSpec:
    """Which parameters train. `peft_config` is a PEFT config as a dict (`adapter_config.json`'s keys)."""

    method: str = "full"                 # full | lora | freeze | peft
    peft_config: dict = field(default_factory=dict)
    freeze_layers: int = 2               # freeze: train the last N decoder layers (negative: the first N)
    freeze_modules: tuple[str, ...] = ("all",)

    def describe(self) -> str:
        if self.method == "full":
            return "full fine-tuning"
        if self.method == "freeze":
            return f"freeze: last {self.freeze_layers} layer(s) trainable ({', '.join(self.freeze_modules)})"
        c = self.peft_config
        kind = c.get("peft_type", "LORA")
        if kind == "LORA":
            t = c.get("target_modules")
            t = t if isinstance(t, str) else "+".join(t or [])
            return (f"LoRA r={c.get('r', 8)} alpha={c.get('lora_alpha', 8)} dropout={c.get('lora_dropout', 0.0)} "
                    f"target={t}" + (" (DoRA)" if c.get("use_dora") else ""))
        return f"PEFT {kind}"


@dataclass(frozen=True)
class ModelPrep:
    """What the training front end does to the model before the first step (in this order)."""

    load_dtype: str | None = None        # float32 | bfloat16 | float16 | auto (the config's dtype); None = as built
    upcast_trainable: bool = False       # trainable parameters cast to fp32 (LLaMA-Factory, not pure_bf16)
    activation_checkpointing: dict | None = None   # kwargs for model.activation_checkpointing_enable
    amp_outputs_fp32: bool = False       # accelerate's forward wrapper under fp16/bf16 mixed precision

    @property
    def is_default(self) -> bool:
        return self == ModelPrep()


def lora_spec(rank: int = 8, alpha: float | None = None, dropout: float = 0.0,
              target: str | list | tuple = ("q_proj", "v_proj"), use_dora: bool = False,
              modules_to_save=None) -> FinetuneSpec:
    """A LoRA spec; `target` is a list of module-name suffixes, a comma/plus list, or `all-linear`."""
    if rank < 1:
        raise UserError(f"LoRA rank must be >= 1, got {rank}")
    if not 0.0 <= dropout < 1.0:
        raise UserError(f"LoRA dropout must be in [0, 1), got {dropout}")
    if isinstance(target, str):
        target = "all-linear" if target in ("all-linear", "all") else [
            t for t in target.replace("+", ",").split(",") if t.strip()]
    if not target:
        raise UserError("LoRA needs at least one target module (or all-linear)")
    cfg = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": int(rank),
           "lora_alpha": alpha if alpha is not None else 8, "lora_dropout": float(dropout),
           "target_modules": target if isinstance(target, str) else [t.strip() for t in target],
           "use_dora": bool(use_dora)}
    if modules_to_save:
        cfg["modules_to_save"] = list(modules_to_save)
    return FinetuneSpec(method="lora", peft_config=cfg)


def parse_lora_option(text: str) -> FinetuneSpec:
    """`--lora 8` or `--lora r=16,alpha=32,dropout=0.05,target=q_proj+v_proj` (target all-linear too)."""
    text = text.strip()
    if text.isdigit():
        return lora_spec(rank=int(text))
    kw: dict = {}
    for part in text.split(","):
        if "=" not in part:
            raise UserError(f"--lora {text!r}: expected KEY=VALUE items (r, alpha, dropout, target, dora)")
        k, v = (s.strip() for s in part.split("=", 1))
        if k not in LORA_KEYS:
            raise UserError(f"--lora: unknown key {k!r} (known: r, alpha, dropout, target, dora)")
        kw[LORA_KEYS[k]] = v
    try:
        return lora_spec(rank=int(kw.get("rank", 8)),
                         alpha=float(kw["alpha"]) if "alpha" in kw else None,
                         dropout=float(kw.get("dropout", 0.0)), target=kw.get("target", "q_proj+v_proj"),
                         use_dora=str(kw.get("use_dora", "false")).lower() in ("1", "true", "yes"))
    except ValueError as exc:
        raise UserError(f"--lora {text!r}: {exc}") from None


def read_peft_config(path: str) -> FinetuneSpec:
    """An `adapter_config.json` (PEFT's own file), or the directory holding it."""
    if os.path.isdir(path):
        path = os.path.join(path, "adapter_config.json")
    data = read_json(path)
    if "peft_type" not in data:
        raise UserError(f"{path}: no 'peft_type' (is this a PEFT adapter_config.json?)")
    data = {k: v for k, v in data.items() if k not in ("base_model_name_or_path", "revision", "inference_mode")}
    return FinetuneSpec(method="lora" if data["peft_type"] == "LORA" else "peft", peft_config=data)


def prepare(workload: Workload, spec: FinetuneSpec | None, prep: ModelPrep | None = None) -> Workload:
    """The workload with its model built as the fine-tuning front end builds it."""
    spec = spec or FinetuneSpec()
    prep = prep or ModelPrep()
    if spec.method == "full" and prep.is_default:
        return workload
    inner = workload.build_model

    def build_model():
        return prepare_model(inner(), spec, prep)

    extra = dict(workload.extra, finetune=spec.describe())
    # the model is no longer what its HF config alone builds: block-once tracing (memplan.trace.blocks),
    # which rebuilds shallower models from the config, must not apply; the config stays readable
    extra["base_hf_config"] = extra.pop("hf_config", None)
    extra.pop("hf_model_class", None)
    return replace(workload, build_model=build_model, extra=extra)


def prepare_model(model, spec: FinetuneSpec, prep: ModelPrep):
    """Apply `prep` and `spec` to a freshly built model (real or fake tensors)."""
    import torch

    dtype = _load_dtype(model, prep.load_dtype)
    if dtype is not None and dtype != torch.float32:
        model = model.to(dtype)
    if spec.method in ("lora", "peft"):
        model = _apply_peft(model, spec, upcast=prep.upcast_trainable)
    elif spec.method == "freeze":
        _freeze(model, spec)
    if prep.upcast_trainable:
        for p in model.parameters():
            if p.requires_grad and p.dtype != torch.float32:
                p.data = p.data.float()
    if prep.activation_checkpointing is not None:
        _enable_checkpointing(model, prep.activation_checkpointing)
    if prep.amp_outputs_fp32:
        _wrap_outputs_fp32(model)
    return model


def _load_dtype(model, name: str | None):
    """`auto`: the checkpoint's dtype as its config records it (`dtype`, formerly `torch_dtype`)."""
    import torch

    if not name:
        return None
    if name == "auto":
        cfg = getattr(model, "config", None)
        name = getattr(cfg, "dtype", None) or getattr(cfg, "torch_dtype", None)
        if name is None:
            return None
    if isinstance(name, torch.dtype):
        return name
    dtype = getattr(torch, str(name).replace("torch.", ""), None)
    if not isinstance(dtype, torch.dtype):
        raise UserError(f"unknown weight dtype {name!r}")
    return dtype


def _apply_peft(model, spec: FinetuneSpec, upcast: bool):
    try:
        import peft
    except ImportError:
        raise UserError("LoRA / PEFT needs the peft package: pip install 'memplan[peft]'") from None
    try:
        config = peft.get_peft_config(dict(spec.peft_config))
    except (TypeError, ValueError) as exc:
        raise UserError(f"PEFT config rejected by peft {peft.__version__}: {exc}") from None
    try:
        return peft.get_peft_model(model, config, autocast_adapter_dtype=upcast)
    except ValueError as exc:   # e.g. target modules not found in the base model
        raise UserError(f"peft.get_peft_model: {exc}") from None


def _freeze(model, spec: FinetuneSpec) -> None:
    """LLaMA-Factory's freeze tuning (model/adapter.py `_setup_freeze_tuning`): the last (or, negative,
    first) N of `num_hidden_layers` decoder layers train; `freeze_modules` other than `all` narrow it."""
    n_layers = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    if not n_layers:
        raise UserError("freeze tuning needs a model config with num_hidden_layers")
    n = spec.freeze_layers
    ids = range(max(0, n_layers - n), n_layers) if n > 0 else range(min(-n, n_layers))
    trainable = [f".{i}.{'' if m == 'all' else m}" for i in ids for m in spec.freeze_modules]
    for name, p in model.named_parameters():
        p.requires_grad_(any(t in name for t in trainable))


def _enable_checkpointing(model, kwargs: dict) -> None:
    kw = dict(kwargs)
    every = kw.pop("every_n_layers", 1)
    if hasattr(model, "activation_checkpointing_enable"):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=kw or None, every_n_layers=every)
    elif hasattr(model, "gradient_checkpointing_enable"):
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kw or None)
    else:
        raise UserError(f"{type(model).__name__} has no gradient_checkpointing_enable(): "
                        "use --checkpoint GLOB instead")


def _wrap_outputs_fp32(model) -> None:
    """accelerate/utils/operations.py `convert_outputs_to_fp32`: fp16/bf16 tensors in the forward's
    output become fp32 copies (the original stays alive as long as autograd needs it)."""
    import torch
    from torch.utils._pytree import tree_map_only

    forward = model.forward

    def to_fp32(t):
        return t.float() if t.dtype in (torch.float16, torch.bfloat16) else t

    def fwd(*args, **kwargs):
        out = forward(*args, **kwargs)
        if hasattr(out, "keys") and hasattr(out, "__setitem__"):   # ModelOutput: convert in place
            for k in list(out.keys()):
                out[k] = tree_map_only(torch.Tensor, to_fp32, out[k])
            return out
        return tree_map_only(torch.Tensor, to_fp32, out)

    model.forward = fwd
