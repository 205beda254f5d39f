"""Options shared by analyze, plan and validate: which workload, how it is trained, on what device."""
from __future__ import annotations

import click

from memplan.workload import OPTIMIZER_IMPLS, OPTIMIZERS, PRECISIONS, SHARDINGS, TrainConfig


def workload_options(fn):
    opts = [
        click.argument("model", required=False, type=click.Path(dir_okay=True)),
        click.option("--hf-config", type=click.Path(), help="Hugging Face config.json (no weights needed)."),
        click.option("--task", default=None, help="HF head when the config does not say "
                     "(causal-lm, masked-lm, seq2seq-lm, sequence-classification, image-classification)."),
        click.option("-b", "--batch-size", type=int, default=1, show_default=True, help="Micro-batch size."),
        click.option("--seq-len", type=int, default=None, help="Sequence length (passed to make_batch)."),
        click.option("--precision", type=click.Choice(PRECISIONS), default="fp32", show_default=True),
        click.option("--optimizer", type=click.Choice(OPTIMIZERS), default="adamw", show_default=True),
        click.option("--optimizer-impl", type=click.Choice(OPTIMIZER_IMPLS), default="default",
                     show_default=True, help="default = what torch picks on the target device."),
        click.option("--lr", type=float, default=1e-4, show_default=True, hidden=True),
        click.option("--grad-accum", type=int, default=1, show_default=True, help="Micro-steps per optimizer step."),
        click.option("--clip-grad-norm", type=float, default=None, help="Clip gradients to this norm."),
        click.option("--checkpoint", multiple=True, metavar="GLOB",
                     help="Activation-checkpoint modules whose name matches (repeatable), e.g. 'layers.*'."),
        click.option("--steps", type=int, default=2, show_default=True, help="Optimizer steps to trace."),
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
        checkpoint=tuple(kw["checkpoint"]), steps=kw["steps"],
    )


def distributed_options(fn):
    opts = [
        click.option("--world-size", type=int, default=None,
                     help="Data-parallel ranks: report the per-rank peak (see `memplan shard`)."),
        click.option("--sharding", type=click.Choice(SHARDINGS), default="ddp", show_default=True,
                     help="With --world-size: DDP, ZeRO-1/2/3 or FSDP2."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn
