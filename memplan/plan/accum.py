"""Gradient accumulation for a target global batch: global = dp_size x grad_accum x micro_batch.

Given the largest micro-batch that fits (`max_micro`), the target global batch G and the data-parallel
size D, pick the fewest accumulation steps K such that an integer micro-batch b = G / (D K) fits; when
G is not a multiple of D (or no divisor of G/D fits), take K = ceil(G / (D * max_micro)) with the
smallest micro-batch that reaches G, and say how far the global batch is off.
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
    k_min = -(-G // (D * max_micro))
    exact = None
    if G % D == 0:
        per_rank = G // D
        for k in range(k_min, per_rank + 1):
            if per_rank % k == 0:
                exact = (k, per_rank // k)
                break
    # an exact split is preferred unless it needs many more (smaller, slower) micro-steps
    if exact is not None and exact[0] <= max(k_min + 1, int(1.25 * k_min)):
        k, b = exact
        note = "" if k == k_min else (
            f"{k} steps (not {k_min}) so that the micro-batch divides the {G // D} samples per rank")
        return Accumulation(G, D, b, k, G, True, note)
    k = k_min
    b = -(-G // (D * k))
    got = D * k * b
    why = (f"{G} is not a multiple of dp size {D}" if G % D else
           f"an exact split needs {exact[0]} micro-steps of {exact[1]}")
    return Accumulation(G, D, b, k, got, False,
                        f"{why}: global batch {got} ({got - G:+d} vs the target) with {k} steps of {b}; "
                        f"drop {got - G} samples per optimizer step to match exactly")
