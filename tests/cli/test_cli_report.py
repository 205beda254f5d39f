"""--report on analyze, and diagnose --snapshot: the files they write and what a browser shows."""
import json
import os
import pickle
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from memplan.cli.main import cli
from memplan.units import fmt_bytes

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def test_analyze_html_report_peak_equals_json(model_path, tmp_path):
    out = tmp_path / "report.html"
    r = CliRunner().invoke(cli, ["analyze", model_path("llama_gqa"), "--seq-len", "64", "--device", "A100-40GB",
                                 "--report", str(out), "--format", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    peak = json.loads(r.stdout)["peak_allocated_bytes"]
    html = out.read_text()
    assert f'data-peak-bytes="{peak}"' in html
    # self-contained: no network, no CDN (the SVG namespace URI is an identifier, not a fetch)
    assert not re.search(r'(src|href)\s*=\s*["\']?https?:', html)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium on PATH: install one to run the in-browser check (tests never install it)")
    dom = subprocess.run([browser, *FLAGS, f"--user-data-dir={tmp_path / 'p'}", "--dump-dom",
                          "--virtual-time-budget=3000", "file://" + str(out)],
                         capture_output=True, text=True, timeout=90)
    assert re.search(r'<body[^>]*data-ok="1"', dom.stdout)
    m = re.search(r'id="peak-value" data-peak-bytes="(\d+)">([^<]+)<', dom.stdout)
    assert m and int(m.group(1)) == peak and m.group(2) == fmt_bytes(peak)


def test_analyze_markdown_report(model_path, tmp_path):
    out = tmp_path / "report.md"
    r = CliRunner().invoke(cli, ["analyze", model_path("mlp"), "--report", str(out)], catch_exceptions=False)
    assert r.exit_code == 0
    text = out.read_text()
    assert "| optimizer_state |" in text and "peak allocated" in text


def test_report_suffix_is_checked_before_tracing(model_path, tmp_path):
    r = CliRunner().invoke(cli, ["analyze", model_path("mlp"), "--report", str(tmp_path / "r.docx")])
    assert r.exit_code == 2 and ".html, .md or .png" in r.output


def test_diagnose_snapshot(tmp_path):
    from snapshot_synth import synthetic_snapshot

    data, truth = synthetic_snapshot()
    path = tmp_path / "snapshot.pickle"
    with open(path, "wb") as f:
        pickle.dump(data, f)
    r = CliRunner().invoke(cli, ["diagnose", "--snapshot", str(path), "--report", str(tmp_path / "s.html"),
                                 "--format", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["snapshot"]["devices"][0]["peak_allocated"] == truth.peak_allocated
    assert os.path.getsize(tmp_path / "s.html") > 1000
    r = CliRunner().invoke(cli, ["diagnose", "--snapshot", str(path)], catch_exceptions=False)
    assert "Live at the peak" in r.output and fmt_bytes(truth.peak_allocated) in r.output


def test_diagnose_needs_something():
    r = CliRunner().invoke(cli, ["diagnose"])
    assert r.exit_code == 2 and "--snapshot" in r.output
    r = CliRunner().invoke(cli, ["diagnose", "--snapshot", "nope.pickle"])
    assert r.exit_code == 2 and "not found" in r.output
