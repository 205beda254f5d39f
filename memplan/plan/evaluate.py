"""The planner's one way of asking "what would this configuration need?": trace it (once) and estimate.

`Evaluator` memoizes a fake-tensor trace per `TrainConfig` (a trace is device-neutral) and turns it into
an `Estimate` for the target device under a given allocator configuration (a cheap replay). It counts
traces and their time, and reports each new trace to an optional progress callback, so a plan can say
how much checking it did.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from memplan.errors import TraceError, UserError
from memplan.core import Estimate, estimate_from_trace, trace
from memplan.step import Target
from memplan.trace.optsplice import differs_in_optimizer_only, optimizer_trace, splice_optimizer, why_not
from memplan.workload import TrainConfig, Workload

OPTIMIZER_SPLICE = "optimizer splice"
# the optimizer whose phase is cheapest to trace (a few ops per parameter, no state but one momentum buffer
# per parameter, each op over all of them): forward/backward is traced under it where the optimizer phase
# of the configuration asked about is spliced in from an optimizer-only trace the plan already took
PROXY = dict(optimizer="sgd", optimizer_impl="foreach")


class Evaluator:
    """Cached trace + estimate of configurations of one workload on one device, against one budget."""

    def __init__(self, workload: Workload, dev, budget_bytes: int,
                 on_trace: Callable[[str], None] | None = None):
        self.workload = workload
        self.dev = dev                       # core.DeviceTarget; its alloc_conf is the one in force
        self.budget_bytes = budget_bytes
        self.on_trace = on_trace
        self._traces: dict[TrainConfig, object] = {}
        self._failed: dict[TrainConfig, str] = {}
        self._est: dict[tuple, Estimate] = {}
        self._seconds: dict[TrainConfig, float] = {}
        self.n_traces = 0
        self.trace_seconds = 0.0
        self.n_replays = 0                   # estimates from a trace (an allocator replay, or plain accounting on CPU)
        self.log: list[dict] = []            # one row per trace: what, how long, which mode
        self.splice_why: dict[TrainConfig, str] = {}   # why an optimizer change was traced in full
        self._minis: dict[TrainConfig, object] = {}    # optimizer-only traces, by configuration unchecked

    # ---- the allocator configuration in force ------------------------------------------------
    @property
    def alloc_conf(self) -> str | None:
        return self.dev.alloc_conf

    def set_alloc_conf(self, conf: str | None) -> None:
        self.dev = replace(self.dev, alloc_conf=conf)

    # ---- traces and estimates ------------------------------------------------------------------
    def trace(self, cfg: TrainConfig):
        """The trace of `cfg` (traced once). A configuration that cannot be traced raises TraceError."""
        if cfg in self._failed:
            raise TraceError(self._failed[cfg])
        tr = self._traces.get(cfg)
        if tr is None:
            if self.on_trace is not None:
                self.on_trace(describe(cfg))
            t0 = time.perf_counter()
            how = None
            try:
                tr, how = self._spliced(cfg)
                if tr is None:
                    tr = trace(self.workload, cfg.validate(), self.dev)
            except TraceError as exc:
                self._failed[cfg] = str(exc)
                raise
            finally:
                dt = time.perf_counter() - t0
                self.n_traces += 1
                self.trace_seconds += dt
                self.log.append({"config": describe(cfg), "seconds": round(dt, 2),
                                 "mode": (how or getattr(tr, "mode", None)) if tr is not None else "failed",
                                 **({"splice": self.splice_why[cfg]} if cfg in self.splice_why else {})})
            self._traces[cfg] = tr
            self._seconds[cfg] = dt
        return tr

    def _spliced(self, cfg: TrainConfig):
        """`(trace, "optimizer splice")` when `cfg`'s forward/backward can be taken from a trace that
        differs only in the optimizer (memplan.trace.optsplice) and its optimizer phase from an
        optimizer-only trace, else `(None, None)` with the reason in `splice_why`. The forward/backward
        comes from a traced configuration, or, where the optimizer-only trace of `cfg` (checkpointing
        aside: that run has no forward) was taken already, from `cfg` traced under the PROXY optimizer
        (cheaper to trace than most: adafactor's for-loop step is about a third of a block-once trace)."""
        base = next((self._traces[c] for c in self._traces if differs_in_optimizer_only(c, cfg)), None)
        proxy = cfg.with_(**PROXY)
        if base is None and (cfg.with_(checkpoint=()) not in self._minis or proxy == cfg):
            return None, None
        why = why_not(self.workload, cfg)
        if why is None:
            try:
                mini = self._mini(cfg)
                base = base or trace(self.workload, proxy.validate(), self.dev)
            except UserError as exc:   # the full trace of `cfg` reports a real failure
                mini, why = None, str(exc).splitlines()[0]
            if mini is not None:
                tr, why = splice_optimizer(base, mini)
                if tr is not None:
                    return tr, OPTIMIZER_SPLICE
        self.splice_why[cfg] = why
        return None, None

    def _mini(self, cfg: TrainConfig):
        """The optimizer-only trace of `cfg` without its checkpointing (the same run: it has no forward;
        the splice checks the builds record for record), taken once."""
        key = cfg.with_(checkpoint=()).validate()
        if key not in self._minis:
            target = Target(family=self.dev.family, run_device="cpu", name=self.dev.name)
            self._minis[key] = optimizer_trace(self.workload, key, target)
        return self._minis[key]

    def estimate(self, cfg: TrainConfig, alloc_conf: str | None | object = ...) -> Estimate:
        """Estimate of `cfg` under `alloc_conf` (default: the one in force)."""
        conf = self.dev.alloc_conf if alloc_conf is ... else alloc_conf
        key = (cfg, conf)
        est = self._est.get(key)
        if est is None:
            tr = self.trace(cfg)
            dev = self.dev if conf == self.dev.alloc_conf else replace(self.dev, alloc_conf=conf)
            est = estimate_from_trace(self.workload, cfg, dev, tr, self._seconds[cfg])
            self.n_replays += 1
            self._est[key] = est
        return est

    def counts(self) -> dict:
        """Traces by mode (block-once / full / failed) and allocator replays, for the plan's output."""
        modes: dict[str, int] = {}
        for row in self.log:
            modes[row["mode"] or "full"] = modes.get(row["mode"] or "full", 0) + 1
        return {"traces": self.n_traces, "by_mode": modes, "replays": self.n_replays}

    def traced(self, cfg: TrainConfig) -> bool:
        return cfg in self._traces

    def total(self, cfg: TrainConfig) -> int:
        """Device bytes `cfg` needs (reserved peak + memory outside the allocator)."""
        return self.estimate(cfg).device_total_bytes

    def fits(self, cfg: TrainConfig) -> bool:
        """Within the budget (capacity less the margin). A configuration that cannot be traced does not fit."""
        try:
            return self.total(cfg) <= self.budget_bytes
        except TraceError:
            return False


def describe(cfg: TrainConfig) -> str:
    bits = [f"batch {cfg.batch_size}"]
    if cfg.seq_len:
        bits.append(f"seq {cfg.seq_len}")
    bits.append(cfg.precision)
    bits.append(f"{cfg.optimizer}/{cfg.optimizer_impl}")
    if cfg.grad_accum > 1:
        bits.append(f"accum {cfg.grad_accum}")
    if cfg.checkpoint:
        bits.append(f"ckpt {len(cfg.checkpoint)}")
    return " ".join(bits)
