"""Per-rank memory of data-parallel strategies, modelled from the single-device trace.

This is the *model* path (`method="model"`): one single-device trace per micro-batch size, then
arithmetic per strategy. The *trace* path (`memplan.distributed._fake_trace`) instead runs torch's own
wrappers on the fake process group and is the reference; the model path is what the planner sweeps
with and what shows the arithmetic.

Per phase of the steady-state step (forward, backward, optimizer), at that phase's single-device peak,
with P / G / O the parameter, gradient and optimizer-state bytes and R the rest (activations,
temporaries, inputs), N ranks and s_r rank r's share of the optimizer partition:

| sharding | forward / backward                                   | optimizer                     |
|----------|------------------------------------------------------|-------------------------------|
| ddp      | P + G + O + R + B                                    | same                          |
| zero1    | P + G + s_r·O + R + B                                | P + G + s_r·O + R·s_r* + B    |
| zero2    | P/N + P + G/N + O/N + R + U_max (reduce-scatter in)  | P/N + G/N + O/N + R/N*        |
| zero3    | P/N + 2·U_max (current + prefetched unit) + G/N + O/N + R + U_max | as zero2         |

B = DDP's gradient buckets: flattened copies of every trainable gradient (`gradient_as_bucket_view`
defaults to False; torch/nn/parallel/distributed.py), allocated when DDP is built, so they add P_trainable
(in the gradient dtype) to every phase. U_max = the largest FSDP unit's unsharded bytes. `*` = the
optimizer's scratch follows its local shard. FSDP shards are padded: dim 0 rounded up to a multiple
of N (`torch.distributed.fsdp._fully_shard._fsdp_param`).

ZeRO (Rajbhandari et al., SC'20, §5) counts model states only, for mixed-precision Adam with
Ψ parameters: 2Ψ fp16 params + 2Ψ fp16 grads + KΨ optimizer (K = 12: fp32 master, momentum, variance):
baseline (2+2+K)Ψ; P_os (ZeRO-1) (2+2+K/N)Ψ; P_os+g (ZeRO-2) (2+(2+K)/N)Ψ; P_os+g+p (ZeRO-3) (2+2+K)Ψ/N.

Communication memory outside the caching allocator is its own line: HCCL reserves 2 × HCCL_BUFFSIZE
(default 200 MB) per communicator (CANN docs, "HCCL_BUFFSIZE": "Each communicator occupies
2 × HCCL_BUFFSIZE memory"); NCCL's buffers are NCCL_BUFFSIZE (default 4 MiB) per channel and peer.

Known limitations: R is the single-device trace's, unchanged by the strategy (true for data
parallelism); FSDP's unit timing is reduced to "at most two units unsharded" (prefetch of one unit);
ZeRO-1's partition is rebuilt from parameter sizes with ZeroRedundancyOptimizer's greedy rule.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from memplan.trace.events import CATEGORIES

MB = 1000 * 1000
MiB = 1024 * 1024
HCCL_BUFFSIZE_DEFAULT_MB = 200      # CANN env var reference, HCCL_BUFFSIZE (unit MB, default 200)
NCCL_BUFFSIZE_DEFAULT = 4 * MiB     # NCCL env docs, NCCL_BUFFSIZE default 4194304
NCCL_CHANNELS_ASSUMED = 2           # channels x (send+recv) a ring uses per peer; an order of magnitude


@dataclass(frozen=True)
class ParamInfo:
    name: str
    numel: int
    itemsize: int
    dim0: int
    trainable: bool

    @property
    def nbytes(self) -> int:
        return self.numel * self.itemsize

    def shard_bytes(self, n: int) -> int:
        """FSDP2's padded shard: dim 0 rounded up to a multiple of n, split evenly."""
        if self.dim0 == 0:
            return 0
        rows = math.ceil(self.dim0 / n)
        return rows * (self.numel // self.dim0) * self.itemsize


def param_infos(model) -> list[ParamInfo]:
    out = []
    for name, p in model.named_parameters():
        d0 = p.shape[0] if p.dim() > 0 else 1
        out.append(ParamInfo(name, p.numel(), p.element_size(), d0, p.requires_grad))
    return out


def zero1_partition(params: list[ParamInfo], n: int) -> list[int]:
    """Bytes of trainable parameters each rank owns under ZeroRedundancyOptimizer: parameters sorted by
    size, largest first, each to the rank with the least so far (torch/distributed/optim/
    zero_redundancy_optimizer.py, `_partition_parameters`)."""
    sizes = [0] * n
    owned = [0] * n
    for p in sorted((p for p in params if p.trainable), key=lambda p: p.numel, reverse=True):
        r = sizes.index(min(sizes))
        sizes[r] += p.numel
        owned[r] += p.nbytes
    return owned


MODEL_STATE_KEYS = ("parameters", "unsharded_parameters", "gradients", "optimizer_state")


def model_state_bytes(phases: dict) -> int:
    """Model states per rank as ZeRO counts them: the largest sum over the phases of parameters
    (sharded and unsharded), gradients and optimizer state."""
    return max(sum(c.get(k, 0) for k in MODEL_STATE_KEYS) for c in phases.values())


def comm_buffer_bytes(family: str, communicators: int = 1, world_size: int = 1) -> tuple[int, str]:
    """Memory the collective library holds outside the caching allocator, and where the number comes from."""
    if family == "npu":
        mb = int(os.environ.get("HCCL_BUFFSIZE", HCCL_BUFFSIZE_DEFAULT_MB))
        return 2 * mb * MB * communicators, (f"HCCL: 2 x HCCL_BUFFSIZE ({mb} MB) per communicator x "
                                             f"{communicators} (CANN HCCL_BUFFSIZE reference)")
    if family == "cuda":
        size = int(os.environ.get("NCCL_BUFFSIZE", NCCL_BUFFSIZE_DEFAULT))
        peers = 2 if world_size > 2 else 1
        b = size * NCCL_CHANNELS_ASSUMED * 2 * peers * communicators
        return b, (f"NCCL: NCCL_BUFFSIZE ({size // MiB} MiB) x {NCCL_CHANNELS_ASSUMED} channels x send/recv x "
                   f"{peers} ring peer(s) x {communicators} (order of magnitude; NCCL sizes channels at run time)")
    return 0, "gloo (cpu): no device buffers"


ZERO_STAGE = {"ddp": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3, "fsdp1": 3}
"""The ZeRO stage each sharding corresponds to (FSDP's full sharding is stage 3)."""
ZERO_PAPER_FORMULA = ("(2+2+K)Ψ", "(2+2+K/Nd)Ψ", "(2+(2+K)/Nd)Ψ", "(2+2+K)Ψ/Nd")
"""Model-state bytes per rank by ZeRO stage (Rajbhandari et al. 2020, Figure 1; K=12 for mixed-precision Adam)."""


def zero_paper_bytes(num_params: int, stage: int, nd: int, k: int = 12) -> int:
    """Model-state bytes per rank from the ZeRO paper (Rajbhandari et al. SC'20, Figure 1 / §5.1):
    stage 0 (2+2+K)Ψ, 1 (2+2+K/Nd)Ψ, 2 (2+(2+K)/Nd)Ψ, 3 (2+2+K)Ψ/Nd."""
    psi = num_params
    if stage == 0:
        return (2 + 2 + k) * psi
    if stage == 1:
        return 4 * psi + k * psi // nd
    if stage == 2:
        return 2 * psi + (2 + k) * psi // nd
    if stage == 3:
        return (2 + 2 + k) * psi // nd
    raise ValueError(f"ZeRO stage {stage}")


@dataclass(frozen=True)
class PhaseState:
    """Bytes by category at one phase's peak of the single-device steady-state step."""

    phase: str
    level: int
    by_category: dict


def phase_states(trace) -> list[PhaseState]:
    """For forward, backward and optimizer: the single-device level and its categories at the phase peak."""
    st, ev = trace.storages, trace.events
    w0, w1 = trace.window(trace.steps)
    cats = {c: 0 for c in CATEGORIES}
    cur = 0
    best: dict[str, PhaseState] = {}
    marks = trace.marks
    mi, phase = 0, "build"
    for i, v in enumerate(ev):
        while mi < len(marks) and marks[mi][0] <= i:
            phase = marks[mi][1]
            mi += 1
        r = st[v] if v >= 0 else st[~v]
        sgn = 1 if v >= 0 else -1
        cats[r.category] = cats.get(r.category, 0) + sgn * r.nbytes
        cur += sgn * r.nbytes
        if w0 <= i < w1 and phase in ("forward", "backward", "optimizer", "inputs", "zero_grad"):
            key = "forward" if phase == "inputs" else ("optimizer" if phase == "zero_grad" else phase)
            if key not in best or cur > best[key].level:
                best[key] = PhaseState(key, cur, dict(cats))
    return [best[k] for k in ("forward", "backward", "optimizer") if k in best]


def single_device_config(cfg):
    """The single-device stand-in the model method traces: `bf16-mp` (FSDP's policy, which needs the
    sharded wrapper) computes in bf16 with fp32 parameters and no weight-cast cache, as bf16-amp does
    with `cache_enabled=False`."""
    if cfg.precision != "bf16-mp":
        return cfg
    return cfg.with_(precision="bf16-amp", autocast_cache=False, reduce_dtype=None)


def model_rank_bytes(states: list[PhaseState], params: list[ParamInfo], sharding: str, n: int, rank: int = 0,
                     units: list[list[str]] | None = None, opt_state_bytes: int | None = None,
                     gather_ratio: float = 1.0) -> dict:
    """Per-rank peak by the table above. `opt_state_bytes` replaces the traced optimizer state (e.g.
    12 bytes/param for an fp32 master copy plus Adam moments). `gather_ratio`: the all-gathered
    (unsharded) parameters' bytes per stored byte (0.5 for fp32 parameters gathered in bf16).
    Returns the peak phase, the components at it and the per-phase totals."""
    p_all = round(sum(p.nbytes for p in params) * gather_ratio)
    p_train = sum(p.nbytes for p in params if p.trainable)
    p_shard = sum(p.shard_bytes(n) for p in params)
    by_name = {p.name: p for p in params}
    unit_bytes = [round(sum(by_name[x].nbytes for x in u if x in by_name) * gather_ratio)
                  for u in (units or [])] or [p_all]
    u_max = max(unit_bytes)
    share = zero1_partition(params, n)[rank] / p_train if p_train else 1.0
    phases = {}
    for s in states:
        c = s.by_category
        P, G, O = c.get("parameters", 0), c.get("gradients", 0), c.get("optimizer_state", 0)
        if opt_state_bytes is not None and O:
            O = opt_state_bytes
        rest = s.level - c.get("parameters", 0) - c.get("gradients", 0) - c.get("optimizer_state", 0)
        opt = s.phase == "optimizer"
        comp = {}
        if sharding == "ddp":
            comp = {"parameters": P, "gradients": G, "optimizer_state": O, "ddp_buckets": p_train, "rest": rest}
        elif sharding == "zero1":
            comp = {"parameters": P, "gradients": G, "optimizer_state": round(O * share),
                    "ddp_buckets": p_train, "rest": round(rest * share) if opt else rest}
        else:
            g_full = p_train if G else 0   # persistent sharded gradients once backward has run
            comp = {"parameters": p_shard, "gradients": g_full // n, "optimizer_state": O // n,
                    "rest": rest // n if opt else rest}
            if not opt:
                if sharding == "zero2":
                    comp["unsharded_parameters"] = p_all
                else:
                    comp["unsharded_parameters"] = min(2 * u_max, p_all)
                if s.phase == "backward":
                    comp["reduce_scatter_buffer"] = u_max
        phases[s.phase] = comp
    peak_phase = max(phases, key=lambda k: sum(phases[k].values()))
    return {"peak_phase": peak_phase, "components": phases[peak_phase], "phases": phases,
            "phase_totals": {k: sum(v.values()) for k, v in phases.items()},
            "peak_bytes": sum(phases[peak_phase].values())}
