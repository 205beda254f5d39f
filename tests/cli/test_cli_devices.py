import json

from click.testing import CliRunner

from memplan.cli.main import cli


def test_devices_table():
    res = CliRunner().invoke(cli, ["devices"], catch_exceptions=False)
    assert res.exit_code == 0
    assert "A100-80GB" in res.output and "910B" in res.output and "60.97 GiB" in res.output
    assert "reported total" in res.output


def test_devices_json():
    res = CliRunner().invoke(cli, ["devices", "--format", "json"], catch_exceptions=False)
    assert res.exit_code == 0
    data = json.loads(res.output)
    assert data["schema_version"] == 1 and data["command"] == "devices" and "memplan_version" in data
    names = {d["name"]: d for d in data["devices"]}
    assert names["910B"]["family"] == "npu" and names["910B"]["sources"]["reported_capacity_bytes"]
    assert names["H200"]["capacity_bytes"] == names["H200"]["nominal_bytes"]
