"""Target devices: the device catalog and caching-allocator simulation (CUDA and torch_npu).

- `lookup(name)` / `load_catalog()`: devices with nominal memory, the capacity the framework reports,
  memory held outside the allocator, and the allocator family; every number has a source.
- `parse_alloc_conf(text, family)` / `config_from_env(family)`: PYTORCH_CUDA_ALLOC_CONF /
  PYTORCH_NPU_ALLOC_CONF as the real parsers read them.
- `simulate(trace, device, config, capacity)`: reserved bytes, fragmentation, segments, and the OOM point.
"""
from memplan.alloc.catalog import Device, load_catalog, lookup, read_present_device
from memplan.alloc.config import AllocConfig, config_from_env, default_config, parse_alloc_conf
from memplan.alloc.simulator import AllocSim, OomPoint, simulate

__all__ = [
    "AllocConfig", "AllocSim", "Device", "OomPoint", "config_from_env", "default_config", "load_catalog",
    "lookup", "parse_alloc_conf", "read_present_device", "simulate",
]
