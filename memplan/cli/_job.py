"""Options that describe the job as people launch it: a Trainer / LLaMA-Factory config, LoRA / PEFT,
DeepSpeed. `job_inputs` turns them (and the usual workload options) into the workload and TrainConfig."""
from __future__ import annotations

import click

TRAIN_FLAGS = {"batch_size": "batch_size", "seq_len": "seq_len", "precision": "precision",
               "optimizer": "optimizer", "optimizer_impl": "optimizer_impl", "lr": "lr",
               "grad_accum": "grad_accum", "clip_grad_norm": "clip_grad_norm", "steps": "steps",
               "reduce_dtype": "reduce_dtype", "autocast_cache": "autocast_cache", "mp_autocast": "mp_autocast"}


def job_options(fn):
    opts = [
        click.option("--train-config", type=click.Path(dir_okay=False), default=None,
                     help="HF TrainingArguments or LLaMA-Factory training file (JSON / YAML): batch, precision, "
                          "optimizer, checkpointing, LoRA, DeepSpeed from it (see docs/train_configs.md); "
                          "options given explicitly override it."),
        click.option("--lora", default=None, metavar="SPEC",
                     help="Train a LoRA adapter: RANK or r=16,alpha=32,dropout=0.05,target=q_proj+v_proj "
                          "(target=all-linear for every Linear but the output layer)."),
        click.option("--peft-config", type=click.Path(), default=None,
                     help="A PEFT adapter_config.json (or its directory): any PEFT method."),
        click.option("--deepspeed", "deepspeed_config", type=click.Path(dir_okay=False), default=None,
                     help="DeepSpeed config JSON: per-rank device and host memory of its ZeRO stage "
                          "(with --world-size)."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def job_inputs(model, hf_config, task, kw: dict):
    """(workload, TrainConfig, JobConfig or None) from the command line."""
    from memplan.cli._options import train_config
    from memplan.configs import read_train_config
    from memplan.configs.build import job_workload
    from memplan.errors import UserError
    from memplan.finetune import parse_lora_option, read_peft_config

    job = read_train_config(kw["train_config"]) if kw.get("train_config") else None
    if kw.get("lora") and kw.get("peft_config"):
        raise UserError("give either --lora or --peft-config, not both")
    spec = (parse_lora_option(kw["lora"]) if kw.get("lora") else
            read_peft_config(kw["peft_config"]) if kw.get("peft_config") else None)
    if job is None:
        cfg = train_config(kw)
    else:
        ctx = click.get_current_context()
        explicit = {k: kw[k] for k in TRAIN_FLAGS if k in kw and
                    ctx.get_parameter_source(k) not in (None, click.core.ParameterSource.DEFAULT)}
        if kw.get("checkpoint"):
            explicit["checkpoint"] = tuple(kw["checkpoint"])
        cfg = job.train.with_(**explicit).validate()
    workload = _settled(job_workload, job, model, hf_config, task, spec)
    return workload, cfg, job


def _settled(load, *args):
    """`load(*args)` (which imports torch and transformers) without the collector's full passes over the
    growing heap of their modules (about a second of a process), then that heap frozen until the command
    ends: every later collection (each trace collects at its start and per step) leaves it alone."""
    import gc

    from memplan.step import frozen_heap

    was = gc.isenabled()
    gc.disable()
    try:
        return load(*args)
    finally:
        ctx = click.get_current_context(silent=True)
        if ctx is not None:
            ctx.with_resource(frozen_heap(collect=False))
        if was:
            gc.enable()


def deepspeed_of(job, kw, cfg):
    """The DeepSpeed config of the command line (--deepspeed wins over the train config's); its "auto"
    precision follows the TrainConfig `cfg`."""
    from memplan.configs import read_deepspeed

    if kw.get("deepspeed_config"):
        return read_deepspeed(kw["deepspeed_config"], train=cfg)
    return job.deepspeed if job is not None else None
