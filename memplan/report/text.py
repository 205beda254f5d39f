"""Human-readable tables (tabulate) for the terminal."""
from __future__ import annotations

from tabulate import tabulate

from memplan.units import fmt_bytes


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def config_line(cfg: dict) -> str:
    bits = [f"batch {cfg['batch_size']}"]
    if cfg.get("seq_len"):
        bits.append(f"seq {cfg['seq_len']}")
    impl = cfg["optimizer_impl"]
    if cfg.get("optimizer_impl_resolved"):
        impl = f"{impl}: {cfg['optimizer_impl_resolved']}"
    bits += [cfg["precision"], f"{cfg['optimizer']} ({impl})"]
    if cfg.get("grad_accum", 1) > 1:
        bits.append(f"grad-accum {cfg['grad_accum']}")
    if cfg.get("clip_grad_norm"):
        bits.append(f"clip {cfg['clip_grad_norm']}")
    if cfg.get("checkpoint"):
        bits.append("checkpoint " + ",".join(cfg["checkpoint"]))
    return " · ".join(bits)


def trace_mode_line(mode: str, reason: str) -> str:
    """Which tracer ran: block-once (repeated layers traced once) or full, and why."""
    return f"trace: {mode}" + (f" ({reason})" if reason else "")


def render_estimate(est, top: int = 10) -> str:
    out = [f"memplan analyze: {est.workload}", config_line(est.config)
           + (f" · device {est.device}" if est.device else ""), ""]
    if est.method != "trace":
        out += [f"METHOD: {est.method.upper()} — " + (est.notes[0] if est.notes else "not traced"), ""]
    elif est.trace_mode:
        out += [trace_mode_line(est.trace_mode, est.trace_mode_reason), ""]
    rows = [["peak allocated", fmt_bytes(est.peak_allocated_bytes),
             f"during {est.peak_phase} (step {est.peak_step}, micro-step {est.peak_micro_step})"]]
    if est.device and est.device != "cpu":
        rows.append(["peak reserved", fmt_bytes(est.peak_reserved_bytes),
                     f"allocator fragmentation {fmt_bytes(est.fragmentation_bytes)}"])
        if est.outside_allocator_known:
            rows.append(["outside allocator", fmt_bytes(est.outside_allocator_bytes), "runtime / context (catalog)"])
            rows.append(["device total", fmt_bytes(est.device_total_bytes), "reserved + outside allocator"])
        else:
            rows.append(["outside allocator", "unknown", "not in the catalog (runtime / context / HCCL buffers)"])
            rows.append(["device total", fmt_bytes(est.device_total_bytes), "reserved only (outside allocator unknown)"])
    if est.capacity_bytes is not None:
        verdict = "FITS" if est.fits else "DOES NOT FIT"
        excl = "" if est.outside_allocator_known else " (excludes memory outside the allocator)"
        rows.append(["capacity", fmt_bytes(est.capacity_bytes),
                     f"{verdict}: headroom {fmt_bytes(est.headroom_bytes, signed=True)}{excl}"])
    out.append(tabulate(rows, tablefmt="plain"))
    out.append("")
    total = est.peak_allocated_bytes
    cat_rows = [[c, fmt_bytes(b), _pct(b, total)] for c, b in est.breakdown_at_peak.items() if b]
    out.append("Breakdown at the peak")
    out.append(tabulate(cat_rows, headers=["category", "bytes", "share"], tablefmt="simple"))
    out.append("")
    out.append("Peak of each phase (steady-state step)")
    out.append(tabulate([[p, fmt_bytes(b)] for p, b in est.phase_peaks.items()],
                        headers=["phase", "peak allocated"], tablefmt="simple"))
    if est.modules and top:
        out.append("")
        out.append(f"Top {min(top, len(est.modules))} modules by memory live at the peak")
        mrows = []
        for m in est.modules[:top]:
            c = m["by_category"]
            mrows.append([m["module"], fmt_bytes(m["bytes_at_peak"]), fmt_bytes(c.get("parameters", 0)),
                          fmt_bytes(c.get("gradients", 0)), fmt_bytes(c.get("optimizer_state", 0)),
                          fmt_bytes(c.get("activations", 0) + c.get("temporaries", 0)),
                          fmt_bytes(m["activations_saved_bytes"])])
        out.append(tabulate(mrows, headers=["module", "at peak", "params", "grads", "optim", "acts+temps",
                                            "saved for bw"], tablefmt="simple"))
    for n in est.notes:
        out.append(f"note: {n}")
    return "\n".join(out)
