"""What each module saves and costs, for activation checkpointing: one forward pass on fake tensors that
records per-module FLOPs (`torch.utils.flop_counter.FlopCounterMode`, at least one per output element),
tensor input / output sizes and call order (`probe_modules`), and the activations each module allocated
in a trace (`saved_by_module`). Used by memplan.plan.checkpoint."""
from __future__ import annotations

from dataclasses import dataclass

from memplan.errors import TraceError
from memplan.step import NoHooks, Target, build, call_model, cast_batch
from memplan.workload import TrainConfig


@dataclass(frozen=True)
class ModuleProbe:
    """Per-module facts from one fake forward pass: structure, inputs/outputs, FLOPs."""

    root_class: str
    names: tuple[str, ...]                  # every module, named_modules() order ("" = the root)
    classes: dict                           # name -> class name
    order: dict                             # name -> position of its first call in forward (absent: never called)
    calls: dict                             # name -> number of calls in one forward
    in_bytes: dict                          # name -> bytes of tensor inputs (first call)
    out_bytes: dict                         # name -> bytes of tensor outputs (all calls)
    out_numel: dict
    flops: dict                             # name -> forward FLOPs of the subtree (all calls)
    forward_flops: int                      # the whole forward
    containers: dict                        # name -> "ModuleList" | "Sequential" | ... for containers


def _tensor_stats(obj) -> tuple[int, int]:
    import torch
    from torch.utils._pytree import tree_leaves

    seen, nbytes, numel = set(), 0, 0
    for t in tree_leaves(obj):
        if isinstance(t, torch.Tensor):
            try:
                st = t.untyped_storage()
                key, nb = st._cdata, st.nbytes()   # the StorageImpl: stable on every torch
            except (RuntimeError, NotImplementedError):  # no plain storage (sparse, nested, wrappers)
                key, nb = id(t), t.numel() * t.element_size()
            if key not in seen:
                seen.add(key)
                nbytes += nb
            numel += t.numel()
    return nbytes, numel


def probe_modules(workload, cfg: TrainConfig, family: str = "cpu") -> ModuleProbe:
    """Build the model and run one forward on fake tensors, recording per-module FLOPs and I/O sizes."""
    import warnings

    import torch
    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
    from torch.utils.flop_counter import FlopCounterMode

    probe_cfg = cfg.with_(checkpoint=(), grad_accum=1)
    names: dict[int, str] = {}
    order: dict[str, int] = {}
    calls: dict[str, int] = {}
    in_b: dict[str, int] = {}
    out_b: dict[str, int] = {}
    out_n: dict[str, int] = {}

    def pre(mod, args, kwargs=None):
        n = names.get(id(mod))
        if n is None:
            return
        calls[n] = calls.get(n, 0) + 1
        if n not in order:
            order[n] = len(order)
            in_b[n] = _tensor_stats((args, kwargs))[0]

    def post(mod, args, out):
        n = names.get(id(mod))
        if n is None:
            return
        b, k = _tensor_stats(out)
        out_b[n] = out_b.get(n, 0) + b
        out_n[n] = out_n.get(n, 0) + k

    fake = _fake_mode_class()(allow_non_fake_inputs=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore")
        with fake:
            model = build(workload, probe_cfg, NoHooks(), Target(family=family))
            names.update({id(m): n for n, m in model.named_modules()})
            batch = workload.batch(probe_cfg.batch_size, probe_cfg.seq_len)
            if isinstance(batch, list):
                batch = tuple(batch)
            if probe_cfg.precision == "bf16":
                batch = cast_batch(batch, torch.bfloat16)
            amp = {"fp16-amp": torch.float16, "bf16-amp": torch.bfloat16}.get(probe_cfg.precision)
            counter = FlopCounterMode(display=False, depth=None)
            h1 = register_module_forward_pre_hook(pre)
            h2 = register_module_forward_hook(post)
            try:
                with counter:
                    if amp is not None:
                        with torch.autocast(device_type="cpu", dtype=amp):
                            call_model(model, batch)
                    else:
                        call_model(model, batch)
            except Exception as exc:
                raise TraceError(f"the forward pass could not be run on fake tensors to count FLOPs: "
                                 f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
            finally:
                h1.remove()
                h2.remove()
    root_class = type(model).__name__
    flops, total = _flops_by_module(counter.get_flop_counts(), root_class)
    containers = {n: type(m).__name__ for n, m in model.named_modules()
                  if isinstance(m, (torch.nn.ModuleList, torch.nn.Sequential))}
    classes = {n: type(m).__name__ for n, m in model.named_modules()}
    all_names = tuple(n for n, _ in model.named_modules())
    del model, batch
    return ModuleProbe(root_class, all_names, classes, order, calls, in_b, out_b, out_n, flops, total, containers)


def _fake_mode_class():
    """The probe's FakeTensorMode: the tracer's (it stays itself under deepcopy, as nn.Transformer deep-copies its
    layers, and builds its dispatch-cache key the cheaper way of memplan.trace.fastkey: the same cache hits, so the
    same FLOPs and sizes)."""
    from memplan.trace.tracer import FakeMode   # imports torch

    return FakeMode


def _flops_by_module(counts: dict, root_class: str) -> tuple[dict[str, int], int]:
    """FlopCounterMode's per-module counts keyed by module name ("" = the root), and the total."""
    flops: dict[str, int] = {}
    for key, per_op in counts.items():
        if key == "Global":
            continue
        name = "" if key == root_class else (key[len(root_class) + 1:] if key.startswith(root_class + ".") else None)
        if name is not None:
            flops[name] = int(sum(per_op.values()))
    return flops, int(sum(counts.get("Global", {}).values()))


def saved_by_module(trace, root_class: str) -> dict[str, int]:
    """Bytes saved for backward in the steady-state step's first micro-step, by allocating module."""
    out: dict[str, int] = {}
    last = trace.steps
    for r in trace.storages:
        if r.category == "activations" and r.step == last and r.micro_step == 1:
            name = r.module or ""
            if name in (root_class, "<top>"):
                name = ""
            out[name] = out.get(name, 0) + r.nbytes
    return out
