"""`memplan validate` through click: exit codes, JSON, tolerance, --plan, --report."""
from __future__ import annotations

import json

import pytest

from validate_helpers import DRIFTING_MODEL, FAILING_MODEL, CUDA_OOM, TINY_MODEL, as_json, run_cli


def test_ok_exit_0_and_json(model_file):
    res = run_cli("validate", model_file(TINY_MODEL), "-b", "2", "--device", "cpu", "--format", "json")
    assert res.exit_code == 0, res.output
    d = as_json(res)
    assert d["command"] == "validate" and d["ok"] is True and d["schema_version"] == 1
    assert abs(d["error_pct"]) <= 0.5
    assert d["measured"]["peak_reserved_bytes"] is None
    assert d["predicted"]["peak_allocated_bytes"] > 0


def test_over_tolerance_exit_1_and_tolerance_option(model_file):
    path = model_file(DRIFTING_MODEL)
    res = run_cli("validate", path, "--device", "cpu", "--format", "json")
    assert res.exit_code == 1
    d = as_json(res)
    assert d["ok"] is False and d["error_pct"] < -5 and d["failure"] is None
    # the same run passes with a wide enough tolerance
    res = run_cli("validate", path, "--device", "cpu", "--tolerance", "95", "--format", "json")
    assert res.exit_code == 0, res.output


def test_failed_run_exit_1(model_file):
    res = run_cli("validate", model_file(FAILING_MODEL.format(raise_stmt=CUDA_OOM)), "--device", "cpu")
    assert res.exit_code == 1
    assert "RUN FAILED" in res.stdout and "died" in res.stdout and "during forward of boom" in res.stdout


@pytest.mark.parametrize("args,msg", [
    (["nope.py"], "model file not found"),
    (["{tiny}", "--device", "warp-drive-9000"], "unknown device"),
    (["{tiny}", "--tolerance", "-1"], "tolerance"),
    (["{tiny}", "--plan", "{badplan}"], "not valid JSON"),
    (["{tiny}", "--steps", "1"], "at least 2 optimizer steps"),
])
def test_bad_input_exit_2(model_file, tmp_path, args, msg):
    bad = tmp_path / "plan.json"
    bad.write_text("{not json")
    tiny = model_file(TINY_MODEL)
    args = [a.format(tiny=tiny, badplan=bad) for a in args]
    res = run_cli("validate", *args)
    assert res.exit_code == 2
    assert msg in res.stderr and "Traceback" not in res.stderr


def test_unavailable_backend_is_one_line(model_file):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    res = run_cli("validate", model_file(TINY_MODEL), "--device", "cuda")
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and "no CUDA device" in res.stderr


def test_plan_json(model_file, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"batch_size": 3, "grad_accum_steps": 2, "checkpoint": ["0"], "env": {},
                                "predicted": {"peak_allocated_bytes": 1}}))
    res = run_cli("validate", model_file(TINY_MODEL), "--device", "cpu", "--plan", plan, "--format", "json")
    assert res.exit_code == 0, res.output
    d = as_json(res)
    assert d["config"]["batch_size"] == 3 and d["config"]["grad_accum"] == 2 and d["config"]["checkpoint"] == ["0"]
    assert d["plan"]["predicted_peak_allocated_bytes"] == 1
    assert any("plan's own prediction" in n for n in d["notes"])


def test_html_report(model_file, tmp_path):
    out = tmp_path / "v.html"
    res = run_cli("validate", model_file(TINY_MODEL), "--device", "cpu", "--report", out)
    assert res.exit_code == 0, res.output
    assert "predicted" in res.stdout and "measured" in res.stdout and "OK: error" in res.stdout
    html = out.read_text()
    assert "measured peak per phase" in html and "<html" in html.lower()
