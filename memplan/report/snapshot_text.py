"""Terminal rendering of a PyTorch memory snapshot analysis (`memplan diagnose --snapshot`)."""
from __future__ import annotations

from tabulate import tabulate

from memplan.units import fmt_bytes


def render_snapshot(an, top: int = 10) -> str:
    out = [f"memplan diagnose --snapshot {an.path} ({fmt_bytes(an.file_bytes)})"]
    for d in an.devices:
        out.append("")
        out.append(f"device {d.device}: {d.n_entries} trace entries, {d.n_allocs} allocations, "
                   f"{d.n_segments} segments at the dump")
        rows = [["peak allocated", fmt_bytes(d.peak_allocated),
                 f"trace entry {d.peak_index}" + (f" (baseline {fmt_bytes(d.baseline_allocated)} before the trace)"
                                                  if d.baseline_allocated else "")]]
        if d.peak_reserved is not None:
            rows.append(["peak reserved", fmt_bytes(d.peak_reserved), "segments"])
        rows.append(["reserved at dump", fmt_bytes(d.reserved), f"allocated {fmt_bytes(d.allocated)}"])
        rows.append(["cached, unallocated", fmt_bytes(d.cached_free),
                     f"{100 * d.fragmentation:.1f} % of reserved; largest free block {fmt_bytes(d.largest_free_block)}"])
        out.append(tabulate(rows, tablefmt="plain"))
        if d.by_frame:
            out.append("")
            out.append("Live at the peak, by first user frame")
            out.append(tabulate([[g.where, fmt_bytes(g.bytes), g.count] for g in d.by_frame[:top]],
                                headers=["where", "bytes", "blocks"], tablefmt="simple"))
        if d.by_module and any(g.where for g in d.by_module):
            out.append("")
            out.append("Live at the peak, by module")
            out.append(tabulate([[g.where, fmt_bytes(g.bytes), g.count] for g in d.by_module[:top]],
                                headers=["module", "bytes", "blocks"], tablefmt="simple"))
        if d.largest_at_peak:
            out.append("")
            out.append("Largest allocations at the peak")
            out.append(tabulate([[fmt_bytes(b.size), b.where] for b in d.largest_at_peak[:top]],
                                headers=["size", "allocated at"], tablefmt="simple"))
        for oom in d.ooms:
            out.append(f"OOM recorded in the trace: {oom}")
    return "\n".join(out)
