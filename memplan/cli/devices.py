"""`memplan devices`: list the device catalog (nominal memory, reported capacity, memory outside the
allocator, allocator family). Every number's source is in `--format json`."""
from __future__ import annotations

import click

from memplan.cli._output import debug_option, emit, format_option, run_command


@click.command()
@format_option
@debug_option
def command(fmt: str, debug: bool) -> None:
    """List the devices memplan knows (names for --device; 'cuda' / 'npu' read the present device)."""
    from memplan.alloc.catalog import load_catalog
    from memplan.report.devices_text import render_devices

    devices = run_command(debug, load_catalog)
    emit(fmt, "devices", {"devices": [d.to_dict() for d in devices]}, lambda: render_devices(devices))
