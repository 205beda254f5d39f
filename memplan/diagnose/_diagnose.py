"""`diagnose(paths_or_text, estimate=None)`: read logs, group evidence into incidents, classify, advise.

Streaming end to end: lines are read, scanned and dropped; only evidence near an error is kept, an
incident is classified as soon as its group closes, and identical incidents (the same OOM printed by
eight ranks, a warning printed every step) are merged with a count. Memory stays bounded by the number
of distinct incidents (at most `MAX_INCIDENTS`), not by the size of the log.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Iterable, Iterator, Mapping

from memplan.diagnose._advice import choose_advice, relate_estimate
from memplan.diagnose._classify import (
    IgnoredTraceback,
    MiB,
    Group,
    classify_oom,
    classify_text,
    is_shutdown,
)
from memplan.diagnose._parse import Evidence, from_saved_config, scan
from memplan.diagnose._prior import Prior, PriorText, backend_flags, guessed_incident, load_prior
from memplan.diagnose._reader import ReadStats, iter_binary, open_source
from memplan.diagnose._types import MEMORY_CATEGORIES, Category, Diagnosis, Incident
from memplan.errors import UserError
from memplan.diagnose._catalog import code_category, codes_argue, decode, is_prefixed

GAP = 30
MAX_INCIDENTS = 200
_CONTEXT_KINDS = {"frame", "op", "numbers", "device-open", "error-line", "chip", "device-table"}

# Across incidents, the one to act on first: a cause before the symptoms it triggers elsewhere
# (a kernel fault or a device that cannot open makes the other ranks' collectives time out).
PRIMARY_ORDER = ["absurd-request", "memory", "environment", "kernel-fault", "invalid-param", "comm",
                 "op-not-supported", "unknown", "benign"]
_RANK = {c: i for i, c in enumerate(PRIMARY_ORDER)}


def _rank(cat: Category) -> int:
    key = "memory" if cat in MEMORY_CATEGORIES else cat.value
    return _RANK.get(key, len(PRIMARY_ORDER))


def diagnose(paths_or_text: Any, estimate: Mapping[str, Any] | None = None, *,
             snapshot: Any = None, prior: Prior | bool = True) -> Diagnosis:
    """Diagnose one or more logs.

    `paths_or_text`: a path, `"-"` (stdin), the log text itself, bytes, or a list/tuple of these.
    `estimate`: an analyze result (keys `peak_allocated_bytes`, `peak_reserved_bytes`, `peak_phase`,
    `breakdown_at_peak`, `capacity_bytes`, `device`) to relate memory failures to the predicted peak.
    `snapshot`: reserved for a memory-snapshot reader (not implemented here).
    `prior`: the statistical fallback for logs the rules leave `unknown` (`_prior`): True = the committed
    model, False = rules only, or a `Prior` (cross-validation trains one per fold).

    Input that is empty, binary or has no log line at all is not an error here (the result says so in
    `input_problem` and `notes`); the CLI turns it into a one-line bad-input message.
    """
    if snapshot is not None:
        raise UserError("snapshot input is not supported yet")
    if estimate is not None and not isinstance(estimate, Mapping):
        raise UserError("the estimate must be a mapping (the JSON object written by `memplan analyze --format json`)")
    items = list(paths_or_text) if isinstance(paths_or_text, (list, tuple)) else [paths_or_text]
    if not items:
        raise UserError("no log given")
    opened = [open_source(i) for i in items]  # open all first, so a missing file fails before any work
    run = _Run(estimate, load_prior() if prior is True else (prior or None))
    try:
        for label, stream, _close in opened:
            run.read(label, stream)
    finally:
        for _label, stream, close in opened:
            if close:
                stream.close()
    return run.result(tuple(o[0] for o in opened))


class _Run:
    """Incidents and counters of one `diagnose` call, filled source by source."""

    def __init__(self, estimate: Mapping[str, Any] | None, prior: Prior | None = None) -> None:
        self.estimate = estimate
        self.prior = prior
        self.prior_text = PriorText()
        self.incidents: dict[tuple, Incident] = {}
        self.order: list[tuple] = []
        self.notes: list[str] = []
        self.errors: list[tuple[str, int, str]] = []
        self.completed: dict[str, int] = {}  # source -> last line where the tool reported that the run succeeded
        self.shutdown: dict[str, int] = {}  # source -> first line where the CUDA runtime reported it was unloading
        self.lines = self.nbytes = self.text_lines = self.binary_lines = self.overflow = 0

    def read(self, label: str, stream: Any) -> None:
        stats = ReadStats()
        for inc in _incidents(label, _counted(iter_binary(stream, stats), self), self.estimate, self.errors,
                              self.prior_text, self.completed, self.shutdown):
            key = _signature(inc)
            if key in self.incidents:
                self.incidents[key] = _bump(self.incidents[key])
            elif len(self.incidents) < MAX_INCIDENTS:
                self.incidents[key] = inc
                self.order.append(key)
            else:
                self.overflow += 1
        self.lines += stats.lines
        self.nbytes += stats.bytes
        self.binary_lines += stats.binary_lines
        self.notes.extend(_read_notes(label, stats))

    def result(self, sources: tuple[str, ...]) -> Diagnosis:
        notes = self.notes
        if self.overflow:
            notes.append(f"{self.overflow} further incidents were not kept (limit {MAX_INCIDENTS} distinct incidents).")
        found = _after_completion([self.incidents[k] for k in self.order], self.completed)
        # error lines after the runtime's unloading at exit (`driver shutting down`) are the teardown's abort and
        # stack trace, not an error of the run (dev batch 81; `_classify._shutdown_line`)
        self.errors = [e for e in self.errors
                       if self.completed.get(e[0], 0) <= e[1] < self.shutdown.get(e[0], float("inf"))]
        problem = self._input_problem()
        if self.errors and problem is None and all(i.category == Category.BENIGN for i in found):
            # a line that looks like an error forbids a `benign` primary (a warning matched, the error did not);
            # no code or known message decided anything, so the statistical fallback may guess from the wording
            found = [_fall_back(_unknown_incident(self.errors), self.prior, self.prior_text), *found]
        # Order: most actionable first (cause before symptom), then as they appeared.
        found.sort(key=lambda i: _rank(i.category))
        primary = found[0].category if found else Category.UNKNOWN
        if problem is not None:
            notes.append(problem)
        elif not found:
            primary = Category.BENIGN
            notes.append(f"No error, warning or known message found in {self.lines} lines.")
        return Diagnosis(incidents=tuple(found), primary_category=primary, sources=sources, lines_read=self.lines,
                         bytes_read=self.nbytes, notes=tuple(notes), input_problem=problem)

    def _input_problem(self) -> str | None:
        if self.lines == 0 or self.nbytes == 0:
            return "The input is empty: there is no log to diagnose."
        if self.binary_lines > self.lines / 2:
            return "The input looks like binary data, not a text log: give the training log (text)."
        if self.text_lines == 0:
            return "The input has no log lines (only blank lines): give the training log."
        return None


def _fall_back(unknown: Incident, prior: Prior | None, text: PriorText) -> Incident:
    """The rules found error lines but no code or known message: the prior's guess from their wording when its
    margin reaches the model's threshold (`_prior`), else the `unknown` incident as it is."""
    feats = text.features()
    guess = prior.decide(feats) if prior is not None else None
    return unknown if guess is None else guessed_incident(unknown, guess, prior.threshold, backend_flags(feats))


def _counted(lines: Iterable[str], run: _Run) -> Iterator[str]:
    for line in lines:
        if line.strip():
            run.text_lines += 1
        yield line


def _unknown_incident(errors: list[tuple[str, int, str]]) -> Incident:
    """Lines that look like errors but match no known message: say so, quote them, say what would help."""
    quoted = [f"{label}:{no}: {text.strip()[:200]}" for label, no, text in errors]
    summary = (f"No known message: memplan does not recognise these lines, so it cannot name the cause. "
               f"The lines that look like errors: " + " | ".join(f"\u201c{q}\u201d" for q in quoted) + ". "
               + UNKNOWN_NEEDS)
    advice = choose_advice(Category.UNKNOWN, numbers={}, flags=set(), codes=(), device=None, breakdown_top=None)
    label, no, _ = errors[0]
    return Incident(category=Category.UNKNOWN, summary=summary, advice=advice, confidence=0.2, source=label,
                    line=no, evidence=tuple(f"line {n}: {t.strip()[:300]}" for _, n, t in errors))


UNKNOWN_NEEDS = ("To name the cause memplan would need the message that explains the failure: the full "
                 "error text with its code (an E...... / ERR..... code or an ACL / CUDA / HCCL / NCCL result), "
                 "the Python traceback, and on Ascend the CANN plog lines (ASCEND_SLOG_PRINT_TO_STDOUT=1 prints "
                 "them), on CUDA a rerun with CUDA_LAUNCH_BLOCKING=1.")


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


def _after_completion(found: list[Incident], completed: dict[str, int]) -> list[Incident]:
    """A tool that reports at the end that its run succeeded (a row with flag `completed`, MindSpore Lite's
    `CONVERT RESULT SUCCESS:0`) was not stopped by the error lines it printed before: an incident before that line
    that names no cause (unknown) is dropped; one that names a cause stays (dev batch 27)."""
    return [i for i in found if not (i.category == Category.UNKNOWN and i.line < completed.get(i.source, 0))]


def _incidents(label: str, lines: Iterable[str], estimate: Mapping[str, Any] | None,
               errors: list[tuple[str, int, str]], prior_text: PriorText,
               completed: dict[str, int] | None = None,
               shutdown: dict[str, int] | None = None) -> Iterable[Incident]:
    context: deque[Evidence] = deque(maxlen=60)
    calls: deque[Evidence] = deque(maxlen=8)  # the last from_pretrained lines (kind `pretrained-call`)
    group: Group | None = None
    ignored_block = IgnoredTraceback()  # a traceback CPython printed and ignored is not an error of the run
    for ev in scan(lines):
        if ev.kind == "pretrained-call":
            # the scanner's from_pretrained context (dev batch 104), read on lines no rule scans: it only marks a later
            # constructor TypeError whose keyword came from the saved configuration (_parse.from_saved_config); it is
            # no evidence of an incident, so the grouping and everything weighed stay as they were
            calls.append(ev)
            continue
        if calls and "init_kwarg" in ev.flags:
            ev = from_saved_config(ev, calls)
        prior_text.add(ev)
        if completed is not None and "completed" in ev.flags:
            completed[label] = ev.line
        if shutdown is not None and is_shutdown(ev):
            shutdown.setdefault(label, ev.line)
        ignored = ignored_block.see(ev)
        if ev.kind == "error-line" and len(errors) < 3 and not ignored:
            errors.append((label, ev.line, ev.text))
        is_context = ev.kind in _CONTEXT_KINDS or (ev.kind == "codes" and not codes_argue(ev.codes))
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


def _finish(group: Group, estimate: Mapping[str, Any] | None) -> Iterable[Incident]:
    evs = group.evidence
    if not any((e.category and e.strength) or (e.kind == "codes" and codes_argue(e.codes)) for e in evs):
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
        if "weak" not in e.flags:  # a weak phrase's flags count only if it decides (classify_text)
            flags |= set(e.flags)
    numbers: dict[str, Any] = {}
    device = None
    if oom is not None:
        raw = dict(oom.numbers)
        device = raw.pop("device", None)
        raw.pop("guard_1eb", None)
        procs = raw.pop("processes", None)
        numbers = {k: v for k, v in raw.items()}
        if procs:
            numbers["processes"] = [{"pid": p, "bytes": b} for p, b in procs]
    verdict = classify_oom(dict(oom.numbers), set(oom.flags)) if oom is not None else None
    limit = any("limit_not_shortage" in e.flags for e in evs)
    if verdict is not None and (not limit or verdict.category is Category.ABSURD_REQUEST):
        # a limit sentence (XPU's 4 GB block) does not explain one request larger than the whole device
        # (dev batch 29: 40 GiB asked of a 15 GiB card)
        numbers.update(verdict.facts)
        category, confidence, summary = verdict.category, verdict.confidence, verdict.summary
        flags |= verdict.flags
        deciding = [oom]
    else:
        # an OOM message whose own words name a limit, not a shortage (XPU's 4 GB block limit, dev batch 24): its
        # numbers are kept, the sentence decides
        category, confidence, lead, deciding, tflags = classify_text([e for e in evs if e is not oom])
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
    if is_prefixed(code):   # a backend's number: its catalog name
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
    if category == Category.UNKNOWN:
        parts.append(UNKNOWN_NEEDS)
    return " ".join(parts)


__all__ = ["diagnose", "MiB"]
