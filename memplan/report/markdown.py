"""A Markdown summary of a `Timeline`: tables to paste into an issue or a pull request."""
from __future__ import annotations

from memplan.report.timeline import Timeline, band_at
from memplan.units import fmt_bytes

__all__ = ["render_markdown"]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[object]], right: set[int] = frozenset()) -> str:
    out = ["| " + " | ".join(_cell(h) for h in header) + " |",
           "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _pct(part: int, whole: int) -> str:
    return f"{part / whole * 100:.1f} %" if whole else "-"


def render_markdown(timeline: Timeline, *, top_modules: int = 15, top_phases: int = 10) -> str:
    """The report as Markdown (GitHub-flavoured tables)."""
    tl = timeline
    p = tl.peak
    lines: list[str] = [f"## {tl.title}", ""]
    if tl.summary:
        lines += [_table(["", ""], [[k, v] for k, v in tl.summary]), ""]
    where = []
    band = band_at(tl.bands, p.index)
    if band:
        where.append(f"{band.phase}, step {band.step}" + (f", micro-step {band.micro_step}"
                                                            if band.micro_step else ""))
    elif p.phase and p.phase != "-":
        where.append(p.phase)
    figures = [["peak allocated", f"**{fmt_bytes(p.bytes)}**", str(p.bytes),
                f"{tl.x_label} {p.index}" + (f" ({where[0]})" if where else "")]]
    if tl.peak_reserved is not None:
        figures.append(["peak reserved", fmt_bytes(tl.peak_reserved), str(tl.peak_reserved), ""])
    for c in tl.measured:
        if c.y:
            err = f"prediction {(p.bytes - c.max) / c.max * 100:+.1f} %" if c.max else ""
            figures.append([f"{c.label} (max)", fmt_bytes(c.max), str(c.max), err])
    if tl.capacity:
        head = tl.headroom or 0
        figures.append(["capacity", fmt_bytes(tl.capacity), str(tl.capacity), ""])
        figures.append(["headroom", fmt_bytes(head, signed=True), str(head),
                        "fits" if head >= 0 else "**does not fit**"])
    lines += [_table(["", "value", "bytes", "where"], figures, {2}), ""]

    cats = [(n, v) for n, v in p.by_category if v]
    if cats:
        whole = sum(v for _n, v in cats)
        lines += ["### Live at the peak", "",
                  _table(["series", "bytes", "share"],
                         [[n, fmt_bytes(v), _pct(v, whole)] for n, v in sorted(cats, key=lambda t: -t[1])],
                         {1, 2}), ""]
    if p.top_modules:
        lines += ["### Top contributors at the peak", "",
                  _table(["module / frame", "live", "share of peak"],
                         [[f"`{n}`", fmt_bytes(v), _pct(v, p.bytes)] for n, v in p.top_modules], {1, 2}),
                  ""]
    if tl.bands:
        top = sorted(tl.bands, key=lambda b: (-b.peak, b.start))[:top_phases]
        lines += ["### Highest phases", "",
                  _table(["phase", "step", "micro-step", "events", "peak"],
                         [[b.phase, b.step, b.micro_step, f"{b.start}–{b.end - 1}", fmt_bytes(b.peak)]
                          for b in top], {1, 2, 4}), ""]
    if tl.modules:
        mods = tl.modules[:top_modules]
        lines += [f"### Modules (top {len(mods)} of {len(tl.modules)} by max live)", "",
                  _table(["module / frame", "max live", "at peak", "allocated (sum)", "allocations"],
                         [[f"`{m.module}`", fmt_bytes(m.max_live), fmt_bytes(m.bytes_at_peak),
                           fmt_bytes(m.allocated) if m.allocated else "-", m.count] for m in mods],
                         {1, 2, 3, 4}), ""]
    points = [(c, i) for c in tl.measured if c.kind == "points" for i in range(len(c.x))]
    if points:
        lines += ["### Measured", "",
                  _table(["series", "point", tl.x_label, "measured"],
                         [[c.label, c.point_labels[i] if i < len(c.point_labels) else "", c.x[i],
                           fmt_bytes(c.y[i])] for c, i in points], {2, 3}), ""]
    if tl.notes:
        lines += ["### Notes", ""] + [f"- {_cell(n)}" for n in tl.notes] + [""]
    lines.append(f"<sub>memplan · {tl.n_events} {tl.x_label}s</sub>")
    return "\n".join(lines) + "\n"
