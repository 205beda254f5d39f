"""DeepSpeed ZeRO per rank: device memory and host (CPU) memory, modelled from the single-device trace.

A *model*, stated as such in every result: the single-device trace of the step in DeepSpeed's weight
precision (the engine casts the module to bf16 / fp16: `engine.py _configure_distributed_model`) gives,
at each phase's peak, activations and temporaries (R); DeepSpeed's own buffers are added from its source
(deepspeed 0.19.8). With Ψ all parameters, Ψt the trainable ones, w the weight bytes (2 for bf16/fp16,
4 for fp32), N ranks, U the largest block of parameters (the largest FSDP-style unit):

| buffer (source) | stage 0 | stage 1 / 2 | stage 3 |
|---|---|---|---|
| weights (`bit16_groups_flat`, stage3 `fp16_partitioned_groups_flat`) | Ψw | Ψw | Ψw/N + gathered U + prefetch |
| fp32 master (`single_partition_of_fp32_groups`, stage3 `fp32_partitioned_groups_flat`) | 4Ψt (16-bit only) | 4Ψt/N | 4Ψt/N |
| Adam moments (the client optimizer over the master) | 8Ψt | 8Ψt/N | 8Ψt/N |
| gradients (stage 2: `grads_in_partition`; stage 1: full) | Ψt·w | Ψt·w (1) · Ψt·w/N (2) | Ψt·w/N |
| reduce buckets (`torch.empty(reduce_bucket_size)`) | – | from the first gradient hook of backward (`setup_buckets`; two with `overlap_comm`) | always (one, `__init__`) |
| fp32 gradient partition (`step`: `flat_grad_partition.to(fp32)`) | – | optimizer (16-bit) | optimizer |

`offload_optimizer: cpu` moves the fp32 master, the moments and the fp32 gradient partition to host memory
(`initialize_optimizer_states` keeps that gradient pinned on the host); `offload_param: cpu` (stage 3)
moves the 16-bit partitions there too.

Known limitations: a model of DeepSpeed's buffers, not a trace of its engine: allocator behaviour inside
DeepSpeed (bucket reuse, the order of frees inside `reduce_ipg_grads`, ZeRO-1's fp32 accumulator) is
reduced to the table above; stage 3's gathered working set is "one unit plus the prefetch bucket", capped
by `stage3_max_live_parameters`; persistent small parameters (`stage3_param_persistence_threshold`) are
counted gathered; NVMe offload is counted as leaving both device and host.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from memplan.configs.deepspeed import DeepSpeedConfig
from memplan.distributed import strategies as S
from memplan.distributed.estimate import model_params
from memplan.step import Target

ADAM_MOMENTS_BYTES = 8     # exp_avg + exp_avg_sq in fp32 per trainable element (torch AdamW over the master)


@dataclass(frozen=True)
class DeepSpeedRankEstimate:
    stage: int
    world_size: int
    precision: str                    # bf16 | fp16 | fp32 (weights and gradients)
    device_peak_bytes: int            # per rank, allocated (before the caching allocator's rounding)
    device_peak_phase: str
    host_bytes: int                   # per rank, offloaded state in host memory
    device_components: dict           # bytes by buffer at the device peak
    host_components: dict
    phase_totals: dict
    phase_components: dict            # phase -> device bytes by buffer
    model_states: dict                # DeepSpeed's own estimator's formula next to memplan's, when comparable
    method_note: str = ("modelled from the single-device trace and DeepSpeed's buffers "
                        "(memplan.distributed.deepspeed; deepspeed 0.19.8 stage_1_and_2.py / stage3.py)")
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def weight_precision(ds: DeepSpeedConfig) -> str:
    return ds.precision or "fp32"


def rest_after_first_gradient(trace) -> int | None:
    """The most activation / temporary bytes live in the steady-state backward once its first gradient is
    allocated: stage 1/2 allocate their reduce buckets in the first gradient hook (`process_gradients` ->
    `setup_buckets`), so the buckets meet only what is still live from then on."""
    st, ev = trace.storages, trace.events
    w0, w1 = trace.window(trace.steps)
    cats: dict[str, int] = {}
    marks, mi, phase, seen, best = trace.marks, 0, "build", False, None
    for i, v in enumerate(ev):
        while mi < len(marks) and marks[mi][0] <= i:
            phase = marks[mi][1]
            mi += 1
        r = st[v] if v >= 0 else st[~v]
        cats[r.category] = cats.get(r.category, 0) + (r.nbytes if v >= 0 else -r.nbytes)
        if not (w0 <= i < w1 and phase == "backward"):
            continue
        seen = seen or (v >= 0 and r.category == "gradients")
        if seen:
            rest = sum(b for c, b in cats.items() if c not in ("parameters", "gradients", "optimizer_state"))
            best = rest if best is None else max(best, rest)
    return best


def deepspeed_rank_bytes(states: list[S.PhaseState], params: list[S.ParamInfo], ds: DeepSpeedConfig, n: int,
                         units: list[list[str]] | None = None, rest_with_buckets: int | None = None
                         ) -> DeepSpeedRankEstimate:
    """Per-rank device and host bytes of ZeRO stage `ds.stage` on `n` ranks (the table above).
    `rest_with_buckets`: activations live once the stage 1/2 buckets exist (`rest_after_first_gradient`)."""
    w = 4 if weight_precision(ds) == "fp32" else 2
    psi = sum(p.numel for p in params)
    psi_t = sum(p.numel for p in params if p.trainable)
    by_name = {p.name: p for p in params}
    unit = max([sum(by_name[x].numel for x in u if x in by_name) for u in (units or [])] or [psi])
    part = math.ceil(psi_t / n)
    dev, host = _resident(ds, w, psi, psi_t, part, n, unit)
    bucket = ds.reduce_bucket_size if ds.reduce_bucket_size is not None else 500_000_000
    phases: dict[str, dict] = {}
    for s in states:
        c = s.by_category
        rest = s.level - c.get("parameters", 0) - c.get("gradients", 0) - c.get("optimizer_state", 0)
        comp = dict(dev, activations_and_temporaries=rest)
        if s.phase == "forward" and ds.stage == 2:
            comp.pop("gradients")       # grads_in_partition is dropped after the step, rebuilt in backward
        if ds.stage == 3 and ds.contiguous_gradients:
            comp["reduce_bucket"] = bucket * w      # stage3.py __init__: one persistent torch.empty(reduce_bucket_size)
        elif s.phase == "backward" and ds.stage in (1, 2):
            # stage_1_and_2.py setup_buckets: torch.empty(reduce_bucket_size), a second one with overlap_comm
            buckets = bucket * w * (2 if ds.overlap_comm and ds.contiguous_gradients else 1)
            late = rest if rest_with_buckets is None else rest_with_buckets
            if buckets + late > rest:
                comp.update(reduce_buckets=buckets, activations_and_temporaries=late)
        if s.phase == "optimizer" and ds.stage == 3 and w == 2 and not ds.offload_optimizer:
            comp["fp32_gradient_partition"] = 4 * part
        if s.phase == "optimizer" and ds.stage in (1, 2) and w == 2:
            comp["flat_gradient_partition_16bit"] = w * part     # flatten_dense_tensors_aligned(averaged_gradients)
            if not ds.offload_optimizer:
                comp["fp32_gradient_partition"] = 4 * part      # flat_grad_partition.to(fp32)
        if s.phase != "optimizer" and ds.stage == 3:
            comp["gathered_parameters"] = min(unit + (ds.prefetch_bucket_size or 0), ds.max_live_parameters,
                                              psi) * w
        phases[s.phase] = comp
    peak = max(phases, key=lambda k: sum(phases[k].values()))
    return DeepSpeedRankEstimate(
        stage=ds.stage, world_size=n, precision=weight_precision(ds),
        device_peak_bytes=sum(phases[peak].values()), device_peak_phase=peak, host_bytes=sum(host.values()),
        device_components=phases[peak], host_components=host,
        phase_totals={k: sum(v.values()) for k, v in phases.items()}, phase_components=phases,
        model_states=_estimator_formula(ds, psi, unit, n))


def _resident(ds: DeepSpeedConfig, w: int, psi: int, psi_t: int, part: int, n: int, unit: int):
    """Buffers held across the whole step: (device, host) components."""
    dev: dict[str, int] = {}
    host: dict[str, int] = {}
    weights = psi * w if ds.stage < 3 else math.ceil(psi / n) * w
    (host if ds.offload_param else dev)["weights_16bit" if w == 2 else "weights"] = weights
    opt_side = host if ds.offload_optimizer else dev
    if ds.stage == 0:
        if w == 2:
            opt_side["fp32_master_weights"] = 4 * psi_t
        opt_side["optimizer_moments"] = ADAM_MOMENTS_BYTES * psi_t
        dev["gradients"] = psi_t * w
        return dev, host
    opt_side["fp32_master_weights"] = 4 * part
    opt_side["optimizer_moments"] = ADAM_MOMENTS_BYTES * part
    if ds.offload_optimizer:
        host["fp32_gradient_partition"] = 4 * part
    dev["gradients"] = psi_t * w if ds.stage == 1 else part * w
    return dev, host


def _estimator_formula(ds: DeepSpeedConfig, psi: int, unit: int, n: int) -> dict:
    """DeepSpeed's own model-state estimators (stage_1_and_2.py `estimate_zero2_model_states_mem_needs`,
    stage3.py `estimate_zero3_model_states_mem_needs`) for one node of `n` GPUs, device side."""
    if ds.stage == 2:
        gpu = 2 * psi if ds.offload_optimizer else 2 * psi + int(18 * psi / n)
        return {"estimator": "estimate_zero2_model_states_mem_needs", "device_bytes": gpu}
    if ds.stage == 3:
        largest = 4 * unit
        if ds.offload_param:
            gpu = largest
        elif ds.offload_optimizer:
            gpu = largest + int(2 * psi / n)
        else:
            gpu = largest + int(18 * psi / n)
        return {"estimator": "estimate_zero3_model_states_mem_needs", "device_bytes": gpu}
    return {}


def largest_layer(params: list[S.ParamInfo]) -> int:
    """The largest module's own parameters (elements), as DeepSpeed's `model_to_params` counts a layer."""
    layers: dict[str, int] = {}
    for p in params:
        mod = p.name.rsplit(".", 1)[0] if "." in p.name else ""
        layers[mod] = layers.get(mod, 0) + p.numel
    return max(layers.values(), default=0)


def estimate_deepspeed(workload, cfg, ds: DeepSpeedConfig, world_size: int, target=None) -> DeepSpeedRankEstimate:
    """Trace the step once in DeepSpeed's weight precision on one device, then model its ZeRO buffers."""
    from memplan.trace.tracer import trace_workload

    prec = weight_precision(ds)
    run_cfg = cfg.with_(precision="bf16" if prec in ("bf16", "fp16") else "fp32", optimizer="adamw",
                        optimizer_impl="fused")
    trace = trace_workload(workload, run_cfg, target or Target())
    params, units, _names = model_params(workload, run_cfg)
    hidden = _hidden_size(workload)
    est = deepspeed_rank_bytes(S.phase_states(trace), params, ds.resolved(hidden), world_size, units,
                               rest_with_buckets=rest_after_first_gradient(trace))
    states = dict(est.model_states)
    if ds.stage == 3:
        states = _estimator_formula(ds, sum(p.numel for p in params), largest_layer(params), world_size)
    notes = [f"DeepSpeed {prec}: the step traced with {prec} weights"
             + (" (fp16 traced as bf16: same bytes)" if prec == "fp16" else "")]
    if ds.offload_optimizer == "nvme" or ds.offload_param == "nvme":
        notes.append("NVMe offload: the offloaded state is counted in neither device nor host memory")
    return replace(est, model_states=states, notes=notes + list(trace.notes))


def _hidden_size(workload) -> int | None:
    extra = workload.extra if isinstance(workload.extra, dict) else {}
    cfg = extra.get("hf_config") or extra.get("base_hf_config")
    return getattr(cfg, "hidden_size", None)
