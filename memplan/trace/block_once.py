"""Which trace runs: block-once over identical layers (memplan.trace.blocks; a model file's stack cut in
the tracer: memplan.trace.model_stacks), block-once over runs of identical layers
(memplan.trace.block_runs), or the full trace, and why (`trace.mode`, `trace.mode_reason`)."""
from __future__ import annotations

from memplan.trace.block_runs import layer_runs, trace_runs
from memplan.trace.blocks import MIXED, from_reduced, hf_stack
from memplan.trace.events import Trace
from memplan.trace.model_stacks import file_stack, trace_file_stack


def trace_block_once(workload, cfg, target, on_phase=None, trace_fn=None, min_depth: int = 1,
                     runs_fn=None) -> Trace:
    """The trace of `cfg`'s steps, block-once when the model's layers are proven identical (see
    memplan.trace.blocks; a model file's stack: memplan.trace.model_stacks, also through `trace_fn`),
    or form runs of identical layers (checkpointing differs between them: memplan.trace.block_runs, with
    the default tracer or `runs_fn`), else the full trace; `trace.mode` says which
    ran, `trace.mode_reason` why. `trace_fn(workload, on_phase)`: how one workload is traced (default:
    `trace_workload` with `cfg` and `target`; the distributed tracer passes its own, wrapping each depth
    in FSDP or DDP); `runs_fn(workload, cfg, on_phase)`: the same with the reduced model's own config (its
    checkpointing), for runs; `min_depth`: the fewest layers to trace."""
    from memplan.trace.tracer import trace_workload

    default_fn = trace_fn is None
    if trace_fn is None:
        def trace_fn(wl, on_phase=None):
            return trace_workload(wl, cfg, target, on_phase=on_phase)

    stack, why = hf_stack(workload, cfg)
    if stack is not None:
        trace, why = from_reduced(workload, stack, trace_fn, on_phase, min_depth)
        if trace is not None:
            return trace
    elif workload.extra.get("hf_config") is None:   # a model file: its stack cut in the tracer (any trace_fn)
        file, why = file_stack(workload, cfg)
        trace = None
        if file is not None:
            trace, why = trace_file_stack(workload, file, trace_fn, on_phase, min_depth)
        if trace is not None:
            return trace
    elif why == MIXED and (default_fn or runs_fn is not None):
        runs, why_not = layer_runs(workload, cfg, base=min_depth)
        trace = None
        if runs is not None:
            trace, why_not = trace_runs(workload, cfg, runs, runs_fn or (
                lambda wl, c, on=None: trace_workload(wl, c, target, on_phase=on)), on_phase)
        if trace is not None:
            return trace
        why = f"{why}; {why_not}"
    elif why == MIXED:
        why = f"{why}; runs of identical layers are written with the default tracer or a runs_fn only"
    trace = trace_fn(workload, on_phase)
    trace.mode, trace.mode_reason = "full", why
    return trace
