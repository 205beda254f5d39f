"""One rank of a `validate_distributed` job: `python -m memplan.distributed._worker SPEC.json RANK`.

Joins the process group (gloo on cpu, nccl on cuda, hccl on npu) from the torchrun-style environment
(MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK), wraps the workload in the strategy exactly
as the fake-process-group trace does (`_wrap.wrap_workload`), runs the step driver, measures this
rank's own peak, and writes `{"rank", "peak_allocated_bytes", ...}` to `SPEC.rank<R>.json`.

CPU: PyTorch's CPU-allocator ledger under the profiler (`memplan.measure`). CUDA / NPU:
the device allocator's `max_memory_allocated` / `max_memory_reserved` over the last optimizer step.
"""
from __future__ import annotations

import json
import os
import sys
import traceback

from memplan.compat import import_torch_npu
from memplan.core import load_workload
from memplan.distributed._measure import measure_cpu_rank
from memplan.distributed._wrap import wrap_workload
from memplan.step import Target, run
from memplan.workload import TrainConfig


class _DevicePeaks:
    """Step-driver hooks that reset the device's peak counters when the last step begins."""

    def __init__(self, mod, steps: int):
        self.mod, self.steps, self.result = mod, steps, None

    def phase(self, phase, step, micro_step):
        if step == self.steps and micro_step <= 1 and phase == "inputs":
            self.mod.synchronize()
            self.mod.reset_peak_memory_stats()
        elif phase == "end":
            self.mod.synchronize()
            self.result = (self.mod.max_memory_allocated(), self.mod.max_memory_reserved())

    def model_built(self, model): pass
    def batch_made(self, batch): pass
    def after_backward(self, model): pass
    def after_optimizer(self, model, optimizer): pass


def run_rank(spec: dict, rank: int) -> dict:
    import torch
    import torch.distributed as dist


    device = spec["device"]
    world = int(spec["world_size"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    backend = {"cpu": "gloo", "cuda": "nccl", "npu": "hccl"}[device]
    run_device, mod = "cpu", None
    if device == "npu":
        import_torch_npu("npu worker")

        torch.npu.set_device(local_rank)
        run_device, mod = f"npu:{local_rank}", torch.npu
    elif device == "cuda":
        torch.cuda.set_device(local_rank)
        run_device, mod = f"cuda:{local_rank}", torch.cuda
    dist.init_process_group(backend, rank=rank, world_size=world)
    try:
        mesh = None
        if spec["sharding"] in ("zero2", "zero3", "fsdp"):
            from torch.distributed.device_mesh import init_device_mesh

            mesh = init_device_mesh(device, (world,))
        cfg = TrainConfig(**{**spec["config"], "checkpoint": tuple(spec["config"]["checkpoint"])})
        workload = load_workload(spec.get("model"), spec.get("hf_config"), spec.get("task"))
        info: dict = {}
        wl, run_cfg = wrap_workload(workload, cfg, spec["sharding"], run_device=run_device, family=device,
                                    mesh=mesh, bucket_cap_mb=spec.get("bucket_cap_mb"),
                                    units=tuple(spec.get("units") or ()), world_size=world, info=info)
        target = Target(family=device, run_device=run_device)
        if device == "cpu":
            m = measure_cpu_rank(wl, run_cfg, target)
            out = {"peak_allocated_bytes": m.peak_allocated_bytes, "peak_reserved_bytes": None,
                   "peak_phase": m.peak_phase, "phase_peaks": m.phase_peaks,
                   "running_sum_peak_bytes": m.running_sum_peak_bytes, "unmatched_bytes": m.unmatched_bytes,
                   "raw_peak_allocated_bytes": m.raw_peak_allocated_bytes,
                   "recovered_free_bytes": m.recovered_free_bytes, "recovered_frees": m.recovered_frees,
                   "every_thread": m.every_thread}
        else:
            hooks = _DevicePeaks(mod, run_cfg.steps)
            run(wl, run_cfg, hooks, target)
            alloc, reserved = hooks.result
            out = {"peak_allocated_bytes": alloc, "peak_reserved_bytes": reserved, "peak_phase": None,
                   "phase_peaks": {}}
        dist.barrier()
        return {"rank": rank, "ok": True, "backend": backend, **out, **info}
    finally:
        dist.destroy_process_group()


def main(argv: list[str]) -> int:
    spec_path, rank = argv[0], int(argv[1])
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    try:
        res = run_rank(spec, rank)
    except BaseException as exc:  # reported to the launcher, which decides
        res = {"rank": rank, "ok": False, "error": f"{type(exc).__name__}: {exc}",
               "traceback": traceback.format_exc()[-4000:]}
    with open(f"{spec_path}.rank{rank}.json", "w", encoding="utf-8") as f:
        json.dump(res, f)
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
