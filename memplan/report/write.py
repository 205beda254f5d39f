"""`--report PATH`: write the timeline of an estimate (and optionally measured points) by file type.

`.html` a self-contained page, `.md` Markdown tables, `.png` a matplotlib figure. The timeline covers the
traced optimizer steps (the model build is summarised as the memory held when step 1 begins), so the
peak it shows is the estimate's peak.
"""
from __future__ import annotations

import os
from array import array

from memplan.errors import UserError
from memplan.trace.events import Trace
from memplan.units import fmt_bytes
from memplan.report.html import render_html
from memplan.report.markdown import render_markdown
from memplan.report.png import check_png_possible, render_png
from memplan.report.timeline import timeline_from_trace

SUFFIXES = (".html", ".htm", ".md", ".png")


def check_report_path(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in SUFFIXES:
        raise UserError(f"--report {path}: use a .html, .md or .png file name")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UserError(f"--report {path}: folder {parent} does not exist")
    if ext == ".png":
        check_png_possible()
    return ext


def steps_only(trace: Trace) -> Trace:
    """The trace from the start of step 1: storages live at that moment appear as allocations at
    time 0 (one per storage, in allocation order)."""
    start = trace.window(1)[0]
    live: dict[int, None] = {}
    for v in trace.events[:start]:
        if v >= 0:
            live[v] = None
        else:
            live.pop(~v, None)
    events = array("q", live.keys())
    shift = len(events) - start
    events.extend(trace.events[start:])
    marks = [(0, "build", 0, 0)] if live else []
    marks += [(i + shift, p, s, m) for i, p, s, m in trace.marks if i >= start]
    return Trace(storages=trace.storages, events=events, marks=marks, steps=trace.steps, notes=list(trace.notes))


def write_report(path: str, est, trace: Trace, measured=(), sim=None) -> str:
    """Render the estimate's timeline to `path`; returns the path."""
    check_report_path(path)
    view = steps_only(trace)
    shift = len(view.events) - len(trace.events)
    reserved = None
    if sim is not None and getattr(sim, "reserved_curve", None):
        reserved = [(max(0, i + shift), b) for i, b in sim.reserved_curve if i + shift >= 0]
    summary = [
        ("workload", est.workload), ("peak allocated", fmt_bytes(est.peak_allocated_bytes)),
        ("peak phase", f"{est.peak_phase} (step {est.peak_step})"),
    ]
    if est.device:
        summary.append(("device", est.device))
        summary.append(("peak reserved", fmt_bytes(est.peak_reserved_bytes)))
    timeline = timeline_from_trace(view, capacity=est.capacity_bytes, reserved_curve=reserved,
                                   measured=measured, title=f"memplan: {est.workload}", summary=summary)
    return render_timeline(timeline, path)


def render_timeline(timeline, path: str) -> str:
    """Write any `Timeline` to `path` in the format its suffix names."""
    ext = check_report_path(path)
    if ext in (".html", ".htm"):
        render_html(timeline, path)
    elif ext == ".md":
        with open(path, "w", encoding="utf-8") as f:
            f.write(render_markdown(timeline))
    else:
        render_png(timeline, path)
    return path
