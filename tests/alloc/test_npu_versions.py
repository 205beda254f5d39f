"""PYTORCH_NPU_ALLOC_CONF follows the user's torch_npu line (memplan/alloc/data/torch_npu_versions.json)."""
from __future__ import annotations

import re

import pytest

from memplan.alloc import npu_versions, parse_alloc_conf
from memplan.errors import UserError


def test_every_line_has_its_sources():
    lines = npu_versions.lines()
    assert [ln.torch for ln in lines][:3] == ["2.1", "2.2", "2.3"]
    for ln in lines:
        assert re.fullmatch(r"[0-9a-f]{40}", ln.commit)
        assert ln.branch
        for key in ("max_split_size_mb", "expandable_segments", "garbage_collection_threshold"):
            assert key in ln.alloc_conf_keys
        for fact in ("mem_get_info", "grad_scaler", "memory_stats_num_ooms"):
            assert re.fullmatch(r"torch_npu/\S+:\d+", ln.sources[fact]), (ln.torch, fact)
        assert set(ln.sources["memory_api"]) >= {"memory_stats", "max_memory_reserved", "reset_peak_memory_stats"}


@pytest.mark.parametrize("version, line", [("2.1.0.post12", "2.1"), ("2.3.1", "2.3"),
                                           ("2.7.1rc1", "2.7"), ("2.14.1", "2.13"), ("2.15.0", "2.13"),
                                           ("2.2.2", "2.2"), ("1.11", "2.1")])
def test_line_of_a_version(version, line):
    assert npu_versions.line(version).torch == line


def test_master_is_the_source_of_the_newest_lines():
    newest = npu_versions.lines()[-1]
    assert newest.branch == "master"
    for v in ("2.13.0", "2.14.0", "2.15.0"):
        assert v in newest.sources["torch_npu_versions"]


@pytest.mark.parametrize("conf, ok_on, refused_on", [
    ("roundup_power2_divisions:4", "2.6", "2.5"),
    ("segment_size_mb:64", "2.1", "2.3"),
    ("multi_stream_lazy_reclaim:True", "2.7", "2.6"),
    ("align_hugepages:True", "2.2", "2.3"),      # only the 2.2 line's parser knows it
    ("page_size:1g", "2.1", "2.2"),
])
def test_keys_follow_the_line(conf, ok_on, refused_on):
    parse_alloc_conf(conf, "npu", npu_line=ok_on)
    with pytest.raises(UserError, match=rf"not in torch_npu {refused_on}\b.*torch_npu \d"):
        parse_alloc_conf(conf, "npu", npu_line=refused_on)


def test_key_without_simulated_effect_is_kept_as_other():
    cfg = parse_alloc_conf("expandable_segments:True,multi_stream_lazy_reclaim:False", "npu", npu_line="2.8")
    assert cfg.expandable_segments and ("multi_stream_lazy_reclaim", "False") in cfg.other


def test_unknown_key_everywhere_is_plain_unrecognized():
    with pytest.raises(UserError, match="unrecognized CachingAllocator option: nonsense_key'?$"):
        parse_alloc_conf("nonsense_key:1", "npu", npu_line="2.13")
