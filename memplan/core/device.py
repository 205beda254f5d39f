"""Device targets: which device a job will run on, its memory, and its caching allocator's replay."""
from __future__ import annotations

from dataclasses import dataclass

from memplan.alloc import config_from_env, lookup, parse_alloc_conf, simulate
from memplan.units import parse_capacity


@dataclass(frozen=True)
class DeviceTarget:
    """Where the job will run: the kernels/optimizer defaults to imitate and the memory to compare with."""

    name: str | None            # catalog name; None = plain CPU accounting
    family: str                 # cpu | cuda | npu
    capacity_bytes: int | None  # what the framework reports as total (override with --capacity)
    outside_allocator_bytes: int = 0
    alloc_conf: str | None = None
    spec: object = None         # the catalog entry, when there is one
    outside_allocator_known: bool = True  # False: the catalog has no figure (counted as 0, and said so)


CPU = DeviceTarget(name=None, family="cpu", capacity_bytes=None)


def resolve_device(device: str | DeviceTarget | None = None, capacity: int | str | None = None,
                   alloc_conf: str | None = None) -> DeviceTarget:
    """A catalog name (`A100-80GB`, `910B3`), `cuda` / `npu` (read the present device), `cpu`, or None.
    A `DeviceTarget` is returned as it is."""
    if isinstance(device, DeviceTarget):
        return device
    cap = parse_capacity(capacity) if capacity is not None else None
    if device is None or device.lower() == "cpu":
        return DeviceTarget(name=device.lower() if device else None, family="cpu", capacity_bytes=cap,
                            alloc_conf=alloc_conf)
    spec = lookup(device)
    # check the allocator configuration now, so a malformed one is a one-line input error
    if alloc_conf is not None:
        parse_alloc_conf(alloc_conf, spec.family)
    else:
        config_from_env(spec.family)
    return DeviceTarget(
        name=spec.name, family=spec.family,
        capacity_bytes=cap if cap is not None else spec.capacity_bytes,
        outside_allocator_bytes=spec.outside_allocator_bytes or 0, alloc_conf=alloc_conf, spec=spec,
        outside_allocator_known=spec.outside_allocator_bytes is not None,
    )


def simulate_allocator(trace, dev: DeviceTarget):
    """Replay a trace through the target device's caching allocator (None for plain CPU accounting)."""
    if dev.family == "cpu":
        return None
    conf = parse_alloc_conf(dev.alloc_conf, dev.family) if dev.alloc_conf is not None else config_from_env(dev.family)
    return simulate(trace, dev.spec if dev.spec is not None else dev.family, conf, capacity=dev.capacity_bytes,
                    outside_allocator_bytes=dev.outside_allocator_bytes)
