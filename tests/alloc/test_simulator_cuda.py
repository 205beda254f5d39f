"""CUDACachingAllocator simulation: every expected number is derived by hand from the C++ rules
(c10/cuda/CUDACachingAllocator.cpp @ 001074d2); the derivation is in the comments."""
import pytest

from memplan.alloc import simulate
from memplan.errors import UserError

MiB = 1024 * 1024
KiB = 1024


def test_rounding_and_small_segment(ev):
    # 1 byte -> round_size 512; small pool (<= 1 MiB) -> cudaMalloc(kSmallBuffer = 2 MiB)
    r = simulate(ev.a("x", 1).events, "cuda")
    assert r.peak_allocated_bytes == 512
    assert r.peak_requested_bytes == 1
    assert r.peak_reserved_bytes == 2 * MiB
    assert r.segments_at_peak == 1
    assert r.fragmentation_at_peak_bytes == 2 * MiB - 512


def test_zero_byte_storages_take_no_block(ev):
    # CUDACachingAllocator::allocate(0) returns a null pointer without calling malloc
    r = simulate(ev.a("z", 0).a("x", 512).f("z").events, "cuda")
    assert r.peak_allocated_bytes == 512 and r.peak_reserved_bytes == 2 * MiB


def test_small_pool_packs_2mib_segments(ev):
    # Four 512 KiB requests: the first cudaMallocs 2 MiB and splits (remaining >= 512 in the small pool);
    # the next three take the remainder (1.5 MiB, 1 MiB, 512 KiB); the last leaves 0 -> no split.
    for i in range(4):
        ev.a(i, 512 * KiB)
    r = simulate(ev.events, "cuda")
    assert r.peak_reserved_bytes == 2 * MiB and r.segments_at_peak == 1
    # A fifth one needs a second 2 MiB segment.
    r = simulate(ev.a(4, 512 * KiB).events, "cuda")
    assert r.peak_reserved_bytes == 4 * MiB and r.segments_at_peak == 2
    assert r.num_device_allocs == 2


def test_mid_size_requests_share_a_20mib_segment(ev):
    # 1 MiB + 1 -> 1 MiB + 512 (> kSmallSize: large pool) -> cudaMalloc(kLargeBuffer = 20 MiB), split
    # (remaining 19 MiB - 512 > 1 MiB). Then 3 MiB five times: splits, leaving 4 MiB - 512.
    # The sixth 3 MiB request takes that block whole: remaining 1 MiB - 512 is not > kSmallSize, so
    # should_split is false and the allocator counts the full 4 MiB - 512 as allocated.
    ev.a("first", MiB + 1)
    for i in range(6):
        ev.a(i, 3 * MiB)
    r = simulate(ev.events, "cuda")
    assert r.peak_reserved_bytes == 20 * MiB
    assert r.segments_at_peak == 1
    assert r.peak_allocated_bytes == (MiB + 512) + 5 * 3 * MiB + (4 * MiB - 512) == 20 * MiB
    assert r.peak_requested_bytes == MiB + 1 + 18 * MiB


def test_large_requests_round_to_2mib(ev):
    # 10 MiB is not < kMinLargeAlloc -> its own 10 MiB segment; 10 MiB + 1 -> size 10 MiB + 512 ->
    # segment 12 MiB, split (remaining 2 MiB - 512 > 1 MiB) -> a cached 2 MiB - 512 block.
    # 1.5 MiB then fits that block (best fit) -> no new segment; remaining 0.5 MiB - 512: no split.
    r = simulate(ev.a("a", 10 * MiB).a("b", 10 * MiB + 1).a("c", 3 * MiB // 2).events, "cuda")
    assert r.peak_reserved_bytes == 22 * MiB
    assert r.segments_at_peak == 2
    assert r.peak_allocated_bytes == 10 * MiB + (10 * MiB + 512) + (2 * MiB - 512)


def test_best_fit_picks_the_smallest_cached_block(ev):
    # Segments of 30, 24 and 40 MiB, all freed. 23 MiB -> best fit is the 24 MiB block
    # (remaining 1 MiB is not > 1 MiB: no split, 24 MiB allocated); no new segment.
    ev.a("a", 30 * MiB).a("b", 24 * MiB).a("c", 40 * MiB).f("a").f("b").f("c").a("d", 23 * MiB)
    r = simulate(ev.events, "cuda")
    assert r.peak_reserved_bytes == 94 * MiB and r.num_device_allocs == 3
    assert r.allocated_at_peak_reserved_bytes == 94 * MiB  # peak reached when c was allocated
    assert r.final_reserved_bytes == 94 * MiB


def test_free_blocks_merge_back_into_the_segment(ev):
    # Three 3 MiB blocks split from one 20 MiB segment; freeing all three merges them with the 11 MiB
    # remainder into one 20 MiB block, which then holds a 15 MiB request: still one segment.
    ev.a("a", 3 * MiB).a("b", 3 * MiB).a("c", 3 * MiB).f("a").f("c").f("b").a("d", 15 * MiB)
    r = simulate(ev.events, "cuda")
    assert r.peak_reserved_bytes == 20 * MiB and r.max_segments == 1
    # Without the merge of b, the 15 MiB request would not fit: keep b alive and it needs 16 MiB more.
    ev2 = type(ev)()
    ev2.a("a", 3 * MiB).a("b", 3 * MiB).a("c", 3 * MiB).f("a").f("c").a("d", 15 * MiB)
    r2 = simulate(ev2.events, "cuda")
    assert r2.peak_reserved_bytes == 20 * MiB + 16 * MiB and r2.max_segments == 2


def test_without_max_split_size_big_blocks_are_split(ev):
    # Default max_split_size is unlimited: a cached 100 MiB segment serves 30 MiB and is split.
    r = simulate(ev.a("a", 100 * MiB).f("a").a("b", 30 * MiB).a("c", 60 * MiB).events, "cuda")
    assert r.peak_reserved_bytes == 100 * MiB and r.num_device_allocs == 1


def test_max_split_size_keeps_oversize_blocks_whole(ev):
    # max_split_size_mb:40 -> a cached 60 MiB block (>= 40 MiB) is refused for a 30 MiB request
    # ("Do not return an oversized block for a large request") -> new 30 MiB segment.
    r = simulate(ev.a("a", 60 * MiB).f("a").a("b", 30 * MiB).events, "cuda", "max_split_size_mb:40")
    assert r.peak_reserved_bytes == 90 * MiB and r.segments_at_peak == 2


def test_oversize_blocks_serve_requests_within_20mib(ev):
    # max_split 40 MiB: a 45 MiB request may take a cached 60 MiB block (60 < 45 + kLargeBuffer = 65),
    # unsplit (size >= max_split), so 60 MiB count as allocated.
    r = simulate(ev.a("a", 60 * MiB).f("a").a("b", 45 * MiB).events, "cuda", "max_split_size_mb:40")
    assert r.peak_reserved_bytes == 60 * MiB and r.peak_allocated_bytes == 60 * MiB
    # A cached 70 MiB block is too large for it (70 >= 65): a new 46 MiB segment (45 MiB rounded to 2 MiB).
    ev2 = type(ev)()
    ev2.a("a", 70 * MiB).f("a").a("b", 45 * MiB)
    r2 = simulate(ev2.events, "cuda", "max_split_size_mb:40")
    assert r2.peak_reserved_bytes == 70 * MiB + 46 * MiB
    # max_non_split_rounding_mb:30 widens the slack to 45 + 30 = 75 > 70: reused.
    r3 = simulate(ev2.events, "cuda", "max_split_size_mb:40,max_non_split_rounding_mb:30")
    assert r3.peak_reserved_bytes == 70 * MiB and r3.peak_allocated_bytes == 70 * MiB


def test_release_available_cached_blocks_frees_just_an_oversize_block(ev):
    # Capacity 80 MiB, max_split 40 MiB: the cached 60 MiB block is refused for 30 MiB; cudaMalloc(30)
    # would exceed 80 MiB (60 + 30), so release_available_cached_blocks frees the smallest cached block
    # >= max(30, 40) MiB (the 60 MiB one) and the retry succeeds - without a full cache flush.
    r = simulate(ev.a("a", 60 * MiB).f("a").a("b", 30 * MiB).events, "cuda", "max_split_size_mb:40",
                 capacity=80 * MiB)
    assert r.oom is None and r.num_alloc_retries == 0
    assert r.final_reserved_bytes == 30 * MiB and r.num_device_frees == 1
    assert r.peak_reserved_bytes == 60 * MiB


def test_free_and_retry_releases_the_cache_before_oom(ev):
    # Capacity 40 MiB: cached 30 MiB segment, request 35 MiB. get_free_block fails (30 < 35);
    # get_allocation_size(35 MiB) = 36 MiB (2 MiB rounding) and cudaMalloc(36 MiB) fails (30 + 36 > 40);
    # no max_split -> release_available_cached_blocks is a no-op; release_cached_blocks
    # frees the unsplit 30 MiB segment and the retry (num_alloc_retries += 1) succeeds.
    r = simulate(ev.a("a", 30 * MiB).f("a").a("b", 35 * MiB).events, "cuda", capacity=40 * MiB)
    assert r.oom is None
    assert r.num_alloc_retries == 1
    assert r.final_reserved_bytes == 36 * MiB
    assert r.reserved_curve == ((-1, 0), (0, 30 * MiB), (2, 36 * MiB))


def test_oom_point_after_retry(ev):
    # Capacity 40 MiB, 30 MiB live, then 20 MiB: nothing cached to free -> retry fails -> OOM at event 1.
    r = simulate(ev.a("a", 30 * MiB).a("b", 20 * MiB).events, "cuda", capacity=40 * MiB)
    assert r.oom is not None
    assert r.oom.event_index == 1 and r.oom.alloc_size_bytes == 20 * MiB and r.oom.request_bytes == 20 * MiB
    assert r.oom.reserved_bytes == 30 * MiB and r.num_alloc_retries == 1
    assert r.fits is False
    # The rest is replayed without a limit: what the run would need.
    assert r.peak_reserved_bytes == 50 * MiB


def test_split_blocks_cannot_be_freed_by_the_retry(ev):
    # A live 3 MiB block keeps its 20 MiB segment; its free 17 MiB tail cannot be released (split).
    # 18 MiB needs an 18 MiB segment: 20 + 18 > 30 MiB capacity -> OOM although 17 MiB are cached.
    r = simulate(ev.a("a", 3 * MiB).a("b", 18 * MiB).events, "cuda", capacity=30 * MiB)
    assert r.oom is not None and r.oom.event_index == 1
    assert r.oom.reserved_bytes - r.oom.allocated_bytes == 17 * MiB


def test_outside_allocator_memory_reduces_the_limit(ev):
    # 50 MiB capacity minus 25 MiB outside the allocator leaves 25 MiB: a 30 MiB segment does not fit.
    r = simulate(ev.a("a", 30 * MiB).events, "cuda", capacity=50 * MiB, outside_allocator_bytes=25 * MiB)
    assert r.limit_bytes == 25 * MiB and r.oom is not None
    assert simulate(ev.events, "cuda", capacity=50 * MiB).oom is None


def test_roundup_power2_divisions(ev):
    # roundup_power2_divisions:4 -> 5 MiB + 1 rounds to 6 MiB (floor 4 MiB, steps of 1 MiB);
    # the 20 MiB segment is split (remaining 14 MiB > 1 MiB).
    r = simulate(ev.a("a", 5 * MiB + 1).events, "cuda", "roundup_power2_divisions:4")
    assert r.peak_allocated_bytes == 6 * MiB and r.peak_reserved_bytes == 20 * MiB
    assert simulate(ev.events, "cuda").peak_allocated_bytes == 5 * MiB + 512


def test_roundup_power2_divisions_per_interval(ev):
    # [256:4,512:2,>:1]: intervals 0..8 (< 512 MiB) use 4, interval 9 ([512 MiB, 1 GiB)) uses 2, the rest 1.
    # 300 MiB: floor 256 MiB, step 64 MiB -> 320 MiB. 600 MiB: floor 512, step 256 -> 768 MiB.
    # 1.5 GiB: 1 division -> plain 512-byte rounding (no change).
    conf = "roundup_power2_divisions:[256:4,512:2,>:1]"
    assert simulate(ev.a("a", 300 * MiB).events, "cuda", conf).peak_allocated_bytes == 320 * MiB
    ev2 = type(ev)()
    assert simulate(ev2.a("a", 600 * MiB).events, "cuda", conf).peak_allocated_bytes == 768 * MiB
    ev3 = type(ev)()
    assert simulate(ev3.a("a", 1536 * MiB).events, "cuda", conf).peak_allocated_bytes == 1536 * MiB


def test_garbage_collection_threshold(ev):
    # Capacity 100 MiB, memory fraction 1.0 -> allowed 100 MiB; gc threshold 0.5 -> 50 MiB.
    # a=30 (cached at get_free_block call 1), b=40 (cached at call 2), then c=60: call 3 finds nothing;
    # GC: reserved 70 > 50 -> target 20; ages 3-1=2 and 3-2=1, average 1.5 -> the 30 MiB block goes.
    # cudaMalloc(60): 40 + 60 = 100 <= 100 -> no retry; the 40 MiB block survives.
    ev.a("a", 30 * MiB).f("a").a("b", 40 * MiB).f("b").a("c", 60 * MiB)
    r = simulate(ev.events, "cuda", "garbage_collection_threshold:0.5", capacity=100 * MiB, memory_fraction=1.0)
    assert r.oom is None and r.num_alloc_retries == 0
    assert r.final_reserved_bytes == 100 * MiB and r.segments_at_peak == 2
    # Without GC the allocator hits the cap, frees the whole cache and retries.
    r2 = simulate(ev.events, "cuda", capacity=100 * MiB, memory_fraction=1.0)
    assert r2.num_alloc_retries == 1 and r2.final_reserved_bytes == 60 * MiB
    # Without a memory fraction the threshold does nothing (as in the C++: `set_fraction &&`).
    r3 = simulate(ev.events, "cuda", "garbage_collection_threshold:0.5", capacity=100 * MiB)
    assert r3.num_alloc_retries == 1 and any("memory fraction" in n for n in r3.notes)


def test_memory_fraction_caps_reserved(ev):
    # fraction 0.5 of 100 MiB -> at most 50 MiB reserved: a 60 MiB request fails.
    r = simulate(ev.a("a", 60 * MiB).events, "cuda", capacity=100 * MiB, memory_fraction=0.5)
    assert r.oom is not None and r.limit_bytes == 50 * MiB


def test_expandable_segments_grow_by_20mib_pages(ev):
    # expandable_segments:True. 3 MiB maps one 20 MiB page of the large pool's segment and splits
    # (remaining >= 512). 25 MiB: the free 17 MiB tail is followed by unmapped space, so the segment
    # grows by ceil((25 - 17) / 20) = 1 page -> 40 MiB reserved, one contiguous segment.
    r = simulate(ev.a("a", 3 * MiB).a("b", 25 * MiB).events, "cuda", "expandable_segments:True")
    assert r.peak_reserved_bytes == 40 * MiB and r.segments_at_peak == 1
    # Without it: a 20 MiB segment plus a 26 MiB one (25 MiB rounded to 2 MiB).
    r2 = simulate(ev.events, "cuda")
    assert r2.peak_reserved_bytes == 46 * MiB and r2.segments_at_peak == 2


def test_expandable_small_pool_uses_2mib_pages(ev):
    # 1000 bytes -> 1024 in the small pool's segment, which maps 2 MiB pages.
    # 1.5 MiB of 512 KiB requests fit the first page; the fourth needs one more page.
    for i in range(5):
        ev.a(i, 512 * KiB)
    r = simulate(ev.events, "cuda", "expandable_segments:True")
    assert r.peak_reserved_bytes == 4 * MiB and r.segments_at_peak == 1


def test_expandable_page_granularity_can_oom(ev):
    # 45 MiB needs 3 pages of 20 MiB = 60 MiB > 50 MiB capacity -> OOM although 45 < 50.
    r = simulate(ev.a("a", 45 * MiB).events, "cuda", "expandable_segments:True", capacity=50 * MiB)
    assert r.oom is not None and r.oom.event_index == 0 and r.num_alloc_retries == 1


def test_expandable_retry_unmaps_free_pages(ev):
    # Capacity 60 MiB. a = 30 MiB maps 2 pages (40 MiB); freed -> one cached 40 MiB block.
    # b = 50 MiB: the cached block is too small; growing needs 1 more page (40 + 20 = 60 <= 60): fits.
    # Then free b, and c = 70 MiB: needs 80 MiB > 60 -> release_cached_blocks unmaps all 3 free pages
    # (the segment becomes empty and is released), the retry maps 4 pages = 80 MiB > 60 -> still OOM.
    ev.a("a", 30 * MiB).f("a").a("b", 50 * MiB)
    r = simulate(ev.events, "cuda", "expandable_segments:True", capacity=60 * MiB)
    assert r.oom is None and r.peak_reserved_bytes == 60 * MiB and r.num_alloc_retries == 0
    ev.f("b").a("c", 70 * MiB)
    r2 = simulate(ev.events, "cuda", "expandable_segments:True", capacity=60 * MiB)
    assert r2.oom is not None and r2.oom.event_index == 4 and r2.oom.reserved_bytes == 0
    assert r2.num_alloc_retries == 1


def test_expandable_reuses_freed_space_without_new_pages(ev):
    # a=10 MiB, b=10 MiB in one page-aligned 20 MiB mapping; free a; c=8 MiB fits in a's place.
    ev.a("a", 10 * MiB).a("b", 10 * MiB).f("a").a("c", 8 * MiB)
    r = simulate(ev.events, "cuda", "expandable_segments:True")
    assert r.peak_reserved_bytes == 20 * MiB and r.num_device_allocs == 1


def test_config_family_mismatch(ev):
    from memplan.alloc import parse_alloc_conf

    with pytest.raises(UserError):
        simulate(ev.a("a", 1).events, "cuda", parse_alloc_conf("page_size:1g", "npu"))
