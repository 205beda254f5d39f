"""The device catalog: accelerators memplan knows, from `data/devices.json` (every number with its source).

`lookup("A100-80GB")`, `lookup("a100")`, `lookup("910B3")`, `lookup("NVIDIA A100-SXM4-80GB")` find a
catalog entry (case, spaces, dashes and vendor prefixes do not matter). `lookup("cuda")` / `lookup("npu")`
read the device present in this process at run time instead (torch_npu is imported only then).

Known limitations: `reported_capacity_bytes` comes from OOM messages, which round to 0.01 GiB, so it can be
off by up to 5 MiB; boards of one model can differ by ~0.1 GiB (driver, ECC). Pass a capacity to be exact.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from memplan.compat import import_torch_npu
from memplan.errors import UserError

_PREFIXES = ("nvidia", "geforce", "tesla", "huawei", "ascend")


@dataclass(frozen=True)
class Device:
    """One accelerator model (or the device present at run time)."""

    name: str
    family: str
    """Allocator family: 'cuda' (CUDACachingAllocator) or 'npu' (torch_npu's NPUCachingAllocator)."""
    vendor: str
    nominal_bytes: int
    """Memory on the board as the vendor sells it."""
    reported_capacity_bytes: int | None = None
    """Total the framework reports (cudaMemGetInfo / aclrtGetMemInfo), as in its OOM message."""
    outside_allocator_bytes: int | None = None
    """Memory the process holds outside the caching allocator (context, libraries), where known."""
    aliases: tuple[str, ...] = ()
    sources: dict = field(default_factory=dict, hash=False, compare=False)
    notes: str = ""
    live: bool = False
    """True when read from the present device at run time."""

    @property
    def capacity_bytes(self) -> int:
        """What the allocator can use at most: the reported capacity, else the nominal memory."""
        return self.reported_capacity_bytes if self.reported_capacity_bytes is not None else self.nominal_bytes

    def to_dict(self) -> dict:
        return {
            "name": self.name, "family": self.family, "vendor": self.vendor,
            "nominal_bytes": self.nominal_bytes, "reported_capacity_bytes": self.reported_capacity_bytes,
            "capacity_bytes": self.capacity_bytes, "outside_allocator_bytes": self.outside_allocator_bytes,
            "aliases": list(self.aliases), "sources": self.sources, "notes": self.notes, "live": self.live,
        }


def _norm(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def _keys(name: str) -> set[str]:
    k = _norm(name)
    out = {k}
    for p in _PREFIXES:
        if k.startswith(p) and len(k) > len(p):
            out.add(k[len(p):])
    return out


@lru_cache(maxsize=1)
def load_catalog() -> tuple[Device, ...]:
    """All catalog devices, in file order."""
    raw = json.loads(resources.files("memplan.alloc").joinpath("data/devices.json").read_text("utf-8"))
    devices = []
    for d in raw["devices"]:
        devices.append(Device(
            name=d["name"], family=d["family"], vendor=d["vendor"], nominal_bytes=int(d["nominal_bytes"]),
            reported_capacity_bytes=d.get("reported_capacity_bytes"),
            outside_allocator_bytes=d.get("outside_allocator_bytes"),
            aliases=tuple(d.get("aliases", ())), sources=d.get("sources", {}), notes=d.get("notes", ""),
        ))
    return tuple(devices)


@lru_cache(maxsize=1)
def _index() -> dict[str, Device]:
    idx: dict[str, Device] = {}
    for dev in load_catalog():
        for n in (dev.name, *dev.aliases):
            for k in _keys(n):
                idx.setdefault(k, dev)
    return idx


def lookup(name: str) -> Device:
    """A catalog device by name or alias; 'cuda' / 'npu' read the present device. Unknown -> UserError."""
    if not isinstance(name, str) or not name.strip():
        raise UserError("a device name is required (see `memplan devices`)")
    if _norm(name) in ("cuda", "npu"):
        return read_present_device(_norm(name))
    idx = _index()
    for k in sorted(_keys(name), key=len, reverse=True):
        if k in idx:
            return idx[k]
    close = difflib.get_close_matches(_norm(name), list(idx), n=8, cutoff=0.5)
    names: list[str] = []
    for k in close:
        if idx[k].name not in names:
            names.append(idx[k].name)
    hint = f"; close matches: {', '.join(names[:4])}" if names else ""
    raise UserError(f"unknown device {name!r}{hint} (see `memplan devices`, or pass a capacity)")


def read_present_device(family: str) -> Device:
    """Read the device of this process (torch.cuda / torch.npu mem_get_info) as a `Device`."""
    import torch

    if family == "cuda":
        if not torch.cuda.is_available():
            raise UserError("--device cuda: no CUDA device is visible to this torch build")
        mod = torch.cuda
    elif family == "npu":
        import_torch_npu("--device npu")
        if not torch.npu.is_available():
            raise UserError("--device npu: no Ascend NPU is visible")
        mod = torch.npu
    else:
        raise UserError(f"unknown device family {family!r}")
    free, total = mod.mem_get_info()
    reserved = mod.memory_reserved()
    name = mod.get_device_name()
    how = f"measured at run time: torch.{family}.mem_get_info() total"
    return Device(
        name=name, family=family, vendor="nvidia" if family == "cuda" else "huawei",
        nominal_bytes=int(total), reported_capacity_bytes=int(total),
        outside_allocator_bytes=max(int(total - free - reserved), 0),
        sources={"family": ["the present device"], "nominal_bytes": [how], "reported_capacity_bytes": [how],
                 "outside_allocator_bytes": [f"measured at run time: total - free - torch.{family}.memory_reserved()"]},
        notes="read from the device in this process; outside_allocator_bytes includes other processes", live=True,
    )
