"""Reuse policy and other memory changes: allocator settings, optimizer implementation, AMP, optimizers.

Allocator settings are chosen from the simulated fragmentation: each candidate value of
`PYTORCH_CUDA_ALLOC_CONF` / `PYTORCH_NPU_ALLOC_CONF` is parsed as the real parser would (torch_npu
rejects `expandable_segments:True` together with `max_split_size_mb` or `garbage_collection_threshold`;
such candidates are reported as excluded, with the parser's message) and the trace is replayed through
the device's caching-allocator model (`memplan.alloc.simulate`); a value is kept only if it lowers the
reserved peak. A trace is device-neutral, so this costs replays, not traces.

The other changes are configurations to re-trace (`Candidate.apply`): the optimizer implementation
(foreach keeps about one set of parameter-sized temporaries, fused about none, the for-loop about two
of the largest parameter), bf16 autocast, and lower-memory optimizers (Adafactor's factored second
moment, SGD with momentum). 8-bit Adam (bitsandbytes) cannot run on fake tensors: it is an analytic
estimate and says so.

Known limitations: the optimizer implementation's effect on speed is not modelled; fused optimizers
need kernel support on the device (CUDA: AdamW/Adam/SGD; torch_npu: depends on the release), and
`expandable_segments` needs an allocator release that knows the key (an older torch_npu rejects it at
start-up as an unrecognized option).
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from typing import Callable

from memplan import compat
from memplan.alloc import parse_alloc_conf
from memplan.alloc.config import ENV_VARS, env_var
from memplan.errors import UserError
from memplan.workload import OPTIMIZER_CLASSES, TrainConfig


# Candidate allocator settings, in the order tried. The combined one shows torch_npu's exclusion rule.
ALLOC_CANDIDATES = (
    "expandable_segments:True",
    "max_split_size_mb:128",
    "max_split_size_mb:512",
    "roundup_power2_divisions:4",
    "expandable_segments:True,max_split_size_mb:512",
    "garbage_collection_threshold:0.8",
)
MIN_GAIN_BYTES = 1 << 20


@dataclass(frozen=True)
class AllocTrial:
    conf: str                    # "" = the allocator's defaults
    status: str                  # ok | excluded | no effect
    device_total_bytes: int | None = None
    fragmentation_bytes: int | None = None
    reason: str = ""

    def to_dict(self) -> dict:
        return {"conf": self.conf, "status": self.status, "device_total_bytes": self.device_total_bytes,
                "fragmentation_bytes": self.fragmentation_bytes, "reason": self.reason}


@dataclass(frozen=True)
class AllocPolicy:
    family: str
    env_var: str | None
    current: str | None          # what was in force (--alloc-conf or the environment's)
    best: str | None             # the value to set (None: keep the current one)
    saving_bytes: int            # device total with `current` minus with `best`
    trials: tuple[AllocTrial, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"family": self.family, "env_var": self.env_var, "current": self.current, "best": self.best,
                "saving_bytes": self.saving_bytes, "trials": [t.to_dict() for t in self.trials],
                "notes": list(self.notes)}


def alloc_candidates(family: str, current: str | None) -> list[str]:
    """Values to try for `family`, each once, the current one first."""
    out = [current or ""]
    for c in ALLOC_CANDIDATES:
        if c not in out:
            out.append(c)
    return out


def check_alloc_conf(conf: str, family: str) -> str | None:
    """None if the allocator accepts `conf`, else the parser's message (e.g. torch_npu's exclusion)."""
    try:
        parse_alloc_conf(conf, family)
    except UserError as exc:
        return str(exc)
    return None


def choose_alloc_conf(ev, cfg: TrainConfig) -> AllocPolicy:
    """Replay `cfg`'s trace under each candidate allocator setting; keep the one that lowers reserved."""
    family = ev.dev.family
    if family not in ENV_VARS:
        return AllocPolicy(family, None, None, None, 0, (),
                           ("plain CPU accounting: no caching-allocator settings to choose",))
    current = ev.alloc_conf
    if current is None:
        current = next((os.environ[n] for n in ENV_VARS[family] if n in os.environ), None)
    trials: list[AllocTrial] = []
    base_total = None
    best, best_total = None, None
    for conf in alloc_candidates(family, current):
        why = check_alloc_conf(conf, family)
        if why is not None:
            trials.append(AllocTrial(conf, "excluded", reason=why))
            continue
        est = ev.estimate(cfg, alloc_conf=conf or None)
        status, reason = "ok", ""
        if "garbage_collection_threshold" in conf:
            status = "no effect"
            reason = ("acts only with a per-process memory fraction "
                      f"(torch.{family}.set_per_process_memory_fraction), as in the real allocator")
        trials.append(AllocTrial(conf, status, est.device_total_bytes, est.fragmentation_bytes, reason))
        if base_total is None:
            base_total = est.device_total_bytes
            continue
        if status == "ok" and est.device_total_bytes < (best_total if best_total is not None else base_total):
            best, best_total = conf, est.device_total_bytes
    saving = 0
    if best is not None and base_total - best_total >= MIN_GAIN_BYTES:
        saving = base_total - best_total
    else:
        best = None
    notes = []
    if family == "npu" and any(t.status == "excluded" for t in trials):
        notes.append("torch_npu: expandable_segments:True cannot be combined with max_split_size_mb or "
                     "garbage_collection_threshold (NPUAllocatorConfig.cpp)")
    if best and "expandable_segments" in best:
        notes.append("expandable_segments needs an allocator release that knows the key; an older release "
                     "rejects it at start-up as an unrecognized option")
    return AllocPolicy(family, env_var(family), current, best, saving, tuple(trials), tuple(notes))


# ---- configuration changes to re-trace ----------------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    id: str
    title: str
    kind: str                    # optimizer-impl | precision | optimizer
    same_math: bool              # True: the same training, numerically (up to rounding)
    apply: Callable[[TrainConfig], TrainConfig] = field(repr=False, compare=False)
    code: str = ""
    note: str = ""


def effective_impl(cfg: TrainConfig, family: str) -> str:
    if cfg.optimizer_impl != "default":
        return cfg.optimizer_impl
    return "for-loop" if family == "cpu" else "foreach"


def optimizer_line(cfg: TrainConfig, family: str) -> str:
    """The optimizer construction for `cfg` as a line of Python."""
    impl = effective_impl(cfg, family)
    kw = {"fused": ", fused=True", "foreach": ", foreach=True", "for-loop": ", foreach=False"}[impl]
    mom = ", momentum=0.9" if cfg.optimizer == "sgd" else ""
    if cfg.optimizer == "adamw-8bit":
        return "optimizer = bitsandbytes.optim.AdamW8bit(params, lr=...)"
    return f"optimizer = torch.optim.{OPTIMIZER_CLASSES[cfg.optimizer]}(params, lr=...{mom}{kw})"


def _version_gaps(cls: str, impl: str) -> dict[str, str]:
    """Optimizer changes this torch cannot trace, each with its one line (memplan.compat)."""
    gaps = {}
    if impl != "fused" and not compat.fused_on_cpu(cls):
        gaps["fused"] = compat.missing(f"a CPU fused torch.optim.{cls} kernel (memplan traces the fused step "
                                       "with it)", "the fused implementation is not considered")
    if not compat.has_adafactor():
        gaps["adafactor"] = compat.missing("torch.optim.Adafactor", "Adafactor is not considered")
    return gaps


def candidates(cfg: TrainConfig, family: str, workload) -> tuple[list[Candidate], list[str]]:
    """Changes worth re-tracing for `cfg` on `family`, and notes on what was left out and why."""
    out: list[Candidate] = []
    notes: list[str] = []
    own_opt = workload.make_optimizer is not None or workload.train_step is not None
    if own_opt:
        notes.append("the model file builds its own optimizer/step: optimizer changes are not traced")
    elif cfg.optimizer not in OPTIMIZER_CLASSES:
        notes.append(f"{cfg.optimizer}: torch.optim implementation choices do not apply")
    else:
        impl = effective_impl(cfg, family)
        cls = OPTIMIZER_CLASSES[cfg.optimizer]
        gaps = _version_gaps(cls, impl)
        notes.extend(gaps.values())
        for new in ("fused", "foreach", "for-loop"):
            if new == impl or (new == "fused" and (cfg.optimizer == "adafactor" or "fused" in gaps)):
                continue
            kw = {"fused": "fused=True", "foreach": "foreach=True", "for-loop": "foreach=False"}[new]
            out.append(Candidate(
                f"optimizer-impl:{new}", f"{new} optimizer implementation (now {impl})", "optimizer-impl", True,
                lambda c, new=new: c.with_(optimizer_impl=new),
                f"optimizer = torch.optim.{cls}(params, lr=..., {kw})",
                "fused needs kernel support on the device" if new == "fused" else ""))
        if cfg.optimizer in ("adamw", "adam") and "adafactor" not in gaps:
            def to_adafactor(c):
                return c.with_(optimizer="adafactor",
                               optimizer_impl="default" if c.optimizer_impl == "fused" else c.optimizer_impl)
            out.append(Candidate("optimizer:adafactor", "Adafactor instead of Adam (factored second moment)",
                                 "optimizer", False, to_adafactor,
                                 "optimizer = torch.optim.Adafactor(params, lr=...)",
                                 "changes the optimizer: re-tune the learning rate"))
            out.append(Candidate("optimizer:sgd", "SGD with momentum instead of Adam", "optimizer", False,
                                 lambda c: c.with_(optimizer="sgd"),
                                 "optimizer = torch.optim.SGD(params, lr=..., momentum=0.9)",
                                 "changes the optimizer: usually needs a different learning rate and schedule"))
    if cfg.precision == "fp32" and workload.train_step is None:
        dev = {"npu": "npu", "cuda": "cuda"}.get(family, "cpu")
        out.append(Candidate(
            "precision:bf16-amp", "bf16 autocast (AMP) for forward and loss", "precision", False,
            lambda c: c.with_(precision="bf16-amp"),
            f"with torch.autocast(device_type={dev!r}, dtype=torch.bfloat16):\n"
            "    loss = loss_fn(model(batch), batch)",
            "fp32 master weights are kept; needs bf16 support (A100/H100, 910B; not V100/T4)"))
    return out, notes


@dataclass(frozen=True)
class AnalyticChange:
    id: str
    title: str
    saving_bytes: int
    code: str
    note: str


def eight_bit_adam(est, cfg: TrainConfig, workload) -> AnalyticChange | None:
    """8-bit Adam (bitsandbytes): Adam's two fp32 moments (8 B/param) become two 8-bit moments with one
    fp32 absmax per 2048-value block (~2.004 B/param; Dettmers et al. 2022, "8-bit Optimizers via
    Block-wise Quantization"). Analytic: the moments are persistent, so every phase peak drops by
    about 75 % of the optimizer state."""
    if cfg.optimizer not in ("adamw", "adam") or workload.make_optimizer is not None or workload.train_step is not None:
        return None
    state = est.breakdown_at_peak.get("optimizer_state", 0)
    if state <= 0:
        return None
    saving = int(state * (1 - (2 + 8 / 2048) / 8))
    have = importlib.util.find_spec("bitsandbytes") is not None
    why = ("bitsandbytes is installed but its kernels cannot run on fake tensors" if have else
           "bitsandbytes is not installed")
    return AnalyticChange(
        "optimizer:adamw-8bit", "8-bit AdamW (bitsandbytes)", saving,
        "import bitsandbytes as bnb\noptimizer = bnb.optim.AdamW8bit(params, lr=...)",
        f"analytic estimate, not traced ({why}): 8 B/param of Adam moments -> ~2 B/param; "
        "bitsandbytes targets CUDA (no Ascend NPU kernels)")
