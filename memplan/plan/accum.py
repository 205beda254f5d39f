"""Gradient accumulation for a target global batch: global = dp_size x grad_accum x micro_batch.

Given the largest micro-batch that fits (`max_micro`), the target global batch G and the data-parallel
size D, the global batch is kept exactly whenever D divides G: the largest micro-batch b <= max_micro that
divides the G / D samples per rank, with K = G / (D b) steps (b = 1 always fits, so an exact split always
exists; when it needs more micro-steps than the fewest possible, the note says so and names the
nearest global batch that would take fewer). When D does not divide G no split reaches G: the nearest
multiple of D is planned instead, and the note says why.
"""
from __future__ import annotations

from dataclasses import dataclass

from memplan.errors import UserError


@dataclass(frozen=True)
class Accumulation:
    target_global_batch: int
    dp_size: int
    micro_batch: int
    grad_accum_steps: int
    global_batch: int          # dp_size * grad_accum_steps * micro_batch
    exact: bool
    note: str = ""

    def to_dict(self) -> dict:
        return {
            "target_global_batch": self.target_global_batch, "dp_size": self.dp_size,
            "micro_batch": self.micro_batch, "grad_accum_steps": self.grad_accum_steps,
            "global_batch": self.global_batch, "exact": self.exact, "note": self.note,
        }


def accumulation(target_global_batch: int, max_micro: int, dp_size: int = 1) -> Accumulation:
    """Micro-batch and accumulation steps reaching `target_global_batch` with micro-batches <= `max_micro`."""
    G, D = int(target_global_batch), int(dp_size)
    if G < 1:
        raise UserError(f"--target-global-batch must be >= 1, got {G}")
    if D < 1:
        raise UserError(f"--dp-size must be >= 1, got {D}")
    if max_micro < 1:
        raise UserError("no micro-batch fits, so no accumulation can reach the target")
    if G % D == 0:
        b, k = _split(G // D, max_micro)
        k_min = -(-G // (D * max_micro))
        note = ""
        if k > k_min:
            quick = D * k_min * min(max_micro, -(-G // (D * k_min)))
            note = (f"{k} micro-steps of {b} (not {k_min}): the micro-batch must divide the {G // D} samples "
                    f"per rank; global batch {quick} would take {k_min} steps")
        return Accumulation(G, D, b, k, G, True, note)
    lo, hi = (G // D) * D, (G // D + 1) * D
    near = hi if lo == 0 or hi - G <= G - lo else lo
    b, k = _split(near // D, max_micro)
    alt = f" (or {lo})" if near == hi and lo else f" (or {hi})" if near == lo else ""
    return Accumulation(G, D, b, k, near, False,
                        f"{G} is not a multiple of dp size {D}, so no split reaches it: the nearest global batch "
                        f"is {near}{alt}, planned as {k} steps of {b} per rank")


def _split(per_rank: int, max_micro: int) -> tuple[int, int]:
    """(micro-batch, steps): the largest micro-batch <= max_micro that divides `per_rank`."""
    b = max(d for d in range(1, min(per_rank, max_micro) + 1) if per_rank % d == 0)
    return b, per_rank // b
