"""One self-contained HTML report of a `Timeline`: inline SVG and a little inline JavaScript.

No network, no CDN, no external file: the page opens from disk anywhere. It shows the key figures
(the peak in `#peak-value`, with the exact integer in `data-peak-bytes`), the stacked memory timeline
with phase bands, the capacity line, reserved and measured curves and the peak marker, what is live at
the peak (by category and by module), and per-module bars. Hovering the chart shows the values at
that point. The script sets `data-ok="1"` on `<body>` when it has run without error (tests rely on it).
"""
from __future__ import annotations

import json
import os
from html import escape

from memplan.report.timeline import Timeline, band_at
from memplan.units import fmt_bytes

__all__ = ["render_html", "html_document", "SERIES_COLORS"]

SERIES_COLORS = {
    "parameters": "#4e79a7", "gradients": "#f28e2b", "optimizer_state": "#e15759",
    "activations": "#76b7b2", "temporaries": "#59a14f", "inputs": "#edc948", "other": "#b07aa1",
}
_PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
            "#9c755f", "#bab0ac")
_PHASE_COLORS = {
    "forward": "#e8f0fe", "backward": "#fdece3", "optimizer": "#e6f4e6", "zero_grad": "#f1f1f1",
    "build": "#f7f7f7", "inputs": "#fff8dc", "step": "#efefef",
}
_W, _H = 960, 380  # chart size in SVG units
_ML, _MR, _MT, _MB = 78, 16, 26, 34  # margins


def _color(name: str, k: int) -> str:
    return SERIES_COLORS.get(name, _PALETTE[k % len(_PALETTE)])


def _nice_ticks(top: int, n: int = 5) -> list[int]:
    if top <= 0:
        return [0]
    raw = top / n
    mag = 1
    while mag * 10 <= raw:
        mag *= 10
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            step = m * mag
            break
    # binary-friendly steps when the values are bytes of MiB/GiB scale
    for unit in (1 << 40, 1 << 30, 1 << 20, 1 << 10):
        if top >= 2 * unit:
            for m in (1, 2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100, 128, 256, 512):
                if m * unit >= raw:
                    step = m * unit
                    break
            break
    return [int(i * step) for i in range(int(top // step) + 1)]


class _Frame:
    """The chart's coordinate system: event index -> x pixels, bytes -> y pixels."""

    def __init__(self, tl: Timeline):
        n = max(tl.n_events, 1)
        self.xs = tl.x or (0,)
        self.x_lo, self.x_hi = 0, max(n - 1, 1)
        tops = [max(tl.total or (0,)), tl.peak.bytes]
        if tl.capacity:
            tops.append(tl.capacity)
        if tl.reserved is not None and tl.reserved.y:
            tops.append(max(tl.reserved.y))
        tops += [max(c.y) for c in tl.measured if c.y]
        self.y_top = max(max(tops) * 1.06, 1)
        self.pw, self.ph = _W - _ML - _MR, _H - _MT - _MB

    def px(self, x: float) -> float:
        return round(_ML + (x - self.x_lo) / (self.x_hi - self.x_lo) * self.pw, 1)

    def py(self, y: float) -> float:
        return round(_MT + self.ph - y / self.y_top * self.ph, 1)


def _chart(tl: Timeline) -> str:
    f = _Frame(tl)
    out: list[str] = [f'<svg id="timeline" viewBox="0 0 {_W} {_H}" width="100%" '
                      f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="memory timeline">']
    for part in (_bands_svg, _axes_svg, _stack_svg, _lines_svg, _peak_svg):
        out += part(tl, f)
    out.append(f'<line id="hover-line" x1="0" x2="0" y1="{_MT}" y2="{_MT + f.ph}" visibility="hidden"/>')
    out.append(f'<rect id="overlay" x="{_ML}" y="{_MT}" width="{f.pw}" height="{f.ph}" fill="transparent"/>')
    out.append("</svg>")
    return "".join(out)


def _bands_svg(tl: Timeline, f: "_Frame") -> list[str]:
    """Phase bands."""
    px, x_hi, ph = f.px, f.x_hi, f.ph
    out: list[str] = []
    out.append('<g class="bands">')
    for b in tl.bands:
        x0, x1 = px(b.start), px(min(max(b.end, b.start + 1), x_hi))
        if x1 - x0 < 0.5 and len(tl.bands) > 200:
            continue
        col = _PHASE_COLORS.get(b.phase, "#f4f4f4")
        label = f"{b.phase} step {b.step}" + (f".{b.micro_step}" if b.micro_step else "")
        out.append(f'<rect x="{x0}" y="{_MT}" width="{max(x1 - x0, 0.5)}" height="{ph}" fill="{col}">'
                   f'<title>{escape(label)}: events {b.start}-{b.end - 1}, peak {fmt_bytes(b.peak)}'
                   f'</title></rect>')
        if x1 - x0 > 46:
            out.append(f'<text x="{x0 + 3}" y="{_MT + 11}" class="band-label">{escape(label)}</text>')
    out.append("</g>")
    return out


def _axes_svg(tl: Timeline, f: "_Frame") -> list[str]:
    """Grid and axes."""
    px, py, x_hi, pw, y_top = f.px, f.py, f.x_hi, f.pw, f.y_top
    out: list[str] = []
    out.append('<g class="axis">')
    for t in _nice_ticks(int(y_top)):
        y = py(t)
        out.append(f'<line x1="{_ML}" x2="{_W - _MR}" y1="{y}" y2="{y}" class="grid"/>'
                   f'<text x="{_ML - 6}" y="{y + 4}" text-anchor="end">{escape(fmt_bytes(t))}</text>')
    for t in _nice_ticks(x_hi, 8):
        x = px(t)
        out.append(f'<text x="{x}" y="{_H - _MB + 16}" text-anchor="middle">{t}</text>')
    out.append(f'<text x="{_ML + pw / 2}" y="{_H - 4}" text-anchor="middle">{escape(tl.x_label)}</text>')
    out.append("</g>")
    return out


def _stack_svg(tl: Timeline, f: "_Frame") -> list[str]:
    """Stacked areas by category."""
    px, py, xs = f.px, f.py, f.xs
    out: list[str] = []
    cum = [0] * len(xs)
    out.append('<g class="stack">')
    for k, name in enumerate(tl.series):
        vals = tl.stacks[k] if k < len(tl.stacks) else ()
        if not vals or not any(vals):
            continue
        upper = [c + v for c, v in zip(cum, vals)]
        top_pts = " ".join(f"{px(x)},{py(u)}" for x, u in zip(xs, upper))
        bot_pts = " ".join(f"{px(x)},{py(c)}" for x, c in zip(reversed(xs), reversed(cum)))
        out.append(f'<polygon points="{top_pts} {bot_pts}" fill="{_color(name, k)}" fill-opacity="0.85" '
                   f'data-series="{escape(name)}"><title>{escape(name)}</title></polygon>')
        cum = upper
    out.append("</g>")
    return out


def _lines_svg(tl: Timeline, f: "_Frame") -> list[str]:
    """Reserved, measured and capacity lines."""
    px, py = f.px, f.py
    out: list[str] = []
    if tl.reserved is not None and tl.reserved.x:
        pts = " ".join(f"{px(x)},{py(y)}" for x, y in zip(tl.reserved.x, tl.reserved.y))
        out.append(f'<polyline points="{pts}" class="reserved"><title>reserved</title></polyline>')
    for j, c in enumerate(tl.measured):
        if c.kind == "points":
            for i, (x, y) in enumerate(zip(c.x, c.y)):
                lab = c.point_labels[i] if i < len(c.point_labels) else ""
                out.append(f'<path d="M{px(x)},{py(y) - 6} l6,6 l-6,6 l-6,-6 z" class="measured-pt">'
                           f'<title>{escape(c.label)} {escape(lab)}: {fmt_bytes(y)}</title></path>')
        else:
            pts = " ".join(f"{px(x)},{py(y)}" for x, y in zip(c.x, c.y))
            out.append(f'<polyline points="{pts}" class="measured" data-k="{j}">'
                       f'<title>{escape(c.label)}</title></polyline>')
    if tl.capacity:
        y = py(tl.capacity)
        out.append(f'<line x1="{_ML}" x2="{_W - _MR}" y1="{y}" y2="{y}" class="capacity"/>'
                   f'<text x="{_W - _MR - 4}" y="{y - 5}" text-anchor="end" class="capacity-label">'
                   f'capacity {escape(fmt_bytes(tl.capacity))}</text>')
    return out


def _peak_svg(tl: Timeline, f: "_Frame") -> list[str]:
    """The peak marker."""
    px, py, pw, ph = f.px, f.py, f.pw, f.ph
    out: list[str] = []
    x, y = px(tl.peak.index), py(tl.peak.bytes)
    anchor = "end" if x > _ML + pw * 0.7 else "start"
    dx = -8 if anchor == "end" else 8
    out.append(f'<g id="peak-marker"><line x1="{x}" x2="{x}" y1="{_MT}" y2="{_MT + ph}" class="peak-line"/>'
               f'<circle cx="{x}" cy="{y}" r="5" class="peak-dot"/>'
               f'<text x="{x + dx}" y="{max(y - 8, _MT + 24)}" text-anchor="{anchor}" class="peak-label">'
               f'peak {escape(fmt_bytes(tl.peak.bytes))}</text></g>')
    return out


def _bar_rows(rows: list[tuple[str, int, str]], scale: int) -> str:
    out = []
    for name, value, color in rows:
        w = 0 if scale <= 0 else max(value / scale * 100, 0.3 if value else 0)
        out.append(f'<tr><td class="name" title="{escape(name)}">{escape(name)}</td>'
                   f'<td class="num">{escape(fmt_bytes(value))}</td>'
                   f'<td class="bar"><div style="width:{w:.2f}%;background:{color}"></div></td></tr>')
    return "".join(out)


def _legend(tl: Timeline) -> str:
    items = [f'<span><i style="background:{_color(n, k)}"></i>{escape(n)}</span>'
             for k, n in enumerate(tl.series) if k < len(tl.stacks) and any(tl.stacks[k])]
    if tl.reserved is not None:
        items.append('<span><i class="l-reserved"></i>reserved</span>')
    if tl.capacity:
        items.append('<span><i class="l-capacity"></i>capacity</span>')
    for c in tl.measured:
        items.append(f'<span><i class="l-measured"></i>{escape(c.label)}</span>')
    return '<div class="legend">' + "".join(items) + "</div>"


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1000px;
color:#222;padding:0 12px}
h1{font-size:21px;margin:0 0 6px}h2{font-size:16px;margin:26px 0 8px}
.figures{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.fig{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:140px}
.fig b{display:block;font-size:18px}.fig small{color:#666}
.bad b{color:#c0392b}.ok b{color:#1e8449}
table{border-collapse:collapse}td,th{padding:3px 8px;text-align:left;border-bottom:1px solid #eee}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{max-width:420px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-family:monospace;
font-size:12.5px}
td.bar{width:340px}td.bar div{height:12px;border-radius:2px}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12.5px;margin:4px 0 0 78px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px;border-radius:2px}
.legend i.l-reserved{height:0;border-top:2px dashed #555}.legend i.l-capacity{height:0;border-top:2px solid #c0392b}
.legend i.l-measured{height:0;border-top:2px solid #111}
#timeline text{font-size:11px;fill:#444}#timeline .grid{stroke:#e6e6e6}
#timeline .band-label{fill:#777;font-size:10.5px}
#timeline .capacity{stroke:#c0392b;stroke-width:1.6}#timeline .capacity-label{fill:#c0392b}
#timeline .reserved{fill:none;stroke:#555;stroke-width:1.3;stroke-dasharray:5 3}
#timeline .measured{fill:none;stroke:#111;stroke-width:1.6}#timeline .measured-pt{fill:#111}
#timeline .peak-line{stroke:#c0392b;stroke-dasharray:3 3}#timeline .peak-dot{fill:#c0392b}
#timeline .peak-label{fill:#c0392b;font-weight:600;font-size:12px}
#hover-line{stroke:#333;stroke-width:1}
#tip{position:fixed;pointer-events:none;background:#fff;border:1px solid #bbb;border-radius:4px;
padding:6px 8px;font-size:12px;box-shadow:0 2px 6px rgba(0,0,0,.15);display:none;z-index:9}
#tip td{border:0;padding:0 6px 0 0}
.notes{color:#555;font-size:12.5px}
"""

_JS = r"""
(function(){
  var data = JSON.parse(document.getElementById('tl-data').textContent);
  function fmt(n){
    var s = n < 0 ? '-' : ''; n = Math.abs(n);
    var u = [['GiB',1073741824],['MiB',1048576],['KiB',1024]];
    for (var i=0;i<u.length;i++){ if (n >= u[i][1]) return s + (n/u[i][1]).toFixed(2) + ' ' + u[i][0]; }
    return s + n + ' B';
  }
  var svg = document.getElementById('timeline'), ov = document.getElementById('overlay');
  var line = document.getElementById('hover-line'), tip = document.getElementById('tip');
  var xs = data.x, n = Math.max(data.n - 1, 1);
  function bandAt(i){
    var b = data.bands, lo = 0, hi = b.length - 1;
    while (lo <= hi){ var m = (lo+hi)>>1; if (b[m][1] <= i) lo = m+1; else if (b[m][0] > i) hi = m-1; else return b[m]; }
    return null;
  }
  function nearest(xv){
    var lo = 0, hi = xs.length - 1;
    while (hi - lo > 1){ var m = (lo+hi)>>1; if (xs[m] <= xv) lo = m; else hi = m; }
    return (Math.abs(xs[hi]-xv) < Math.abs(xs[lo]-xv)) ? hi : lo;
  }
  function move(ev){
    var r = svg.getBoundingClientRect(), k = r.width / data.w;
    var sx = (ev.clientX - r.left) / k, xv = (sx - data.ml) / data.pw * n;
    if (!xs.length) return;
    var i = nearest(xv), x = xs[i], px = data.ml + x / n * data.pw;
    line.setAttribute('x1', px); line.setAttribute('x2', px); line.setAttribute('visibility', 'visible');
    var rows = '<tr><td><b>' + data.xl + '</b></td><td>' + x + '</td></tr>';
    var b = bandAt(x); if (b) rows += '<tr><td>phase</td><td>' + b[2] + '</td></tr>';
    rows += '<tr><td><b>total</b></td><td><b>' + fmt(data.total[i]) + '</b></td></tr>';
    for (var s = data.series.length - 1; s >= 0; s--){
      var v = data.stacks[s][i]; if (v) rows += '<tr><td>' + data.series[s] + '</td><td>' + fmt(v) + '</td></tr>';
    }
    tip.innerHTML = '<table>' + rows + '</table>'; tip.style.display = 'block';
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 260) + 'px'; tip.style.top = (ev.clientY + 12) + 'px';
  }
  ov.addEventListener('mousemove', move);
  ov.addEventListener('mouseleave', function(){ tip.style.display = 'none'; line.setAttribute('visibility', 'hidden'); });
  document.body.setAttribute('data-ok', '1');
})();
"""


def _esc_json(obj) -> str:
    return json.dumps(obj, separators=(",", ":")).replace("</", "<\\/")


def _figures(tl: Timeline) -> list[str]:
    """The headline figures: peak, reserved, measured, capacity and headroom."""
    p = tl.peak
    peak_txt = fmt_bytes(p.bytes)
    where = p.phase if p.phase and p.phase != "-" else ""
    if where and (p.step or p.micro_step):
        where += f", step {p.step}" + (f" micro-step {p.micro_step}" if p.micro_step else "")
    figs = [f'<div class="fig"><small>peak allocated</small><b id="peak-value" data-peak-bytes="{p.bytes}">'
            f'{escape(peak_txt)}</b><small>{escape(tl.x_label)} {p.index}'
            f'{" · " + escape(where) if where else ""}</small></div>']
    if tl.peak_reserved is not None:
        figs.append(f'<div class="fig"><small>peak reserved</small><b id="peak-reserved" '
                    f'data-bytes="{tl.peak_reserved}">{escape(fmt_bytes(tl.peak_reserved))}</b></div>')
    for c in tl.measured:
        if c.y:
            err = (p.bytes - c.max) / c.max * 100 if c.max else None
            figs.append(f'<div class="fig"><small>{escape(c.label)} (max)</small><b data-bytes="{c.max}">'
                        f'{escape(fmt_bytes(c.max))}</b><small>predicted '
                        f'{"-" if err is None else f"{err:+.1f} %"}</small></div>')
    if tl.capacity:
        head = tl.headroom or 0
        cls = "ok" if head >= 0 else "bad"
        figs.append(f'<div class="fig"><small>capacity</small><b>{escape(fmt_bytes(tl.capacity))}</b></div>'
                    f'<div class="fig {cls}"><small>headroom</small><b id="headroom" data-bytes="{head}">'
                    f'{escape(fmt_bytes(head, signed=True))}</b><small>'
                    f'{"fits" if head >= 0 else "does not fit"}</small></div>')
    return figs


def _module_rows(tl: Timeline) -> str:
    """Per-module rows: max live (light bar) and live at the peak (dark bar)."""
    mods = list(tl.modules[:40])
    scale = max([m.max_live for m in mods] or [0])
    module_rows = "".join(
        f'<tr><td class="name" title="{escape(m.module)}">{escape(m.module)}</td>'
        f'<td class="num">{escape(fmt_bytes(m.max_live))}</td><td class="num">{escape(fmt_bytes(m.bytes_at_peak))}</td>'
        f'<td class="bar"><div style="width:{(m.max_live / scale * 100 if scale else 0):.2f}%;'
        f'background:#9ecae9;position:relative"><div style="width:'
        f'{(m.bytes_at_peak / m.max_live * 100 if m.max_live else 0):.2f}%;background:#2171b5"></div></div></td></tr>'
        for m in mods)
    return module_rows


def _phase_rows(tl: Timeline) -> str:
    """The highest phases, as a table."""
    phase_rows = ""
    if tl.bands:
        top_bands = sorted(tl.bands, key=lambda b: -b.peak)[:12]
        phase_rows = ("<h2>Highest phases</h2><table><tr><th>phase</th><th class='num'>step</th>"
                      "<th class='num'>micro-step</th><th class='num'>events</th>"
                      "<th class='num'>peak</th></tr>" + "".join(
                          f"<tr><td>{escape(b.phase)}</td><td class='num'>{b.step}</td>"
                          f"<td class='num'>{b.micro_step}</td><td class='num'>{b.start}–{b.end - 1}</td>"
                          f"<td class='num'>{escape(fmt_bytes(b.peak))}</td></tr>" for b in top_bands)
                      + "</table>")
    return phase_rows


def html_document(tl: Timeline) -> str:
    """The report as one HTML string."""
    p = tl.peak
    figs = _figures(tl)
    summary = ""
    if tl.summary:
        summary = "<table class='summary'>" + "".join(
            f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in tl.summary) + "</table>"
    # live at the peak
    cats = [(n, v) for n, v in p.by_category if v]
    total_at_peak = sum(v for _n, v in p.by_category) or 1
    cat_rows = _bar_rows([(n, v, _color(n, tl.series.index(n) if n in tl.series else k))
                          for k, (n, v) in enumerate(cats)], max([v for _n, v in cats] or [0]))
    mod_rows = _bar_rows([(n, v, "#4e79a7") for n, v in p.top_modules],
                         max([v for _n, v in p.top_modules] or [0]))
    module_rows = _module_rows(tl)
    band_js = [[b.start, b.end, f"{b.phase} step {b.step}" + (f".{b.micro_step}" if b.micro_step else "")]
               for b in tl.bands]
    data = {"x": list(tl.x), "total": list(tl.total), "series": list(tl.series),
            "stacks": [list(s) for s in tl.stacks], "bands": band_js, "n": tl.n_events,
            "w": _W, "ml": _ML, "pw": _W - _ML - _MR, "xl": tl.x_label, "peak": p.bytes}
    phase_rows = _phase_rows(tl)
    notes = "".join(f"<li>{escape(n)}</li>" for n in tl.notes)
    band = band_at(tl.bands, p.index)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(tl.title)} · memplan</title>
<style>{_CSS}</style></head>
<body data-ok="0">
<h1>{escape(tl.title)}</h1>
{summary}
<div class="figures">{''.join(figs)}</div>
<h2>Timeline</h2>
{_chart(tl)}
{_legend(tl)}
<div id="tip"></div>
<h2>Live at the peak{escape(f" ({band.phase}, step {band.step})" if band else "")}</h2>
<table><tr><th>series</th><th class="num">bytes</th><th>share of {escape(fmt_bytes(total_at_peak))}</th></tr>
{cat_rows}</table>
<h2>Top contributors at the peak</h2>
<table><tr><th>module / frame</th><th class="num">live</th><th></th></tr>{mod_rows}</table>
{phase_rows}
<h2>Per module</h2>
<table><tr><th>module / frame</th><th class="num">max live</th><th class="num">at peak</th>
<th>max live (light) · at peak (dark)</th></tr>{module_rows}</table>
{f'<h2>Notes</h2><ul class="notes">{notes}</ul>' if notes else ''}
<p class="notes">memplan report · {tl.n_events} {escape(tl.x_label)}s, {len(tl.x)} samples shown
(downsampled per bucket min/max; the peak is exact).</p>
<script type="application/json" id="tl-data">{_esc_json(data)}</script>
<script>{_JS}</script>
</body></html>
"""


def render_html(timeline: Timeline, path: str | os.PathLike) -> str:
    """Write the report to `path` (one file, no external resources); return the path."""
    path = os.fspath(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(html_document(timeline))
    return path
