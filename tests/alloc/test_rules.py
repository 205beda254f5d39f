"""Size rules of CUDACachingAllocator.cpp / NPUCachingAllocator.cpp, checked against values worked out by
hand from the C++ (round_size, roundup_power2_next_division, get_allocation_size)."""
from memplan.alloc._rules import (
    K_LARGE_BUFFER, K_SMALL_BUFFER, get_allocation_size, round_size, roundup_divisions_index,
    roundup_power2_next_division,
)

MiB = 1024 * 1024
NO_DIV = (0,) * 16


def test_round_size_512_bytes():
    # size < kMinBlockSize -> kMinBlockSize; else 512 * ceil(size / 512)
    assert round_size(1, NO_DIV) == 512
    assert round_size(512, NO_DIV) == 512
    assert round_size(513, NO_DIV) == 1024
    assert round_size(1000, NO_DIV) == 1024


def test_round_size_npu_pads_32_bytes_first():
    # NPU round_size: size += AddPadSize() (32), then the same rounding: 512 -> 544 -> 1024
    assert round_size(512, NO_DIV, pad=32) == 1024
    assert round_size(480, NO_DIV, pad=32) == 512
    assert round_size(1 * MiB - 16, NO_DIV, pad=32) == 1 * MiB + 512


def test_roundup_power2_next_division_source_example():
    # The C++ comment: 1200 with 4 divisions lies between 1024 and 2048 -> steps 1024, 1280, 1536, 1792 -> 1280
    assert roundup_power2_next_division(1200, 4) == 1280
    assert roundup_power2_next_division(1024, 4) == 1024  # powers of two are kept
    # 5 MiB + 1 with 4 divisions: floor 4 MiB, step 1 MiB, 5 MiB + 1 -> 6 MiB
    assert roundup_power2_next_division(5 * MiB + 1, 4) == 6 * MiB


def test_round_size_with_divisions_only_above_512_times_divisions():
    four = (4,) * 16
    # 1200 <= 512 * 4 = 2048: plain 512 rounding
    assert round_size(1200, four) == 1536
    # 9000 > 2048: floor 8192, step 2048 -> 10240 (plain rounding would give 9216)
    assert round_size(9000, four) == 10240


def test_roundup_divisions_index():
    # intervals of 1 MiB .. 64 GiB: index = log2(size) - 20, clamped to [0, 15]
    assert roundup_divisions_index(1000) == 0
    assert roundup_divisions_index(300 * MiB) == 8
    assert roundup_divisions_index(600 * MiB) == 9
    assert roundup_divisions_index(1 << 40) == 15


def test_get_allocation_size():
    # <= 1 MiB: a 2 MiB small segment; < 10 MiB: a 20 MiB segment; else round up to 2 MiB
    assert get_allocation_size(512) == K_SMALL_BUFFER
    assert get_allocation_size(1 * MiB) == K_SMALL_BUFFER
    assert get_allocation_size(1 * MiB + 512) == K_LARGE_BUFFER
    assert get_allocation_size(10 * MiB - 512) == K_LARGE_BUFFER
    assert get_allocation_size(10 * MiB) == 10 * MiB
    assert get_allocation_size(10 * MiB + 512) == 12 * MiB
