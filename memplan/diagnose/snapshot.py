"""Read a PyTorch memory snapshot: the peak, what was live at it, fragmentation, the largest blocks.

Input: the pickle written by `torch.cuda.memory._dump_snapshot()` (torch_npu's
`torch.npu.memory._dump_snapshot()` writes the same layout). Schema, as documented in
`torch/cuda/memory.py::_snapshot` and read by `torch/cuda/_memory_viz.py`:
`{"segments": [{address, total_size, stream, segment_type, allocated_size, active_size, device,
blocks: [{address, size, requested_size, state, frames}]}], "device_traces": [[{action, addr, size,
stream, frames, time_us, ...}]]}`; an old segments-only snapshot is a bare list of segments.

Accounting follows memory_viz's "Active Memory Timeline": an allocation counts from its `alloc` until
its `free_completed` (legacy: `free`); allocations freed in the trace without an `alloc` in it, and
`active_allocated` blocks at the end without one, were live before the trace began (the trace is a
ring buffer of `max_entries`). Sizes are the trace's sizes (the requested bytes). Reserved memory
follows `segment_alloc`/`segment_map` (+) and `segment_free`/`segment_unmap` (-), anchored on the
segments' total at the end.

Speed and memory: the pickle is read by the C unpickler through a file wrapper; each time the
unpickler asks for the next 64 KiB frame, the trace entries unpickled so far are folded into compact
arrays and emptied, so a trace costs a few dozen bytes per entry instead of a Python dict each.

Known limitations: "live at the peak" groups by the first user stack frame (outside torch, the
standard library and site-packages) and by nn module / optimizer source file; there is no module
path in a snapshot unless the user set `torch.cuda.memory._set_memory_metadata`. Only the first
non-empty device trace is streamed; other devices' traces are read whole.
"""
from __future__ import annotations

import gc
import os
import pickle
from array import array
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from memplan.errors import UserError

__all__ = ["BlockInfo", "DeviceAnalysis", "Group", "SnapshotAnalysis", "read_snapshot"]

TOP = 10
_ALLOC = "alloc"
_FREES = ("free_completed", "free")
_SEG_PLUS = ("segment_alloc", "segment_map")
_SEG_MINUS = ("segment_free", "segment_unmap")
_NO_STACK = "<no stack>"
_HOOK_BYTES = 4 << 20
"""Fold unpickled trace entries every this many bytes read."""


@dataclass(frozen=True)
class Group:
    """Live bytes sharing one stack frame (or module) at the peak."""

    where: str
    bytes: int
    count: int


@dataclass(frozen=True)
class BlockInfo:
    size: int
    requested_size: int
    address: int
    state: str
    where: str


@dataclass(frozen=True)
class DeviceAnalysis:
    device: int
    n_entries: int
    n_allocs: int
    peak_allocated: int
    """Highest live (requested) bytes over the trace; the end state when there is no trace."""
    peak_index: int
    """Index of the trace entry at which the peak is first reached (-1: before the trace)."""
    peak_time_us: int | None
    baseline_allocated: int
    """Live bytes when the trace begins (allocations made before the recording window)."""
    peak_reserved: int | None
    by_frame: tuple[Group, ...]
    by_module: tuple[Group, ...]
    largest_at_peak: tuple[BlockInfo, ...]
    # state at the end (the segments)
    reserved: int
    allocated: int
    """Bytes of `active_allocated` blocks (rounded block sizes)."""
    requested: int
    cached_free: int
    """Reserved but not allocated: inactive blocks (and blocks awaiting free)."""
    largest_free_block: int
    fragmentation: float
    """`cached_free / reserved`: the share of the cache that holds no tensor."""
    external_fragmentation: float
    """`1 - largest_free_block / cached_free`: how scattered the free cache is."""
    n_segments: int
    largest_blocks: tuple[BlockInfo, ...]
    ooms: tuple[dict, ...] = ()
    _curve: tuple = field(default=(), repr=False, compare=False)

    def replay_state(self) -> tuple:
        """(replay, baseline allocated, reserved at the start, allocations live before the trace): what a
        timeline of this device is drawn from (memplan.report.snapshot_timeline)."""
        return self._curve if self._curve else (_Replay(_Frames()), 0, 0, [])

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if not k.startswith("_")}
        d["by_frame"] = [g.__dict__ for g in self.by_frame]
        d["by_module"] = [g.__dict__ for g in self.by_module]
        d["largest_at_peak"] = [b.__dict__ for b in self.largest_at_peak]
        d["largest_blocks"] = [b.__dict__ for b in self.largest_blocks]
        d["ooms"] = list(self.ooms)
        return d


@dataclass(frozen=True)
class SnapshotAnalysis:
    path: str
    file_bytes: int
    devices: tuple[DeviceAnalysis, ...]
    allocator_settings: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def main(self) -> DeviceAnalysis:
        """The device with the highest peak."""
        if not self.devices:
            raise UserError(f"{self.path}: the snapshot holds no segments and no trace")
        return max(self.devices, key=lambda d: d.peak_allocated)

    def to_dict(self) -> dict:
        m = self.main if self.devices else None
        return {
            "path": self.path,
            "file_bytes": self.file_bytes,
            "peak_allocated_bytes": m.peak_allocated if m else None,
            "peak_reserved_bytes": m.peak_reserved if m else None,
            "fragmentation": m.fragmentation if m else None,
            "devices": [d.to_dict() for d in self.devices],
            "allocator_settings": self.allocator_settings,
            "notes": list(self.notes),
        }

    def device_analysis(self, device: int | None = None) -> DeviceAnalysis:
        """The analysis of `device` (default: the device with the highest peak)."""
        return self.main if device is None else next(x for x in self.devices if x.device == device)


# --------------------------------------------------------------------------------------------------
_SKIP_PARTS = ("/torch/", "/site-packages/", "/dist-packages/", "/lib/python3", "<frozen", "<string>")


class _Frames:
    """Turns a frames list into (where, module) group ids, caching per frame dict."""

    def __init__(self) -> None:
        self.names: list[str] = [_NO_STACK]
        self.ids: dict[str, int] = {_NO_STACK: 0}
        self._cache: dict[int, tuple[Any, int, int, int]] = {}  # id(frame) -> (frame, kind, where, mod)

    def _id(self, label: str) -> int:
        i = self.ids.get(label)
        if i is None:
            i = self.ids[label] = len(self.names)
            self.names.append(label)
        return i

    def _classify(self, f) -> tuple[Any, int, int, int]:
        try:
            filename = str(f.get("filename", "?"))
            line = f.get("line", 0)
            name = str(f.get("name", "?"))
        except AttributeError:
            return (f, 0, 0, 0)
        label = f"{filename.rsplit('/', 1)[-1]}:{line}:{name}"
        py = filename.endswith(".py")
        kind = 0
        mod = 0
        if py:
            user = not any(p in filename for p in _SKIP_PARTS)
            kind = 2 if user else 1
            for root in ("torch/nn/modules/", "torch/optim/"):
                k = filename.find(root)
                if k >= 0 and not filename.endswith(("/module.py", "/optimizer.py")):
                    mod = self._id(filename[k:-3].replace("/", "."))
                    break
            else:
                if user and name == "forward":
                    mod = self._id(f"{filename.rsplit('/', 1)[-1]}:{line}:forward")
        return (f, kind, self._id(label), mod)

    def group(self, frames, metadata=None) -> tuple[int, int]:
        """(where, module): the first user frame (innermost first), else the first Python frame, else
        the first frame; the module is the metadata when set, else the innermost nn module / optimizer
        file or user `forward`."""
        if not frames:
            return 0, self._id(metadata) if metadata else 0
        cache = self._cache
        first_py = first_any = 0
        where = 0
        mod = self._id(metadata) if metadata else 0
        for f in frames:
            c = cache.get(id(f))
            if c is None or c[0] is not f:
                c = cache[id(f)] = self._classify(f)
            if not first_any:
                first_any = c[2]
            if c[1] and not first_py:
                first_py = c[2]
            if not mod and c[3]:
                mod = c[3]
            if c[1] == 2:
                where = c[2]
                break
        return (where or first_py or first_any), mod


class _Replay:
    """Folds one device's trace entries into compact arrays as they arrive."""

    def __init__(self, frames: _Frames) -> None:
        self.fr = frames
        self.n = 0
        self.live: dict[int, int] = {}  # addr -> alloc number
        self.a_size = array("q")
        self.a_start = array("q")
        self.a_end = array("q")
        self.a_where = array("l")
        self.a_mod = array("l")
        self.ev_idx = array("q")  # entries that change allocated bytes ...
        self.ev_delta = array("q")  # ... by this much
        self.ev_k = array("q")  # ... for allocation number k (>= 0) or pre-trace allocation ~p
        self.a_time = array("q")
        self.pre_free: list[tuple[int, int, int, int]] = []  # (entry, size, where, module) freed w/o alloc
        self.seg = [(0, 0)]  # (entry index, reserved delta running sum)
        self.seg_sum = 0
        self.ooms: list[dict] = []

    def feed(self, entries: list) -> None:
        live = self.live
        a_size, a_start, a_end = self.a_size, self.a_start, self.a_end
        a_where, a_mod, ev_idx, ev_delta = self.a_where, self.a_mod, self.ev_idx, self.ev_delta
        ev_k, a_time = self.ev_k, self.a_time
        group = self.fr.group
        i = self.n
        for e in entries:
            try:
                action = e["action"]
            except (TypeError, KeyError):
                i += 1
                continue
            if action == _ALLOC:
                addr = e.get("addr", 0)
                size = e.get("size", 0)
                w, m = group(e.get("frames"), e.get("user_metadata"))
                k = len(a_size)
                live[addr] = k
                ev_k.append(k)
                a_time.append(e.get("time_us") or 0)
                a_size.append(size)
                a_start.append(i)
                a_end.append(-1)
                a_where.append(w)
                a_mod.append(m)
                ev_idx.append(i)
                ev_delta.append(size)
            elif action in _FREES:
                addr = e.get("addr", 0)
                k = live.pop(addr, None)
                if k is not None:
                    a_end[k] = i
                    ev_k.append(k)
                    ev_idx.append(i)
                    ev_delta.append(-a_size[k])
                else:  # allocated before the recording window
                    size = e.get("size", 0)
                    w, m = group(e.get("frames"), e.get("user_metadata"))
                    ev_k.append(~len(self.pre_free))
                    self.pre_free.append((i, size, w, m))
                    ev_idx.append(i)
                    ev_delta.append(-size)
            elif action in _SEG_PLUS:
                self.seg_sum += e.get("size", 0)
                self.seg.append((i, self.seg_sum))
            elif action in _SEG_MINUS:
                self.seg_sum -= e.get("size", 0)
                self.seg.append((i, self.seg_sum))
            elif action == "oom":
                self.ooms.append({"index": i, "size": e.get("size", 0),
                                  "device_free": e.get("device_free"),
                                  "where": self.fr.names[group(e.get("frames"))[0]]})
            i += 1
        self.n = i


# --------------------------------------------------------------------------------------------------
class _Tap:
    """A file wrapper that calls `hook()` every `_HOOK_BYTES` bytes the unpickler reads."""

    def __init__(self, f, hook) -> None:
        self.f = f
        self.hook = hook
        self.count = 0
        self.next = _HOOK_BYTES

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.count += len(data)
        if self.count >= self.next:
            self.next = self.count + _HOOK_BYTES
            self.hook()
        return data

    def readinto(self, b) -> int:
        n = self.f.readinto(b)
        self.count += n
        return n

    def readline(self) -> bytes:
        line = self.f.readline()
        self.count += len(line)
        return line


def _is_trace_list(v) -> bool:
    return (type(v) is list and len(v) > 0 and type(v[0]) is dict and "action" in v[0]
            and "blocks" not in v[0])


class _StreamState:
    def __init__(self, frames: _Frames) -> None:
        self.frames = frames
        self.tracked: dict[int, tuple[list, _Replay]] = {}
        self.protected: set[int] = set()  # frames lists of blocks (before the trace in the memo)
        self.unpickler = None
        self.stalled = False
        self.tap: _Tap | None = None
        self.next_scan = 0

    def hook(self) -> None:
        u = self.unpickler
        count = self.tap.count
        if (not self.tracked or self.stalled) and count >= self.next_scan:
            # memo.copy() costs O(objects so far): scan at geometrically spaced points only
            self.next_scan = count + count // 2
            # find the trace list through the memo (cheap while only segments were read)
            memo = u.memo.copy()
            new = [(k, v) for k, v in memo.items() if _is_trace_list(v) and id(v) not in self.tracked]
            if new:
                base = min(k for k, _ in new)
                for k, v in memo.items():
                    if k < base and type(v) is list:
                        self.protected.add(id(v))
                for _k, v in new:
                    self.tracked[id(v)] = (v, _Replay(self.frames))
                self.stalled = False
            del memo
        grew = False
        for lst, rep in self.tracked.values():
            if lst:
                grew = True
                rep.feed(lst)
                protected = self.protected
                for e in lst:  # the memo keeps these dicts alive: empty them
                    if type(e) is dict:
                        fr = e.get("frames")
                        if type(fr) is list and id(fr) not in protected:
                            fr.clear()
                        e.clear()
                del lst[:]
        if not grew and self.tracked:
            self.stalled = True  # maybe another device's list began: look again next time


def _load(path: str) -> tuple[Any, _StreamState]:
    frames = _Frames()
    st = _StreamState(frames)
    gc_was = gc.isenabled()
    gc.disable()
    try:
        with open(path, "rb") as f:
            st.tap = _Tap(f, st.hook)
            u = pickle.Unpickler(st.tap)
            st.unpickler = u
            obj = u.load()
            st.unpickler = None
            del u
    except FileNotFoundError:
        raise UserError(f"snapshot not found: {path}") from None
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError,
            ValueError, TypeError) as exc:
        raise UserError(f"{path}: not a PyTorch memory snapshot pickle ({type(exc).__name__}: {exc})"
                        ) from None
    finally:
        if gc_was:
            gc.enable()
    return obj, st


# --------------------------------------------------------------------------------------------------
def read_snapshot(path: str | os.PathLike, *, top: int = TOP) -> SnapshotAnalysis:
    """Read a `_dump_snapshot` pickle and analyse every device in it."""
    path = os.fspath(path)
    obj, st = _load(path)
    notes: list[str] = []
    if isinstance(obj, list):  # old segments-only snapshot
        obj = {"segments": obj, "device_traces": []}
    if not isinstance(obj, dict) or "segments" not in obj:
        raise UserError(f"{path}: not a PyTorch memory snapshot (no 'segments' key); write one with "
                        "torch.cuda.memory._dump_snapshot()")
    traces = obj.get("device_traces") or []
    segments = obj.get("segments") or []
    frames = st.frames
    devices = sorted({int(s.get("device", 0)) for s in segments} | set(range(len(traces))))
    if not any(traces):
        notes.append("no trace in the snapshot (record with torch.cuda.memory._record_memory_history()"
                     " before the run): peak = the state at the dump")
    out = []
    for dev in devices:
        lst = traces[dev] if dev < len(traces) else []
        tracked = st.tracked.get(id(lst))
        rep = tracked[1] if tracked else _Replay(frames)
        if lst:
            rep.feed(lst)
        segs = [s for s in segments if int(s.get("device", 0)) == dev]
        if not segs and rep.n == 0:
            continue
        out.append(_analyse_device(dev, rep, segs, frames, top))
    settings = obj.get("allocator_settings") if isinstance(obj.get("allocator_settings"), dict) else {}
    return SnapshotAnalysis(path=path, file_bytes=os.path.getsize(path), devices=tuple(out),
                            allocator_settings=settings or {}, notes=tuple(notes))


@dataclass
class _EndState:
    reserved: int
    allocated: int
    requested: int
    cached_free: int
    largest_free: int
    blocks_info: list
    pre_live: list


def _end_state(rep: _Replay, segs: list[dict], frames: _Frames) -> "_EndState":
    """What the segments say at the dump: reserved / allocated / requested / cached bytes, the blocks,
    and the active blocks that were allocated before the trace began."""
    names = frames.names
    # end state from the segments
    reserved = allocated = requested = cached_free = largest_free = 0
    blocks_info: list[BlockInfo] = []
    pre_live: list[tuple[int, int, int]] = []  # active blocks not allocated in the trace
    live_addrs = rep.live
    for s in segs:
        reserved += int(s.get("total_size", 0))
        addr = s.get("address", 0) or 0
        for b in s.get("blocks", ()):
            size = int(b.get("size", 0))
            state = b.get("state", "")
            baddr = b.get("address", addr)
            if state == "active_allocated":
                req = int(b.get("requested_size", size))
                allocated += size
                requested += req
                w, m = frames.group(b.get("frames"))
                blocks_info.append(BlockInfo(size, req, baddr, state, names[w]))
                if baddr not in live_addrs:
                    pre_live.append((req, w, m))
            else:
                cached_free += size
                if state == "inactive":
                    largest_free = max(largest_free, size)
                    blocks_info.append(BlockInfo(size, 0, baddr, state, ""))
            addr = baddr + size if baddr is not None else addr
    return _EndState(reserved, allocated, requested, cached_free, largest_free, blocks_info, pre_live)


def _live_at_peak(rep: _Replay, pre_live: list, peak_index: int, names: list, top: int):
    """What was live at the peak, grouped by first user frame and by module; the largest blocks."""
    g_where: dict[int, list[int]] = {}
    g_mod: dict[int, list[int]] = {}
    largest: list[tuple[int, int]] = []

    def add(size: int, w: int, m: int) -> None:
        a = g_where.setdefault(w, [0, 0])
        a[0] += size
        a[1] += 1
        b = g_mod.setdefault(m, [0, 0])
        b[0] += size
        b[1] += 1

    for req, w, m in pre_live:
        add(req, w, m)
        largest.append((req, w))
    for i, size, w, m in rep.pre_free:
        if i > peak_index:
            add(size, w, m)
            largest.append((size, w))
    a_start, a_end, a_size = rep.a_start, rep.a_end, rep.a_size
    a_where, a_mod = rep.a_where, rep.a_mod
    for j in range(len(a_size)):
        if a_start[j] > peak_index:
            break
        e = a_end[j]
        if e == -1 or e > peak_index:
            add(a_size[j], a_where[j], a_mod[j])
            largest.append((a_size[j], a_where[j]))
    largest.sort(key=lambda t: -t[0])
    by_frame = tuple(sorted((Group(names[w], v[0], v[1]) for w, v in g_where.items()),
                            key=lambda g: (-g.bytes, g.where)))
    by_module = tuple(sorted((Group(names[m] if m else "<unknown>", v[0], v[1])
                              for m, v in g_mod.items()), key=lambda g: (-g.bytes, g.where)))
    return by_frame, by_module, largest


def _analyse_device(dev: int, rep: _Replay, segs: list[dict], frames: _Frames, top: int
                    ) -> DeviceAnalysis:
    names = frames.names
    es = _end_state(rep, segs, frames)
    reserved, allocated, requested = es.reserved, es.allocated, es.requested
    cached_free, largest_free, blocks_info, pre_live = es.cached_free, es.largest_free, es.blocks_info, es.pre_live
    # timeline of allocated bytes
    baseline = sum(r for r, _w, _m in pre_live) + sum(p[1] for p in rep.pre_free)
    totals = list(accumulate(rep.ev_delta, initial=baseline))
    peak = max(totals) if totals else baseline
    k = totals.index(peak)
    peak_index = rep.ev_idx[k - 1] if k > 0 else -1
    if not rep.n:  # no trace: the end state is all we know
        peak = requested
    by_frame, by_module, largest = _live_at_peak(rep, pre_live, peak_index, names, top)
    # reserved over the trace, anchored at the end
    start_res = reserved - rep.seg_sum
    peak_reserved = start_res + max(s for _i, s in rep.seg) if rep.n else reserved
    blocks_info.sort(key=lambda b: -b.size)
    frag = cached_free / reserved if reserved else 0.0
    ext = 1.0 - largest_free / cached_free if cached_free else 0.0
    peak_time = None
    if k > 0 and rep.ev_k[k - 1] >= 0:
        peak_time = rep.a_time[rep.ev_k[k - 1]] or None
    return DeviceAnalysis(
        device=dev, n_entries=rep.n, n_allocs=len(rep.a_size), peak_allocated=peak,
        peak_index=peak_index, peak_time_us=peak_time,
        baseline_allocated=baseline, peak_reserved=peak_reserved,
        by_frame=by_frame[:top], by_module=by_module[:top],
        largest_at_peak=tuple(BlockInfo(s, s, 0, "active_allocated", names[w])
                              for s, w in largest[:top]),
        reserved=reserved, allocated=allocated, requested=requested, cached_free=cached_free,
        largest_free_block=largest_free, fragmentation=frag, external_fragmentation=ext,
        n_segments=len(segs), largest_blocks=tuple(blocks_info[:top]), ooms=tuple(rep.ooms),
        _curve=(rep, baseline, start_res, pre_live),
    )
