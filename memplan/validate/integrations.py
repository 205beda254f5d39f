"""Pre-flight checks where training scripts already are: a Hugging Face `TrainerCallback` and a Lightning
`Callback`. Both are optional imports: the classes are built on first access, so importing this module needs
neither transformers nor lightning.

    from memplan.validate.integrations import HFPreflightCallback
    trainer = Trainer(model, args, train_dataset=ds, callbacks=[HFPreflightCallback(seq_len=2048)])

    from memplan.validate.integrations import LightningPreflightCallback
    L.Trainer(callbacks=[LightningPreflightCallback(batch_fn=make_batch)])

At train start the callback reads the training set-up (per-device batch size, gradient accumulation,
precision, clipping, the optimizer the trainer built, the device), traces one steady-state step of a
CPU-side structural copy of the model on fake tensors (the real model and its weights are not touched) and
raises `MemoryPlanError` (with the breakdown and the top change) when it cannot fit, before the first
real batch. `raise_on_misfit=False` logs a warning instead. The estimate is kept on `callback.estimate`.

The batch: `batch_fn(batch_size)` when given; otherwise one batch is collated from the first examples
of the train dataloader's *dataset* with its own `collate_fn` (no sampler, no RNG, no device transfer),
and a batch of any size is synthesised with the same keys, dtypes and trailing shapes (attention masks all
ones, everything else zeros).

Known limitations: a collated sample is padded to the longest of its few examples; pass `seq_len=` (the
longest sequence the run will see) to size the sequence dimension for the worst case. Iterable datasets
need `batch_fn`. Lightning: `training_step` runs on the copy with `self.log` disabled.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from memplan.errors import MemoryPlanError, UserError
from memplan.validate.preflight import clone_on_cpu
from memplan.validate.preflight import preflight

log = logging.getLogger("memplan")

__all__ = ["HFPreflightCallback", "LightningPreflightCallback", "batch_fn_from_loader", "run_preflight"]


# ---------------------------------------------------------------------------------------------------
def _spec(obj, n: int, seq_len: int | None, seq_dim: int | None, key: str = ""):
    import torch

    if isinstance(obj, torch.Tensor):
        batched = obj.dim() >= 1 and obj.shape[0] == n
        rest = list(obj.shape[1:] if batched else obj.shape)
        if batched and seq_len is not None and len(rest) >= 1 and seq_dim is not None and rest[0] == seq_dim:
            rest[0] = seq_len
        fill = 1 if "mask" in key else 0
        return ("t", obj.dtype, tuple(rest), batched, fill)
    if isinstance(obj, dict) or hasattr(obj, "keys") and hasattr(obj, "__getitem__"):
        return ("d", type(obj), {k: _spec(obj[k], n, seq_len, seq_dim, str(k)) for k in obj.keys()})
    if isinstance(obj, (tuple, list)):
        return ("s", type(obj), [_spec(x, n, seq_len, seq_dim, key) for x in obj])
    return ("c", obj)


def _make(spec, bs: int):
    import torch

    kind = spec[0]
    if kind == "t":
        _, dtype, rest, batched, fill = spec
        shape = (bs, *rest) if batched else rest
        return (torch.ones if fill else torch.zeros)(shape, dtype=dtype)
    if kind == "d":
        items = {k: _make(v, bs) for k, v in spec[2].items()}
        return items if spec[1] is dict else dict(items)
    if kind == "s":
        vals = [_make(v, bs) for v in spec[2]]
        return tuple(vals) if spec[1] is tuple else vals
    return spec[1]


def _seq_dim(sample, n: int) -> int | None:
    """The most common dim-1 size among batched 2-D+ tensors (the sequence length of the sample)."""
    import torch
    from collections import Counter

    sizes: Counter = Counter()

    def walk(o):
        if isinstance(o, torch.Tensor):
            if o.dim() >= 2 and o.shape[0] == n:
                sizes[int(o.shape[1])] += 1
        elif isinstance(o, dict) or hasattr(o, "keys") and hasattr(o, "__getitem__"):
            for k in o.keys():
                walk(o[k])
        elif isinstance(o, (tuple, list)):
            for x in o:
                walk(x)

    walk(sample)
    return sizes.most_common(1)[0][0] if sizes else None


def batch_fn_from_loader(loader, seq_len: int | None = None) -> Callable[[int], Any]:
    """`batch_fn(batch_size)` shaped like the loader's batches (see the module docstring)."""
    from torch.utils.data import IterableDataset

    ds = getattr(loader, "dataset", None)
    collate = getattr(loader, "collate_fn", None)
    if ds is None or collate is None or isinstance(ds, IterableDataset) or not hasattr(ds, "__len__"):
        raise UserError("memplan preflight: cannot sample this dataloader (no map-style dataset); "
                        "pass batch_fn=lambda batch_size: ... to the callback")
    n = max(1, min(int(getattr(loader, "batch_size", None) or 1), len(ds), 8))
    if len(ds) == 0:
        raise UserError("memplan preflight: the training dataset is empty")
    sample = collate([ds[i] for i in range(n)])
    spec = _spec(sample, n, seq_len, _seq_dim(sample, n))
    return lambda batch_size: _make(spec, batch_size)


def run_preflight(owner, model, batch_fn, optimizer, device, cfg_options: dict, *, wrap=None):
    """Run preflight for a callback; raise or warn on a misfit; keep the estimate on `owner.estimate`."""
    opts = {**cfg_options, **owner.train_options}
    try:
        est = preflight(model if wrap is None else wrap, batch_fn, optimizer,
                        device=owner.device or device, capacity=owner.capacity, **opts)
    except MemoryPlanError as exc:
        owner.estimate = exc.estimate
        if owner.raise_on_misfit:
            raise
        log.warning("memplan preflight: %s", exc)
        return exc.estimate
    owner.estimate = est
    head = "" if est.headroom_bytes is None else f", headroom {est.headroom_bytes / 2**30:.2f} GiB"
    log.info("memplan preflight: predicted peak %.2f GiB allocated / %.2f GiB reserved during %s%s",
             est.peak_allocated_bytes / 2**30, est.peak_reserved_bytes / 2**30, est.peak_phase, head)
    return est


def _device_of(kind: str) -> str | None:
    return kind if kind in ("cuda", "npu") else None


class _Options:
    def __init__(self, batch_fn=None, *, device=None, capacity=None, seq_len=None, raise_on_misfit=True,
                 **train_options):
        self.batch_fn = batch_fn
        self.device = device
        self.capacity = capacity
        self.seq_len = seq_len
        self.raise_on_misfit = raise_on_misfit
        self.train_options = train_options
        self.estimate = None


# ---------------------------------------------------------------------------------------------------
_HF_PRECISION = (("bf16", "bf16-amp"), ("fp16", "fp16-amp"))


def hf_train_options(args) -> dict:
    """TrainConfig fields from transformers.TrainingArguments."""
    precision = "fp32"
    for flag, p in _HF_PRECISION:
        if getattr(args, flag, False):
            precision = p
    clip = getattr(args, "max_grad_norm", None)
    return {"batch_size": int(args.per_device_train_batch_size),
            "grad_accum": int(getattr(args, "gradient_accumulation_steps", 1) or 1),
            "precision": precision, "clip_grad_norm": float(clip) if clip and clip > 0 else None}


def _make_hf():
    try:
        from transformers import TrainerCallback
    except ImportError as exc:
        raise ImportError("HFPreflightCallback needs transformers (pip install 'memplan[hf]')") from exc

    class HFPreflightCallback(_Options, TrainerCallback):
        """Runs `memplan.preflight` at `on_train_begin` (see the module docstring)."""

        def on_train_begin(self, args, state, control, model=None, optimizer=None, train_dataloader=None,
                           **kwargs):
            if model is None:
                return
            batch_fn = self.batch_fn
            if batch_fn is None:
                if train_dataloader is None:
                    raise UserError("memplan preflight: no train dataloader; pass batch_fn= to the callback")
                batch_fn = batch_fn_from_loader(train_dataloader, self.seq_len)
            opts = hf_train_options(args)
            if self.seq_len is not None:
                opts["seq_len"] = self.seq_len
            run_preflight(self, model, batch_fn, optimizer if optimizer is not None else "adamw",
                          _device_of(args.device.type), opts)

    return HFPreflightCallback


# ---------------------------------------------------------------------------------------------------
_PL_PRECISION = {"32-true": "fp32", "32": "fp32", "bf16-mixed": "bf16-amp", "16-mixed": "fp16-amp",
                 "bf16-true": "bf16", "16-true": "bf16", "64-true": "fp32"}


def _make_lightning():
    try:
        import lightning.pytorch as pl
    except ImportError:
        try:
            import pytorch_lightning as pl
        except ImportError as exc:
            raise ImportError("LightningPreflightCallback needs lightning (pip install lightning)") from exc
    import torch

    class _TrainingStep(torch.nn.Module):
        """Calls the LightningModule's training_step as forward, so memplan's step driver runs it."""

        def __init__(self, module):
            super().__init__()
            self.module = module

        def forward(self, batch):
            out = self.module.training_step(batch, 0)
            return out

    class LightningPreflightCallback(_Options, pl.Callback):
        """Runs `memplan.preflight` at `on_fit_start` (with batch_fn) or `on_train_start` (from the loader)."""

        def on_fit_start(self, trainer, pl_module):
            if self.batch_fn is not None:
                self._check(trainer, pl_module, self.batch_fn)

        def on_train_start(self, trainer, pl_module):
            if self.estimate is None and self.batch_fn is None:
                loader = trainer.train_dataloader
                if isinstance(loader, (list, tuple)):
                    loader = loader[0]
                elif isinstance(loader, dict):
                    loader = next(iter(loader.values()))
                self._check(trainer, pl_module, batch_fn_from_loader(loader, self.seq_len))

        def _check(self, trainer, pl_module, batch_fn):
            keep = [o for o in (getattr(pl_module, "_trainer", None), getattr(pl_module, "_fabric", None)) if o]

            def build():
                clone = clone_on_cpu(pl_module, keep)
                clone.log = lambda *a, **k: None
                clone.log_dict = lambda *a, **k: None
                return _TrainingStep(clone)

            build.__name__ = type(pl_module).__name__
            opts = {"precision": _PL_PRECISION.get(str(trainer.precision), "fp32"),
                    "grad_accum": int(trainer.accumulate_grad_batches or 1)}
            if trainer.gradient_clip_val:
                opts["clip_grad_norm"] = float(trainer.gradient_clip_val)
            if self.seq_len is not None:
                opts["seq_len"] = self.seq_len
            sample = batch_fn(1)
            n = _batch_size_of(sample)
            opts["batch_size"] = int(self.train_options.get("batch_size") or _loader_batch_size(trainer) or n or 1)
            opt = trainer.optimizers[0] if getattr(trainer, "optimizers", None) else "adamw"
            device = _device_of(trainer.strategy.root_device.type)
            run_preflight(self, None, lambda bs, seq_len=None: (batch_fn(bs),), opt, device, opts, wrap=build)

    return LightningPreflightCallback


def _batch_size_of(batch) -> int | None:
    import torch

    if isinstance(batch, torch.Tensor):
        return int(batch.shape[0]) if batch.dim() else None
    vals = batch.values() if isinstance(batch, dict) else batch if isinstance(batch, (list, tuple)) else []
    for v in vals:
        n = _batch_size_of(v)
        if n:
            return n
    return None


def _loader_batch_size(trainer) -> int | None:
    loader = getattr(trainer, "train_dataloader", None)
    if isinstance(loader, (list, tuple)) and loader:
        loader = loader[0]
    return getattr(loader, "batch_size", None)


_BUILDERS = {"HFPreflightCallback": _make_hf, "LightningPreflightCallback": _make_lightning}
_BUILT: dict = {}


def __getattr__(name: str):
    if name in _BUILDERS:
        if name not in _BUILT:
            _BUILT[name] = _BUILDERS[name]()
        return _BUILT[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
