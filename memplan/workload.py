"""Workloads: how to build the model, make a batch, compute the loss, build the optimizer, and step.

A `Workload` comes from a model file (the contract in DESIGN.md / README), from a Hugging Face config
(built from the config alone: no weights, no network), or from Python callables (the pre-flight API).
`TrainConfig` says how it is trained: batch size, sequence length, precision, optimizer, accumulation,
clipping, checkpointing.

Loading a model file runs the user's own code in this process.
"""
from __future__ import annotations

import importlib.util
import inspect
import json
import os
import sys
import types
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from memplan import compat
from memplan.errors import UserError

PRECISIONS = ("fp32", "bf16", "fp16-amp", "bf16-amp", "bf16-mp")
"""bf16-mp: FSDP's mixed precision (FSDP2 `MixedPrecisionPolicy` / FSDP1 `MixedPrecision`): fp32 sharded
parameters, all-gathered and computed in bf16, no autocast; only with a sharded (FSDP) strategy."""
REDUCE_DTYPES = ("fp32", "bf16")
"""The gradient reduce dtype of `bf16-mp` (None: torch's default, the param dtype)."""
SHARDINGS = ("ddp", "zero1", "zero2", "zero3", "fsdp", "fsdp1")
"""Data-parallel strategies: DDP, ZeRO-1 (ZeroRedundancyOptimizer), ZeRO-2/3 and FSDP2 (fully_shard),
FSDP1 (FullyShardedDataParallel, FULL_SHARD)."""
FSDP_SHARDINGS = ("zero2", "zero3", "fsdp", "fsdp1")


def check_precision_sharding(precision: str, sharding: str | None) -> None:
    """bf16-mp is FSDP's own mixed precision: refused without an FSDP sharding (one clear line)."""
    if precision == "bf16-mp" and sharding not in FSDP_SHARDINGS:
        raise UserError("--precision bf16-mp is FSDP's mixed-precision policy: use it with --world-size N "
                        f"--sharding {'|'.join(FSDP_SHARDINGS)} (single device or DDP: bf16-amp)")


OPTIMIZERS = ("adamw", "adam", "sgd", "adafactor", "adamw-8bit")
OPTIMIZER_CLASSES = {"adamw": "AdamW", "adam": "Adam", "sgd": "SGD", "adafactor": "Adafactor"}
"""The torch.optim class of each optimizer name (SGD is built with momentum=0.9); `adamw-8bit` is
memplan.optim8bit's state model of bitsandbytes' 8-bit AdamW."""
OPTIMIZER_IMPLS = ("default", "foreach", "fused", "for-loop")
MOE_ROUTINGS = ("worst", "balanced")
"""How routing indices computed from unknown (fake) router scores are chosen (memplan.trace.datadep)."""


@dataclass(frozen=True)
class TrainConfig:
    """How one training step is run. Defaults match a plain fp32 AdamW loop."""

    batch_size: int = 1
    seq_len: int | None = None          # passed to make_batch when it accepts `seq_len`
    precision: str = "fp32"             # fp32 | bf16 | fp16-amp | bf16-amp (amp = fp32 weights + autocast)
    optimizer: str = "adamw"            # adamw | adam | sgd (momentum 0.9) | adafactor | adamw-8bit (bnb state model)
    optimizer_impl: str = "default"     # default = what torch picks on the target device
    lr: float = 1e-4
    grad_accum: int = 1                 # K micro-steps per optimizer step
    clip_grad_norm: float | None = None
    checkpoint: tuple[str, ...] = ()    # fnmatch globs of module names, non-reentrant checkpointing
    steps: int = 2                      # optimizer steps traced; the last is the steady state
    moe_routing: str = "worst"          # worst (upper bound: all tokens to the busiest experts) | balanced
    keep_outputs: bool = True           # the model output lives through backward (a plain loop); False:
                                        # only the loss does (HF Trainer's compute_loss returns the loss alone)
    autocast_cache: bool = True         # torch.autocast(cache_enabled=...) of the *-amp precisions
    reduce_dtype: str | None = None     # bf16-mp: gradient reduce dtype (None: the param dtype, torch's default)
    mp_autocast: bool = False           # bf16-mp: torch.autocast over the bf16 parameters too (HF accelerate does)

    def validate(self) -> "TrainConfig":
        problems = []
        if self.batch_size < 1:
            problems.append(f"batch size must be >= 1, got {self.batch_size}")
        if self.seq_len is not None and self.seq_len < 1:
            problems.append(f"sequence length must be >= 1, got {self.seq_len}")
        if self.precision not in PRECISIONS:
            problems.append(f"unknown precision {self.precision!r} (choose from {', '.join(PRECISIONS)})")
        if self.optimizer not in OPTIMIZERS:
            problems.append(f"unknown optimizer {self.optimizer!r} (choose from {', '.join(OPTIMIZERS)})")
        if self.optimizer_impl not in OPTIMIZER_IMPLS:
            problems.append(
                f"unknown optimizer implementation {self.optimizer_impl!r} "
                f"(choose from {', '.join(OPTIMIZER_IMPLS)})"
            )
        if self.moe_routing not in MOE_ROUTINGS:
            problems.append(f"unknown MoE routing {self.moe_routing!r} (choose from {', '.join(MOE_ROUTINGS)})")
        if self.grad_accum < 1:
            problems.append(f"grad accumulation must be >= 1, got {self.grad_accum}")
        if self.steps < 2:
            problems.append("at least 2 optimizer steps are needed (the first one creates optimizer state)")
        if self.reduce_dtype is not None and (self.precision != "bf16-mp" or self.reduce_dtype not in REDUCE_DTYPES):
            problems.append(f"reduce dtype {self.reduce_dtype!r}: fp32 or bf16, with --precision bf16-mp only")
        if self.mp_autocast and self.precision != "bf16-mp":
            problems.append("autocast over FSDP's bf16 parameters (mp_autocast) needs --precision bf16-mp")
        if not self.autocast_cache and not self.precision.endswith("-amp"):
            problems.append("the autocast cache setting needs an autocast precision (fp16-amp / bf16-amp)")
        if self.clip_grad_norm is not None and self.clip_grad_norm <= 0:
            problems.append(f"clip-grad-norm must be > 0, got {self.clip_grad_norm}")
        if problems:
            raise UserError("; ".join(problems))
        return self

    def with_(self, **changes) -> "TrainConfig":
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return {
            "batch_size": self.batch_size, "seq_len": self.seq_len, "precision": self.precision,
            "optimizer": self.optimizer, "optimizer_impl": self.optimizer_impl, "lr": self.lr,
            "grad_accum": self.grad_accum, "clip_grad_norm": self.clip_grad_norm,
            "checkpoint": list(self.checkpoint), "steps": self.steps, "moe_routing": self.moe_routing,
            **({} if self.keep_outputs else {"keep_outputs": False}),
            **({} if self.autocast_cache else {"autocast_cache": False}),
            **({} if self.reduce_dtype is None else {"reduce_dtype": self.reduce_dtype}),
            **({"mp_autocast": True} if self.mp_autocast else {}),
        }


@dataclass
class Workload:
    """Everything needed to run one training step of a user's model."""

    name: str
    build_model: Callable[[], Any]
    make_batch: Callable[..., Any]
    loss_fn: Callable[[Any, Any], Any] | None = None
    make_optimizer: Callable[[Any], Any] | None = None
    train_step: Callable[[Any, Any, Any], None] | None = None
    source: str = ""
    default_seq_len: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def accepts_seq_len(self) -> bool:
        try:
            params = inspect.signature(self.make_batch).parameters
        except (TypeError, ValueError):
            return False
        return "seq_len" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

    def batch(self, batch_size: int, seq_len: int | None) -> Any:
        """Call the user's make_batch; `seq_len` is passed only when it accepts it."""
        seq = seq_len if seq_len is not None else self.default_seq_len
        if seq is not None and self.accepts_seq_len:
            return self.make_batch(batch_size, seq_len=seq)
        return self.make_batch(batch_size)

    # ---- constructors -------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str) -> "Workload":
        """The workload a model file defines (see `load_model_file`)."""
        return load_model_file(path)

    @classmethod
    def from_callables(cls, model_or_builder, batch_fn, *, loss_fn=None, optimizer=None,
                       train_step=None, name: str | None = None) -> "Workload":
        """For the Python API: a module (deep-copied structure is NOT needed: it is rebuilt by calling
        the builder) or a zero-argument builder, and `batch_fn(batch_size[, seq_len])`."""
        import torch

        if isinstance(model_or_builder, torch.nn.Module):
            module = model_or_builder

            def build():
                return _clone_structure(module)
        elif callable(model_or_builder):
            build = model_or_builder
        else:
            raise UserError("preflight needs a torch.nn.Module or a zero-argument function that builds one")
        make_opt = optimizer if callable(optimizer) and not isinstance(optimizer, str) else None
        return cls(name=name or getattr(model_or_builder, "__name__", type(model_or_builder).__name__),
                   build_model=build, make_batch=batch_fn, loss_fn=loss_fn, make_optimizer=make_opt,
                   train_step=train_step, source="<python>")


def _clone_structure(module):
    """A fresh copy of `module` whose tensors are created in the current (possibly fake) mode.

    Deep-copying a real module under FakeTensorMode would copy real data; instead the parameters and
    buffers are re-created with `torch.empty_like`, which is what matters for memory.
    """
    import copy

    import torch

    memo = {}
    for t in list(module.parameters()) + list(module.buffers()):
        new = torch.empty_like(t, device="cpu")  # traced on (fake) CPU tensors whatever the target
        if isinstance(t, torch.nn.Parameter):
            new = torch.nn.Parameter(new, requires_grad=t.requires_grad)
        memo[id(t)] = new
    return copy.deepcopy(module, memo)


def check_source(model: str | None, hf_config: str | None) -> None:
    """One workload source, and it is there: a model file (.py) or an HF config.json (no torch needed)."""
    if hf_config and model:
        raise UserError("give either a model file or --hf-config, not both")
    if not model and not hf_config:
        raise UserError("no model: give a model file (model.py) or --hf-config config.json")
    if model:
        check_model_path(model)
    elif not os.path.exists(hf_config):
        if hf_config.count("/") == 1 and not hf_config.endswith(".json"):
            return  # a model id: looked up in the local Hugging Face cache when the workload is built
        raise UserError(f"HF config not found: {hf_config}")
    else:
        read_json(os.path.join(hf_config, "config.json") if os.path.isdir(hf_config) else hf_config)


def check_model_path(path: str) -> None:
    """The model file exists and is a Python file (checked before anything imports torch)."""
    if not os.path.exists(path):
        raise UserError(f"model file not found: {path}")
    if os.path.isdir(path):
        raise UserError(f"{path} is a directory: give a Python model file (or --hf-config config.json)")
    if not path.endswith(".py"):
        if path.endswith(".json"):
            raise UserError(f"{path} looks like a config: use --hf-config {path}")
        raise UserError(f"{path} is not a Python file: the model file must end in .py")


USER_MODULE_PREFIX = "memplan_user_model_"
"""A model file runs as the module of this name prefix plus its file name (in `sys.modules`)."""


def load_model_file(path: str) -> Workload:
    """Import a model file and check it follows the contract."""
    check_model_path(path)
    name = USER_MODULE_PREFIX + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except SystemExit as exc:  # sys.exit() / exit() at module level: never a silent success
        raise UserError(f"{path}: the model file exited (sys.exit({exc.code!r})) while being imported: "
                        "put script code under `if __name__ == '__main__':` "
                        "(see README, 'The model file')") from None
    except SyntaxError as exc:
        raise UserError(f"{path}:{exc.lineno}: syntax error in the model file: {exc.msg}") from exc
    except ImportError as exc:
        mismatch = compat.transformers_mismatch()
        if mismatch:
            raise UserError(f"{path}: the model file failed to import ({compat.describe(exc)}); {mismatch}") from exc
        raise UserError(f"{path}: the model file failed to import: {compat.describe(exc)} "
                        "(install what it needs)") from exc
    except Exception as exc:  # the user's module-level code
        raise UserError(f"{path}: the model file raised {compat.describe(exc)} while loading") from exc
    return workload_from_module(mod, source=path)


def workload_from_module(mod: types.ModuleType, source: str) -> Workload:
    missing = [fn for fn in ("build_model", "make_batch") if not callable(getattr(mod, fn, None))]
    if missing:
        raise UserError(
            f"{source} does not define {' and '.join(missing)}(): a model file needs "
            "build_model() -> nn.Module and make_batch(batch_size) (see README, 'The model file')"
        )
    return Workload(
        name=os.path.splitext(os.path.basename(source))[0],
        build_model=mod.build_model,
        make_batch=mod.make_batch,
        loss_fn=getattr(mod, "loss_fn", None),
        make_optimizer=getattr(mod, "make_optimizer", None),
        train_step=getattr(mod, "train_step", None),
        source=source,
        default_seq_len=getattr(mod, "DEFAULT_SEQ_LEN", None),
    )


def read_json(path: str) -> dict:
    if not os.path.exists(path):
        raise UserError(f"file not found: {path}")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object")
    return data
