"""Markdown, HTML (static), PNG and progress renderers."""
from __future__ import annotations

import builtins
import io
import re

import pytest

from memplan.errors import UserError
from memplan.report.html import html_document, render_html
from memplan.report.markdown import render_markdown
from memplan.report.progress import progress, progress_enabled, track
from memplan.report.timeline import timeline_from_trace
from memplan.units import fmt_bytes
from report_builders import small_trace


@pytest.fixture
def tl():
    return timeline_from_trace(small_trace(), capacity=6000, reserved_curve=[(0, 2048), (6, 8192)],
                               measured=[("measured", [(6, 5800)])], title="tiny | model",
                               summary=[("model", "tiny.py")])


def test_markdown_tables(tl):
    md = render_markdown(tl)
    assert md.startswith("## tiny | model\n")
    assert "| peak allocated | **5.57 KiB** | 5700 | event 6 (backward, step 1) |" in md
    assert "| peak reserved | 8.00 KiB | 8192 |  |" in md
    assert "| headroom | -2.14 KiB | -2192 | **does not fit** |" in md
    assert "| activations | 2.93 KiB | 52.6 % |" in md
    assert "| `fc1` | 4.88 KiB | 87.7 % |" in md
    assert "| backward | 1 | 0 | 6–9 | 5.57 KiB |" in md
    assert "| `fc2` | 1.17 KiB | 500 B | 1.66 KiB | 3 |" in md
    assert "| measured (max) | 5.66 KiB | 5800 | prediction -1.7 % |" in md
    # every table row has as many cells as its header
    for block in md.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        if rows:
            n = rows[0].replace("\\|", "").count("|")
            assert all(r.replace("\\|", "").count("|") == n for r in rows), block


def test_html_is_self_contained_and_shows_peak(tl, tmp_path):
    path = render_html(tl, tmp_path / "r.html")
    text = open(path, encoding="utf-8").read()
    m = re.search(r'id="peak-value" data-peak-bytes="(\d+)">([^<]+)<', text)
    assert m and int(m.group(1)) == 5700 and m.group(2) == fmt_bytes(5700)
    assert not re.search(r"(src|href)=\"https?:", text)
    assert "<script src" not in text and "<link" not in text
    assert 'class="capacity"' in text and 'class="reserved"' in text and "measured-pt" in text
    assert text.count("<polygon") == 6  # every series but `other` is non-zero somewhere


def test_html_escapes_names(tmp_path):
    tr = small_trace()
    tr.storages[3].module = "<script>alert(1)</script>"
    text = html_document(timeline_from_trace(tr))
    assert "<script>alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_png(tl, tmp_path):
    pytest.importorskip("matplotlib")
    from memplan.report.png import render_png

    out = render_png(tl, tmp_path / "r.png")
    with open(out, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_png_without_matplotlib(tl, tmp_path, monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *a, **k):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(name)
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    from memplan.report.png import render_png

    with pytest.raises(UserError, match="pip install matplotlib"):
        render_png(tl, tmp_path / "r.png")


def test_progress_silence_rules():
    buf = io.StringIO()
    assert not progress_enabled(stream=buf)  # not a terminal
    assert not progress_enabled(quiet=True)
    assert not progress_enabled(fmt="json")
    with progress(3, "x", stream=buf) as p:
        p.update(3)
    assert buf.getvalue() == "" and p.count == 3 and not p.active
    forced = io.StringIO()
    with progress(2, "tracing", force=True, stream=forced) as p:
        p.update(2)
    assert p.active and "tracing" in forced.getvalue()
    assert list(track(range(4), "t")) == [0, 1, 2, 3]
