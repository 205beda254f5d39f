"""Choose concrete advice for an incident, and relate an OOM to memplan's own estimate.

Advice comes from `data/advice.json` by id; the allocator knobs follow the backend: CUDA gets
`PYTORCH_CUDA_ALLOC_CONF`, Ascend gets `PYTORCH_NPU_ALLOC_CONF`, where torch_npu does not allow
`expandable_segments` together with `max_split_size_mb` or `garbage_collection_threshold`.
Only real options are named (see DESIGN.md, "Blog-level APIs that do NOT exist").
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from memplan.diagnose._catalog import get_advice, notes
from memplan.diagnose._types import Advice, Category
from memplan.units import fmt_bytes
from memplan.diagnose._catalog import advice_catalog

MiB = 1 << 20

_BREAKDOWN_ADVICE = {
    "activations": ("MP002", "MP001"),
    "temporaries": ("MP001", "MP002"),
    "inputs": ("MP001",),
    "optimizer_state": ("MP003",),
    "gradients": ("MP003",),
    "parameters": ("MP003",),
}


def _split_mb(req: int | None) -> int:
    if not req:
        return 512
    mib = max(1, req // MiB)
    return int(max(20, min(512, 2 ** math.floor(math.log2(mib)))))


def choose_advice(category: Category, *, numbers: Mapping[str, Any], flags: set[str], codes: tuple[str, ...],
                  device: str | None, breakdown_top: str | None = None) -> tuple[Advice, ...]:
    npu = bool(device and device.startswith("npu")) or "npu" in flags or any(
        c.startswith(("E", "ERR", "HCCL")) or (c.isdigit() and len(c) == 6) for c in codes)
    cuda = bool(device and device.startswith("cuda")) or "cuda" in flags
    ids: list[str] = []
    if category == Category.CAPACITY:
        if "host" in flags:
            ids = ["MP025"]
        else:
            ids = list(_BREAKDOWN_ADVICE.get(breakdown_top or "", ())) + ["MP001", "MP002", "MP003"]
            if not breakdown_top:
                ids.append("MP026")
    elif category == Category.FRAGMENTATION:
        # the TPU runtime's reserve failure (dev batch 52): PyTorch's allocator settings do not apply there
        ids = ["MP006"] if "xla_reserve" in flags else ["MP005" if npu and not cuda else "MP004", "MP006"]
        if not breakdown_top:
            ids.append("MP026")
    elif category == Category.FOREIGN_MEMORY:
        ids = ["MP007"] + (["MP008"] if "multi_process" in flags else []) + ["MP009"]
    elif category == Category.ABSURD_REQUEST:
        ids = ["MP010"]
    elif category == Category.ENVIRONMENT:
        if "free_ok" in flags:
            ids = ["MP011"]
        elif "shm" in flags:
            ids = ["MP027", "MP014"]
        elif "loader_shm" in flags:
            ids = ["MP029", "MP014"]
        elif "device_open" in flags:
            ids = ["MP014", "MP012" if npu else "MP013"]
        elif npu and not cuda:
            ids = ["MP012", "MP014"]
        else:
            ids = ["MP013", "MP014"]
    elif category == Category.KERNEL_FAULT:
        if "hw_fault" in flags:
            ids = ["MP031"]
        else:
            ids = ["MP015"] + (["MP016"] if "assert" in flags else []) + ["MP017"]
    elif category == Category.COMM:
        ids = ["MP018", "MP019" if npu and not cuda else "MP020"] + (["MP027"] if "shm" in flags else [])
    elif category == Category.INVALID_PARAM:
        ids = ["MP032"] if "ddp_usage" in flags else ["MP021"]
    elif category == Category.OP_NOT_SUPPORTED:
        ids = ["MP030"] if "limit_not_shortage" in flags else ["MP022"]
    elif category == Category.BENIGN:
        ids = ["MP023"]
    else:
        ids = ["MP024"]
    # Code-specific advice from the notes, after the category's own.
    for c in codes:
        for extra in notes().get(c, {}).get("advice", []):
            if extra not in ids and len(ids) < 5 and category.value in _applies(extra):
                ids.append(extra)
    seen: list[str] = []
    for i in ids:
        if i not in seen:
            seen.append(i)
    fill = {"split_mb": _split_mb(numbers.get("requested_bytes"))}
    return tuple(get_advice(i, **fill) for i in seen)


def _applies(advice_id: str) -> list[str]:
    return advice_catalog()[advice_id].get("applies_to", [])


def relate_estimate(numbers: Mapping[str, Any], estimate: Mapping[str, Any]) -> tuple[dict[str, Any], str, str | None]:
    """Compare an OOM with an analyze estimate. Returns (facts, one-paragraph text, top breakdown category)."""
    pa = _int(estimate.get("peak_allocated_bytes"))
    pr = _int(estimate.get("peak_reserved_bytes"))
    phase = estimate.get("peak_phase")
    cap = _int(numbers.get("total_bytes")) or _int(estimate.get("capacity_bytes"))
    breakdown = estimate.get("breakdown_at_peak") or {}
    top = None
    if isinstance(breakdown, Mapping) and breakdown:
        items = [(k, _int(v) or 0) for k, v in breakdown.items()]
        items.sort(key=lambda kv: -kv[1])
        top = items[0][0] if items[0][1] > 0 else None
    alloc = _int(numbers.get("allocated_bytes"))
    req = _int(numbers.get("requested_bytes"))
    facts: dict[str, Any] = {
        "predicted_peak_allocated_bytes": pa, "predicted_peak_reserved_bytes": pr, "peak_phase": phase,
        "device_total_bytes": cap, "largest_category_at_peak": top,
    }
    parts = []
    peak = pr or pa
    if peak:
        parts.append(f"memplan predicted a peak of {fmt_bytes(pa)} allocated / {fmt_bytes(pr)} reserved"
                     + (f" in {phase}" if phase else ""))
    if peak and cap:
        fits = peak <= cap
        facts["predicted_fits"] = fits
        facts["predicted_margin_bytes"] = cap - peak
        if fits:
            parts.append(f"which fits the {fmt_bytes(cap)} device with {fmt_bytes(cap - peak)} to spare")
        else:
            parts.append(f"which already exceeds the {fmt_bytes(cap)} device by {fmt_bytes(peak - cap)}: "
                         "the estimate predicted this failure")
    if alloc is not None and req is not None and pa:
        at_fail = alloc + req
        facts["needed_at_failure_bytes"] = at_fail
        facts["excess_over_prediction_bytes"] = at_fail - pa
        if at_fail > pa * 1.05:
            parts.append(f"at the failure the run needed {fmt_bytes(at_fail)}, {fmt_bytes(at_fail - pa)} more than "
                         "predicted — look for memory the estimate does not model (longer inputs, extra buffers, "
                         "another process)")
        else:
            parts.append(f"at the failure the run needed {fmt_bytes(at_fail)}, within the prediction")
    if top:
        share = ""
        total_b = sum((_int(v) or 0) for v in breakdown.values())
        if total_b:
            share = f" ({100 * (_int(breakdown[top]) or 0) / total_b:.0f} % of the peak)"
        parts.append(f"the largest part at the peak is {top}{share}")
    text = ("; ".join(parts) + ".") if parts else "The estimate has no peak numbers to compare with."
    return facts, text[:1].upper() + text[1:], top


def _int(v: Any) -> int | None:
    try:
        return None if v is None else int(v)
    except (TypeError, ValueError):
        return None
