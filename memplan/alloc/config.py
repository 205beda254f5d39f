"""`PYTORCH_CUDA_ALLOC_CONF` / `PYTORCH_ALLOC_CONF` / `PYTORCH_NPU_ALLOC_CONF`, parsed as the real parsers do.

Sources (read, not copied):
- CUDA: `pytorch/pytorch` `c10/core/AllocatorConfig.{h,cpp}` @ 0ac716637f3258efcaf7fdfb851bdd520c9c1441
  (ConfigTokenizer: split on `,` `:` `[` `]`, drop whitespace; keys max_split_size_mb (>= 20),
  max_non_split_rounding_mb (>= 20), garbage_collection_threshold (0 < x < 1), roundup_power2_divisions
  (a power of two, or `[size_mb:div, ..., >:div]`), expandable_segments (True/False),
  pinned_use_background_threads) and `c10/cuda/CUDAAllocatorConfig.cpp`
  @ 01f9ef32eae5ef513002dd44902c23cbe6be3aae (backend, release_lock_on_cudamalloc, pinned_* keys,
  graph_capture_record_stream_reuse; any other key: "Unrecognized key ... in CUDA allocator config").
- torch_npu: `Ascend/pytorch` `torch_npu/csrc/core/npu/NPUAllocatorConfig.{h,cpp}`
  @ 165f15da0eb0ac26c7b7dcaedb0f7c5723c7d07e (max_split_size_mb digits only and > 20,
  garbage_collection_threshold, expandable_segments, pinned_mem_register, base_addr_aligned_kb 0..16,
  page_size:1g, segment_size_mb 20..512, roundup_power2_divisions; and the rule that an explicit
  `expandable_segments:True` cannot be combined with max_split_size_mb or garbage_collection_threshold).

Known limitations: values are checked as the C++ does, but the C++ `stoull`/`stod` corner cases
(trailing garbage after a number is ignored, a leading `-` wraps around) are reproduced only for the
keys that change the simulation.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from memplan.alloc import npu_versions
from memplan.alloc._rules import K_ALIGN_ROUND_LARGE, K_LARGE_BUFFER, K_ROUNDUP_INTERVALS, MiB
from memplan.errors import UserError

SIZE_MAX = 2**64 - 1
FAMILIES = ("cuda", "npu")

_CUDA_COMMON_KEYS = (
    "max_split_size_mb", "max_non_split_rounding_mb", "garbage_collection_threshold",
    "roundup_power2_divisions", "expandable_segments", "pinned_use_background_threads",
)
_CUDA_DEVICE_KEYS = (
    "backend", "release_lock_on_cudamalloc", "release_lock_on_hipmalloc", "pinned_use_cuda_host_register",
    "pinned_use_hip_host_register", "pinned_num_register_threads", "pinned_reserve_segment_size_mb",
    "graph_capture_record_stream_reuse",
)
_NPU_KEYS = (
    "max_split_size_mb", "garbage_collection_threshold", "expandable_segments", "pinned_mem_register",
    "base_addr_aligned_kb", "page_size", "segment_size_mb", "roundup_power2_divisions",
)
"""Keys whose values memplan checks (the rest of a torch_npu line's keys are accepted as `other`)."""
ENV_VARS = {"cuda": ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"), "npu": ("PYTORCH_NPU_ALLOC_CONF",)}
"""The allocator environment variables each family reads, the one memplan advises last (the one table)."""
ALL_ENV_VARS = tuple(n for names in ENV_VARS.values() for n in names)


def env_var(family: str) -> str:
    """The environment variable memplan advises for `family` (PYTORCH_CUDA_ALLOC_CONF / PYTORCH_NPU_ALLOC_CONF)."""
    return ENV_VARS[family][-1]


@dataclass(frozen=True)
class AllocConfig:
    """The allocator settings that change what a caching allocator reserves."""

    family: str = "cuda"
    max_split_size: int | None = None
    """Blocks of at least this many bytes are never split (None: unlimited, the default)."""
    max_non_split_rounding: int = K_LARGE_BUFFER
    """How much larger than a request >= max_split_size a reused oversize block may be (CUDA only)."""
    garbage_collection_threshold: float = 0.0
    roundup_power2_divisions: tuple[int, ...] = (0,) * K_ROUNDUP_INTERVALS
    expandable_segments: bool = False
    backend: str = "native"
    base_addr_aligned_size: int = K_ALIGN_ROUND_LARGE
    """torch_npu: expandable-segment blocks >= 2 MiB start at a multiple of this (0: off)."""
    segment_size: int = 0
    """torch_npu segment_size_mb in bytes: page size of the large pool's expandable segments (0: 20 MiB)."""
    page_size_1g: bool = False
    """torch_npu page_size:1g: large-pool segments are multiples of 1 GiB."""
    raw: str = ""
    warnings: tuple[str, ...] = ()
    other: tuple[tuple[str, str], ...] = field(default=())
    """Keys accepted but without effect on reserved memory (pinned host memory, locking), as given."""

    def describe(self) -> str:
        return self.raw or "(defaults)"


def default_config(family: str) -> AllocConfig:
    _check_family(family)
    return AllocConfig(family=family)


def parse_alloc_conf(text: str | None, family: str = "cuda", npu_line: str | None = None) -> AllocConfig:
    """Parse an allocator config string for `family` ('cuda' or 'npu'); bad input -> UserError.

    npu: the keys are those of the user's torch_npu line (`npu_line`, e.g. "2.1"; default: the installed
    torch_npu, else the installed torch - see `memplan.alloc.npu_versions`)."""
    _check_family(family)
    text = text or ""
    env = ENV_VARS[family][-1]
    try:
        if family == "cuda":
            return _parse_cuda(text)
        return _parse_npu(text, npu_versions.line(npu_line))
    except _ConfError as exc:
        raise UserError(f"{env}={text!r}: {exc}") from None


def config_from_env(family: str, environ: dict | None = None) -> AllocConfig:
    """The config a fresh process would read from its environment (PYTORCH_ALLOC_CONF wins over
    PYTORCH_CUDA_ALLOC_CONF for cuda, as in AcceleratorAllocatorConfig::instance())."""
    _check_family(family)
    environ = os.environ if environ is None else environ
    for name in ENV_VARS[family]:
        if name in environ:
            return parse_alloc_conf(environ[name], family)
    return default_config(family)


def _check_family(family: str) -> None:
    if family not in FAMILIES:
        raise UserError(f"unknown allocator family {family!r}: use 'cuda' or 'npu'")


class _ConfError(Exception):
    pass


def _tokenize(text: str) -> list[str]:
    """ConfigTokenizer / lexArgs: `,` `:` `[` `]` are tokens of their own; whitespace is dropped."""
    out: list[str] = []
    buf: list[str] = []
    for ch in text:
        if ch in ",:[]":
            if buf:
                out.append("".join(buf))
                buf = []
            out.append(ch)
        elif not ch.isspace():
            buf.append(ch)
    if buf:
        out.append("".join(buf))
    return out


_INT_RE = re.compile(r"^([+-]?)(\d+)")
_FLOAT_RE = re.compile(r"^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|nan)", re.IGNORECASE)


def _stoull(tok: str, key: str) -> int:
    """std::stoull: leading digits (trailing text ignored); a leading '-' wraps modulo 2**64."""
    m = _INT_RE.match(tok)
    if not m:
        raise _ConfError(f"expected a number for {key}, got {tok!r}")
    value = int(m.group(2))
    if value > SIZE_MAX:
        raise _ConfError(f"{key} value {tok!r} is out of range")
    return (-value) % 2**64 if m.group(1) == "-" else value


def _stod(tok: str, key: str) -> float:
    m = _FLOAT_RE.match(tok)
    if not m:
        raise _ConfError(f"expected a number for {key}, got {tok!r}")
    return float(m.group(0))


class _Tokens:
    def __init__(self, text: str):
        self.t = _tokenize(text)

    def __len__(self) -> int:
        return len(self.t)

    def at(self, i: int, what: str) -> str:
        if i >= len(self.t):
            raise _ConfError(f"expected {what} at the end")
        return self.t[i]

    def expect(self, i: int, tok: str, after: str) -> None:
        if i >= len(self.t) or self.t[i] != tok:
            got = self.t[i] if i < len(self.t) else "end of string"
            raise _ConfError(f"expected '{tok}' after {after!r}, got {got!r}")

    def boolean(self, i: int, key: str) -> bool:
        tok = self.at(i, f"True or False for {key}")
        if tok not in ("True", "False"):
            raise _ConfError(f"expected True or False for {key}, got {tok!r}")
        return tok == "True"

    def skip_value(self, i: int) -> int:
        """ConfigTokenizer::skipKey: index of the value token, or of the ']' closing a list."""
        if self.at(i, "a value") != "[":
            return i
        while i + 1 < len(self.t) and self.t[i + 1] != "]":
            i += 1
        if i + 1 >= len(self.t):
            raise _ConfError("expected a closing ']'")
        return i + 1


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _parse_divisions(toks: _Tokens, i: int, allow_zero_scalar: bool) -> tuple[int, tuple[int, ...]]:
    """parseRoundUpPower2Divisions; `i` is at the value. Returns (last index, divisions)."""
    divs = [0] * K_ROUNDUP_INTERVALS
    key = "roundup_power2_divisions"
    if toks.at(i, f"a value for {key}") == "[":
        first, last_index = True, 0
        i += 1
        while i < len(toks) and toks.t[i] != "]":
            boundary_tok = toks.t[i]
            toks.expect(i + 1, ":", boundary_tok)
            value = _stoull(toks.at(i + 2, f"a division for {boundary_tok}"), key)
            i += 2
            if value != 0 and not _is_pow2(value):
                raise _ConfError("for roundups, the divisions have to be a power of 2 or 0 to disable roundup")
            if boundary_tok == ">":
                for j in range(last_index + 1, K_ROUNDUP_INTERVALS):
                    divs[j] = value
            else:
                boundary = _stoull(boundary_tok, key)
                if not _is_pow2(boundary):
                    raise _ConfError(f"for roundups, the intervals have to be powers of 2, got {boundary_tok!r}")
                index = min(max(boundary.bit_length() - 1, 0), K_ROUNDUP_INTERVALS - 1)
                if first:
                    for j in range(index):
                        divs[j] = value
                    first = False
                divs[index] = value
                last_index = index
            if i + 1 < len(toks) and toks.t[i + 1] != "]":
                toks.expect(i + 1, ",", toks.t[i])
                i += 1
            i += 1
        if i >= len(toks):
            raise _ConfError(f"expected a closing ']' for {key}")
        return i, tuple(divs)
    value = _stoull(toks.t[i], key)
    if not (_is_pow2(value) or (allow_zero_scalar and value == 0)):
        raise _ConfError(f"for roundups, the divisions have to be a power of 2, got {toks.t[i]!r}")
    return i, (value,) * K_ROUNDUP_INTERVALS


def _parse_cuda(text: str) -> AllocConfig:
    toks = _Tokens(text)
    kw: dict = {}
    other: list[tuple[str, str]] = []
    warnings: list[str] = []
    i = 0
    while i < len(toks):
        key = toks.t[i]
        if key not in _CUDA_COMMON_KEYS and key not in _CUDA_DEVICE_KEYS:
            raise _ConfError(f"unrecognized key {key!r} in CUDA allocator config")
        toks.expect(i + 1, ":", key)
        i += 2
        if key in ("max_split_size_mb", "max_non_split_rounding_mb"):
            mb = _stoull(toks.at(i, f"a value for {key}"), key)
            if mb < K_LARGE_BUFFER // MiB:
                raise _ConfError(f"CachingAllocator option {key} too small, must be >= {K_LARGE_BUFFER // MiB}")
            mb = min(mb, SIZE_MAX // MiB)
            kw["max_split_size" if key == "max_split_size_mb" else "max_non_split_rounding"] = mb * MiB
        elif key == "garbage_collection_threshold":
            v = _stod(toks.at(i, f"a value for {key}"), key)
            if not 0.0 < v < 1.0:
                raise _ConfError("garbage_collect_threshold is invalid, set it in (0.0, 1.0)")
            kw["garbage_collection_threshold"] = v
        elif key == "roundup_power2_divisions":
            i, kw["roundup_power2_divisions"] = _parse_divisions(toks, i, allow_zero_scalar=False)
        elif key == "expandable_segments":
            kw["expandable_segments"] = toks.boolean(i, key)
        elif key == "backend":
            tok = toks.at(i, "a value for backend")
            if tok not in ("native", "cudaMallocAsync"):
                raise _ConfError("unknown allocator backend, options are native and cudaMallocAsync")
            kw["backend"] = tok
            if tok == "cudaMallocAsync":
                warnings.append("backend:cudaMallocAsync does not use the caching allocator; "
                                "memplan simulates the native one")
        elif key in ("release_lock_on_cudamalloc", "release_lock_on_hipmalloc", "pinned_use_cuda_host_register",
                     "pinned_use_hip_host_register", "pinned_use_background_threads",
                     "graph_capture_record_stream_reuse"):
            other.append((key, str(toks.boolean(i, key))))
        elif key == "pinned_num_register_threads":
            n = _stoull(toks.at(i, f"a value for {key}"), key)
            if not _is_pow2(n) or n > 128:
                raise _ConfError(f"{key} has to be a power of 2 and at most 128, got {n}")
            other.append((key, str(n)))
        else:  # pinned_reserve_segment_size_mb
            n = _stoull(toks.at(i, f"a value for {key}"), key)
            if n <= 0:
                raise _ConfError("pinned reserve segment size has to be greater than 0")
            other.append((key, str(n)))
        if i + 1 < len(toks):
            toks.expect(i + 1, ",", toks.t[i])
            i += 1
        i += 1
    return AllocConfig(family="cuda", raw=text, warnings=tuple(warnings), other=tuple(other), **kw)


def _parse_npu(text: str, line: npu_versions.Line) -> AllocConfig:
    toks = _Tokens(text)
    kw: dict = {}
    other: list[tuple[str, str]] = []
    explicit_expandable = False
    i = 0
    while i < len(toks):
        key = toks.t[i]
        if key not in line.alloc_conf_keys:
            raise _ConfError(f"unrecognized CachingAllocator option: {key}{npu_versions.since(key, line)}")
        toks.expect(i + 1, ":", key)
        i += 2
        if key not in _NPU_KEYS:   # accepted by this torch_npu, no effect on what is reserved
            j = toks.skip_value(i)
            other.append((key, "".join(toks.t[i:j + 1])))
            i = j
        elif key == "max_split_size_mb":
            tok = toks.at(i, f"a value for {key}")
            if not tok.isdigit():
                raise _ConfError("CachingAllocator option max_split_size_mb is invalid")
            mb = int(tok)
            if mb <= K_LARGE_BUFFER // MiB:
                raise _ConfError(f"CachingAllocator option max_split_size_mb too small, must be > {K_LARGE_BUFFER // MiB}")
            kw["max_split_size"] = min(mb, SIZE_MAX // MiB) * MiB
        elif key == "garbage_collection_threshold":
            v = _stod(toks.at(i, f"a value for {key}"), key)
            if not v > 0:
                raise _ConfError("garbage_collect_threshold too small, set it 0.0~1.0")
            if not v < 1.0:
                raise _ConfError("garbage_collect_threshold too big, set it 0.0~1.0")
            kw["garbage_collection_threshold"] = v
        elif key == "expandable_segments":
            explicit_expandable = True
            kw["expandable_segments"] = toks.boolean(i, key)
        elif key == "pinned_mem_register":
            other.append((key, str(toks.boolean(i, key))))
        elif key == "base_addr_aligned_kb":
            tok = toks.at(i, f"a value for {key}")
            if not tok.isdigit() or str(int(tok)) != tok or int(tok) > K_ALIGN_ROUND_LARGE // 1024:
                raise _ConfError("CachingAllocator option base_addr_aligned_kb error, must be [0~16], dtype is int")
            kw["base_addr_aligned_size"] = int(tok) * 1024
        elif key == "page_size":
            tok = toks.at(i, "a value for page_size")
            if tok != "1g":
                raise _ConfError(f"unsupported page_size value: {tok} (only 1g)")
            kw["page_size_1g"] = True
        elif key == "segment_size_mb":
            tok = toks.at(i, f"a value for {key}")
            if not tok.isdigit():
                raise _ConfError("CachingAllocator option segment_size_mb is invalid")
            if not 20 <= int(tok) <= 512:
                raise _ConfError("CachingAllocator option segment_size_mb error, must be [20, 512], dtype is int")
            kw["segment_size"] = int(tok) * MiB
        else:  # roundup_power2_divisions
            i, kw["roundup_power2_divisions"] = _parse_divisions(toks, i, allow_zero_scalar=True)
        if i + 1 < len(toks):
            toks.expect(i + 1, ",", toks.t[i])
            i += 1
        i += 1
    # NPUAllocatorConfig.cpp parseArgs: expandable_segments excludes max_split_size_mb and
    # garbage_collection_threshold.
    if kw.get("expandable_segments") and explicit_expandable and (
        "max_split_size" in kw or "garbage_collection_threshold" in kw
    ):
        raise _ConfError("`max_split_size_mb` or `garbage_collection_threshold` cannot be enabled with "
                         "`expandable_segments`; set expandable_segments to False")
    return AllocConfig(family="npu", raw=text, other=tuple(other), **kw)
