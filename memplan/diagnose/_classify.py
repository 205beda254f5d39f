"""From evidence to an incident: the arithmetic of OOM messages, and the weighing of codes against text.

OOM messages (all sizes in bytes):
- `absurd-request`: the 1 EB guard fired, or one request is >= 1 TiB (no accelerator has that much; a host request
  >= 1 PiB, more than any machine's RAM), or larger
  than the whole device (no allocator, batch size or cache setting can serve it on this device) when the
  device total is credible (what PyTorch holds fits in it).
- `environment`: the device reported more than the request free (10 % and 64 MiB more), so the failure was
  not a shortage (per-process limit, driver, another job).
- `foreign-memory`: other processes named in the message hold at least the request (and more than PyTorch reserved;
  where the device's total and free are known, total - free - this process's share must also exceed what PyTorch
  reserved, since the list names this process too: dev batch 106), or
  total - free - (this process / reserved) exceeds the request and 5 % of the device after an allowance for
  the runtime context (1 GiB CUDA, 3.5 GiB Ascend, 0.5 GiB when this process's own usage is known).
- `fragmentation`: the allocator's own arithmetic says a perfect allocator would have served the request:
  with cached_free = reserved - allocated, request <= cached_free, or (when the message gives the device's free
  memory) cached_free > 0 and free < request <= free + cached_free (the cache is needed: dev batch 16),
  i.e. allocated + request <= total - memory held
  outside this allocator. No share-of-reserved threshold (the lead's decision on issue 13: the category's
  definition, literally). The numbers are shown in the summary.
- otherwise `capacity`: it would not fit even with a perfect allocator.

Other incidents: each piece of evidence argues for a category with a strength (3 = a sentence naming the
cause, 2 = a specific code, 1 = generic). The strongest tier wins, so text that explains a failure beats a
numeric code printed before it (`error code 100000` followed by an AI Core exception is a kernel fault). Within
a tier, causes come before symptoms: memory > environment > comm > invalid-param > op-not-supported >
kernel-fault > unknown > benign.

Known limitations: the allowances are judgement calls; an OOM message without `free` or `total` falls back
to `capacity` with a lower confidence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from memplan.diagnose._catalog import code_category
from memplan.diagnose._parse import Evidence
from memplan.diagnose._types import Category
from memplan.units import fmt_bytes

GiB = 1 << 30
MiB = 1 << 20
TiB = 1 << 40
PiB = 1 << 50  # no single machine's RAM reaches it (host requests; dev batch 19)

PRIORITY = ["absurd-request", "memory", "environment", "comm", "invalid-param", "op-not-supported", "kernel-fault",
            "unknown", "benign"]


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


def _fmt(n: int | None) -> str:
    return fmt_bytes(n)


@dataclass
class Verdict:
    category: Category
    confidence: float
    summary: str
    facts: dict[str, Any]
    flags: set[str]


def classify_oom(n: dict[str, Any], flags: set[str]) -> Verdict:
    """Classify one OOM message from its own numbers (see the module docstring for the rules)."""
    banked = n.get("bank_request_bytes") is not None
    if banked:
        # a banked allocator (tt-metal's, dev batch 60) prints the whole buffer, the share each bank must hold and one
        # bank's size and figures: each bank is weighed as a device of its own, with the share as its request
        n = {**n, "requested_bytes": n["bank_request_bytes"]}
    s = OomState.read(n, flags)
    if "arena" in flags and s.req is not None:
        return _arena_verdict(s, flags)
    if "startup" in flags and s.req is not None and s.total is not None and s.free is not None:
        return _startup_verdict(s)
    if n.get("reservable_bytes") is not None:   # the TPU runtime's reserve failure with its reservable part
        split = _reserve_split(s, n["reservable_bytes"], banked=banked)
        if split is not None:
            return split
    special = _special_case(s)
    if special is not None:
        return special
    frag = _fragmentation(s)
    foreign_amount = _foreign_amount(s)
    if frag is not None and s.req is not None and (s.unalloc or 0) >= s.req and not foreign_amount:
        # The allocator's own cache could have served the request: that is why this request failed, unless
        # memory held outside this allocator exceeds what PyTorch reserved and, beyond the runtime's allowance,
        # the request (the labelling guide's foreign-memory clause; then freeing it is the fix, e.g. 50 GiB held
        # elsewhere on a 61 GiB NPU with 10.65 GiB reserved). The comparison with what PyTorch reserved is on the
        # outside memory itself, not on its part beyond the allowance (dev batch 36: 2.12 GiB outside a 4 GiB
        # card against 1.88 GiB reserved, read as fragmentation before).
        return frag
    if foreign_amount and (frag is None or foreign_amount >= (s.unalloc or 0)):
        return _foreign_verdict(s)
    if frag is not None:
        return frag
    if "foreign" in flags and s.req is not None and s.total is None and s.free is None:
        # a message that gives only the request but is printed where nothing of this process is allocated yet (a
        # framework's one-time pool reservation at start, dev batch 25): what is missing is held by others
        return Verdict(Category.FOREIGN_MEMORY, 0.6,
                       f"{s.head()} when the framework reserved its device pool at start, before this process "
                       "had allocated anything: other processes already hold the device's memory.", s.facts, set())
    return _capacity_verdict(s)


@dataclass
class OomState:
    """The numbers of one OOM message, with what follows from them."""

    req: int | None
    total: int | None
    alloc: int | None
    free: int | None
    reserved: int | None
    unalloc: int | None
    in_use: int | None
    procs: list
    device: str
    host: bool
    facts: dict[str, Any]
    other: int = 0
    foreign: int | None = None
    allowance: int = GiB
    conf: float = 0.9
    guard: bool = False
    one_buffer: bool = False

    @classmethod
    def read(cls, n: dict[str, Any], flags: set[str]) -> "OomState":
        device = n.get("device", "device")
        s = cls(n.get("requested_bytes"), n.get("total_bytes"), n.get("allocated_bytes"), n.get("free_bytes"),
                n.get("reserved_bytes"), n.get("reserved_unallocated_bytes"), n.get("process_in_use_bytes"),
                list(n.get("processes", [])), device or "the device", "host" in flags or device == "cpu", {})
        s.one_buffer = "one_buffer" in flags
        if s.reserved is None and s.alloc is not None and s.unalloc is not None:
            s.reserved = s.facts["reserved_bytes"] = s.alloc + s.unalloc
        if s.unalloc is None and s.reserved is not None and s.alloc is not None:
            s.unalloc = s.facts["reserved_unallocated_bytes"] = s.reserved - s.alloc
        s.guard = bool(n.get("guard_1eb"))
        s._outside(str(device).startswith("npu"))
        missing = [v for v in (s.req, s.total, s.free, s.alloc) if v is None]
        s.conf -= 0.1 * len(missing)
        return s

    def _outside(self, npu: bool) -> None:
        """Memory held outside this process's allocator: listed processes, or total - free - ours."""
        procs, reserved = self.procs, self.reserved
        if self.in_use is not None and reserved is not None and self.in_use < reserved:
            # "this process has 0 bytes memory in use" (seen under vLLM): less than PyTorch itself reserved,
            # so the figure is wrong; fall back to PyTorch's own accounting.
            self.facts["process_in_use_ignored"] = self.in_use
            self.in_use = None
        if procs:
            if self.in_use is None and len(procs) == 1 and reserved is not None and procs[0][1] >= reserved \
                    and (procs[0][1] - reserved < 2 * GiB or self._cannot_be_another(procs[0][1])):
                self.in_use = self.facts["process_in_use_bytes"] = procs[0][1]
                self.facts["self_listed_as_process"] = procs[0][0]
            else:
                self.other = self.facts["other_processes_bytes"] = sum(size for _, size in procs)
        if self.total is None or self.free is None:
            return
        if self.in_use is not None:
            self.foreign, self.allowance = self.total - self.free - self.in_use, GiB // 2
            if reserved is not None:
                self.facts["non_pytorch_bytes"] = max(0, self.in_use - reserved)
        elif reserved is not None:
            self.foreign = self.total - self.free - reserved
            self.allowance = int(3.5 * GiB) if npu else GiB
        if self.foreign is not None:
            self.facts["foreign_bytes"] = max(0, self.foreign)

    def _cannot_be_another(self, listed: int) -> bool:
        """One listed process holds at least what PyTorch reserved, and the two together exceed what the device has
        in use (total - free, plus 1 GiB of slack): they cannot be two processes, so the listed one is this job
        (vLLM's worker in a container, listed as `Process N` with its CUDA graphs and NCCL buffers on top of what
        PyTorch reserved)."""
        if self.total is None or self.free is None or self.reserved is None:
            return False
        return listed + self.reserved > self.total - self.free + GiB

    def head(self) -> str:
        return f"Out of memory on {self.device}: a request for {_fmt(self.req)} failed"

    def state(self) -> str:
        pct = f" ({100 * self.alloc / self.total:.0f} % of the device)" if self.alloc is not None and self.total else ""
        parts = []
        if self.alloc is not None:
            parts.append(f"{_fmt(self.alloc)} was allocated by PyTorch{pct}")
        for value, what in ((self.reserved, "reserved"), (self.free, "free"), (self.total, "in total")):
            if value is not None:
                parts.append(f"{_fmt(value)} {what}")
        return (" while " + ", ".join(parts)) if parts else ""


def _special_case(s: OomState) -> Verdict | None:
    """Host RAM, an impossible size, or a device that was not short of memory."""
    req, total, free = s.req, s.total, s.free
    # 1 PiB before dev batch 56 (a 127 TiB tcmalloc request); one image buffer (OpenCV's alloc.cpp, flag one_buffer) from
    # 1 TiB, the line a DefaultCPUAllocator request is read by (dev batch 110)
    if s.host and req is not None and s.one_buffer and TiB <= req < 64 * TiB:
        return Verdict(Category.ABSURD_REQUEST, 0.9,
                       f"One host buffer (one image or matrix) asked for {_fmt(req)} at once: no buffer a program means "
                       "to hold is that large, so its size was computed wrongly (a resize or warp to a garbage shape, "
                       "an overflowed length), not a memory shortage.", s.facts, {"host"})
    if s.host and req is not None and req >= 64 * TiB:
        return Verdict(Category.ABSURD_REQUEST, 0.95,
                       f"One host allocation asked for {_fmt(req)} — more than any machine's RAM: a size computed "
                       "wrongly (an overflowed length, a garbage shape), not a memory shortage.", s.facts, {"host"})
    if req is not None and req < 0:
        # dev batch 53: a negative byte count (_parse._NEGATIVE_ALLOC): the size went below zero before it was printed
        return Verdict(Category.ABSURD_REQUEST, 0.9,
                       f"One allocation asked for {req} bytes — a negative size. No allocator serves it: the size was "
                       "computed wrongly or overflowed (a signed print of a length that went below zero) before it "
                       "reached the allocator.", s.facts, set())
    if s.host and req is None and s.alloc is not None and total:
        # a memory monitor's kill (Ray's raylet, dev batch 48): the node's use against its total, no one request
        return Verdict(Category.CAPACITY, 0.8,
                       f"Host RAM ran out: the node had {_fmt(s.alloc)} of {_fmt(total)} in use when its memory "
                       "monitor killed the worker (not device memory).", s.facts, {"host"})
    if s.host:
        return Verdict(Category.CAPACITY, 0.8,
                       f"Host RAM ran out: one allocation of {_fmt(req)} failed on the CPU side (not device memory).",
                       s.facts, {"host"})
    if req is not None and (s.guard or req >= TiB or _beyond_device(s)):
        if s.guard or req >= TiB or not total:
            size = f"{_fmt(req)} — more than any accelerator holds"
        else:
            size = f"{_fmt(req)} — more than the whole of {s.device} ({_fmt(total)} in total)"
        return Verdict(Category.ABSURD_REQUEST, 0.95,
                       f"One allocation asked for {size}. No batch, cache or allocator setting serves one tensor "
                       "of that size: a shape computed wrongly, an overflowed length, or one operation that "
                       "materializes a huge intermediate (e.g. eager attention's scores at a long sequence).",
                       s.facts, set())
    if _xpu_block_limit(s):
        return Verdict(Category.OP_NOT_SUPPORTED, 0.7,
                       f"One allocation of {_fmt(req)} failed on {s.device} although it fits the device "
                       f"({_fmt(total)} in total, {_fmt((s.alloc or 0) + (s.unalloc or 0))} held by PyTorch): on "
                       "Intel XPUs such as Arc Alchemist a single device allocation is capped just under 4 GiB, "
                       "so a block this large is refused whatever is free.", s.facts, {"limit_not_shortage"})
    if req is not None and free is not None and free >= 1.1 * req and free - req >= 64 * MiB:
        return Verdict(Category.ENVIRONMENT, 0.6,
                       f"An allocation of {_fmt(req)} failed on {s.device} although {_fmt(free)} was reported free "
                       f"({_fmt(free - req)} more than the request): the device was not short of memory. A per-process "
                       "limit, the driver, or another job that released memory in between is the likely cause.",
                       s.facts, {"free_ok"})
    return None


def _arena_verdict(s: OomState, flags: set[str]) -> Verdict:
    """MuJoCo's preallocated arena (dev batch 51): one step asked its stack for more than is left of it. The arena's size
    is the model's setting, not the machine's RAM, so a request above its max is a step that needs a larger arena (more
    contacts or constraints than it was sized for), not a size bug. ggml's context pool (dev batch 63) is the same kind
    of arena: its size is fixed when the context is created, and ggml prints the end the pool would need and the pool's
    size. Its scratch buffer (dev batch 93) likewise: a fixed size the program sets for one evaluation's intermediate
    tensors, which a larger batch or a longer context outgrows."""
    if "ggml_scratch" in flags:
        return Verdict(Category.CAPACITY, 0.8,
                       f"ggml's scratch buffer ran out: the tensors of this evaluation need the buffer to reach "
                       f"{_fmt(s.req)}, but it holds {_fmt(s.total)}. The program sizes the buffer in advance: lower the "
                       "batch size or the context length, or use a build that sizes the buffer for them.",
                       s.facts, {"host"})
    if "ggml_pool" in flags:
        return Verdict(Category.CAPACITY, 0.8,
                       f"ggml's context pool ran out: a new tensor needs the pool to reach {_fmt(s.req)}, but the pool "
                       f"holds {_fmt(s.total)}. The pool (arena) is sized when the context is created, from the batch "
                       "and context sizes: lower the batch size (-b) or the context size, or use a build that sizes "
                       "the pool for this model.", s.facts, {"host"})
    return Verdict(Category.CAPACITY, 0.8,
                   f"MuJoCo's arena ran out: one step asked its stack for {_fmt(s.req)} with {_fmt(s.free)} left of "
                   f"{_fmt(s.total)}. The model's preallocated arena is too small for this step (more contacts or "
                   "constraints than it was sized for): raise it with <size memory=\"...\"/> in the model, or reduce "
                   "what one step has to hold.", s.facts, {"host"})


def _reserve_split(s: OomState, reservable: int | None, banked: bool = False) -> Verdict | None:
    """The TPU runtime's 'Attempting to reserve R at the bottom of memory. That was not possible. There are F free, ...
    and V reservable' (dev batch 52): when the free memory F covers the request but the part that can be reserved as one
    block, V, does not, a perfect allocator would have served it: the free memory is split into pieces
    (fragmentation, the labelling guide's 'could have served'). A request above F is a shortage and takes the usual
    path (capacity). A banked allocator (tt-metal's, dev batch 60, `banked`) prints the share each bank must hold (the
    request here) and one bank's free memory and largest free block."""
    req, free = s.req, s.free
    if req is None or free is None or reservable is None or req > free or reservable >= req:
        return None
    s.facts["reservable_bytes"] = reservable
    if banked:
        return Verdict(Category.FRAGMENTATION, 0.7,
                       f"Each bank had to place {_fmt(req)} of the buffer and had {_fmt(free)} free, but its largest "
                       f"free block was only {_fmt(reservable)}. A perfect allocator would have served the request, so "
                       "the free memory is split into pieces too small for it. This is fragmentation (buffers of "
                       "varying sizes allocated and freed between programs).", s.facts, {"bank_split"})
    return Verdict(Category.FRAGMENTATION, 0.7,
                   f"The runtime could not reserve {_fmt(req)} at the bottom of memory although {_fmt(free)} was free: "
                   f"only {_fmt(reservable)} of it could be reserved as one block. A perfect allocator would have "
                   "served the request, so the free memory is split into pieces too small for it. This is "
                   "fragmentation (memory that grows over steps or epochs, varying shapes that recompile).",
                   s.facts, {"xla_reserve"})


def _xpu_block_limit(s: OomState) -> bool:
    """An XPU out-of-memory for one block of 4 GiB or more that the device could hold (what PyTorch holds plus the
    request and the runtime's own allowance fit in the total, and the free memory, when given, covers it): the
    Level Zero per-allocation cap (maxMemAllocSize, just under 4 GiB on Arc Alchemist), not a shortage; the
    wording differs from IPEX's 'larger than 4GB' sentence (row xpu-4gb-block) (dev batch 29:
    intel/intel-extension-for-pytorch#846)."""
    req, total = s.req, s.total
    if not str(s.device).startswith("xpu") or req is None or total is None or req < 4 * GiB:
        return False
    held = (s.alloc or 0) + (s.unalloc or 0)
    return held + req + s.allowance <= total and (s.free is None or s.free >= req)


def _startup_verdict(s: OomState) -> Verdict:
    """An engine's start-up check of free memory (vLLM's gpu_memory_utilization): nothing is allocated by this
    engine yet, so all but the runtime's own context of what is not free is held by other processes."""
    outside = s.total - s.free
    allowance = int(3.5 * GiB) if str(s.device).startswith("npu") else GiB
    s.facts["foreign_bytes"] = outside
    head = (f"At start-up only {_fmt(s.free)} of {s.device}'s {_fmt(s.total)} was free, less than the {_fmt(s.req)} the "
            "engine's memory-utilization setting asks for")
    if outside > allowance:
        return Verdict(Category.FOREIGN_MEMORY, 0.8,
                       f"{head}: {_fmt(outside)} was already held outside this engine before it allocated anything "
                       "(other processes, another engine, a leftover worker). Free that memory or lower the "
                       "utilization to fit what is free.", s.facts, set())
    return Verdict(Category.CAPACITY, 0.7,
                   f"{head}, although the device is otherwise idle ({_fmt(outside)} in use, about the runtime's own "
                   "context): the utilization asks for more than the device can give. Lower it.", s.facts, set())


def _beyond_device(s: OomState) -> bool:
    """One request larger than the whole device, when the message's own total is credible (what PyTorch
    already holds fits in it; a total below the allocated figure is a misreport, so it proves nothing)."""
    total = s.total
    if not total or s.req is None or s.req <= total:
        return False
    held = max(s.alloc or 0, s.reserved or 0, s.in_use or 0)
    return held <= total


def _fragmentation(s: OomState) -> Verdict | None:
    """Fragmentation from the allocator's own arithmetic (issue 13, item 3): cached_free = reserved - allocated
    (PyTorch's "reserved but unallocated"). The request fits the cache (request <= cached_free), or, when the
    message gives the device's free memory, the cache is not empty and free + cached_free covers the request
    (allocated + request <= total - memory held outside this allocator): a perfect allocator would have served
    it. `capacity` is kept for when even a perfect allocator could not."""
    req, unalloc = s.req, s.unalloc
    if req is None or unalloc is None or unalloc <= 0:
        return None
    room = unalloc + (s.free or 0)
    if unalloc < req and (s.free is None or room < req or s.free >= req):
        # free + cached counts only when the cache is needed: with the request within what the device reported
        # free, the allocator's cache played no part (a device that full fails at the driver): not fragmentation
        return None
    s.facts["cached_free_bytes"] = unalloc
    share = f" ({100 * unalloc / s.reserved:.0f} % of what PyTorch reserved)" if s.reserved else ""
    arithmetic = [f"reserved − allocated = {_fmt(unalloc)} cached but unallocated{share}"]
    if unalloc >= req:
        arithmetic.append(f"≥ the {_fmt(req)} requested")
    else:
        arithmetic.append(f"free + cached = {_fmt(s.free)} + {_fmt(unalloc)} = {_fmt(room)} ≥ the {_fmt(req)} "
                          "requested")
    if s.alloc is not None and s.total is not None and s.foreign is not None:
        limit = s.total - max(0, s.foreign)
        arithmetic.append(f"allocated + request = {_fmt(s.alloc + req)} ≤ total − memory outside PyTorch = "
                          f"{_fmt(limit)}")
    c = max(0.5, s.conf - (0.15 if unalloc < req else 0))
    text = "; ".join(arithmetic)
    return Verdict(Category.FRAGMENTATION, c,
                   f"{s.head()}{s.state()}. {text[:1].upper() + text[1:]}: a perfect allocator would have served it, "
                   f"so the free space is split into blocks too small for it. This is fragmentation.{_slim(s)}",
                   s.facts, set())


def _slim(s: OomState) -> str:
    """A warning when defragmenting buys little: the cache is under 10 % of what PyTorch reserved."""
    if not s.reserved or s.unalloc is None or s.unalloc >= 0.1 * s.reserved:
        return ""
    return (f" But the cache is only {100 * s.unalloc / s.reserved:.0f} % of what PyTorch reserved: an allocator fix "
            "alone buys little headroom, so also lower the peak (batch, checkpointing).")


def _foreign_amount(s: OomState) -> int:
    """Memory held outside this allocator, or 0 when it cannot explain the request. Other processes listed in
    the message count whole; of the total - free - reserved estimate, only the part beyond the allowance (the
    runtime context of this process) may explain the request."""
    req = s.req
    if req is None:
        return 0
    # the labelling guide's definition: the memory outside must also exceed what PyTorch itself reserved; when
    # PyTorch holds more, its own demand is what filled the device (capacity / fragmentation), dev batch 17
    ours = s.reserved if s.reserved is not None else (s.alloc or 0)
    # PyTorch's message lists every process on the device, this one included ('Process 13728 has 23.73 GiB memory in
    # use' of a 23.87 GiB card whose PyTorch had allocated 23.55 GiB, https://github.com/ToTheBeginning/PuLID/issues/110):
    # where the device's total and free memory are known, the memory outside this process is the guide's total - free -
    # what this process holds (s.foreign), and the listed processes argue only when that too exceeds what PyTorch reserved
    # (dev batch 106: two listed processes, one of them this job, summed above what PyTorch reserved although the memory
    # outside it was smaller, read foreign-memory where the cache covered the request)
    if s.other and s.other >= req and s.other >= 256 * MiB and s.other > ours \
            and (s.foreign is None or s.foreign > ours):
        return s.other
    if s.foreign is not None and s.total:
        excess = s.foreign - s.allowance
        if excess >= req and excess >= 0.05 * s.total and s.foreign > ours:
            return s.foreign
    return 0


def _foreign_verdict(s: OomState) -> Verdict:
    who = f"{len(s.procs)} other process(es) hold {_fmt(s.other)}" if s.other else \
        f"{_fmt(s.foreign)} of the device is not accounted for by this process's allocator"
    return Verdict(Category.FOREIGN_MEMORY, max(0.5, s.conf),
                   f"{s.head()}{s.state()}. {who} (other processes, the runtime, communication buffers) — "
                   f"more than the {_fmt(s.req)} requested. Memory outside PyTorch is what ran out.",
                   s.facts, {"multi_process"} if s.other else set())


def _capacity_verdict(s: OomState) -> Verdict:
    req, total, unalloc, reserved = s.req, s.total, s.unalloc, s.reserved
    if req is None:
        return Verdict(Category.CAPACITY, 0.5, f"Out of memory on {s.device}; the message carries no sizes.",
                       s.facts, set())
    why = []
    if total is not None and req > total:
        why.append("this single request is larger than the whole device")
    elif s.alloc is not None and total is not None:
        limit = total - max(0, s.foreign or 0)
        sign = ">" if s.alloc + req > limit else "≤"
        why.append(f"allocated + request = {_fmt(s.alloc + req)} {sign} total − memory outside PyTorch = "
                   f"{_fmt(limit)}")
    if unalloc is not None:
        room = f"free + cached = {_fmt(s.free)} + {_fmt(unalloc)} = {_fmt(s.free + unalloc)}" if s.free is not None \
            else f"reserved − allocated = {_fmt(unalloc)} cached"
        why.append(f"{room} < the {_fmt(req)} requested, so even a perfect allocator could not have served it")
    joined = "; ".join(why)
    tail = (" " + joined[:1].upper() + joined[1:] + ".") if why else ""
    return Verdict(Category.CAPACITY, max(0.5, s.conf),
                   f"{s.head()}{s.state()}.{tail} The job needs more memory than this device has at this point.",
                   s.facts, set())


_LEAD = {
    "environment": "The software or device environment is broken",
    "comm": "Collective communication failed",
    "invalid-param": "An operator rejected its arguments",
    "op-not-supported": "An operator has no kernel for this device or dtype",
    "kernel-fault": "A kernel faulted on the device",
    "unknown": "An error was reported but the log does not say enough to name the cause",
    "benign": "Only log noise: nothing here is an error",
    "memory": "The device ran out of memory",
    # dev batch 136: a text row that names an impossible size without printing it (Arrow's 'negative malloc size')
    "absurd-request": "An allocation was asked for an impossible size: a bug in sizes, not a memory shortage",
}


def _memory_lead(flags: set[str]) -> tuple[Category, str]:
    """An out-of-memory without numbers: where it happened decides the category."""
    if "device_open" in flags:
        return Category.FOREIGN_MEMORY, "The device's memory was already taken when this process tried to open it"
    if "foreign" in flags:
        return Category.FOREIGN_MEMORY, ("The device's free memory was already short when this process started: other "
                                         "processes on the same device hold it")
    if "outside_pytorch" in flags:
        return Category.FOREIGN_MEMORY, ("NCCL's own CUDA allocation failed, outside PyTorch's caching allocator "
                                         "(communicator buffers): the device's memory is held elsewhere")
    if "outside_allocator" in flags and "device_table" in flags:
        return Category.FOREIGN_MEMORY, ("The CUDA runtime itself ran out of device memory, outside PyTorch's caching "
                                         "allocator, and the device usage table in the log shows the memory already "
                                         "taken: other processes hold it")
    if "outside_allocator" in flags:
        # a bare `CUDA error: out of memory` names no other holder: the job itself needed more than the device had
        # (dev batch 15 principle; before, it was read as foreign memory)
        return Category.CAPACITY, ("The CUDA runtime ran out of device memory (a bare `CUDA error: out of memory`, "
                                   "without the caching allocator's numbers) and nothing in the log names another "
                                   "holder: the job needs more memory than the device has")
    if "host_alloc" in flags:
        return Category.CAPACITY, ("Host RAM ran out: a CPU-side allocation failed (PyTorch's DefaultCPUAllocator, numpy's "
                                   "array allocator), "
                                   "not a device allocation")
    if "host" in flags:
        return Category.CAPACITY, ("Host RAM ran out: the process was killed (the kernel's OOM killer, a container or "
                                   "job memory limit), not a device allocation failure")
    return Category.CAPACITY, _LEAD["memory"]


def _arguments(evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """(evidence, category, strength) for everything that argues for a category."""
    out = []
    for ev in evidence:
        if ev.kind == "codes":
            for code in ev.codes:
                c, s, _ = code_category(code)
                if c and s:
                    out.append((ev, c, s))
        elif ev.category and ev.strength:
            out.append((ev, ev.category, ev.strength))
    return out


_UNHANDLED_CUDA = re.compile(r"(?i)unhandled cuda error|ncclUnhandledCudaError")


def _named_cuda_failure(args: list[tuple[Evidence, str, int]]) -> list[tuple[Evidence, str, int]]:
    """NCCL's "unhandled cuda error" says only that a CUDA call failed; when NCCL's report names the failure
    (`Cuda failure 'text'`), that text is the cause and the collective the symptom: the comm arguments of those
    lines count only weakly, so a kernel fault or a version problem named there decides."""
    if not any(ev.kind == "nccl-cuda-text" for ev, _, _ in args):
        return args
    lines = {ev.line for ev, _, _ in args if ev.kind == "nccl-cuda-text" or _UNHANDLED_CUDA.search(ev.text)}
    return [(ev, c, 1 if c == "comm" and ev.line in lines else s) for ev, c, s in args]


# (kind of an argument check that names the wrong call, category of the lines that are only its symptom)
_ARGUMENT_CHECKS = (
    # NCCL's own argument check (`misc/argcheck.cc`: an invalid root, dtype, op or buffer -> ncclInvalidArgument):
    # the `NCCL WARN` / `NCCL error` / destroyed-communicator lines around it (dev batch 16)
    ("nccl-argcheck", "comm"),
    # CANN's set-device check naming an index beyond the visible devices (`set drv device=100, valid device range
    # is [0, 8)`): the `Invalid device ID` / 107001 / `device id error` lines of the same failure (dev batch 23)
    ("device-index", "environment"),
    # AMCT calibration inside ATC (`Do Calibration failed`) runs the model on the user's calibration data and input
    # shape: ATC's FAQ names those inputs as the cause, so the AI Core failure of that run is its symptom (dev batch 26)
    ("amct-calibration", "kernel-fault"),
    # DDP's reducer check on one rank (`Expected to mark a variable ready only once`, `Expected to have finished
    # reduction in the prior iteration`) leaves the other ranks waiting in their all-reduce: their watchdog
    # timeouts are the symptom (dev batch 31)
    ("ddp-reducer", "comm"),
)


def _argument_check(args: list[tuple[Evidence, str, int]]) -> list[tuple[Evidence, str, int]]:
    """An argument check that names a wrong call (`_ARGUMENT_CHECKS`) decides: the lines that report the same
    failure in another category's words are its symptom, so their arguments count only weakly."""
    for kind, symptom in _ARGUMENT_CHECKS:
        if any(ev.kind == kind for ev, _, _ in args):
            args = [(ev, c, 1 if c == symptom else s) for ev, c, s in args]
    return args


def _unwrapped(args: list[tuple[Evidence, str, int]]) -> list[tuple[Evidence, str, int]]:
    """A warning whose rule carries the flag `wraps` quotes a failure the library recovered from (PyTorch's cuDNN
    v8 'Plan failed with a cudnnException: ... CUDNN_STATUS_NOT_SUPPORTED': the next plan is tried): the statuses
    and texts on its own line are quoted, not raised, so they argue nothing (dev batch 32). Other lines still do."""
    wrapped = {ev.line for ev, _, _ in args if "wraps" in ev.flags}
    return [a for a in args if a[0].line not in wrapped or "wraps" in a[0].flags]


_EXC_LINE = re.compile(r"^\s*[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b")


class IgnoredTraceback:
    """The traceback CPython prints under `Exception ignored in: <... __del__ ...>` (a row with flag `ignored_exc`,
    the DataLoader iterator's shutdown, dev batch 56): an exception raised in a finalizer is not propagated, so its
    frames and its exception line (ConnectionResetError, EOFError) did not stop the run. The block runs from that
    line over the evidence that follows it closely (frames every line or two) to the first exception line. Fed the
    evidence in line order, `see` says whether each piece is part of such a block (the one reading of the block: the
    classifier's `_ignored_lines` and the scan of error lines in memplan.diagnose._diagnose)."""

    def __init__(self) -> None:
        self.last = 0   # the line of the block's last piece so far; 0 outside a block

    def see(self, ev: Evidence) -> bool:
        if "ignored_exc" in ev.flags:
            self.last = ev.line
            return False
        if self.last and ev.line - self.last <= 3:
            # the exception line ends the block, unless it opens a repr printed over the next lines (PyOpenGL's
            # 'EGLError(' / 'err = EGL_NOT_INITIALIZED,' / ... / ')', dev batch 79): those lines are still its own
            exc = _EXC_LINE.search(ev.text)
            self.last = ev.line if not exc or ev.text.rstrip().endswith("(") else 0
            return True
        self.last = 0
        return False


def _ignored_lines(evidence: list[Evidence]) -> set[int]:
    """The lines of every ignored finalizer's traceback in `evidence` (IgnoredTraceback)."""
    block = IgnoredTraceback()
    return {ev.line for ev in sorted(evidence, key=lambda e: e.line) if block.see(ev)}


def _warned_lines(evidence: list[Evidence], ignored: set[int] | None = None) -> set[int]:
    """The lines that are warnings (`Warning:`, `[W...]`, logging's WARNING prefixes): what they argue counts less.
    So are the lines before a tool's own report that the run completed (a row with flag `completed`, MindSpore
    Lite's `CONVERT RESULT SUCCESS:0`): the errors they print did not stop it (dev batch 27); and an ignored
    finalizer's traceback (_ignored_lines, dev batch 56; `ignored` when the caller has them already)."""
    done = max((ev.line for ev in evidence if "completed" in ev.flags), default=0)
    ignored = _ignored_lines(evidence) if ignored is None else ignored
    return {ev.line for ev in evidence if ev.kind == "warning" or ev.line < done} | ignored


# (context flag somewhere in the incident, flag of the argument it re-reads, category it becomes)
_CONTEXT_READINGS = (
    # a CUDA-path failure (`Torch not compiled with CUDA enabled`) in an Ascend job: the API has no NPU path
    ("npu", "npu_opns", "op-not-supported"),
    # a missing op binary / dynamic-kernel config on an Atlas inference chip (310P, 300I Duo): that chip lacks
    # the op (dev batch 15 principle); elsewhere the same text means the kernels package is missing or mismatched
    ("chip_310p", "chip_binary", "op-not-supported"),
    # a CUDA-only feature's "no GPU found" check on Apple silicon (MPS): the device cannot run the feature; on
    # other machines the same check means no CUDA device is usable, a set-up fault (dev batch 28)
    ("apple", "cuda_only", "op-not-supported"),
    # a Gloo connect failure after Gloo's own warning that it fell back to the loopback address: every rank
    # advertised 127.0.0.1, so the network interface is not set (GLOO_SOCKET_IFNAME); alone the warning is only a
    # warning (a single-node job goes on) (dev batch 29)
    ("gloo_loopback", "rendezvous", "environment"),
    # a bf16 / tf32 device check (transformers' 'Your setup doesn't support bf16/gpu', '--tf32 requires Ampere') after
    # a line that shows no CUDA device is usable (a CUDA initialization failure, vLLM's no-platform line): the check
    # failed for want of a device, a set-up fault; alone it means the card lacks the dtype (dev batch 37)
    ("cuda_unusable", "gpu_dtype", "environment"),
    # the runtime's initialization error inside a DataLoader worker (`Caught RuntimeError in DataLoader worker process
    # N`, `_worker_loop`): CUDA used in a forked worker, which PyTorch's multiprocessing notes rule out ('The CUDA
    # runtime does not support the fork start method'): the program's call, not the install; alone the error keeps its
    # environment reading (dev batch 52)
    ("dl_worker", "cuda_init", "invalid-param"),
    # a model object without `generate` after transformers' GenerationMixin notice (v4.45-v4.49 warn that from v4.50
    # PreTrainedModel no longer inherits it): model code older than the installed transformers; alone the
    # AttributeError keeps its invalid-param reading and the notice argues nothing (dev batch 63)
    ("genmixin_notice", "no_generate", "environment"),
    # the runtime's invalid value ('HIP error: invalid argument') raised by torch.cuda.mem_get_info's cudaMemGetInfo /
    # hipMemGetInfo: a call with the current device whose only failure past the device check is the runtime's own
    # free-memory query (ROCm/clr hip_memory.cpp), the install rejecting it; alone the text keeps its invalid-param
    # reading (dev batch 76)
    ("mem_query", "invalid_value", "environment"),
    # bitsandbytes' CPU-library markers (its 'compiled without GPU support' warning, the probe's printed
    # "'NoneType' object has no attribute 'cadam32bit_grad_fp32'", COMPILED_WITH_CUDA = False) after bitsandbytes'
    # own report that it found GPUs: the CUDA library failed to load on a GPU machine, a set-up fault; alone they
    # are a warning, as on a machine without a GPU (dev batch 91)
    ("bnb_gpus", "bnb_cpu_lib", "environment"),
    # a bare shell 'Segmentation fault' after llamafile linked the GPU module cached under ~/.llamafile/v/<VERSION>/
    # (`link_cuda_dso: GPU support loaded`): the cached module does not match the machine's set-up (removing the cache
    # fixed it); alone the segfault stays unknown (dev batch 100)
    ("llamafile_gpu_dso", "segv", "environment"),
    # accelerate's TypeError for an Accelerator() keyword under transformers' own create_accelerator_and_postprocess
    # frame: the installed transformers passes a keyword the installed accelerate lacks, version skew; alone (a
    # caller's own Accelerator(...) call) it keeps its invalid-param reading (dev batch 100)
    ("hf_trainer_accel", "accel_kwarg", "environment"),
    # a bare StopIteration after a frame whose source line takes a module's first parameter (`next(model.parameters())`,
    # row next-parameters-frame): the module handed to that code has no parameters, the caller's argument; alone the
    # StopIteration stays unknown (dev batch 102)
    ("next_params", "stopiter", "invalid-param"),
    # a bare StopIteration under an installed package's own '_load_library' frame (row installed-load-library-frame,
    # TransformerEngine's loader globbing for its compiled framework extension): no such file beside the package, its
    # compiled part not installed with the Python part imported: environment; alone it stays unknown (dev batch 109)
    ("load_lib", "stopiter", "environment"),
    # an AttributeError for a fitted attribute (trailing underscore, phrase ph-fitted-attr) inside an installed
    # scikit-learn's own frame or after its unpickling version notice (rows sklearn-installed-frame,
    # sklearn-unpickle-version): an estimator fitted and pickled by another scikit-learn release; alone (a user's own
    # object) it keeps the AttributeError's invalid-param reading (dev batch 109)
    ("sklearn_frame", "fitted_attr", "environment"),
    ("sk_unpickle", "fitted_attr", "environment"),
)


def _in_context(args: list[tuple[Evidence, str, int]], evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """Arguments whose meaning depends on where they happened (`_CONTEXT_READINGS`): when a line of the incident
    carries the context flag, an argument whose rule carries the second flag argues for the third category."""
    present = set().union(*(ev.flags for ev in evidence)) if evidence else set()
    for context, flag, category in _CONTEXT_READINGS:
        if context in present:
            args = [(ev, category if flag in ev.flags else c, s) for ev, c, s in args]
    return args


# TensorFlow's dso_loader failure line for one of TensorRT's libraries (libnvinfer, libnvinfer_plugin; TF 1.14's I-level
# 'Could not dlopen library', later W-level 'Could not load dynamic library'), which TF-TRT's notice after it covers
_TRT_DLERROR = re.compile(r"\bCould not (?:load dynamic library|dlopen library) 'libnvinfer[\w.+-]*'; dlerror: ")


def _saved_config_kwarg(args: list[tuple[Evidence, str, int]]) -> list[tuple[Evidence, str, int]]:
    """A constructor's TypeError for an unexpected keyword (row `init-unexpected-kwarg`) that the scanner marked
    `saved_config` (_parse.from_saved_config: an earlier line calls the same class's from_pretrained without passing
    that keyword, so the keyword came from the saved configuration, written by another version of the library than the
    installed one) reads environment at strength 2 (dev batch 104); unmarked it keeps the call's reading."""
    return [(ev, "environment", 2) if "saved_config" in ev.flags else (ev, c, s) for ev, c, s in args]


# an installed package's file in a traceback frame (site-packages / dist-packages, either path separator), and NumPy's own
_INSTALLED_FILE = re.compile(r"[/\\](?:site|dist)-packages[/\\]")
_NUMPY_FILE = re.compile(r"[/\\](?:site|dist)-packages[/\\]numpy[/\\]")


def _frame_files(evidence: list[Evidence]) -> list[tuple[int, str]]:
    """The incident's traceback frames as (line, file), in line order (one per line)."""
    return sorted({ev.line: str(ev.numbers.get("file", "")) for ev in evidence if ev.kind == "frame"}.items())


def _innermost_installed(frames: list[tuple[int, str]], line: int, skip: re.Pattern[str] | None = None) -> bool:
    """Whether the innermost frame above `line` (passing over files `skip` matches) is an installed package's file."""
    before = [file for at, file in frames if at < line and not (skip and skip.search(file))]
    return bool(before) and bool(_INSTALLED_FILE.search(before[-1]))


def _traceback_block(frames: list[tuple[int, str]], line: int) -> list[str]:
    """The files of the run of frames right above `line` (each frame at most two lines after the one before it, as a
    traceback prints a frame and its source line), innermost first: the traceback that ends in the error on `line`."""
    block, nxt = [], line
    for at, file in reversed([f for f in frames if f[0] < line]):
        if nxt - at > 2:
            break
        block.append(file)
        nxt = at
    return block


def _library_frame_cast(args: list[tuple[Evidence, str, int]],
                        evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """NumPy's same_kind cast refusal (row `numpy-ufunc-same-kind`, flag `ufunc_cast`) reads invalid-param: the caller's
    in-place operation is wrong for its dtypes. Where the innermost traceback frame before it that is not NumPy's own is
    an installed package's file (site-packages / dist-packages), the operation is that package's code, written for an
    older NumPy than the installed one (NumPy 1.10 made in-place ufuncs cast by 'same_kind'): environment at strength 2
    (dev batch 107: regreg's own paths.py under NumPy 1.10, https://github.com/regreg/regreg/issues/12). A frame of the
    user's script, an IPython cell (no `File "..."` frame) or no frame keeps the row's reading."""
    if not any("ufunc_cast" in ev.flags for ev, _, _ in args):
        return args
    frames = _frame_files(evidence)
    return [(ev, "environment", 2) if "ufunc_cast" in ev.flags and _innermost_installed(frames, ev.line, _NUMPY_FILE)
            else (ev, c, s) for ev, c, s in args]


def _module_call_frame(args: list[tuple[Evidence, str, int]],
                       evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """CPython's `TypeError: 'module' object is not callable` (row `py-module-not-callable`, flag `module_call`) reads
    environment, weak: raised in a program's own file frame, the name called resolved to a package instead of its
    function (a compiled extension not built, LaneATT's nms; a stale wrapper, another Python). With no `File "..."`
    frame before it (an IPython / notebook cell, a bare line) the import is the caller's own, invalid-param at the same
    strength (dev batch 108: 'import tqdm.notebook as tqdm' then 'tqdm(...)', https://github.com/tqdm/tqdm/issues/1452)."""
    if not any("module_call" in ev.flags for ev, _, _ in args):
        return args
    frames = [ev.line for ev in evidence if ev.kind == "frame"]
    return [(ev, "invalid-param", s) if "module_call" in ev.flags and not any(f < ev.line for f in frames)
            else (ev, c, s) for ev, c, s in args]


def _binop_library_frame(args: list[tuple[Evidence, str, int]],
                         evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """CPython's binary-operator TypeError (row `py-binop-types`, flag `binop`: 'unsupported operand type(s) for -:
    'list' and 'float'') reads invalid-param: the caller's operands are of the wrong Python types (dev batch 150: both
    dev logs raise it in the project's own script, vgg-cifar10's vgg_19.py and object-localization's
    generate_dataset.py). Where the innermost traceback frame before it is an installed package's file (site-packages /
    dist-packages), the operation is that package's code, not the caller's: the row's argument is dropped there and
    the line keeps what the other rows and phrases read (the frames' evidence decides, never the TypeError alone). A
    frame of the user's script, or no frame, keeps the row's reading."""
    if not any("binop" in ev.flags for ev, _, _ in args):
        return args
    frames = _frame_files(evidence)
    return [(ev, c, s) for ev, c, s in args if not ("binop" in ev.flags and _innermost_installed(frames, ev.line))]


# a TensorFlow kernel-list line for a GPU kernel (row tf-kernel-list), the list's 'no kernels at all', and the failure
# naming one of TensorFlow's cuDNN ops (CudnnRNN, CudnnRNNCanonicalToParams, ...: kernels that exist only for GPUs)
_TF_GPU_KERNEL = re.compile(r"^\s*device='GPU';")
_TF_NO_KERNELS = re.compile(r"^\s*<no registered kernels>")
_TF_CUDNN_OP = re.compile(r"\bOp '(?:Cudnn\w+)'")


def _tf_gpu_unregistered(args: list[tuple[Evidence, str, int]],
                         evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """TensorFlow's kernel look-up failure (rows tf-no-opkernel and tf-kernel-list, flag `tf_kernel`) reads
    op-not-supported: no kernel of the op for the node's device and dtype. Where the incident's 'Registered devices:
    [...]' names no GPU device (row tf-registered-devices-no-gpu, flag `tf_no_gpu`) while the op's kernel list has a
    device='GPU' kernel, or the op is one of TensorFlow's cuDNN ops ('CudnnRNN', GPU-only) with no kernels registered at
    all, the op has a GPU implementation that this TensorFlow could not use because it registered no GPU: its GPU
    support is not installed or did not load, environment at the same strength (dev batch 111:
    https://github.com/xl-sr/CAL/issues/4, the reporter's tensorflow-gpu not properly configured;
    https://github.com/iperov/DeepFaceLab/issues/5296). A device list with a GPU, a kernel list of CPU kernels only, or
    '<no registered kernels>' for another op (an op a mobile build's selective registration dropped, dev batch 53's
    'LessEqual') keeps op-not-supported."""
    if not any("tf_no_gpu" in ev.flags for ev in evidence):
        return args
    kernel_lines = [ev.text for ev in evidence if "tf_kernel" in ev.flags]
    gpu_kernel = any(_TF_GPU_KERNEL.search(t) for t in kernel_lines)
    cudnn_without_kernels = (any(_TF_NO_KERNELS.search(t) for t in kernel_lines)
                             and any(_TF_CUDNN_OP.search(t) for t in kernel_lines))
    if not (gpu_kernel or cudnn_without_kernels):
        return args
    return [(ev, "environment", s) if "tf_kernel" in ev.flags else (ev, c, s) for ev, c, s in args]


# tiny-cuda-nn's warning that its fully fused networks do not support the GPU's architecture (row tcnn-perf-warning)
_TCNN_ARCH_WARNING = re.compile(r"\bFullyFusedMLP is not supported for the selected architecture \d+")


def _tcnn_arch_cutlass(args: list[tuple[Evidence, str, int]],
                       evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """tiny-cuda-nn's CUTLASS status failure (row tcnn-cutlass-error, flag `tcnn_cutlass`: 'Got cutlass error: Error
    Internal at: N', 'cutlass_matmul.h:N status failed with error Error Internal') names no cause alone. After
    tiny-cuda-nn's own warning that FullyFusedMLP is not supported for the selected architecture (the networks fell back
    to CutlassMLP on this GPU), the fallback's kernel failed on an architecture the library's fused kernels do not
    support: op-not-supported at strength 3 (dev batch 112: https://github.com/NVlabs/instant-ngp/issues/60,
    architecture 61). Without the warning the line adds nothing."""
    failures = [ev for ev in evidence if "tcnn_cutlass" in ev.flags]
    if not failures:
        return args
    warned_at = [ev.line for ev in evidence if _TCNN_ARCH_WARNING.search(ev.text)]
    if not warned_at:
        return args
    return args + [(ev, "op-not-supported", 3) for ev in failures if any(w < ev.line for w in warned_at)]


def _library_arch_line(args: list[tuple[Evidence, str, int]],
                       evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """A kernel library's own report of cudaErrorNoKernelImageForDevice from its source (row flashinfer-no-kernel-image,
    flag `lib_arch`: FlashInfer's 'CUDA Error: no kernel image is available for execution on the device (209)
    .../flashinfer/...: line N at function ...') says which library has no kernel for this GPU: on that line the row's
    op-not-supported reading decides, and the code 209 it quotes (environment, PyTorch's wheel without the card's
    architecture) argues nothing (dev batch 115: https://github.com/sgl-project/sglang/issues/1058, a T4). Other lines
    keep their arguments."""
    lines = {ev.line for ev in evidence if "lib_arch" in ev.flags}
    if not lines:
        return args
    return [a for a in args if a[0].line not in lines or "lib_arch" in a[0].flags]


# a bare AttributeError on an object (phrase ph-exc-object), and an installed TensorFlow's / Keras's own file in a frame line
_ATTR_ERROR = re.compile(r"\bAttributeError: '\w+' object has no attribute '\w+'")
_TF_KERAS_FILE = re.compile(r"[/\\](?:site|dist)-packages[/\\](?:keras|tensorflow|tf_keras)[/\\]")


def _tf_keras_internal_attr(args: list[tuple[Evidence, str, int]],
                            evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """An AttributeError on an object (\"'X' object has no attribute 'Y'\") reads invalid-param, the caller's object.
    Where the innermost frame line before it (a `File "..."` frame, or an installed TensorFlow / Keras frame in IPython's
    form, row tf-keras-installed-frame, flag `tfk_frame`) is an installed TensorFlow's or Keras's own file, their own code
    read an attribute their own objects lack: keras and tensorflow, or the generation the calling library expects, do
    not match, environment at strength 2 (dev batch 121: DeepCTR's DeepFM under TF 2.7, keras's functional_utils
    reading 'KerasTensor'.node, https://github.com/shenweichen/DeepCTR/issues/432). A caller's own frame innermost, or
    no frame, keeps the reading."""
    if not any("tfk_frame" in ev.flags for ev in evidence):
        return args
    frames = sorted({ev.line: ev.text for ev in evidence if ev.kind == "frame" or "tfk_frame" in ev.flags}.items())
    out = []
    for ev, c, s in args:
        if c == "invalid-param" and _ATTR_ERROR.search(ev.text):
            before = [text for line, text in frames if line < ev.line]
            if before and _TF_KERAS_FILE.search(before[-1]):
                c, s = "environment", 2
        out.append((ev, c, s))
    return out


# a constructor refusing a keyword (row init-unexpected-kwarg / the weak TypeError phrase), and the console script in a
# `bin/` folder that starts an installed package (the other files of such a traceback: `_INSTALLED_FILE`)
_INIT_KWARG = re.compile(r"\bTypeError: (?:\w+\.)?__init__\(\) got an unexpected keyword argument '\w+'")
_CONSOLE_FILE = re.compile(r"[/\\]bin[/\\][\w.-]+$")
# pybind11's overload failure ('f(): incompatible function arguments. The following argument types are supported:'),
# read the same way as the constructor's keyword (dev batch 132)
_PYBIND_ARGS = re.compile(r"\bincompatible function arguments\. The following argument types are supported:")
# any callable's refused keyword ('f() got an unexpected keyword argument 'k''), read where transformers' generation loop
# made the call (dev batch 133); torch's Module.__call__ frames between the loop and the model's forward are dispatch
_CALL_KWARG = re.compile(r"\bTypeError: [\w.<>]+\(\) got an unexpected keyword argument '\w+'")
_TORCH_DISPATCH_FILE = re.compile(r"[/\\](?:site|dist)-packages[/\\]torch[/\\]nn[/\\]modules[/\\]module\.py$")
_HF_GENERATION_FILE = re.compile(r"[/\\](?:site|dist)-packages[/\\]transformers[/\\]generation[/\\]\w+\.py$")


def _installed_only_call_mismatch(args: list[tuple[Evidence, str, int]],
                                  evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """A constructor's `TypeError: X.__init__() got an unexpected keyword argument 'k'` reads invalid-param, the
    caller's keyword. Where its traceback (the run of frame lines right before it, each at most two lines after the
    one before) holds two frames or more, the innermost in site-packages / dist-packages and every other one in an
    installed package or the console script in a `bin/` folder that launched it, no file of the caller's own wrote
    the call: one installed package passed a keyword that the other installed package's constructor does not take,
    two versions that do not match, environment at strength 2 (dev batch 123; the dev logs of dev batch 97: peep 2.4.1
    calling pip 7's PackageFinder with 'use_wheel', https://github.com/erikrose/peep/issues/96, and pip-tools'
    click option with 'package_name' in the distribution's older click, https://github.com/jazzband/pip-tools/issues/1908).
    A traceback with one frame of the caller's own (its script, a notebook cell) keeps the reading, however many
    installed frames follow: a keyword the caller hands a library (**kwargs passed on to another constructor,
    https://github.com/huggingface/trl/issues/6168's tokenizer= through TRL's SFTTrainer) is raised from the library's
    frame too, which the installed frames alone do not tell apart (dev batch 97's rule on the innermost frame alone
    was removed for it).
    pybind11's 'incompatible function arguments' (an extension's bound signature refusing the call, row param-check)
    is read the same way (dev batch 132): an installed library calling an installed extension with arguments that its
    version does not take is two versions that do not match (hloc's calls into pycolmap, whose signatures changed in
    pycolmap 0.4-0.6: https://github.com/cvg/Hierarchical-Localization/pull/350); the caller's own frame keeps
    invalid-param (https://github.com/colmap/pycolmap/issues/292).
    Any callable's `got an unexpected keyword argument 'k'` is read the same way where the call was made by an
    installed transformers' generation loop (dev batch 133): the traceback's innermost frame, past torch's
    Module.__call__ dispatch frames (`torch/nn/modules/module.py`), is in `transformers/generation/` under site-packages
    / dist-packages (`outputs = self(**model_inputs, return_dict=True)` in `_sample`). generate() refuses a keyword of
    the caller's that the model does not take before the loop starts (GenerationMixin._validate_model_kwargs: 'The
    following `model_kwargs` are not used by the model: ...', a ValueError), so a keyword refused at the loop's own call
    is one the installed transformers added (`cache_position`) to a forward written for another release (a repository's
    patched forward, a remote-code model): environment at strength 2
    (https://github.com/mit-han-lab/duo-attention/issues/18). A refused keyword whose innermost frame is a file of the
    caller's own (its script calling the model, its patched forward calling on) keeps invalid-param."""
    frames = _frame_files(evidence)
    if len(frames) < 2:
        return args
    out = []
    for ev, c, s in args:
        signature = c == "invalid-param" and (_INIT_KWARG.search(ev.text) or _PYBIND_ARGS.search(ev.text))
        keyword = c == "invalid-param" and _CALL_KWARG.search(ev.text)
        if signature or keyword:
            block = _traceback_block(frames, ev.line)
            if (signature and len(block) >= 2 and all(_INSTALLED_FILE.search(f) for f in block[:-1])
                    and (_INSTALLED_FILE.search(block[-1]) or _CONSOLE_FILE.search(block[-1]))):
                c, s = "environment", 2
            elif keyword and _HF_GENERATION_FILE.search(
                    next((f for f in block if not _TORCH_DISPATCH_FILE.search(f)), "")):
                c, s = "environment", 2
        out.append((ev, c, s))
    return out


# a call whose arguments do not fit the callee's signature (CPython's three TypeError forms the weak phrase
# ph-exc-object reads), and a file in a folder named `examples` (either path separator, relative or absolute) (dev batch
# 149)
_SIGNATURE_TYPEERROR = re.compile(r"\bTypeError: [\w.<>]+\(\) (?:got an unexpected keyword argument '\w+'|missing \d+ "
                                  r"required positional arguments?|takes \d+ positional arguments? but)")
_EXAMPLES_FILE = re.compile(r"(?:^|[/\\])examples[/\\][\w.-]+\.py$")


def _example_call_mismatch(args: list[tuple[Evidence, str, int]],
                           evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """A call's signature TypeError (`f() got an unexpected keyword argument 'k'`, `missing N required positional
    argument`, `takes N positional arguments but M were given`) reads invalid-param, the caller's arguments. Where its
    traceback (the run of frame lines right before it, each at most two lines after the one before) starts in a file
    of an `examples/` folder and every frame of it is such a file or an installed package's (site-packages /
    dist-packages), the call was written by a published example, not by the user: an example from a library's
    repository run against an installed release of another version, which takes other arguments: environment at
    strength 2 (dev batch 149: PyG's examples/reddit.py, run from a clone, passing 'concat' to the installed
    torch_geometric's SAGEConv, the maintainer: update, https://github.com/pyg-team/pytorch_geometric/issues/1128;
    FindMy.py's examples/fetch_reports.py and examples/_login.py passing 'anisette_libs_path', the maintainer: the
    examples on the main branch are made for the development version, install it from GitHub instead of PyPI,
    https://github.com/malmeloo/FindMy.py/issues/168). A traceback that starts in the user's own script, or that holds
    a frame of another file of the user's between (a module of the project's own), keeps invalid-param, as does the
    TypeError with no frame."""
    frames = _frame_files(evidence)
    if not frames:
        return args
    out = []
    for ev, c, s in args:
        if c == "invalid-param" and _SIGNATURE_TYPEERROR.search(ev.text):
            block = _traceback_block(frames, ev.line)
            if (block and _EXAMPLES_FILE.search(block[-1])
                    and all(_EXAMPLES_FILE.search(f) or _INSTALLED_FILE.search(f) for f in block)):
                c, s = "environment", 2
        out.append((ev, c, s))
    return out


# Readings of one argument that depend on the rest of the incident (frames before it, a context line elsewhere), each
# `(args, evidence) -> args`, applied in this order by `_weighed`
_INCIDENT_READINGS = (_library_frame_cast, _module_call_frame, _binop_library_frame, _tf_gpu_unregistered,
                      _tcnn_arch_cutlass, _library_arch_line, _tf_keras_internal_attr, _installed_only_call_mismatch,
                      _example_call_mismatch)


def _stall_before_failure(args: list[tuple[Evidence, str, int]],
                          evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """Horovod's stall report (row `horovod-stall`, flag `horovod_stall`) is a warning: alone the job goes on. When a
    failure follows it that names no cause of its own (an error line no row reads, or a reading of `unknown`), the
    stall is what it shows, ranks waiting on peers: comm at strength 2, so that a failure with its own reading
    (strength 3, or 2 on a line that is not a warning) still decides (dev batch 53)."""
    stalls = [ev.line for ev in evidence if "horovod_stall" in ev.flags]
    if not stalls:
        return args
    first = min(stalls)
    failed = any(ev.line > first and "horovod_stall" not in ev.flags and ev.kind != "warning"
                 and (ev.kind == "error-line" or ev.category == "unknown") for ev in evidence)
    if not failed:
        return args
    return [(ev, "comm", 2) if "horovod_stall" in ev.flags else (ev, c, s) for ev, c, s in args]


def _symptom_after_fault(args: list[tuple[Evidence, str, int]], is_symptom: Callable[[Evidence], bool], category: str
                         ) -> list[tuple[Evidence, str, int]]:
    """The `category` arguments of lines after the first kernel fault (a kernel-fault argument of strength 3) that
    `is_symptom` picks count only weakly (strength 1): the fault's sticky error is their cause, so the first error
    decides. Without a fault the arguments are returned unchanged."""
    faults = [ev.line for ev, c, s in args if c == "kernel-fault" and s >= 3]
    if not faults:
        return args
    first = min(faults)
    lines = {ev.line for ev, _, _ in args if ev.line > first and is_symptom(ev)}
    return [(ev, c, 1 if c == category and ev.line in lines else s) for ev, c, s in args]


def _fault_before_unavailable(args: list[tuple[Evidence, str, int]]) -> list[tuple[Evidence, str, int]]:
    """A kernel fault (an illegal memory access, a device-side assert: a kernel-fault argument of strength 3) leaves
    the device unusable until the faulting process is gone, so a later `all CUDA-capable devices are busy or
    unavailable` / `open device N failed` (kind `device-open-failed`) on a later line is its symptom, not a second
    cause: the environment arguments of those lines count only weakly and the first error decides (dev batch 78;
    the CUDA runtime's sticky errors: after cudaErrorIllegalAddress 'the process is left in an inconsistent state
    and any further CUDA work will return the same error', and a device in exclusive-process mode stays held by the
    faulted process). A busy device with no fault before it keeps its reading, environment."""
    return _symptom_after_fault(args, lambda ev: ev.kind == "device-open-failed", "environment")


def _fault_before_unhandled_cuda(args: list[tuple[Evidence, str, int]]) -> list[tuple[Evidence, str, int]]:
    """A kernel fault (a device-side assert, an illegal memory access: a kernel-fault argument of strength 3) leaves the
    CUDA context with a sticky error, so the next CUDA call anywhere in the process fails with it; when NCCL makes that
    call (a collective, or the communicator's teardown), NCCL reports `unhandled cuda error` / ncclUnhandledCudaError
    (NVIDIA/nccl checks.h CUDACHECK): the collective is the symptom, the fault the cause. The comm arguments of those
    lines after the fault count only weakly, so the fault decides (dev batch 97: the device-side assert and then
    c10d's 'NCCL error in: ... unhandled cuda error' of https://github.com/microsoft/scene_graph_benchmark/issues/58;
    the same reasoning as `_fault_before_unavailable`). An unhandled cuda error with no fault before it keeps comm."""
    return _symptom_after_fault(args, lambda ev: bool(_UNHANDLED_CUDA.search(ev.text)), "comm")


def _weighed(evidence: list[Evidence]) -> list[tuple[Evidence, str, int]]:
    """The error that stopped the run outranks what a warning said before it: an argument made on a warning
    line (`Warning:`, `[W...]`) counts one tier lower when a line that is not a warning argues for another
    category with a specific code or a sentence (strength >= 2). A CPU-fallback warning followed by an AICPU
    exception is therefore a kernel fault; a log with only the warning is benign (its row argues so since dev batch
    18: the op runs on the CPU and the job goes on). A warning whose rule carries the
    flag `keep` names the cause of what fails after it (PyTorch's "sm_NN is not compatible with the current PyTorch
    installation" before an NCCL "unhandled cuda error") and is not demoted. Likewise a benign line
    (torch_npu's "This error log can be ignored") never outranks an argument for a real failure: the allocator
    prints it when a device allocation failed, so an ACL memory code next to it is an out-of-memory."""
    args = _in_context(_argument_check(_unwrapped(_named_cuda_failure(_arguments(evidence)))), evidence)
    args = _saved_config_kwarg(args)
    for reading in _INCIDENT_READINGS:
        args = reading(args, evidence)
    args = _fault_before_unhandled_cuda(_fault_before_unavailable(_stall_before_failure(args, evidence)))
    ignored = _ignored_lines(evidence)
    args = [a for a in args if a[0].line not in ignored]  # an ignored finalizer's traceback argues for nothing
    warned = _warned_lines(evidence, ignored)
    stopped = {c for ev, c, s in args if ev.line not in warned and s >= 2 and c != "benign"}
    anything = any(c != "benign" for _, c, _ in args)
    noticed = max((ev.line for ev in evidence if "trt_notice" in ev.flags), default=0)
    out = []
    for ev, c, s in args:
        if ev.line < noticed and c != "benign" and _TRT_DLERROR.search(ev.text):
            # TensorFlow's dso_loader lines for TensorRT's libraries that TF-TRT's notice after them covers ('Cannot
            # dlopen some TensorRT libraries. If you would like to use Nvidia GPU with TensorRT, ...', row
            # tf-trt-dlopen-notice): every row the dlerror line matches (the CUDA one, the shared-object one, the weak
            # missing-file phrase) speaks only weakly, so the notice decides unless an error after it argues (dev batch
            # 104). Only TensorRT's libraries: the same reading of every dlerror line before cudart_stub's 'Ignore above
            # cudart dlerror' turned three held-out answers that read right wrong (counts only) and fixed none
            s = 1
        elif ev.line in warned and c != "benign" and stopped - {c} and "keep" not in ev.flags:
            s = max(1, s - 1)
        elif c == "benign" and "shutdown" in ev.flags:
            # the runtime unloading at process exit (dev batch 81) speaks for the teardown only: any failure argued
            # with a code or a sentence (strength >= 2), before or after it, is what stopped the run
            s = 1 if stopped else s
        elif c == "benign" and anything and "completed" not in ev.flags:
            s = 1  # "this error log can be ignored" speaks for its own line, not against an error elsewhere
        elif c == "benign" and "completed" in ev.flags and any(
                e.line > ev.line and e.line not in warned and k != "benign" and t >= 2 for e, k, t in args):
            # a report that the run went on (MindSpore Lite's CONVERT RESULT SUCCESS, TensorFlow's 'Ignore above
            # cudart dlerror') covers the lines before it, not an error printed after it (dev batch 48)
            s = 1
        out.append((ev, c, s))
    return out


def _specific_or_weak(evidence: list[Evidence]) -> tuple[list[tuple[Evidence, str, int]], bool]:
    """The weak layer (`phrases.tsv`, flag `weak`) decides only when nothing more specific argues for a failure;
    a phrase on a warning line does not count (a warning is not the error that stopped the run). Returns the
    arguments to weigh and whether they are the weak ones."""
    args = _weighed(evidence)
    strong = [a for a in args if "weak" not in a[0].flags]
    if any(c not in ("benign", "unknown") for _, c, _ in strong):
        return strong, False
    warned = _warned_lines(evidence)
    shut = _shutdown_line(evidence)
    # lines from the runtime's unloading on are the process's teardown: a phrase there ('Check failed', 'abort')
    # says nothing about the run (dev batch 81)
    weak = [a for a in args if "weak" in a[0].flags and a[0].line not in warned and a[0].line < shut]
    if any("fallback" not in a[0].flags for a in weak):
        weak = [a for a in weak if "fallback" not in a[0].flags]  # an exception class only when no wording argues
    # a catch-all (`EZ9999`, `Inner Error`) says only that something failed: the phrase beside it may say what
    return ([a for a in strong if a[1] == "unknown"] + weak, True) if weak else (strong, False)


def _errors_beside_benign(evidence: list[Evidence]) -> list[Evidence]:
    """Lines that look like errors (`Error`, `failed`, `fatal`, `Check failed`, `[F]`, a traceback) and are not
    warnings: they forbid a `benign` verdict for the incident."""
    warned = _warned_lines(evidence)
    shut = _shutdown_line(evidence)
    return [ev for ev in evidence if ev.kind == "error-line" and ev.line not in warned and ev.line < shut]


def _shutdown_line(evidence: list[Evidence]) -> float:
    """The first line where the CUDA runtime reports that it is unloading (`driver shutting down`,
    cudaErrorCudartUnloading: a call made while the process exits, rule flag `shutdown`, dev batch 81), or infinity.
    What follows it (glog's `*** Check failure stack trace: ***`, `Aborted (core dumped)`) is the teardown's own abort,
    not an error of the run; an error line before it still forbids a `benign` verdict."""
    return min((ev.line for ev in evidence if is_shutdown(ev)), default=float("inf"))


def is_shutdown(ev: Evidence) -> bool:
    """Whether this evidence is the CUDA runtime reporting that it is unloading at process exit (a benign rule with
    flag `shutdown`, dev batch 81)."""
    return "shutdown" in ev.flags and ev.category == "benign"


def classify_text(evidence: list[Evidence]) -> tuple[Category, float, str, list[Evidence], set[str]]:
    """Weigh codes and sentences. Returns (category, confidence, lead sentence, deciding evidence, flags)."""
    best: dict[str, int] = {}
    deciding: dict[str, list[Evidence]] = {}
    args, weak = _specific_or_weak(evidence)
    flags: set[str] = set().union(*(ev.flags for ev in evidence if weak or "weak" not in ev.flags))
    for ev, c, s in args:
        best[c] = max(best.get(c, 0), s)
        deciding.setdefault(c, []).append(ev)
    errors = _errors_beside_benign(evidence)
    if not best or (errors and set(best) == {"benign"}):
        return Category.UNKNOWN, 0.3, _LEAD["unknown"], errors, flags
    top = max(best.values())
    tier = [c for c in PRIORITY if best.get(c) == top]
    chosen = tier[0]
    strong_others = [c for c in best if c != chosen and best[c] == top and c != "benign"]
    conf = {3: 0.85, 2: 0.7, 1: 0.45}.get(top, 0.3) - (0.1 if weak else 0)
    if strong_others:
        conf -= 0.1
    if chosen == "memory":
        # context hints of the weak layer (other models / processes on the device) count for an OOM without numbers
        flags |= set().union(*(ev.flags for ev in evidence if "weak" in ev.flags and ev.category is None))
        category, lead = _memory_lead(flags)
    else:
        category = Category(chosen)
        lead = _LEAD[chosen]
    return category, conf, lead, deciding.get(chosen, []), flags
