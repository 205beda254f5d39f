"""Text rendering of a training config's mapping report (memplan.configs.JobConfig.mapping())."""
from __future__ import annotations

from tabulate import tabulate

from memplan.units import fmt_bytes


def render_mapping(job) -> str:
    m = job.mapping()
    lines = [f"Read {m['source']} as {m['format']}:"]
    rows = [(u["key"], _short(u["value"]), u["maps_to"]) for u in m["used"]]
    lines.append(tabulate(rows, headers=["key", "value", "memplan"]))
    if m["ignored"]:
        by_why: dict[str, list[str]] = {}
        for r in m["ignored"]:
            by_why.setdefault(r["why"], []).append(r["key"])
        lines.append("Keys that do not change the estimate:")
        lines += [f"  {', '.join(keys)}: {why}" for why, keys in by_why.items()]
    lines += [f"note: {n}" for n in m["notes"]]
    return "\n".join(lines)


def _short(v) -> str:
    s = str(v)
    return s if len(s) <= 40 else s[:37] + "..."


def render_deepspeed(est) -> str:
    """Per-rank device and host memory of a DeepSpeed ZeRO estimate."""
    lines = [f"DeepSpeed ZeRO-{est.stage} on {est.world_size} rank(s), {est.precision} weights — {est.method_note}",
             f"device peak per rank  {fmt_bytes(est.device_peak_bytes)}  during {est.device_peak_phase}",
             f"host memory per rank  {fmt_bytes(est.host_bytes)}", "",
             tabulate([(k, fmt_bytes(v)) for k, v in est.device_components.items()], headers=["device", "bytes"])]
    if est.host_components:
        lines += ["", tabulate([(k, fmt_bytes(v)) for k, v in est.host_components.items()], headers=["host", "bytes"])]
    lines += ["", tabulate([(k, fmt_bytes(v)) for k, v in est.phase_totals.items()], headers=["phase", "device"])]
    if est.model_states:
        lines.append(f"DeepSpeed's {est.model_states['estimator']}: {fmt_bytes(est.model_states['device_bytes'])} "
                     "of model states per device (no activations, buffers; it assumes every parameter trains)")
    lines += [f"note: {n}" for n in est.notes]
    return "\n".join(lines)
