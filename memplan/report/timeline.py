"""The neutral memory timeline that every renderer (HTML, Markdown, PNG) consumes.

A `Timeline` is plain data: a time axis (event indices), bytes per series (the memory categories of a
`Trace`, or any other names, e.g. `allocated` for a PyTorch snapshot) sampled at a bounded number of
points, phase bands, the peak and what is live at it, per-module rows, and optional capacity, reserved
and measured curves. `timeline_from_trace` computes one from a `memplan.trace.events.Trace`;
`memplan.report.snapshot` builds one from a PyTorch memory snapshot.

Downsampling never loses the peak: the axis is cut into buckets and each bucket keeps the points where
its total is lowest and highest (in time order), so every bucket maximum -- and therefore the exact
global peak -- is a sample point; the first and last events are always kept.

Known limitations: a category is a storage's *final* category for its whole life (as in the Trace);
samples between kept points are not interpolated, a renderer draws straight lines between them.
"""
from __future__ import annotations

import bisect
from dataclasses import asdict, dataclass, field
from itertools import accumulate
from typing import Iterable, Sequence

from memplan.trace.analysis import ModuleRow
from memplan.trace.events import CATEGORIES, Trace

__all__ = [
    "Band", "Curve", "Peak", "Timeline", "downsample_indices", "timeline_from_trace",
]

TOP_MODULES = 10
"""How many modules the peak lists as 'top live modules'."""


@dataclass(frozen=True)
class Band:
    """A stretch of the axis `[start, end)` spent in one phase of one (micro-)step."""

    phase: str
    step: int
    micro_step: int
    start: int
    end: int
    peak: int = 0
    """Highest total inside the band (exact, computed before downsampling)."""


@dataclass(frozen=True)
class Curve:
    """An extra line or set of points drawn over the stack (reserved bytes, a measured run)."""

    label: str
    x: tuple[int, ...]
    y: tuple[int, ...]
    kind: str = "line"
    """`line` (a curve) or `points` (markers, e.g. measured peaks per phase)."""
    point_labels: tuple[str, ...] = ()
    """Optional one label per point (e.g. the phase a measured peak belongs to)."""

    @property
    def max(self) -> int | None:
        return max(self.y) if self.y else None


@dataclass(frozen=True)
class Peak:
    """The highest total over the whole axis and what was live at that moment."""

    index: int
    bytes: int
    phase: str
    step: int = 0
    micro_step: int = 0
    by_category: tuple[tuple[str, int], ...] = ()
    """Live bytes per series at the peak, in series order."""
    top_modules: tuple[tuple[str, int], ...] = ()
    """Largest live contributors at the peak (module path, or stack frame for snapshots), largest first."""


@dataclass(frozen=True)
class Timeline:
    title: str
    x: tuple[int, ...]
    """Sample positions on the axis (event indices unless `x_label` says otherwise), increasing."""
    series: tuple[str, ...]
    """Names of the stacked series, bottom first (categories for a Trace)."""
    stacks: tuple[tuple[int, ...], ...]
    """One tuple per series, aligned with `x`: live bytes of that series at each sample."""
    total: tuple[int, ...]
    """Sum of the stacks at each sample."""
    n_events: int
    peak: Peak
    bands: tuple[Band, ...] = ()
    modules: tuple[ModuleRow, ...] = ()
    """Largest first (by `max_live`)."""
    capacity: int | None = None
    """Device memory capacity in bytes, when a device is known."""
    reserved: Curve | None = None
    """Reserved bytes (allocator cache) over the same axis, when known."""
    measured: tuple[Curve, ...] = ()
    """Measured curves or points (validate), drawn next to the prediction."""
    summary: tuple[tuple[str, str], ...] = ()
    """Free-form key/value rows shown at the top of every report."""
    x_label: str = "event"
    notes: tuple[str, ...] = field(default=())

    @property
    def peak_reserved(self) -> int | None:
        return self.reserved.max if self.reserved is not None else None

    @property
    def headroom(self) -> int | None:
        """Capacity minus the highest of the allocated peak and the reserved peak (None without capacity)."""
        if self.capacity is None:
            return None
        top = max(self.peak.bytes, self.peak_reserved or 0)
        return self.capacity - top

    def to_dict(self) -> dict:
        """JSON-ready dict (all bytes are ints)."""
        d = asdict(self)
        d["peak_reserved"] = self.peak_reserved
        d["headroom"] = self.headroom
        return d


# --------------------------------------------------------------------------------------------------
def downsample_indices(total: Sequence[int], max_points: int) -> list[int]:
    """Indices into `total` to keep: the first, the last, and per bucket its minimum and maximum.

    Never more than `max(max_points, 4)` indices; every bucket maximum is kept, so the global maximum is.
    """
    n = len(total)
    if n <= max(max_points, 4):
        return list(range(n))
    buckets = max(1, (max(max_points, 4) - 2) // 2)
    keep: list[int] = [0]
    width = n / buckets
    for b in range(buckets):
        lo = int(b * width)
        hi = n if b == buckets - 1 else int((b + 1) * width)
        if hi <= lo:
            continue
        seg = total[lo:hi]
        i_max = lo + seg.index(max(seg))
        i_min = lo + seg.index(min(seg))
        keep.extend(sorted({i_min, i_max}))
    keep.append(n - 1)
    # dedupe, keep order (indices are already increasing bucket by bucket)
    out: list[int] = []
    last = -1
    for i in keep:
        if i > last:
            out.append(i)
            last = i
    return out


def _downsample_curve(curve: Curve | None, max_points: int) -> Curve | None:
    if curve is None or len(curve.x) <= max_points or curve.kind != "line":
        return curve
    idx = downsample_indices(list(curve.y), max_points)
    labels = tuple(curve.point_labels[i] for i in idx) if curve.point_labels else ()
    return Curve(curve.label, tuple(curve.x[i] for i in idx), tuple(curve.y[i] for i in idx),
                 curve.kind, labels)


def as_curve(label: str, data, kind: str = "line") -> Curve | None:
    """Accept a `Curve`, or `(x, y)` pairs, or a plain sequence of y values (x = 0, 1, ...)."""
    if data is None or isinstance(data, Curve):
        return data
    data = list(data)
    if not data:
        return Curve(label, (), (), kind)
    if isinstance(data[0], (tuple, list)):
        return Curve(label, tuple(int(p[0]) for p in data), tuple(int(p[1]) for p in data), kind)
    return Curve(label, tuple(range(len(data))), tuple(int(v) for v in data), kind)


def _bands_from_marks(marks: Iterable[tuple[int, str, int, int]], n: int) -> tuple[Band, ...]:
    bands: list[Band] = []
    marks = sorted(marks, key=lambda m: m[0])
    if n and (not marks or marks[0][0] > 0):
        first = marks[0][0] if marks else n
        bands.append(Band("build", 0, 0, 0, min(first, n)))
    for i, (idx, phase, step, micro) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else n
        end = min(end, n)
        if end <= idx:
            continue
        if bands and bands[-1].end == idx and (bands[-1].phase, bands[-1].step,
                                               bands[-1].micro_step) == (phase, step, micro):
            prev = bands.pop()
            idx = prev.start
        bands.append(Band(phase, step, micro, idx, end))
    return tuple(bands)


def band_at(bands: Sequence[Band], index: int) -> Band | None:
    """The band that contains `index`, or None."""
    starts = [b.start for b in bands]
    i = bisect.bisect_right(starts, index) - 1
    if i >= 0 and bands[i].start <= index < bands[i].end:
        return bands[i]
    return None


# --------------------------------------------------------------------------------------------------
def timeline_from_trace(
    trace: Trace,
    *,
    capacity: int | None = None,
    reserved_curve=None,
    measured: Iterable = (),
    max_points: int = 2000,
    title: str = "memory timeline",
    summary: Iterable[tuple[str, str]] = (),
) -> Timeline:
    """Replay `trace` and build its `Timeline`.

    The value at event index `i` is the live bytes after event `i`. The peak is taken over the whole
    trace (the first index reaching the maximum). `reserved_curve` is a `Curve`, `(event_index, bytes)`
    pairs or one value per event; `measured` holds `Curve`s (or `(label, pairs)` tuples) from a real run.
    Cost: two passes over the events in plain Python (about a second per million events).
    """
    ev = trace.events
    n = len(ev)
    series = CATEGORIES
    nbytes, cat_of, mod_of, mod_names = _index(trace.storages, series)
    # pass 1: totals per event (C-speed accumulate) and the peak
    total = list(accumulate(nbytes[v] if v >= 0 else -nbytes[~v] for v in ev)) if n else []
    if total:
        peak_bytes = max(total)
        peak_idx = total.index(peak_bytes)
    else:
        peak_bytes, peak_idx = 0, 0
    keep = downsample_indices(total, max_points)
    if n and peak_idx not in keep:  # cannot happen (bucket maxima are kept); belt and braces
        keep = sorted(set(keep) | {peak_idx})
    # pass 2: per-category values at the kept samples, per-module live/max/allocated
    p = _replay(ev, nbytes, cat_of, mod_of, len(series), len(mod_names), keep, peak_idx)
    bands = tuple(Band(b.phase, b.step, b.micro_step, b.start, b.end,
                       max(total[b.start:b.end]) if b.end > b.start else 0)
                  for b in _bands_from_marks(trace.marks, n))
    b = band_at(bands, peak_idx)
    phase, step, micro = (b.phase, b.step, b.micro_step) if b else trace.phase_at(peak_idx)
    nmod = len(mod_names)
    top = sorted(((mod_names[m], p.at_peak_mod[m]) for m in range(nmod) if p.at_peak_mod[m] > 0),
                 key=lambda r: -r[1])[:TOP_MODULES]
    peak = Peak(
        index=peak_idx, bytes=peak_bytes, phase=phase, step=step, micro_step=micro,
        by_category=tuple(zip(series, p.at_peak_cat)), top_modules=tuple(top),
    )
    modules = tuple(sorted(
        (ModuleRow(mod_names[m], p.at_peak_mod[m], max_live=p.mmax[m], allocated=p.malloc[m], count=p.mcount[m])
         for m in range(nmod) if p.mcount[m]),
        key=lambda r: (-r.max_live, -r.bytes_at_peak, r.module),
    ))
    curves = [m if isinstance(m, Curve) else as_curve(m[0], m[1], kind="points") for m in measured]
    return Timeline(
        title=title, x=tuple(keep), series=series, stacks=tuple(tuple(s) for s in p.stacks),
        total=tuple(total[i] for i in keep), n_events=n, peak=peak, bands=bands, modules=modules,
        capacity=capacity, reserved=_downsample_curve(as_curve("reserved", reserved_curve), max_points),
        measured=tuple(_downsample_curve(c, max_points) for c in curves),
        summary=tuple((str(k), str(v)) for k, v in summary), notes=tuple(trace.notes),
    )


def _index(storages, series) -> tuple[list[int], list[int], list[int], list[str]]:
    """Per storage: bytes, category index, module index; and the module names."""
    cat_index = {c: i for i, c in enumerate(series)}
    other = cat_index["other"]
    nbytes = [s.nbytes for s in storages]
    cat_of = [cat_index.get(str(getattr(s.category, "value", s.category)), other) for s in storages]
    mod_ids: dict[str, int] = {}
    mod_of = [mod_ids.setdefault(s.module or "<none>", len(mod_ids)) for s in storages]
    return nbytes, cat_of, mod_of, list(mod_ids)


@dataclass
class _Replay:
    stacks: list
    at_peak_cat: list
    at_peak_mod: list
    mmax: list
    malloc: list
    mcount: list


def _replay(ev, nbytes, cat_of, mod_of, ncat: int, nmod: int, keep, peak_idx: int) -> _Replay:
    """Per-category values at the kept samples; per-module live at the peak, max live, allocated, count."""
    live = [0] * ncat
    stacks: list[list[int]] = [[] for _ in range(ncat)]
    mlive = [0] * nmod
    mmax = [0] * nmod
    malloc = [0] * nmod
    mcount = [0] * nmod
    at_peak_cat: list[int] = [0] * ncat
    at_peak_mod: list[int] = [0] * nmod
    keep_iter = iter(keep)
    next_keep = next(keep_iter, -1)
    for i, v in enumerate(ev):
        if v >= 0:
            nb = nbytes[v]
            live[cat_of[v]] += nb
            m = mod_of[v]
            x = mlive[m] + nb
            mlive[m] = x
            if x > mmax[m]:
                mmax[m] = x
            malloc[m] += nb
            mcount[m] += 1
        else:
            s = ~v
            nb = nbytes[s]
            live[cat_of[s]] -= nb
            mlive[mod_of[s]] -= nb
        if i == next_keep:
            for c in range(ncat):
                stacks[c].append(live[c])
            next_keep = next(keep_iter, -1)
            if i == peak_idx:
                at_peak_cat = list(live)
                at_peak_mod = list(mlive)
    return _Replay(stacks, at_peak_cat, at_peak_mod, mmax, malloc, mcount)
