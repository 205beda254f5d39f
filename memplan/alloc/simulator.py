"""Replay a trace's allocations and frees through a model of PyTorch's caching allocator.

`simulate(trace, "A100-80GB")` answers what `torch.cuda.max_memory_reserved()` would say for the traced
step on that device, what was reserved but not allocated at the peak (fragmentation), and at which event
the device's capacity, minus the memory held outside the allocator, would run out after the allocator's
own free-and-retry. The rules are those of `c10/cuda/CUDACachingAllocator.cpp` and of torch_npu's
`NPUCachingAllocator.cpp` (see `memplan.alloc._engine` and `memplan.alloc._rules` for the lines).

Known limitations:
- one stream; no `record_stream` / event-delayed frees, no CUDA/NPU graph private pools;
- `backend:cudaMallocAsync` is simulated as the native allocator;
- torch_npu's workspace allocator, HCCL/NCCL buffers and other memory outside the caching allocator are
  only counted through `outside_allocator_bytes`; torch_npu keeps unmapped physical pages of expandable
  segments for reuse, which this model frees;
- `garbage_collection_threshold` acts only with a per-process memory fraction (`memory_fraction`), as in
  the real allocators; without one it changes nothing.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Iterable

from memplan.alloc._engine import Engine, OutOfMemory
from memplan.alloc._rules import K_NPU_PAD, get_allocation_size, round_size
from memplan.alloc.catalog import Device, lookup
from memplan.alloc.config import FAMILIES, AllocConfig, default_config, parse_alloc_conf
from memplan.errors import UserError


@dataclass(frozen=True)
class OomPoint:
    """Where a capacity-limited run would raise OutOfMemoryError."""

    event_index: int
    request_bytes: int
    """The size the program asked for (the storage's nbytes)."""
    alloc_size_bytes: int
    """What the allocator tried to obtain from the device (as 'Tried to allocate' in the error)."""
    allocated_bytes: int
    reserved_bytes: int
    limit_bytes: int


@dataclass(frozen=True)
class AllocSim:
    """What the caching allocator does with one trace on one device."""

    family: str
    device: str | None
    config: AllocConfig
    num_events: int
    peak_allocated_bytes: int
    """Max of the allocator's allocated bytes (rounded block sizes, as torch.*.max_memory_allocated)."""
    peak_allocated_event: int
    peak_requested_bytes: int
    """Max of the sum of requested bytes (unrounded)."""
    peak_reserved_bytes: int
    """Max of the bytes held from the device (as torch.*.max_memory_reserved)."""
    peak_reserved_event: int
    reserved_at_peak_allocated_bytes: int
    allocated_at_peak_reserved_bytes: int
    fragmentation_at_peak_bytes: int
    """Reserved minus allocated at the reserved peak."""
    segments_at_peak: int
    """Segments (contiguous mapped ranges for expandable segments) at the reserved peak."""
    max_segments: int
    final_reserved_bytes: int
    num_alloc_retries: int
    """Times the allocator freed its whole cache and retried (torch's num_alloc_retries)."""
    num_device_allocs: int
    num_device_frees: int
    outside_allocator_bytes: int
    capacity_bytes: int | None
    limit_bytes: int | None
    """capacity - outside_allocator_bytes (or the memory-fraction cap): what the allocator may hold."""
    oom: OomPoint | None
    reserved_curve: tuple[tuple[int, int], ...] = field(repr=False, default=())
    """(event_index, reserved bytes after that event) at every change, starting with (-1, 0)."""
    notes: tuple[str, ...] = ()

    @property
    def fits(self) -> bool | None:
        return None if self.limit_bytes is None else self.oom is None

    @property
    def peak_device_bytes(self) -> int:
        """Reserved peak plus the memory held outside the allocator."""
        return self.peak_reserved_bytes + self.outside_allocator_bytes

    def reserved_at(self, event_index: int) -> int:
        """Reserved bytes right after event `event_index`."""
        idx = bisect_right(self.reserved_curve, (event_index, 1 << 62)) - 1
        return self.reserved_curve[idx][1] if idx >= 0 else 0

    def to_dict(self) -> dict:
        from dataclasses import asdict

        d = asdict(self)
        d["config"] = self.config.raw
        d["reserved_curve"] = [list(p) for p in self.reserved_curve]
        d["fits"] = self.fits
        return d


def _resolve(device_or_family) -> tuple[str, Device | None]:
    if isinstance(device_or_family, Device):
        return device_or_family.family, device_or_family
    if isinstance(device_or_family, str) and device_or_family.lower() in FAMILIES:
        return device_or_family.lower(), None
    if isinstance(device_or_family, str):
        dev = lookup(device_or_family)
        return dev.family, dev
    raise UserError(f"not a device or allocator family: {device_or_family!r}")


def _events(trace_or_events):
    """Yield (is_alloc, sid, nbytes); a Trace is read directly from its compact arrays."""
    events = getattr(trace_or_events, "events", None)
    storages = getattr(trace_or_events, "storages", None)
    if events is not None and storages is not None:
        sizes = [s.nbytes for s in storages]
        for v in events:
            if v >= 0:
                yield True, v, sizes[v]
            else:
                yield False, ~v, sizes[~v]
    else:
        yield from trace_or_events


def simulate(
    trace_or_events: Iterable,
    device_or_family="cuda",
    config: AllocConfig | str | None = None,
    capacity: int | None = None,
    *,
    outside_allocator_bytes: int | None = None,
    memory_fraction: float | None = None,
    pad_bytes: int | None = None,
) -> AllocSim:
    """Replay `trace_or_events` (a `Trace`, or `(is_alloc, sid, nbytes)` tuples) on a device.

    device_or_family: a catalog `Device`, a catalog name (`"A100-80GB"`, `"910B3"`), or the bare family
        `"cuda"` / `"npu"` (allocator rules only, no capacity).
    config: an `AllocConfig`, or a config string as in PYTORCH_CUDA_ALLOC_CONF / PYTORCH_NPU_ALLOC_CONF
        (None: the allocator's defaults; the environment is not read here, see `config_from_env`).
    capacity: device bytes; default the device's reported capacity (None for a bare family: no limit).
    outside_allocator_bytes: memory held outside the caching allocator (default: the catalog's value, or 0).
    memory_fraction: as `torch.cuda.set_per_process_memory_fraction` (caps reserved at fraction * capacity
        and enables garbage_collection_threshold).
    pad_bytes: torch_npu's per-request padding (default 32 for npu, 0 for cuda).
    """
    family, device = _resolve(device_or_family)
    cfg = _config(config, family)
    notes = list(cfg.warnings)
    if capacity is None and device is not None:
        capacity = device.capacity_bytes
    if outside_allocator_bytes is None:
        outside_allocator_bytes = (device.outside_allocator_bytes or 0) if device is not None else 0
    limit = None if capacity is None else max(capacity - outside_allocator_bytes, 0)
    allowed = _allowed(cfg, capacity, memory_fraction, notes)
    eff_limit = limit if allowed is None else (allowed if limit is None else min(allowed, limit))
    if pad_bytes is None:
        pad_bytes = K_NPU_PAD if family == "npu" else 0
    device_total = capacity or (device.nominal_bytes if device else None)
    memo, key = _memo(trace_or_events, cfg, family, pad_bytes, limit, allowed, device_total, eff_limit)
    hit = memo.get(key) if memo is not None else None
    if hit is None:
        eng = Engine(cfg, pad=pad_bytes, npu=family == "npu", limit=limit, allowed=allowed, device_total=device_total)
        replay_notes: list[str] = []
        r = _replay(eng, _events(trace_or_events), replay_notes, eff_limit)
        hit = (r, (eng.reserved, eng.retries, eng.device_allocs, eng.device_frees), tuple(replay_notes))
        if memo is not None:
            memo[key] = hit
    r, (final_reserved, retries, device_allocs, device_frees), replay_notes = hit
    notes.extend(replay_notes)
    return AllocSim(
        family=family, device=device.name if device else None, config=cfg, num_events=r.num_events,
        peak_allocated_bytes=r.peak_alloc, peak_allocated_event=r.peak_alloc_ev, peak_requested_bytes=r.peak_req,
        peak_reserved_bytes=r.peak_res, peak_reserved_event=r.peak_res_ev,
        reserved_at_peak_allocated_bytes=r.reserved_at_peak_alloc,
        allocated_at_peak_reserved_bytes=r.alloc_at_peak_res,
        fragmentation_at_peak_bytes=r.peak_res - r.alloc_at_peak_res, segments_at_peak=r.segs_at_peak,
        max_segments=r.max_segs, final_reserved_bytes=final_reserved, num_alloc_retries=retries,
        num_device_allocs=device_allocs, num_device_frees=device_frees,
        outside_allocator_bytes=outside_allocator_bytes, capacity_bytes=capacity, limit_bytes=eff_limit,
        oom=r.oom, reserved_curve=tuple(r.curve), notes=tuple(notes),
    )


def _memo(trace, cfg: AllocConfig, family: str, *limits) -> tuple[dict | None, tuple]:
    """The replay memo of a `Trace` (None for other event sources) and this replay's key in it: the
    trace's length and every input the engine reads, with the settings it ignores normalized (the raw
    text and accepted no-op keys; `backend`, simulated as native; `garbage_collection_threshold` without
    a memory fraction; `max_non_split_rounding` on torch_npu, `base_addr_aligned_size` on CUDA;
    `max_split_size` above every segment the trace can make, `_largest_block`, and with it the rounding
    beyond it). Equal
    keys replay the same events through the same engine: the same result, so a plan never replays one
    twice. A trace is not changed once traced (its length in the key guards against appends)."""
    memo = getattr(trace, "replay_memo", None)
    if memo is None:
        return None, ()
    allowed = limits[2]
    npu = family == "npu"
    split = cfg.max_split_size
    if split is not None and not cfg.expandable_segments and not cfg.page_size_1g and \
            _largest_block(trace, cfg.roundup_power2_divisions, limits[0]) < split:
        split = None
    norm = replace(cfg, raw="", warnings=(), other=(), backend="native",
                   garbage_collection_threshold=cfg.garbage_collection_threshold if allowed is not None else 0.0,
                   max_split_size=split,
                   max_non_split_rounding=0 if npu or split is None else cfg.max_non_split_rounding,
                   base_addr_aligned_size=cfg.base_addr_aligned_size if npu else 0)
    return memo, (len(trace.events), len(trace.storages), norm, family, *limits)


def _largest_block(trace, divs, pad: int) -> int:
    """The largest segment (so the largest block) a replay of `trace` under `cfg` can make without
    expandable segments or 1 GiB pages: the segment size of the largest rounded request (over every
    storage size; the segment rule is not monotonic at 10 MiB). Where it is below `max_split_size`, that
    setting changes nothing in the engine: every request and every cached block is smaller, so blocks
    split as by default, no oversize block is refused or released, and the rounding beyond it is never
    read; the replay equals the default's (same key). Kept in the trace's memo: a plan asks under every setting."""
    key = ("largest block", len(trace.storages), divs, pad)
    got = trace.replay_memo.get(key)
    if got is None:
        got = trace.replay_memo[key] = max(
            (get_allocation_size(round_size(n, divs, pad)) for n in {r.nbytes for r in trace.storages} if n),
            default=0)
    return got


def _config(config: AllocConfig | str | None, family: str) -> AllocConfig:
    if config is None:
        cfg = default_config(family)
    elif isinstance(config, str):
        cfg = parse_alloc_conf(config, family)
    else:
        cfg = config
    if cfg.family != family:
        raise UserError(f"allocator config is for {cfg.family} but the device uses the {family} allocator")
    return cfg


def _allowed(cfg: AllocConfig, capacity: int | None, memory_fraction: float | None, notes: list) -> int | None:
    """The per-process cap of `set_per_process_memory_fraction` (None: no cap)."""
    if memory_fraction is not None:
        if capacity is None:
            raise UserError("memory_fraction needs a device capacity: give a device or a capacity")
        if not 0.0 <= memory_fraction <= 1.0:
            raise UserError(f"memory_fraction must be within [0, 1], got {memory_fraction}")
        return int(memory_fraction * capacity)
    if cfg.garbage_collection_threshold > 0:
        notes.append("garbage_collection_threshold has no effect without a per-process memory fraction "
                     "(torch.cuda/npu.set_per_process_memory_fraction), as in the real allocator")
    return None


@dataclass
class _Peaks:
    num_events: int = 0
    peak_req: int = 0
    peak_alloc: int = 0
    peak_alloc_ev: int = 0
    reserved_at_peak_alloc: int = 0
    peak_res: int = 0
    peak_res_ev: int = -1
    alloc_at_peak_res: int = 0
    segs_at_peak: int = 0
    max_segs: int = 0
    curve: list = field(default_factory=lambda: [(-1, 0)])
    oom: OomPoint | None = None


def _replay(eng: Engine, events, notes: list, eff_limit: int | None) -> _Peaks:
    """Run the events through the engine and keep the peaks (local variables: this is the hot loop)."""
    live: dict[int, object] = {}
    requested = peak_req = 0
    peak_alloc = peak_alloc_ev = reserved_at_peak_alloc = 0
    peak_res = 0
    peak_res_ev = -1
    alloc_at_peak_res = segs_at_peak = max_segs = 0
    curve: list[tuple[int, int]] = [(-1, 0)]
    last_res = 0
    oom = None
    unknown_frees = 0
    idx = -1
    malloc, free = eng.malloc, eng.free
    for idx, (is_alloc, sid, nbytes) in enumerate(events):
        if is_alloc:
            if nbytes == 0:
                continue  # the caching allocators return a null pointer for 0 bytes
            try:
                live[sid] = malloc(nbytes)
            except OutOfMemory as exc:
                if oom is None:
                    oom = OomPoint(idx, nbytes, exc.args[0], eng.allocated, eng.reserved, eff_limit)
                    notes.append(f"out of memory at event {idx}; the rest is replayed without a limit, so later "
                                 "peaks are what the run would need")
                eng.limit = eng.allowed = None
                eng.gc = 0.0
                live[sid] = malloc(nbytes)
            requested += nbytes
            if requested > peak_req:
                peak_req = requested
            a = eng.allocated
            r = eng.reserved
            if a > peak_alloc:
                peak_alloc, peak_alloc_ev, reserved_at_peak_alloc = a, idx, r
            if r != last_res:
                curve.append((idx, r))
                last_res = r
                if r > peak_res:
                    peak_res, peak_res_ev, alloc_at_peak_res, segs_at_peak = r, idx, a, eng.segments
                if eng.segments > max_segs:
                    max_segs = eng.segments
        else:
            b = live.pop(sid, None)
            if b is None:
                if nbytes:
                    unknown_frees += 1
                continue
            requested -= nbytes
            free(b)
            if eng.reserved != last_res:  # never on a plain free; kept for safety
                curve.append((idx, eng.reserved))
                last_res = eng.reserved
    if unknown_frees:
        notes.append(f"{unknown_frees} frees of storages that were never allocated were ignored")
    return _Peaks(idx + 1, peak_req, peak_alloc, peak_alloc_ev, reserved_at_peak_alloc, peak_res, peak_res_ev,
                  alloc_at_peak_res, segs_at_peak, max_segs, curve, oom)
