"""Fallback: when a model cannot be traced on fake tensors, measure small real steps and extrapolate.

`memplan.core.analyze(..., fallback=True)` (what `memplan analyze`, the API, the tests and
benchmarks/coverage.py all run) calls `estimate_by_fallback` when the fake trace fails in a way
`can_fall_back` accepts (a `TraceError`, or a `BuildError` under fake tensors). It runs two or three
small real training steps on the CPU with `measure_cpu` (PyTorch's own CPU-allocator accounting), fits
them, and extrapolates to the requested size. If the real step fails too, the failure is the model's
own (`UserCodeError`, exit 2), not a tracing limit. The Estimate it returns
has `method="fallback"` and notes that say so: "estimated by fallback: measured at batch 1 and 2,
extrapolated ...", the expected error, and why the trace failed. It is never silent.

The fit, per phase of the steady-state step (forward, backward, optimizer, ...; the peak is the max
over phases, so a small-batch optimizer peak does not hide the activations' growth):
- batch: `peak(b) = base + b * per_sample`, from batch 1 and 2 (a batch of 1 or 2 is measured as is);
- sequence (when `make_batch` takes `seq_len` and the requested one is over `SEQ_DIRECT_MAX`):
  `per_sample(s) = alpha * s + beta * s**2` (linear layers, and attention matrices where the model
  materialises them), from sequence `SEQ_POINTS` at batch 1 - three measurements in all.

Known limitations: the measurement is on the CPU, with the target's optimizer implementation but the
CPU's kernels; a device's attention kernels, caching allocator (reserved bytes are not simulated: they
are reported equal to allocated) and runtime overhead are not measured. Models too big to run one
real step at batch 1 in this machine's memory cannot fall back (the TraceError is re-raised with that
reason). Expected errors (`EXPECTED_ERROR_*`) come from benchmarks/coverage.py's fallback check.
"""
from __future__ import annotations

import os
import time

from memplan.core.device import CPU
from memplan.core.estimate import Estimate
from memplan.errors import BuildError, TraceError, UserCodeError, UserError
from memplan.measure import measure_cpu
from memplan.step import Target
from memplan.trace.events import CATEGORIES

SEQ_DIRECT_MAX = 256
"""Requested sequence lengths up to this are measured as they are (no sequence extrapolation)."""
SEQ_POINTS = (128, 256)
EXPECTED_ERROR_DIRECT = 0.005      # measured at the requested size: the CPU allocator's own ledger
EXPECTED_ERROR_BATCH = 0.03        # batch extrapolated from 1 and 2
EXPECTED_ERROR_SEQ = 0.10          # sequence extrapolated too (quadratic fit)
MEMORY_FRACTION = 0.5
"""A fallback measurement may use at most this fraction of the machine's physical memory."""


def can_fall_back(exc: Exception) -> bool:
    """The one rule: a failure of the fake-tensor trace (`TraceError`: an op fake tensors cannot run,
    `.numpy()` / `.tolist()` on a fake value, a custom C++ op) or of building the model under fake tensors
    (`BuildError`: code that reads values back while building) may be rescued by measuring real steps.
    The real step then decides: if it fails too, the model's own code is at fault (`UserCodeError`)."""
    return isinstance(exc, (TraceError, BuildError))


def _points(cfg, workload) -> tuple[list[int], list[int | None], int | None]:
    """(batch sizes, sequence lengths, requested sequence length) to measure."""
    seq = cfg.seq_len if cfg.seq_len is not None else workload.default_seq_len
    if seq is None or not workload.accepts_seq_len or seq <= SEQ_DIRECT_MAX:
        return ([cfg.batch_size] if cfg.batch_size <= 2 else [1, 2]), [seq], seq
    return [1, 2], list(SEQ_POINTS), seq


def _param_bytes(workload) -> int | None:
    """Bytes of the model's parameters and buffers, built on the meta device (None if it cannot be)."""
    import torch

    try:
        with torch.device("meta"):
            m = workload.build_model()
        return sum(t.numel() * t.element_size() for t in list(m.parameters()) + list(m.buffers()))
    except Exception:  # noqa: BLE001 - only a guard; the real build will say what is wrong
        return None


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def estimate_by_fallback(workload, cfg, dev=None, *, reason: str = "", error: Exception | None = None):
    """Measure small real steps on the CPU and extrapolate to `cfg` (see the module docstring)."""
    dev = dev or CPU
    t0 = time.perf_counter()
    pbytes = _param_bytes(workload)
    phys = _physical_memory()
    if pbytes is not None and phys is not None and 4 * pbytes > MEMORY_FRACTION * phys:
        msg = (f"{reason}; the fallback cannot measure it either: one real step at batch 1 needs about "
               f"{4 * pbytes / 2**30:.1f} GiB (parameters, gradients, optimizer state) of this machine's "
               f"{phys / 2**30:.1f} GiB")
        raise TraceError(msg, op=getattr(error, "op", None), module=getattr(error, "module", None)) from error
    batches, seqs, seq = _points(cfg, workload)
    target = Target(family=dev.family, run_device="cpu")
    runs: dict[tuple[int, int | None], object] = {}
    try:
        for s in seqs:
            for b in (batches if s == seqs[0] else [1]):
                runs[b, s] = measure_cpu(workload, cfg.with_(batch_size=b, seq_len=s), target)
    except BuildError as exc:   # the real build fails too
        raise _real_failure(reason, exc) from exc
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the user's code on real tensors
        raise _real_failure(reason, exc) from exc
    phases = set.intersection(*(set(m.phase_peaks) for m in runs.values()))
    preds = {ph: _predict(runs, ph, batches, seqs, cfg.batch_size, seq) for ph in phases}
    peak_phase = max(preds, key=preds.get)
    peak = int(round(preds[peak_phase]))
    extrapolated_seq = len(seqs) > 1
    direct = batches == [cfg.batch_size] and not extrapolated_seq
    err = EXPECTED_ERROR_DIRECT if direct else EXPECTED_ERROR_SEQ if extrapolated_seq else EXPECTED_ERROR_BATCH
    notes = [_what_was_done(batches, seqs, cfg.batch_size, seq, direct) +
             f"; expected error about ±{err * 100:g} %"]
    if reason:
        notes.append(f"the fake-tensor trace failed: {reason}")
        notes.append("the same step ran on real tensors: that failure is a limit of memplan's fake-tensor tracer, "
                     "not an error in the model")
    if dev.family != "cpu":
        notes.append(f"measured with the CPU's kernels and allocator; {dev.family} kernel choices and the "
                     "caching allocator's reserved memory are not modelled (reserved = allocated)")
    breakdown = {c: 0 for c in CATEGORIES}
    breakdown["parameters"] = pbytes or 0
    breakdown["other"] = max(peak - (pbytes or 0), 0)
    notes.append("breakdown at peak: only parameters are known; the rest is reported as 'other'")
    return Estimate(
        workload=workload.name, config=cfg.to_dict(), device=dev.name, capacity_bytes=dev.capacity_bytes,
        peak_allocated_bytes=peak, peak_reserved_bytes=peak, outside_allocator_bytes=dev.outside_allocator_bytes,
        outside_allocator_known=dev.outside_allocator_known,
        peak_phase=peak_phase, peak_step=cfg.steps, peak_micro_step=cfg.grad_accum,
        breakdown_at_peak=breakdown, phase_peaks={ph: int(round(v)) for ph, v in preds.items()},
        first_step_peak_bytes=peak, modules=[], notes=notes, method="fallback",
        trace_seconds=round(time.perf_counter() - t0, 3), n_events=0,
    )


def _real_failure(reason: str, exc: Exception) -> UserCodeError:
    first = (str(exc).strip().splitlines() or [""])[0]
    return UserCodeError(f"{reason or 'the trace failed'}; the model fails on real tensors too "
                         f"({type(exc).__name__}: {first}): fix the model code (this is not a tracing limit)")


def _predict(runs, phase, batches, seqs, B, S) -> float:
    s0 = seqs[0]
    if len(batches) == 1:   # measured at the requested size
        return runs[batches[0], s0].phase_peaks[phase]
    p1, p2 = runs[1, s0].phase_peaks[phase], runs[2, s0].phase_peaks[phase]
    a0 = max(p2 - p1, 0)
    base = p1 - a0
    if len(seqs) == 1:
        return base + B * a0
    s1 = seqs[1]
    a1 = max(runs[1, s1].phase_peaks[phase] - base, 0)
    beta = (a1 / s1 - a0 / s0) / (s1 - s0)
    if beta < 0:    # sub-linear growth: extrapolate linearly from the larger point (conservative)
        alpha, beta = a1 / s1, 0.0
    else:
        alpha = a0 / s0 - beta * s0
    return base + B * (alpha * S + beta * S * S)


def _what_was_done(batches, seqs, B, S, direct) -> str:
    if direct:
        return (f"estimated by fallback: measured at the requested batch {B}"
                + (f" and sequence {S}" if S is not None else "") + " (a real CPU step)")
    b_text = " and ".join(str(b) for b in batches)
    text = f"estimated by fallback: measured at batch {b_text}"
    if len(seqs) > 1:
        text += f" (sequence {seqs[0]}), and at batch 1 with sequence {seqs[1]}"
        return text + f", extrapolated to batch {B} and sequence {S}"
    return text + f", extrapolated to batch {B}"
