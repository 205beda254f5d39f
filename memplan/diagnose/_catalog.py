"""Error-code catalogs kept as data (`memplan/diagnose/data/`), `decode(code)`, and `code_category(code)` with the
table of backend-prefixed numbers (`PREFIXED`): the one reading of a code found in a log.

Catalogs, each row with the repository, path and commit it was read from:
- `acl_codes.tsv`: AscendCL numeric codes (`ACL_ERROR_*`, runtime `ACL_ERROR_RT_*`, `ACL_ERROR_GE_*`),
  aclnn status codes and HCCL `HcclResult` values, including renumbered (`transient`) and aliased rows.
- `cann_codes.tsv`: CANN string codes (`E` + module char + 4 digits); `cann_modules.tsv` names the modules.
- `torch_npu_codes.tsv`: torch_npu's `ERRxxyyy` codes (sub-module x error kind).
- `cuda_nccl_codes.tsv`: the CUDA runtime and NCCL results users meet in training, with the exact texts
  of `cudaGetErrorString` / `ncclGetErrorString`.
- `cuda_legacy_codes.tsv`: the CUDA runtime numbering before CUDA 10.1 (74 = misaligned address, 77 = illegal
  address, 59 = device-side assert), with the texts of that era, for THC / Caffe lines (`cuda runtime error (N)`).
- `cuda_lib_status.tsv`: the status names of the CUDA libraries (cuBLAS, cuDNN, cuRAND, cuFFT, cuSOLVER, cuTENSOR,
  cuSPARSE) with the category each argues for.
- `drv_codes.tsv`: the Ascend driver's `drvError_t` values (`drvRetCode=N` in CANN plog lines).
- `cuda_driver_codes.tsv`: the CUDA Driver API's `CUresult` names (`CUDA_ERROR_*`, cuda.h) with the category
  each argues for, as Taichi, Numba, CuPy, JAX/XLA, TensorRT and PhysX print them (dev batch 42).
- `ort_status_codes.tsv`: onnxruntime's `StatusCode` values as `[ONNXRuntimeError] : N : NAME :` prints them
  (dev batch 42).
- `trt_onnx_parser_codes.tsv`: TensorRT's ONNX parser `nvonnxparser::ErrorCode` values (`In node N (func): NAME:`,
  `In function func:` then `[N] ...`), and `trt_error_codes.tsv`: TensorRT's own `nvinfer1::ErrorCode` values
  (`[file::func::line] Error Code N: ...`), each with the category its usual cause has (dev batch 44).
- `phrases.tsv`: the weak layer, informal / thin / Chinese wordings of each category with their sources.
- `messages.tsv`: message texts that name a cause, each with its source; `code_contexts.tsv`: where a bare
  number in a log is an error code (compiled by `_rules`).
- `notes.json`: memplan's own explanations for the most common codes; `advice.json`: advice ids.

Known limitations: explanations of uncommon codes are built from their catalog names and titles.
"""
from __future__ import annotations

import csv
import functools
import json
import re
from importlib import resources
from typing import Any

from memplan.diagnose._types import Advice, Category, CodeInfo
from memplan.errors import UserError

_DATA = "memplan.diagnose.data"


def _read_tsv(name: str) -> list[dict[str, str]]:
    text = resources.files(_DATA).joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines(), delimiter="\t"))


def _read_json(name: str) -> Any:
    return json.loads(resources.files(_DATA).joinpath(name).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _rows(name: str) -> tuple[dict[str, str], ...]:
    """The rows of one TSV data file, read once."""
    return tuple(_read_tsv(name))


def acl_rows() -> tuple[dict[str, str], ...]:
    return _rows("acl_codes.tsv")


def cann_rows() -> tuple[dict[str, str], ...]:
    return _rows("cann_codes.tsv")


def npu_err_rows() -> tuple[dict[str, str], ...]:
    return _rows("torch_npu_codes.tsv")


def cuda_nccl_rows() -> tuple[dict[str, str], ...]:
    return _rows("cuda_nccl_codes.tsv")


def drv_rows() -> tuple[dict[str, str], ...]:
    return _rows("drv_codes.tsv")


def cuda_legacy_rows() -> tuple[dict[str, str], ...]:
    return _rows("cuda_legacy_codes.tsv")


def cuda_lib_rows() -> tuple[dict[str, str], ...]:
    return _rows("cuda_lib_status.tsv")


def rule_category(category: str) -> str:
    """A catalog row's category as the rules argue it: the three out-of-memory categories are one `memory` (the
    allocator's numbers, not the code, decide between them)."""
    return "memory" if category in ("capacity", "fragmentation", "foreign-memory") else category


def cuda_driver_rows() -> tuple[dict[str, str], ...]:
    return _rows("cuda_driver_codes.tsv")


def ort_status_rows() -> tuple[dict[str, str], ...]:
    return _rows("ort_status_codes.tsv")


def trt_parser_rows() -> tuple[dict[str, str], ...]:
    return _rows("trt_onnx_parser_codes.tsv")


def trt_error_rows() -> tuple[dict[str, str], ...]:
    return _rows("trt_error_codes.tsv")


def opencl_rows() -> tuple[dict[str, str], ...]:
    return _rows("opencl_codes.tsv")


def message_rows() -> tuple[dict[str, str], ...]:
    return _rows("messages.tsv")


def phrase_rows() -> tuple[dict[str, str], ...]:
    return _rows("phrases.tsv")


def code_context_rows() -> tuple[dict[str, str], ...]:
    return _rows("code_contexts.tsv")


@functools.lru_cache(maxsize=None)
def cann_modules() -> dict[str, dict[str, str]]:
    return {r["module"]: r for r in _read_tsv("cann_modules.tsv")}


@functools.lru_cache(maxsize=None)
def notes() -> dict[str, dict[str, Any]]:
    return _read_json("notes.json")["codes"]


@functools.lru_cache(maxsize=None)
def advice_catalog() -> dict[str, dict[str, Any]]:
    entries = _read_json("advice.json")["advice"]
    return {e["id"]: e for e in entries}


class _SafeDict(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def get_advice(advice_id: str, **fill: Any) -> Advice:
    e = advice_catalog()[advice_id]
    return Advice(advice_id, e["title"], e["text"].format_map(_SafeDict(fill)))


# ---------------------------------------------------------------- indexes


@functools.lru_cache(maxsize=None)
def _acl_by_value() -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = {}
    for r in acl_rows():
        if r["family"].startswith("hccl"):
            continue
        out.setdefault(r["value"], []).append(r)
    return out


@functools.lru_cache(maxsize=None)
def _hccl_by_value() -> dict[str, dict[str, str]]:
    return {r["value"]: r for r in acl_rows() if r["family"].startswith("hccl")}


@functools.lru_cache(maxsize=None)
def _by_name() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for r in acl_rows():
        out.setdefault(r["name"].upper(), r)
    for r in cuda_nccl_rows():
        out.setdefault(r["name"].upper(), dict(r, kind=r["family"]))
    for r in drv_rows():
        out.setdefault(r["name"].upper(), dict(r, kind="drv", family="drv"))
    return out


@functools.lru_cache(maxsize=None)
def _cann_by_code() -> dict[str, dict[str, str]]:
    return {r["code"]: r for r in cann_rows()}


@functools.lru_cache(maxsize=None)
def _npu_err_by_code() -> dict[str, dict[str, str]]:
    return {r["code"]: r for r in npu_err_rows()}


@functools.lru_cache(maxsize=None)
def _cuda_by_value() -> dict[str, dict[str, str]]:
    return {r["value"]: r for r in cuda_nccl_rows() if r["family"] == "cuda"}


@functools.lru_cache(maxsize=None)
def _cuda_legacy_by_value() -> dict[str, dict[str, str]]:
    return {r["value"]: r for r in cuda_legacy_rows()}


@functools.lru_cache(maxsize=None)
def _cuda_driver_by_value() -> dict[str, dict[str, str]]:
    """CUresult numbers (cuda.h), for a driver call's number printed next to the call's name (dev batch 71)."""
    return {r["value"]: r for r in cuda_driver_rows()}


@functools.lru_cache(maxsize=None)
def _drv_by_value() -> dict[str, dict[str, str]]:
    return {r["value"]: r for r in drv_rows()}


@functools.lru_cache(maxsize=None)
def _nccl_by_value() -> dict[str, dict[str, str]]:
    return {r["value"]: r for r in cuda_nccl_rows() if r["family"] == "nccl"}


# Backend-prefixed numbers ('CUDA:2', 'CUDRV:700', ...) as memplan.diagnose's rules write them: per prefix, the
# table that names a value and the label of a value it does not know. The one list of those prefixes
# (`code_category` names codes by it; memplan.diagnose._rules writes a code context's number with it).
PREFIXED = {"HCCL": (_hccl_by_value, "HCCL result"), "CUDA": (_cuda_by_value, "cuda runtime error"),
            "NCCL": (_nccl_by_value, "NCCL result"), "DRV": (_drv_by_value, "driver error"),
            "CUDA10": (_cuda_legacy_by_value, "cuda runtime error (CUDA <= 10.0 numbering)"),
            "CUDRV": (_cuda_driver_by_value, "CUDA driver result (CUresult)")}


def is_prefixed(code: str) -> bool:
    """Whether `code` is a backend-prefixed number ('CUDA:2', 'CUDRV:700', ...) named from its catalog."""
    prefix, sep, _ = code.partition(":")
    return bool(sep) and prefix in PREFIXED


# codes that name a whole class of failures (a generic internal error): they argue only weakly
_GENERIC_CODES = {"ERR00100", "ERR01100", "ERR03100", "ERR00005", "ERR01005", "500001", "500002", "500003",
                  "500000", "ERR02200", "ERR01200"}


@functools.lru_cache(maxsize=4096)
def code_category(code: str) -> tuple[str | None, int, str]:
    """(category or None, strength, display name) for a code found in a log."""
    prefix, _, value = code.partition(":")
    if value and prefix in PREFIXED:
        table, label = PREFIXED[prefix]
        row = table().get(value)
        if not row:
            return None, 0, f"{label} {value}"
        return rule_category(row["category"]), (1 if row["category"] == "unknown" else 2), row["name"]
    try:
        info = decode(code)
    except Exception:  # a code that does not decode is just context
        return None, 0, code
    c = info.category.value
    if not info.known:
        # not catalogued: only the family its shape implies (weak), or nothing
        return (None, 0, code) if c == "unknown" else (rule_category(c), 1, code)
    strength = 2
    if code in _GENERIC_CODES or c == "unknown" or (code.startswith("E") and code.endswith("9999")):
        strength = 1
    return rule_category(c), strength, code


def codes_argue(codes) -> bool:
    """Whether any of `codes` names a category (a code no catalog knows says nothing)."""
    return any(code_category(c)[0] for c in codes)


# ---------------------------------------------------------------- wording

_WORDS = {
    "RT": "runtime", "GE": "graph engine", "AICORE": "AI Core", "AICPU": "AI CPU", "AIVEC": "AI vector",
    "OOM": "out of memory", "PARAM": "parameter", "PARA": "parameter", "PTR": "pointer", "DEVICEID": "device id",
    "DRV": "driver", "TS": "task scheduler", "PROF": "profiling", "ERR": "error", "E": "error", "MEM": "memory",
    "FLOW": "flow", "OPP": "operator package", "OP": "operator", "ACLNN": "aclnn", "CCE": "CCE", "DMA": "DMA",
    "HBM": "HBM", "ECC": "ECC", "ID": "id", "FFTS": "FFTS", "NOTIFY": "notify", "CDQ": "CDQ", "SOC": "SoC",
    "IPC": "IPC", "MTE": "MTE", "UCE": "UCE", "TCP": "TCP", "ROCE": "RoCE", "CQE": "CQE", "SDMA": "SDMA",
}

_FAULT_TEXT = {
    "caller": "the caller (a parameter or usage error)",
    "resource": "resources (memory, streams, events) ran out or are unavailable",
    "storage/feature": "storage limits or an unsupported feature",
    "internal": "an internal, driver or hardware failure",
    "system": "the system (network, OS, peer)",
    "none": "nobody (success)",
    "unknown": "not known",
}

_NUM_FAMILIES = (
    ("107", "AscendCL runtime, parameter/usage errors"), ("145", "graph engine, parameter errors"),
    ("148", "AscendCL, parameter/usage errors"), ("161", "aclnn, parameter errors"),
    ("207", "AscendCL runtime, resource errors"), ("245", "graph engine, resource errors"),
    ("345", "graph engine, storage/feature errors"), ("361", "aclnn, runtime errors"),
    ("507", "AscendCL runtime, internal errors"), ("545", "graph engine, internal errors"),
    ("561", "aclnn, internal errors"), ("574", "aclnn runtime checks"),
    ("1", "AscendCL, parameter/usage errors"), ("2", "AscendCL, resource errors"),
    ("3", "AscendCL, storage/feature errors"), ("5", "AscendCL, internal errors"),
)
_LEAD_FAULT = {"1": "caller", "2": "resource", "3": "storage/feature", "5": "internal"}


def humanize(name: str) -> str:
    """ACL_ERROR_RT_MEMORY_ALLOCATION -> 'runtime: memory allocation'."""
    n = name.upper()
    prefix = ""
    for p, label in (("ACL_ERROR_RT_", "runtime: "), ("ACL_ERROR_GE_", "graph engine: "), ("ACL_ERROR_", ""),
                     ("ACL_RT_", "runtime: "), ("ACLNN_ERR_INNER_", "aclnn internal: "), ("ACLNN_ERR_", "aclnn: "),
                     ("ACLNN_", "aclnn: "), ("HCCL_E_", "HCCL: "), ("HCCL_", "HCCL: ")):
        if n.startswith(p):
            prefix, n = label, n[len(p):]
            break
    words = [_WORDS.get(w, w.lower()) for w in n.split("_") if w]
    return prefix + " ".join(words)


def _title_words(title: str) -> str:
    t = title.replace("_", " ").strip()
    return t[:1].lower() + t[1:] if t else ""


def _sources(row: dict[str, str]) -> tuple[dict[str, str], ...]:
    return ({"repo": row.get("repo", ""), "path": row.get("path", ""), "commit": row.get("commit", "")},)


def _advice_for(code_key: str, category: Category) -> tuple[Advice, ...]:
    ids = list(notes().get(code_key, {}).get("advice", []))
    if not ids:
        ids = list(DEFAULT_ADVICE.get(category, ()))
    return tuple(get_advice(i, split_mb=512) for i in ids)


DEFAULT_ADVICE: dict[Category, tuple[str, ...]] = {
    Category.CAPACITY: ("MP001", "MP002", "MP003"),
    Category.FRAGMENTATION: ("MP004", "MP005"),
    Category.FOREIGN_MEMORY: ("MP007", "MP009"),
    Category.ABSURD_REQUEST: ("MP010",),
    Category.INVALID_PARAM: ("MP021",),
    Category.OP_NOT_SUPPORTED: ("MP022",),
    Category.KERNEL_FAULT: ("MP015", "MP017"),
    Category.COMM: ("MP018", "MP019"),
    Category.ENVIRONMENT: ("MP012", "MP014"),
    Category.BENIGN: ("MP023",),
    Category.UNKNOWN: ("MP024",),
}


def _note_meaning(key: str) -> str | None:
    return notes().get(key, {}).get("meaning")


def _note_history(key: str) -> tuple[dict[str, str], ...]:
    return tuple(notes().get(key, {}).get("history", ()))


# ---------------------------------------------------------------- decode

_RE_NUM = re.compile(r"^[+-]?\d+$")
_RE_CANN = re.compile(r"^[EW][0-9A-Z][0-9A-Z]{4}$")
_RE_NPU = re.compile(r"^ERR(\d{2})(\d{2,3})$")
_RE_NAME = re.compile(r"^(?:ACL|ACLNN|HCCL|RT|GE|cuda|CUDA|nccl|NCCL|DRV)[A-Za-z0-9_]*$")


def decode(code: str) -> CodeInfo:
    """Explain one code: `207001`, `ACL_ERROR_RT_MEMORY_ALLOCATION`, `EL0004`, `ERR00100`, `HCCL_E_TIMEOUT`,
    `cudaErrorIllegalAddress`, `ncclSystemError`. Well-formed codes that are not catalogued come back with
    `known=False` and the family their shape implies; anything else is a `UserError`."""
    raw = (code or "").strip()
    if not raw:
        raise UserError("no code given: try e.g. `memplan decode 207001` or `memplan decode EL0004`")
    up = raw.upper()
    if _RE_NUM.match(raw):
        return _decode_number(raw.lstrip("+"))
    if _RE_CANN.match(up):
        return _decode_cann(up)
    m = _RE_NPU.match(up)
    if m:
        return _decode_npu_err(up, int(m.group(1)), int(m.group(2)))
    if _RE_NAME.match(raw):
        return _decode_name(raw)
    raise UserError(
        f"{raw!r} is not a code memplan recognises: expected a number (207001), a CANN code (EL0004), "
        "a torch_npu code (ERR00100) or a symbolic name (ACL_ERROR_RT_MEMORY_ALLOCATION, HCCL_E_TIMEOUT)"
    )


_FAMILY_NAMES = {
    "acl": "AscendCL (acl_base.h)", "rt": "AscendCL runtime (rt_error_codes.h)", "rt-alias": "AscendCL runtime, old name",
    "ge": "graph engine (ge_error_codes.h)", "ge-alias": "graph engine, old name", "aclnn (aclnnStatus)": "aclnn status",
    "aclnn-rt": "aclnn runtime checks", "hccl (HcclResult)": "HCCL result (HcclResult)", "cuda": "CUDA runtime (cudaError_t)",
    "nccl": "NCCL result (ncclResult_t)", "drv": "Ascend driver (drvError_t, drvRetCode in plog lines)",
}


def _family(row: dict[str, str]) -> str:
    fam = _FAMILY_NAMES.get(row["family"], row["family"])
    v = row.get("value", "")
    if len(v) == 6 and v.isdigit():
        for prefix, label in _NUM_FAMILIES:
            if v.startswith(prefix):
                return f"{fam}; {label}"
    return fam


def _row_info(row: dict[str, str], kind: str, code: str, others: list[dict[str, str]] | None = None) -> CodeInfo:
    cat = Category(row["category"])
    key = row["value"] if kind in ("acl", "hccl") else row["name"]
    meaning = _note_meaning(key) or _note_meaning(row["name"]) or _runtime_text(row) or (
        humanize(row["name"]).capitalize() + ".")
    fault = row.get("fault") or ("system" if kind in ("nccl",) else "unknown")
    if kind in ("cuda", "drv"):
        fault = {"capacity": "resource", "environment": "system", "invalid-param": "caller",
                 "kernel-fault": "internal"}.get(row["category"], "unknown")
    history = list(_note_history(key))
    for o in others or ():
        history.append({"value": o["value"], "name": o["name"], "status": o["status"],
                        "source": f"{o['repo']} {o['path']}@{o['commit']}"})
    return CodeInfo(
        code=code, known=True, kind=kind, name=row["name"], family=_family(row), meaning=meaning, fault=fault,
        category=cat, advice=_advice_for(key if key in notes() else row["name"], cat), status=row.get("status"),
        history=tuple(history), sources=_sources(row),
    )


def _runtime_text(row: dict[str, str]) -> str | None:
    """A CUDA / NCCL result explained by the text its runtime prints for it."""
    text = row.get("message")
    return f"The runtime's text for this result: \u201c{text.rstrip('.')}\u201d." if text else None


def _decode_number(num: str) -> CodeInfo:
    rows = _acl_by_value().get(num, [])
    current = [r for r in rows if r["status"] == "current"]
    alt: list[dict[str, str]] = []
    v = int(num)
    if 0 <= v < 1000:
        # Small numbers are shared by several families; say which.
        for label, table in (("hccl", _hccl_by_value()), ("cuda", _cuda_by_value()), ("nccl", _nccl_by_value())):
            r = table.get(num)
            if r:
                alt.append({"kind": label, "name": r["name"], "category": r["category"]})
    if rows:
        main = (current or rows)[0]
        others = [r for r in rows if r is not main]
        info = _row_info(main, "acl", num, others)
        if alt:
            info = _replace(info, alternatives=tuple(alt))
        return info
    if alt:
        first = alt[0]
        table = {"hccl": _hccl_by_value(), "cuda": _cuda_by_value(), "nccl": _nccl_by_value()}[first["kind"]]
        info = _row_info(table[num], first["kind"], num)
        return _replace(info, alternatives=tuple(alt[1:]))
    # Not catalogued: describe the shape.
    family, fault = "unrecognised number", "unknown"
    if len(num) == 6:
        for prefix, label in _NUM_FAMILIES:
            if num.startswith(prefix):
                family = label
                break
        fault = _LEAD_FAULT.get(num[0], "unknown")
    cat = {"caller": Category.INVALID_PARAM}.get(fault, Category.UNKNOWN)
    meaning = (f"{num} is not in memplan's catalogs. By its shape it belongs to: {family}; the leading digit "
               f"points at {_FAULT_TEXT.get(fault, 'an unknown party')}.") if len(num) == 6 else \
        f"{num} is not in memplan's catalogs (numeric codes of AscendCL have six digits; HCCL/CUDA/NCCL results are small numbers)."
    return CodeInfo(code=num, known=False, kind="unknown", name=None, family=family, meaning=meaning, fault=fault,
                    category=cat, advice=_advice_for("", cat))


def _replace(info: CodeInfo, **kw: Any) -> CodeInfo:
    from dataclasses import replace

    return replace(info, **kw)


def _decode_cann(code: str) -> CodeInfo:
    module = code[1]
    mod = cann_modules().get(module, {"component": f"module {module}", "note": ""})
    number = int(code[2:]) if code[2:].isdigit() else int(code[2:], 36) % 9000
    band = "warning" if code[0] == "W" else "internal error (catch-all: the text after it carries the detail)" if number == 9999 else \
        ("internal error" if number >= 9000 else "user-facing error")
    row = _cann_by_code().get(code)
    if row is None:
        # An uncatalogued user-facing code takes its module's category where the whole module has one
        # (HCCL / HCCP: communication; the driver: environment); catch-alls (9999) stay unknown.
        default = mod.get("default_category", "-")
        cat = Category(default) if default != "-" and number != 9999 else Category.UNKNOWN
        if number == 9999:
            meaning = _note_meaning(code) or (
                f"Catch-all internal error of {mod['component']} ({mod.get('note', '')}): the code itself says "
                "only that something failed inside CANN; the lines after it carry the detail.")
        else:
            meaning = _note_meaning(code) or (
                f"{code} is not in memplan's catalog of CANN codes. Module '{module}' is {mod['component']}"
                f"{' (' + mod['note'] + ')' if mod.get('note') else ''}; numbers "
                f"{'9000-9999' if number >= 9000 else '0000-8999'} are {band}.")
        src: tuple[dict[str, str], ...] = ()
        if number == 9999:
            # torch_npu itself treats E?9999 as 'CANN Inner Error'.
            src = ({"repo": "Ascend/pytorch", "path": "torch_npu/csrc/core/npu/NPUException.cpp",
                    "commit": "d396f137e407658fec34574216542ddb024f54a0"},)
        return CodeInfo(code=code, known=number == 9999 or code in notes(), kind="cann",
                        name=None, family=f"CANN {mod['component']}, {band}", meaning=meaning,
                        fault="internal" if number >= 9000 else "unknown", category=cat,
                        advice=_advice_for(code, cat), history=_note_history(code), sources=src)
    cat = Category(row["category"])
    title = _title_words(row["title"]) or "no title in the catalog"
    meaning = _note_meaning(code) or f"{mod['component']}: {title}."
    fault = "internal" if number >= 9000 else {
        Category.INVALID_PARAM: "caller", Category.CAPACITY: "resource", Category.ENVIRONMENT: "system",
        Category.OP_NOT_SUPPORTED: "storage/feature", Category.COMM: "system"}.get(cat, "unknown")
    return CodeInfo(
        code=code, known=True, kind="cann", name=row["title"] or None,
        family=f"CANN {mod['component']} ({row['err_class'] or 'class not recorded'}), {band}",
        meaning=meaning, fault=fault, category=cat, advice=_advice_for(code, cat), status="current",
        history=_note_history(code), sources=_sources(row),
    )


def _decode_npu_err(code: str, sub: int, err: int) -> CodeInfo:
    canonical = f"ERR{sub:02d}{err:03d}"
    row = _npu_err_by_code().get(canonical)
    if row is None:
        return CodeInfo(code=code, known=False, kind="torch_npu", name=None, family="torch_npu error code",
                        meaning=(f"{code} has torch_npu's shape ERR<sub-module:2><error:3> but sub-module {sub} / "
                                 f"error {err} is not in memplan's catalog."), fault="unknown",
                        category=Category.UNKNOWN, advice=_advice_for("", Category.UNKNOWN))
    cat = Category(row["category"])
    meaning = _note_meaning(canonical) or (
        f"torch_npu {row['submodule']} module: {row['text'].split(' ', 1)[1]}. The CANN code and text printed "
        "next to it carry the cause.")
    history = ()
    if canonical != code:
        history = ({"note": f"older torch_npu releases printed the error part with two digits ({code})"},)
    fault = {"PARAM": "caller", "TYPE": "caller", "VALUE": "caller", "PTR": "caller", "MEMORY": "resource",
             "NOT_SUPPORT": "storage/feature", "INTERNAL": "internal"}.get(row["errcode"], "system")
    return CodeInfo(code=canonical, known=True, kind="torch_npu", name=f"{row['submodule']}_{row['errcode']}",
                    family=f"torch_npu {row['submodule']}", meaning=meaning, fault=fault, category=cat,
                    advice=_advice_for(canonical, cat), status="current", history=history, sources=_sources(row))


def _decode_name(name: str) -> CodeInfo:
    row = _by_name().get(name.upper())
    if row is None:
        up = name.upper()
        family = ("AscendCL runtime" if up.startswith("ACL_ERROR_RT_") else "graph engine" if up.startswith(
            "ACL_ERROR_GE_") else "AscendCL" if up.startswith("ACL") else "HCCL" if up.startswith("HCCL") else
                  "CUDA runtime" if name.startswith("cuda") else "NCCL" if name.startswith("nccl") else "unknown")
        return CodeInfo(code=name, known=False, kind="unknown", name=name, family=family,
                        meaning=f"{name} is not in memplan's catalogs (family by its prefix: {family}).",
                        fault="unknown", category=Category.UNKNOWN, advice=_advice_for("", Category.UNKNOWN))
    kind = row.get("kind") or ("hccl" if row["family"].startswith("hccl") else "acl")
    value = row["value"]
    if kind == "acl":
        rows = _acl_by_value().get(value, [])
        others = [r for r in rows if r["name"] != row["name"]]
        info = _row_info(row, "acl", value, others)
        return _replace(info, code=f"{row['name']} ({value})")
    info = _row_info(row, kind, value)
    return _replace(info, code=f"{row['name']} ({value})")
