"""The ready-to-paste snippet of a Plan: environment variables, optimizer/precision lines, checkpointing
code, batch/accumulation numbers."""
from __future__ import annotations

from memplan.plan.checkpoint import snippet as ckpt_snippet
from memplan.plan.policy import optimizer_line
from memplan.units import fmt_bytes


def plan_snippet(p) -> str:
    """Environment variables, optimizer/precision lines, checkpointing code, batch/accumulation numbers."""
    out = [f"# memplan plan: {p.workload} on {p.device or 'cpu'} ({fmt_bytes(p.capacity_bytes)}, margin "
           f"{100 * p.margin:g} %)"]
    if p.predicted is not None:
        out.append(f"# predicted peak {fmt_bytes(p.predicted.device_total_bytes)} "
                   f"({'fits' if p.fits else 'DOES NOT FIT'}; budget {fmt_bytes(p.budget_bytes)})")
    else:
        out.append("# nothing traced fits: see 'If nothing fits'")
    for k, v in p.env.items():
        out.append(f"export {k}={v!r}")
    applied = [c for c in p.changes if c.applied and c.kind in ("optimizer-impl", "optimizer", "precision")]
    if applied or p.env:
        out.append("")
    if any(c.kind in ("optimizer-impl", "optimizer") for c in applied):
        titles = "; ".join(c.title for c in applied if c.kind != "precision")
        numerics = any(not c.same_math for c in applied if c.kind != "precision")
        out.append(f"# {titles}" + (" (changes numerics)" if numerics else ""))
        out.append(optimizer_line(p.config, p.family))
    for c in applied:
        if c.kind == "precision":
            out.append(f"# {c.title} (changes numerics)")
            out.append(c.code)
    if p.batch_size is not None:
        out.append("")
        out.append(f"micro_batch_size = {p.batch_size}")
        out.append(f"grad_accum_steps = {p.grad_accum_steps}   # global batch = dp {p.dp_size} x "
                   f"{p.grad_accum_steps} x {p.batch_size} = {p.global_batch}")
        if p.seq_len:
            out.append(f"seq_len = {p.seq_len}")
    if p.checkpoint:
        out.append("")
        out.append("# activation checkpointing (non-reentrant), after building the model:")
        out.append(ckpt_snippet(p.checkpoint).rstrip())
    return "\n".join(out)
