"""`memplan validate` results for people: the text table and the HTML timeline with measured peaks."""
from __future__ import annotations

from dataclasses import replace

from tabulate import tabulate

from memplan.errors import UserError
from memplan.report.html import render_html
from memplan.report.text import config_line
from memplan.report.timeline import Curve, timeline_from_trace
from memplan.units import fmt_bytes
from memplan.validate import Validation


def render_text(v: Validation) -> str:
    """The human-readable report (the CLI prints it)."""
    def fmt_pct(x):
        return "-" if x is None else f"{x + 0.0:+.3f} %".replace("-0.000", "+0.000")

    p, m = v.predicted, v.measured
    head = [f"memplan validate: {v.workload} on {v.backend} ({v.device})",
            config_line(v.config) + (f" · estimate for {v.target}" if v.target else ""), ""]
    if v.failure is not None:
        f = v.failure
        out = head + ["RUN FAILED: " + f["summary"], ""]
        d = f.get("diagnosis") or {}
        for inc in d.get("incidents", [])[:1]:
            out.append(f"diagnosis: {inc['category']}: {inc['summary']}")
            out += [f"  - {a}" for a in inc.get("advice", [])[:3]]
        out += [f"note: {n}" for n in v.notes]
        return "\n".join(out)
    rows = [["peak allocated", fmt_bytes(p["peak_allocated_bytes"]), fmt_bytes(m["peak_allocated_bytes"]),
             fmt_pct(v.error_pct)]]
    if v.backend != "cpu":
        rows.append(["peak reserved", fmt_bytes(p["peak_reserved_bytes"]), fmt_bytes(m["peak_reserved_bytes"]),
                     fmt_pct(v.reserved_error_pct)])
        rows.append(["device total / used", fmt_bytes(p["device_total_bytes"]), fmt_bytes(m["device_used_bytes"]),
                     "(sampled)"])
    rows.append(["peak phase", p["peak_phase"], m["peak_phase"] or "-", ""])
    out = head + [tabulate(rows, headers=["", "predicted", "measured", "error"], tablefmt="simple"), ""]
    prow = [[r["phase"], fmt_bytes(r["predicted_bytes"]), fmt_bytes(r["measured_bytes"]), fmt_pct(r["error_pct"])]
            for r in v.phases]
    out += ["Peak of each phase (steady-state step)",
            tabulate(prow, headers=["phase", "predicted", "measured", "error"], tablefmt="simple"), ""]
    verdict = "OK" if v.ok else "OVER TOLERANCE"
    out.append(f"{verdict}: error {fmt_pct(v.error_pct)} (tolerance ±{v.tolerance_pct:g} %)")
    out += [f"note: {n}" for n in v.notes]
    return "\n".join(out)


def check_validation_report_path(path: str) -> None:
    """validate writes an HTML report; checked before anything runs."""
    if not str(path).endswith((".html", ".htm")):
        raise UserError(f"--report {path}: validate writes an HTML report (give a .html path)")


def write_report(path: str, v: Validation, trace) -> str:
    """An HTML timeline of the prediction with the measured per-phase peaks drawn as points."""
    check_validation_report_path(path)
    tl = timeline_from_trace(trace, capacity=v.predicted.get("capacity_bytes"),
                             title=f"memplan validate: {v.workload}",
                             summary=[("device", f"{v.backend} ({v.device})"),
                                      ("predicted peak", fmt_bytes(v.predicted["peak_allocated_bytes"])),
                                      ("measured peak", fmt_bytes(v.measured["peak_allocated_bytes"])),
                                      ("error", "-" if v.error_pct is None else f"{v.error_pct:+.3f} %")])
    last = v.config["steps"]
    xs, ys, labels = [], [], []
    for ph, b in v.measured["phase_peaks"].items():
        bands = [bd for bd in tl.bands if bd.phase == ph and bd.step == last]
        if not bands:
            continue
        bd = max(bands, key=lambda x: x.peak)
        xs.append((bd.start + bd.end) // 2)
        ys.append(int(b))
        labels.append(f"measured {ph}")
    order = sorted(range(len(xs)), key=xs.__getitem__)
    curve = Curve("measured peak per phase", tuple(xs[i] for i in order), tuple(ys[i] for i in order),
                  kind="points", point_labels=tuple(labels[i] for i in order))
    tl = replace(tl, measured=(curve,))
    return render_html(tl, path)
