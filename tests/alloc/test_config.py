"""PYTORCH_CUDA_ALLOC_CONF / PYTORCH_NPU_ALLOC_CONF parsing as in c10/core/AllocatorConfig.cpp,
c10/cuda/CUDAAllocatorConfig.cpp and torch_npu's NPUAllocatorConfig.cpp."""
import pytest

from memplan.alloc import config_from_env, parse_alloc_conf
from memplan.errors import UserError

MiB = 1024 * 1024


def test_defaults():
    c = parse_alloc_conf("", "cuda")
    assert c.max_split_size is None and not c.expandable_segments and c.garbage_collection_threshold == 0
    assert c.roundup_power2_divisions == (0,) * 16 and c.max_non_split_rounding == 20 * MiB


def test_cuda_keys_and_whitespace():
    c = parse_alloc_conf(" max_split_size_mb : 128 , garbage_collection_threshold:0.6,"
                         "expandable_segments:True, max_non_split_rounding_mb:64", "cuda")
    assert c.max_split_size == 128 * MiB and c.garbage_collection_threshold == 0.6
    assert c.expandable_segments and c.max_non_split_rounding == 64 * MiB


def test_cuda_accepts_device_and_pinned_keys():
    c = parse_alloc_conf("backend:native,release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:False,"
                         "pinned_num_register_threads:8,pinned_use_background_threads:True,"
                         "pinned_reserve_segment_size_mb:64,graph_capture_record_stream_reuse:False", "cuda")
    assert dict(c.other)["pinned_num_register_threads"] == "8"


def test_cuda_malloc_async_is_noted():
    c = parse_alloc_conf("backend:cudaMallocAsync", "cuda")
    assert c.backend == "cudaMallocAsync" and c.warnings


def test_trailing_comma_is_accepted():
    assert parse_alloc_conf("max_split_size_mb:100,", "cuda").max_split_size == 100 * MiB


def test_roundup_divisions_forms():
    assert parse_alloc_conf("roundup_power2_divisions:4", "cuda").roundup_power2_divisions == (4,) * 16
    c = parse_alloc_conf("roundup_power2_divisions:[256:4,512:2,>:1]", "cuda")
    # boundary 256 -> index 8: indices 0..8 get 4; 512 -> index 9 gets 2; '>' fills 10..15 with 1
    assert c.roundup_power2_divisions == (4,) * 9 + (2,) + (1,) * 6
    c = parse_alloc_conf("roundup_power2_divisions:[>:8]", "cuda")
    assert c.roundup_power2_divisions == (0,) + (8,) * 15  # '>' fills from last_index + 1 = 1


@pytest.mark.parametrize("text, fragment", [
    ("max_split_size_mb:19", "too small, must be >= 20"),
    ("max_split_size_mb:abc", "expected a number"),
    ("max_split_size_mb", "expected ':'"),
    ("max_split_size_mb=128", "unrecognized key"),
    ("garbage_collection_threshold:1.0", "(0.0, 1.0)"),
    ("garbage_collection_threshold:0", "(0.0, 1.0)"),
    ("expandable_segments:true", "True or False"),
    ("roundup_power2_divisions:3", "power of 2"),
    ("roundup_power2_divisions:0", "power of 2"),
    ("roundup_power2_divisions:[300:4]", "powers of 2"),
    ("roundup_power2_divisions:[256:4", "closing"),
    ("backend:foo", "unknown allocator backend"),
    ("segment_size_mb:64", "unrecognized key"),
    ("max_split_size_mb:100 max_split_size_mb:200", "expected ','"),  # spaces are dropped: "100max_..."
    ("expandable_segments:True;max_split_size_mb:100", "True or False"),
])
def test_cuda_errors_are_one_line_user_errors(text, fragment):
    with pytest.raises(UserError) as exc:
        parse_alloc_conf(text, "cuda")
    msg = str(exc.value)
    assert fragment in msg and "\n" not in msg and msg.startswith("PYTORCH_CUDA_ALLOC_CONF=")


def test_npu_keys():
    c = parse_alloc_conf("max_split_size_mb:100,garbage_collection_threshold:0.5,base_addr_aligned_kb:4,"
                         "page_size:1g,segment_size_mb:64,pinned_mem_register:False,roundup_power2_divisions:0",
                         "npu")
    assert c.max_split_size == 100 * MiB and c.base_addr_aligned_size == 4096
    assert c.page_size_1g and c.segment_size == 64 * MiB and c.roundup_power2_divisions == (0,) * 16


def test_npu_expandable_excludes_max_split_and_gc():
    # NPUAllocatorConfig::parseArgs: an explicit expandable_segments:True cannot be combined with
    # max_split_size_mb or garbage_collection_threshold (CUDA allows it).
    for other in ("max_split_size_mb:100", "garbage_collection_threshold:0.5"):
        with pytest.raises(UserError, match="cannot be enabled with"):
            parse_alloc_conf(f"expandable_segments:True,{other}", "npu")
        parse_alloc_conf(f"expandable_segments:True,{other}", "cuda")
        assert not parse_alloc_conf(f"expandable_segments:False,{other}", "npu").expandable_segments


@pytest.mark.parametrize("text, fragment", [
    ("max_split_size_mb:20", "must be > 20"),        # NPU: strictly greater (CUDA: >= 20)
    ("max_split_size_mb:1e3", "is invalid"),          # NPU: digits only
    ("base_addr_aligned_kb:17", "[0~16]"),
    ("base_addr_aligned_kb:04", "[0~16]"),
    ("page_size:2m", "page_size"),
    ("segment_size_mb:10", "[20, 512]"),
    ("garbage_collection_threshold:1.5", "too big"),
    ("max_non_split_rounding_mb:40", "unrecognized CachingAllocator option"),
    ("backend:native", "unrecognized CachingAllocator option"),
])
def test_npu_errors(text, fragment):
    with pytest.raises(UserError) as exc:
        parse_alloc_conf(text, "npu")
    assert fragment in str(exc.value) and str(exc.value).startswith("PYTORCH_NPU_ALLOC_CONF=")


def test_cuda_accepts_20mib_max_split():
    assert parse_alloc_conf("max_split_size_mb:20", "cuda").max_split_size == 20 * MiB


def test_env_precedence():
    env = {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:100", "PYTORCH_ALLOC_CONF": "expandable_segments:True"}
    c = config_from_env("cuda", env)
    assert c.expandable_segments and c.max_split_size is None  # PYTORCH_ALLOC_CONF wins
    assert config_from_env("cuda", {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:100"}).max_split_size == 100 * MiB
    assert config_from_env("npu", {"PYTORCH_NPU_ALLOC_CONF": "page_size:1g"}).page_size_1g
    assert config_from_env("npu", {}).raw == ""


def test_unknown_family():
    with pytest.raises(UserError):
        parse_alloc_conf("", "tpu")
