"""Hugging Face configs as workloads: the model is built by `transformers` from `config.json` alone
(random init, no weights, no network).

The head is the config's first `architectures` entry when transformers has it, else a causal LM.
The batch: `input_ids` + `labels` of shape (batch, seq_len) for causal/masked LMs and seq2seq models,
`input_ids` + `labels` (batch,) for sequence classification, `pixel_values` + `labels` for image
classification, `input_values` + `labels` for audio classification.
"""
from __future__ import annotations

import os

from memplan import compat, hfscan
from memplan.errors import UserError
from memplan.workload import Workload, read_json

DEFAULT_SEQ_LEN = 1024


def _transformers():
    try:
        import transformers
    except ImportError as exc:
        mismatch = compat.transformers_mismatch()
        if mismatch:
            raise UserError(f"--hf-config: transformers does not import ({compat.describe(exc)}); {mismatch}") from exc
        if compat.installed("transformers") is not None:
            raise UserError(f"--hf-config: transformers does not import: {compat.describe(exc)}") from exc
        raise UserError("--hf-config needs transformers: pip install 'memplan[hf]'") from exc
    hfscan.install()   # before transformers.models is imported: its folder scanned once, not twice
    transformers.logging.set_verbosity_error()
    return transformers


def config_from_dict(data: dict, source: str = "<dict>"):
    tf = _transformers()
    model_type = data.get("model_type")
    if not model_type:
        raise UserError(f"{source}: no 'model_type' in the config (is this a Hugging Face config.json?)")
    try:
        cls = tf.CONFIG_MAPPING[model_type]
    except KeyError:
        raise UserError(
            f"{source}: model_type {model_type!r} is not known to transformers {tf.__version__}"
        ) from None
    cfg = cls.from_dict({k: v for k, v in data.items() if k not in ("transformers_version",)})
    return cfg


def model_class(config, task: str | None = None):
    tf = _transformers()
    if task:
        auto = {
            "causal-lm": "AutoModelForCausalLM", "masked-lm": "AutoModelForMaskedLM",
            "seq2seq-lm": "AutoModelForSeq2SeqLM", "sequence-classification": "AutoModelForSequenceClassification",
            "image-classification": "AutoModelForImageClassification",
            "audio-classification": "AutoModelForAudioClassification",
        }.get(task)
        if auto is None:
            raise UserError(f"unknown task {task!r}")
        return getattr(tf, auto), auto
    for arch in getattr(config, "architectures", None) or []:
        cls = getattr(tf, arch, None)
        if cls is not None:
            return cls, arch
    return tf.AutoModelForCausalLM, "AutoModelForCausalLM"


def _kind(arch_name: str) -> str:
    n = arch_name
    if "SequenceClassification" in n:
        return "seqcls"
    if "ImageClassification" in n:
        return "imgcls"
    if "AudioClassification" in n:
        return "audiocls"
    if "Seq2Seq" in n or "ConditionalGeneration" in n:
        return "seq2seq"
    return "lm"


def workload_from_config(config, *, name: str, task: str | None = None, source: str = "") -> Workload:
    import torch

    cls, arch = model_class(config, task)
    kind = _kind(arch if task is None else cls.__name__ + (task or ""))
    if task == "sequence-classification":
        kind = "seqcls"
    if hasattr(config, "use_cache"):
        config.use_cache = False  # training does not keep a KV cache
    vocab = getattr(config, "vocab_size", None) or 1000
    max_pos = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    default_seq = min(DEFAULT_SEQ_LEN, max_pos) if max_pos else DEFAULT_SEQ_LEN

    def build_model():
        if hasattr(cls, "from_config"):
            return cls.from_config(config)
        return cls(config)

    def make_batch(batch_size: int, seq_len: int = default_seq):
        if kind == "imgcls":
            size = getattr(config, "image_size", 224)
            size = size if isinstance(size, int) else size[0]
            chans = getattr(config, "num_channels", 3)
            labels = torch.randint(0, max(getattr(config, "num_labels", 2), 1), (batch_size,))
            return {"pixel_values": torch.randn(batch_size, chans, size, size), "labels": labels}
        if kind == "audiocls":
            labels = torch.randint(0, max(getattr(config, "num_labels", 2), 1), (batch_size,))
            return {"input_values": torch.randn(batch_size, seq_len * 16), "labels": labels}
        ids = torch.randint(0, vocab, (batch_size, seq_len))
        if kind == "seqcls":
            labels = torch.randint(0, max(getattr(config, "num_labels", 2), 1), (batch_size,))
            return {"input_ids": ids, "labels": labels}
        return {"input_ids": ids, "labels": ids.clone()}

    return Workload(name=name, build_model=build_model, make_batch=make_batch, source=source,
                    default_seq_len=default_seq,
                    extra={"architecture": arch, "kind": kind, "hf_config": config, "task": task,
                           "hf_model_class": cls})


def resolve_config_path(name: str) -> str:
    """A config.json, a model directory holding one, or a model id whose config.json is in the local
    Hugging Face cache (`huggingface_hub.try_to_load_from_cache`: no network, never weights)."""
    if os.path.isdir(name):
        path = os.path.join(name, "config.json")
        if not os.path.exists(path):
            raise UserError(f"{name} is a directory without config.json")
        return path
    if os.path.exists(name) or name.endswith(".json") or name.count("/") != 1:
        return name
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return name
    cached = try_to_load_from_cache(name, "config.json")
    if isinstance(cached, str):
        return cached
    raise UserError(f"{name}: no such file, and no config.json for model id {name!r} in the local Hugging Face "
                    f"cache (fetch it alone: huggingface-cli download {name} config.json)")


def load_hf_config(path: str, task: str | None = None, attn_implementation: str | None = None) -> Workload:
    path = resolve_config_path(path)
    data = read_json(path)
    config = config_from_dict(data, source=path)
    if attn_implementation:
        config._attn_implementation = attn_implementation
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "config":   # a model directory (or cache snapshot): name it after the directory
        stem = os.path.basename(os.path.dirname(os.path.abspath(path)))
    name = data.get("_name_or_path") or stem
    return workload_from_config(config, name=str(name), task=task, source=path)
