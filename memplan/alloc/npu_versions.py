"""What each torch_npu line has, from its sources: `data/torch_npu_versions.json`.

One entry per torch_npu release line (one per torch minor: 2.1, 2.2, 2.3, ..., 2.12; master builds
2.13, 2.14 and 2.15 and is their one entry), read from the Ascend/pytorch release branch of that line at
a fixed commit: the `PYTORCH_NPU_ALLOC_CONF` keys its
parser accepts, and where its memory and AMP APIs are defined (file:line). docs/torch_npu_versions.md
is the same table for people.

Which line applies: the installed torch_npu's (its version starts with the torch version it was built
for, e.g. 2.1.0.post12); without torch_npu, the installed torch's, since that is the torch_npu a user
of this torch would install. A version between two lines takes the older one; one past the newest
takes the newest.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources

from memplan import compat


@dataclass(frozen=True)
class Line:
    torch: str                       # "2.1"
    branch: str                      # Ascend/pytorch branch read
    commit: str
    alloc_conf_keys: tuple[str, ...]
    sources: dict                    # fact -> "file:line"


@functools.lru_cache(maxsize=None)
def lines() -> tuple[Line, ...]:
    raw = json.loads(resources.files("memplan.alloc").joinpath("data/torch_npu_versions.json").read_text("utf-8"))
    out = []
    for e in raw["lines"]:
        out.append(Line(e["torch"], e["branch"], e["commit"], tuple(e["alloc_conf_keys"]),
                        {k: v for k, v in e.items() if k not in ("torch", "branch", "commit")}))
    return tuple(sorted(out, key=lambda ln: compat.version_tuple(ln.torch)))


def installed_line_version() -> str | None:
    """torch major.minor of the installed torch_npu, else of the installed torch."""
    for dist in ("torch_npu", "torch-npu", "torch"):
        v = compat.installed(dist)
        if v:
            return ".".join(map(str, compat.version_tuple(v)[:2]))
    return None


def line(version: str | None = None) -> Line:
    """The line for a torch(_npu) version ("2.4", "2.1.0.post12"); None: the installed one."""
    version = version or installed_line_version()
    all_lines = lines()
    if not version:
        return all_lines[-1]
    want = compat.version_tuple(version)[:2]
    older = [ln for ln in all_lines if compat.version_tuple(ln.torch) <= want]
    return older[-1] if older else all_lines[0]


def since(key: str, current: Line) -> str:
    """' (not in torch_npu 2.5; torch_npu 2.6 has it)' for a key a newer line has; '' otherwise."""
    newer = [ln for ln in lines() if key in ln.alloc_conf_keys]
    if not newer:
        return ""
    return f" (not in torch_npu {current.torch}, whose PYTORCH_NPU_ALLOC_CONF parser is read here; " \
           f"torch_npu {newer[0].torch} has it)"
