"""Streaming, encoding-tolerant line reader for logs.

Reads bytes in 1 MiB chunks, so a log of hundreds of MB is never held whole; a line longer than
`MAX_LINE` bytes is cut into pieces. Each line is decoded on its own: UTF-8 first, then GB18030 (a
superset of GBK, for Chinese CANN logs), then UTF-8 with replacement characters. A UTF-16 byte-order
mark switches the whole stream to UTF-16. Lines are then cleaned of what copy-pasting adds: ANSI
colour codes, e-mail/Markdown quote markers (`> `), launcher prefixes (`[rank3]:`, `(Worker pid=12)`,
vLLM's `ERROR 12-23 12:56:15 [core.py:868]`).
"""
from __future__ import annotations

import codecs
import io
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

from memplan.errors import UserError

CHUNK = 1 << 20
MAX_LINE = 64 * 1024

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\^\[\[[0-9;]*[A-Za-z]|\[\[[0-9;]*m")
_QUOTE = re.compile(r"^(?:\s{0,3}>)+\s?")
# Prefixes that launchers put in front of every line; removed repeatedly from the left.
_PREFIXES = re.compile(
    r"^(?:"
    r"\s*\[rank\s*\d+\]:\s?"                                   # torchrun: [rank0]:
    r"|\s*\(\w[\w\-]*(?:\s+\w+=\w+)*\s+pid=\d+\)\s?"            # ray / vLLM: (Worker_TP3 pid=47155)
    r"|\s*(?:ERROR|WARNING|INFO|DEBUG)\s+\d{2}-\d{2}\s+\d{2}:\d{2}:\d{2}(?:\.\d+)?\s+\[[^\]]*\]\s?"  # vLLM
    r"|\s*\[\d+\]\s(?=\[rank)"                                 # [80746] [rank0]:
    r"|\s*\d+\.\d+\s(?=\s|Traceback|File|\w+Error)"             # docker build: '90.61 '
    r"|\s*[\w.\-]+\s+\|\s(?=\d{4}-\d{2}-\d{2})"                 # docker compose: 'svc   | 2025-...'
    r")"
)


def clean_line(line: str) -> str:
    line = line.rstrip("\r\n")
    if "\x1b" in line or "[[" in line:
        line = _ANSI.sub("", line)
    line = _QUOTE.sub("", line)
    for _ in range(4):
        m = _PREFIXES.match(line)
        if not m or m.end() == 0:
            break
        line = line[m.end():]
    return line


@dataclass
class ReadStats:
    """What the reader saw, for notes in the report."""

    lines: int = 0
    bytes: int = 0
    binary_lines: int = 0
    cut_lines: int = 0
    encodings: Counter = field(default_factory=Counter)


def _decode(raw: bytes, stats: ReadStats) -> str:
    try:
        text = raw.decode("utf-8")
        stats.encodings["utf-8"] += 1
        return text
    except UnicodeDecodeError:
        pass
    try:
        text = raw.decode("gb18030")
        stats.encodings["gbk/gb18030"] += 1
        return text
    except UnicodeDecodeError:
        stats.encodings["utf-8 (with replacements)"] += 1
        return raw.decode("utf-8", errors="replace")


def _looks_binary(raw: bytes) -> bool:
    if b"\x00" in raw:
        return True
    if not raw:
        return False
    sample = raw[:512]
    ctrl = sum(1 for b in sample if b < 9 or 13 < b < 32 or b == 127)
    return ctrl > len(sample) * 0.1


def iter_binary(stream: BinaryIO, stats: ReadStats) -> Iterator[str]:
    """Yield decoded, cleaned lines from a binary stream without holding it whole."""
    first = stream.read(CHUNK)
    if first.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        yield from _iter_utf16(first, stream, stats)
        return
    if first.startswith(codecs.BOM_UTF8):
        first = first[len(codecs.BOM_UTF8):]
    buf = first
    chunk = first
    while True:
        stats.bytes += len(chunk)
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            yield from _emit(buf[start:nl], stats)
            start = nl + 1
        buf = buf[start:]
        while len(buf) > MAX_LINE:
            stats.cut_lines += 1
            yield from _emit(buf[:MAX_LINE], stats)
            buf = buf[MAX_LINE:]
        chunk = stream.read(CHUNK)
        if not chunk:
            break
        buf += chunk
    if buf:
        yield from _emit(buf, stats)


def _emit(raw: bytes, stats: ReadStats) -> Iterator[str]:
    stats.lines += 1
    if _looks_binary(raw):
        stats.binary_lines += 1
        raw = raw.replace(b"\x00", b"")
    # Old Mac / Windows line ends inside a line: split on lone CR too.
    parts = raw.split(b"\r") if b"\r" in raw.rstrip(b"\r") else [raw]
    for part in parts:
        yield clean_line(_decode(part, stats))


def _iter_utf16(first: bytes, stream: BinaryIO, stats: ReadStats) -> Iterator[str]:
    stats.encodings["utf-16"] += 1
    dec = codecs.getincrementaldecoder("utf-16")(errors="replace")
    pending = ""
    chunk = first
    while chunk:
        stats.bytes += len(chunk)
        pending += dec.decode(chunk)
        *lines, pending = pending.split("\n")
        for line in lines:
            stats.lines += 1
            yield clean_line(line[:MAX_LINE])
        if len(pending) > MAX_LINE:
            stats.cut_lines += 1
            stats.lines += 1
            yield clean_line(pending[:MAX_LINE])
            pending = pending[MAX_LINE:]
        chunk = stream.read(CHUNK)
    pending += dec.decode(b"", final=True)
    if pending:
        stats.lines += 1
        yield clean_line(pending)


_PATHLIKE = re.compile(r"^[^\s]{1,4096}$")


def open_source(item: object) -> tuple[str, BinaryIO, bool]:
    """Return (label, binary stream, should_close) for a path, '-', bytes or text."""
    if isinstance(item, (bytes, bytearray)):
        return "<bytes>", io.BytesIO(bytes(item)), True
    if isinstance(item, os.PathLike):
        return _open_path(Path(item))
    if not isinstance(item, str):
        raise UserError(f"cannot read a log from {type(item).__name__}: give a path, '-', or the text itself")
    if item == "-":
        return "<stdin>", sys.stdin.buffer, False
    if "\n" in item or not _PATHLIKE.match(item):
        return "<text>", io.BytesIO(item.encode("utf-8")), True
    path = Path(item)
    if path.exists():
        return _open_path(path)
    if os.sep in item or "." in item.rsplit(os.sep, 1)[-1]:
        raise UserError(f"no such log file: {item}")
    return "<text>", io.BytesIO(item.encode("utf-8")), True


def _open_path(path: Path) -> tuple[str, BinaryIO, bool]:
    if path.is_dir():
        raise UserError(f"{path} is a directory: give the log file(s) inside it")
    try:
        return str(path), open(path, "rb"), True
    except FileNotFoundError:
        raise UserError(f"no such log file: {path}") from None
    except PermissionError:
        raise UserError(f"cannot read {path}: permission denied") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
