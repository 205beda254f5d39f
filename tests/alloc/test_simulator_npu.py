"""torch_npu's NPUCachingAllocator where it differs from CUDA (NPUCachingAllocator.cpp /
NPUAllocatorConfig.cpp @ 165f15da); expected values derived by hand in the comments."""
from memplan.alloc import parse_alloc_conf, simulate
from memplan.alloc._engine import Engine

MiB = 1024 * 1024
KiB = 1024


def test_npu_pads_every_request_by_32_bytes(ev):
    # round_size: size += 32 -> 512 becomes 544 -> 1024 on NPU; 512 on CUDA.
    assert simulate(ev.a("a", 512).events, "npu").peak_allocated_bytes == 1024
    assert simulate(ev.events, "cuda").peak_allocated_bytes == 512


def test_npu_padding_moves_1mib_requests_to_the_large_pool(ev):
    # 1 MiB - 16: CUDA -> 1 MiB, small pool, a 2 MiB segment.
    # NPU -> 1 MiB + 16 -> 1 MiB + 512 > kSmallSize: large pool, a 20 MiB segment.
    assert simulate(ev.a("a", MiB - 16).events, "cuda").peak_reserved_bytes == 2 * MiB
    assert simulate(ev.events, "npu").peak_reserved_bytes == 20 * MiB


def test_npu_910_95_has_no_padding(ev):
    assert simulate(ev.a("a", 512).events, "npu", pad_bytes=0).peak_allocated_bytes == 512


def test_npu_segments_round_padded_size(ev):
    # 50 MiB -> 50 MiB + 32 -> 50 MiB + 512 -> get_allocation_size rounds to 2 MiB: 52 MiB
    # (CUDA: 50 MiB exactly).
    assert simulate(ev.a("a", 50 * MiB).events, "npu").peak_reserved_bytes == 52 * MiB
    assert simulate(ev.events, "cuda").peak_reserved_bytes == 50 * MiB


def test_npu_910b_capacity_from_catalog(ev):
    # 910B reports 60.97 GiB: a 61 GiB request cannot fit; one of 60 GiB can.
    GiB = 1024 * MiB
    r = simulate(ev.a("a", 61 * GiB).events, "910B3")
    assert r.capacity_bytes == round(60.97 * GiB) and r.oom is not None
    ev2 = type(ev)()
    assert simulate(ev2.a("a", 60 * GiB).events, "Ascend910B").oom is None


def test_npu_page_size_1g(ev):
    # page_size:1g -> large-pool segments are multiples of kExtraLargeBuffer (1 GiB) instead of 2 MiB.
    r = simulate(ev.a("a", 50 * MiB).a("b", 100).events, "npu", "page_size:1g")
    assert r.peak_reserved_bytes == 1024 * MiB + 2 * MiB  # small pool unchanged (2 MiB)


def test_npu_segment_size_mb_sets_the_expandable_page(ev):
    # expandable segments with segment_size_mb:64: the large pool maps 64 MiB pages (default 20 MiB).
    r = simulate(ev.a("a", 3 * MiB).events, "npu", "expandable_segments:True,segment_size_mb:64")
    assert r.peak_reserved_bytes == 64 * MiB
    assert simulate(ev.events, "npu", "expandable_segments:True").peak_reserved_bytes == 20 * MiB


def test_npu_max_split_size(ev):
    # Same rule as CUDA but with kLargeBuffer slack fixed (no max_non_split_rounding_mb in torch_npu):
    # max_split 40 MiB, cached 60 MiB (+512 padding -> 62 MiB segment) refused for a 30 MiB request.
    r = simulate(ev.a("a", 60 * MiB).f("a").a("b", 30 * MiB).events, "npu", "max_split_size_mb:40")
    assert r.peak_reserved_bytes == 62 * MiB + 32 * MiB


def test_npu_expandable_aligns_large_blocks_to_16kib():
    # With expandable segments, a block >= 2 MiB whose address is not a multiple of
    # base_addr_aligned_kb (16 KiB) starts at the next 16 KiB boundary; the sliver before it is cached.
    # a = 3 MiB -> 3 MiB + 512 at the (page-aligned) segment start; b = 3 MiB would start at
    # 3 MiB + 512 -> moved by 16384 - 512 = 15872 bytes.
    cfg = parse_alloc_conf("expandable_segments:True", "npu")
    eng = Engine(cfg, pad=32, npu=True, limit=None, allowed=None, device_total=64 << 30)
    a = eng.malloc(3 * MiB)
    b = eng.malloc(3 * MiB)
    assert a.size == 3 * MiB + 512
    assert (b.addr - a.addr) == 3 * MiB + 16 * KiB
    free_sizes = sorted(k >> 56 for k in eng.large.keys)
    assert free_sizes == [15872, 20 * MiB - 2 * (3 * MiB + 512) - 15872]
    # base_addr_aligned_kb:0 turns it off: b follows a directly.
    eng0 = Engine(parse_alloc_conf("expandable_segments:True,base_addr_aligned_kb:0", "npu"), pad=32, npu=True,
                  limit=None, allowed=None, device_total=64 << 30)
    a0, b0 = eng0.malloc(3 * MiB), eng0.malloc(3 * MiB)
    assert b0.addr - a0.addr == 3 * MiB + 512


def test_cuda_expandable_has_no_alignment():
    cfg = parse_alloc_conf("expandable_segments:True", "cuda")
    eng = Engine(cfg, pad=0, npu=False, limit=None, allowed=None, device_total=80 << 30)
    a, b = eng.malloc(3 * MiB + 1), eng.malloc(3 * MiB)
    assert b.addr - a.addr == 3 * MiB + 512
