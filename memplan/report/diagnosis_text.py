"""Human-readable text for a `Diagnosis` and for decoded codes (returned as strings; the CLI prints them)."""
from __future__ import annotations

import textwrap
from typing import Iterable

from tabulate import tabulate

from memplan.diagnose import Category, CodeInfo, Diagnosis, Incident
from memplan.units import fmt_bytes

_WIDTH = 100
_NUMBER_LABELS = [
    ("requested_bytes", "requested"), ("total_bytes", "device total"), ("allocated_bytes", "allocated by PyTorch"),
    ("reserved_bytes", "reserved by PyTorch"), ("reserved_unallocated_bytes", "cached, unallocated"),
    ("free_bytes", "free on device"), ("process_in_use_bytes", "this process in use"),
    ("non_pytorch_bytes", "this process, outside PyTorch"), ("other_processes_bytes", "other processes"),
    ("foreign_bytes", "outside this allocator"), ("private_pool_bytes", "private pools"),
    ("allowed_bytes", "allowed (memory fraction)"),
]
_OTHER_NUMBERS = [("timeout_ms", "timeout (ms)"), ("op_type", "collective"), ("seq_num", "sequence no."),
                  ("remote_rank", "remote rank"), ("watchdog_stuck_s", "watchdog stuck (s)")]


def _wrap(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, width=_WIDTH, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def _numbers_table(inc: Incident) -> str | None:
    rows = [(label, fmt_bytes(inc.numbers[k])) for k, label in _NUMBER_LABELS if inc.numbers.get(k) is not None]
    rows += [(label, str(inc.numbers[k])) for k, label in _OTHER_NUMBERS if inc.numbers.get(k) is not None]
    if not rows:
        return None
    return textwrap.indent(tabulate(rows, tablefmt="plain", colalign=("left", "right")), "    ")


def render_incident(inc: Incident, title: str) -> str:
    where = f"{inc.source}:{inc.line}" if inc.line else inc.source
    head = f"{title}  {inc.category.value}  (confidence {inc.confidence:.2f})  {where}"
    if inc.device:
        head += f"  {inc.device}"
    if inc.occurrences > 1:
        head += f"  x{inc.occurrences}"
    out = [head, _wrap(inc.summary)]
    table = _numbers_table(inc)
    if table:
        out += ["  Numbers:", table]
    if inc.codes:
        out.append(_wrap("Codes: " + ", ".join(inc.codes) + "  (memplan decode CODE explains each)"))
    if inc.location:
        out.append(_wrap(f"Where: {inc.location}"))
    if inc.advice:
        out.append("  What to do:")
        for i, a in enumerate(inc.advice, 1):
            out.append(textwrap.fill(f"{i}. [{a.id}] {a.title}: {a.text}", width=_WIDTH, initial_indent="    ",
                                     subsequent_indent="       ", break_long_words=False, break_on_hyphens=False))
    if inc.evidence:
        out.append("  Evidence:")
        out += [textwrap.shorten(e, width=_WIDTH - 4, placeholder=" …").join(("    ", "")) for e in inc.evidence]
    return "\n".join(out)


def render_diagnosis(d: Diagnosis, show_all: bool = False) -> str:
    shown = [i for i in d.incidents if show_all or i.category != Category.BENIGN or i is d.incidents[0]]
    hidden = len(d.incidents) - len(shown)
    srcs = ", ".join(d.sources)
    lines = [f"memplan diagnose: {len(d.incidents)} incident(s) in {srcs} ({d.lines_read} lines)", ""]
    if not d.incidents:
        lines.append(f"primary: {d.primary_category.value}")
        lines += [_wrap(n, "") for n in d.notes]
        return "\n".join(lines)
    lines.append(render_incident(shown[0], "PRIMARY"))
    rest = shown[1:]
    if rest:
        lines += ["", "Other incidents:"]
        rows = [(i, inc.category.value, f"{inc.source}:{inc.line}", inc.occurrences,
                 textwrap.shorten(inc.summary, width=70, placeholder=" …")) for i, inc in enumerate(rest, 2)]
        lines.append(tabulate(rows, headers=["#", "category", "where", "count", "summary"], tablefmt="simple"))
        for i, inc in enumerate(rest, 2):
            if inc.category != Category.BENIGN:
                lines += ["", render_incident(inc, f"#{i}")]
    if hidden:
        lines += ["", f"({hidden} benign incident(s) hidden; --all shows them)"]
    if d.notes:
        lines += [""] + [_wrap("note: " + n, "") for n in d.notes]
    return "\n".join(lines)


def render_codes(infos: Iterable[CodeInfo]) -> str:
    blocks = []
    for info in infos:
        status = "" if info.known else "  (not in memplan's catalogs)"
        rows = [("name", info.name or "-"), ("family", info.family), ("category", info.category.value),
                ("at fault", info.fault)]
        if info.status and info.status != "current":
            rows.append(("status", info.status))
        out = [f"{info.code}{status}", textwrap.indent(tabulate(rows, tablefmt="plain"), "  "), _wrap(info.meaning)]
        if info.alternatives:
            out.append(_wrap("Also: " + "; ".join(f"{a['kind']} {a['name']}" for a in info.alternatives)))
        for h in info.history:
            desc = h.get("meaning") or h.get("note") or f"{h.get('name')} ({h.get('status')})"
            src = f" — {h['source']}" if h.get("source") else ""
            out.append(_wrap(f"History: {desc}{src}"))
        if info.advice:
            out.append("  What to do:")
            out += [textwrap.fill(f"- {a.title}: {a.text}", width=_WIDTH, initial_indent="    ",
                                  subsequent_indent="      ", break_long_words=False) for a in info.advice]
        for s in info.sources:
            out.append(f"  source: {s['repo']} {s['path']} @ {s['commit'][:12]}")
        blocks.append("\n".join(out))
    return "\n\n".join(blocks)
