"""Byte sizes: parsing user input (`24GiB`, `400MiB`, `64GB`, `1e9`) and rendering.

Bytes are `int` everywhere in memplan; this is the one place where units are converted.
"""
from __future__ import annotations

import re

from memplan.errors import UserError

_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
    "t": 1000**4, "tb": 1000**4, "p": 1000**5, "pb": 1000**5,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4, "pib": 1024**5,
}
_BINARY = (("PiB", 1024**5), ("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))
_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str | int | float) -> int:
    """Parse a byte size. Decimal units (GB) are powers of 1000, binary units (GiB) powers of 1024."""
    if isinstance(text, bool):
        raise UserError(f"not a size: {text!r}")
    if isinstance(text, (int, float)):
        if text < 0:
            raise UserError(f"a size cannot be negative: {text}")
        return int(text)
    m = _SIZE_RE.match(str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise UserError(
            f"cannot read size {text!r}: use a number of bytes or a unit, e.g. 24GiB, 400MiB, 64GB"
        )
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    return int(round(value))


def parse_capacity(text: str | int | float) -> int:
    """A device memory size (`--capacity`): like `parse_size`, and it must be positive."""
    n = parse_size(text)
    if n <= 0:
        raise UserError(f"capacity must be positive, got {text!r} (e.g. --capacity 24GiB)")
    return n


def fmt_bytes(n: int | None, signed: bool = False) -> str:
    """Render bytes with a binary unit: 1536 -> '1.50 KiB'."""
    if n is None:
        return "-"
    sign = "-" if n < 0 else ("+" if signed and n > 0 else "")
    n = abs(int(n))
    for unit, scale in _BINARY:
        if n >= scale:
            return f"{sign}{n / scale:.2f} {unit}"
    return f"{sign}{n} B"


def fmt_pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.2f} %"
