"""The timeline of a PyTorch memory snapshot (read by memplan.diagnose.snapshot), for the HTML/PNG report."""
from __future__ import annotations

import os
from itertools import accumulate

from memplan.diagnose.snapshot import SnapshotAnalysis
from memplan.report.timeline import Curve, Peak, Timeline, downsample_indices
from memplan.trace.analysis import ModuleRow
from memplan.units import fmt_bytes


def timeline_from_snapshot(an: SnapshotAnalysis, device: int | None = None, *, capacity: int | None = None,
                           max_points: int = 2000, series: int = 6) -> Timeline:
    """The allocated-bytes timeline of a snapshot, stacked by the top `series` stack frames at the peak."""
    d = an.device_analysis(device)
    rep, baseline, start_res, pre_live = d.replay_state()
    n_series = series
    top_w = [g.where for g in d.by_frame[:n_series]]
    names = rep.fr.names
    wid = {names.index(w) if w in names else -1: k for k, w in enumerate(top_w)}
    other = len(top_w)
    series = tuple(top_w) + ("other frames",)
    n = max(rep.n, 1)
    # per-entry totals (entries that do not change allocated bytes carry the previous value)
    ev_idx, ev_delta = rep.ev_idx, rep.ev_delta
    totals_ev = list(accumulate(ev_delta, initial=baseline))[1:]
    total = [baseline] * n
    prev, j = baseline, 0
    for pos in range(n):  # dense per entry; fine up to tens of millions of entries
        while j < len(ev_idx) and ev_idx[j] == pos:
            prev = totals_ev[j]
            j += 1
        total[pos] = prev
    keep = downsample_indices(total, max_points)
    if d.peak_index >= 0 and d.peak_index not in keep:
        keep = sorted(set(keep) | {d.peak_index})
    # stacks: replay per series at the kept points
    live = [0] * (other + 1)
    for req, w, _m in pre_live:
        live[wid.get(w, other)] += req
    for _i, size, w, _m in rep.pre_free:
        live[wid.get(w, other)] += size
    ev_k, a_where, a_size, pre_free = rep.ev_k, rep.a_where, rep.a_size, rep.pre_free
    stacks: list[list[int]] = [[] for _ in series]
    kp = 0
    nkeep = len(keep)
    for j in range(len(ev_idx)):
        pos = ev_idx[j]
        while kp < nkeep and keep[kp] < pos:
            for c in range(len(series)):
                stacks[c].append(live[c])
            kp += 1
        k = ev_k[j]
        if k >= 0:
            live[wid.get(a_where[k], other)] += a_size[k] if ev_delta[j] > 0 else -a_size[k]
        else:
            _i, size, w, _m = pre_free[~k]
            live[wid.get(w, other)] -= size
    while kp < len(keep):
        for c in range(len(series)):
            stacks[c].append(live[c])
        kp += 1
    res_x = [0] + [i for i, _s in rep.seg[1:]] + [n - 1]
    res_y = [start_res] + [start_res + s for _i, s in rep.seg[1:]] + [start_res + rep.seg_sum]
    peak_idx = max(d.peak_index, 0)
    at_peak = []
    if peak_idx in keep:
        p = keep.index(peak_idx)
        at_peak = [stacks[c][p] for c in range(len(series))]
    summary = (
        ("snapshot", os.path.basename(an.path)),
        ("device", str(d.device)),
        ("trace entries", str(d.n_entries)),
        ("reserved at dump", fmt_bytes(d.reserved)),
        ("allocated at dump", fmt_bytes(d.allocated)),
        ("fragmentation at dump", f"{d.fragmentation:.1%}"),
    )
    return Timeline(
        title=f"memory snapshot {os.path.basename(an.path)} (device {d.device})",
        x=tuple(keep), series=series,
        stacks=tuple(tuple(s) for s in stacks), total=tuple(total[i] for i in keep),
        n_events=rep.n,
        peak=Peak(index=peak_idx, bytes=d.peak_allocated, phase="-",
                  by_category=tuple(zip(series, at_peak)),
                  top_modules=tuple((g.where, g.bytes) for g in d.by_frame[:10])),
        modules=tuple(ModuleRow(g.where, g.bytes, max_live=g.bytes, count=g.count) for g in d.by_module),
        capacity=capacity,
        reserved=Curve("reserved", tuple(res_x), tuple(res_y)) if d.n_entries else None,
        summary=summary, x_label="trace entry", notes=an.notes,
    )
