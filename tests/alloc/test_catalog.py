"""The device catalog: every number has a source; lookups by name and alias; unknown names."""
import json
from importlib import resources

import pytest

from memplan.alloc import load_catalog, lookup
from memplan.errors import UserError

GiB = 1024**3
NUMBERS = ("nominal_bytes", "reported_capacity_bytes", "outside_allocator_bytes")


def _raw():
    return json.loads(resources.files("memplan.alloc").joinpath("data/devices.json").read_text("utf-8"))


def test_every_number_has_a_source():
    for d in _raw()["devices"]:
        assert d["family"] in ("cuda", "npu") and d["sources"].get("family"), d["name"]
        for key in NUMBERS:
            if d.get(key) is not None:
                assert isinstance(d[key], int), (d["name"], key)
                srcs = d["sources"].get(key)
                assert srcs and all(isinstance(s, str) and len(s) > 20 for s in srcs), (d["name"], key)
        assert set(d["sources"]) <= {"family", *NUMBERS}, d["name"]


def test_catalog_covers_the_issue_list():
    names = {d.name for d in load_catalog()}
    for want in ("910A", "910B", "910B4", "910C", "Atlas-300I-Pro", "Atlas-300I-Duo", "V100-16GB", "V100-32GB",
                 "T4", "A10", "A100-40GB", "A100-80GB", "L40S", "H100-80GB", "H200", "RTX-3090", "RTX-4090"):
        assert want in names


def test_reported_capacity_is_below_nominal():
    for d in load_catalog():
        assert d.nominal_bytes > 0
        if d.reported_capacity_bytes is not None:
            assert 0.85 * d.nominal_bytes < d.reported_capacity_bytes <= d.nominal_bytes, d.name
        if d.outside_allocator_bytes is not None:
            assert 0 < d.outside_allocator_bytes < 2 * GiB, d.name


def test_known_capacities():
    assert lookup("910B3").reported_capacity_bytes == round(60.97 * GiB)
    assert lookup("910B3").family == "npu"
    assert lookup("A100-80GB").family == "cuda"


@pytest.mark.parametrize("name, expected", [
    ("A100-80GB", "A100-80GB"), ("a100", "A100-80GB"), ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
    ("a100 40gb", "A100-40GB"), ("910B3", "910B"), ("Ascend910B", "910B"), ("ascend-910b1", "910B"),
    ("Atlas 800T A2", "910B"), ("910B4", "910B4"), ("H200", "H200"), ("h100", "H100-80GB"), ("A3", "910C"),
    ("Tesla V100-SXM2-32GB", "V100-32GB"), ("NVIDIA GeForce RTX 4090", "RTX-4090"), ("310P3", "Atlas-300I-Pro"),
])
def test_lookup(name, expected):
    assert lookup(name).name == expected


def test_unknown_name_lists_close_matches():
    with pytest.raises(UserError) as exc:
        lookup("A1000")
    msg = str(exc.value)
    assert "A100-80GB" in msg and "\n" not in msg
    with pytest.raises(UserError):
        lookup("")


def test_present_device_absent_is_a_user_error():
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(UserError, match="no CUDA device"):
            lookup("cuda")
    try:
        import torch_npu  # noqa: F401
        has_npu = torch.npu.is_available()
    except Exception:
        has_npu = False
    if not has_npu:
        with pytest.raises(UserError):
            lookup("npu")
