"""Synthetic PyTorch memory snapshots, for tests and the speed benchmark.

The schema is the one `torch.cuda.memory._snapshot()` documents (and `torch/cuda/_memory_viz.py`
reads): `{"segments": [Segment], "device_traces": [[TraceEntry]]}` with blocks, frames, and the
trace actions `alloc` / `free_requested` / `free_completed` / `segment_alloc` / `segment_free` / `oom`.
torch_npu's snapshots have the same layout.

Two writers:
- `synthetic_snapshot(...)` builds the dict in memory; `pickle.dump` it, exactly as
  `torch.cuda.memory._dump_snapshot` does.
- `write_synthetic_snapshot(path, target_bytes=...)` streams a large file (1 GB and more) in constant
  memory by emitting the pickle opcodes itself: protocol 4 with 64 KiB frames and memo references,
  the same opcodes CPython's C pickler writes for these objects (shared frame dicts are written once and
  referenced afterwards; a free entry shares its allocation's frames list, as with `context="alloc"`).

Both simulate a training loop (forward allocations, backward frees, optimizer state) with a simple
bump allocator that reserves 20 MiB segments, and return the exact expected figures (peak allocated,
reserved), computed independently of the reader.
"""
from __future__ import annotations

import random
import struct
from dataclasses import dataclass, field

__all__ = ["SynthResult", "synthetic_snapshot", "write_synthetic_snapshot"]

_SEGMENT = 20 * 1024 * 1024
_BASE_ADDR = 0x7F00_0000_0000


@dataclass
class SynthResult:
    """What a generated snapshot contains, computed by the generator."""

    n_entries: int = 0
    n_allocs: int = 0
    peak_allocated: int = 0
    """Highest sum of live requested sizes over the trace."""
    peak_event: int = -1
    """Index (in the device trace) of the first entry reaching the peak."""
    end_allocated: int = 0
    reserved_end: int = 0
    peak_reserved: int = 0
    file_bytes: int = 0
    live_at_peak_by_file: dict[str, int] = field(default_factory=dict)


def _frame_pool(n_user: int = 24) -> list[dict]:
    torch_frames = [
        {"filename": "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", "line": 125,
         "name": "forward"},
        {"filename": "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", "line": 1775,
         "name": "_call_impl"},
        {"filename": "/usr/lib/python3.11/site-packages/torch/nn/functional.py", "line": 2140,
         "name": "gelu"},
        {"filename": "/usr/lib/python3.11/site-packages/torch/optim/adam.py", "line": 402,
         "name": "_single_tensor_adam"},
        {"filename": "??", "line": 0, "name": "c10::cuda::CUDACachingAllocator::malloc"},
    ]
    user = [{"filename": f"/home/user/project/model_{i % 4}.py", "line": 10 + i, "name": f"block_{i}"}
            for i in range(n_user)]
    return torch_frames + user


class _Sim:
    """A training-loop-shaped allocation stream with addresses, segments and frames."""

    def __init__(self, seed: int, layers: int, act_bytes: int, frames_depth: int):
        self.rng = random.Random(seed)
        self.layers = layers
        self.act = act_bytes
        self.depth = frames_depth
        self.pool = _frame_pool()
        self.free_addrs: dict[int, list[int]] = {}
        self.next_addr = _BASE_ADDR
        self.seg_left = 0
        self.reserved = 0
        self.allocated = 0
        self.res = SynthResult()
        self.live: dict[int, tuple[int, str]] = {}  # addr -> (size, first user file)
        self.sizes = [act_bytes + self.rng.randrange(0, 4096) * 512 + self.rng.randrange(512)
                      for _ in range(layers)]

    def frames_for(self, layer: int, kind: int) -> list[dict]:
        # innermost first, like torch: allocator / torch internals, then user code
        inner = [self.pool[4], self.pool[kind], self.pool[1]]
        user = [self.pool[5 + (layer + k) % (len(self.pool) - 5)] for k in range(self.depth)]
        return (inner + user)[: max(self.depth, 1)]

    def events(self, steps: int):
        """Yield `(action, addr, size, frames)`; frames is None for entries that reuse the alloc's."""
        for step in range(steps):
            acts = []
            for layer in range(self.layers):  # forward: activations + a temporary
                size = self.sizes[layer]
                acts.append((yield from self._alloc(size, layer, 0)))
                tmp = yield from self._alloc(self.act // 2, layer, 2)
                yield from self._free(tmp)
            for layer in reversed(range(self.layers)):  # backward: free activations, grads churn
                g = yield from self._alloc(self.act // 4, layer, 1)
                yield from self._free(acts.pop())
                yield from self._free(g)
            if step == 0:  # optimizer state appears in the first step and stays
                for layer in range(self.layers):
                    yield from self._alloc(self.act // 8, layer, 3)

    def _alloc(self, size: int, layer: int, kind: int):
        bucket = (size + 511) // 512 * 512
        reuse = self.free_addrs.get(bucket)
        if reuse:
            addr = reuse.pop()
        else:
            if self.seg_left < bucket:
                seg = max(_SEGMENT, bucket)
                seg_addr = self.next_addr
                self.next_addr += seg
                self.seg_left = seg
                self.reserved += seg
                self.res.peak_reserved = max(self.res.peak_reserved, self.reserved)
                yield ("segment_alloc", seg_addr, seg, None)
                self._seg_base = seg_addr
                self._seg_used = 0
            addr = self._seg_base + self._seg_used
            self._seg_used += bucket
            self.seg_left -= bucket
        frames = self.frames_for(layer, kind)
        user_file = frames[3]["filename"].rsplit("/", 1)[-1] if len(frames) > 3 else "?"
        self.live[addr] = (size, user_file)
        self.allocated += size
        self.res.n_allocs += 1
        yield ("alloc", addr, size, frames)
        if self.allocated > self.res.peak_allocated:
            self.res.peak_allocated = self.allocated
            self.res.peak_event = self.res.n_entries - 1
            by: dict[str, int] = {}
            if self.track_live:
                for sz, f in self.live.values():
                    by[f] = by.get(f, 0) + sz
            self.res.live_at_peak_by_file = by
        return addr

    track_live = True

    def _free(self, addr: int):
        size, _ = self.live.pop(addr)
        yield ("free_requested", addr, size, None)
        self.allocated -= size
        yield ("free_completed", addr, size, None)
        self.free_addrs.setdefault((size + 511) // 512 * 512, []).append(addr)


def _segments_at_end(sim: _Sim, frames_of: dict[int, list]) -> list[dict]:
    """One segment listing the live blocks, plus an inactive remainder (enough for the reader)."""
    blocks = []
    for addr, (size, _f) in sorted(sim.live.items()):
        blocks.append({"address": addr, "size": (size + 511) // 512 * 512, "requested_size": size,
                       "state": "active_allocated", "frames": frames_of.get(addr, [])})
    used = sum(b["size"] for b in blocks)
    inactive = max(sim.reserved - used, 0)
    if inactive:
        blocks.append({"address": sim.next_addr, "size": inactive, "requested_size": 0,
                       "state": "inactive", "frames": []})
    return [{"device": 0, "address": _BASE_ADDR, "total_size": sim.reserved, "stream": 0,
             "segment_type": "large", "segment_pool_id": (0, 0), "allocated_size": used,
             "active_size": used, "requested_size": sum(b["requested_size"] for b in blocks),
             "blocks": blocks}]


def synthetic_snapshot(*, steps: int = 2, layers: int = 8, act_bytes: int = 1 << 20,
                       frames_depth: int = 8, seed: int = 0) -> tuple[dict, SynthResult]:
    """A snapshot dict (as `torch.cuda.memory._snapshot()` returns) and its expected figures."""
    sim = _Sim(seed, layers, act_bytes, frames_depth)
    trace: list[dict] = []
    frames_of: dict[int, list] = {}
    for action, addr, size, frames in sim.events(steps):
        if frames is None:
            frames = frames_of.get(addr, []) if action.startswith("free") else []
        if action == "alloc":
            frames_of[addr] = frames
        trace.append({"action": action, "addr": addr, "size": size, "stream": 0,
                      "time_us": 1_700_000_000_000_000 + sim.res.n_entries, "frames": frames})
        sim.res.n_entries += 1
    sim.res.end_allocated = sim.allocated
    sim.res.reserved_end = sim.reserved
    snap = {"segments": _segments_at_end(sim, frames_of), "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}}
    return snap, sim.res


# --------------------------------------------------------------------------------------------------
class _Emitter:
    """Writes protocol-4 pickle opcodes with a memo, framed like CPython's pickler."""

    FRAME_TARGET = 64 * 1024

    def __init__(self, f):
        self.f = f
        self.buf = bytearray()
        self.n = 0  # memo entries so far
        self.strs: dict[str, bytes] = {}
        self.ids: dict[int, bytes] = {}
        self.keep: list = []  # keeps objects memoized by id alive
        self.written = 2
        f.write(b"\x80\x04")

    def ref(self, idx: int) -> bytes:
        return b"h" + bytes((idx,)) if idx < 256 else b"j" + struct.pack("<I", idx)

    def memo(self) -> bytes:
        idx = self.n
        self.n += 1
        return self.ref(idx)

    def s(self, text: str) -> bytes:
        r = self.strs.get(text)
        if r is not None:
            return r
        raw = text.encode("utf-8", "surrogatepass")
        op = (b"\x8c" + bytes((len(raw),)) if len(raw) < 256 else b"X" + struct.pack("<I", len(raw)))
        self.strs[text] = self.memo()
        return op + raw + b"\x94"

    @staticmethod
    def i(v: int) -> bytes:
        if 0 <= v < 256:
            return b"K" + bytes((v,))
        if 0 <= v < 65536:
            return b"M" + struct.pack("<H", v)
        if -(1 << 31) <= v < (1 << 31):
            return b"J" + struct.pack("<i", v)
        raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
        return b"\x8a" + bytes((len(raw),)) + raw

    def obj(self, o) -> bytes:
        """Generic (slow) path: dicts, lists, tuples, str, int, float, bool, None."""
        if o is None:
            return b"N"
        if o is True:
            return b"\x88"
        if o is False:
            return b"\x89"
        if isinstance(o, int):
            return self.i(o)
        if isinstance(o, float):
            return b"G" + struct.pack(">d", o)
        if isinstance(o, str):
            return self.s(o)
        r = self.ids.get(id(o))
        if r is not None:
            return r
        if isinstance(o, tuple):
            body = b"".join(self.obj(x) for x in o)
            if len(o) == 0:
                return b")"
            op = {1: b"\x85", 2: b"\x86", 3: b"\x87"}.get(len(o))
            out = body + op if op else b"(" + body + b"t"
            self.ids[id(o)] = self.memo()
            self.keep.append(o)
            return out + b"\x94"
        if isinstance(o, dict):
            self.ids[id(o)] = self.memo()
            self.keep.append(o)
            items = list(o.items())
            out = [b"}\x94"]
            for k in range(0, len(items), 1000):
                chunk = items[k:k + 1000]
                body = b"".join(self.obj(a) + self.obj(b) for a, b in chunk)
                out.append(body + b"s" if len(chunk) == 1 else b"(" + body + b"u")
            return b"".join(out)
        if isinstance(o, list):
            self.ids[id(o)] = self.memo()
            self.keep.append(o)
            out = [b"]\x94"]
            for k in range(0, len(o), 1000):
                chunk = o[k:k + 1000]
                body = b"".join(self.obj(x) for x in chunk)
                out.append(body + b"a" if len(chunk) == 1 else b"(" + body + b"e")
            return b"".join(out)
        raise TypeError(f"cannot emit {type(o).__name__}")

    def put(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) >= self.FRAME_TARGET:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self.f.write(b"\x95" + struct.pack("<Q", len(self.buf)))
            self.f.write(self.buf)
            self.written += 9 + len(self.buf)
            self.buf = bytearray()

    def close(self) -> None:
        self.put(b".")
        self.flush()


def write_synthetic_snapshot(path, *, target_bytes: int = 64 << 20, layers: int = 48,
                             act_bytes: int = 8 << 20, frames_depth: int = 24,
                             seed: int = 0) -> SynthResult:
    """Stream a snapshot pickle of about `target_bytes` to `path` in constant memory.

    The file loads with `pickle.load` into the documented schema. Returns the expected figures.
    """
    sim = _Sim(seed, layers, act_bytes, frames_depth)
    sim.track_live = False  # per-peak breakdown would cost O(live) per new peak on huge files
    with open(path, "wb") as f:
        em = _Emitter(f)
        # top-level dict; the trace comes first in the stream here and the segments (which need the
        # end state) after it -- key order does not matter to readers.
        em.put(b"}\x94(")
        em.n += 1  # the top dict
        em.put(em.s("device_traces"))
        em.put(b"]\x94]\x94(")
        em.n += 2  # the outer list and device 0's list; then the MARK of the first batch
        s = em.s
        frames_ref: dict[int, bytes] = {}
        alloc_frames: dict[int, bytes] = {}
        t0 = 1_700_000_000_000_000
        batch = 0
        for action, addr, size, frames in sim.events(1 << 30):
            parts = [b"}\x94("]
            em.n += 1
            parts.append(s("action"))
            parts.append(s(action))
            parts.append(s("addr"))
            parts.append(em.i(addr))
            parts.append(s("size"))
            parts.append(em.i(size))
            parts.append(s("stream"))
            parts.append(b"K\x00")
            parts.append(s("time_us"))
            parts.append(em.i(t0 + sim.res.n_entries))
            parts.append(s("frames"))
            if action == "alloc":
                alloc_frames[addr] = em.memo()  # the list is memoized before its items
                parts.append(b"]\x94(")
                for fr in frames:
                    r = frames_ref.get(id(fr))
                    if r is None:
                        parts.append(em.obj(fr))
                        frames_ref[id(fr)] = em.ids[id(fr)]
                    else:
                        parts.append(r)
                parts.append(b"e")
            elif action.startswith("free") and addr in alloc_frames:
                parts.append(alloc_frames[addr])
                if action == "free_completed":
                    del alloc_frames[addr]
            else:
                em.memo()
                parts.append(b"]\x94")
            parts.append(b"u")
            em.put(b"".join(parts))
            sim.res.n_entries += 1
            batch += 1
            if batch == 1000:
                em.put(b"e(")
                batch = 0
            if action == "free_completed" and em.written + len(em.buf) >= target_bytes:
                break
        em.put(b"e" if batch else b"1")  # APPENDS, or POP_MARK for an empty last batch
        em.put(b"a")  # the outer list gets device 0's list
        res = sim.res
        res.end_allocated = sim.allocated
        res.reserved_end = sim.reserved
        em.put(em.s("segments"))
        em.put(em.obj(_segments_at_end(sim, {})))
        em.put(em.s("allocator_settings"))
        em.put(em.obj({"PYTORCH_CUDA_ALLOC_CONF": ""}))
        em.put(b"u")
        em.close()
        res.file_bytes = em.written
    return res
