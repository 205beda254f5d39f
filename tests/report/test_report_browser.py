"""The HTML report in a real headless browser (Debian's chromium): it renders, its script runs without
error, and the peak it shows is the Timeline's. Skipped with a reason when no chromium is on PATH
(the test never installs anything)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from memplan.report.html import render_html
from memplan.report.timeline import timeline_from_trace
from memplan.units import fmt_bytes
from report_builders import spike_trace

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
          "--enable-logging=stderr", "--v=0"]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    pytest.skip("no chromium / chromium-browser / google-chrome on PATH: install one (e.g. Debian's "
                "`apt-get install chromium`) to run the browser test; tests never install system packages")


@pytest.fixture(scope="module")
def browser() -> str:
    return _chromium()


def _run(browser: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    prof = tmp_path / "profile"
    return subprocess.run([browser, *_FLAGS, f"--user-data-dir={prof}", *args], capture_output=True,
                          text=True, timeout=90)


def test_report_in_headless_chromium(browser, tmp_path):
    tl = timeline_from_trace(spike_trace(n=5000, spike_at=1234), capacity=12_000_000,
                             reserved_curve=[(0, 2 << 20), (2469, 12 << 20)],
                             measured=[("measured", [(2469, 10_500_000)])], title="browser test")
    page = render_html(tl, tmp_path / "report.html")
    url = "file://" + os.path.abspath(page)
    dom = _run(browser, tmp_path, "--dump-dom", "--virtual-time-budget=3000", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    # the script ran to its end (it sets data-ok="1"), and nothing reported a script error
    assert re.search(r'<body[^>]*data-ok="1"', dom.stdout), dom.stdout[:500]
    errors = [ln for ln in dom.stderr.splitlines()
              if "CONSOLE" in ln and ("Uncaught" in ln or "Error" in ln)]
    assert not errors, errors
    m = re.search(r'id="peak-value" data-peak-bytes="(\d+)">([^<]+)<', dom.stdout)
    assert m, "peak element missing from the rendered DOM"
    assert int(m.group(1)) == tl.peak.bytes == tl.to_dict()["peak"]["bytes"]
    assert m.group(2) == fmt_bytes(tl.peak.bytes)
    shot = tmp_path / "report.png"
    r = _run(browser, tmp_path, f"--screenshot={shot}", "--window-size=1100,1300",
             "--virtual-time-budget=3000", url)
    assert r.returncode == 0, r.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
