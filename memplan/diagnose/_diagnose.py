"""`diagnose(paths_or_text, estimate=None)`: read logs, group evidence into incidents, classify, advise.

Streaming end to end: lines are read, scanned and dropped; only evidence near an error is kept, an
incident is classified as soon as its group closes, and identical incidents (the same OOM printed by
eight ranks, a warning printed every step) are merged with a count. Memory stays bounded by the number
of distinct incidents (at most `MAX_INCIDENTS`), not by the size of the log.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Iterable, Mapping

from memplan.diagnose._advice import choose_advice, relate_estimate
from memplan.diagnose._classify import (
    MiB,
    Group,
    classify_oom,
    classify_text,
    code_category,
)
from memplan.diagnose._parse import Evidence, scan
from memplan.diagnose._reader import ReadStats, iter_binary, open_source
from memplan.diagnose._types import MEMORY_CATEGORIES, Category, Diagnosis, Incident
from memplan.errors import UserError
from memplan.diagnose._catalog import decode

GAP = 30
MAX_INCIDENTS = 200
_CONTEXT_KINDS = {"frame", "op", "numbers", "device-open"}

# Across incidents, the one to act on first: a cause before the symptoms it triggers elsewhere
# (a kernel fault or a device that cannot open makes the other ranks' collectives time out).
PRIMARY_ORDER = ["absurd-request", "memory", "environment", "kernel-fault", "invalid-param", "comm",
                 "op-not-supported", "unknown", "benign"]
_RANK = {c: i for i, c in enumerate(PRIMARY_ORDER)}


def _rank(cat: Category) -> int:
    key = "memory" if cat in MEMORY_CATEGORIES else cat.value
    return _RANK.get(key, len(PRIMARY_ORDER))


def diagnose(paths_or_text: Any, estimate: Mapping[str, Any] | None = None, *,
             snapshot: Any = None) -> Diagnosis:
    """Diagnose one or more logs.

    `paths_or_text`: a path, `"-"` (stdin), the log text itself, bytes, or a list/tuple of these.
    `estimate`: an analyze result (keys `peak_allocated_bytes`, `peak_reserved_bytes`, `peak_phase`,
    `breakdown_at_peak`, `capacity_bytes`, `device`) to relate memory failures to the predicted peak.
    `snapshot`: reserved for a memory-snapshot reader (not implemented here).
    """
    if snapshot is not None:
        raise UserError("snapshot input is not supported yet")
    if estimate is not None and not isinstance(estimate, Mapping):
        raise UserError("the estimate must be a mapping (the JSON object written by `memplan analyze --format json`)")
    items = list(paths_or_text) if isinstance(paths_or_text, (list, tuple)) else [paths_or_text]
    if not items:
        raise UserError("no log given")
    opened = [open_source(i) for i in items]  # open all first, so a missing file fails before any work
    incidents: dict[tuple, Incident] = {}
    order: list[tuple] = []
    notes: list[str] = []
    lines = nbytes = 0
    overflow = 0
    try:
        for label, stream, _close in opened:
            stats = ReadStats()
            for inc in _incidents(label, iter_binary(stream, stats), estimate):
                key = _signature(inc)
                if key in incidents:
                    old = incidents[key]
                    incidents[key] = _bump(old)
                elif len(incidents) < MAX_INCIDENTS:
                    incidents[key] = inc
                    order.append(key)
                else:
                    overflow += 1
            lines += stats.lines
            nbytes += stats.bytes
            notes.extend(_read_notes(label, stats))
    finally:
        for _label, stream, close in opened:
            if close:
                stream.close()
    if overflow:
        notes.append(f"{overflow} further incidents were not kept (limit {MAX_INCIDENTS} distinct incidents).")
    found = [incidents[k] for k in order]
    # Order: most actionable first (cause before symptom), then as they appeared.
    found.sort(key=lambda i: _rank(i.category))
    if not found:
        primary = Category.UNKNOWN
        if lines == 0 or nbytes == 0:
            notes.append("The input is empty.")
        elif not any("binary" in n for n in notes):
            notes.append(f"No error, warning or known message found in {lines} lines.")
    else:
        primary = found[0].category
    return Diagnosis(incidents=tuple(found), primary_category=primary, sources=tuple(o[0] for o in opened),
                     lines_read=lines, bytes_read=nbytes, notes=tuple(notes))


def _read_notes(label: str, stats: ReadStats) -> list[str]:
    out = []
    if stats.lines and stats.binary_lines > stats.lines / 2:
        out.append(f"{label}: this looks like binary data, not a text log ({stats.binary_lines} of {stats.lines} "
                   "lines have control bytes); results are unreliable.")
    if stats.cut_lines:
        out.append(f"{label}: {stats.cut_lines} very long lines were cut at 64 KiB.")
    non_utf8 = {k: v for k, v in stats.encodings.items() if k != "utf-8"}
    if non_utf8:
        out.append(f"{label}: decoded " + ", ".join(f"{v} lines as {k}" for k, v in non_utf8.items()) + ".")
    return out


def _signature(inc: Incident) -> tuple:
    nums = tuple(sorted((k, v) for k, v in inc.numbers.items() if isinstance(v, (int, str, float))))
    return inc.category, inc.codes, nums, inc.op if inc.category not in (Category.BENIGN,) else None


def _bump(inc: Incident) -> Incident:
    from dataclasses import replace

    return replace(inc, occurrences=inc.occurrences + 1)


def _incidents(label: str, lines: Iterable[str], estimate: Mapping[str, Any] | None) -> Iterable[Incident]:
    context: deque[Evidence] = deque(maxlen=60)
    group: Group | None = None
    for ev in scan(lines):
        is_context = ev.kind in _CONTEXT_KINDS or (ev.kind == "codes" and not _codes_matter(ev.codes))
        if group is not None and (ev.line - group.last > GAP or (ev.kind in ("oom", "host-oom") and group.has_oom)):
            yield from _finish(group, estimate)
            group = None
        if is_context:
            if group is not None:
                group.add(ev)
            else:
                context.append(ev)
            continue
        if group is None:
            group = Group(label)
            for c in context:
                if c.line >= ev.line - GAP:
                    group.add(c)
            context.clear()
        group.add(ev)
    if group is not None:
        yield from _finish(group, estimate)


def _codes_matter(codes: tuple[str, ...]) -> bool:
    return any(code_category(c)[0] for c in codes)


def _finish(group: Group, estimate: Mapping[str, Any] | None) -> Iterable[Incident]:
    evs = group.evidence
    if not any((e.category and e.strength) or (e.kind == "codes" and _codes_matter(e.codes)) for e in evs):
        return
    codes: list[str] = []
    for e in evs:
        if e.kind == "codes":
            for c in e.codes:
                name = _display_code(c)
                if name not in codes:
                    codes.append(name)
    frames = [e for e in evs if e.kind == "frame"]
    ops = [e for e in evs if e.kind == "op"]
    extra: dict[str, Any] = {}
    for e in evs:
        if e.kind == "numbers":
            for k, v in e.numbers.items():
                extra.setdefault(k, v)
    oom = next((e for e in evs if e.kind in ("oom", "host-oom")), None)
    flags: set[str] = set()
    for e in evs:
        flags |= set(e.flags)
    numbers: dict[str, Any] = {}
    device = None
    if oom is not None:
        raw = dict(oom.numbers)
        device = raw.pop("device", None)
        raw.pop("guard_1eb", None)
        procs = raw.pop("processes", None)
        verdict = classify_oom(dict(oom.numbers), set(oom.flags))
        numbers = {k: v for k, v in raw.items()}
        numbers.update(verdict.facts)
        if procs:
            numbers["processes"] = [{"pid": p, "bytes": b} for p, b in procs]
        category, confidence, summary = verdict.category, verdict.confidence, verdict.summary
        flags |= verdict.flags
        deciding = [oom]
    else:
        category, confidence, lead, deciding, tflags = classify_text(evs)
        flags |= tflags
        summary = _text_summary(category, lead, deciding, codes)
    numbers.update({k: v for k, v in extra.items() if k not in numbers})
    location = None
    if frames:
        f = frames[-1].numbers
        location = f"{f['file']}:{f['lineno']} in {f['func']}"
    op = ops[0].numbers["op"] if ops else None
    if op and category not in (Category.BENIGN,):
        summary += f" Operator: {op}."
    est_facts = None
    top = None
    if estimate is not None and category in MEMORY_CATEGORIES | {Category.ABSURD_REQUEST}:
        est_facts, text, top = relate_estimate(numbers, estimate)
        summary += " " + text
    advice = choose_advice(category, numbers=numbers, flags=flags, codes=tuple(codes), device=device,
                           breakdown_top=top)
    evidence_lines: list[str] = []
    seen_lines: set[int] = set()
    for e in deciding:
        if e.line in seen_lines:
            continue
        seen_lines.add(e.line)
        evidence_lines.append(f"line {e.line}: {e.text.strip()[:300]}")
        if len(evidence_lines) == 3:
            break
    yield Incident(category=category, summary=summary, advice=advice, confidence=round(confidence, 2),
                   codes=tuple(codes), numbers=numbers, device=device, source=group.source, line=group.first,
                   evidence=tuple(evidence_lines), location=location, op=op, estimate=est_facts)


def _display_code(code: str) -> str:
    if code.startswith(("HCCL:", "CUDA:")):
        return code_category(code)[2]
    return code


def _text_summary(category: Category, lead: str, deciding: list[Evidence], codes: list[str]) -> str:
    parts = [lead + "."]
    texts = [e for e in deciding if e.kind != "codes"]
    if texts:
        t = texts[0].text.strip()
        parts.append(f"The log says: \u201c{t[:240]}{'…' if len(t) > 240 else ''}\u201d.")
    explained = 0
    specific = [c for c in codes if code_category(c.split(" ")[0])[1] >= 2] or codes
    for c in specific:
        if explained >= 3:
            break
        try:
            info = decode(c.split(" ")[0])
        except UserError:
            continue
        if info.known:
            parts.append(f"{c}: {info.meaning}")
            explained += 1
    return " ".join(parts)


__all__ = ["diagnose", "MiB"]
