"""`choose_sharding`: the least sharding (ddp < zero1 < zero2 < zero3) and the largest micro-batch that
fit a per-device capacity on `world_size` devices, keeping the global batch with gradient accumulation;
then the `torchrun` command and the code lines that apply it.

The sweep uses the model method (one single-device trace per micro-batch, arithmetic per strategy);
the chosen plan is re-traced with torch's own wrapper on the fake process group before it is offered
(`retrace=True`), and passed over if that trace does not fit.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from memplan.core import load_workload, resolve_device
from memplan.distributed import strategies as S
from memplan.distributed.estimate import estimate_per_rank, model_params
from memplan.errors import UserError
from memplan.step import Target
from memplan.distributed.mixed_precision import autocast_over_fsdp, precision_changes
from memplan.units import fmt_bytes
from memplan.workload import FSDP_SHARDINGS, OPTIMIZER_CLASSES, TrainConfig, check_precision_sharding

ORDER = ("ddp", "zero1", "zero2", "zero3")


@dataclass(frozen=True)
class ShardingPlan:
    workload: str
    fits: bool
    sharding: str | None
    world_size: int
    batch_size: int                  # micro-batch per rank
    grad_accum_steps: int
    global_batch: int
    capacity_bytes: int
    predicted: dict | None           # RankEstimate dict of the plan (re-traced when retrace=True)
    candidates: list                 # rows: sharding, batch_size, per-rank device total, fits, method
    arithmetic: list                 # rows per sharding: model states per rank, traced split vs ZeRO paper
    torchrun: str
    code: list
    env: dict
    changes: list
    notes: list = field(default_factory=list)
    precision_changes: list = field(default_factory=list)   # Change dicts: FSDP mixed precision vs autocast

    def to_dict(self) -> dict:
        return asdict(self)


def _halvings(b: int) -> list[int]:
    out = []
    while b >= 1:
        out.append(b)
        b //= 2
    return out


def choose_sharding(workload, cfg: TrainConfig | None = None, world_size: int = 8, capacity=None, *,
                    device=None, hf_config: str | None = None, global_batch: int | None = None,
                    shardings: tuple[str, ...] = ORDER, retrace: bool = True, master_weights: bool = False,
                    nproc_per_node: int | None = None, script: str = "train.py") -> ShardingPlan:
    """The least sharding and largest micro-batch whose per-rank peak (plus communication buffers and
    device overhead) fits `capacity` (bytes or a size string; default: the device's catalog capacity)."""
    from memplan.trace.tracer import trace_workload   # imports torch

    cfg = (cfg or TrainConfig()).validate()
    wl = load_workload(workload, hf_config)
    dev = resolve_device(device, capacity) if not hasattr(device, "family") else device
    if dev.capacity_bytes is None:
        raise UserError("choose_sharding needs a capacity: give --capacity or a catalog --device")
    cap = dev.capacity_bytes
    if cfg.precision == "bf16-mp":
        shardings = tuple(s for s in shardings if s in FSDP_SHARDINGS)
        if not shardings:
            check_precision_sharding(cfg.precision, None)
    gb = global_batch or cfg.batch_size * cfg.grad_accum * world_size
    candidates, notes = [], []
    traces: dict[int, object] = {}
    chosen = None
    for sh in shardings:
        for mb in _halvings(cfg.batch_size):
            k = max(1, math.ceil(gb / (mb * world_size)))
            c = cfg.with_(batch_size=mb, grad_accum=1)   # accumulation does not change the per-step peak shape
            if mb not in traces:
                traces[mb] = trace_workload(wl, S.single_device_config(c), Target(family=dev.family))
            est = estimate_per_rank(wl, c, world_size, sh, dev, method="model", trace=traces[mb],
                                    master_weights=master_weights)
            fits = est.device_total_bytes <= cap
            candidates.append({"sharding": sh, "batch_size": mb, "grad_accum_steps": k,
                               "device_total_bytes": est.device_total_bytes,
                               "peak_allocated_bytes": est.peak_allocated_bytes, "fits": fits, "method": "model"})
            if not fits:
                continue
            if retrace and not master_weights:
                re = estimate_per_rank(wl, c, world_size, sh, dev, method="trace")
                ok = re.device_total_bytes <= cap
                candidates.append({"sharding": sh, "batch_size": mb, "grad_accum_steps": k,
                                   "device_total_bytes": re.device_total_bytes,
                                   "peak_allocated_bytes": re.peak_allocated_bytes, "fits": ok, "method": "trace"})
                if not ok:
                    notes.append(f"{sh} at micro-batch {mb}: the model said it fits, the fake-process-group "
                                 "trace says it does not; passed over")
                    continue
                est = re
            chosen = (sh, mb, k, est)
            break
        if chosen:
            break
    arithmetic = _arithmetic(wl, cfg, world_size, traces, chosen, master_weights, dev)
    if chosen is None:
        last = shardings[-1]
        alts = _alternatives(wl, cfg.with_(batch_size=1, grad_accum=1), world_size, last, dev, retrace,
                             master_weights) if last in FSDP_SHARDINGS else []
        advice = [f"{last} at micro-batch 1 with {a['title']}: predicted {fmt_bytes(a['predicted_total_bytes'])} "
                  "per device (re-traced)" for a in alts if a["fits"]]
        return ShardingPlan(wl.name, False, None, world_size, 0, 0, gb, cap, None, candidates, arithmetic,
                            "", [], {}, advice + ["no sharding fits at micro-batch 1: add devices, activation "
                                                  "checkpointing (--checkpoint) or lower precision"], notes, alts)
    sh, mb, k, est = chosen
    alts = _alternatives(wl, cfg.with_(batch_size=mb, grad_accum=1), world_size, sh, dev, retrace, master_weights,
                         est.device_total_bytes if est.method == "trace" else None)
    per_node = nproc_per_node or min(world_size, 8)
    torchrun, code, env = _apply_lines(sh, world_size, per_node, dev.family, cfg, est, script)
    changes = [f"shard with {sh} over {world_size} ranks"]
    if mb != cfg.batch_size:
        changes.append(f"micro-batch {cfg.batch_size} -> {mb} with {k} accumulation steps (global batch {mb * k * world_size})")
    return ShardingPlan(wl.name, True, sh, world_size, mb, k, mb * k * world_size, cap, est.to_dict(), candidates,
                        arithmetic, torchrun, code, env, changes, notes, alts)


def _alternatives(wl, c: TrainConfig, n: int, sh: str, dev, retrace: bool, master_weights: bool,
                  base_total: int | None = None) -> list[dict]:
    """autocast over FSDP: FSDP's mixed precision and an uncached autocast, each traced with torch's
    wrapper on the fake process group, as `Change` dicts (none without re-tracing)."""
    if not retrace or master_weights or not autocast_over_fsdp(c, sh):
        return []
    if base_total is None:
        base_total = estimate_per_rank(wl, c, n, sh, dev, method="trace").device_total_bytes
    changes = precision_changes(lambda alt: estimate_per_rank(wl, alt, n, sh, dev, method="trace"),
                                c, sh, base_total, dev.capacity_bytes)
    return [ch.to_dict() for ch in changes]


def _arithmetic(wl, cfg, n, traces, chosen, master_weights, dev) -> list:
    """Per sharding, at the chosen (or smallest) micro-batch: model-state bytes per rank as modelled
    from the trace, next to the ZeRO paper's formula for the same parameter count."""

    mb = chosen[1] if chosen else min(traces)
    c = cfg.with_(batch_size=mb, grad_accum=1)
    params, units, _ = model_params(wl, c)
    psi = sum(p.numel for p in params if p.trainable)
    rows = []
    for sh in ORDER:
        if cfg.precision == "bf16-mp" and sh not in FSDP_SHARDINGS:
            continue
        stage = S.ZERO_STAGE[sh]
        est = estimate_per_rank(wl, c, n, sh, dev, method="model", trace=traces[mb], master_weights=master_weights)
        comp = est.per_rank[0]["breakdown_at_peak"]
        opt_phase = est.per_rank[0]["phase_peaks"]
        m = S.model_rank_bytes(S.phase_states(traces[mb]), params, sh, n, 0, units,
                               12 * psi if master_weights else None, 0.5 if cfg.precision == "bf16-mp" else 1.0)
        model_states = S.model_state_bytes(m["phases"])
        rows.append({"sharding": sh, "zero_stage": stage, "num_params": psi,
                     "model_states_bytes_per_rank": model_states,
                     "zero_paper_bytes_per_rank": S.zero_paper_bytes(psi, stage, n),
                     "zero_paper_formula": S.ZERO_PAPER_FORMULA[stage],
                     "peak_allocated_bytes": est.peak_allocated_bytes, "device_total_bytes": est.device_total_bytes,
                     "peak_phase": est.peak_phase, "phase_totals": opt_phase,
                     "activations_and_temporaries_bytes": comp.get("rest", 0)})
    return rows


def _apply_lines(sh: str, n: int, per_node: int, family: str, cfg: TrainConfig, est, script: str):
    nnodes = max(1, math.ceil(n / per_node))
    if nnodes == 1:
        torchrun = f"torchrun --standalone --nproc-per-node {n} {script}"
    else:
        torchrun = (f"torchrun --nnodes {nnodes} --nproc-per-node {per_node} --node-rank $NODE_RANK "
                    f"--rdzv-backend c10d --rdzv-endpoint $MASTER_ADDR:29500 {script}")
    backend = {"npu": "hccl", "cuda": "nccl"}.get(family, "gloo")
    code = []
    if family == "npu":
        code.append("import torch_npu  # registers the npu device and the hccl backend")
    code += [f'torch.distributed.init_process_group("{backend}")',
             "local_rank = int(os.environ['LOCAL_RANK'])"]
    if family in ("npu", "cuda"):
        code.append(f"torch.{family}.set_device(local_rank)")
    opt = OPTIMIZER_CLASSES.get(cfg.optimizer, "AdamW")   # adamw-8bit: bitsandbytes' class is not in torch.optim
    if sh in ("ddp", "zero1"):
        ids = "[local_rank]" if family in ("npu", "cuda") else "None"
        code.append("from torch.nn.parallel import DistributedDataParallel as DDP")
        code.append(f"model = DDP(model, device_ids={ids}, bucket_cap_mb=25)")
        if sh == "zero1":
            code.append("from torch.distributed.optim import ZeroRedundancyOptimizer")
            code.append(f"optimizer = ZeroRedundancyOptimizer(model.parameters(), "
                        f"optimizer_class=torch.optim.{opt}, lr={cfg.lr})")
    else:
        units = est.strategy_info.get("fsdp_units") or []
        raf = "False" if sh == "zero2" else "True"
        mp = est.strategy_info.get("mp_policy")
        raf += f", mp_policy={mp}" if mp else ""
        code.append("from torch.distributed.fsdp import fully_shard" + (", MixedPrecisionPolicy" if mp else ""))
        if units:
            parent = units[0].rsplit(".", 1)[0] if "." in units[0] else ""
            code.append(f"for block in model.{parent}:" if parent else "for block in model.children():")
            code.append(f"    fully_shard(block, reshard_after_forward={raf})")
        code.append(f"fully_shard(model, reshard_after_forward={raf})")
        code.append(f"optimizer = torch.optim.{opt}(model.parameters(), lr={cfg.lr})  # after fully_shard")
    env = {}
    if family == "npu":
        env["HCCL_BUFFSIZE"] = "200"
    return torchrun, code, env
