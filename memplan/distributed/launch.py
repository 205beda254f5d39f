"""`validate_distributed`: launch a real torch.distributed job of the strategy and compare each rank's
measured peak with its per-rank estimate.

`world_size` processes on this machine, started like torchrun (MASTER_ADDR=127.0.0.1, a free port,
RANK / WORLD_SIZE / LOCAL_RANK): gloo on `cpu`, nccl on `cuda`, hccl on `npu`. Each rank wraps the
model exactly as the estimate's fake-process-group trace does (`_wrap.wrap_workload`), runs the same
step driver (`memplan.step.run`) and measures its own peak: the CPU allocator's accounting under the
profiler on cpu (`_measure`), `max_memory_allocated` / `max_memory_reserved` over the last step on a
device. The model file is loaded by every rank: it is the user's own code and runs in those processes.

On CPU, a free made on one of gloo's worker threads (the last reference to gloo's reduce-scatter
copy, or to DDP's construction-time broadcast copy on a loaded machine, can die there: a race) is by
default missing from the profiler's record *and* from the allocator's own total; `_measure` puts such
frees back from the record (a collective's temporary when its op returned; any other block where the
allocator's total, made to count every thread by a c10 flag, fell by its size; else at the reuse of
its address), so the measurement does not drift up at random (`raw_peak_allocated_bytes` keeps the
allocator's own figure).
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

from memplan.distributed._wrap import check_sharding
from memplan.distributed._spawn import spawn_ranks
from memplan.distributed.estimate import estimate_per_rank
from memplan.errors import UserError
from memplan.workload import TrainConfig


@dataclass(frozen=True)
class DistValidation:
    workload: str
    sharding: str
    world_size: int
    device: str
    backend: str
    ok: bool                      # every rank ran and every rank is within tolerance
    tolerance_pct: float
    ranks: list                   # dicts: rank, predicted/measured peak_allocated_bytes, error_pct, peak phases
    estimate: dict                # the RankEstimate's dict
    max_abs_error_pct: float | None
    errors: list = field(default_factory=list)   # rank failures (with a log tail)

    def to_dict(self) -> dict:
        d = asdict(self)
        worst = max(self.ranks, key=lambda r: r["measured"]["peak_allocated_bytes"] or 0) if self.ranks else None
        d["predicted"] = worst["predicted"] if worst else None
        d["measured"] = worst["measured"] if worst else None
        d["error_pct"] = worst["error_pct"] if worst else None
        return d


def _pct(pred: int, meas: int | None) -> float | None:
    if not meas:
        return None
    return round(100.0 * (pred - meas) / meas, 3)


def validate_distributed(model_path: str | None, cfg: TrainConfig | None = None, world_size: int = 2,
                         sharding: str = "ddp", device: str = "cpu", *, hf_config: str | None = None,
                         task: str | None = None, tolerance_pct: float = 5.0, timeout_s: float = 600.0,
                         bucket_cap_mb: float | None = None, units: tuple[str, ...] = (),
                         method: str = "trace", estimate=None) -> DistValidation:
    """Run `world_size` real ranks of `sharding` and compare each rank's peak with the estimate."""

    cfg = (cfg or TrainConfig()).validate()
    sharding = check_sharding(sharding)
    device = (device or "cpu").lower()
    if device not in ("cpu", "cuda", "npu"):
        raise UserError(f"validate runs on cpu, cuda or npu (got {device!r})")
    if world_size < 1:
        raise UserError(f"world size must be >= 1, got {world_size}")
    if model_path is None and hf_config is None:
        raise UserError("no model: give a model file (model.py) or --hf-config config.json")
    if model_path is not None and not os.path.exists(model_path):
        raise UserError(f"model file not found: {model_path}")
    if device == "cpu" and world_size > (os.cpu_count() or 1) * 4:
        raise UserError(f"{world_size} CPU ranks on {os.cpu_count()} cores: use a smaller --world-size")
    est = estimate or estimate_per_rank(model_path, cfg, world_size, sharding,
                                        device=None if device == "cpu" else device,
                                        hf_config=hf_config, method=method, ranks=tuple(range(world_size)),
                                        bucket_cap_mb=bucket_cap_mb, units=units)
    spec = {"device": device, "world_size": world_size, "sharding": sharding,
            "model": os.path.abspath(model_path) if model_path else None,
            "hf_config": os.path.abspath(hf_config) if hf_config else None, "task": task,
            "config": cfg.to_dict(), "bucket_cap_mb": bucket_cap_mb, "units": list(units)}
    results = spawn_ranks(spec, world_size, timeout_s)
    rows, errors = [], []
    for res in results:
        r = res["rank"]
        if not res.get("ok"):
            errors.append({"rank": r, "error": res.get("error"),
                           "log_tail": (res.get("traceback") or res.get("log_tail") or "")[-2000:]})
            continue
        pred = est.rank(r)
        meas = res["peak_allocated_bytes"]
        rows.append({
            "rank": r,
            "predicted": {"peak_allocated_bytes": pred["peak_allocated_bytes"],
                          "peak_reserved_bytes": pred["peak_reserved_bytes"] if device != "cpu" else None,
                          "peak_phase": pred["peak_phase"], "phase_peaks": pred.get("phase_peaks", {})},
            "measured": {"peak_allocated_bytes": meas, "peak_reserved_bytes": res.get("peak_reserved_bytes"),
                         "peak_phase": res.get("peak_phase"), "phase_peaks": res.get("phase_peaks", {}),
                         "raw_peak_allocated_bytes": res.get("raw_peak_allocated_bytes"),
                         "recovered_free_bytes": res.get("recovered_free_bytes"),
                         "every_thread": res.get("every_thread")},
            "error_pct": _pct(pred["peak_allocated_bytes"], meas),
        })
    errs = [abs(r["error_pct"]) for r in rows if r["error_pct"] is not None]
    worst = max(errs) if errs else None
    ok = not errors and len(rows) == world_size and worst is not None and worst <= tolerance_pct
    backend = {"cpu": "gloo", "cuda": "nccl", "npu": "hccl"}[device]
    return DistValidation(workload=est.workload, sharding=sharding, world_size=world_size, device=device,
                          backend=backend, ok=ok, tolerance_pct=tolerance_pct, ranks=rows,
                          estimate=est.to_dict(), max_abs_error_pct=worst, errors=errors)
