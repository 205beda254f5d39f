"""`estimate_per_rank`: the per-rank peak of a data-parallel job, before launching it.

Two methods, and the result says which it used:
- `trace` (default): torch's own wrapper (DDP / ZeroRedundancyOptimizer / FSDP2 `fully_shard`) traced
  on fake tensors with torch's fake process group, once per distinct rank (`_fake_trace`).
- `model`: the single-device trace, then the strategy's arithmetic (`strategies`), for any rank count
  without re-tracing; what the planner sweeps with.
Communication buffers outside the caching allocator (HCCL / NCCL) are a line of their own.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from memplan import compat
from memplan.distributed import strategies as S
from memplan.distributed._wrap import check_sharding, fsdp_units, mp_policy_text
from memplan.distributed.mixed_precision import cache_note
from memplan.core import load_workload, resolve_device, simulate_allocator
from memplan.errors import UserError
from memplan.step import Target
from memplan.trace.analysis import summarize
from memplan.workload import FSDP_SHARDINGS, TrainConfig, Workload, check_precision_sharding

METHOD_NOTES = {
    "trace": "traced torch's own {wrapper} on fake tensors with torch's fake process group "
             "(dist.init_process_group('fake'), FakeStore), one trace per distinct rank",
    "model": "modelled from the single-device trace: strategy arithmetic on its parameter, gradient, "
             "optimizer-state and activation bytes (memplan.distributed.strategies)",
}
WRAPPERS = {"ddp": "DistributedDataParallel", "zero1": "DistributedDataParallel + ZeroRedundancyOptimizer",
            "zero2": "FSDP2 fully_shard(reshard_after_forward=False)",
            "zero3": "FSDP2 fully_shard(reshard_after_forward=True)", "fsdp": "FSDP2 fully_shard",
            "fsdp1": "FSDP1 FullyShardedDataParallel(FULL_SHARD, use_orig_params=True)"}


@dataclass(frozen=True)
class RankEstimate:
    workload: str
    config: dict
    sharding: str
    world_size: int
    method: str                       # trace | model
    method_note: str
    device: str | None
    capacity_bytes: int | None
    peak_allocated_bytes: int         # the largest rank's peak
    peak_reserved_bytes: int
    peak_phase: str
    per_rank: list                    # dicts: rank, peak_allocated_bytes, peak_reserved_bytes, peak_phase, breakdown_at_peak
    comm_buffer_bytes: int            # HCCL / NCCL memory outside the caching allocator (per rank)
    comm_buffer_note: str
    outside_allocator_bytes: int      # runtime / context memory of the device (catalog)
    single_device_peak_bytes: int | None = None
    model_states: dict = field(default_factory=dict)   # params/grads/optimizer bytes per rank and the formula
    strategy_info: dict = field(default_factory=dict)  # FSDP units, DDP bucket cap
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    trace_mode: str = ""              # block-once | full (memplan.trace.blocks); "" for the model method
    trace_mode_reason: str = ""

    @property
    def device_total_bytes(self) -> int:
        return self.peak_reserved_bytes + self.comm_buffer_bytes + self.outside_allocator_bytes

    @property
    def fits(self) -> bool | None:
        return None if self.capacity_bytes is None else self.device_total_bytes <= self.capacity_bytes

    def rank(self, r: int) -> dict:
        for row in self.per_rank:
            if row["rank"] == r:
                return row
        # ranks not traced are like the traced one with the same role (0 or last)
        return self.per_rank[0] if r < self.world_size - 1 else self.per_rank[-1]

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(device_total_bytes=self.device_total_bytes, fits=self.fits)
        return d


def _workload(model_or_workload, hf_config=None) -> Workload:
    return load_workload(model_or_workload, hf_config)


def _device(device):
    return resolve_device(device)


def model_params(workload: Workload, cfg: TrainConfig) -> tuple[list[S.ParamInfo], list[list[str]], list[str]]:
    """Parameter sizes (in the training dtype) and FSDP units, from the model built on the meta device."""
    import torch

    with torch.device("meta"):
        model = workload.build_model()
    if cfg.precision == "bf16":
        model = model.to(torch.bfloat16)
    infos = S.param_infos(model)
    names = fsdp_units(model)
    units = [[f"{u}.{n}" for n, _ in model.get_submodule(u).named_parameters()] for u in names]
    in_units = {x for u in units for x in u}
    root = [p.name for p in infos if p.name not in in_units]
    if root:
        units.append(root)
    return infos, units, names


def estimate_per_rank(model_or_workload, cfg: TrainConfig | None = None, world_size: int = 2,
                      sharding: str = "ddp", device=None, *, hf_config: str | None = None,
                      method: str = "trace", ranks: tuple[int, ...] | None = None,
                      bucket_cap_mb: float | None = None, units: tuple[str, ...] = (),
                      communicators: int = 1, master_weights: bool = False, trace=None,
                      full_trace: bool = False) -> RankEstimate:
    """Per-rank peak memory of `world_size` data-parallel ranks under `sharding`.

    `method`: `trace` (torch's wrappers on a fake process group) or `model` (single-device trace +
    arithmetic). `ranks`: which ranks to trace (default: 0 and the last, which differ in ZeRO-1
    partitions and FSDP padding). `master_weights`: model an fp32 master copy in the optimizer state
    (12 bytes/param with Adam, the ZeRO paper's mixed precision); model method only.
    `trace`: a single-device Trace already made for this workload and config (model method).
    `full_trace`: trace every layer of every rank even where block-once applies (FSDP).
    """
    t0 = time.perf_counter()
    cfg, sharding = _checked(cfg, sharding, world_size, method, master_weights)
    workload = _workload(model_or_workload, hf_config)
    dev = _device(device)
    method, notes = _usable_method(method, sharding)
    params, unit_params, unit_names = model_params(workload, cfg)
    n_params = sum(p.numel for p in params)
    comm, comm_note = S.comm_buffer_bytes(dev.family, communicators, world_size)
    info: dict = {"fsdp_units": unit_names} if sharding in FSDP_SHARDINGS else {
        "ddp_bucket_cap_mb": bucket_cap_mb or 25, "ddp_first_bucket_bytes": 1024 * 1024,
        "gradient_as_bucket_view": False}
    per_rank = []
    modes: list[tuple[str, str]] = []
    single_peak = None
    if ranks is None:
        ranks = (0,) if sharding == "ddp" or world_size == 1 else (0, world_size - 1)
    if method == "trace":
        from memplan.distributed._fake_trace import trace_rank

        for r in ranks:
            tr, got = trace_rank(workload, cfg, sharding, world_size, r, Target(family=dev.family),
                                 bucket_cap_mb=bucket_cap_mb, units=units, full_trace=full_trace)
            info.update(got)
            modes.append((tr.mode, tr.mode_reason))
            per_rank.append(_rank_row(r, tr, dev))
            notes.extend(n for n in tr.notes if n not in notes)
    else:
        from memplan.trace.tracer import trace_workload

        tr = trace if trace is not None else trace_workload(workload, S.single_device_config(cfg),
                                                            Target(family=dev.family))
        s = summarize(tr)
        single_peak = s.peak_allocated_bytes
        sim = simulate_allocator(tr, dev)
        frag = (sim.peak_reserved_bytes - s.peak_allocated_bytes) if sim is not None else 0
        states = S.phase_states(tr)
        opt_bytes = 12 * sum(p.numel for p in params if p.trainable) if master_weights else None
        if master_weights:
            notes.append("optimizer state modelled as an fp32 master copy + Adam moments: 12 bytes/param")
        for r in ranks:
            m = S.model_rank_bytes(states, params, sharding, world_size, r, unit_params, opt_bytes,
                                   0.5 if cfg.precision == "bf16-mp" else 1.0)
            per_rank.append({"rank": r, "peak_allocated_bytes": m["peak_bytes"],
                             "peak_reserved_bytes": m["peak_bytes"] + max(frag, 0), "peak_phase": m["peak_phase"],
                             "breakdown_at_peak": m["components"], "phase_peaks": m["phase_totals"]})
        if frag > 0:
            notes.append("reserved = allocated + the single-device trace's allocator overhead at its peak")
    _precision_info(cfg, sharding, params, info, notes)
    top = max(per_rank, key=lambda row: row["peak_reserved_bytes"])
    states = _model_states(params, sharding, world_size, master_weights)
    return RankEstimate(
        workload=workload.name, config=cfg.to_dict(), sharding=sharding, world_size=world_size, method=method,
        method_note=METHOD_NOTES[method].format(wrapper=WRAPPERS[sharding]), device=dev.name,
        capacity_bytes=dev.capacity_bytes, peak_allocated_bytes=max(r["peak_allocated_bytes"] for r in per_rank),
        peak_reserved_bytes=top["peak_reserved_bytes"], peak_phase=top["peak_phase"], per_rank=per_rank,
        comm_buffer_bytes=comm, comm_buffer_note=comm_note, outside_allocator_bytes=dev.outside_allocator_bytes,
        single_device_peak_bytes=single_peak, model_states={"num_params": n_params, **states},
        strategy_info=info, notes=notes, seconds=round(time.perf_counter() - t0, 3),
        trace_mode=_trace_mode(modes)[0], trace_mode_reason=_trace_mode(modes)[1],
    )


def _checked(cfg, sharding: str, world_size: int, method: str, master_weights: bool) -> tuple[TrainConfig, str]:
    cfg = (cfg or TrainConfig()).validate()
    sharding = check_sharding(sharding)
    check_precision_sharding(cfg.precision, sharding)
    if world_size < 1:
        raise UserError(f"world size must be >= 1, got {world_size}")
    if method not in ("trace", "model"):
        raise UserError(f"unknown method {method!r} (trace or model)")
    if master_weights and method != "model":
        raise UserError("master_weights is modelled arithmetic: use method='model'")
    return cfg, sharding


def _precision_info(cfg: TrainConfig, sharding: str, params: list[S.ParamInfo], info: dict, notes: list) -> None:
    """FSDP's mixed-precision policy in `info`; autocast's weight-cache note in `notes`."""
    note = cache_note(cfg, sharding, sum(p.numel for p in params if p.trainable and p.itemsize == 4))
    if note:
        notes.append(note)
    if cfg.precision == "bf16-mp":
        info["mp_policy"] = mp_policy_text(cfg, fsdp1=sharding == "fsdp1")


def _rank_row(rank: int, tr, dev) -> dict:
    """One traced rank's row: peaks (allocated, reserved by the device's allocator), phase, breakdown."""
    s = summarize(tr)
    sim = simulate_allocator(tr, dev)
    reserved = sim.peak_reserved_bytes if sim is not None else s.peak_allocated_bytes
    return {"rank": rank, "peak_allocated_bytes": s.peak_allocated_bytes, "peak_reserved_bytes": reserved,
            "peak_phase": s.peak_phase, "breakdown_at_peak": s.breakdown_at_peak, "phase_peaks": s.phase_peaks}


def _trace_mode(modes: list[tuple[str, str]]) -> tuple[str, str]:
    """One mode for the traced ranks (the first rank's unless one differs: then the first other's)."""
    if not modes:
        return "", ""
    other = [m for m in modes if m != modes[0]]
    return other[0] if other else modes[0]


def _usable_method(method: str, sharding: str) -> tuple[str, list[str]]:
    """`method`, or `model` with one note when this torch cannot trace `sharding` with torch's own
    wrapper on a fake process group (no fake group; no FSDP2 `fully_shard` before torch 2.3)."""
    instead = "per-rank memory modelled from the single-device trace (method 'model')"
    if method != "trace":
        return method, []
    if not compat.fake_process_group():
        return "model", [compat.missing("torch's fake process group", instead)]
    if sharding in ("zero2", "zero3", "fsdp") and compat.fully_shard() is None:   # fsdp1: FSDP1, in every torch
        return "model", [compat.missing("FSDP2 fully_shard", instead)]
    return method, []


def _model_states(params: list[S.ParamInfo], sharding: str, n: int, master_weights: bool) -> dict:
    """The ZeRO paper's model-state bytes per rank for this parameter count (for comparison)."""
    stage = S.ZERO_STAGE[sharding]
    psi = sum(p.numel for p in params if p.trainable)
    return {"zero_stage": stage, "zero_paper_bytes_per_rank": S.zero_paper_bytes(psi, stage, n),
            "zero_paper_formula": S.ZERO_PAPER_FORMULA[stage] + ", K=12"}
