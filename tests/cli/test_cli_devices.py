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


def test_main_leaves_no_collection_for_the_shutdown(monkeypatch, capsys):
    """The entry point freezes the heap and stops the collector before the interpreter shuts down (its
    full collections over torch's objects cost about half a second a process), on success and on error."""
    import gc

    import pytest

    from memplan.cli import main as entry

    for argv, code in ((["memplan", "devices", "--format", "json"], 0), (["memplan", "devices", "--bogus"], 2)):
        monkeypatch.setattr("sys.argv", argv)
        gc.enable()
        gc.unfreeze()
        try:
            with pytest.raises(SystemExit) as exc:
                entry.main()
            assert exc.value.code == code
            assert not gc.isenabled() and gc.get_freeze_count() > 0
        finally:
            gc.unfreeze()
            gc.enable()
    assert '"command": "devices"' in capsys.readouterr().out
