"""The data that `memplan.diagnose` returns: categories, incidents, a diagnosis, a decoded code.

Everything here is a frozen dataclass or a `str` Enum; only the CLI prints. `to_dict()` gives the keys
fixed by DESIGN.md (`incidents`, each with `category`, `codes`, `numbers`, `summary`, `advice`;
`primary_category`), plus extra keys that help a reader (confidence, line, evidence, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Category(str, Enum):
    """The fixed vocabulary of DESIGN.md, in the order a report lists them."""

    CAPACITY = "capacity"
    """Genuinely too little memory for what the job asks."""
    FRAGMENTATION = "fragmentation"
    """Cached-but-unallocated memory would have covered the request."""
    FOREIGN_MEMORY = "foreign-memory"
    """Memory held outside this process's allocator: other processes, runtime, HCCL/NCCL buffers."""
    ABSURD_REQUEST = "absurd-request"
    """An impossible size: a bug, not something to tune."""
    INVALID_PARAM = "invalid-param"
    """An operator or API rejected its arguments."""
    OP_NOT_SUPPORTED = "op-not-supported"
    """No kernel for this op / dtype / device."""
    KERNEL_FAULT = "kernel-fault"
    """AI Core / AICPU / CUDA kernel exception, illegal address, device-side assert, trap."""
    COMM = "comm"
    """HCCL / NCCL failure or timeout."""
    ENVIRONMENT = "environment"
    """Driver, firmware, CANN or package versions; device busy, missing or unusable."""
    BENIGN = "benign"
    """Log noise that is not an error."""
    UNKNOWN = "unknown"
    """Not enough evidence to say."""


MEMORY_CATEGORIES = frozenset({Category.CAPACITY, Category.FRAGMENTATION, Category.FOREIGN_MEMORY})


@dataclass(frozen=True)
class Advice:
    """One piece of advice from the catalog (`data/advice.json`), placeholders filled in."""

    id: str
    title: str
    text: str

    def render(self) -> str:
        return f"{self.title}: {self.text}"


@dataclass(frozen=True)
class Incident:
    """One failure (or one kind of noise) found in a log."""

    category: Category
    summary: str
    advice: tuple[Advice, ...]
    confidence: float
    codes: tuple[str, ...] = ()
    numbers: dict[str, Any] = field(default_factory=dict)
    device: str | None = None
    source: str = "<text>"
    line: int = 0
    occurrences: int = 1
    evidence: tuple[str, ...] = ()
    location: str | None = None
    op: str | None = None
    estimate: dict[str, Any] | None = None
    basis: str = "rules"
    """`rules` (a code, a catalogued message or the OOM arithmetic decided) or `prior` (the statistical fallback
    guessed from the wording of lines no rule knows)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category.value,
            "codes": list(self.codes),
            "numbers": dict(self.numbers),
            "summary": self.summary,
            "advice": [a.render() for a in self.advice],
            "advice_ids": [a.id for a in self.advice],
            "confidence": round(self.confidence, 2),
            "device": self.device,
            "source": self.source,
            "line": self.line,
            "occurrences": self.occurrences,
            "location": self.location,
            "op": self.op,
            "evidence": list(self.evidence),
            "estimate": self.estimate,
            "basis": self.basis,
        }


@dataclass(frozen=True)
class Diagnosis:
    """Everything found in one or more logs; `primary` is the incident to act on first."""

    incidents: tuple[Incident, ...]
    primary_category: Category
    sources: tuple[str, ...] = ()
    lines_read: int = 0
    bytes_read: int = 0
    notes: tuple[str, ...] = ()
    input_problem: str | None = None
    """Set when the input is not a log at all (empty, binary, only blank lines): the CLI exits 2 with it."""

    @property
    def primary(self) -> Incident | None:
        for inc in self.incidents:
            if inc.category == self.primary_category:
                return inc
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "primary_category": self.primary_category.value,
            "incidents": [i.to_dict() for i in self.incidents],
            "sources": list(self.sources),
            "lines_read": self.lines_read,
            "bytes_read": self.bytes_read,
            "notes": list(self.notes),
            "input_problem": self.input_problem,
        }


@dataclass(frozen=True)
class CodeInfo:
    """What one error code means (`memplan decode`)."""

    code: str
    known: bool
    kind: str
    """acl | cann | torch_npu | hccl | cuda | nccl | unknown"""
    name: str | None
    family: str
    meaning: str
    fault: str
    """Who is at fault: caller, resource, storage/feature, internal, system, hardware, none, unknown."""
    category: Category
    advice: tuple[Advice, ...] = ()
    status: str | None = None
    history: tuple[dict[str, str], ...] = ()
    sources: tuple[dict[str, str], ...] = ()
    alternatives: tuple[dict[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "known": self.known,
            "kind": self.kind,
            "name": self.name,
            "family": self.family,
            "meaning": self.meaning,
            "fault": self.fault,
            "category": self.category.value,
            "advice": [a.render() for a in self.advice],
            "advice_ids": [a.id for a in self.advice],
            "status": self.status,
            "history": list(self.history),
            "sources": list(self.sources),
            "alternatives": list(self.alternatives),
        }
