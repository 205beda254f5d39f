"""memplan's reading of LLaMA-Factory YAMLs vs LLaMA-Factory's own argument parser.

For each case (the fixture recipe fixtures/train_configs/llamafactory_lora_sft.yaml and variants of it:
full / freeze / LoRA on q,v, fp16 / fp32, checkpointing off, non-reentrant, eager attention,
defaults), `memplan.configs.read_train_config` reads the file and `llamafactory.hparams.get_train_args`
parses the same mapping; every value memplan reads is compared with the one LLaMA-Factory resolves
(defaults included). Two things are set for LLaMA-Factory's parser only: `use_cpu: true` (transformers
refuses bf16 without a GPU) and no `deepspeed` key (its parser refuses DeepSpeed outside torchrun).
`pure_bf16` is not compared: LLaMA-Factory's parser refuses it on a device without bf16 support.

Needs llamafactory importable (not in memplan's venv). The environment of the committed results: a venv
with memplan's torch 2.13 + `pip install --no-deps llamafactory==0.9.5` + `datasets omegaconf`, and, since
llamafactory 0.9.5 takes transformers <= 5.6.0 (5.23 dropped `warmup_ratio`), an overlay directory
`pip install --no-deps --target <overlay> transformers==5.6.0 tokenizers==0.22.2 "huggingface-hub<2"`
(+ `httpx<1` with its deps) first on PYTHONPATH:

    DISABLE_VERSION_CHECK=1 PYTHONPATH=<overlay>:$PWD <venv with llamafactory>/bin/python benchmarks/llamafactory_parity.py
Writes benchmarks/results/llamafactory_parity.{json,md}.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIXTURE = ROOT / "fixtures/train_configs/llamafactory_lora_sft.yaml"
MINIMAL = {"model_name_or_path": "fixtures/hf/llama_small.json", "stage": "sft", "do_train": True,
           "dataset": "identity", "template": "llama3", "output_dir": "out"}
CASES = {  # name: (base, edits; None removes a key)
    "fixture (LoRA all, bf16)": ("fixture", {}),
    "full, fp16": ("fixture", {"finetuning_type": "full", "bf16": None, "fp16": True}),
    "freeze 4 (mlp, self_attn)": ("fixture", {"finetuning_type": "freeze", "freeze_trainable_layers": 4,
                                              "freeze_trainable_modules": "mlp,self_attn", "lora_rank": None,
                                              "lora_target": None}),
    "LoRA q,v r16, no checkpointing": ("fixture", {"lora_rank": 16, "lora_target": "q_proj,v_proj",
                                                    "lora_dropout": 0.05, "disable_gradient_checkpointing": True}),
    "fp32, non-reentrant, eager, clip 0.5": ("fixture", {"bf16": None, "use_reentrant_gc": False, "flash_attn": "disabled",
                                                              "optim": "adamw_torch", "max_grad_norm": 0.5,
                                                              "cutoff_len": None}),
    "defaults": ("minimal", {}),
}


def case_mapping(base: str, edits: dict) -> dict:
    import yaml

    d = dict(yaml.safe_load(FIXTURE.read_text())) if base == "fixture" else dict(MINIMAL)
    d.pop("deepspeed", None)
    for k, v in edits.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return d


def memplan_view(d: dict) -> dict:
    from memplan.configs import read_train_config

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        import yaml

        yaml.safe_dump(d, f)
    try:
        job = read_train_config(f.name)
    finally:
        os.unlink(f.name)
    t, spec, used = job.train, job.finetune, {u.key: u.value for u in job.used}
    c = spec.peft_config
    target = c.get("target_modules")
    ck = job.prep.activation_checkpointing
    return {"per_device_train_batch_size": t.batch_size, "gradient_accumulation_steps": t.grad_accum,
            "precision": t.precision, "optim": used.get("optim"), "max_grad_norm": t.clip_grad_norm,
            "cutoff_len": t.seq_len, "finetuning_type": spec.method,
            "lora_rank": c.get("r") if spec.method == "lora" else None,
            "lora_alpha": c.get("lora_alpha") if spec.method == "lora" else None,
            "lora_dropout": c.get("lora_dropout") if spec.method == "lora" else None,
            "lora_target": ("all" if target == "all-linear" else ",".join(sorted(target))) if spec.method == "lora" else None,
            "freeze_trainable_layers": spec.freeze_layers if spec.method == "freeze" else None,
            "freeze_trainable_modules": ",".join(spec.freeze_modules) if spec.method == "freeze" else None,
            "gradient_checkpointing": ck is not None, "use_reentrant_gc": ck.get("use_reentrant") if ck else None,
            "flash_attn": str(used.get("flash_attn", "auto"))}


def llamafactory_view(d: dict) -> dict:
    from llamafactory.hparams import get_train_args

    model, data, train, ft, _gen = get_train_args({**d, "use_cpu": True})
    lora = ft.finetuning_type == "lora"
    targets = ft.lora_target if isinstance(ft.lora_target, list) else [ft.lora_target]
    precision = "bf16" if ft.pure_bf16 else "bf16-amp" if train.bf16 else "fp16-amp" if train.fp16 else "fp32"
    optim = getattr(train.optim, "value", train.optim)
    mods = ft.freeze_trainable_modules
    return {"per_device_train_batch_size": train.per_device_train_batch_size,
            "gradient_accumulation_steps": train.gradient_accumulation_steps, "precision": precision,
            "optim": str(optim), "max_grad_norm": train.max_grad_norm or None, "cutoff_len": data.cutoff_len,
            "finetuning_type": ft.finetuning_type, "lora_rank": ft.lora_rank if lora else None,
            "lora_alpha": ft.lora_alpha if lora else None, "lora_dropout": ft.lora_dropout if lora else None,
            "lora_target": ",".join(sorted(t.strip() for t in targets)) if lora else None,
            "freeze_trainable_layers": ft.freeze_trainable_layers if ft.finetuning_type == "freeze" else None,
            "freeze_trainable_modules": (",".join(mods) if isinstance(mods, list) else mods)
            if ft.finetuning_type == "freeze" else None,
            "gradient_checkpointing": not model.disable_gradient_checkpointing,
            "use_reentrant_gc": model.use_reentrant_gc if not model.disable_gradient_checkpointing else None,
            "flash_attn": str(getattr(model.flash_attn, "value", model.flash_attn))}


def main() -> int:
    os.chdir(ROOT)
    os.environ.setdefault("DISABLE_VERSION_CHECK", "1")
    import llamafactory
    import transformers

    rows = []
    for name, (base, edits) in CASES.items():
        d = case_mapping(base, edits)
        with tempfile.TemporaryDirectory() as out:
            d.setdefault("output_dir", out)
            mine, theirs = memplan_view(d), llamafactory_view(d)
        for key in mine:
            rows.append({"case": name, "key": key, "memplan": mine[key], "llamafactory": theirs[key],
                         "equal": mine[key] == theirs[key]})
    res = {"llamafactory": llamafactory.__version__, "transformers": transformers.__version__, "rows": rows,
           "equal": sum(r["equal"] for r in rows), "compared": len(rows)}
    out = ROOT / "benchmarks/results/llamafactory_parity"
    out.with_suffix(".json").write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
    L = ["# memplan's LLaMA-Factory reading vs LLaMA-Factory's own parser", "",
         f"llamafactory {res['llamafactory']} (`llamafactory.hparams.get_train_args`), transformers "
         f"{res['transformers']}. For LLaMA-Factory only: `use_cpu: true` added and `deepspeed` removed "
         "(see the script; pure_bf16 is refused by its parser on a CPU). Values compared after both sides resolve "
         "defaults. **{equal} of {compared} values equal.**".format(**res), "",
         "| case | key | memplan | LLaMA-Factory | equal |", "|---|---|---|---|---|"]
    L += [f"| {r['case']} | {r['key']} | {r['memplan']} | {r['llamafactory']} | {'yes' if r['equal'] else '**no**'} |"
          for r in rows]
    out.with_suffix(".md").write_text("\n".join(L) + "\n", encoding="utf-8")
    print("\n".join(L))
    return 0 if res["equal"] == res["compared"] else 1


if __name__ == "__main__":
    sys.exit(main())
