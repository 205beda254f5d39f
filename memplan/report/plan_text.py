"""A Plan for people: the ranked changes, the checks behind them, and a ready-to-paste snippet.

Text for the terminal (tabulate), and the same text as a Markdown or HTML report file.
"""
from __future__ import annotations

import html

from tabulate import tabulate

from memplan.units import fmt_bytes
from memplan.errors import UserError


def _pct_of(part: int | None, whole: int) -> str:
    return "-" if part is None or not whole else f"{100 * part / whole:.0f} %"


def render_plan(p) -> str:
    """The plan as text for the terminal: headline, ranked changes, the searches behind them, the snippet."""
    out = _headline(p)
    for section in (_changes, _size_search, _accumulation, _checkpointing, _allocator, _if_nothing_fits):
        out += section(p)
    for note in p.notes:
        out.append(f"note: {note}")
    out.append(_checked(p))
    out.append("")
    out.append("Ready to paste:")
    out.append(p.snippet)
    return "\n".join(out)


def _checked(p) -> str:
    """How much checking the plan did: traces (by mode) and allocator replays."""
    counts = p.trace_counts or {}
    modes = ", ".join(f"{n} {m}" for m, n in sorted((counts.get("by_mode") or {}).items()))
    replays = counts.get("replays")
    return (f"checked with {p.n_traces} traces" + (f" ({modes})" if modes else "")
            + (f" and {replays} replays of them" if replays else "") + f" in {p.seconds:.1f} s")


def _headline(p) -> list[str]:
    """The capacity, the configuration as given, and the plan's configuration."""
    cap = p.capacity_bytes
    out = [f"memplan plan: {p.workload} · device {p.device or 'cpu'} · capacity {fmt_bytes(cap)} · "
           f"budget {fmt_bytes(p.budget_bytes)} (margin {100 * p.margin:g} %)", ""]
    b = p.baseline
    accum = b.config.get("grad_accum", 1)
    out.append(f"as given: batch {b.config['batch_size']}" + (f" x accum {accum}" if accum > 1 else "")
               + (f", seq {b.config['seq_len']}" if b.config.get("seq_len") else "")
               + f", {b.config['precision']}, {b.config['optimizer']} -> {fmt_bytes(b.device_total_bytes)} "
               f"({_pct_of(b.device_total_bytes, cap)} of capacity, peak in {b.peak_phase}) -> "
               + ("fits" if b.device_total_bytes <= p.budget_bytes else "does not fit"))
    if p.predicted is not None:
        e = p.predicted
        out.append(f"plan:     batch {p.batch_size} x accum {p.grad_accum_steps}"
                   + (f", seq {p.seq_len}" if p.seq_len else "")
                   + (f", {len(p.checkpoint)} modules checkpointed" if p.checkpoint else "")
                   + f" -> {fmt_bytes(e.device_total_bytes)} ({_pct_of(e.device_total_bytes, cap)} of capacity, "
                   f"re-traced) -> " + ("FITS" if p.fits else "DOES NOT FIT"))
    numerics = [c.title + (f" ({c.note})" if c.note else "") for c in p.changes if c.applied and not c.same_math]
    if numerics:
        out.append(f"numerics: CHANGED — {'; '.join(numerics)}")
        if p.numerics_reason:
            out.append(f"          {p.numerics_reason} (--same-math-only forbids this)")
    out.append("")
    return out


def _changes(p) -> list[str]:
    """Every change, by payoff."""
    cap = p.capacity_bytes
    out: list[str] = []
    if p.changes:
        out.append("Changes, by payoff (saving vs. as given; negative = uses more memory)")
        rows = []
        for i, c in enumerate(p.changes, 1):
            rows.append([i, "yes" if c.applied else "", c.title, fmt_bytes(c.predicted_total_bytes),
                         _pct_of(c.predicted_total_bytes, cap), fmt_bytes(c.saving_bytes, signed=True),
                         "yes" if c.same_math else "no", c.method])
        out.append(tabulate(rows, headers=["#", "in plan", "change", "predicted", "of cap.", "saving",
                                           "same math", "how"], tablefmt="simple"))
        out.append("")
    return out


def _size_search(p) -> list[str]:
    """The batch (or sequence) search and its probes."""
    out: list[str] = []
    s = p.batch_search or p.seq_search
    if s is not None:
        what = "micro-batch" if s.var == "batch_size" else "sequence length"
        a = p.accumulation
        upto = (f" (searched up to the global batch {a.target_global_batch}; --maximize-batch searches further)"
                if a is not None and s.var == "batch_size" and s.best and s.best * a.dp_size >= a.target_global_batch
                else "")
        line = f"Largest {what}{upto}: {s.best if s.best else 'none fits'}"
        if s.predicted:
            line += f" (two-point fit predicted {s.predicted}"
            if s.max_error_pct is not None:
                line += f", off by at most {s.max_error_pct:.1f} % at the verified sizes"
            line += ")"
        line += f"; {s.n_probes} sizes traced: " + ", ".join(
            f"{x}{'✓' if ok else '✗'}" for x, _t, ok in s.probes)
        out.append(line)
        if s.affine is False:
            out.append(f"  growth is not affine in {s.var.replace('_', ' ')}")
        out.append("")
    return out


def _accumulation(p) -> list[str]:
    """How the global batch is made."""
    out: list[str] = []
    if p.accumulation is not None:
        a = p.accumulation
        out.append(f"Accumulation: global batch {a.global_batch} = dp {a.dp_size} x {a.grad_accum_steps} steps x "
                   f"micro-batch {a.micro_batch}" + (f" ({a.note})" if a.note else ""))
        out.append("")
    return out


def _checkpointing(p) -> list[str]:
    """The checkpointing strategies compared."""
    cap = p.capacity_bytes
    out: list[str] = []
    cp = p.checkpointing
    if cp is not None:
        out.append("Activation checkpointing" + (f": {cp.reason}" if cp.reason else ""))
        rows = [[s.name, len(s.modules), fmt_bytes(s.predicted_total_bytes), _pct_of(s.predicted_total_bytes, cap),
                 f"{s.recompute_pct:.1f} %", {True: "yes", False: "no", None: "-"}[s.fits], s.method]
                for s in cp.strategies]
        out.append(tabulate(rows, headers=["strategy", "modules", "predicted", "of cap.", "recompute",
                                           "fits", "how"], tablefmt="simple"))
        out.append("  (recompute = forward FLOPs recomputed / step FLOPs taken as 3x forward; at micro-batch 1)")
        out.append("")
    return out


def _allocator(p) -> list[str]:
    """The allocator settings tried."""
    out: list[str] = []
    ap = p.alloc_policy
    if ap.trials:
        out.append(f"Allocator settings tried ({ap.env_var}), simulated on the plan's trace")
        rows = [[t.conf or "(defaults)", t.status, fmt_bytes(t.device_total_bytes), fmt_bytes(t.fragmentation_bytes),
                 t.reason[:70]] for t in ap.trials]
        out.append(tabulate(rows, headers=["value", "status", "device total", "fragmentation", "why"],
                            tablefmt="simple"))
        out.append("")
    return out


def _if_nothing_fits(p) -> list[str]:
    """What would fit when nothing does."""
    out: list[str] = []
    if p.if_nothing_fits:
        n = p.if_nothing_fits
        out.append("If nothing fits")
        if n.get("sharding"):
            s = n["sharding"]
            out.append(f"  shard over {s['devices']} devices ({s['method']}): about {fmt_bytes(s['per_rank_bytes'])} "
                       "per rank")
        else:
            out.append("  sharding model states over up to 1024 devices is not enough on its own")
        for d in n.get("bigger_devices", []):
            out.append(f"  or a device with more memory: {d['device']} ({fmt_bytes(d['capacity_bytes'])})")
        out.append(f"  ({n['note']})")
        out.append("")
    return out


def check_plan_report_path(path: str) -> None:
    """A plan report is Markdown (.md) or HTML (.html); checked before the plan is made."""
    if not path.endswith((".md", ".html", ".htm")):
        raise UserError(f"--report {path}: use a .md or .html file")


def write_plan_report(path: str, p) -> None:
    """Write the plan as Markdown (.md) or HTML (.html)."""
    check_plan_report_path(path)
    text = render_plan(p)
    if path.endswith(".md"):
        body = f"# memplan plan: {p.workload}\n\n```\n{text}\n```\n"
    else:
        body = ("<!doctype html><meta charset='utf-8'><title>memplan plan</title>"
                f"<h1>memplan plan: {html.escape(p.workload)}</h1><pre>{html.escape(text)}</pre>\n")
    with open(path, "w", encoding="utf-8") as f:
        f.write(body)
