"""Options shared by analyze, plan and validate: which workload, how it is trained, on what device."""
from __future__ import annotations

import click

from memplan.errors import UserError
from memplan.workload import (MOE_ROUTINGS, OPTIMIZER_IMPLS, OPTIMIZERS, PRECISIONS, REDUCE_DTYPES, SHARDINGS,
                              TrainConfig, check_precision_sharding)


def workload_options(fn):
    opts = [
        click.argument("model", required=False, type=click.Path(dir_okay=True)),
        click.option("--hf-config", type=click.Path(), help="Hugging Face config.json (no weights needed)."),
        click.option("--task", default=None, help="HF head when the config does not say "
                     "(causal-lm, masked-lm, seq2seq-lm, sequence-classification, image-classification)."),
        click.option("-b", "--batch-size", type=int, default=1, show_default=True, help="Micro-batch size."),
        click.option("--seq-len", type=int, default=None, help="Sequence length (passed to make_batch)."),
        click.option("--precision", type=click.Choice(PRECISIONS), default="fp32", show_default=True),
        click.option("--reduce-dtype", type=click.Choice(REDUCE_DTYPES), default=None,
                     help="With --precision bf16-mp: FSDP's gradient reduce dtype (default: the param dtype, bf16)."),
        click.option("--autocast-cache/--no-autocast-cache", default=True, show_default=True,
                     help="torch.autocast(cache_enabled=...) of fp16-amp / bf16-amp."),
        click.option("--mp-autocast", is_flag=True,
                     help="With --precision bf16-mp: torch.autocast over the bf16 parameters too (HF accelerate does)."),
        click.option("--optimizer", type=click.Choice(OPTIMIZERS), default="adamw", show_default=True),
        click.option("--optimizer-impl", type=click.Choice(OPTIMIZER_IMPLS), default="default",
                     show_default=True, help="default = what torch picks on the target device."),
        click.option("--lr", type=float, default=1e-4, show_default=True, hidden=True),
        click.option("--grad-accum", type=int, default=1, show_default=True, help="Micro-steps per optimizer step."),
        click.option("--clip-grad-norm", type=float, default=None, help="Clip gradients to this norm."),
        click.option("--checkpoint", multiple=True, metavar="GLOB",
                     help="Activation-checkpoint modules whose name matches (repeatable), e.g. 'layers.*'."),
        click.option("--steps", type=int, default=2, show_default=True, help="Optimizer steps to trace."),
        click.option("--moe-routing", type=click.Choice(MOE_ROUTINGS), default="worst", show_default=True,
                     help="MoE router choices, unknown before training: worst = every token to the same top-k "
                          "experts (an upper bound); balanced = tokens spread evenly (a well-balanced router)."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def device_options(fn):
    opts = [
        click.option("--device", default=None,
                     help="Target device: a catalog name (see `memplan devices`), cuda/npu (the present one) or cpu."),
        click.option("--capacity", default=None, help="Usable device memory, e.g. 24GiB (overrides the catalog)."),
        click.option("--alloc-conf", default=None,
                     help="PYTORCH_CUDA_ALLOC_CONF / PYTORCH_NPU_ALLOC_CONF value to simulate (default: from the environment)."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def train_config(kw: dict) -> TrainConfig:
    """The TrainConfig the options describe (validated later, once, by the library call)."""
    return TrainConfig(
        batch_size=kw["batch_size"], seq_len=kw["seq_len"], precision=kw["precision"],
        optimizer=kw["optimizer"], optimizer_impl=kw["optimizer_impl"], lr=kw["lr"],
        grad_accum=kw["grad_accum"], clip_grad_norm=kw["clip_grad_norm"],
        checkpoint=tuple(kw["checkpoint"]), steps=kw["steps"], moe_routing=kw.get("moe_routing", "worst"),
        reduce_dtype=kw.get("reduce_dtype"), autocast_cache=kw.get("autocast_cache", True),
        mp_autocast=kw.get("mp_autocast", False),
    )


def precheck(kw: dict, model=None, hf_config=None, device=None, capacity=None, alloc_conf=None, *,
             need_budget: bool = False, report_path=None, report_check=None, plan_path=None,
             real_run: bool = False, sharding: str | None = None) -> TrainConfig:
    """Check every argument that can be checked without torch -- the training options, the model
    source, the device (the catalog is JSON), the capacity, the allocator configuration, the report
    name; for a real run (`real_run`) or the present NPU, that torch_npu is installed; that bf16-mp
    has an FSDP `sharding` (`"choose"`: the command picks one) -- so that a bad
    argument is answered at once, not after torch and the model file are imported. Returns the
    TrainConfig (the library call validates it again, cheaply)."""
    from memplan.compat import require_torch_npu
    from memplan.core.device import resolve_device
    from memplan.units import parse_capacity
    from memplan.workload import check_source, read_json

    cfg = train_config(kw).validate()
    if sharding != "choose":
        check_precision_sharding(cfg.precision, sharding)
    if plan_path:  # `validate --plan plan.json`: readable JSON (its keys are checked when it is applied)
        read_json(plan_path)
    if report_path:
        if report_check is None:
            from memplan.report.write import check_report_path as report_check
        report_check(report_path)
    if not kw.get("train_config") or model or hf_config:  # a train config may name the model itself
        check_source(model, hf_config)
    family = device.lower().split(":")[0] if device is not None else None
    if family in ("auto", "cuda", "npu"):
        if capacity is not None:  # the device itself is read later (that needs torch)
            parse_capacity(capacity)
    else:
        dev = resolve_device(device, capacity, alloc_conf)
        if dev.capacity_bytes is None and need_budget:
            raise UserError("plan needs a memory budget: give --device NAME or --capacity SIZE")
        family = dev.family if real_run else None
    if family == "npu":
        require_torch_npu(f"--device {device}")
    return cfg


def distributed_options(fn):
    opts = [
        click.option("--world-size", type=click.IntRange(min=1), default=None,
                     help="Data-parallel ranks: report the per-rank peak (see `memplan shard`)."),
        click.option("--sharding", type=click.Choice(SHARDINGS), default="ddp", show_default=True,
                     help="With --world-size: DDP, ZeRO-1/2/3 or FSDP2."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn
