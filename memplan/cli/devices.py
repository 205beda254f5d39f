"""`memplan devices`: list the device catalog (nominal memory, reported capacity, memory outside the
allocator, allocator family). Every number's source is in `--format json`."""
from __future__ import annotations

import click

from memplan.cli._output import debug_option, emit, format_option, run_command


def _table(devices) -> str:
    from tabulate import tabulate

    from memplan.units import fmt_bytes

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


@click.command()
@format_option
@debug_option
def command(fmt: str, debug: bool) -> None:
    """List the devices memplan knows (names for --device; 'cuda' / 'npu' read the present device)."""
    from memplan.alloc.catalog import load_catalog
    from memplan.report.envelope import envelope

    devices = run_command(debug, load_catalog)
    payload = envelope("devices", {"devices": [d.to_dict() for d in devices]})
    emit(fmt, payload, lambda: _table(devices))
