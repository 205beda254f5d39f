"""Text rendering of a training config's mapping report (memplan.configs.JobConfig.mapping())."""
from __future__ import annotations

from tabulate import tabulate


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
