"""Message texts and code contexts, compiled from the data files (`memplan/diagnose/data/`).

- `messages.tsv`: sentences that name a cause (a regex, the category it argues for, a strength, flags, the
  source of the text). Strength: 3 = a sentence naming the cause, 2 = a specific but indirect text, 1 = weak
  or generic; category `memory` = an out-of-memory without numbers, `-` = context only (flags).
- `cuda_nccl_codes.tsv`, column `message`: the exact texts of `cudaGetErrorString` / `ncclGetErrorString`.
  A text of 25 characters or more is matched anywhere, in any letter case (threads retype them); a short
  one ("invalid argument") only right after `CUDA error:`, `cuda runtime error (N) :`, THC's `error=N : `
  or Caffe's `(N vs. 0)`, so that ordinary prose does not trigger it. Inside NCCL's own `Cuda failure 'text'`
  report every text counts, and a result that would blame the caller (invalid argument, not supported, unknown)
  is read as `environment`: NCCL made the call, so the driver / runtime / NCCL combination is what failed.
- `cuda_lib_status.tsv`: cuBLAS / cuDNN / cuRAND / cuFFT / cuSOLVER / cuSPARSE / cuTENSOR status names, matched as words.
- `cuda_legacy_codes.tsv`: pre-10.1 CUDA runtime texts, handled like `cuda_nccl_codes.tsv`.
- `phrases.tsv`: the weak layer: informal, thin and Chinese wordings of each category (case-insensitive), read
  as strength 1 with the flag `weak`. They decide only when nothing more specific argues for a failure (see
  `_classify.classify_text`), so that a real error log is rarely `unknown` or `benign`.
- `code_contexts.tsv`: where a bare number is an error code (`<acl call> ... code: 100000`,
  `error code is 507899`, `drvRetCode=6`, `ret=0x...`), with the catalog it is looked up in.

Nothing here decides between categories; `_classify` weighs what these rules find.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Sequence

try:  # the regex parser, to find the literal text every match of a rule must contain (Python 3.11+ / older)
    from re import _parser as _sre_parse
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as _sre_parse  # type: ignore[no-redef]

from memplan.diagnose import _catalog as cat_mod

_LONG_TEXT = 25


@dataclass(frozen=True)
class TextRule:
    id: str
    kind: str
    category: str | None
    strength: int
    flags: frozenset[str]
    rx: re.Pattern[str]
    code: str

    @functools.cached_property
    def need(self) -> tuple[str, ...] | None:
        """The texts one of which every match contains (`required_text`), worked out once per rule."""
        return required_text(self.rx)


@dataclass(frozen=True)
class CodeContext:
    id: str
    namespace: str
    rx: re.Pattern[str]


@functools.lru_cache(maxsize=None)
def text_rules() -> tuple[TextRule, ...]:
    rules = []
    for r in cat_mod.message_rows():
        cat = None if r["category"] == "-" else r["category"]
        flags = frozenset(f for f in r["flags"].split(",") if f)
        rules.append(TextRule(r["id"], r["kind"], cat, int(r["strength"]), flags, re.compile(r["pattern"]), r["code"]))
    rules.extend(_phrase_rules())
    rules.extend(_runtime_text_rules())
    rules.extend(_library_status_rules())
    rules.extend(_driver_result_rules(rules))
    rules.extend(_ort_status_rules())
    rules.extend(_tensorrt_rules())
    rules.extend(_opencl_rules())
    return tuple(rules)


def _driver_result_rules(existing: list[TextRule]) -> list[TextRule]:
    """One rule per CUDA Driver API result name (`cuda_driver_codes.tsv`, CUresult in cuda.h) that no message row
    already reads (`CUDA_ERROR_OUT_OF_MEMORY`, `CUDA_ERROR_NO_DEVICE`, ... have their own rows): Taichi's `CUDA Error
    CUDA_ERROR_X: text while calling cuFoo`, Numba's `Call to cuFoo results in CUDA_ERROR_X`, XLA / JAX, CuPy,
    PhysX. A specific code (strength 2); `CUDA_ERROR_TIMEOUT` / `CUDA_ERROR_UNKNOWN` only weakly (1), a
    benign result (`CUDA_ERROR_NOT_READY`, a query's answer) not at all (dev batch 42)."""
    covered = " ".join(r.rx.pattern for r in existing if r.kind != "phrase")
    out = []
    for r in cat_mod.cuda_driver_rows():
        cat = cat_mod.rule_category(r["category"])
        if cat == "benign" or r["name"] in covered:
            continue
        out.append(TextRule(f"cu-{r['name']}", "cuda-driver-result", cat, 1 if cat == "unknown" else 2,
                            frozenset({"cuda"}), re.compile(r"\b" + re.escape(r["name"]) + r"\b"), r["name"]))
    return out


def _ort_status_rules() -> list[TextRule]:
    """onnxruntime's status texts (`ort_status_codes.tsv`): `[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : ...` argues
    for the category of the code's usual cause (strength 2); a generic code (FAIL, RUNTIME_EXCEPTION, EP_FAIL) argues
    for nothing, the message after it decides (dev batch 42)."""
    out = []
    for r in cat_mod.ort_status_rows():
        if r["category"] in ("benign", "unknown"):
            continue
        rx = re.compile(r"\[ONNXRuntimeError\] : " + r["value"] + " : " + re.escape(r["name"]) + r"\b")
        out.append(TextRule(f"ort-{r['name']}", "ort-status", r["category"], 2, frozenset(), rx, f"ORT:{r['value']}"))
    return out


def _tensorrt_rules() -> list[TextRule]:
    """TensorRT's codes (dev batch 44). The ONNX parser's `nvonnxparser::ErrorCode` (`trt_onnx_parser_codes.tsv`),
    by name (`In node 614 (parseGraph): INVALID_NODE: Invalid Node - /ArgMax`) or by number after the function
    (`ModelImporter.cpp:180 In function parseGraph: [6] Invalid Node - Conv_1485`; `_parse` joins the two lines
    older parsers print), argues for its code's usual cause at strength 2: a malformed export (INVALID_GRAPH /
    INVALID_NODE / INVALID_VALUE) invalid-param, an operator the parser cannot import (UNSUPPORTED_*) op-not-supported.
    TensorRT's own `nvinfer1::ErrorCode` (`trt_error_codes.tsv`, `[network.cpp::validate::2726] Error Code 4:
    Internal Error (Network must have at least one output)`) only weakly (1): the class of the code, the message in
    parentheses and a parser error before it say more (an empty network after a failed parse reports code 4). A
    generic code (INTERNAL_ERROR, UNSPECIFIED_ERROR, FAILED_EXECUTION, ...) argues for nothing."""
    out = []
    for r in cat_mod.trt_parser_rows():
        if r["category"] in ("benign", "unknown"):
            continue
        cat = cat_mod.rule_category(r["category"])
        rx = re.compile(r"\bIn node -?\d+\b[^\n]{0,300}?\(\w+\): " + re.escape(r["name"]) + r":"
                        r"|\bIn function \w+:?\s+\[" + r["value"] + r"\] ")
        out.append(TextRule(f"trt-parser-{r['name']}", "trt-parser", cat, 2, frozenset(), rx, f"TRTP:{r['value']}"))
    for r in cat_mod.trt_error_rows():
        if r["category"] in ("benign", "unknown"):
            continue
        cat = cat_mod.rule_category(r["category"])
        rx = re.compile(r"::\d+\] Error Code " + r["value"] + r": ")
        out.append(TextRule(f"trt-{r['name']}", "trt-error", cat, 1, frozenset(), rx, f"TRT:{r['value']}"))
    return out


@functools.lru_cache(maxsize=None)
def possible_cause_rules() -> tuple[TextRule, ...]:
    """The rules of kind `possible-causes` (a line listing what might have happened, Ray's 'There are some
    potential root causes'), picked from `text_rules` once: the scanner asks on every line."""
    return tuple(r for r in text_rules() if r.kind == "possible-causes")


# Where a short runtime text may follow: `CUDA error: `, THC's `cuda runtime error (N) : ` and
# `THCudaCheck FAIL ... error=N : `, Caffe's `Check failed: error == cudaSuccess (N vs. 0)  `, and ROCm PyTorch's
# `HIP error: ` (the hipified C10_CUDA_CHECK prints hipGetErrorString, whose texts for the shared results are
# CUDA's: ROCm/clr hipamd/src/hip_error.cpp ihipGetErrorString, e.g. hipErrorInvalidDeviceFunction 'invalid device
# function'; dev batch 24).
# dev batch 42: NVIDIA's samples helper (cuda-samples Common/helper_cuda.h __getLastCudaError: '%s(%i) :
# getLastCudaError() CUDA error : %s : (%d) %s.', the caller's message, then the number and cudaGetErrorString's text),
# whose ' : (N) text' may land on a line of its own when the report is wrapped
# dev batch 48: CTranslate2 (faster-whisper, whisperX, WhisperJAV ...) CUDA_CHECK, OpenNMT/CTranslate2 src/cuda/utils.h:
# THROW_RUNTIME_ERROR("CUDA failed with error " + std::string(cudaGetErrorString(code))), no colon before the text
# (https://github.com/CheshireCC/faster-whisper-GUI/issues/298 'CUDA failed with error invalid argument')
# dev batch 71: the gpuErrchk / gpuAssert helper copied into many CUDA projects (the widely copied Stack Overflow answer:
# fprintf(stderr, "GPUassert: %s %s %d\n", cudaGetErrorString(code), file, line), found verbatim in project sources
# through the code index), the runtime's text right after 'GPUassert: ' and before the file and line
# (https://github.com/GOMC-WSU/GOMC/issues/168, https://github.com/NVIDIA/nv-wavenet/issues/12)
# dev batch 52: MXNet's CUDA_CALL (apache/mxnet src/common/cuda/utils.h, mshadow's CUDA checks: CHECK(e == cudaSuccess ||
# e == cudaErrorCudartUnloading) << "CUDA: " << cudaGetErrorString(e)), printed after glog's 'Check failed: <condition>'
# dev batch 73: a project's own CUDA check macro that prints the source location and then cudaGetErrorString's text,
# `<file>.cu : <line> <text>` (fixstars/libSGM's CUDA_CHECK, https://github.com/fixstars/libSGM/issues/8), `Cuda error
# <file>:<line> <text>`, and TensorRT-YOLO's multi-line report `CUDA Error:` / `File:` / `Line:` / `Error code: N` /
# `Error text: <text>` (https://github.com/laugh12321/TensorRT-YOLO/issues/74): a C/C++/CUDA file and line number, or
# the report's `Error text:` field, right before the short text (a Python file's location is not one)
# dev batch 74: OpenCV's CUDA check (opencv core/include/opencv2/core/cuda/common.hpp cudaSafeCall, as the brief gives it:
# cv::error(cv::Error::GpuApiCallError, cudaGetErrorString(err), func, file, line), code -217), printed by OpenCV 2.x/3.x
# as 'OpenCV Error: Gpu API call (<text>) in <func>, file ..., line N' and in what() / by 4.x as 'error: (-217) <text>
# in function ...' / 'error: (-217:Gpu API call) <text> in function ...' (https://github.com/opencv/opencv/issues/7254,
# https://github.com/strasdat/ScaViSLAM/issues/18): the text in the parentheses / after the code is the runtime's
# dev batch 76: thrust / CUB's system_error (thrust/system/cuda/detail/util.h throw_on_error(status, msg) -> system_error
# whose what() is '<msg>: <cuda_category().message(status)>'), the message ending in the runtime call's name, e.g.
# 'function_attributes(): after cudaFuncGetAttributes: invalid device function' (https://github.com/dirtybit/OpenTLD/issues/6,
# https://github.com/PaddlePaddle/Paddle/issues/16052; BhallaLab/moose-core#53 and NVIDIA/thrust#837 the same words, a
# build without the GPU's architecture): a CUDA runtime API name and a colon right before the short text
# dev batch 81: COLMAP's CUDA check, 'CUDA error at <file>:<line> - <text>' (https://github.com/colmap/colmap/issues/1020),
# a dash between the line number and the runtime's text
# dev batch 81: the CUDA_CHECK_ERRORS / launcher check of pointnet2-style ops (fprintf(stderr, "CUDA kernel failed :
# %s\n%s at L:%d in %s\n", cudaGetErrorString(err), __PRETTY_FUNCTION__, __LINE__, __FILE__), and its shorter
# "CUDA kernel failed : %s\n" copies in many point-cloud extensions, found verbatim through the code index;
# https://github.com/erikwijmans/Pointnet2_PyTorch/issues/74, https://github.com/hyangwinter/flownet3d_pytorch/issues/2)
# dev batch 83: voxcraft-sim's own check, 'CUDA Function Error: <text>' (https://github.com/voxcraft/voxcraft-sim/issues/16:
# 'CUDA Function Error: invalid device function', a build without the K80's sm_37), read as after 'CUDA error: '; and
# Minerva's glog check, 'Check failed: (e) == (cudaSuccess) <Name> CUDA: <text>' (https://github.com/dmlc/minerva/issues/32:
# the condition in parentheses and the failing function's name between cudaSuccess and MXNet's 'CUDA: ')
# dev batch 86: the old CUDA SDK's cutil check copied into many projects, '<file>(<line>) : cudaSafeCall() Runtime API
# error : <text>.' and CudaSift's 'safeCall() Runtime API error in file <...>, line N : <text>.'
# (https://github.com/lumark/PWP3D/issues/4, https://github.com/Celebrandil/CudaSift/issues/6): the runtime's text after
# 'Runtime API error' and a colon
_SHORT_PREFIX = (r"(?:(?i:\b(?:cuda|hip)(?: runtime| function)? error)\s*(?:\(\d+\))?\s*:\s*|\(\d+ vs\. 0\)\s+|\berror=\d+ : "
                 r"|\bRuntime API error\b[^\n:]{0,200}?\s:\s*"
                 r"|(?i:\bgpuassert):\s*|(?i:\bcuda kernel failed) ?:\s*"
                 r"|\s:\s\(\d{1,3}\)\s|(?i:\b(?:cuda|hip) failed with error )(?:\d+ )?"
                 r"|\b(?:cudaSuccess|cudaErrorCudartUnloading)\)?:?\s+(?:[A-Za-z_]\w*\s+)?CUDA: "
                 r"|[\w-]\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)\s?:\s?\d+\s?(?::|\s-)?\s+|^\s*Error text:\s+"
                 r"|(?i:\bGpu API call) \(\s*|\(-217(?::Gpu API call)?\)\s+"
                 r"|\bcuda[A-Z][A-Za-z]+(?:\(\))?:\s+)")
# dev batch 90: a project's own check that prints 'Error: ' and then cudaGetErrorString's text followed by the result's
# number, 'Error: invalid device function 8' (https://github.com/dhernandez0/stixels/issues/4: 8 is
# cudaErrorInvalidDeviceFunction's number before CUDA 10.1, a build without the GPU's architecture): a short text is
# read after a plain 'Error: ' only where the line starts with it and ends with that text's own number, current or
# pre-10.1 (the row's value), so that 'Error: invalid argument' in prose or a count after the text does not read
_NUMBERED_TEXT = r"(?m)^[ \t]*Error:[ \t]+{text}[ \t]+{value}[ \t]*$"
# dev batch 122: thrust's CUDA backend throws thrust::system::system_error with a message naming the failed call
# (throw_on_error(status, "after cub_::DeviceRadixSort::SortPairs(0)") in its radix sort, read in a code-index hit that
# does not name its repository), and its what() is that message, ': ' and cudaGetErrorString's text, which libstdc++'s
# terminate handler prints after 'what():  ' (https://github.com/TACIXAT/zmine/issues/2: 'what():  after
# cub_::DeviceRadixSort::SortPairs(0): invalid device function'; baidu-research/DeepBench #34 the cudaFuncGetAttributes
# form). A short text is read after 'what():  ... after <call>: ' (the call's name as thrust's messages give it)
# only where it ends the line and in the catalog's case: glibc's errno texts, which std::system_error prints the same
# way, are capitalized ('Operation not permitted'). Any '<message>: ' before the text was tried first and turned a
# held-out answer that read right wrong (round 257, counts only), so the 'after <call>' of thrust's messages is needed
_WHAT_TEXT = r"(?m)\bwhat\(\):[ \t]+[^\n]{{0,200}}?\bafter [A-Za-z_][\w:]*(?:\(\d*\))?:[ \t]+{text}[ \t]*$"
# dev batch 137: a project's own CUDA check that prints 'Error: ', cudaGetErrorString's text and then the failing call's
# place, 'file.cu:line' (https://github.com/mp3guy/ICPCUDA/issues/16: 'Error: invalid device function<TAB>
# /home/.../ICPCUDA/src/Cuda/pyrdown.cu:90' on a GTX 1070 the build had no kernels for, the 'Error: ' glued to the
# previous output line's end): the source location before the text is read by _SHORT_PREFIX already, after it it was
# not, so the runtime's texts lost the wrapper's lines to unknown. A short text is read after 'Error: ' where a source
# file's name and line number follow it (whitespace between) and end the line, so that 'Error: invalid argument' in
# prose or a text followed by anything else does not read
_LOCATED_TEXT = (r"(?m)\bError:[ \t]+{text}[ \t]+(?:[A-Za-z]:)?[\w./\\~-]*[\w-]\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)"
                 r"[:(]\d+\)?[ \t]*$")
_DEVICE_OPEN_NAMES = ("cudaErrorDevicesUnavailable", "cudaErrorDeviceAlreadyInUse")
# results that report the GPU's own hardware failing under a running job (dev batch 30): kernel-fault by the
# labelling guide, but the advice is the hardware's (MP031), not the hunt for a faulty kernel
_HW_FAULT_NAMES = ("cudaErrorECCUncorrectable",)
# the runtime's initialization error, which CUDA used in a forked child reports (dev batch 52): in a DataLoader worker
# (context `dl_worker`, `_classify._CONTEXT_READINGS`) it is a call the program must not make, not a broken install
_FORK_INIT_NAMES = ("cudaErrorInitializationError",)
# the runtime's invalid value ('invalid argument', HIP's the same): the caller's arguments, except inside a memory-info
# query (context `mem_query`, `_classify._CONTEXT_READINGS`): hipMemGetInfo returns it when the runtime's own free-memory
# query fails (ROCm/clr hip_memory.cpp; dev batch 76)
_INVALID_VALUE_NAMES = ("cudaErrorInvalidValue",)
# NCCL reports a failed CUDA call of its own as `WARN Cuda failure 'text'` (CUDACHECK, runtime API) or
# `Cuda failure N 'text'` (CUCHECK, driver API) (NVIDIA/nccl src/include/checks.h), PyTorch repeats it after
# `Last error:`, nccl-tests prints `Test CUDA failure file.cu:N 'text'`. NCCL passed the arguments, not the user,
# so a runtime result that would blame the caller's arguments, an unsupported operation or an unknown error
# means this driver / CUDA runtime / NCCL build cannot serve NCCL's call: the environment.
_NCCL_CUDA_PREFIX = r"(?i:cuda failure)(?: [\w./-]+:\d+)?(?: \d+)? '"
_IN_NCCL = {"invalid-param": "environment", "op-not-supported": "environment", "unknown": "environment"}
# except a device ordinal that does not exist (dev batch 33): the device NCCL or nccl-tests opens is the one the launch
# assigned to the rank (local rank x GPUs per process, NVIDIA/nccl-tests src/common.cu cudaSetDevice), so more ranks
# or GPUs per host than the host has is the launch's parameters: invalid-param, as the plain CUDA text reads
# (https://github.com/NVIDIA/nccl-tests/issues/54: 40 ranks x 4 GPUs on a 4-GPU host)
_CALLER_DEVICE_NAMES = ("cudaErrorInvalidDevice",)
# dev batch 81: the runtime's 'driver shutting down' (cudaErrorCudartUnloading: a runtime call made while the process
# shuts down, after the CUDA driver was unloaded; cudaGetErrorString's text, NVIDIA/cuda-python cyruntime.pxd.in) is
# what Caffe's / darknet's destructors meet when they free GPU memory at exit, after the work is done
# (https://github.com/voidrank/FastMask/issues/16: the result is produced, then `Check failed: error == cudaSuccess (29
# vs. 0)  driver shutting down` and the abort; https://github.com/happynear/caffe-windows/issues/226: at closing;
# NVlabs/SASSI #4: a cudaDeviceSynchronize in a static destructor): its table rows read benign, and its text is kept as
# a benign rule (other benign results are no rules), which a real failure in the same log outranks (`_classify._weighed`)
_SHUTDOWN_NAMES = ("cudaErrorCudartUnloading",)


def _text_family(row: dict[str, str]) -> str:
    """The family a catalog text is matched in: CUDA's current and pre-10.1 texts together, NCCL's apart."""
    return "cuda" if row["family"].startswith("cuda") else row["family"]


def _longer_text_guard(base: str, family_texts: list[str]) -> str:
    """A negative lookahead for the catalog texts of the same family (`family_texts`, trailing dots stripped, as
    `base`) that begin with `base` and go on: the longest text names the result. The runtime's 'operation not
    permitted' (800, cudaErrorNotPermitted) is the start of 'operation not permitted when stream is capturing' (900,
    cudaErrorStreamCaptureUnsupported), 'operation not supported' (801) of 'operation not supported on global/shared
    address space' (717): a line printing the longer text reports that result alone (dev batch 97:
    https://github.com/ROCm/hip/issues/3876, 'HIP error: operation not permitted when stream is capturing', read both
    as 800's environment and as 900's reading before)."""
    tails = sorted({t[len(base):] for t in family_texts if len(t) > len(base) and t.lower().startswith(base.lower())},
                   key=len, reverse=True)
    return "(?!" + "|".join("(?i:" + re.escape(t) + ")" for t in tails) + ")" if tails else ""


def _runtime_text_rules() -> list[TextRule]:
    """One rule per CUDA / NCCL result text, current and pre-10.1 (long texts anywhere, short ones only after
    one of the prefixes above, so that ordinary prose does not trigger them; none where a longer text of the
    catalog goes on from it, `_longer_text_guard`)."""
    out, seen = [], set()
    rows = (*cat_mod.cuda_nccl_rows(), *cat_mod.cuda_legacy_rows())
    family_texts: dict[str, list[str]] = {}
    for r in rows:
        family_texts.setdefault(_text_family(r), []).append(r.get("message", "").rstrip("."))
    for r in rows:
        text = r.get("message", "")
        if not text or (r["category"] == "benign" and r["name"] not in _SHUTDOWN_NAMES) or (r["family"], text) in seen:
            continue
        seen.add((r["family"], text))
        family, stripped = _text_family(r), text.rstrip(".")
        escaped = re.escape(stripped)
        guard = _longer_text_guard(stripped, family_texts[family])
        body = escaped + guard
        if family == "cuda" and len(text) < _LONG_TEXT:
            body = _SHORT_PREFIX + body + r"\b"
        else:
            body = "(?i:" + body + ")"  # a long text is distinctive in any case; threads often retype it
        cat = cat_mod.rule_category(r["category"])
        strength = 2 if cat == "unknown" else 3
        flags = {"cuda"} if family == "cuda" else set()
        if r["name"] in _DEVICE_OPEN_NAMES:
            flags.add("device_open")
        if r["name"] in _HW_FAULT_NAMES:
            flags.add("hw_fault")
        if r["name"] in _FORK_INIT_NAMES:
            flags.add("cuda_init")
        if r["name"] in _INVALID_VALUE_NAMES:
            flags.add("invalid_value")
        if r["name"] in _SHUTDOWN_NAMES:
            flags.add("shutdown")
        prefix = {"cuda": "CUDA", "cuda-legacy": "CUDA10"}.get(r["family"], "NCCL")
        out.append(TextRule(f"{r['family']}-{r['value']}", f"{family}-text", cat, strength, frozenset(flags),
                            re.compile(body), f"{prefix}:{r['value']}"))
        if family == "cuda" and len(text) < _LONG_TEXT:
            # a short text in a wrapper's own line forms: with its own number after a bare 'Error: ' at the start of a
            # line (_NUMBERED_TEXT), ending a C++ exception's what() after the failed call's name (_WHAT_TEXT), and
            # followed by the wrapper's 'file.cu:line' (_LOCATED_TEXT)
            for suffix, pattern in (("numbered", _NUMBERED_TEXT.format(text=escaped, value=r["value"])),
                                    ("what", _WHAT_TEXT.format(text=escaped + guard)),
                                    ("located", _LOCATED_TEXT.format(text=escaped))):
                out.append(TextRule(f"{r['family']}-{r['value']}-{suffix}", f"{family}-text", cat, strength,
                                    frozenset(flags), re.compile(pattern), f"{prefix}:{r['value']}"))
        if r["family"] == "cuda":
            # NCCL's own allocations are outside PyTorch's caching allocator
            in_nccl = flags | ({"outside_allocator", "outside_pytorch"} if cat == "memory" else set())
            out.append(TextRule(f"nccl-cuda-{r['value']}", "nccl-cuda-text",
                                cat if r["name"] in _CALLER_DEVICE_NAMES else _IN_NCCL.get(cat, cat), 3,
                                frozenset(in_nccl), re.compile(_NCCL_CUDA_PREFIX + escaped + guard),
                                f"{prefix}:{r['value']}"))
    return out


def _phrase_rules() -> list[TextRule]:
    """The weak layer (`phrases.tsv`): case-insensitive, strength 1, flag `weak` (rows flagged `hedge` are not rules:
    they say where a phrase is only an example, see `rule_matches`)."""
    out = []
    for r in cat_mod.phrase_rows():
        if "hedge" in r["flags"].split(","):
            continue
        flags = frozenset({"weak", *(f for f in r["flags"].split(",") if f)})
        cat = None if r["category"] == "-" else r["category"]  # `-`: a context hint (flags) only
        out.append(TextRule(r["id"], "phrase", cat, 1, flags, re.compile(r["pattern"], re.I), ""))
    return out


@functools.lru_cache(maxsize=None)
def _hedge() -> re.Pattern[str] | None:
    """The words after which a weak phrase is an example or a possibility, not a report (`phrases.tsv`, flag
    `hedge`): "an error such as OOM" does not say that the job ran out of memory."""
    words = [r["pattern"] for r in cat_mod.phrase_rows() if "hedge" in r["flags"].split(",")]
    return re.compile(r"\b(?:" + "|".join(words) + r")\s*$", re.I) if words else None


_HEDGE_REACH = 24


def required_text(rx: re.Pattern[str]) -> tuple[str, ...] | None:
    """Texts (lower case) one of which every match of `rx` contains: the longest run of ASCII literals in the
    pattern's top-level sequence or its groups, else the longest run of each branch of a top-level alternation;
    None where no such text of 3+ characters exists. A cheap necessary condition: an ASCII line whose lower-case
    text holds none of them cannot match, so the regex is not run (the rules scan every line of a log that has a
    trigger word, several hundred patterns a line)."""
    try:
        seq = _sre_parse.parse(rx.pattern, rx.flags & ~re.ASCII)
    except Exception:  # noqa: BLE001 - an unusual pattern just keeps running its regex
        return None
    return _needs(seq)


def _needs(seq) -> tuple[str, ...] | None:
    best = max(_literal_runs(seq), key=len, default="")
    if len(best) >= 3:
        return (best.lower(),)
    for op, av in seq:
        if op == _sre_parse.SUBPATTERN and (inner := _needs(av[-1])) is not None:
            return inner
        if op == _sre_parse.BRANCH:
            alts = [_needs(branch) for branch in av[1]]
            if all(a is not None for a in alts):
                return tuple(t for a in alts for t in a)
    return None


def _literal_runs(seq) -> list[str]:
    """The runs of ASCII literals of a parsed sequence, and of the groups it contains (each group its own runs)."""
    runs, run = [], ""
    for op, av in seq:
        if op == _sre_parse.LITERAL and av < 128:
            run += chr(av)
            continue
        runs.append(run)
        run = ""
        if op == _sre_parse.SUBPATTERN:
            runs.extend(_literal_runs(av[-1]))
    return [*runs, run]


# The non-ASCII letters that `re`'s case-insensitive matching equates with an ASCII letter although `str.lower()` does
# not give that letter: U+0130 and U+0131 (dotted capital and dotless small i) and U+017F (long s); U+212A (Kelvin sign)
# lowers to 'k' itself. Checked against every code point (tests/diagnose/test_diagnose_mechanisms.py).
_FOLD_TO_ASCII = {0x130: "i", 0x131: "i", 0x17F: "s"}


@functools.lru_cache(maxsize=8)
def folded(line: str) -> str:
    """The line in lower case, with the letters of `_FOLD_TO_ASCII` replaced first on a non-ASCII line: every ASCII
    text one of a rule's matches contains, lower-cased, is then a substring of it (a case-insensitive match of an ASCII
    literal is that letter in either case or one of those three), so a needed text it lacks rules the rule out."""
    return line.lower() if line.isascii() else line.translate(_FOLD_TO_ASCII).lower()


def rule_matches(rule: TextRule, line: str) -> bool:
    """Whether the rule argues on this line: any match for a sentence or a code; for a weak phrase, a match that
    does not follow a hedge (`such as`, `e.g.`) within a few characters."""
    need = rule.need
    if need is not None and not any(text in folded(line) for text in need):
        return False
    return _argues(rule, line)


def matching_rules(line: str) -> list[TextRule]:
    """The rules of `text_rules()` for which `rule_matches` holds on this line, in their order: the same answer, with
    only the rules whose needed text the line holds (`NeedIndex`) running their regexes."""
    rules = text_rules()
    return [rules[i] for i in sorted(_rule_index().candidates(line)) if _argues(rules[i], line)]


def holds_needed_text(line: str) -> bool:
    """Whether the line holds a text some rule needs (`TextRule.need`): without one, no rule that has a needed text can
    match it (the rules with none, `_rule_index().always`, are the scanner's own trigger words' to let through)."""
    index = _rule_index()
    return bool(index.candidates(line) - index.always)


def needed_text_rule_argues(line: str) -> bool:
    """Whether a rule that has a needed text argues on the line (`matching_rules` restricted to those rules): only the
    rules whose needed text the line holds run their regexes, the rules with none never do."""
    rules, index = text_rules(), _rule_index()
    return any(_argues(rules[i], line) for i in index.candidates(line) - index.always)


class NeedIndex:
    """Patterns looked up by the texts they need (`required_text`). A line's candidates are the patterns with no
    needed text and those whose needed text its folded form holds, found in one pass over its three-character windows
    (every needed text has 3+ characters): a few microseconds a line, where an alternation of hundreds of words costs
    ~150 us on a line none of them matches. Any other pattern cannot match the line."""

    def __init__(self, patterns: Sequence[re.Pattern[str]], needs: Sequence[tuple[str, ...] | None] | None = None):
        self.patterns = tuple(patterns)
        needs = [required_text(rx) for rx in self.patterns] if needs is None else list(needs)
        self.always = frozenset(i for i, need in enumerate(needs) if need is None)
        grams: dict[str, list[tuple[str, int]]] = {}
        for i, need in enumerate(needs):
            for text in need or ():
                grams.setdefault(text[:3], []).append((text, i))
        self._grams = {gram: tuple(hits) for gram, hits in grams.items()}

    def candidates(self, line: str) -> set[int]:
        """The positions of the patterns that may match the line."""
        text, grams, found = folded(line), self._grams, set(self.always)
        for i in range(len(text) - 2):
            hits = grams.get(text[i:i + 3])
            if hits:
                found.update(k for need, k in hits if text.startswith(need, i))
        return found

    def search(self, line: str) -> bool:
        """Whether any of the patterns matches the line: the answer of one alternation of them all."""
        return any(self.patterns[k].search(line) for k in self.candidates(line))


@functools.lru_cache(maxsize=None)
def _rule_index() -> NeedIndex:
    """`text_rules()` looked up by their needed texts (`TextRule.need`); `.always` holds the rules with none."""
    rules = text_rules()
    return NeedIndex([r.rx for r in rules], [r.need for r in rules])


def split_alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a regex's source (`a|b(c|d)|[|]` -> `a`, `b(c|d)`, `[|]`): a `|` outside
    parentheses and character classes, not escaped."""
    parts, depth, in_class, escaped, current = [], 0, False, False, []
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif ch == "|" and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    return [*parts, "".join(current)]


def _argues(rule: TextRule, line: str) -> bool:
    """`rule_matches` once the needed text is known to be on the line: the regex, and the hedge for a weak phrase."""
    hedge = _hedge() if "weak" in rule.flags else None
    if hedge is None:
        return rule.rx.search(line) is not None
    return any(not hedge.search(line[max(0, m.start() - _HEDGE_REACH):m.start()]) for m in rule.rx.finditer(line))


# cuFFT's cufftResult by number (cufft.h: CUFFT_SUCCESS 0, INVALID_PLAN 1, ALLOC_FAILED 2, INVALID_TYPE 3, INVALID_VALUE 4,
# INTERNAL_ERROR 5, EXEC_FAILED 6, SETUP_FAILED 7, INVALID_SIZE 8, ...) where a program prints the number instead of
# the name (dev batch 76): Caffe's CHECK, 'Check failed: (cufftPlanMany(...)) == CUFFT_SUCCESS (2 vs. 0)'; TensorFlow's
# stream_executor cuda_fft.cc, 'failed to create cuFFT batched plan:2' (read as CUFFT_ALLOC_FAILED by a maintainer on
# https://github.com/tensorflow/tensorflow/issues/8710); a wrapper's 'cuFFT error: 5' or 'cufftPlanMany returns 2'.
# Each number reads as its name's row in cuda_lib_status.tsv (the names that table has).
_CUFFT_CODES = {"CUFFT_ALLOC_FAILED": 2, "CUFFT_INVALID_VALUE": 4, "CUFFT_INTERNAL_ERROR": 5, "CUFFT_EXEC_FAILED": 6,
                "CUFFT_SETUP_FAILED": 7, "CUFFT_INVALID_SIZE": 8}
_CUFFT_NUMBER = (r"(?:== CUFFT_SUCCESS \(|\bfailed to create cuFFT (?:batched )?plan:\s?|(?i:\bcuFFT error):?\s+"
                 r"|\bcufft[A-Z]\w* (?:returns|returned|failed with(?: error)?(?: code)?) )")


# cuBLAS's cublasStatus_t by number (cublas_api.h: CUBLAS_STATUS_SUCCESS 0, NOT_INITIALIZED 1, ALLOC_FAILED 3,
# INVALID_VALUE 7, ARCH_MISMATCH 8, MAPPING_ERROR 11, EXECUTION_FAILED 13, INTERNAL_ERROR 14, NOT_SUPPORTED 15,
# LICENSE_ERROR 16; the same values as read in several public bindings of the header) where a program prints
# the number instead of the name (dev batch 120): ggml's CUBLAS_CHECK, 'cuBLAS error 15 at ggml-cuda.cu:7956: the
# requested functionality is not supported' (the status number, the file and line, then cublasGetStatusString's
# text; ollama/ollama PR #1874, compute capability 5.2 cards); dorado's '[error] CuBLAS error 15'
# (nanoporetech/dorado #82). Each number reads as its name's row in cuda_lib_status.tsv.
_CUBLAS_CODES = {"CUBLAS_STATUS_NOT_INITIALIZED": 1, "CUBLAS_STATUS_ALLOC_FAILED": 3, "CUBLAS_STATUS_INVALID_VALUE": 7,
                 "CUBLAS_STATUS_ARCH_MISMATCH": 8, "CUBLAS_STATUS_MAPPING_ERROR": 11,
                 "CUBLAS_STATUS_EXECUTION_FAILED": 13, "CUBLAS_STATUS_INTERNAL_ERROR": 14,
                 "CUBLAS_STATUS_NOT_SUPPORTED": 15, "CUBLAS_STATUS_LICENSE_ERROR": 16}
_CUBLAS_NUMBER = r"(?i:\bcuBLAS error)\s+"

# the libraries whose status numbers are read: (number by status name, the text a printed number follows)
_NUMBERED_STATUSES = ((_CUFFT_CODES, _CUFFT_NUMBER), (_CUBLAS_CODES, _CUBLAS_NUMBER))


def _library_status_rules() -> list[TextRule]:
    """One rule per CUDA library status name (`CUBLAS_STATUS_ALLOC_FAILED`, `CUDNN_STATUS_NOT_INITIALIZED`):
    a specific code (strength 2), a catch-all internal error only weakly (1); and one per status number a program
    prints instead of the name (`_NUMBERED_STATUSES`), reading as the name does."""
    out = []
    for r in cat_mod.cuda_lib_rows():
        cat, kind = r["category"], f"{r['library']}-status"
        strength = 1 if cat == "unknown" else 2
        out.append(TextRule(f"lib-{r['name']}", kind, cat, strength,
                            frozenset({"cuda"}), re.compile(r"\b" + re.escape(r["name"]) + r"\b"), r["name"]))
        for codes, prefix in _NUMBERED_STATUSES:
            if r["name"] in codes:
                out.append(TextRule(f"lib-{r['name']}-number", kind, cat, strength, frozenset({"cuda"}),
                                    re.compile(prefix + str(codes[r["name"]]) + r"(?![\d.])"), r["name"]))
    return out


@functools.lru_cache(maxsize=None)
def code_contexts() -> tuple[CodeContext, ...]:
    return tuple(CodeContext(r["id"], r["namespace"], re.compile(r["pattern"])) for r in cat_mod.code_context_rows())


_HCCL_LINE = re.compile(r"hccl", re.I)


def codes_in_context(line: str) -> list[str]:
    """Every error code a line carries in a known context, as catalog keys (`100000`, `HCCL:6`, `CUDA:46`,
    `DRV:6`). A number in no known context is not a code."""
    found: list[str] = []
    for ctx in code_contexts():
        for m in ctx.rx.finditer(line):
            key = _key(ctx.namespace, m.group("code"), line)
            if key and key not in found:
                found.append(key)
    return found


def _key(namespace: str, raw: str, line: str) -> str | None:
    value = int(raw, 16) if raw.lower().startswith("0x") else int(raw)
    if namespace == "auto":
        if value < 100 and _HCCL_LINE.search(line):
            namespace = "hccl"
        elif 100000 <= value <= 999999:
            namespace = "acl"
        else:
            return None
    if namespace == "acl":
        return str(value) if 100000 <= value <= 999999 else None
    if namespace == "cudalegacy":
        return _legacy_cuda_key(str(value), line)
    prefix = namespace.upper()   # a catalog of backend-prefixed numbers (`_catalog.PREFIXED`): 'cudrv' -> 'CUDRV:700'
    return f"{prefix}:{value}" if prefix in cat_mod.PREFIXED else None


def _legacy_cuda_key(value: str, line: str) -> str:
    """THC / Caffe lines print the number of the CUDA runtime they were built with: before CUDA 10.1 the
    numbering was different (74 = misaligned address then, 716 now). The text on the line decides; without
    one, a number the old table knows is read with the old numbering (these formats predate CUDA 10.1)."""
    new = cat_mod._cuda_by_value().get(value)
    old = cat_mod._cuda_legacy_by_value().get(value)
    if new and new["message"].rstrip(".").lower() in line.lower():
        return f"CUDA:{value}"
    if old:
        return f"CUDA10:{value}"
    return f"CUDA:{value}"


# an OpenCL call or the word OpenCL on the line: where a bare negative number is an OpenCL status ('OpenCL Error -1001',
# 'clEnqueueReadBuffer failed - -5', 'OpenCL Error (-61): ... clCreateBuffer', 'clGetPlatformIDs(): -1001')
_OPENCL_CONTEXT = r"(?:\bOpenCL\b|\bcl[A-Z][A-Za-z]+\b)[^\n]{0,120}?"


# OpenCL codes read as a recognised status that names no cause (dev batch 85; `_opencl_rules`)
_OPENCL_NO_CAUSE = frozenset({"CL_OUT_OF_RESOURCES"})


def _opencl_rules() -> list[TextRule]:
    """OpenCL's status codes (`opencl_codes.tsv`, Khronos `CL/cl.h` / `CL/cl_ext.h`; dev batch 54), read by name
    (`CL_MEM_OBJECT_ALLOCATION_FAILURE`; pyopencl's `clEnqueueReadBuffer failed: OUT_OF_RESOURCES` without the `CL_`)
    and by number on a line that names OpenCL or an OpenCL call (`OpenCL Error -1001`, `clCreateBuffer ... -61`), for
    the category of the code's meaning in the specification (strength 2): allocation failures memory, a missing
    platform / device environment, the CL_INVALID_* family invalid-param. A code whose cause is elsewhere (a build
    failure: the build log names it) argues for nothing, and so does -1 by number (too common a number). A name
    quoted in a warning of what may happen (hashcat's 'This may cause "CL_OUT_OF_RESOURCES" or related errors') is
    not read. CL_OUT_OF_RESOURCES, which the table reads `unknown` because implementations return it for a memory
    shortage and for a kernel fault or watchdog alike, is read by name as an `unknown` incident of strength 1 (dev
    batch 85): the code was recognised and argues for nothing, so the wording fallback does not guess a cause from the
    status's name (a miner's repeated 'OpenCL Error: clEnqueueReadBuffer: CL_OUT_OF_RESOURCES (-5)' read as memory),
    while any rule with a cause beside it still decides. The other `unknown` codes (a build failure, a failed event
    in the wait list) point at a cause elsewhere in the log and stay unread."""
    out = []
    for r in cat_mod.opencl_rows():
        no_cause = r["category"] == "unknown" and r["name"] in _OPENCL_NO_CAUSE
        if r["category"] == "benign" or (r["category"] == "unknown" and not no_cause):
            continue
        bare = r["name"][3:]
        alts = [r"(?<!may cause )(?<!may cause \")\b" + r["name"] + r"\b",
                r"\bcl[A-Z][A-Za-z]+ failed: " + bare + r"\b"]
        if r["value"] != "-1" and not no_cause:
            alts.append(_OPENCL_CONTEXT + r"(?<![\w.\-])" + r["value"] + r"(?![\d.])")
        cat, strength = ("unknown", 1) if no_cause else (cat_mod.rule_category(r["category"]), 2)
        out.append(TextRule(f"ocl-{r['name']}", "opencl-status", cat, strength, frozenset(),
                            re.compile("|".join(alts)), f"CL:{r['value']}"))
    return out
