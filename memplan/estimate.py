"""The Estimate: the answer of `memplan analyze`, as a frozen dataclass with its JSON form."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from memplan.report.envelope import envelope


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
    outside_allocator_known: bool = True  # False: not in the catalog; counted as 0 (JSON: null)
    trace_seconds: float = 0.0
    n_events: int = 0

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
        return envelope("analyze", d)
