"""From evidence to an incident: the arithmetic of OOM messages, and the weighing of codes against text.

OOM messages (all sizes in bytes):
- `absurd-request`: the 1 EB guard fired, or one request is >= 1 TiB (no accelerator has that much), or more
  than 16x the device.
- `environment`: the device reported at least twice the request (and 64 MiB more) free, so the failure was
  not a shortage (per-process limit, driver, another job).
- `foreign-memory`: other processes named in the message hold at least the request, or
  total - free - (this process / reserved) exceeds the request and 5 % of the device after an allowance for
  the runtime context (1 GiB CUDA, 3.5 GiB Ascend, 0.5 GiB when this process's own usage is known).
- `fragmentation`: reserved - allocated covers the request and is at least 10 % of what PyTorch reserved
  (below that, defragmenting would only postpone the OOM by one allocation).
- otherwise `capacity`.

Other incidents: each piece of evidence argues for a category with a strength (3 = a sentence naming the
cause, 2 = a specific code, 1 = generic). The strongest tier wins, so text that explains a failure beats a
numeric code printed before it (`error code 100000` followed by an AI Core exception is a kernel fault). Within
a tier, causes come before symptoms: memory > environment > comm > invalid-param > op-not-supported >
kernel-fault > unknown > benign.

Known limitations: the allowances are judgement calls; an OOM message without `free` or `total` falls back
to `capacity` with a lower confidence.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from memplan.diagnose import _catalog as cat_mod
from memplan.diagnose._parse import Evidence
from memplan.diagnose._types import Category

GiB = 1 << 30
MiB = 1 << 20
TiB = 1 << 40

PRIORITY = ["absurd-request", "memory", "environment", "comm", "invalid-param", "op-not-supported", "kernel-fault",
            "unknown", "benign"]
_GENERIC_CODES = {"ERR00100", "ERR01100", "ERR03100", "ERR00005", "ERR01005", "500001", "500002", "500003",
                  "500000", "ERR02200", "ERR01200"}


@dataclass
class Group:
    """Evidence close together in one source: one incident to be."""

    source: str
    evidence: list[Evidence] = field(default_factory=list)
    first: int = 0
    last: int = 0
    dropped: int = 0

    def add(self, ev: Evidence, cap: int = 400) -> None:
        if not self.evidence:
            self.first = ev.line
        self.last = max(self.last, ev.line)
        if len(self.evidence) < cap:
            self.evidence.append(ev)
        else:
            self.dropped += 1

    @property
    def has_oom(self) -> bool:
        return any(e.kind in ("oom", "host-oom") for e in self.evidence)


@functools.lru_cache(maxsize=4096)
def code_category(code: str) -> tuple[str | None, int, str]:
    """(category or None, strength, display name) for a code found in a log."""
    try:
        if code.startswith("HCCL:"):
            row = cat_mod._hccl_by_value().get(code[5:])
            return (row["category"], 2, row["name"]) if row else (None, 0, f"HCCL result {code[5:]}")
        if code.startswith("CUDA:"):
            row = cat_mod._cuda_by_value().get(code[5:])
            return (row["category"], 2, row["name"]) if row else (None, 0, f"cuda runtime error {code[5:]}")
        info = cat_mod.decode(code)
    except Exception:  # a code that does not decode is just context
        return None, 0, code
    if not info.known:
        return None, 0, code
    c = info.category.value
    strength = 2
    if code in _GENERIC_CODES or c == "unknown" or (code.startswith("E") and code.endswith("9999")):
        strength = 1
    if c in ("capacity", "fragmentation", "foreign-memory"):
        c = "memory"
    return c, strength, code


def _fmt(n: int | None) -> str:
    from memplan.units import fmt_bytes

    return fmt_bytes(n)


@dataclass
class Verdict:
    category: Category
    confidence: float
    summary: str
    facts: dict[str, Any]
    flags: set[str]


def classify_oom(n: dict[str, Any], flags: set[str]) -> Verdict:
    req = n.get("requested_bytes")
    total = n.get("total_bytes")
    alloc = n.get("allocated_bytes")
    free = n.get("free_bytes")
    reserved = n.get("reserved_bytes")
    unalloc = n.get("reserved_unallocated_bytes")
    in_use = n.get("process_in_use_bytes")
    procs = list(n.get("processes", []))
    device = n.get("device", "device")
    npu = str(device).startswith("npu")
    facts: dict[str, Any] = {}
    if reserved is None and alloc is not None and unalloc is not None:
        reserved = alloc + unalloc
        facts["reserved_bytes"] = reserved
    if unalloc is None and reserved is not None and alloc is not None:
        unalloc = reserved - alloc
        facts["reserved_unallocated_bytes"] = unalloc
    dev = f"{device}" if device else "the device"
    host = "host" in flags or device == "cpu"

    # The message lists processes; in containers the process itself shows up as "Process N".
    other = 0
    if procs:
        if in_use is None and len(procs) == 1 and reserved is not None and procs[0][1] >= reserved \
                and procs[0][1] - reserved < 2 * GiB:
            in_use = procs[0][1]
            facts["process_in_use_bytes"] = in_use
            facts["self_listed_as_process"] = procs[0][0]
        else:
            other = sum(size for _, size in procs)
            facts["other_processes_bytes"] = other
    foreign = None
    if total is not None and free is not None:
        if in_use is not None:
            foreign = total - free - in_use
            allowance = GiB // 2
            if reserved is not None:
                facts["non_pytorch_bytes"] = max(0, in_use - reserved)
        elif reserved is not None:
            foreign = total - free - reserved
            allowance = int(3.5 * GiB) if npu else GiB
        if foreign is not None:
            facts["foreign_bytes"] = max(0, foreign)

    conf = 0.9
    missing = [k for k, v in (("requested", req), ("total", total), ("free", free), ("allocated", alloc)) if v is None]
    conf -= 0.1 * len(missing)

    if host:
        return Verdict(Category.CAPACITY, 0.8,
                       f"Host RAM ran out: one allocation of {_fmt(req)} failed on the CPU side (not device memory).",
                       facts, {"host"})
    if req is not None and (n.get("guard_1eb") or req >= TiB or (total and req > 16 * total)):
        where = f"; {dev} has {_fmt(total)} in total" if total else ""
        return Verdict(Category.ABSURD_REQUEST, 0.95,
                       f"One allocation asked for {_fmt(req)} — more than any accelerator holds{where}. "
                       "This is a size computed from a wrong shape or an overflowed length, not a tuning problem.",
                       facts, set())
    if req is not None and free is not None and free >= 2 * req and free - req >= 64 * MiB:
        return Verdict(Category.ENVIRONMENT, 0.6,
                       f"An allocation of {_fmt(req)} failed on {dev} although {_fmt(free)} was reported free: the "
                       "device was not short of memory. A per-process limit, the driver, or another job that "
                       "released memory in between is the likely cause.", facts, {"free_ok"})

    frag_ok = req is not None and unalloc is not None and reserved and unalloc >= req and unalloc >= 0.10 * reserved
    foreign_amount = 0
    foreign_ok = False
    if req is not None:
        if other and other >= req and other >= 256 * MiB:
            foreign_ok, foreign_amount = True, other
        elif foreign is not None and total:
            excess = foreign - allowance
            if excess >= req and excess >= 0.05 * total:
                foreign_ok, foreign_amount = True, foreign
    pct = f" ({100 * alloc / total:.0f} % of the device)" if alloc is not None and total else ""
    head = f"Out of memory on {dev}: a request for {_fmt(req)} failed"
    state = []
    if alloc is not None:
        state.append(f"{_fmt(alloc)} was allocated by PyTorch{pct}")
    if reserved is not None:
        state.append(f"{_fmt(reserved)} reserved")
    if free is not None:
        state.append(f"{_fmt(free)} free")
    if total is not None:
        state.append(f"{_fmt(total)} in total")
    state_s = (" while " + ", ".join(state)) if state else ""

    if foreign_ok and (not frag_ok or foreign_amount >= (unalloc or 0)):
        who = f"{len(procs)} other process(es) hold {_fmt(other)}" if other else \
            f"{_fmt(foreign)} of the device is not accounted for by this process's allocator"
        return Verdict(Category.FOREIGN_MEMORY, max(0.5, conf),
                       f"{head}{state_s}. {who} (other processes, the runtime, communication buffers) — "
                       f"more than the {_fmt(req)} requested. Memory outside PyTorch is what ran out.",
                       facts, {"multi_process"} if other else set())
    if frag_ok:
        share = unalloc / reserved
        c = max(0.5, conf - (0.15 if share < 0.15 else 0))
        return Verdict(Category.FRAGMENTATION, c,
                       f"{head}{state_s}. PyTorch held {_fmt(unalloc)} cached but unallocated "
                       f"({100 * share:.0f} % of what it reserved), more than the request: the free space is split "
                       "into blocks too small for it. This is fragmentation.", facts, set())
    if req is None:
        return Verdict(Category.CAPACITY, 0.5, f"Out of memory on {dev}; the message carries no sizes.", facts, set())
    why = []
    if total is not None and req > total:
        why.append("this single request is larger than the whole device")
    elif unalloc is not None and unalloc >= req:
        why.append(f"the cache held {_fmt(unalloc)} unused, enough for this request, but that is only "
                   f"{100 * unalloc / max(reserved or 1, 1):.0f} % of what PyTorch reserved, so defragmenting "
                   "would only postpone the failure")
    elif unalloc is not None:
        why.append(f"neither free memory nor the {_fmt(unalloc)} cached by PyTorch covers it")
    joined = "; ".join(why)
    tail = (" " + joined[:1].upper() + joined[1:] + ".") if why else ""
    return Verdict(Category.CAPACITY, max(0.5, conf),
                   f"{head}{state_s}.{tail} The job needs more memory than this device has at this point.",
                   facts, set())


_LEAD = {
    "environment": "The software or device environment is broken",
    "comm": "Collective communication failed",
    "invalid-param": "An operator rejected its arguments",
    "op-not-supported": "An operator has no kernel for this device or dtype",
    "kernel-fault": "A kernel faulted on the device",
    "unknown": "An error was reported but the log does not say enough to name the cause",
    "benign": "Only log noise: nothing here is an error",
    "memory": "The device ran out of memory",
}


def classify_text(evidence: list[Evidence]) -> tuple[Category, float, str, list[Evidence], set[str]]:
    """Weigh codes and sentences. Returns (category, confidence, lead sentence, deciding evidence, flags)."""
    best: dict[str, int] = {}
    deciding: dict[str, list[Evidence]] = {}
    flags: set[str] = set()
    for ev in evidence:
        flags |= set(ev.flags)
        if ev.kind == "codes":
            for code in ev.codes:
                c, s, _ = code_category(code)
                if c and s:
                    best[c] = max(best.get(c, 0), s)
                    deciding.setdefault(c, []).append(ev)
        elif ev.category and ev.strength:
            best[ev.category] = max(best.get(ev.category, 0), ev.strength)
            deciding.setdefault(ev.category, []).append(ev)
    if not best:
        return Category.UNKNOWN, 0.3, _LEAD["unknown"], [], flags
    top = max(best.values())
    tier = [c for c in PRIORITY if best.get(c) == top]
    chosen = tier[0]
    strong_others = [c for c in best if c != chosen and best[c] == top and c != "benign"]
    conf = {3: 0.85, 2: 0.7, 1: 0.45}.get(top, 0.3)
    if strong_others:
        conf -= 0.1
    if chosen == "memory":
        category = Category.FOREIGN_MEMORY if "device_open" in flags else Category.CAPACITY
        lead = ("The device's memory was already taken when this process tried to open it"
                if category == Category.FOREIGN_MEMORY else _LEAD["memory"])
    else:
        category = Category(chosen)
        lead = _LEAD[chosen]
    return category, conf, lead, deciding.get(chosen, []), flags
