"""`memplan devices` as a table."""
from __future__ import annotations

from tabulate import tabulate

from memplan.units import fmt_bytes


def render_devices(devices) -> str:
    """The device catalog as a table (`memplan devices`)."""
    rows = [
        (
            d.name, d.family, fmt_bytes(d.nominal_bytes),
            fmt_bytes(d.reported_capacity_bytes) if d.reported_capacity_bytes is not None else "-",
            fmt_bytes(d.outside_allocator_bytes) if d.outside_allocator_bytes is not None else "-",
            ", ".join(d.aliases[:4]) + (" ..." if len(d.aliases) > 4 else ""),
        )
        for d in devices
    ]
    headers = ("device", "allocator", "nominal", "reported total", "outside allocator", "aliases")
    note = ("reported total: the capacity the framework prints in its OOM message ('-': unknown, the nominal "
            "memory is used); sources: memplan devices --format json")
    return tabulate(rows, headers=headers) + "\n\n" + note
