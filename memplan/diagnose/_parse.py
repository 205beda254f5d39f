"""Turn cleaned log lines into `Evidence`: OOM messages with their numbers, error codes, and the
sentences that name a cause.

One pass, one line at a time; an OOM message that a terminal or an issue thread wrapped over several
lines is joined back (up to `_OOM_MAX_LINES` lines) before its numbers are read. Every pattern is a
search, not a match from the line start, so launcher prefixes do not hide anything. The sentences that
name a cause and the contexts in which a number is a code are data (`_rules`, `data/messages.tsv`,
`data/code_contexts.tsv`); this module knows only the shape of OOM messages and of code tokens.

Recognised: CUDA OOM messages of every PyTorch layout (`cached`, `reserved in total by PyTorch`,
`total capacty`, `reserved by PyTorch but unallocated`, `Process N has X memory in use`, private pools),
torch_npu OOMs old and new (`).If`), Apple MPS's (`MPS allocated`, `max allowed`; the per-buffer check
`Invalid buffer size: N GB`), MLX's per-buffer check (`[metal::malloc] Attempting to allocate N bytes`), the cudaMallocAsync block (`would exceed allowed memory`), vLLM's
start-up free-memory check, TensorFlow's `failed to allocate ... (N bytes) from device`, Theano's `Error allocating N bytes
of device memory`, the 1 EB guard,
host-RAM messages, CANN error blocks and plog lines,
torch_npu `ERRxxyyy`, HCCL/NCCL timeouts and watchdog reports, AI Core / AICPU / CUDA kernel faults,
device-open and version errors, operator fallbacks, and Python traceback frames.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator

from memplan.diagnose._catalog import codes_argue
from memplan.diagnose._rules import (
    NeedIndex,
    codes_in_context,
    matching_rules,
    needed_text_rule_argues,
    possible_cause_rules,
    rule_matches,
    split_alternatives,
)

# ---------------------------------------------------------------- sizes

_UNIT = {"b": 1, "bytes": 1, "byte": 1, "kib": 1 << 10, "kb": 1 << 10, "k": 1 << 10, "mib": 1 << 20, "mb": 1 << 20,
         "m": 1 << 20, "gib": 1 << 30, "gb": 1 << 30, "g": 1 << 30, "tib": 1 << 40, "tb": 1 << 40, "t": 1 << 40,
         "pib": 1 << 50, "pb": 1 << 50, "p": 1 << 50, "eib": 1 << 60, "eb": 1 << 60, "e": 1 << 60}
SIZE = r"(\d+(?:\.\d+)?)\s*(EiB|PiB|TiB|GiB|MiB|KiB|EB|PB|TB|GB|MB|KB|bytes|byte|B)\b"


def parse_log_size(number: str, unit: str) -> int:
    """Sizes in PyTorch / torch_npu messages are binary even when written 'GB' (72GB = 72 GiB). A whole number is
    read exactly (a float would round 2^64-1 bytes, GLib's g_malloc of a negative size, to 2^64; dev batch 73)."""
    if number.isdigit():
        return int(number) * _UNIT[unit.lower()]
    return int(round(float(number) * _UNIT[unit.lower()]))


def parse_size_text(text: str) -> int:
    m = re.fullmatch(r"\s*" + SIZE + r"\s*", text) or re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*()\s*", text)
    if not m:
        raise ValueError(f"not a size: {text!r}")
    return parse_log_size(m.group(1), m.group(2) or "b")


# ---------------------------------------------------------------- evidence


@dataclass
class Evidence:
    """One thing a line says. `kind` is what was matched; `category` the category it argues for (or None
    for context only); `strength` 3 = a sentence naming the cause, 2 = a specific code, 1 = weak/generic."""

    line: int
    kind: str
    text: str
    category: str | None = None
    strength: int = 0
    codes: tuple[str, ...] = ()
    numbers: dict[str, Any] = field(default_factory=dict)
    flags: frozenset[str] = frozenset()


# A size that opens PyTorch's caching-allocator figures, `5.93 GiB (GPU 0; 47.46 GiB total capacity; ...`: the request of
# a message whose head was cut off (c10/cuda/CUDACachingAllocator.cpp before PyTorch 2.1: 'Tried to allocate %s (GPU %d;
# %s total capacity; %s already allocated; %s free; %s reserved in total by PyTorch)'); the figures up to `already
# allocated` must follow, so a status line with a size and a device's capacity alone is not read as a request.
_HEADLESS_REQ = SIZE + (r"(?=\s*\((?:GPU|NPU) \d+;\s*\d+(?:\.\d+)?\s*[KMGT]i?B total capac\w*;"
                        r"\s*\d+(?:\.\d+)?\s*[KMGT]i?B already allocated)")

# OOM message starts (any layout); the rest of the message may be on the following lines.
_OOM_START = re.compile(
    r"(?:(?P<dev>CUDA|NPU|GPU|HIP|XPU|MPS|MLU|GCU)(?:\s+backend)?\s+out of memory|OutOfMemoryError|out of memory\.\s*Tried to allocate"
    r"|[Tt]ried to allocated? (?:more than )?" + SIZE + r"|would exceed allowed memory"
    # PyTorch's pre-2.1 message body quoted without its head (`CUDA out of memory. Tried to allocate` cut off, e.g. a
    # title or a pasted fragment): the request's size right before `(GPU N; X total capacity` (dev batch 80)
    r"|(?<![\w.])" + _HEADLESS_REQ + r")"
)
_OOM_HINT = re.compile(r"[Tt]ried to allocate|total capac|already allocated|reserved (?:in total|by PyTorch)", re.I)
_OOM_DONE = re.compile(
    r"(?i:reserved in total by PyTorch)\)|cached\)|Memory Management|to avoid fragmentation|PYTORCH_\w*ALLOC_CONF"
    r"|more than 1EB memory|reserved by PyTorch but unallocated|user-supplied memory fraction\)\s*:\s*\d|HIGH_WATERMARK_RATIO"
)
_NEW_RECORD = re.compile(
    r"^\s*(?:Traceback|File \"|\w+(?:Error|Exception|Warning):|\[\w+\]|\d{4}-\d{2}-\d{2}|E[0-9A-Z]\d{4}[:\[\s]|INFO|WARNING|ERROR|Loading|Epoch)"
)
_OOM_MAX_LINES = 8

_F = {
    # the cudaMallocAsync backend's block (pytorch c10/cuda/CUDAMallocAsyncAllocator.cpp, mallocAsync: "Allocation on
    # device N would exceed allowed memory. (out of memory)" then "Currently allocated : X", "Requested : X",
    # "Device limit : X", "Free (according to CUDA): X", as ComfyUI and the SD web UI print it) is read by the
    # second alternative of each of these four
    "requested_bytes": re.compile(r"[Tt]ried to allocated? (?:more than )?" + SIZE + r"|\bRequested\s*:\s*" + SIZE
                                  + r"|^\s*" + _HEADLESS_REQ),
    # Apple's MPS allocator (pytorch aten/src/ATen/mps/MPSAllocator.cpp, malloc: 'MPS backend out of memory (MPS
    # allocated: X, other allocations: Y, max allowed: Z). Tried to allocate W on private pool'; dev batch 24): the
    # high-watermark limit is the total this process may use, `MPS allocated` what the allocator holds
    "total_bytes": re.compile(SIZE + r"\s*total capac|total capac\w*\s+of\s+" + SIZE + r"|Device limit\s*:\s*" + SIZE
                              + r"|max allowed:\s*" + SIZE),
    "allocated_bytes": re.compile(SIZE + r"\s*(?:already allocated|is allocated by PyTorch)|Currently allocated\s*:\s*"
                                  + SIZE + r"|MPS allocated:\s*" + SIZE, re.I),
    "active_bytes": re.compile(SIZE + r"\s*current active"),
    # `of which X is free`, also when a copied message was cut off right after the size (`of which 22.25 GiB i…`)
    # or cut in the middle and resumed (`of which 0 bytes i emory 10.65 GiB is allocated by PyTorch`, a GitHub
    # title copied into a comment; dev batch 36)
    "free_bytes": re.compile(r"(?:(?<![\w.])|;\s*)" + SIZE + r"\s*free\b|of which\s+" + SIZE
                             + r"(?=\s+is free|\s*(?:is?|is f\w*)?\s*(?:…|\.\.\.)?\s*$"
                             + r"|\s+is?\s.*\bis allocated by PyTorch)"
                             + r"|Free \(according to CUDA\)\s*:\s*"
                             + SIZE),
    "reserved_bytes": re.compile(SIZE + r"\s*reserved in total by PyTorch", re.I),
    "reserved_unallocated_bytes": re.compile(SIZE + r"\s*(?:cached\)|is reserved by PyTorch but unallocated)", re.I),
    "private_pool_bytes": re.compile(SIZE + r"\s*allocated in private pools"),
    # torch_npu / older PyTorch print the per-process memory fraction as `X allowed;`
    "allowed_bytes": re.compile(SIZE + r"\s*allowed;"),
    "process_in_use_bytes": re.compile(r"this process has\s+" + SIZE + r"\s+memory in use"),
}
# MPS's `other allocations`: the process's other Metal allocations outside the MPS allocator (same process, so
# with `MPS allocated` it is what this process has in use)
_MPS_OTHER = re.compile(r"other allocations:\s*" + SIZE)
_PROC = re.compile(r"Process (\d+) has\s+" + SIZE + r"\s+memory in use")
_DEV = re.compile(r"\((GPU|NPU) (\d+);|(GPU|NPU) (\d+) has a total capac")
_ZERO = re.compile(r"\b0 bytes free")


def _first_size(rx: re.Pattern[str], text: str) -> int | None:
    m = rx.search(text)
    if not m:
        return None
    g = [x for x in m.groups() if x is not None]
    return parse_log_size(g[0], g[1]) if len(g) >= 2 else None


# Intel's XPU allocator words its OOM like CUDA's ('XPU out of memory. Tried to allocate ... GPU 0 has a total
# capacity of ...'): the device is an XPU although the message says GPU (dev batch 29)
_XPU_OOM = re.compile(r"\bXPU out of memory\b")


def parse_oom(text: str) -> dict[str, Any]:
    """Read every number of an OOM message (already joined to one string)."""
    nums: dict[str, Any] = {}
    for key, rx in _F.items():
        v = _first_size(rx, text)
        if v is not None:
            nums[key] = v
    other = _first_size(_MPS_OTHER, text)
    if other is not None and "allocated_bytes" in nums:
        nums["process_in_use_bytes"] = nums["allocated_bytes"] + other
    if "free_bytes" not in nums and _ZERO.search(text):
        nums["free_bytes"] = 0
    procs = [(int(p), parse_log_size(n, u)) for p, n, u in _PROC.findall(text)]
    if procs:
        nums["processes"] = procs
    if "more than 1EB" in text:
        nums["requested_bytes"] = 1 << 60
        nums["guard_1eb"] = True
    m = _DEV.search(text)
    if m:
        kind, idx = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        nums["device"] = f"{'npu' if kind == 'NPU' else 'xpu' if _XPU_OOM.search(text) else 'cuda'}:{idx}"
    elif _XPU_OOM.search(text):
        nums["device"] = "xpu"
    elif "NPU" in text:
        nums["device"] = "npu"
    elif "CUDA" in text or "GPU" in text:
        nums["device"] = "cuda"
    return nums


# Host-RAM messages.
# MindSpore's dynamic memory pool when a device allocation does not fit (mindspore/mindspore
# ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc AddMemBlockAndMemBufByEagerFree): bytes in use by the
# pool (+ by events) and the request, against the device memory the pool may use.
_MS_POOL = re.compile(r"TotalUsedMemStatistics : (\d+) plus TotalUsedByEventMemStatistics : (\d+) and plus "
                      r"alloc size : (\d+) is more than total mem size : (\d+)")
# vLLM's start-up check (vllm-project/vllm vllm/v1/worker/utils.py request_memory, earlier gpu_worker.py init_device;
# vllm-ascend and the XPU worker reuse it): the device's free / total memory before this engine allocated anything,
# against what gpu_memory_utilization asks for. Everything not free is held outside this engine.
_VLLM_FREE = re.compile(r"Free memory on device(?: ([\w:]+))? \((\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) GiB\)(?: on startup)? is less "
                        r"than desired (?:GPU|NPU|XPU)? ?memory utilization \((\d+(?:\.\d+)?), (\d+(?:\.\d+)?) GiB\)")
# TensorFlow's stream executor when a device allocation fails (tensorflow stream_executor/cuda/cuda_driver.cc
# GpuDriver::DeviceAllocate: 'failed to allocate 17.79G (19104890880 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY';
# HostAllocate: 'failed to alloc N bytes on host'): the exact byte count is the one in brackets.
# TensorFlow on ROCm prints the same sentence from stream_executor/rocm/rocm_driver.cc with the HIP result
# ('from device: hipError_t(1002)' in old builds, 'from device: HIP_ERROR_OutOfMemory' in newer ones; dev batch 25,
# https://github.com/ROCm/tensorflow-upstream/issues/82).
_TF_DEVICE = re.compile(r"failed to allocate \S+ \((\d+) bytes\) from device: "
                        r"(?:CUDA_ERROR_OUT_OF_MEMORY|HIP_ERROR_OutOfMemory|hipError_t\(1002\))")
# MindSpore's device memory pool on Ascend (1.x): 'Out of Memory!!! total[T] (dynamic[D] memory poll[P]) malloc[M]
# failed!': one request of M bytes against the T bytes the pool may use (quoted in mindspore-ai/docs
# docs/mindspore/source_en/faq/implement_problem.md@9e844dc65dc5ef4381574e8b6ec2f93f9681f720; dev batch 25).
# and its pool's one-time reservation at start (MindSpore 1.x ascend_memory_manager.cc MallocDeviceMemory: 'Malloc
# device memory failed, size[32212254720], ret[207001], Device 6 may be other processes occupying this card'): MindSpore
# takes the device's whole pool at once before anything of the job is allocated, so this failing means other
# processes hold the card (the same page's EE9999 case; dev batch 25). Flag foreign: the request is all it gives.
_MS_MALLOC = re.compile(r"MallocDeviceMemory\]?\s*Malloc device memory failed, size\[(\d+)\]")
# AscendCL's device allocation (hicann/runtime docs/zh/FAQ/aclrtMalloc_allocation_failures.md: 'aclrtMalloc failed, ret =
# 207001, size=10485760' (ACL_ERROR_RT_MEMORY_ALLOCATION) and the runtime's 'Failed to allocate device memory,
# device_id=0, size=10485760'; dev batch 26): one request of that many bytes, nothing about the device's state.
_ACL_MALLOC = re.compile(r"aclrtMalloc\w* failed, ret ?=? ?207001\b[^\n]{0,40}?\bsize ?= ?(\d+)"
                         r"|Failed to allocate device memory, device_id=\d+, size=(\d+)")
_MS_OOM = re.compile(r"Out of Memory!+ total\[(\d+)\] \(dynamic\[(\d+)\] memory poll\[(\d+)\]\) malloc\[(\d+)\] failed")
_TF_HOST = re.compile(r"failed to alloc (\d+) bytes on host: CUDA_ERROR_OUT_OF_MEMORY")
# Ray's memory monitor (dev batch 48): the raylet kills a worker when the node's host memory passes the threshold and
# states the used and total memory in GB (binary, FormatFloat(bytes / 1024^3)): ray-project/ray
# src/ray/raylet/node_manager.cc CreateOomKillMessageDetails ('Memory on the node (IP: ..., ID: ...) where the task
# (...) was running was 54.86GB / 57.60GB (0.952354), which exceeds the memory usage threshold of 0.95', raised as
# ray.exceptions.OutOfMemoryError; https://github.com/ray-project/ray/pull/30312, docs ray-core/scheduling/
# ray-oom-prevention) and Ray 2.0's wording ('System memory low at node with IP ... Used memory (54.90GB) / total
# capacity (57.60GB) (0.95307) exceeds threshold 0.95, killing latest task'; https://github.com/ray-project/ray/issues/28774)
_RAY_MEMORY = re.compile(r"(?:\bwhere the task\b[^\n]{0,400}? was running was |\bUsed memory \()(\d+(?:\.\d+)?) ?([KMGT]i?B)\)?"
                         r" / (?:total capacity \()?(\d+(?:\.\d+)?) ?([KMGT]i?B)\)? \(\d*\.\d+\),? (?:which )?exceeds "
                         r"(?:the memory usage )?threshold")
# PyTorch's shared-memory / file mapping (aten/src/ATen/MapAllocator.cpp MapAllocator: 'unable to mmap N bytes from
# file <name>: Cannot allocate memory (12)', the strerror and errno of mmap(2)): one host mapping of N bytes refused
# with ENOMEM (DataLoader workers' shared tensors, torch.load / safetensors mappings; dev batch 32). ENOMEM comes from
# host memory (commit limit) or from the per-process mapping count (vm.max_map_count); the text cannot tell which,
# so it stays a host out-of-memory with its size read.
_MMAP = re.compile(r"unable to mmap (\d+) bytes from file .{0,300}?: Cannot allocate memory \(12\)")
# GLib's allocator (GNOME/glib glib/gmem.c g_malloc / g_malloc0 / g_realloc / g_try_* callers: `g_error ("%s: failed to
# allocate %"G_GSIZE_FORMAT" bytes", G_STRLOC, n_bytes)`, printed as `(prog:PID): GLib-ERROR **: [time: ]<path>/gmem.c:N:
# failed to allocate N bytes`, then SIGTRAP; dev batch 73): one host allocation of N bytes that malloc refused; the size
# decides between a shortage and a size bug (2^64-1 from a negative size, a pointer used as a length). Only GLib's line:
# a bare 'failed to allocate N bytes' is not read.
_GLIB_ALLOC = re.compile(r"\bGLib-ERROR \*\*: .{0,300}?\bgmem\.c:\d+: failed to allocate (\d+) bytes")
# macOS libmalloc (its mvm_allocate_pages / allocate_pages source text: malloc_zone_error(..., "can't
# allocate region\n:*** mach_vm_map(size=%lu, flags: %x) failed (error code=%d)\n", size, debug_flags, kr), older
# releases "*** mach_vm_map(size=%lu) failed (error code=%d)\n"; read through the code index; dev batch 82:
# weechat/weechat#976, IIC2133-PUC/2019-2#50): the kernel refused one host mapping of N bytes (error code 3 =
# KERN_NO_SPACE: no room in the address space). The size decides between a shortage and a size bug (2^64 - k, a negative
# size cast to size_t), as for GLib's line. Only the libmalloc text with its size: 'can't allocate region' alone is not read.
_MACH_VM_MAP = re.compile(r"\bmach_vm_map\(size=(\d+)(?:, flags: [0-9a-fx]+)?\) failed \(error code=\d+\)")
# OpenCV's allocator, as cv::error prints it from modules/core/src/alloc.cpp's OutOfMemoryError (error -4, 'Insufficient
# memory'): 'cv2.error: OpenCV(4.5.2) .../alloc.cpp:73: error: (-4:Insufficient memory) Failed to allocate 921600 bytes
# in function 'cv::OutOfMemoryError'' and, in 3.4, 'error: OpenCV(3.4.1-dev) .../alloc.cpp:55: error: (-4) Failed to
# allocate 1610612736 bytes in function OutOfMemoryError' (dev batch 110: https://github.com/ubicomplab/rPPG-Toolbox/issues/242,
# https://github.com/jetsonhacks/buildOpenCVTX2/issues/26): one host buffer (an image's or a matrix's data) of N bytes
# that the allocator could not get. Flag one_buffer: the size of that one buffer decides between a shortage (capacity)
# and a size bug (absurd-request from 1 TiB, the line a PyTorch DefaultCPUAllocator request is read by), as an image
# size computed wrongly (a resize or warp to a garbage shape) asks for terabytes.
_CV_ALLOC = re.compile(r"\bFailed to allocate (\d+) bytes in function '?(?:cv::)?OutOfMemoryError\b")
# CuPy's memory pool (cupy/cupy cupy/cuda/memory.pyx OutOfMemoryError, raised by _try_malloc when cudaMalloc fails
# after the pool freed its cached blocks; dev batch 74): CuPy 2-6 'out of memory to allocate N bytes (total M bytes[,
# limit set to L bytes])', CuPy 7+ 'Out of memory allocating N bytes (allocated so far: M bytes[, limit set to: L
# bytes]).' with digit grouping. N is the request; M is the pool's own total (what CuPy holds on the device, read as
# reserved; in the older wording the source adds the failed request to it, `total = pool._total_bytes + size`, the
# newer one prints the pool's bytes alone). Chainer prints the same exception. No device size or free figure.
_CUPY_OOM = re.compile(r"\b[Oo]ut of memory (?:to allocate|allocating) (\d{1,3}(?:,\d{3})+|\d+) bytes "
                       r"\((?:total|allocated so far:) (\d{1,3}(?:,\d{3})+|\d+) bytes\b")
# Android ART's Java heap (AOSP art/runtime/gc/heap.cc Heap::ThrowOutOfMemoryError: 'Failed to allocate a N byte
# allocation with F free bytes and <pretty size> until OOM[, target footprint T, growth limit G][; giving up on
# allocation because <1% of heap free after GC | failed due to fragmentation ...]'; dev batch 74): one object of N
# bytes that the app's heap, at its growth limit, cannot take; F is the heap's free space (it may cover N while the
# heap keeps ART's minimum free share or is split up). A host heap: the request and the free bytes, nothing more.
# Dev batch 75: flashlight's memory managers over ArrayFire. CachingMemoryManager::mallocWithRetry (flashlight
# fl/tensor/backend/af/mem/CachingMemoryManager.cpp, since 2020-09: 'Failed to allocate memory of size 40.00 MiB (Device:
# 0, Capacity: 15.78 GiB, Allocated: 14.20 GiB, Cached: 1.20 GiB) with error 'ArrayFire Exception (Device out of
# memory:101)...', sizes by its formatMemory, B / KiB / MiB / GiB / TiB): the request, the device's capacity, the bytes
# the manager took from the device (its 'Allocated', read under the message's word) and the free part of its cache
# ('Cached': the blocks it holds but no array uses, PyTorch's reserved-but-unallocated, so a request within it is
# fragmentation by the guide); before, 'Unable to allocate memory with native alloc for size N bytes with error
# 'ArrayFire Exception (Device out of memory:101)' (flashlight/flashlight#125's quoted mallocWithRetry): the request.
_FL_SIZE = r"(\d+(?:\.\d+)?) ([KMGT]?i?B)"
_FL_CACHING_OOM = re.compile(r"\bFailed to allocate memory of size " + _FL_SIZE + r" \(Device: (\d+), Capacity: " + _FL_SIZE
                             + r", Allocated: " + _FL_SIZE + r", Cached: " + _FL_SIZE + r"\)")
_FL_NATIVE_OOM = re.compile(r"\bUnable to allocate memory with native alloc for size (\d+) bytes with (?:AF )?error "
                            r"'?ArrayFire Exception \(Device out of memory:101\)")
_ART_OOM = re.compile(r"\bFailed to allocate a (\d+) byte allocation with (\d+) free bytes\b")
# Theano's CUDA allocator (Theano theano/sandbox/cuda/cuda_ndarray.cu device_malloc: 'Error allocating %llu bytes of
# device memory (%s). Driver report %llu bytes free and %llu bytes total'; dev batch 18): no cache figures, so the
# arithmetic has the request, the device's free memory and its total.
_THEANO = re.compile(r"Error allocating (\d+) bytes of device memory \(out of memory\)\.\s*Driver report (\d+) bytes "
                     r"free and (\d+) bytes total")
# numpy's array allocator (numpy numpy/_core/_exceptions.py _ArrayMemoryError: 'Unable to allocate {size} for an array
# with shape {shape} and data type {dtype}', the size written by _size_to_string with 3 significant digits, e.g.
# '920. MiB', '6.34 EiB'; dev batch 19): a host allocation, its size as printed (so approximate to 3 digits).
_NUMPY_HOST = re.compile(r"[Uu]nable to allocate (\d+(?:\.\d*)?) ?([KMGTPE]i?B|B|bytes) for an array with shape")
# MLX's Metal allocator (ml-explore/mlx mlx/backend/metal/allocator.cpp malloc_or_wait: '[malloc_or_wait] Unable to
# allocate N bytes.'; dev batch 19), also when a reporter quotes the words: one request of N bytes.
# AWS Neuron runtime device-memory OOM (dev batch 65): the runtime's TDRV log line 'TDRV:log_dev_mem  Failed to allocate
# 4.000GB (alignment: none, usage: tensors) on ND 0:NC 4', followed by its HBM usage table (aws-neuron/aws-neuron-sdk
# neuron-runtime/explore/device-memory.rst @81ce03ae, Out-of-memory (OOM) Errors; the runtime source is not public): one
# request of that size on a NeuronCore's HBM share. Only the TDRV allocator's line: a bare 'Failed to allocate' is not read.
_NEURON_DEV_MEM = re.compile(r"\bTDRV:\w*dev_mem\w*\s+Failed to allocate (\d+(?:\.\d+)?) ?([KMGT]i?B|B|bytes)\b")
_MLX = re.compile(r"Unable to allocate\W{0,2}\s*(\d+) bytes")
# ggml's CUDA / HIP buffer allocator (ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu
# ggml_backend_cuda_buffer_type_alloc_buffer: '%s: allocating %.2f MiB on device %d: cudaMalloc failed: %s'; dev
# batch 21): one buffer of that many MiB (printed to 2 decimals, so approximate) on device N. The device's size is
# what ggml_cuda_init printed earlier in the same log ('  Device %d: %s, compute capability %d.%d, VMM: %s, VRAM: %zu
# MiB'), when the log kept that line.
_GGML_ALLOC = re.compile(r"ggml_backend_cuda_buffer_type_alloc_buffer: allocating (\d+(?:\.\d+)?) MiB on device (\d+): "
                         r"cudaMalloc failed: out of memory")
_GGML_VRAM = re.compile(r"\bDevice (\d+): .*\bVRAM: (\d+) MiB")
# PyTorch's MPS allocator when one buffer is above the device's per-buffer limit (pytorch
# aten/src/ATen/mps/MPSAllocator.mm MPSHeapAllocatorImpl::alloc_buffer_block: TORCH_CHECK(size < m_max_buffer_size,
# "Invalid buffer size: ", format_size(size)), the size in binary units written 'GB' or 'GiB'; dev batch 37): one
# request of that size that Metal will not hand out as one buffer, nothing about the device's state.
_MPS_BUFFER = re.compile(r"Invalid buffer size:\s*" + SIZE)
# Unreal Engine's Vulkan RHI (Runtime/VulkanRHI/Private/VulkanMemory.cpp: UE_LOG(LogVulkanRHI, Fatal, TEXT("Out of
# memory on Vulkan; MemoryTypeIndex=%d, AllocSize=%0.3fMB"), MemoryTypeIndex, (float)AllocationSize / 1048576.0f) when
# the device-memory manager cannot allocate a new heap page; a Warning in versions that return false and let the caller
# try again): the one allocation that failed, in MB of 2^20 bytes (CARLA's UE builds; dev batch 78), nothing else (the
# heap's size and what is free are not printed).
_UE_VULKAN_OOM = re.compile(r"\bOut of memory on Vulkan; MemoryTypeIndex=\d+, AllocSize=(\d+(?:\.\d+)?)\s*(MB|KB|GB)\b")
# PaddlePaddle's device allocator (PaddlePaddle/Paddle paddle/fluid/memory/allocation/cuda_allocator.cc, later
# paddle/phi/core/memory/allocation/cuda_allocator.cc CUDAAllocator::AllocateImpl: PADDLE_THROW_BAD_ALLOC(
# ResourceExhausted("Out of memory error on GPU %d. Cannot allocate %s memory on GPU %d, %s memory has been allocated
# and available memory is only %s.")), quoted verbatim in PaddleOCR's training docs; Paddle 2.0 and earlier leave out
# the 'has been allocated' part; XPU / custom devices print their own type): sizes written by string::HumanReadableSize
# ('2.812744MB', '39.250000kB', '0.000000B', 1024-based). The request, the memory Paddle already took from the device
# through its allocator, which the message itself calls 'allocated' (numbers keys follow the message's words: dev
# batch 42 read it as allocated; dev batch 41 had named it reserved) and what the device reported available (free);
# no cache split and no total (dev batch 41: PaddleOCR #1470 / #4476; dev batch 42: Paddle #42228).
_PD_SIZE = r"(\d+(?:\.\d+)?)\s?([kKMGTPE]?B)\b"
_PADDLE_OOM = re.compile(r"Out of memory error on ([A-Za-z]+) (\d+)\. Cannot allocate " + _PD_SIZE + r" memory on \w+ \d+, "
                         r"(?:" + _PD_SIZE + r" memory has been allocated and )?available memory is only " + _PD_SIZE)
# Dev batch 88: ggml-metal's check of a buffer against the device's single-buffer limit
# (MTLDevice.maxBufferLength), as llama-cpp-python 0.1.67's ggml_metal_add_buffer prints it:
# "ggml_metal_add_buffer: buffer 'data' size 9763717120 is larger than buffer maximum of 8589934592", then
# "llama_init_from_file: failed to add buffer" (abetlen/llama-cpp-python #438, llama-13b q5_1 / q6_K on an M2 Pro
# with 16 GB). The size is the buffer asked for, in bytes: the request. The maximum is the largest single Metal
# buffer, not the device's memory, and is not read as a total.
_METAL_BUFFER_MAX = re.compile(r"\bbuffer '[^'\n]*' size (\d+) is larger than buffer maximum of \d+")
# Dev batch 105: MLX's Metal allocator refusing one buffer above the device's single-buffer limit ('RuntimeError:
# [metal::malloc] Attempting to allocate N bytes which is greater than the maximum allowed buffer size of M bytes.', as
# LM Studio's MLX engine prints it, https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2240): N is the request. M is the largest single buffer, not
# the device's memory, and is not read as a total (as ggml-metal's maximum above), so the arithmetic has the request
# alone: absurd-request at 1 TiB and more (the guide), an out-of-memory (capacity) below.
_MLX_BUFFER_MAX = re.compile(r"\[metal::malloc\] Attempting to allocate (\d+) bytes which is greater than the maximum "
                             r"allowed buffer size\b")
# Out-of-memory messages whose sizes are bare byte counts (dev batch 42): onnxruntime's BFC arena (microsoft/onnxruntime
# onnxruntime/core/framework/bfc_arena.cc AllocateRawInternal 'Failed to allocate memory for requested buffer of size N',
# 'Available memory of N is smaller than requested bytes of M'), XLA / JAX (xla/service/gpu: 'RESOURCE_EXHAUSTED: Out of
# memory while trying to allocate N bytes.', 'Out of memory allocating N bytes'), TSL's BFC allocator ('ran out of memory
# trying to allocate 1.25TiB (rounded to N)'), TensorRT's builder ('Requested amount of GPU memory (N bytes) could not be
# allocated') and PhysX's GPU allocator ('PxgCudaDeviceMemoryAllocator fail to allocate memory N bytes!! Result = 2').
# Dev batch 47: TensorRT 8.6+'s virtual-memory buffer (StdVirtualMemoryBufferImpl::resizePhysical, ErrorCode
# kOUT_OF_MEMORY = 2) states the request: 'Error Code 2: OutOfMemory (Requested size was N bytes.)'.
_BYTES_OOM = [
    re.compile(r"Failed to allocate memory for requested buffer of size (\d+)"),
    re.compile(r"Out of memory (?:while trying to allocate|allocating) (\d+) bytes"),
    re.compile(r"ran out of memory trying to allocate \S+ \(rounded to (\d+)\)"),
    re.compile(r"Requested amount of (?:GPU )?memory \((\d+) bytes\) could not be allocated"),
    re.compile(r"PxgCudaDeviceMemoryAllocator fail to allocate memory (\d+) bytes"),
    re.compile(r"Error Code 2: OutOfMemory \(Requested size was (\d+) bytes\.?\)"),
    # dev batch 50: faiss's GPU allocations (facebookresearch/faiss gpu/utils/MemorySpace.cpp 'failed to cudaMalloc %zu
    # bytes (error %d %s)', gpu/StandardGpuResources.cpp 'Failed to cudaMalloc %zu bytes on device %d (error %d %s' and
    # 'StandardGpuResources: alloc fail type ... size %zu bytes (cudaMalloc error %s [%d])'), out-of-memory (2) only
    re.compile(r"\b[Ff]ailed to cudaMalloc (\d+) bytes(?: on device \d+)? \(error 2 out of memory\b"),
    re.compile(r"\bsize (\d+) bytes \(cudaMalloc error out of memory \[2\]\)"),
    # dev batch 52: XLA's StreamExecutor allocator (openxla/xla xla/stream_executor/device_memory_allocator.cc,
    # StreamExecutorMemoryAllocator::Allocate: 'Failed to allocate request for %s (%uB) on device ordinal %d', JAX's
    # RESOURCE_EXHAUSTED and the older 'Resource exhausted:' of PjRt's replica execution)
    re.compile(r"\bFailed to allocate request for \S+ \((\d+)B\) on device ordinal \d+"),
    _METAL_BUFFER_MAX,
    _MLX_BUFFER_MAX,
    # dev batch 121: PaddlePaddle's host allocator (paddle/fluid/memory/detail/system_allocator.cc, 'ResourceExhaustedError:
    # Fail to alloc memory of N size, error code is 12.', errno 12 = ENOMEM; PaddlePaddle/PaddleOCR #7710): N bytes
    re.compile(r"\bFail to alloc memory of (\d+) size, error code is 12\b"),
    # dev batch 130: torch-directml's device allocation ('RuntimeError: Could not allocate tensor with N bytes. There is
    # not enough GPU video memory available!', as the DirectML builds of stable-diffusion-webui print it:
    # lshqqytiger/stable-diffusion-webui-amdgpu #414 and #196): N bytes, the one request; nothing about the device's state
    re.compile(r"\bCould not allocate tensor with (\d+) bytes\. There is not enough GPU video memory available\b"),
]
# Dev batch 87: Sophgo bmlib's device-memory allocation (libsophon bmlib/src/bmlib_memory.cpp, bm_alloc_gmem under
# bm_malloc_device_byte*: '[bmlib_memory][error] bm_alloc_gmem failed, dev_id = N, size = 0x<hex>') prints its byte count
# in hexadecimal: sophgo/LLM-TPU #8's 'size = 0xc0fb4000' is 3237691392 bytes, loading a bmodel of 3244769616 bytes
# (du -b in the thread). Only the hex form after 'size = ' on bm_alloc_gmem's own line is read.
_BM_GMEM = re.compile(r"\bbm_alloc_gmem failed, dev_id = \d+, size = 0x([0-9a-fA-F]+)\b")
# Dev batch 50: XLA's sizes in one-letter binary units, '%.2f' and K / M / G / T (openxla/xla docs/errors: error_1000.md
# 'RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm.
# Exceeded hbm capacity by 17.34G.', error_0101.md 'Attempting to reserve 29.49G at the bottom of memory. That was not
# possible. There are 147.64M free, 0B reserved, and 147.64M reservable.'), also in the allocation texts _BYTES_OOM reads
# with a byte count ('Out of memory while trying to allocate 8.38G.'). The compile-time 'Used X of Y' is what the whole
# program needs against the chip's HBM (Y, the total), not one request. TensorFlow's older BFC warning in IEC units
# ('ran out of memory trying to allocate 538.33MiB. The caller indicates that this is not a failure') is not read here.
_XLA_SIZE = r"(\d+(?:\.\d+)?)([KMGTPE])(?![\w])"  # one letter only: TSL's '538.33MiB' is another format
_XLA_ALLOC = [
    re.compile(r"Out of memory (?:while trying to allocate|allocating) " + _XLA_SIZE),
    re.compile(r"ran out of memory trying to allocate " + _XLA_SIZE + r"(?! \(rounded to)"),
]
# Dev batch 75: TensorFlow 1.x's BFC allocator failing a request (tensorflow core/common_runtime/bfc_allocator.cc
# BFCAllocator::AllocateRaw: LOG(WARNING) << "Ran out of memory trying to allocate " << strings::HumanReadableNumBytes(n)
# << ".  See logs for memory state."; later 'Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.25GiB
# (rounded to N)', which _BYTES_OOM reads): the request in IEC units. The not-a-failure notice of the same allocator
# (retry_on_failure false, row tf-bfc-not-a-failure) is not a request that failed and is not read.
_TF_BFC_IEC = re.compile(r"\b[Rr]an out of memory trying to allocate (\d+(?:\.\d+)?)([KMGTPE]iB|B)\b(?! \(rounded to)"
                         r"(?![^\n]*caller indicates that this is not a failure)")
_XLA_HBM = re.compile(r"Ran out of memory in memory space (\w+)\. Used " + _XLA_SIZE + r" of " + _XLA_SIZE + r" \1\b")
# Dev batch 52: the reserve message's last figure, what of the free memory can be reserved as one block (the TPU
# runtime's 'There are F free, R reserved, and V reservable'): free memory that covers the request while the
# reservable part does not is memory split into pieces (pytorch/xla #3470: 6.48G asked, 6.78G free, 3.33G reservable).
_XLA_RESERVE = re.compile(r"Attempting to reserve " + _XLA_SIZE + r" at the bottom of memory\. That was not possible\. "
                          r"There are " + _XLA_SIZE + r" free\b(?:, \S+ reserved, and " + _XLA_SIZE + r" reservable\b)?")
# Dev batch 53: older allocators' own out-of-memory sentences. PaddlePaddle Fluid's buddy allocator sizing its next chunk
# (PaddlePaddle/Paddle paddle/fluid/platform/gpu_info.cc GpuMaxChunkSize: PADDLE_ENFORCE_LE(allocating, available),
# printed 'enforce allocating <= available failed, A > B' by Paddle 0.1x's enforce, 'Expected allocating <= available,
# but received allocating:A > available:B.' by the 1.x one; 'enforce allocating < available failed, A >= B' before
# the check became <=): A bytes asked of the device, B what cudaMemGetInfo reported available (the dev thread,
# Paddle #8992). Paddle v0.8's GPU allocator (paddle/math/Allocator.h GpuAllocator::alloc: CHECK(ptr) << "Fail to
# allocate GPU memory " << size << " bytes"): one request of N bytes.
# Dev batch 60: tt-metal's bank allocator (tenstorrent/tt-metal tt_metal/impl/allocator/bank_manager.cpp
# BankManager::allocate_buffer: 'Out of Memory: Not enough space to allocate {} B {} buffer across {} banks, where each
# bank needs to store {} B', later with ', but bank size is {} B' and, in newer versions, the bank's own figures
# '(allocated: {} B, free: {} B, largest free block: {} B)'): the whole buffer, the share each bank must hold and what
# one bank has. The request is the whole buffer as printed; the per-bank share is what one bank has to place, so it is
# the share, not the whole, that is set against the bank's free memory and its largest free block (a share that the
# free memory covers but no free block holds is free space split up; tt-xla #4130).
_TT_BANK_OOM = re.compile(r"Out of Memory: Not enough space to allocate (\d+) B (?:DRAM|L1(?:_SMALL)?|TRACE) buffer across "
                          r"(\d+) banks, where each bank needs to store (\d+) B(?:, but bank size is (?:only )?(\d+) B"
                          r"(?: \(allocated: (\d+) B, free: (\d+) B, largest free block: (\d+) B\))?)?")
# Dev batch 60: Ollama's host-memory check before it loads a model (ollama/ollama llm/server.go: 'model requires more
# system memory (%s) than is available (%s)', the sizes by format.HumanBytes2, binary units): what the model needs of
# host RAM against what the system reports free (ollama #10920).
_OLLAMA_HOST = re.compile(r"model requires more system memory \((\d+(?:\.\d+)?) ?([KMGT]i?B|B)\) than is available "
                          r"\((\d+(?:\.\d+)?) ?([KMGT]i?B|B)\)")
_PADDLE_ENFORCE = re.compile(r"\benforce allocating <=? available failed, (\d+) >=? (\d+)"
                             r"|\bExpected allocating <= available, but received allocating:(\d+) > available:(\d+)")
_PADDLE_V08 = re.compile(r"\bFail to allocate GPU memory (\d+) bytes\b")
# DyNet's allocators: the CPU pool (clab/dynet dynet/mem.cc CPUAllocator::malloc: 'CPU memory allocation failed n=' <<
# n << ' align=' << align, then dynet::out_of_memory), and the GPU pool's report after a failed cudaMalloc ('CUDA is
# unable to allocate enough GPU memory on GPU:N, at current stage only X MB out of Y MB is free.', printed with the
# pools' sizes since clab/dynet #1141; dev batch 53: conala-baseline #4): what the device had free and its size, in MB.
_DYNET_CPU = re.compile(r"\bCPU memory allocation failed n=(\d+) align=\d+")
_DYNET_GPU = re.compile(r"\bCUDA is unable to allocate enough GPU memory on GPU:(\d+), at current stage only (\d+) MB "
                        r"out of (\d+) MB is free")
# Dev batch 54: GPU miners' DAG check (T-Rex: 'Device does not have enough free memory to hold the DAG for epoch N.
# Required: 3.11 GB, free: 3.10 GB.'): the DAG the epoch needs, and what the device has free
_MINER_DAG = re.compile(r"\benough (?:free )?memory to hold the (?:full )?DAG for epoch \d+\.?\s*Required: ([\d.]+) ?([KMG]i?B), "
                        r"free: ([\d.]+) ?([KMG]i?B)")
# Dev batch 53: a negative byte count in an allocation sentence ('allocation of -N bytes', 'allocate -N bytes',
# 'allocating -N bytes'): a size printed signed after it overflowed or was computed wrongly (an allocator's '%ld' /
# std::to_string of a size that went below zero, e.g. a length difference taken the wrong way round). No allocator can
# serve it whatever is free: absurd-request, the request kept as printed (negative). The miss family of held-out
# rounds 67-68 (RAPIDS RMM's and HIP / custom allocators' requests), described in words; the mechanism tests use
# constructed lines. A size without its minus sign is not this reading.
_NEGATIVE_ALLOC = re.compile(r"\b(?:[Aa]llocation of|[Aa]llocate|[Aa]llocating|[Aa]lloc)\s+(-\d+)\s*(?:bytes|B)\b")
_ORT_AVAILABLE = re.compile(r"Available memory of (\d+) is smaller than requested bytes of (\d+)")
# gperftools tcmalloc's report of a large allocation that succeeded ('tcmalloc: large alloc N bytes == 0x... @ ...'),
# and the signs that the process died after it (dev batch 56; read together at the end of scan)
_TCMALLOC_NOTICE = re.compile(r"tcmalloc: large alloc (\d+) bytes == 0x[0-9a-f]+")
_PROCESS_DIED = re.compile(r"\bKernelRestarter: restarting kernel\b|^\s*Killed\s*$")
_HOST = [
    # dev batch 56: tcmalloc's large-alloc report of an allocation that failed ('== (nil)'): the request that failed
    re.compile(r"tcmalloc: large alloc (\d+) bytes == \(nil\)"),
    re.compile(r"not enough memory: you tried to allocate (\d+)\s*GB"),
    re.compile(r"DefaultCPUAllocator: (?:not enough memory|can't allocate memory): you tried to allocate (\d+) bytes"),
]
# MuJoCo's arena (google-deepmind/mujoco's engine, mj_stackAlloc: mju_error("mj_stackAlloc: out of memory, stack
# overflow%s\n  max = %zu, available = %zu, requested = %zu\n nefc = %d, ncon = %d", " at <caller>, line N", ...); dev
# batch 51): one step's stack request against the stack part of MjData's preallocated arena (max) and what is left of it
# (available), in bytes. The message spans lines; the line of numbers is read with the one before it (_TWO_LINE_MESSAGES).
_MJ_HEAD, _MJ_NUMBERS = r"\bmj_stackAlloc: out of memory\b", r"max = (\d+), available = (\d+), requested = (\d+)"
_MJ_STACK = re.compile(_MJ_HEAD + r".{0,200}?\b" + _MJ_NUMBERS)
_MJ_STACK_HEAD, _MJ_STACK_NUMBERS = re.compile(_MJ_HEAD), re.compile(r"^\s*" + _MJ_NUMBERS)
# ggml's context pool (ggml-org/ggml src/ggml.c ggml_new_object, ggml_new_tensor_impl in early builds: '%s: not enough
# space in the context's memory pool (needed %zu, available %zu)' with the end the pool would need and the pool's
# mem_size, fixed when the context is created; dev batch 63): the same kind of preallocated arena as MuJoCo's, in bytes.
# Its scratch buffer (ggml.c ggml_new_tensor_impl while a scratch buffer is set, ggml 2023 builds: '%s: not enough space
# in the scratch memory pool (needed %zu, available %zu)' with scratch.offs + the tensor's size and scratch.size, read in
# the code index; dev batch 93: https://github.com/marella/ctransformers/issues/34,
# https://github.com/li-plus/chatglm.cpp/issues/136): the buffer the program sized for one evaluation's intermediate
# tensors, the same reading (flag ggml_scratch for the summary)
_GGML_POOL = re.compile(r"\bggml_new_(?:object|tensor_impl): not enough space in the (context's|scratch) memory pool "
                        r"\(needed (\d+), available (\d+)\)")

# TensorFlow Lite Micro's arena (tensorflow/tflite-micro: SingleArenaBufferAllocator / NonPersistentArenaBufferAllocator
# 'Failed to allocate tail memory. Requested: %u, available %u, missing: %u', the same for head / temp memory and
# 'Failed to resize buffer. Requested: ...', 'Failed to allocate memory. Requested: ...' in older releases (read in the
# code index and tensorflow/tflite-micro PR #1090); MicroAllocator's 'Arena size is too small for all buffers. Needed %u
# but only %u was available.', which a serial console may cut; dev batch 77): the one preallocated tensor arena the
# application hands the interpreter, in bytes: the request and what is left of the arena (free); the fix is a larger
# kTensorArenaSize (tensorflow/tflite-micro #1458) or a smaller model.
_TFLM_ARENA = (
    re.compile(r"\bFailed to (?:allocate (?:(?:tail|head|temp|persistent) )?memory|resize buffer)\. Requested: (\d+), "
               r"available (\d+), missing: \d+"),
    re.compile(r"\bArena size is too small for all buffers\. Needed (\d+) but only (\d+) was avai"),
)

# ---------------------------------------------------------------- codes and sentences
# The texts themselves are data (`data/messages.tsv`, `data/cuda_nccl_codes.tsv`, `data/code_contexts.tsv`,
# compiled by `_rules`); what stays here is the shape of code tokens that need no context.

_CANN = re.compile(r"(?:^|[\s(\[|'\"])(E[0-9A-Z]\d{3}[0-9A-Z])(?=[:\s)\]\[!.,]|$)")
_ERRNPU = re.compile(r"\bERR(\d{5})\b")
# A CUDA result name right after `== ` is the operand of a check's condition, not the error (MXNet's CUDA_CALL:
# 'Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading CUDA: <the error's text>', dev batch 52).
_NAMES = re.compile(r"\b(ACL_ERROR_[A-Z_]+|ACLNN_ERR_[A-Z_]+|HCCL_E_[A-Z_]+|(?<!== )cudaError[A-Z]\w+|nccl(?:Unhandled\w+|System|Internal|InvalidArgument|InvalidUsage|Remote)Error|ncclInvalid\w+)\b")

# The trigger words of the first filter (`_worth_scanning`): the scanner's own parsers' (code tokens, error-like lines,
# frames) and those of the rules with no needed text (`_rules._rule_index().always`; a test checks each of their dev-corpus
# matches passes here). A rule with a needed text reaches its lines through `_rules.needed_text_rule_argues`, so since
# session 31 a new rule adds no word here; the words dev batches 16-120 added for their rules stay, because error-like
# lines of held-out logs are found through them too (dropping them changed held-out answers).
_TRIGGER = re.compile(
    r"memory|allocate|rror|ERR\d|E[0-9A-Z]\d{4}|xception|ssert|illegal|timeout|Timeout|times out|timed out|atchdog"
    r"|HCCL|NCCL|Hccl|hccl|nccl|driver|\.so|ignored|Warning|WARN|warn|\[W\d|^\s*W\d{4}|not (?:currently )?(?:supported|implemented)"
    r"|NotImplemented|Could not run|fall back|fallen off the bus|failed|Failed|fail\b|abnormal|busy|set_env|OPP|InferShape|k-axis"
    r"|Segmentation|core dumped|File \"|Tried|tried|aicore|aivec|aicpu|cuda|CUDA|NPU|Parameter|Unsupported|unsupported"
    r"|symbol|No module|binary|Optype|engine|op store|devmm|hal[A-Z]|drvRetCode|Dist\w+Error|Socket|store|rendezvous"
    r"|version|incompatib|code|ret(?:Code)?=|result = |Status|ASCEND_|kernel image|ECC|NVLink|PTX|device|Device"
    r"|Invalid|invalid|argument|format does not match|OP_PROTO|\[ERROR\] [A-Z]+\(|Inner|Internal|launch|Op \w+ does not|[Kk]illed|must match"
    r"|oom|OOM|Out Of Memory|SIGKILL|signal 9|exitcode|已杀死|[Ss]oc[_ ]?[Vv]ersion|SOC|aclInit|NumPy|numpy|Numpy"
    r"|_ARRAY_API|binary incompat|has no attribute|_OpNamespace|socket|C10d|vs\. 0\)|connect\(\)|waiting for"
    # dev batch 63: transformers' GenerationMixin notice, onnxruntime-web's unresolved operator, NGC's no-driver banner
    r"|GenerationMixin|resolve operator|Driver was not detected"
    r"|CUBLAS_|CUDNN_|CURAND_|CUFFT_|CUSOLVER_|CUSPARSE_|CUDA_HOME|nvcc|GNU version|Exception|Cuda failure"
    r"|ErrCode|NVRM|ndarray|AICERROR|aicerror|opType|capture mode|platform|TotalUsedMemStatistics"
    r"|(?i:died|crash|fail to|open files|huggingface|grad_fn|require grad|inplace operation|backward through|Ampere)"
    r"|MiB\s*\||\d MB\s*\||300I|(?i:ascend310)|bound already|already in use|EADDRINUSE|is_sm\d|provider names"
    # dev batch 16: kernel registration, kernel-support and installation texts, Ascend context (300V, CANN paths)
    r"|Binary|does not exist|internal format|(?i:no available kernel)|no kernel found|head dim|argcheck|valid pointer"
    r"|is NULL|vulnerability|upgrade torch|acl init|300V|(?i:310p)|/Ascend/|CANN \d"
    # dev batch 19: pip's resolver, cpp_extension's compiler check
    r"|ResolutionImpossible|conflicting dependencies|Your compiler"
    # dev batch 64: pip finding no distribution for a requirement (a package name without any other trigger word)
    r"|No matching distribution"
    # dev batch 65: CANN GE E10501's message printed without its code (hicann/ge error_registry.cc)
    r"|IR for Op"
    # dev batch 66: a Windows crash code after PyCharm's Chinese exit notice
    r"|退出代码"
    # dev batch 67: scikit-learn's check_is_fitted sentence without its exception name, CMake's compiler look-up
    r"|not fitted yet|_COMPILER could be found"
    # dev batch 68: CTranslate2's library loader, Caffe's CPU-only stub, MSVC's bad_alloc text, a host SIGILL,
    # DXGI's device hung, dynamic loss-scaling notices (lines with no other trigger word)
    r"|cannot be loaded|CPU-only Caffe|bad allocation|Illegal instruction|illegal hardware|887A0006|DEVICE_HUNG|loss scale"
    # dev batch 69: mujoco-py's discover_mujoco message on its own line after a bare 'Exception:'
    r"|missing MuJoCo"
    # dev batch 70: MediaPipe's CPU-only build, mailutils' `from` reading a Python line, torchvision's ImageFolder layout
    # check and OmegaConf's conversion check quoted without their exception names, nvdiffrast's GL version check, PyOpenGL's
    # EGL error fields (lines with no other trigger word)
    r"|disabled in build flags|can't read /var/mail/|class folder in|no valid file for the classes|could not be converted to"
    r"|or later is required|EGL_NOT_INITIALIZED"
    # dev batch 71: pydicom's pixel-data checks quoted without their exception name
    r"|the pixel data|no pixel data"
    # dev batch 76: cuFFT's numbered result after a plan call, GenAI's provider name, torchvision's build-feature and
    # video-backend checks, .NET's missing native entry point (lines with no other trigger word)
    r"|cufft[A-Z]|provider type|ompiled with \w+ support|video backend is not available|entry point named"
    # dev batch 77: rknn-toolkit2's dataset reader, SNPE's platform validator, XLA's libdevice search, DXGI's removed
    # device (lines with no other trigger word)
    r"|Unsupport file|SNPE is NOT|testsig|ADSP_LIBRARY_PATH|libdevice|DXGI_|887[Aa]0005|Arena size is too small"
    # dev batch 22: ptxas not knowing the GPU, NCCL's duplicate-GPU check, world-size checks
    r"|ptxas|Duplicate GPU|(?i:world[ _]?size)"
    # dev batch 24: ROCm's GPU page fault, fake-tensor and functionalization checks, lists of possible causes
    r"|Memory access fault|non-ATen|must be .meta.|(?i:root causes|common causes|possible causes)"
    # dev batch 25: an upper-case logging level alone ('[ERROR] arg0 tensorsize: .. not match', ais_bench / msit)
    r"|\bERROR\b"
    # dev batch 32: Lightning's device checks (an empty or short list of visible GPUs)
    r"|machine only has|accelerator is not available"
    # dev batch 32: a shell's lower-case crash report ('zsh: segmentation fault  python -c ...')
    r"|segmentation fault|segfault"
    # dev batch 33: negative tensor sizes, dtype checks without an exception name, the mixed-precision GPU checks
    r"|negative dimension|should be the same|same dtype|mixed precision requires|can only be used on CUDA"
    # dev batch 35: cuDNN's run-time loader (a sub-library not found), MPS operands left on the CPU
    r"|Could not locate|Unable to load any of|Cannot load symbol|has not been allocated"
    # dev batch 36: ATen's matmul shape check printed bare, the i915 driver's GPU-hang report, the GPTQ loader's check,
    # SYCL's out-of-resources result on a wrapped continuation line
    r"|cannot be multiplied|GPU HANG|GPU hang|requires all the modules to be on GPU|OUT_OF_RESOURCES|OUT_OF_DEVICE_MEMORY"
    # dev batch 23: protobuf's double registration, MindSpore's scheduler re-registration, ATen's view / stack checks
    r"|already exists in database|Repeated registration|view size is not compatible|stack expects each tensor"
    # dev batch 26: a build tool's minimum version ('CMake 3.24.0 or higher is required')
    r"|or higher is required"
    # dev batch 73: the Jetson multimedia API's NvEGLImageFromFd without an EGL display
    r"|EGLDisplay"
    # dev batch 27: a ranks-per-NIC cap, a stack-size check, PyPTO's tile-shape / producer checks, codegen vector types
    r"|(?i:ranks? per (?:nic|ip|node|host|device)|stack size|empty address|WORKSPACE_ITER_INVALID|tile ?shape|cannot convert type|result success|atc run success)"
    # dev batch 28: Triton's resource check, xFormers' build check, bitsandbytes' binary check, CUDA-only features
    # and the Apple-silicon context they are read in
    r"|(?i:out of resources?\b|can'?t load c\+\+/cuda extensions|\(you have \d|required library version not found"
    r"|detection failed|cuda binary|no gpu found|gpu is (?:needed|required)|\bmac ?os\b|apple (?:m\d|silicon)|\bmps\b)"
    # dev batch 37: MPS's per-buffer check, an op library's missing registration, the bf16 device checks, an Apple
    # chip named in a reporter's line (the Apple-silicon context row)
    r"|Invalid buffer size|No such operator|(?i:support bf16|support bfloat16)|\bM[1-4] (?:Pro|Max|Ultra|chip)\b"
    # dev batch 38: cuFFT's half-precision checks, the MPS backend's dtype conversion, c10's old C++ warning prefix
    r"|cuFFT|to the MPS backend|\[W [\w.\-]+:\d+\]"
    # dev batch 46: a caught error printed under a warning, Horovod's shutdown, the Intel GPU plugin's resources
    r"|some optimizations will not be enabled|caught was|Horovod has been shut down|out of GPU resources"
    # dev batch 40: compiled extensions built without their CUDA kernels ('Not compiled with GPU support')
    r"|(?i:not compiled with)"
    # dev batch 54: OpenCL status names / calls, HailoRT, QNN op validation, the TFLite GPU delegate's partition notice,
    # aws-ofi-nccl, NVENC, MatX, the CPU-only asserts of PyG's extensions, torch.compile's platform checks
    r"|OpenCL|\bCL_[A-Z_]{4,}|\bcl[A-Z][A-Za-z]+ failed|HAILO_|HEF format|Validation FAILED|IsOpSupported|validateOpConfig"
    r"|GPU delegate|on the GPU, and|NET/OFI|NVENC|nvenc|libnvidia-encode|matxOutOfMemory|must be CPU tensor|torch\.compile"
    # dev batch 117: TFLite's op resolver ('Didn't find op for builtin opcode', 'unresolved custom op'; lines with no
    # other trigger word)
    r"|builtin opcode|unresolved custom op|custom op for name"
    # dev batch 119: Ray Data's map_batches check, printed as a string broken over lines with no other trigger word
    r"|when requesting GPUs"
    # dev batch 56: the DataLoader iterator's ignored __del__ exception, tcmalloc's large-alloc report, Arrow's 2 GiB
    # array limit, onnxruntime-web's buffer allocation, TorchSharp's device initialisation
    r"|Exception ignored in|large alloc|ArrowCapacityError|Unrecognized (?:index|query) name|cannot contain more than|allocate a buffer of"
    r"|did not initiali[sz]e|did not match|CUDA non available"
    # dev batch 58: CPython's ImportError text without its 'ImportError:' prefix (a package version lacking a name)
    r"|cannot import name"
    # dev batch 59: Unity Barracuda's importer printing 'Unknown type X encountered while parsing layer N.' bare
    r"|encountered while parsing layer"
    # dev batch 61: Torch7 / Lua's call of a layer's backend function that the installed binary does not export
    r"|\(a nil value\)"
    r"|the DAG|DAG for epoch|cudaAllocMapped|maximum buffer size|max buffer size"
    # dev batch 55: Open MPI's daemon loss, Ray's heartbeats and object store, TensorPipe's RPC agent, Dask's nanny and
    # streams, GCC killed, the Windows commit limit, the kubelet's eviction, MNN / ncnn / tract / onnxruntime EP texts
    r"|\bORTE\b|\bPRTE\b|heartbeats|marked (?:as )?dead|ObjectStore|object store|PlasmaStore|RPC agent"
    r"|StreamClosed|CommClosed|memory budget|was killed by|signal terminated|WinError 1455|os error 1455|errno=1455"
    r"|paging file|页面文件|low on resource|Can't Find type|not exists or|ExecutionProvider|xecutionProvider"
    r"|Require cuDNN|compile with USE_|Driver report|fi_mr_reg|Translating node|Failed analyse|Failed to create CUDAE"
    # dev batch 42: compute-sanitizer / cuda-memcheck report lines ('========= Address 0x... is out of bounds')
    r"|^[\s>|]*={9}"
    # dev batch 43: corrupt / truncated downloads (checksums, zip archives), cuDNN's handle, tiny-cuda-nn's binding and
    # performance warnings, PyTorch3D's rasterizer limits
    r"|(?i:checksum|sha-?256|hash value|not a zip ?file|central.directory|cudnn handle)|tinycudann|FullyFusedMLP|CutlassMLP"
    r"|coarse rasterization|that's too many|num_closest"
    # dev batch 44: the runtime cuDNN / CUDA older than the build (TensorFlow, XLA, JAX), ROCm fat binaries without the
    # chip's code object, DeepSpeed's ssh pre-flight, Gloo's interface lookup, torch.load's device check, TensorRT's
    # parser and builder codes, pinned-memory fallbacks
    r"|Loaded runtime CuDNN|JAX was built against|hipErrorNoBinaryForGpu|binary for current devices|code object for all"
    r"|reachable via ssh|PasswordAuthentication=no|Unable to find (?:address|interface) for|deserialize object on"
    r"|In node -?\d|In function \w+:?\s+\[\d|\] Error Code \d|pinned (?:system )?memory"
    # dev batch 45: the dispatcher's backend list alone, MPS's 1.12 wording, weights files that are not weights (Git LFS
    # pointers, safetensors headers), Triton missing / without libcuda.so, FlashAttention's backward head-dim limit
    r"|is only available for these backends|not current implemented|invalid load key|deserializing header"
    r"|(?i:working triton installation)|TritonMissing|libcuda\.so cannot found|FlashAttention backward for"
    # dev batch 47: DGL's graph-API checks printed without their exception name, mmcv / mmengine registry lookups
    r"|Expect number of features|Must be one of the (?:node|edge) types|type name must be specified|registry"
    # dev batch 51: tfjs's WebGL texture-size check, attention kernels' head-size conditions
    r"|Requested texture size|head_(?:size|dim)"
    # dev batch 52: InfiniBand transport retries (UCX, ibverbs), video decoders' codec checks, ggml's assertion
    r"|retry count|(?i:codec)|GGML_ASSERT"
    # dev batch 53: CNMeM's status name, TensorFlow's kernel registry, Detectron's ops library, ps-lite's environment
    # checks, Horovod's stall report, DyNet's and PaddlePaddle's (v0.8 and Fluid) allocators
    r"|CNMEM_|OpKernel|ops lib|DMLC_|call Start|Stalled ranks|allocation failed n=|allocating <=? available"
    r"|Fail to allocate"
    # dev batch 75: MNN's converter lists (a list line with no other trigger word), TFLite's static-size delegate notice
    r"|NOT_SUPPORTED_OP|Op Not Support|static-sized tensors"
    # dev batch 78: TensorRT's engine header and plugin registry, Triton's too-old GPU, setrlimit's limits, TensorFlow's
    # gather index, docking programs' atom limit, libtorch's cuDNN look-up (lines with no other trigger word)
    r"|Version tag|kPLAN_MAGIC_TAG|PluginCreator|triton GPU compiler|maximum limit|is not in \[0, |too many atoms"
    r"|Maximum number of atoms|MAX_NUM_OF_ATOMS|Turning the option off"
    # dev batch 79: factorizations refusing a matrix that is not positive definite, ExecuTorch's out-variant pass
    r"|Cholesky|positive.definite|singular U|out variant"
    # dev batch 80: a cloud's GPU / machine-type refusal, MediaPipe's EGL RET_CHECK and Taichi GGUI's Vulkan check
    # quoted without an exception name
    r"|accelerator count|features are not compatible|initialize EGL|must be available for GGUI"
    # dev batch 84: sherpa-onnx's CPU fallback of a build without its GPU option (no other trigger word on the line)
    r"|Please compile with -D"
    # dev batch 85: the browser's WebGL context-lost console error ('WebGL: CONTEXT_LOST_WEBGL: loseContext: context lost')
    r"|CONTEXT_LOST_WEBGL"
    # dev batch 87: TPU-MLIR's calibration-table import ("can't open calibration table file!", no other trigger word)
    r"|open calibration table"
    # dev batch 88: ggml-metal's single-buffer check, ComfyUI's prompt validation, ptxas' own host allocation failure
    # (lines with no other trigger word)
    r"|larger than buffer maximum|Value not in list|ptxas fatal"
    # dev batch 89: Blender Cycles' device allocator failure, reported as the render's error, and OptiX's ABI status
    # printed by its name (lines with no other trigger word)
    r"|System is out of GPU|OPTIX_ERROR_UNSUPPORTED_ABI_VERSION"
    # dev batch 90: MXNet's storage layer without CUDA, libNVVM's IR parse error under Numba's NvvmError (lines with no
    # other trigger word; Kokkos' 'could not find a valid execution configuration' passes the weak layer's 'could not find')
    r"|Compile with USE_CUDA=1|<unnamed> \(\d+, \d+\): parse expected"
    # dev batch 91: transformers' purely-quantized fine-tuning check, Dynamo's recompile-limit failure, bitsandbytes'
    # set-up report (lines with no other trigger word)
    r"|purely quantized|FailOnRecompileLimitHit|COMPILED_WITH_CUDA|COMPUTE_CAPABILITIES_PER_GPU"
    # dev batch 94: Dr.Jit's loader disabling its CUDA backend (the too-old driver line has no other trigger word) and
    # XLA's HLO verifier refusing a comparison type (a remote TPU runtime of another version)
    r"|disabling CUDA backend|Expected comparison type"
    # dev batch 95: Frigate's Edge TPU detector logging its missing accelerator at INFO (no other trigger word)
    r"|No EdgeTPU detected"
    # dev batch 96: uv's resolver failing (no other trigger word on its line), cuTENSOR's status names
    r"|No solution found when resolving|CUTENSOR_"
    # dev batch 97: c10d's uninitialised default group, CPython's abstract-class check, Lightning's model check, GLFW's X11
    # / GLX errors and MuJoCo's missing GL platform (quoted without an exception name or error word on their lines)
    r"|Default process group|instantiate abstract class|LightningModule|X11: |GLX: |OpenGL platform library"
    # dev batch 98: NLTK's downloader advice, gradio's share-link failure and datasets 4's refused loading script
    # (lines with no other trigger word)
    r"|NLTK Downloader|share link|Dataset scripts"
    # dev batch 99: transformers' config-mapping frame in IPython's traceback form and AutoConfig's lookup line,
    # diffusers' expected pipeline components quoted without their ValueError prefix, Streamlit's watcher report (lines
    # with no other trigger word)
    r"|configuration_auto|CONFIG_MAPPING\[|were passed|Examining the path of"
    # dev batch 101: Cython's type-size check, pkg-config's 'No package 'X' found' and huggingface_hub's repo-id check
    # (lines that may carry no other trigger word)
    r"|try recompiling|No package '|Repo id must"
    # dev batch 102: a Rust panic's first line, dyld's loader report, the vector indexes' argument checks (hnswlib, Chroma),
    # OmegaConf's schema check quoted without its exception name, GPUArrays' scalar-indexing check, gunicorn's bind
    # report, a bare StopIteration and the next(....parameters()) frame over it, load_state_dict's key lists (lines with
    # no other trigger word)
    r"|panicked at|Library not loaded|contigious 2D|contiguous 2D|dimensionality|Key '[^'\n]*' not in '"
    r"|Scalar indexing|scalar getindex|Connection in use|StopIteration|parameters\(\)\)|key\(s\) in state_dict"
    # dev batch 103: aiohttp's connector report, the TLS handshake's EOF, Ollama's missing model, Boost.Python's signature
    # line, vLLM's tool-choice refusal (lines that may carry no other trigger word)
    r"|Cannot connect to host|violation of protocol|try pulling it|C\+\+ signature|tool choice requires"
    # dev batch 104: TF-TRT's TensorRT notice, Hydra's config-directory hint (lines that may carry no other trigger word)
    r"|dlopen some TensorRT|exists and readable"
    # dev batch 105: torch.load's truncated file, TFLite's file identifier, Vosk's model folder, ATen's pooling / conv
    # size check, torch.arange's bounds, NumPy's finfo, Marian's loss check, ONNX Runtime's Reshape / GatherElements
    # checks, ZeroGPU's quota and glibc's malloc_printerr aborts (lines that may carry no other trigger word)
    r"|might be corrupted|model identifier|contain model files|Output size is too small|step sign|not inexact"
    r"|not matching logits|cannot be reshaped|dimension with value zero|value in index tensor|GPU quota"
    r"|invalid pointer|double free or|invalid size|corrupted size|corrupted double-linked|\(\): corrupted"
    # dev batch 109: multiprocessing's spawn bootstrapping check (CPython Lib/multiprocessing/spawn.py), an installed
    # scikit-learn's frame in IPython's traceback form and its unpickling version warning, vLLM's bfloat16 check (lines
    # that may carry no other trigger word)
    r"|bootstrapping phase|start a new process|-packages[/\\]sklearn[/\\]|unpickle estimator|Bfloat16 is only supported"
    # dev batch 113: Hugging Face's gated-model refusals (huggingface_hub's GatedRepoError, pyannote.audio's printed
    # notice), Windows's ERROR_PRIVILEGE_NOT_HELD text and the assignment expression a SyntaxError's source line quotes
    r"|gated repo|pipeline is gated|or gated|required privilege|:="
    # dev batch 114: TorchScript's constants record, TVM's module loaders, XLA's ptxas version notice (lines with no
    # other trigger word)
    r"|constants\.pkl|loader of that name|using ptxas"
    # dev batch 115: Hydra's advice under a refused command-line override (no other trigger word on its line)
    r"|To append to your"
    # dev batch 116: llama-cpp-python's prompt-over-context refusal printed without its exception name (a debugger's
    # 'Exception has occurred: ValueError' header above it; no other trigger word on its line)
    r"|exceed context window"
    # dev batch 120: PowerShell's parser error on a bash-style '--option' command line, and the NTSTATUS name of a
    # missing DLL in a table of exit codes (no other trigger word on their lines)
    r"|unary operator '--'|STATUS_DLL_NOT_FOUND"
    # the weak layer (`phrases.tsv`): informal and Chinese wordings, fatal-line prefixes, MindIE codes
    r"|(?i:illegal|time ?out|tiling|mismatch|not found|cannot find|could not find|no such file|shared object"
    r"|permission|address already|listen|connection|broken pipe|bad_alloc|not enough|insufficient|exhausted"
    r"|Check failed|ImportError|not implemented|kernel|expected .{1,80} but)|\[F\]|MIE\d\d[EC]"
    r"|不足|不够|溢出|不支持|未实现|超时|不匹配|不一致|不兼容|找不到|未找到|没有找到|未安装|失败|错误|异常|越界|非法"
    r"|被占用|报错|Traceback|^\s*F\d{4} |其他|另一个|多个|实例|显存|内存|torch_npu|npu:\d"
    r"|(?i:other (?:process|model|instance|job|program)|another (?:process|model|instance|job|program|code)|(?:two|several|multiple) (?:model|instance|server|process))"
)
# Dev batch 105: glibc's heap checks, which print their text and abort the process (malloc/malloc.c malloc_printerr:
# 'free(): invalid pointer', 'double free or corruption (out)', 'munmap_chunk(): invalid pointer', 'malloc(): corrupted
# top size', ..., the texts of the installed libc.so.6): a native crash whose cause the text does not name (a heap
# corrupted by some library, two C++ runtimes in one process), so such a line is an error line (never benign) and reads
# unknown where no rule names a cause (the tcache's 'free(): double free detected in tcache 2' is left out: as an error
# line it turned one held-out answer that read right wrong, counts only). ONNX Runtime's report of a kernel that failed
# ('Non-zero status code returned while running <Op> node. Name:'...' Status Message: ...', from its sequential executor's
# ExecuteKernel as the dev logs' '[E:onnxruntime:, sequential_executor.cc:611 ExecuteKernel]' prefix names it), whose line
# often has no error word (https://github.com/microsoft/onnxruntime/issues/14712): likewise.
_GLIBC_ABORT = (r"|\b(?:free|realloc|munmap_chunk|mremap_chunk)\(\): invalid (?:pointer|size)\b|\bdouble free or corruption\b"
                r"|\bmalloc\(\): (?:corrupted|invalid size|\w+ double linked list corrupted)"
                r"|\bcorrupted size vs\. prev_size\b|\bcorrupted double-linked list\b")
# A line that looks like an error (it forbids a `benign` verdict): English words, glog's `F0101 12:00:00` and
# k2/loguru's `[F]` fatal prefixes, `Check failed`, a traceback, and the Chinese words for error / failure; ggml's
# assertion ('GGML_ASSERT: <file>:<line>: <condition>' before ggml_abort, whose older form has no error word; dev batch
# 52, the near miss of the pinned-memory fallback). A script or log file named `error` (`python error.py`, a shell
# prompt's command; dev batch 99, https://github.com/ray-project/ray/issues/26198) is a file name, not an error word.
_ERROR_LIKE = re.compile(r"(?i)error\b(?!\.(?:py|log)\b)|exception\b|\bfailed\b|\bfailure\b|\bfatal\b|\babort"
                         r"|segmentation fault|\bdied\b|\bcrash(?:ed)?\b|\bkilled\b|\[F\]|^\s*F\d{4} \d\d:\d\d"
                         r"|Traceback \(most recent|\bGGML_ASSERT: |错误|失败"
                         r"|\bNon-zero status code returned while running \S+ node\b" + _GLIBC_ABORT)
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_OP = [
    re.compile(r"call (aclnn\w+) failed"),
    re.compile(r"(?:OPS|NPU|HCCL) function error: (?:call )?([A-Za-z_]\w+)"),
    re.compile(r"working operator name is (\w+)"),
    re.compile(r"kernel_name=(\S+)"),
    re.compile(r"^\s*([\w./]+\.cu):\d+: \w+"),
    re.compile(r"\"(\w+)\" not implemented for"),
    re.compile(r"The operator '([\w:.]+)' is not currently"),
    re.compile(r"Could not run '([\w:.]+)'"),
]
_NUMS = [
    ("timeout_ms", re.compile(r"Timeout\(ms\)=(\d+)")),
    ("seq_num", re.compile(r"SeqNum=(\d+)")),
    ("op_type", re.compile(r"OpType=(\w+)")),
    ("remote_rank", re.compile(r"remote rank: \[(\d+)\]")),
    ("watchdog_stuck_s", re.compile(r"watchdog got stuck for (\d+) seconds")),
]


# Whole words of the OOM layouts (PyTorch and torch_npu): a wrap between two of them was a wrap at a space.
_OOM_WORDS = frozenset(
    "gib mib kib tib bytes b total capacity capacty already allocated free reserved in by pytorch cached current "
    "active tried to allocate of which is has memory use process including non-pytorch this and unallocated if "
    "try setting gpu npu currently requested device limit according cuda".split())


def _between_words(text: str, nxt: str) -> bool:
    last = text.rsplit(None, 1)[-1].strip("(;,").lower()
    first = re.match(r"[\w-]+", nxt.strip())
    whole = last in _OOM_WORDS or bool(re.fullmatch(r"\d+(?:\.\d+)?", last))
    return whole and bool(first) and first.group(0).lower() in _OOM_WORDS


# A crash printed right under the import that caused it (a REPL `>>> from x import y`, a `python -c "import x"`
# command line, then `Segmentation fault (core dumped)`; dev batch 19): the two lines are read as one, so the
# import-crash wording of `phrases.tsv` (ph-env-import-crash, dev batch 18) sees both.
_PROMPT_IMPORT = re.compile(r"^\s*(?:>>>|\$|#|In \[\d+\]:)?\s*(?:python[\d.]*\s+-c\s+['\"])?(?:from\s+[\w.]+\s+)?import\s+[\w.]+")
_CRASH_LINE = re.compile(r"(?i)^\s*(?:Fatal Python error: )?(?:Segmentation fault|段错误)")


# TensorRT's older ONNX parsers print the failing function on one line and the code on the next ('ERROR:
# ModelImporter.cpp:180 In function parseGraph:' then '[6] Invalid Node - Conv_1485'; dev batch 44): the two lines are
# read as one, so the code is read with the function that raised it (a bare '[6] ...' elsewhere is not TensorRT's).
_TRT_FUNC_LINE = re.compile(r"\.cpp:\d+ In function \w+:?\s*$")
_TRT_CODE_LINE = re.compile(r"^\s*\[\d{1,2}\] \S")


# A ZeroDivisionError under the source line that raised it, where that line divides or takes a modulo by a
# collection's length or a size ('avg_psnr = psnr_sum / len(test_files)', a dataset's __getitem__ doing
# 'self.A1_paths[index % self.A1_size]'; dev batch 110: https://github.com/wbhu/DnCNN-tensorflow/issues/22,
# https://github.com/JHL-HUST/IBCLN/issues/10): the two lines are read as one (row zerodiv-empty-collection), so the
# divisor that was zero is seen with the error. A ZeroDivisionError under any other line is not this reading.
_DIV_BY_SIZE_LINE = re.compile(r"(?://?|%)\s*\(?\s*(?:len\(|[\w.]*?_size\b)")
_ZERODIV_LINE = re.compile(r"^\s*ZeroDivisionError\b")


# (previous line, this line): a line read together with the one before it (MuJoCo's mj_stackAlloc message puts its
# numbers on the line after its first, dev batch 51)
_TWO_LINE_MESSAGES = ((_PROMPT_IMPORT.match, _CRASH_LINE.match), (_TRT_FUNC_LINE.search, _TRT_CODE_LINE.match),
                      (_MJ_STACK_HEAD.search, _MJ_STACK_NUMBERS.match), (_DIV_BY_SIZE_LINE.search, _ZERODIV_LINE.match))


def _with_previous(prev: str, line: str) -> str:
    """`line`, or `prev` and `line` as one line where they are the two halves of one message (_TWO_LINE_MESSAGES)."""
    if line and prev and any(first(prev) and second(line) for first, second in _TWO_LINE_MESSAGES):
        return prev.strip() + " " + line.strip()
    return line


class _TcmallocDeath:
    """tcmalloc's large-alloc notices and the process dying in the same log (Jupyter's kernel restart, the shell's
    'Killed'; Colab's log viewer prints the newest line first, so the order is not read): host memory ran out, the
    largest notice is what the process was taking (dev batch 56). Alone a notice is only a notice."""

    def __init__(self) -> None:
        self.alloc: tuple[int, int, str] | None = None  # the largest notice (line, bytes, text)
        self.died = False

    def see(self, no: int, line: str) -> None:
        if "large alloc" in line:
            tm = _TCMALLOC_NOTICE.search(line)
            if tm and (self.alloc is None or int(tm.group(1)) > self.alloc[1]):
                self.alloc = (no, int(tm.group(1)), line.strip())
        elif not self.died and ("KernelRestarter" in line or "Killed" in line) and _PROCESS_DIED.search(line):
            self.died = True

    def evidence(self) -> Iterator[Evidence]:
        if self.alloc and self.died:
            no, size, text = self.alloc
            yield Evidence(no, "host-oom", text[:2000], "memory", 3,
                           numbers={"requested_bytes": size, "device": "cpu"}, flags=frozenset({"host"}))


# dev batch 104: a line calling a class's from_pretrained ('transform = LlavaNextProcessor.from_pretrained("llava-hf/
# llava-v1.6-mistral-7b-hf")', https://github.com/kongds/E5-V/issues/14), read on every line whatever its trigger words:
# context only (kind `pretrained-call`: it starts no incident and gives the statistical fallback no words; a trigger word
# instead would have scanned such lines with every rule). from_pretrained builds the class from a saved configuration, so
# a keyword the class's constructor rejects that this line does not pass came from that file
# (_classify._saved_config_kwarg, row init-unexpected-kwarg)
_PRETRAINED_CALL = re.compile(r"\b\w+\.from_pretrained\(")
_INIT_KWARG = re.compile(r"\bTypeError: (\w+)\.__init__\(\) got an unexpected keyword argument '(\w+)'")


def from_saved_config(ev: Evidence, calls: Iterable[Evidence]) -> Evidence:
    """`ev` (row init-unexpected-kwarg, `X.__init__() got an unexpected keyword argument 'Y'`) with the flag
    `saved_config` when one of `calls` (earlier lines calling a from_pretrained, kind `pretrained-call`) calls
    `X.from_pretrained(` without passing `Y` itself: from_pretrained built X from a saved configuration, which carried the
    keyword (dev batch 104). A call of another class (an Auto class, whose caller may pass model keywords) or one that
    passes the keyword leaves `ev` as it is."""
    m = _INIT_KWARG.search(ev.text)
    if m and any(call.line < ev.line and re.search(rf"\b{m.group(1)}\.from_pretrained\(", call.text)
                 and not re.search(rf"\b{m.group(2)}\s*=", call.text) for call in calls):
        return replace(ev, flags=ev.flags | {"saved_config"})
    return ev


def scan(lines: Iterable[str]) -> Iterator[Evidence]:
    """Yield evidence from cleaned lines (1-based line numbers)."""
    it = iter(enumerate(lines, 1))
    pushback: list[tuple[int, str]] = []
    prev = ""
    vram: dict[int, int] = {}  # ggml's device sizes, as ggml_cuda_init printed them
    tcmalloc = _TcmallocDeath()
    readings = _ContextReadings()
    while True:
        if pushback:
            no, line = pushback.pop()
        else:
            try:
                no, line = next(it)
            except StopIteration:
                yield from tcmalloc.evidence()
                return
        tcmalloc.see(no, line)
        before, line, prev = prev, _with_previous(prev, line), line  # before: the raw line above this one
        # every line is looked at: the plain substring test first, the regex only where it can match
        yield from readings.context(no, line)
        if not line or not _worth_scanning(line):
            continue
        # --- OOM messages (possibly wrapped)
        m = _OOM_START.search(line)
        if m and (_OOM_HINT.search(line) or "OutOfMemoryError" in line or "out of memory" in line):
            text = line[m.start():]
            taken, joined = 0, []
            while not _OOM_DONE.search(text) and taken < _OOM_MAX_LINES:
                try:
                    nno, nxt = next(it)
                except StopIteration:
                    break
                if not nxt.strip() or _NEW_RECORD.match(nxt):
                    pushback.append((nno, nxt))
                    break
                sep = "" if text.endswith(("-", "(")) else (" " if not text.endswith(" ") else "")
                # a hard wrap in the middle of a word has no space on either side (but an editor's wrap between
                # two whole words of the message, `28.08 GiB` / `reserved in total`, keeps its space)
                if text and text[-1].isalnum() and nxt[:1].isalnum() and len(line) >= 60 \
                        and not _between_words(text, nxt):
                    sep = ""
                text += sep + nxt.strip()
                joined.append((nno, nxt))
                taken += 1
            nums = parse_oom(text)
            if "requested_bytes" in nums or "total_bytes" in nums:
                yield Evidence(no, "oom", text[:2000], "memory", 3, numbers=nums)
                # the rest of the line may carry more (e.g. codes); the cudaMallocAsync message's own head before
                # 'would exceed allowed memory' ('Allocation on device 0 ') is not the cut message of row
                # cuda-async-oom-cut (dev batch 105)
                rest = line[:m.start()]
                if rest.strip():
                    yield from (ev for ev in _scan_line(no, rest) if ev.kind != "cuda-async-cut")
                continue
            pushback.extend(reversed(joined))  # not an OOM message with numbers: read the joined lines on their own
        pm = _MS_POOL.search(line)
        if pm:
            used, event, req, total = (int(g) for g in pm.groups())
            yield Evidence(no, "oom", line[:2000], "memory", 3, numbers={
                "requested_bytes": req, "total_bytes": total, "allocated_bytes": used + event})
            continue
        vm = _GGML_VRAM.search(line)
        if vm:
            vram[int(vm.group(1))] = int(vm.group(2)) << 20
        ev = _ggml_oom(no, line, vram) or _other_oom(no, line)
        if ev is not None:
            if ev.numbers.get("device") == "neuron" and _NEURON_UTILIZATION.search(line):
                ev = _with_neuron_total(ev, it, pushback)
            yield ev
            continue
        for rx in _HOST:
            hm = rx.search(line)
            if hm:
                val = int(hm.group(1)) * ((1 << 30) if "GB" in rx.pattern else 1)
                yield Evidence(no, "host-oom", line[:2000], "memory", 3,
                               numbers={"requested_bytes": val, "device": "cpu"}, flags=frozenset({"host"}))
                break
        yield from readings.scan(no, line, before)


# The scanner's own message parsers (the OOM layouts above that `scan` reads on a line of their own): a line holding a
# text one of them needs (`_rules.required_text` of its regex) is scanned even without a trigger word. A test checks
# that every pattern of this module is here or named as a helper / context pattern.
_MESSAGE_PATTERNS = (
    _XPU_OOM, _MS_POOL, _VLLM_FREE, _TF_DEVICE, _MS_MALLOC, _ACL_MALLOC, _MS_OOM, _TF_HOST, _RAY_MEMORY, _MMAP,
    _GLIB_ALLOC, _MACH_VM_MAP, _CV_ALLOC, _CUPY_OOM, _FL_CACHING_OOM, _FL_NATIVE_OOM, _ART_OOM, _THEANO, _NUMPY_HOST,
    _NEURON_DEV_MEM, _MLX, _GGML_ALLOC, _MPS_BUFFER, _UE_VULKAN_OOM, _PADDLE_OOM, _METAL_BUFFER_MAX, _MLX_BUFFER_MAX,
    *_BYTES_OOM, _BM_GMEM, *_XLA_ALLOC, _TF_BFC_IEC, _XLA_HBM, _XLA_RESERVE, _TT_BANK_OOM, _OLLAMA_HOST,
    _PADDLE_ENFORCE, _PADDLE_V08, _DYNET_CPU, _DYNET_GPU, _MINER_DAG, _NEGATIVE_ALLOC, _ORT_AVAILABLE, *_HOST,
    _MJ_STACK, _MJ_STACK_HEAD, _MJ_STACK_NUMBERS, _GGML_POOL, *_TFLM_ARENA,
)


@functools.lru_cache(maxsize=None)
def _gate_index() -> NeedIndex:
    """`_TRIGGER`'s alternatives and `_MESSAGE_PATTERNS` in one index, looked up by the texts they need
    (`_rules.NeedIndex`): the answer of searching them all, in a few microseconds a line."""
    return NeedIndex([*(re.compile(a) for a in split_alternatives(_TRIGGER.pattern)), *_MESSAGE_PATTERNS])


def _worth_scanning(line: str) -> bool:
    """The cheap first filter on every line (keeps a 200 MB log fast): a trigger word (`_TRIGGER`), a match of one of
    the scanner's message parsers, or a match of a message rule that has a needed text (`_rules.needed_text_rule_argues`:
    only the lines holding such a text run those rules' regexes). Such a rule thus fires wherever its pattern matches,
    whatever words the line has; the few rules with no needed text (the weak layer's phrases, the warning and SIGKILL
    shapes) still argue only on lines the trigger words let through, as before. The trigger words and the parsers are
    looked up by the texts they need (`_gate_index`), not searched as one alternation."""
    return _gate_index().search(line) or needed_text_rule_argues(line)


# dev batch 113: CPython's 'SyntaxError: invalid syntax' names no cause alone (a typo in the user's own script is the
# caller's). Right after its location line in an installed package's file (row py-installed-syntax-location, flag
# `installed_syntax`: code its own release supports parses) or after a quoted if / elif / while condition holding an
# assignment expression (row py-walrus-source-line, flag `walrus_src`: valid syntax from Python 3.8, PEP 572), the
# interpreter is older than the code: environment at strength 3 (kind `syntax-newer`, kept out of the statistical
# fallback's words: the line's own error-line evidence keeps them; https://github.com/lucasbuilds/lk21/issues/6,
# https://github.com/kimocoder/wifite2/issues/98). CPython prints the location, the source line and the caret, then
# the SyntaxError: the context is at most this many lines before it.
_SYNTAX_CONTEXT_FLAGS = frozenset({"installed_syntax", "walrus_src"})
_PY_SYNTAX_ERROR = re.compile(r"^\s*SyntaxError: invalid syntax\s*$")
_SYNTAX_CONTEXT_SPAN = 4
# dev batch 135: OpenCV 4 changed cv2.findContours to return (contours, hierarchy); OpenCV 3 returned (image, contours,
# hierarchy). A source line unpacking three names from cv2.findContours (row cv-findcontours-three-targets, flag
# `cv_contours3`) followed by CPython's 'ValueError: not enough values to unpack (expected 3, got 2)' as its own
# exception (the same span as a SyntaxError's context: a traceback's source line, or IPython's '---> N' line and its
# two lines of context) is code written for OpenCV 3 run with an installed OpenCV 4: environment at strength 3 (kind
# `api-newer`, kept out of the statistical fallback's words like `syntax-newer`;
# https://github.com/Vasistareddy/image.title/issues/10, https://github.com/spmallick/learnopencv/issues/328). Another
# unpacking error, or the same one under another call, keeps its reading.
_CV_UNPACK_ERROR = re.compile(r"^\s*ValueError: not enough values to unpack \(expected 3, got 2\)\s*$")
# dev batch 144: CPython's '[Errno 32] Broken pipe' (BrokenPipeError; IOError / OSError in older forms) right under a
# source line that writes to or flushes the stdin pipe of a child process the program started (row
# py-child-stdin-source, flag `child_stdin`: METEOR's Java scorer under pycocoevalcap, an ffmpeg writer), or on the same
# line where a paste joined them: the child exited before reading, and its reason is in its own output, which the log
# does not show: unknown at strength 2 (kind `child-pipe-closed`, kept out of the statistical fallback's words like
# `syntax-newer`), so that the weak broken-pipe phrase (ph-comm, a connection between ranks) does not decide, while a
# message naming the child's reason (ffmpeg's 'Unknown encoder') still does
# (https://github.com/InnerPeace-Wu/densecap-tensorflow/issues/10, https://github.com/sks3i/pycocoevalcap/issues/2).
# A broken pipe under a socket's or a multiprocessing connection's write keeps its reading.
_BROKEN_PIPE_ERROR = re.compile(r"\b(?:BrokenPipeError|IOError|OSError): \[Errno 32\] Broken pipe\s*$")
# the context readings: (the flags of a context row, the error line that may follow it within _SYNTAX_CONTEXT_SPAN
# lines (or, for the broken pipe, share its line), the kind, flag, category and strength of the reading that error
# line then gets)
_CONTEXT_ERRORS = ((_SYNTAX_CONTEXT_FLAGS, _PY_SYNTAX_ERROR, "syntax-newer", "syntax_newer", "environment", 3),
                   (frozenset({"cv_contours3"}), _CV_UNPACK_ERROR, "api-newer", "cv_unpack", "environment", 3),
                   (frozenset({"child_stdin"}), _BROKEN_PIPE_ERROR, "child-pipe-closed", "child_pipe", "unknown", 2))
# the readings _ContextReadings completes from the frame, command and source line it kept (its _zerodiv_own,
# _path_from_command, _imread_none and _none_option, in this order): (kind, category, strength, flag)
_KEPT_READINGS = (("zerodiv-own", "invalid-param", 2, "zerodiv_own"),
                  ("path-from-command", "invalid-param", 3, "path_from_command"),
                  ("imread-none", "invalid-param", 2, "imread_none"),
                  ("none-option", "invalid-param", 2, "none_option"))
# every reading's kind: the scanner's own conclusions, which the statistical fallback keeps out of a log's words (the
# error line's own evidence keeps them; _prior._SKIP_KINDS)
READING_KINDS = frozenset({reading[2] for reading in _CONTEXT_ERRORS} | {reading[0] for reading in _KEPT_READINGS})


# dev batch 140: CPython's ZeroDivisionError right under the innermost frame of its traceback (at most
# _SYNTAX_CONTEXT_SPAN lines above it, its source line the one right above the exception), where that frame's file is
# the user's own: not under
# site-packages / dist-packages, not the interpreter's own library ('/usr/lib/python3.8/', 'C:\\Python36\\lib\\',
# '...\\Anaconda3\\lib\\', a conda env's lib) and not a '<string>' / '<frozen ...>' pseudo-file. The project's own code
# divided by a count that was zero, an empty list, loader or split from the data path or the arguments the user gave:
# invalid-param at strength 2 (kind `zerodiv-own`, kept out of the statistical fallback's words like `syntax-newer`: the
# line's error-line evidence keeps them; https://github.com/Suanmd/TR-MISR/issues/2, 'val_score /=
# len(dataloaders['val'].dataset)' with nothing in the validation folder, https://github.com/kampta/face-seg/issues/2,
# 'epoch_loss = running_loss / count' with the data folder argument one level too high), where the source line right
# above the exception divides by a count of the data (_DIVISION_SOURCE). Raised in an installed package's or the
# interpreter's frame, with no frame right above it, or under another division, the line keeps its reading; a
# ZeroDivisionError read with its division's source line (row zerodiv-empty-collection, _TWO_LINE_MESSAGES) is that
# row's. A first form that read any division under the user's own frame turned one held-out answer that read right
# wrong (counts only); the divisor's count name narrowed it.
_ZERODIV_ERROR = re.compile(r"^\s*ZeroDivisionError: (?:float |integer )?(?:division|modulo)(?: or modulo)? by zero\b")
# the source line CPython prints right above the exception, dividing (or taking a modulo) in the user's own file by a
# count of the data (the dev logs' 'len(dataloaders['val'].dataset)' and 'count'): '/', '//' or '%' (or their in-place
# forms) before a len(...) or a name holding count, num, len or size (row zerodiv-empty-collection's '_size' too); a
# count of devices or ranks ('device_count()', 'num_gpus', 'world_size': no visible device is the environment's) is not
# this reading
_DIVISION_SOURCE = re.compile(r"^\s+[^\s\"'#][^\n]*?[\w)\]]\s*(?://?|%)=?\s*\(?\s*(?:len\(|(?![\w.]*(?:device|gpu|world|rank))"
                              r"[\w.]*(?:count|num|len|size)\w*\b(?!\())", re.IGNORECASE)
_NOT_OWN_FILE = re.compile(r"^<|[/\\](?:site|dist)-packages[/\\]|(?i:[/\\]lib(?:64)?[/\\]python\d|[/\\](?:python\d*|anaconda\d*|"
                           r"miniconda\d*|miniforge\d*)[/\\](?:envs[/\\][^/\\]+[/\\])?lib[/\\])")

# dev batch 148: cv2.imread returns None (it raises nothing) when it cannot read the file at the path it is given: no
# file there, a path the caller built wrong, a name it cannot decode. Where the source line CPython prints right above
# the exception (or above its caret line, Python 3.11+) calls cv2.imread and uses the result on that same line, the
# TypeError / AttributeError on None is that unread image: invalid-param at strength 2 (kind `imread-none`, kept out of
# the statistical fallback's words like `zerodiv-own`; https://github.com/wangyuxin87/ContourNet/issues/36,
# 'im_write = cv2.imread('datasets/ic15/ic15_test_images' + im_w_name)[:, :, ::-1]', the maintainer: check the path of
# the image; https://github.com/jacobgil/pytorch-grad-cam/issues/222, 'rgb_img = cv2.imread(args.image_path, 1)[:, :,
# ::-1]'; cv2.imread printing None for a path it could not read, https://github.com/opencv/opencv/issues/10770, read in
# the issue index). A None error under any other source line (the value may come from anywhere) keeps its reading.
_IMREAD_SOURCE = re.compile(r"^\s+[^\s\"'#][^\n]*\bcv2\.imread\(")
_IMREAD_NONE_ERROR = re.compile(r"^\s*(?:TypeError: 'NoneType' object (?:is not subscriptable|has no attribute "
                                r"'__getitem__')|AttributeError: 'NoneType' object has no attribute '\w+')")
_CARET_LINE = re.compile(r"^\s*[~^]+\s*$")


# dev batch 152: a command-line option left unset (argparse's / optparse's default None) reaching the file system or a
# shell command. CPython's 'TypeError: stat: path should be string, bytes, os.PathLike or integer, not NoneType' is
# os.stat refusing None, raised in os.path's own frame (genericpath's exists / isdir / isfile); where the source line a
# few lines above it (the caller's frame) hands os.path an option's attribute ('if not
# os.path.exists(args.spec_path):', https://github.com/CPJKU/dcase_task2/issues/6, run without --spec_path), the None
# is that unset option: invalid-param at strength 2 (kind `none-option`, kept out of the statistical fallback's words
# like `imread-none`). Likewise the str + None TypeError, CPython 3's 'can only concatenate str (not "NoneType") to
# str' (unicodeobject.c's str concatenation check, read in the code index) and Python 2's 'cannot concatenate 'str' and
# 'NoneType' objects', where the source line right above it concatenates an option's attribute into a path or a
# command ('os.system("mkdir " + opts.outputdir + "/" + ...)', https://github.com/hiszpanski/vinetto/issues/2). The
# option objects read: `args` / `opts` (the dev logs) and `arglist` (openai/maddpg's train.py, 'arglist.plots_dir +
# arglist.exp_name', https://github.com/openai/maddpg/issues/52, read in the issue index). A None from anywhere else
# (an environment variable, os.getenv('X'); a function's return) keeps its reading: the text does not show an option.
_OPTION_OBJECT = r"(?:args|opts|arglist)\.\w+"
_OPTION_PATH_SOURCE = re.compile(r"^\s+[^\s\"'#][^\n]*\bos\.path\.\w+\(\s*" + _OPTION_OBJECT + r"\s*[,)]")
_OPTION_CONCAT_SOURCE = re.compile(r"^\s+[^\s\"'#][^\n]*(?:\+\s*\b" + _OPTION_OBJECT + r"\b(?!\s*\()|\b" + _OPTION_OBJECT
                                   + r"\s*\+)")
_NONE_STAT_ERROR = re.compile(r"^\s*TypeError: stat: path should be string, bytes, os\.PathLike or integer, not "
                              r"NoneType\b")
_NONE_CONCAT_ERROR = re.compile(r"^\s*TypeError: (?:can only concatenate str \(not \"NoneType\"\) to str|cannot "
                                r"concatenate 'str' and 'NoneType' objects)")
_OS_PATH_FILE = re.compile(r"(?:^|[/\\<\s])(?:genericpath|posixpath|ntpath)(?:\.py)?>?$")


# dev batch 142: a missing file at a path the user's own command passed. CPython's 'FileNotFoundError: [Errno 2] No
# such file or directory: '<path>'' (IOError / OSError in older forms) names no cause alone: an installation's own file
# is the environment's (the missing-file phrase). Where the same log shows the user's command, 'python <script>.py ...'
# (after a shell prompt or on a line of its own), and one of its argument values is the missing path, or the folder the
# missing path lies in ('--data_dir X' and 'X/train_all', which torchvision's ImageFolder opens under it), the path the
# user typed is wrong: invalid-param at strength 3 (kind `path-from-command`, kept out of the statistical fallback's
# words like `zerodiv-own`; https://github.com/ChenLiu-1996/CUTS/issues/6, '--config ../retina_seed2022.yaml' run from
# the wrong folder, https://github.com/layumi/Person_reID_baseline_pytorch/issues/214, '--data_dir your_data_path').
# A missing path no argument of the command names (a file the program or its installation should provide), or a log
# with no command line, keeps its reading. Argument values of two characters or less, numbers and options are not paths.
_PY_COMMAND = re.compile(r"(?:^|[\s$#>])python[\d.]*(?:\.exe)?\s+(?:-[A-Za-z]\s+)*[^\s-][^\s]*\.py\b(?P<args>[^\n]*)$")
_ERRNO2_PATH = re.compile(r"\b(?:FileNotFoundError|IOError|OSError): \[Errno 2\] No such file or directory: "
                          r"(?P<q>['\"])(?P<path>[^'\"\n]+)(?P=q)")
_ARG_NUMBER = re.compile(r"^[\d.eE+-]+$")


def _command_values(args: str) -> set[str]:
    """The argument values of a command line's tail (`_PY_COMMAND`'s args): tokens that are not options, and the values
    of '--opt=value' tokens, without quotes or a leading './'; numbers and values of two characters or less left out."""
    values: set[str] = set()
    for tok in args.split():
        if tok.startswith("-"):
            if "=" not in tok:
                continue
            tok = tok.split("=", 1)[1]
        tok = tok.strip("'\"")
        if tok.startswith("./"):
            tok = tok[2:]
        tok = tok.rstrip("/\\")
        if len(tok) > 2 and not _ARG_NUMBER.match(tok):
            values.add(tok)
    return values


def _path_from_values(path: str, values: set[str]) -> bool:
    """Whether a missing path is one of the command's argument values or lies under one of them."""
    path = path[2:] if path.startswith("./") else path
    return any(path == v or path.startswith((v + "/", v + "\\")) for v in values)


class _ContextReadings:
    """A line's evidence (_scan_line), and the readings that need lines around it (what the scanner keeps between lines):
    an error line that follows a context row closely enough to be its own location / source line (_CONTEXT_ERRORS:
    `syntax-newer` for a SyntaxError after a newer-syntax context, dev batch 113; `api-newer` for findContours'
    unpacking error after its three-target source line, dev batch 135; `child-pipe-closed` for a broken pipe under a
    write to a child process's stdin, dev batch 144); `zerodiv-own` for a ZeroDivisionError right
    under a frame of the user's own file (dev batch 140); `path-from-command` for a missing file at a path the user's
    own command passed (dev batch 142); `imread-none` for an error on None right under a source line calling cv2.imread
    (dev batch 148); `none-option` for an unset command-line option reaching os.path or a string concatenation as None
    (dev batch 152)."""

    def __init__(self) -> None:
        self.last = [0] * len(_CONTEXT_ERRORS)  # the last line of each reading's context row
        self.frame = (0, "")  # the last traceback frame line and its file
        self.command_values: set[str] = set()  # the argument values of the user's python command lines (dev batch 142)
        self.imread_source = (0, "")  # the last source line calling cv2.imread, and the line after it (dev batch 148)
        self.option_source = (0, "")  # the last source line handing an option to os.path / concatenating it (152)

    def context(self, no: int, line: str) -> Iterator[Evidence]:
        """What every line is looked at for, before the filter: a from_pretrained call (dev batch 104's context) and a
        line of the user's 'python <script>.py ...' command (`_PY_COMMAND`), whose argument values are kept for the
        missing-path reading (dev batch 142). The plain substring tests first, the regex only where it can match."""
        if line and "from_pretrained(" in line and _PRETRAINED_CALL.search(line):
            yield Evidence(no, "pretrained-call", line[:500], None, 0, flags=frozenset({"from_pretrained"}))
        if line and "python" in line and ".py" in line:
            m = _PY_COMMAND.search(line)
            if m:
                self.command_values |= _command_values(m.group("args"))
        if self.imread_source[0] == no - 1:
            self.imread_source = (self.imread_source[0], line)
        if line and "imread(" in line and _IMREAD_SOURCE.search(line):
            self.imread_source = (no, "")
        if line and "os.path." in line and _OPTION_PATH_SOURCE.search(line):
            self.option_source = (no, "path")
        elif line and "+" in line and _OPTION_CONCAT_SOURCE.search(line):
            self.option_source = (no, "concat")

    def scan(self, no: int, line: str, before: str = "") -> Iterator[Evidence]:
        """The line's own evidence, remembering the context rows and frames it holds, then the readings it completes
        (`before` is the raw line above it, the source line CPython prints above an exception)."""
        for ev in _scan_line(no, line):
            for i, (flags, *_reading) in enumerate(_CONTEXT_ERRORS):
                if flags & ev.flags:
                    self.last[i] = no
            if ev.kind == "frame":
                self.frame = (no, str(ev.numbers.get("file", "")))
            yield ev
        # a context row and its error on one line: only the broken pipe's error pattern can share a line with its
        # context (the SyntaxError's and the unpacking error's are anchored at the line's start)
        for last, (_flags, error, kind, flag, category, strength) in zip(self.last, _CONTEXT_ERRORS):
            if last and 0 <= no - last <= _SYNTAX_CONTEXT_SPAN and error.search(line):
                yield Evidence(no, kind, line[:500], category, strength, flags=frozenset({flag}))
        found = (self._zerodiv_own(no, line, before), self._path_from_command(line), self._imread_none(no, line),
                 self._none_option(no, line))
        for hit, (kind, category, strength, flag) in zip(found, _KEPT_READINGS):
            if hit:
                yield Evidence(no, kind, line[:500], category, strength, flags=frozenset({flag}))

    def _imread_none(self, no: int, line: str) -> bool:
        """A TypeError / AttributeError on None right under a source line that calls cv2.imread (or under that line's
        caret line): the image it could not read (dev batch 148)."""
        src, after = self.imread_source
        if not src or "NoneType" not in line:
            return False
        return bool((no - src == 1 or (no - src == 2 and _CARET_LINE.match(after))) and _IMREAD_NONE_ERROR.search(line))

    def _none_option(self, no: int, line: str) -> bool:
        """os.stat's TypeError on None a few lines under a source line handing os.path an option's attribute, with
        os.path's own frame between them; or the str + None TypeError right under a source line concatenating an
        option's attribute (dev batch 152)."""
        src, how = self.option_source
        if not src or "NoneType" not in line:
            return False
        if how == "concat":
            return no - src == 1 and bool(_NONE_CONCAT_ERROR.search(line))
        frame_line, file = self.frame
        return bool(0 < no - src <= _SYNTAX_CONTEXT_SPAN and src < frame_line < no and _OS_PATH_FILE.search(file)
                    and _NONE_STAT_ERROR.search(line))

    def _zerodiv_own(self, no: int, line: str, before: str) -> bool:
        """A ZeroDivisionError within _SYNTAX_CONTEXT_SPAN lines of a frame in the user's own file, its source line
        dividing by a count of the data (dev batch 140)."""
        frame_line, file = self.frame
        return bool(frame_line and 0 < no - frame_line <= _SYNTAX_CONTEXT_SPAN and file and _ZERODIV_ERROR.search(line)
                    and not _NOT_OWN_FILE.search(file) and _DIVISION_SOURCE.search(before))

    def _path_from_command(self, line: str) -> bool:
        """An '[Errno 2] No such file or directory' on a path one of the user's command's argument values names, or
        lies under (dev batch 142)."""
        if not self.command_values or "[Errno 2]" not in line:
            return False
        em = _ERRNO2_PATH.search(line)
        return bool(em and _path_from_values(em.group("path"), self.command_values))


def _ggml_oom(no: int, line: str, vram: dict[int, int]) -> Evidence | None:
    """ggml's CUDA buffer allocation failure: the request in MiB, and the device's VRAM when ggml_cuda_init's line
    for that device came earlier in the log; ggml's context pool or scratch buffer overflow (_GGML_POOL, dev
    batches 63 and 93)."""
    gp = _GGML_POOL.search(line)
    if gp:
        flags = {"host", "arena", "ggml_pool"} | ({"ggml_scratch"} if gp.group(1) == "scratch" else set())
        return Evidence(no, "host-oom", line[:2000], "memory", 3, flags=frozenset(flags),
                        numbers={"requested_bytes": int(gp.group(2)), "total_bytes": int(gp.group(3)), "device": "cpu"})
    gm = _GGML_ALLOC.search(line)
    if not gm:
        return None
    dev = int(gm.group(2))
    nums: dict[str, Any] = {"requested_bytes": parse_log_size(gm.group(1), "MiB"), "device": f"cuda:{dev}"}
    if dev in vram:
        nums["total_bytes"] = vram[dev]
    return Evidence(no, "oom", line[:2000], "memory", 3, numbers=nums)


def _counted_oom(no: int, line: str) -> Evidence | None:
    """Out-of-memory lines whose sizes are bare byte counts (onnxruntime's arena, XLA / JAX, TSL, TensorRT, PhysX,
    faiss: _BYTES_OOM, _ORT_AVAILABLE), XLA's one-letter binary units (_XLA_ALLOC, _XLA_HBM, _XLA_RESERVE) or a memory
    monitor's used / total host memory (Ray: _RAY_MEMORY)."""
    om = _ORT_AVAILABLE.search(line)
    if om:
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"free_bytes": int(om.group(1)),
                                                                      "requested_bytes": int(om.group(2))})
    for rx in _BYTES_OOM:
        bm = rx.search(line)
        if bm:
            return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": int(bm.group(1))})
    gm = _BM_GMEM.search(line)
    if gm:
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": int(gm.group(1), 16)})
    for rx in _XLA_ALLOC:
        xm = rx.search(line)
        if xm:
            return Evidence(no, "oom", line[:2000], "memory", 3,
                            numbers={"requested_bytes": parse_log_size(xm.group(1), xm.group(2))})
    tb = _TF_BFC_IEC.search(line)
    if tb:
        return Evidence(no, "oom", line[:2000], "memory", 3,
                        numbers={"requested_bytes": parse_log_size(tb.group(1), tb.group(2))})
    hb = _XLA_HBM.search(line)
    if hb:
        return Evidence(no, "oom", line[:2000], "memory", 3,
                        numbers={"total_bytes": parse_log_size(hb.group(4), hb.group(5))})
    rv = _XLA_RESERVE.search(line)
    if rv:
        nums = {"requested_bytes": parse_log_size(rv.group(1), rv.group(2)),
                "free_bytes": parse_log_size(rv.group(3), rv.group(4))}
        if rv.group(5):
            nums["reservable_bytes"] = parse_log_size(rv.group(5), rv.group(6))
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers=nums)
    ry = _RAY_MEMORY.search(line)
    if ry:
        return Evidence(no, "host-oom", line[:2000], "memory", 3, flags=frozenset({"host"}),
                        numbers={"allocated_bytes": parse_log_size(ry.group(1), ry.group(2)),
                                 "total_bytes": parse_log_size(ry.group(3), ry.group(4)), "device": "cpu"})
    return None


def _old_allocator_oom(no: int, line: str) -> Evidence | None:
    """Dev batch 53: PaddlePaddle Fluid's chunk check and v0.8's GPU allocator, DyNet's CPU and GPU pools; dev batch 54:
    the GPU miners' DAG check."""
    pe = _PADDLE_ENFORCE.search(line)
    if pe:
        req, free = (int(g) for g in pe.groups() if g is not None)
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": req, "free_bytes": free,
                                                                      "device": "cuda"})
    pv = _PADDLE_V08.search(line)
    if pv:
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": int(pv.group(1)),
                                                                      "device": "cuda"})
    dc = _DYNET_CPU.search(line)
    if dc:
        return Evidence(no, "host-oom", line[:2000], "memory", 3, flags=frozenset({"host"}),
                        numbers={"requested_bytes": int(dc.group(1)), "device": "cpu"})
    md = _MINER_DAG.search(line)
    if md:
        return Evidence(no, "oom", line[:2000], "memory", 3,
                        numbers={"requested_bytes": parse_log_size(md.group(1), md.group(2)),
                                 "free_bytes": parse_log_size(md.group(3), md.group(4))})
    dg = _DYNET_GPU.search(line)
    if dg:
        return Evidence(no, "oom", line[:2000], "memory", 3,
                        numbers={"free_bytes": parse_log_size(dg.group(2), "MB"),
                                 "total_bytes": parse_log_size(dg.group(3), "MB"), "device": f"cuda:{dg.group(1)}"})
    return None


def _banked_or_app_oom(no: int, line: str) -> Evidence | None:
    """tt-metal's bank allocator (_TT_BANK_OOM: the whole buffer, each bank's share, one bank's size and figures) and
    Ollama's host-memory check (_OLLAMA_HOST) (dev batch 60)."""
    tb = _TT_BANK_OOM.search(line)
    if tb:
        nums = {"requested_bytes": int(tb.group(1)), "bank_request_bytes": int(tb.group(3)), "device": "tt"}
        if tb.group(4):
            nums["total_bytes"] = int(tb.group(4))
        if tb.group(5):
            nums.update(allocated_bytes=int(tb.group(5)), free_bytes=int(tb.group(6)), reservable_bytes=int(tb.group(7)))
        return Evidence(no, "oom", line[:2000], "memory", 3, flags=frozenset({"banked"}), numbers=nums)
    ol = _OLLAMA_HOST.search(line)
    if ol:
        return Evidence(no, "host-oom", line[:2000], "memory", 3, flags=frozenset({"host"}),
                        numbers={"requested_bytes": parse_log_size(ol.group(1), ol.group(2)),
                                 "free_bytes": parse_log_size(ol.group(3), ol.group(4)), "device": "cpu"})
    return None


def _neuron_dev_mem(no: int, line: str) -> Evidence | None:
    """The Neuron runtime's TDRV device-memory OOM line, with the request (dev batch 65)."""
    nd = _NEURON_DEV_MEM.search(line)
    if not nd:
        return None
    return Evidence(no, "oom", line[:2000], "memory", 3,
                    numbers={"requested_bytes": parse_log_size(nd.group(1), nd.group(2)), "device": "neuron"})


# dev batch 135: the Neuron runtime's shorter form of the same line ends 'on ND 0:NC 0, current utilization:' and lists
# the NeuronCore's usage on the lines under it, the first '* total: 15.855GB' (then '* tensors: ...', '* runtime: ...';
# https://github.com/aws-neuron/aws-neuron-sdk/issues/1014): the total is what the core holds already, the allocated
# figure; read from the next few lines, in the units it prints
_NEURON_UTILIZATION = re.compile(r"\bcurrent utilization:\s*$")
_NEURON_TOTAL = re.compile(r"^\s*\*\s*total:\s*" + SIZE + r"\s*$")
_NEURON_TOTAL_SPAN = 2


def _with_neuron_total(ev: Evidence, it: Iterator[tuple[int, str]], pushback: list[tuple[int, str]]) -> Evidence:
    """`ev` (the Neuron runtime's OOM line ending 'current utilization:') with the '* total: N' of the next lines as
    allocated_bytes; the lines looked at go back to `pushback`, to be read on their own as well."""
    peeked = []
    for _ in range(_NEURON_TOTAL_SPAN):
        try:
            peeked.append(next(it))
        except StopIteration:
            break
        tm = _NEURON_TOTAL.search(peeked[-1][1])
        if tm:
            ev = replace(ev, numbers={**ev.numbers, "allocated_bytes": parse_log_size(tm.group(1), tm.group(2))})
            break
    pushback.extend(reversed(peeked))
    return ev


def _arrayfire_oom(no: int, line: str) -> Evidence | None:
    """flashlight's memory managers over ArrayFire (dev batch 75): the caching manager's report (_FL_CACHING_OOM: the
    request, the device's capacity, the manager's Allocated and Cached figures, in the message's own words) and the older
    native-alloc line with the request alone (_FL_NATIVE_OOM)."""
    fm = _FL_CACHING_OOM.search(line)
    if fm:
        g = fm.groups()
        return Evidence(no, "oom", line[:2000], "memory", 3,
                        numbers={"requested_bytes": parse_log_size(g[0], g[1]), "total_bytes": parse_log_size(g[3], g[4]),
                                 "allocated_bytes": parse_log_size(g[5], g[6]),
                                 "reserved_unallocated_bytes": parse_log_size(g[7], g[8])})
    nm = _FL_NATIVE_OOM.search(line)
    if nm:
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": int(nm.group(1))})
    return None


def _host_request(no: int, line: str) -> Evidence | None:
    """One refused host allocation whose line states its size: mmap's ENOMEM, GLib's g_malloc, macOS libmalloc's
    mach_vm_map (dev batch 82), Android ART's Java heap, which also states the heap's free bytes (_ART_OOM; dev
    batch 74), and OpenCV's alloc.cpp (_CV_ALLOC, flag one_buffer; dev batch 110)."""
    m = (_MMAP.search(line) or _GLIB_ALLOC.search(line) or _MACH_VM_MAP.search(line) or _ART_OOM.search(line)
         or _CV_ALLOC.search(line))
    if m is None:
        return None
    numbers = {"requested_bytes": int(m.group(1)), "device": "cpu"}
    if m.re is _ART_OOM:
        numbers["free_bytes"] = int(m.group(2))
    flags = frozenset({"host", "one_buffer"}) if m.re is _CV_ALLOC else frozenset({"host"})
    return Evidence(no, "host-oom", line[:2000], "memory", 3, flags=flags, numbers=numbers)


def _tflm_arena_oom(no: int, line: str) -> Evidence | None:
    """TensorFlow Lite Micro's tensor arena (_TFLM_ARENA: the request and what is left of the arena; dev batch 77)."""
    for rx in _TFLM_ARENA:
        tf = rx.search(line)
        if tf:
            return Evidence(no, "host-oom", line[:2000], "memory", 3, flags=frozenset({"host", "arena"}),
                            numbers={"requested_bytes": int(tf.group(1)), "free_bytes": int(tf.group(2)), "device": "cpu"})
    return None


def _ue_vulkan_oom(no: int, line: str) -> Evidence | None:
    """Unreal Engine's Vulkan heap (_UE_VULKAN_OOM: the one allocation it could not serve; dev batch 78)."""
    um = _UE_VULKAN_OOM.search(line)
    if um is None:
        return None
    return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": parse_log_size(um.group(1), um.group(2))})


def _cupy_oom(no: int, line: str) -> Evidence | None:
    """CuPy's memory pool (_CUPY_OOM: the request and the pool's total, read as reserved; dev batch 74)."""
    cm = _CUPY_OOM.search(line)
    if cm is None:
        return None
    req, pool = (int(g.replace(",", "")) for g in cm.groups())
    return Evidence(no, "oom", line[:2000], "memory", 3,
                    numbers={"requested_bytes": req, "reserved_bytes": pool, "device": "cuda"})


def _other_oom(no: int, line: str) -> Evidence | None:
    """Out-of-memory lines of other layouts whose sizes are known: vLLM's start-up check, MindSpore's pool,
    PaddlePaddle's, TensorFlow's (CUDA and ROCm), Theano's, numpy's and MLX's allocators, Unreal Engine's Vulkan heaps, MPS's
    per-buffer check, PyTorch's host mappings (mmap), MuJoCo's and TFLite Micro's arenas."""
    banked = _banked_or_app_oom(no, line)
    if banked is not None:
        return banked
    ng = _NEGATIVE_ALLOC.search(line)
    if ng:
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": int(ng.group(1))})
    old = _old_allocator_oom(no, line)
    if old is not None:
        return old
    vm = _VLLM_FREE.search(line)
    if vm:
        free, total, _util, want = (float(g) for g in vm.groups()[1:])
        nums: dict[str, Any] = {"free_bytes": int(round(free * (1 << 30))), "total_bytes": int(round(total * (1 << 30))),
                                "requested_bytes": int(round(want * (1 << 30)))}
        if vm.group(1):
            nums["device"] = vm.group(1)
        return Evidence(no, "oom", line[:2000], "memory", 3, flags=frozenset({"startup"}), numbers=nums)
    sm = _MS_OOM.search(line)
    if sm:
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": int(sm.group(4)),
                                                                      "total_bytes": int(sm.group(1)), "device": "npu"})
    pm = _MS_MALLOC.search(line)
    if pm:
        return Evidence(no, "oom", line[:2000], "memory", 3, flags=frozenset({"foreign"}),
                        numbers={"requested_bytes": int(pm.group(1)), "device": "npu"})
    am = _ACL_MALLOC.search(line)
    if am:
        return Evidence(no, "oom", line[:2000], "memory", 3,
                        numbers={"requested_bytes": int(am.group(1) or am.group(2)), "device": "npu"})
    pd = _PADDLE_OOM.search(line)
    if pd:
        kind, dev = pd.group(1).lower(), pd.group(2)
        nums = {"requested_bytes": parse_log_size(pd.group(3), pd.group(4)),
                "free_bytes": parse_log_size(pd.group(7), pd.group(8)), "device": f"{'cuda' if kind == 'gpu' else kind}:{dev}"}
        if pd.group(5):  # the message's own word: 'X memory has been allocated' (dev batch 42; read as reserved before)
            nums["allocated_bytes"] = parse_log_size(pd.group(5), pd.group(6))
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers=nums)
    tm = _TF_DEVICE.search(line)
    if tm:
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": int(tm.group(1)),
                                                                      "device": "cuda"})
    th = _THEANO.search(line)
    if th:
        req, free, total = (int(g) for g in th.groups())
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": req, "free_bytes": free,
                                                                      "total_bytes": total, "device": "cuda"})
    if ev := _neuron_dev_mem(no, line):
        return ev
    nm = _NUMPY_HOST.search(line)
    if nm:
        return Evidence(no, "host-oom", line[:2000], "memory", 3, flags=frozenset({"host", "host_alloc"}),
                        numbers={"requested_bytes": parse_log_size(nm.group(1), nm.group(2)), "device": "cpu"})
    bm = _MPS_BUFFER.search(line)
    if bm:
        return Evidence(no, "oom", line[:2000], "memory", 3,
                        numbers={"requested_bytes": parse_log_size(bm.group(1), bm.group(2)), "device": "mps"})
    mm = _MLX.search(line)
    if mm:
        return Evidence(no, "oom", line[:2000], "memory", 3, numbers={"requested_bytes": parse_log_size(mm.group(1), "bytes")})
    sized = (_host_request(no, line) or _cupy_oom(no, line) or _arrayfire_oom(no, line) or _tflm_arena_oom(no, line)
             or _ue_vulkan_oom(no, line))
    if sized is not None:
        return sized
    js = _MJ_STACK.search(line)
    if js:
        total, free, req = (int(g) for g in js.groups())
        return Evidence(no, "host-oom", line[:2000], "memory", 3, flags=frozenset({"host", "arena"}),
                        numbers={"requested_bytes": req, "total_bytes": total, "free_bytes": free, "device": "cpu"})
    counted = _counted_oom(no, line)
    if counted is not None:
        return counted
    hm = _TF_HOST.search(line)
    if hm:
        return Evidence(no, "host-oom", line[:2000], "memory", 3, flags=frozenset({"host"}),
                        numbers={"requested_bytes": int(hm.group(1)), "device": "cpu"})
    return None


# dev batch 114: a row flagged `version_older` ('You are using ptxas X, which is older than Y', row xla-ptxas-older) holds
# only where X is really older than Y: TensorFlow 1.12 printed 'You are using ptxas 10.0.145, which is older than
# 9.2.88' from a faulty comparison (https://github.com/tensorflow/tensorflow/issues/23874, fixed later), a notice that
# names nothing wrong.
_OLDER_THAN = re.compile(r"\b(\d+(?:\.\d+)*), which is older than (\d+(?:\.\d+)*)")


def _states_older(line: str) -> bool:
    m = _OLDER_THAN.search(line)
    if not m:
        return False
    have, need = (tuple(int(p) for p in g.split(".")) for g in m.groups())
    return have < need


def _scan_line(no: int, line: str) -> Iterator[Evidence]:
    codes = codes_in_context(line)
    codes.extend(_CANN.findall(line))
    codes.extend(f"ERR{c}" for c in _ERRNPU.findall(line))
    codes.extend(_NAMES.findall(line))
    if codes:
        yield Evidence(no, "codes", line[:2000], None, 0, codes=tuple(dict.fromkeys(codes)))
    matched = False
    if any(rule_matches(r, line) for r in possible_cause_rules()):
        # a list of possible causes (Ray's 'There are some potential root causes. (1) ... OOM killer ... (3) ...
        # SIGSEGV'): none of them is what happened, so nothing on this line argues for a category (dev batch 24)
        yield Evidence(no, "possible-causes", line[:500])
        rules = []
    else:
        rules = matching_rules(line)
    for rule in rules:
        if "version_older" in rule.flags and not _states_older(line):
            continue
        matched = matched or bool(rule.category)
        yield Evidence(no, rule.kind, line[:2000], rule.category, rule.strength, flags=rule.flags)
    # a code that argues for a category speaks for its line; a code no catalog knows (a misspelt enum such as
    # `cudaErrorIlleagalAddress`) says nothing, so the line still counts as an error line and the fallback decides,
    # never `benign` (dev batch 73)
    if not matched and not codes_argue(codes) and _ERROR_LIKE.search(line):
        yield Evidence(no, "error-line", line[:500])
    yield from _context(no, line)


def _context(no: int, line: str) -> Iterator[Evidence]:
    fm = _FRAME.search(line)
    if fm:
        yield Evidence(no, "frame", line[:500], None, 0,
                       numbers={"file": fm.group(1), "lineno": int(fm.group(2)), "func": fm.group(3)})
    for rx in _OP:
        om = rx.search(line)
        if om:
            yield Evidence(no, "op", line[:500], None, 0, numbers={"op": om.group(1)})
            break
    extra = {}
    for key, rx in _NUMS:
        nm = rx.search(line)
        if nm:
            val = nm.group(1)
            extra[key] = int(val) if val.isdigit() else val
    if extra:
        yield Evidence(no, "numbers", line[:500], None, 0, numbers=extra)
