"""From a `JobConfig` (and the command line) to the `Workload` memplan traces.

The model comes from the model file or `--hf-config` when given, else from the config's
`model_name_or_path` (a local directory, or a model id in the local Hugging Face cache); `--lora` /
`--peft-config` override the config's fine-tuning type. Nothing here imports torch.
"""
from __future__ import annotations

from dataclasses import replace

from memplan.configs._job import JobConfig
from memplan.errors import UserError
from memplan.finetune import FinetuneSpec, ModelPrep, prepare
from memplan.hf import load_hf_config
from memplan.workload import Workload, load_model_file


def job_workload(job: JobConfig | None, model: str | None = None, hf_config: str | None = None,
                 task: str | None = None, finetune: FinetuneSpec | None = None) -> Workload:
    """The workload of a job: its model, with the fine-tuning and model preparation applied."""
    if model and hf_config:
        raise UserError("give either a model file or --hf-config, not both")
    source = hf_config or (None if model else job.model if job else None)
    if source:
        wl = load_hf_config(source, task=task, attn_implementation=job.attn_implementation if job else None)
    elif model:
        wl = load_model_file(model)
    else:
        raise UserError("no model: give a model file, --hf-config, or a config with model_name_or_path")
    spec = finetune or (job.finetune if job else FinetuneSpec())
    prep = job.prep if job else ModelPrep()
    if model and prep.load_dtype == "auto":
        prep = replace(prep, load_dtype=None)   # a model file's model has no checkpoint dtype
    return prepare(wl, spec, prep)
