"""A PNG picture of a `Timeline` via matplotlib (the optional `plot` extra).

matplotlib is imported only when a PNG is asked for; without it, a `UserError` says how to install it.
"""
from __future__ import annotations

import importlib.util
import os

from memplan.errors import UserError
from memplan.report.html import SERIES_COLORS, _PALETTE, _PHASE_COLORS
from memplan.report.timeline import Timeline
from memplan.units import fmt_bytes

__all__ = ["render_png"]


_NO_MATPLOTLIB = ("a PNG report needs matplotlib: pip install matplotlib (or pip install 'memplan[plot]'), "
                  "or use --report out.html")


def check_png_possible() -> None:
    """Before any work: a PNG report needs matplotlib installed (found without importing it)."""
    if importlib.util.find_spec("matplotlib") is None:
        raise UserError(_NO_MATPLOTLIB)


def _import_pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError(_NO_MATPLOTLIB) from None
    return plt


def render_png(timeline: Timeline, path: str | os.PathLike, *, dpi: int = 110) -> str:
    """Draw the stacked timeline, phase bands, capacity, reserved/measured curves and the peak."""
    plt = _import_pyplot()
    from matplotlib.ticker import FuncFormatter

    tl = timeline
    path = os.fspath(path)
    fig, ax = plt.subplots(figsize=(11, 4.6), dpi=dpi)
    try:
        shown = [k for k in range(len(tl.series)) if k < len(tl.stacks) and any(tl.stacks[k])]
        colors = [SERIES_COLORS.get(tl.series[k], _PALETTE[k % len(_PALETTE)]) for k in shown]
        if shown and tl.x:
            ax.stackplot(tl.x, [tl.stacks[k] for k in shown], labels=[tl.series[k] for k in shown],
                         colors=colors, alpha=0.85, linewidth=0)
        for b in tl.bands:
            ax.axvspan(b.start, max(b.end - 1, b.start), color=_PHASE_COLORS.get(b.phase, "#f4f4f4"),
                       zorder=0, lw=0)
        if tl.reserved is not None and tl.reserved.x:
            ax.plot(tl.reserved.x, tl.reserved.y, "--", color="#555", lw=1.2, label="reserved")
        for c in tl.measured:
            if c.kind == "points":
                ax.plot(c.x, c.y, "D", color="#111", ms=5, label=c.label)
            else:
                ax.plot(c.x, c.y, "-", color="#111", lw=1.5, label=c.label)
        if tl.capacity:
            ax.axhline(tl.capacity, color="#c0392b", lw=1.5, label=f"capacity {fmt_bytes(tl.capacity)}")
        p = tl.peak
        ax.axvline(p.index, color="#c0392b", ls=":", lw=1)
        ax.plot([p.index], [p.bytes], "o", color="#c0392b")
        ax.annotate(f"peak {fmt_bytes(p.bytes)}" + (f" ({p.phase})" if p.phase and p.phase != "-" else ""),
                    (p.index, p.bytes), xytext=(6, 6), textcoords="offset points", color="#c0392b",
                    fontweight="bold")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt_bytes(int(v))))
        ax.set_xlabel(tl.x_label)
        ax.set_ylabel("memory")
        ax.set_title(tl.title)
        ax.set_xlim(0, max(tl.n_events - 1, 1))
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper left", fontsize=8, ncol=2, framealpha=0.85)
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
    return path
