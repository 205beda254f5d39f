"""The JSON envelope every command's `--format json` output uses."""
from __future__ import annotations

from memplan import __version__

SCHEMA_VERSION = 1


def envelope(command: str, payload: dict) -> dict:
    """Wrap a command's payload: `{"schema_version", "memplan_version", "command", **payload}`."""
    return {"schema_version": SCHEMA_VERSION, "memplan_version": __version__, "command": command, **payload}
