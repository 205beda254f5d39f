"""The Estimate: the answer of `memplan analyze`, as a frozen dataclass with its JSON form, and how a
trace becomes one (`estimate_from_trace`: summary of the trace + the target device's allocator replay)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from memplan.core.device import DeviceTarget, simulate_allocator
from memplan.step import resolve_optimizer_impl
from memplan.trace.analysis import summarize
from memplan.workload import TrainConfig, Workload


@dataclass(frozen=True)
class Estimate:
    workload: str
    config: dict
    device: str | None                 # catalog name, or None for plain CPU accounting
    capacity_bytes: int | None
    peak_allocated_bytes: int          # max bytes held by live tensors over the traced steps (build excluded)
    peak_reserved_bytes: int           # what the device's caching allocator holds at its peak
    outside_allocator_bytes: int       # runtime / context memory the allocator does not see
    peak_phase: str
    peak_step: int
    peak_micro_step: int
    breakdown_at_peak: dict            # category -> bytes
    phase_peaks: dict                  # phase -> bytes
    first_step_peak_bytes: int
    modules: list                      # dict rows, largest first
    fragmentation_bytes: int = 0       # reserved - allocated at the reserved peak
    notes: list = field(default_factory=list)
    method: str = "trace"              # trace | fallback
    trace_seconds: float = 0.0
    n_events: int = 0
    trace_mode: str | None = None      # full | block-once (memplan.trace.blocks); None for a fallback
    trace_mode_reason: str = ""
    outside_allocator_known: bool = True  # False: not in the catalog; counted as 0 (JSON: null)

    @property
    def device_total_bytes(self) -> int:
        """What the device must hold: the allocator's reserved peak plus memory outside it."""
        return self.peak_reserved_bytes + self.outside_allocator_bytes

    @property
    def fits(self) -> bool | None:
        if self.capacity_bytes is None:
            return None
        return self.device_total_bytes <= self.capacity_bytes

    @property
    def headroom_bytes(self) -> int | None:
        if self.capacity_bytes is None:
            return None
        return self.capacity_bytes - self.device_total_bytes

    def to_dict(self) -> dict:
        d = asdict(self)
        d["fits"] = self.fits
        d["headroom_bytes"] = self.headroom_bytes
        d["device_total_bytes"] = self.device_total_bytes
        if not self.outside_allocator_known:
            d["outside_allocator_bytes"] = None
        return d


def _resolved_impl(workload: Workload, cfg: TrainConfig, dev: DeviceTarget) -> dict:
    """The config's dict form, with the optimizer implementation torch picks on the device when 'default'."""
    config = cfg.to_dict()
    if cfg.optimizer_impl == "default" and workload.make_optimizer is None:
        config["optimizer_impl_resolved"] = next(
            k for k, v in {"for-loop": {"foreach": False}, "foreach": {"foreach": True}}.items()
            if v == resolve_optimizer_impl("default", dev.family))
    return config


def _oom_note(trace, sim) -> str:
    phase, step, _micro = trace.phase_at(sim.oom.event_index)
    idx = trace.events[sim.oom.event_index]
    r = trace.storages[idx] if idx >= 0 else None
    where = f" in {r.module or 'the top level'} ({r.op})" if r is not None else ""
    return f"the caching allocator would run out during {phase} of step {step}{where}"


def _summary(trace):
    """`summarize(trace)`, once per trace (a plan estimates one trace under several allocator settings)."""
    memo = getattr(trace, "replay_memo", None)
    if memo is None:
        return summarize(trace)
    key = ("summary", len(trace.events), len(trace.storages))
    s = memo.get(key)
    if s is None:
        s = memo[key] = summarize(trace)
    return s


def estimate_from_trace(workload: Workload, cfg: TrainConfig, dev: DeviceTarget, trace,
                        seconds: float = 0.0, sim=...) -> Estimate:
    """The Estimate of a trace on `dev`. `sim` is the allocator replay when the caller already has it
    (default: replayed here; None for plain CPU accounting)."""
    s = _summary(trace)
    reserved, frag = s.peak_allocated_bytes, 0
    notes = list(trace.notes)
    if not dev.outside_allocator_known:
        notes.append(f"memory held outside the allocator on {dev.name} (runtime, HCCL/NCCL buffers) is not in "
                     "the catalog: leave headroom, or give the usable amount with --capacity")
    if sim is ...:
        sim = simulate_allocator(trace, dev)
    if sim is not None:
        reserved, frag = sim.peak_reserved_bytes, sim.fragmentation_at_peak_bytes
        notes.extend(sim.notes or [])
        if sim.oom is not None:
            notes.append(_oom_note(trace, sim))
    modules = [
        {"module": r.module, "bytes_at_peak": r.bytes_at_peak, "by_category": dict(r.by_category),
         "activations_saved_bytes": r.activations_saved}
        for r in s.modules
    ]
    return Estimate(
        workload=workload.name, config=_resolved_impl(workload, cfg, dev), device=dev.name,
        capacity_bytes=dev.capacity_bytes,
        peak_allocated_bytes=s.peak_allocated_bytes, peak_reserved_bytes=reserved,
        outside_allocator_bytes=dev.outside_allocator_bytes, outside_allocator_known=dev.outside_allocator_known,
        peak_phase=s.peak_phase, peak_step=s.peak_step,
        peak_micro_step=s.peak_micro_step, breakdown_at_peak=dict(s.breakdown_at_peak),
        phase_peaks=dict(s.phase_peaks),
        first_step_peak_bytes=s.first_step_peak_bytes, modules=modules, fragmentation_bytes=frag,
        notes=notes, trace_seconds=round(seconds, 3), n_events=s.n_events,
        trace_mode=getattr(trace, "mode", "full"), trace_mode_reason=getattr(trace, "mode_reason", ""),
    )
