import pytest

from memplan.errors import UserError
from memplan.units import fmt_bytes, parse_size


@pytest.mark.parametrize("text,expected", [
    ("24GiB", 24 * 2**30), ("400MiB", 400 * 2**20), ("64GB", 64 * 10**9), ("1024", 1024),
    ("1.5 GiB", int(1.5 * 2**30)), ("2e9", 2 * 10**9), ("512kib", 512 * 1024), (4096, 4096),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "GiB", "12 parsecs", "-5GB", "1..2GB", "ten GB"])
def test_parse_size_rejects(bad):
    with pytest.raises(UserError, match="size"):
        parse_size(bad)


def test_fmt_bytes():
    assert fmt_bytes(512) == "512 B"
    assert fmt_bytes(1536) == "1.50 KiB"
    assert fmt_bytes(3 * 2**30) == "3.00 GiB"
    assert fmt_bytes(-2**20, signed=True) == "-1.00 MiB"
    assert fmt_bytes(None) == "-"
