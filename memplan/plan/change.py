"""`Change`: one recommended change to a training job, the one type the planner (`memplan plan`) and the
pre-flight check (`memplan.preflight`) both return."""
from __future__ import annotations

from dataclasses import dataclass, field

from memplan.units import fmt_bytes


@dataclass(frozen=True)
class Change:
    id: str
    kind: str                     # allocator | optimizer-impl | batch | checkpoint | precision | optimizer | sharding | device
                                  # | plan (several applied changes, as preflight offers them)
    title: str
    same_math: bool
    applied: bool                 # part of the plan's configuration
    method: str                   # trace | replay | model | analytic
    predicted_total_bytes: int | None
    saving_bytes: int | None      # vs the baseline's device total (negative: uses more, e.g. a larger batch)
    fits: bool | None
    code: str = ""
    note: str = ""
    config: dict = field(default_factory=dict)   # the TrainConfig edits that express it (to re-trace it)
    alloc_conf: str | None = None                # the allocator setting that expresses it

    def render(self) -> str:
        """One line: the change, and its re-traced prediction when there is one."""
        if self.predicted_total_bytes is None:
            return self.title
        verdict = "fits" if self.fits else "still does not fit"
        how = "re-traced" if self.method == "trace" else self.method
        return f"{self.title} -> predicted {fmt_bytes(self.predicted_total_bytes)} ({verdict}, {how})"

    def to_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "title": self.title, "same_math": self.same_math,
                "applied": self.applied, "method": self.method, "predicted_total_bytes": self.predicted_total_bytes,
                "saving_bytes": self.saving_bytes, "fits": self.fits, "code": self.code, "note": self.note}
