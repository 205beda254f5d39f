"""Constants and size rules of PyTorch's caching allocators, each named after the source line it copies.

Sources (read, not copied):
- CUDA: `pytorch/pytorch` `c10/cuda/CUDACachingAllocator.cpp` @ 001074d25084fdb87a799823e395a50f5ec044d3
  (kMinBlockSize, kSmallSize, kSmallBuffer, kMinLargeAlloc, kRoundLarge, kLargeBuffer, round_size,
  roundup_power2_next_division, get_allocation_size, should_split) and `c10/core/AllocatorConfig.cpp`
  @ 0ac716637f3258efcaf7fdfb851bdd520c9c1441 (kRoundUpPowerOfTwoIntervals/Start/End,
  roundup_power2_divisions(size), max_non_split_rounding_size default = kLargeBuffer).
- torch_npu: `Ascend/pytorch` `torch_npu/csrc/core/npu/NPUCachingAllocator.cpp` and
  `NPUAllocatorConfig.h` @ 165f15da0eb0ac26c7b7dcaedb0f7c5723c7d07e (same block constants, plus
  kExtraLargeBuffer, kAlignRoundLarge, AddPadSize() = 32 bytes except on Ascend910_95, and the
  segment_size_mb / page_size:1g large-pool page sizes).
"""
from __future__ import annotations

MiB = 1024 * 1024

# CUDACachingAllocator.cpp: `constexpr size_t kMinBlockSize = 512; // all sizes are rounded to at least 512 bytes`
K_MIN_BLOCK_SIZE = 512
# CUDACachingAllocator.cpp: `constexpr size_t kSmallSize = 1048576; // largest "small" allocation is 1 MiB`
K_SMALL_SIZE = 1048576
# CUDACachingAllocator.cpp: `constexpr size_t kSmallBuffer = 2097152; // "small" allocations are packed in 2 MiB blocks`
K_SMALL_BUFFER = 2097152
# CUDACachingAllocator.cpp: `const size_t kLargeBuffer = 20971520; // "large" allocations may be packed in 20 MiB blocks`
K_LARGE_BUFFER = 20971520
# CUDACachingAllocator.cpp: `constexpr size_t kMinLargeAlloc = 10485760; // allocations between 1 and 10 MiB may use kLargeBuffer`
K_MIN_LARGE_ALLOC = 10485760
# CUDACachingAllocator.cpp: `constexpr size_t kRoundLarge = 2097152; // round up large allocations to 2 MiB`
K_ROUND_LARGE = 2097152

# AllocatorConfig.cpp: `kRoundUpPowerOfTwoIntervals = 16`, `kRoundUpPowerOfTwoStart = 1 * kMB`,
# `kRoundUpPowerOfTwoEnd = 64 * 1024ul * kMB` (intervals of roundup_power2_divisions: 1 MiB .. 64 GiB).
K_ROUNDUP_INTERVALS = 16
K_ROUNDUP_START_LOG2 = 20

# NPUCachingAllocator.cpp: `constexpr size_t kExtraLargeBuffer = 1073741824; // "extra large" allocations may be packed in 1 GB blocks`
K_EXTRA_LARGE_BUFFER = 1073741824
# NPUAllocatorConfig.h: `constexpr size_t kAlignRoundLarge = 16384; // round up large allocs to 16 KB`
# (default of base_addr_aligned_kb: expandable-segment blocks >= 2 MiB start on a 16 KiB boundary)
K_ALIGN_ROUND_LARGE = 16384
# NPUCachingAllocator.cpp AddPadSize(): `add_size = 32` (0 when GetSocVersion() >= Ascend910_95)
K_NPU_PAD = 32


def roundup_divisions_index(size: int) -> int:
    """AllocatorConfig::roundup_power2_divisions(size): index of the 1 MiB..64 GiB interval of `size`."""
    log_size = size.bit_length() - 1
    index = log_size - K_ROUNDUP_START_LOG2 if log_size > K_ROUNDUP_START_LOG2 else 0
    return min(index, K_ROUNDUP_INTERVALS - 1)


def roundup_power2_next_division(size: int, divisions: int) -> int:
    """CUDACachingAllocator.cpp roundup_power2_next_division: round `size` up to the next of
    `divisions` equal steps between two powers of two (1200 with 4 divisions -> 1280)."""
    if size & (size - 1) == 0:
        return size
    power2_floor = 1 << (size.bit_length() - 1)
    step = power2_floor >> (divisions.bit_length() - 1)
    if step == 0:
        return power2_floor << 1
    floor = size & ~(step - 1)
    return size if floor == size else floor + step


def round_size(size: int, divisions: tuple[int, ...], pad: int = 0) -> int:
    """CUDACachingAllocator.cpp round_size (torch_npu first adds AddPadSize() bytes)."""
    size += pad
    if size < K_MIN_BLOCK_SIZE:
        return K_MIN_BLOCK_SIZE
    div = divisions[roundup_divisions_index(size)]
    if div > 1 and size > K_MIN_BLOCK_SIZE * div:
        return roundup_power2_next_division(size, div)
    return K_MIN_BLOCK_SIZE * ((size + K_MIN_BLOCK_SIZE - 1) // K_MIN_BLOCK_SIZE)


def get_allocation_size(size: int) -> int:
    """CUDACachingAllocator.cpp get_allocation_size: the segment size cudaMalloc'd for a rounded request."""
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return K_ROUND_LARGE * ((size + K_ROUND_LARGE - 1) // K_ROUND_LARGE)
