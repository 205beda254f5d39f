"""The training step driver, shared by the fake-tensor tracer and the real measurement.

Both run exactly this code, so what is estimated is what is measured. For each optimizer step, for
each of K micro-steps: the previous batch is released, `batch = make_batch(B)`, forward, `loss =
loss_fn(out, batch) / K`, `backward()`, outputs and loss released at once; after the K micro-steps
(optional unscale + clipping) `optimizer.step()` then `optimizer.zero_grad(set_to_none=True)`.
A user `train_step(model, batch, optimizer)` replaces the whole default step.

Python's cyclic garbage collector is paused during the run and run between steps, so that frees happen
at the same points in the real and the traced run.
"""
from __future__ import annotations

import contextlib
import fnmatch
import functools
import gc
from dataclasses import dataclass
from typing import Protocol

from memplan import compat
from memplan.errors import BuildError, UserError
from memplan.workload import OPTIMIZER_CLASSES, TrainConfig, Workload, check_precision_sharding


class StepHooks(Protocol):
    def phase(self, phase: str, step: int, micro_step: int) -> None: ...
    def model_built(self, model) -> None: ...
    def batch_made(self, batch) -> None: ...
    def after_backward(self, model) -> None: ...
    def after_optimizer(self, model, optimizer) -> None: ...


class NoHooks:
    def phase(self, phase, step, micro_step): pass
    def model_built(self, model): pass
    def batch_made(self, batch): pass
    def after_backward(self, model): pass
    def after_optimizer(self, model, optimizer): pass


@dataclass(frozen=True)
class Target:
    """The device whose kernel and optimizer choices the run imitates (the run itself may be on CPU)."""

    family: str = "cpu"   # cpu | cuda | npu
    run_device: str = "cpu"
    name: str | None = None  # catalog name of the target device, when known


def resolve_optimizer_impl(impl: str, family: str) -> dict:
    """Keyword arguments for torch.optim for an implementation choice on a device family.

    `default` is what torch picks: foreach on CUDA and on torch_npu's privateuse1 device, the for-loop
    on CPU (torch/optim/optimizer.py `_default_to_fused_or_foreach`).
    """
    if impl == "default":
        impl = "for-loop" if family == "cpu" else "foreach"
    return {"for-loop": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}[impl]


def _user_code_error(what: str, exc: Exception, cls: type[UserError] = UserError) -> UserError:
    """The user's function raised: one non-empty line. An ImportError while the installed transformers
    and torch do not go together is that mismatch, said as such (a plain UserError: not the user's code,
    and no fallback would help)."""
    if isinstance(exc, ImportError):
        mismatch = compat.transformers_mismatch()
        if mismatch:
            return UserError(f"{what} raised {compat.describe(exc)}; {mismatch}")
    return cls(f"{what} raised {compat.describe(exc)}")


def make_optimizer(workload: Workload, cfg: TrainConfig, model, family: str):
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise UserError("the model has no trainable parameters (every parameter has requires_grad=False)")
    if workload.make_optimizer is not None:
        return workload.make_optimizer(params)
    cls, kw = optimizer_class(cfg, family)
    return cls(params, lr=cfg.lr, **kw)


def optimizer_class(cfg: TrainConfig, family: str):
    """The torch.optim class of `cfg.optimizer` and its keyword arguments (implementation, SGD's momentum)."""
    import torch

    kw = resolve_optimizer_impl(cfg.optimizer_impl, family)
    if cfg.optimizer == "adamw-8bit":
        from memplan.optim8bit import AdamW8bitStateModel

        return AdamW8bitStateModel, {}
    if cfg.optimizer not in OPTIMIZER_CLASSES:
        raise UserError(f"unknown optimizer {cfg.optimizer!r}")
    if cfg.optimizer == "adafactor" and "fused" in kw:
        raise UserError("torch.optim.Adafactor has no fused implementation; use foreach or for-loop")
    name = OPTIMIZER_CLASSES[cfg.optimizer]
    if not hasattr(torch.optim, name):
        raise UserError(compat.missing(f"torch.optim.{name}", "choose another --optimizer"))
    if kw.get("fused") and not compat.fused_on_cpu(name):
        # memplan traces on (fake) CPU tensors: the fused step needs this torch's CPU fused kernel
        raise UserError(compat.missing(f"a CPU fused torch.optim.{name} kernel (memplan traces the fused step "
                                       "with it)", "use --optimizer-impl foreach or for-loop"))
    if cfg.optimizer == "sgd":
        kw["momentum"] = 0.9
    return getattr(torch.optim, name), kw


def default_loss(output, batch):
    """`output.loss` if present, else the mean of the first floating tensor in the output (in fp32)."""
    import torch

    loss = getattr(output, "loss", None)
    if loss is None and isinstance(output, dict):
        loss = output.get("loss")
    if isinstance(loss, torch.Tensor):
        return loss
    t = _first_tensor(output)
    if t is None:
        raise UserError("the model returned no tensor: define loss_fn(output, batch) in the model file")
    return t.float().mean()


def _first_tensor(obj):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj if obj.is_floating_point() else None
    if isinstance(obj, dict):
        obj = list(obj.values())
    elif hasattr(obj, "to_tuple"):
        obj = obj.to_tuple()
    if isinstance(obj, (list, tuple)):
        for x in obj:
            t = _first_tensor(x)
            if t is not None:
                return t
    return None


def call_model(model, batch):
    if isinstance(batch, tuple):
        return model(*batch)
    if isinstance(batch, dict):
        return model(**batch)
    return model(batch)


def cast_batch(batch, dtype):
    """Floating tensors of the batch to `dtype` (pure bf16 training); integer tensors untouched."""
    import torch

    def cast(x):
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            return x.to(dtype)
        return x

    if isinstance(batch, tuple):
        return tuple(cast(x) for x in batch)
    if isinstance(batch, list):
        return [cast(x) for x in batch]
    if isinstance(batch, dict):
        return {k: cast(v) for k, v in batch.items()}
    return cast(batch)


def to_device(batch, device: str):
    import torch

    if device == "cpu":
        return batch
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, tuple):
        return tuple(to_device(x, device) for x in batch)
    if isinstance(batch, list):
        return [to_device(x, device) for x in batch]
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


def apply_checkpointing(model, patterns: tuple[str, ...]) -> list[str]:
    """Wrap the forward of every module whose qualified name matches a glob in non-reentrant
    activation checkpointing. Nested matches: only the outermost is wrapped. Returns the names."""
    import torch.utils.checkpoint as ckpt

    if not patterns:
        return []
    chosen: list[str] = []
    for name, module in model.named_modules():
        if not name or not any(fnmatch.fnmatchcase(name, p) for p in patterns):
            continue
        if any(name.startswith(c + ".") for c in chosen):
            continue
        orig = module.forward

        @functools.wraps(orig)
        def fwd(*args, __orig=orig, **kwargs):
            return ckpt.checkpoint(__orig, *args, use_reentrant=False, **kwargs)

        module.forward = fwd
        chosen.append(name)
    if not chosen:
        names = [n for n, _ in model.named_modules() if n][:8]
        raise UserError(
            f"--checkpoint {' '.join(patterns)} matches no module; module names look like: {', '.join(names)}"
        )
    return chosen


def cast_module(model, dtype) -> None:
    """`model.to(dtype)` for floating parameters and buffers, by replacing them with new Parameters.

    `Module.to` swaps tensors in place for fake tensors, which fails (torch keeps a weakref to each fake
    tensor); replacing them has the same memory effect (the new copy is allocated, the old one freed) and
    keeps tied parameters tied."""
    import torch

    memo: dict[int, object] = {}
    with torch.no_grad():
        for mod in model.modules():
            for name, p in list(mod._parameters.items()):
                if p is None or not p.is_floating_point():
                    continue
                if id(p) not in memo:
                    memo[id(p)] = torch.nn.Parameter(p.detach().to(dtype), requires_grad=p.requires_grad)
                mod._parameters[name] = memo[id(p)]
            for name, b in list(mod._buffers.items()):
                if b is not None and b.is_floating_point():
                    if id(b) not in memo:
                        memo[id(b)] = b.to(dtype)
                    mod._buffers[name] = memo[id(b)]
    memo.clear()


def build(workload: Workload, cfg: TrainConfig, hooks: StepHooks, target: Target):
    """Build the model (in whatever tensor mode is active) and apply precision and checkpointing."""
    import torch

    hooks.phase("build", 0, 0)
    try:
        model = workload.build_model()
    except UserError:
        raise
    except Exception as exc:
        raise _user_code_error("build_model()", exc, BuildError) from exc
    if not isinstance(model, torch.nn.Module):
        raise UserError(f"build_model() must return a torch.nn.Module, got {type(model).__name__}")
    if target.run_device != "cpu":
        model = model.to(target.run_device)
    if cfg.precision == "bf16":
        cast_module(model, torch.bfloat16)
    elif cfg.precision == "bf16-mp":   # the FSDP wrapper (memplan.distributed) runs it as fp32 + its policy
        check_precision_sharding(cfg.precision, None)
    model.train()
    apply_checkpointing(model, cfg.checkpoint)
    hooks.model_built(model)
    return model


def run(workload: Workload, cfg: TrainConfig, hooks: StepHooks | None = None,
        target: Target = Target()) -> None:
    """Build the model and run `cfg.steps` optimizer steps."""
    hooks = hooks or NoHooks()
    with run_collector():
        _run_steps(workload, cfg, hooks, target)


def _run_steps(workload: Workload, cfg: TrainConfig, hooks, target: Target) -> None:
    """`run`'s body: build, then the steps (the collector already off, see `run_collector`)."""
    import torch

    model = build(workload, cfg, hooks, target)
    optimizer = make_optimizer(workload, cfg, model, target.family)
    dev_type = target.run_device.split(":")[0]
    amp_dtype = {"fp16-amp": torch.float16, "bf16-amp": torch.bfloat16}.get(cfg.precision)
    scaler = None
    if cfg.precision == "fp16-amp":
        scaler = _grad_scaler(target)
    K = cfg.grad_accum
    loss_fn = workload.loss_fn or default_loss
    # a tracer may write a later step's forward/backward from step 1's (memplan.trace.step_once)
    replay = getattr(hooks, "replay_forward_backward", None) if K == 1 and scaler is None else None
    batch = None
    for step in range(1, cfg.steps + 1):
        gc.collect()
        if workload.train_step is not None:
            hooks.phase("inputs", step, 1)
            batch = None
            batch = _make_batch(workload, cfg, target)
            hooks.batch_made(batch)
            hooks.phase("step", step, 1)
            workload.train_step(model, batch, optimizer)
            hooks.after_backward(model)
            hooks.after_optimizer(model, optimizer)
            continue
        for micro in range(1, K + 1):
            hooks.phase("inputs", step, micro)
            batch = None
            batch = _make_batch(workload, cfg, target)
            hooks.batch_made(batch)
            if not (step > 1 and replay is not None and replay(model, step, micro)):
                _forward_backward(model, batch, loss_fn, cfg, hooks, scaler, (dev_type, amp_dtype), step, micro)
            hooks.after_backward(model)
        hooks.phase("optimizer", step, K)
        if cfg.clip_grad_norm is not None:
            if scaler is not None:
                scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad_norm)
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        hooks.after_optimizer(model, optimizer)
        hooks.phase("zero_grad", step, K)
        optimizer.zero_grad(set_to_none=True)
    hooks.phase("end", cfg.steps + 1, 0)
    del batch, model, optimizer, scaler


def _forward_backward(model, batch, loss_fn, cfg: TrainConfig, hooks, scaler, amp, step: int, micro: int) -> None:
    """One micro-step's forward, loss (divided by the accumulation steps) and backward; the outputs and the
    loss are released at once (unless `cfg.keep_outputs`: the outputs live until this returns)."""
    import torch

    dev_type, amp_dtype = amp
    K = cfg.grad_accum
    hooks.phase("forward", step, micro)
    if amp_dtype is not None:
        with torch.autocast(device_type=dev_type, dtype=amp_dtype, cache_enabled=cfg.autocast_cache):
            out = call_model(model, batch)
            loss = loss_fn(out, batch) / K
    else:
        out = call_model(model, batch)
        loss = loss_fn(out, batch) / K
    if not isinstance(loss, torch.Tensor):
        raise UserError("loss_fn must return a tensor")
    if not cfg.keep_outputs:
        out = None
    hooks.phase("backward", step, micro)
    if scaler is not None:
        scaler.scale(loss).backward()
    else:
        loss.backward()
    del out, loss


_HEAP_FROZEN = False


@contextlib.contextmanager
def run_collector():
    """The cyclic collector around one run (`run`, the optimizer-only run of memplan.trace.optsplice): the
    heap that was there before is frozen (the run's collections, one per step, scan only what the run made,
    and nothing from before is freed in the middle of a run), the collector is off (objects go when their
    last reference does, as in the job being modelled), and at the end the run's own cyclic garbage is
    collected while the old heap is still frozen -- a scan of the run's objects, not of the whole heap
    (which in a long process, a test session or a training script calling the API, costs a tenth of a
    second or more each time). Garbage from before the run is left to the interpreter's own collections;
    a device measurement frees it first itself (memplan.validate.backends). The collector's state and an
    outer freeze (`frozen_heap`, the CLI's) are left as they were."""
    was_enabled = gc.isenabled()
    outer_freeze = _HEAP_FROZEN or gc.get_freeze_count() > 0
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        if not outer_freeze:
            gc.unfreeze()
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def frozen_heap(collect: bool = True):
    """Collect (unless `collect` is False: the caller kept the collector off) and freeze the heap once for
    several `run`s (each would otherwise scan the whole heap of torch and transformers objects at its start
    and end)."""
    global _HEAP_FROZEN
    if _HEAP_FROZEN or gc.get_freeze_count() > 0:   # frozen already (an outer call, the CLI after its imports)
        yield
        return
    if collect:
        gc.collect()
    gc.freeze()
    _HEAP_FROZEN = True
    try:
        yield
    finally:
        _HEAP_FROZEN = False
        gc.unfreeze()


def _grad_scaler(target: Target):
    import torch

    if target.family == "npu" and target.run_device.startswith("npu"):
        return torch.npu.amp.GradScaler()  # torch_npu's real API (not torch_npu.amp.GradScaler)
    scaler = compat.grad_scaler(target.run_device.split(":")[0])
    if scaler is None:
        raise UserError(compat.missing(f"a GradScaler for {target.run_device}", "fp16-amp needs torch >= 2.3 on "
                                       "this device; use --precision bf16-amp"))
    return scaler


def _batch_made_for_real(workload: Workload, cfg: TrainConfig, exc: Exception):
    """make_batch failed while a tracing mode is active: some torch versions' fake tensors refuse what
    real ones allow (torch 2.1's fake `randn` with an explicit `torch.Generator`). Make the batch for real
    and remake each tensor in the active mode (same shapes, strides, dtypes: the input bytes the real
    step holds). Fails for real too: the user's code."""
    import torch
    from torch.utils._python_dispatch import _disable_current_modes, _get_current_dispatch_mode
    from torch.utils._pytree import tree_map_only

    if _get_current_dispatch_mode() is None:
        raise _user_code_error(f"make_batch({cfg.batch_size})", exc) from exc
    with _disable_current_modes():
        try:
            real = workload.batch(cfg.batch_size, cfg.seq_len)
        except Exception:  # noqa: BLE001 - the original error is the one to report
            raise _user_code_error(f"make_batch({cfg.batch_size})", exc) from exc
    return tree_map_only(torch.Tensor, lambda t: torch.empty_strided(t.shape, t.stride(), dtype=t.dtype), real)


def _make_batch(workload: Workload, cfg: TrainConfig, target: Target):
    import torch

    try:
        batch = workload.batch(cfg.batch_size, cfg.seq_len)
    except UserError:
        raise
    except Exception as exc:
        batch = _batch_made_for_real(workload, cfg, exc)
    if isinstance(batch, list):
        batch = tuple(batch)
    batch = to_device(batch, target.run_device)
    if cfg.precision == "bf16":
        batch = cast_batch(batch, torch.bfloat16)
    return batch
