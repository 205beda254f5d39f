"""A LLaMA-Factory training YAML (`llamafactory-cli train FILE.yaml`) as a memplan job.

LLaMA-Factory parses the file into its ModelArguments, DataArguments, TrainingArguments (a subclass of
transformers' Seq2SeqTrainingArguments), FinetuningArguments and GeneratingArguments
(`src/llamafactory/hparams/parser.py`, `_TRAIN_ARGS`) and refuses unknown keys. What it does to the model
that changes memory (hiyouga/LLaMA-Factory at ff6d4d12):
- weights load in the checkpoint's dtype (`loader.py`: `torch_dtype="auto"`);
- `finetuning_type` (default `lora`): LoRA through PEFT with `lora_rank` (8), `lora_alpha` (default
  2 x rank, `FinetuningArguments.__post_init__`), `lora_dropout` (0), `lora_target` (`all`: every Linear but
  `lm_head`, `model_utils/misc.py find_all_linear_modules`); `freeze`: the last `freeze_trainable_layers` (2)
  layers train; `full`: everything trains;
- trainable parameters are cast to fp32 unless `pure_bf16` or DeepSpeed ZeRO-3 (`model/adapter.py init_adapter`);
- gradient checkpointing is on unless `disable_gradient_checkpointing`, reentrant unless `use_reentrant_gc: false`
  (`model_utils/checkpointing.py prepare_model_for_training`);
- `cutoff_len` (2048) bounds a sample's tokens: memplan sizes batches padded to it (the worst case);
- `flash_attn` (`auto`): `disabled` selects eager attention (full attention matrices), the others SDPA /
  flash kernels, which memplan models per target device.
The TrainingArguments keys are read as for a plain Trainer (`memplan.configs.trainer_args`).

Known limitations: `quantization_bit` (QLoRA), `oft`, and stages other than pt/sft are refused (not modelled);
freeze tuning checkpoints every layer (LLaMA-Factory checkpoints only layers with trainable parameters).
"""
from __future__ import annotations

from memplan.configs._job import JobConfig, KeyUse, as_bool, as_int, check_unknown, known_keys, trainer_keys
from memplan.configs.trainer_args import WHY_IGNORED, _deepspeed, ignored_rows, read_trainer_keys
from memplan.errors import UserError
from memplan.finetune import FinetuneSpec, ModelPrep, lora_spec
from memplan.workload import TrainConfig

CUTOFF_LEN_DEFAULT = 2048          # data_args.py
FLASH_ATTN = {"auto": None, "sdpa": "sdpa", "fa2": "sdpa", "fa3": "sdpa", "disabled": "eager"}
READ = ("model_name_or_path", "finetuning_type", "lora_rank", "lora_alpha", "lora_dropout", "lora_target",
        "use_dora", "additional_target", "freeze_trainable_layers", "freeze_trainable_modules", "cutoff_len",
        "disable_gradient_checkpointing", "use_reentrant_gc", "flash_attn", "pure_bf16", "stage",
        "quantization_bit", "use_rslora")
LF_WHY = dict(WHY_IGNORED, template="prompt formatting: sequence length comes from cutoff_len",
              dataset="the data itself: batches are sized by cutoff_len", packing="packing fills cutoff_len "
              "(the size memplan uses)", trust_remote_code="the model is built from its config")


def read(data: dict, source: str) -> JobConfig:
    keys = known_keys()["llamafactory"]
    known = trainer_keys().union(*map(set, keys.values()))
    check_unknown(data, known, source, "LLaMA-Factory (model/data/training/finetuning/generating arguments)")
    s, used, read_keys = read_trainer_keys(data, source)
    stage = data.get("stage", "sft")
    if stage not in ("sft", "pt"):
        raise UserError(f"{source}: stage {stage!r} is not modelled by memplan (pt and sft are; "
                        f"{stage} runs extra models)")
    if data.get("quantization_bit") is not None:
        raise UserError(f"{source}: quantization_bit (QLoRA) is not modelled by memplan yet")
    model = data.get("model_name_or_path")
    if model:
        used.append(KeyUse("model_name_or_path", model, "the model's config.json (local dir or HF cache)"))
    pure_bf16 = as_bool("pure_bf16", data.get("pure_bf16", False))
    if pure_bf16 and s["precision"] == "fp16-amp":
        raise UserError(f"{source}: pure_bf16 and fp16 are both set (contradictory)")
    precision = "bf16" if pure_bf16 else s["precision"]
    if pure_bf16:
        used.append(KeyUse("pure_bf16", True, "precision bf16 (bf16 weights, no autocast)"))
    spec = _finetune(data, used, source)
    seq = as_int("cutoff_len", data.get("cutoff_len", CUTOFF_LEN_DEFAULT))
    used.append(KeyUse("cutoff_len", seq, "sequence length (batches padded to it: worst case)"))
    ds = _deepspeed(s["deepspeed"], source, None)
    zero3 = ds is not None and ds.stage == 3
    prep = ModelPrep(load_dtype="auto", upcast_trainable=not pure_bf16 and not zero3,
                     activation_checkpointing=_checkpointing(data, s, used),
                     amp_outputs_fp32=precision.endswith("-amp"))
    used.append(KeyUse("(LLaMA-Factory)", "", "weights load in the checkpoint's dtype; trainable parameters "
                       + ("cast to fp32" if prep.upcast_trainable else "kept in it (pure_bf16 / ZeRO-3)")))
    attn = FLASH_ATTN.get(str(data.get("flash_attn", "auto")))
    if "flash_attn" in data:
        if str(data["flash_attn"]) not in FLASH_ATTN:
            raise UserError(f"{source}: flash_attn {data['flash_attn']!r} (expected {', '.join(FLASH_ATTN)})")
        used.append(KeyUse("flash_attn", data["flash_attn"], f"attention {attn or 'default'}"))
    train = TrainConfig(batch_size=s["batch_size"], seq_len=seq, precision=precision, optimizer=s["optimizer"],
                        optimizer_impl=s["optimizer_impl"], lr=s.get("lr", 1e-4), grad_accum=s["grad_accum"],
                        clip_grad_norm=s["clip_grad_norm"], keep_outputs=False).validate()
    if ds is not None:
        ds = _deepspeed(s["deepspeed"], source, train)
    ignored = [(k, LF_WHY.get(k, w)) for k, w in ignored_rows(data, read_keys | set(READ))]
    ignored += _not_applying(data, spec)
    return JobConfig(source=source, format="llamafactory", train=train, model=model, finetune=spec, prep=prep,
                     deepspeed=ds, sharding=s["sharding"], attn_implementation=attn, used=tuple(used),
                     ignored=tuple(ignored))


def _finetune(data: dict, used: list, source: str) -> FinetuneSpec:
    kind = data.get("finetuning_type", "lora")
    if kind == "full":
        used.append(KeyUse("finetuning_type", "full", "every parameter trains"))
        return FinetuneSpec()
    if kind == "freeze":
        n = int(data.get("freeze_trainable_layers", 2))
        mods = data.get("freeze_trainable_modules", "all")
        mods = tuple(m.strip() for m in (mods.split(",") if isinstance(mods, str) else mods))
        used.append(KeyUse("finetuning_type", "freeze", f"layers trainable: last {n} ({', '.join(mods)})"
                           if n > 0 else f"layers trainable: first {-n}"))
        return FinetuneSpec(method="freeze", freeze_layers=n, freeze_modules=mods)
    if kind != "lora":
        raise UserError(f"{source}: finetuning_type {kind!r} is not modelled by memplan (full, freeze, lora are)")
    rank = as_int("lora_rank", data.get("lora_rank", 8))
    alpha = data.get("lora_alpha") or rank * 2
    target = data.get("lora_target", "all")
    target = "all-linear" if target in ("all", ["all"]) else target
    extra = data.get("additional_target")
    spec = lora_spec(rank=rank, alpha=alpha, dropout=float(data.get("lora_dropout", 0.0)), target=target,
                     use_dora=as_bool("use_dora", data.get("use_dora", False)),
                     modules_to_save=extra.split(",") if isinstance(extra, str) else extra)
    used.append(KeyUse("finetuning_type", "lora", spec.describe()))
    return spec


def _checkpointing(data: dict, s: dict, used: list) -> dict | None:
    off = as_bool("disable_gradient_checkpointing", data.get("disable_gradient_checkpointing", False))
    if off and s["checkpointing"] is not None:
        raise UserError("disable_gradient_checkpointing is true and gradient_checkpointing is true (contradictory)")
    if off:
        used.append(KeyUse("disable_gradient_checkpointing", True, "no activation checkpointing"))
        return None
    reentrant = as_bool("use_reentrant_gc", data.get("use_reentrant_gc", True))
    used.append(KeyUse("disable_gradient_checkpointing", data.get("disable_gradient_checkpointing", False),
                       f"activation checkpointing of every decoder layer (use_reentrant={reentrant})"))
    return {"use_reentrant": reentrant}


def _not_applying(data: dict, spec: FinetuneSpec) -> list[tuple[str, str]]:
    if spec.method == "lora":
        return []
    return [(k, f"finetuning_type is {spec.method}") for k in ("lora_rank", "lora_alpha", "lora_dropout",
                                                               "lora_target", "use_dora") if k in data]
