"""Write benchmarks/results/compat.{json,md} from the per-venv results of benchmarks/compat.py."""
from __future__ import annotations

import json
import os


def _acc_cell(rows) -> str:
    if not rows:
        return "-"
    if isinstance(rows, dict):
        return f"error: {rows.get('error', '?')}"
    errs = [abs(r["error_pct"]) for r in rows if "error_pct" in r]
    failed = [r for r in rows if "error" in r]
    cell = f"{sum(e <= 0.5 for e in errs)}/{len(errs)} within 0.5 %"
    if errs:
        cell += f", max {max(errs):.4f} %"
    if failed:
        cell += f"; {len(failed)} failed"
    return cell


def _check_cell(d) -> str:
    if d is None:
        return "-"
    if d.get("skipped"):
        return f"n/a: {d['skipped']}"
    if d.get("error"):
        return f"FAILED: {d['error'][:160]}"
    if "right" in d:
        return f"{d['right']}/{d['files']} right"
    if "error_pct" in d and d["error_pct"] is not None:
        return f"{'ok' if d['ok'] else 'FAILED'} ({d['error_pct']:+.4f} %)"
    if "max_abs_error_pct" in d and d["max_abs_error_pct"] is not None:
        return f"{'ok' if d['ok'] else 'FAILED'} (max {d['max_abs_error_pct']:.4f} %)"
    if "batch_size" in d:
        return f"{'fits' if d['ok'] else 'no fit'}: batch {d['batch_size']}, {d['checkpoint']} ckpt"
    return "ok" if d.get("ok") else f"FAILED {d}"


def _commit_lines(results: list[dict]) -> list[str]:
    """Which memplan commit each check ran from ('-': recorded before commits were)."""
    lines = ["", "memplan commit of each check (case rows: last column):", ""]
    for r in results:
        commits = r.get("check_commits", {})
        cells = [f"{k} {commits.get(k, '-')}" for k in r.get("checks", {})]
        lines.append(f"- {r.get('torch', r.get('python'))}: " + (", ".join(cells) or "-"))
    return lines


def write_report(results: list[dict], out: str) -> None:
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".json", "w") as f:
        json.dump({"benchmark": "compat", "results": results}, f, indent=2, default=str)
    lines = [
        "# Compatibility matrix: the same checks under every torch that torch_npu ships for", "",
        "Produced by `bash benchmarks/compat_envs.sh && python benchmarks/compat.py` (one venv per torch, "
        "CPU). accuracy: `analyze` vs PyTorch's CPU-allocator accounting of the real step in the same venv "
        "(benchmarks/accuracy_cpu.py's `run_case`), every fixture at fp32 and bf16-amp, batch 2, sequence length 32.", "",
        "A failed case reads `UserCodeError` when the real step failed the same way on that torch (the model "
        "uses something that torch lacks), `TraceError` / other errors when only memplan failed. unseen model: "
        "a model file no test has seen (a conv stem + transformer encoder hybrid), same comparison. Rows with a "
        "note ran only part of the check set (see the note).", "",
        "| torch | transformers | accuracy | unseen model | validate | plan | diagnose | gloo ddp |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "checks" not in r:
            lines.append(f"| {r.get('python')} | | worker failed: {r.get('error')} | | | | | |")
            continue
        c = r["checks"]
        torch_cell = r["torch"] + (f" ({r['note']})" if r.get("note") else "")
        lines.append(f"| {torch_cell} | {r.get('transformers', '-')} | {_acc_cell(c.get('accuracy'))} | "
                     f"{_acc_cell(c.get('unseen'))} | {_check_cell(c.get('validate'))} | "
                     f"{_check_cell(c.get('plan'))} | {_check_cell(c.get('diagnose'))} | "
                     f"{_check_cell(c.get('gloo'))} |")
    lines += ["", "## Every accuracy case", "",
              "| torch | model | precision | batch, seq | estimate | measured | error | memplan |",
              "|---|---|---|---|---|---|---|---|"]
    for r in results:
        for key in ("accuracy", "unseen"):
            rows = r.get("checks", {}).get(key)
            if not isinstance(rows, list):
                continue
            for a in rows:
                if "error_pct" in a:
                    cells = f"{a['estimate_bytes']:,} | {a['measured_bytes']:,} | {a['error_pct']:+.4f} %"
                elif "error" in a:
                    cells = f"failed: {a['error'][:200]} | | "
                else:
                    cells = f"{a.get('estimate_bytes', 0):,} | {a.get('skipped', '')} | "
                shape = f"{a.get('batch_size', '-')}, {a.get('seq_len') or 'default'}"
                lines.append(f"| {r['torch']} | {a['model']} | {a['precision']} | {shape} | {cells} | "
                             f"{a.get('memplan_commit', '-')} |")
    lines += _commit_lines(results)
    gaps = os.path.join(os.path.dirname(out), "compat_gaps.md")
    if os.path.exists(gaps):
        with open(gaps) as f:
            lines += ["", f.read().rstrip()]
    pip_log = os.path.join(os.path.dirname(out), "compat_pip_install.txt")
    if os.path.exists(pip_log):
        with open(pip_log) as f:
            log = f.read().rstrip()
        lines += ["", "## `pip install .` keeps the user's torch", "",
                  "Into the torch 2.3.1 venv (torch's own triton dependency was left out of these minimal venvs, "
                  "so pip adds it; torch itself stays 2.3.1, and `.[hf]` keeps the installed transformers):", "",
                  "```", log, "```"]
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
