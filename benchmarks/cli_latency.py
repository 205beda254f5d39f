"""How fast the CLI answers before any work starts: `--help` and a bad argument, per command.

A bad argument must be answered before torch (and the user's model file) is imported: the device
catalog is JSON, sizes and training options are plain Python. Each case runs the `memplan` console
script of this interpreter's environment (as a user types it) in a fresh process, wall clock from
spawn to exit, `--help` and the bad argument of the same command side by side, alternating, best and
median of `--repeat` runs.

    python benchmarks/cli_latency.py                          # this checkout
    python benchmarks/cli_latency.py --before /path/to/old    # and a checkout before the change, apart

Writes benchmarks/results/cli_latency.{json,md} (for this checkout only).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MLP = "fixtures/models/mlp.py"

# command -> one bad argument a first-time user could type (each must exit 2 with one line)
CASES = {
    "analyze": ["analyze", MLP, "--device", "910Z9"],
    "plan": ["plan", MLP],
    "validate": ["validate", MLP, "--capacity", "0"],
    "shard estimate": ["shard", "estimate", MLP, "--capacity", "12 potatoes"],
    "shard plan": ["shard", "plan", MLP],
    "shard validate": ["shard", "validate", MLP, "-b", "0"],
    "devices": ["devices", "--format", "xml"],
    "diagnose": ["diagnose", "nope.log"],
    "decode": ["decode"],
}


def _entry() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "memplan")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "memplan"]


def _time(argv: list[str], root: str) -> tuple[float, int, str]:
    env = dict(os.environ, PYTHONPATH=root)
    t0 = time.perf_counter()
    p = subprocess.run(_entry() + argv, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    return time.perf_counter() - t0, p.returncode, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""


def measure(root: str, repeat: int) -> list[dict]:
    rows = []
    for name, bad in CASES.items():
        helps, bads, code, line = [], [], None, ""
        for _ in range(repeat):
            helps.append(_time(bad[:2 if name.startswith("shard") else 1] + ["--help"], root)[0])
            t, code, line = _time(bad, root)
            bads.append(t)
        rows.append({"command": name, "bad_argument": " ".join(bad), "exit_code": code, "message": line,
                     "help_best_s": round(min(helps), 3), "help_median_s": round(statistics.median(helps), 3),
                     "bad_best_s": round(min(bads), 3), "bad_median_s": round(statistics.median(bads), 3)})
        print(f"{name:15s} --help {min(helps):.2f} s   bad argument {min(bads):.2f} s (exit {code})", flush=True)
    return rows


def markdown(rows: list[dict], meta: dict) -> str:
    lines = ["# CLI latency: `--help` and a bad argument, per command", "",
             f"`python benchmarks/cli_latency.py` — {meta['repeat']} runs each, alternating, fresh process, "
             f"wall clock; machine: {meta['machine']} (load average {meta['load_average']} at start, "
             "shared with other jobs).", "",
             "| command | bad argument | exit | `--help` best / median | bad argument best / median | the answer |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['command']} | `{r['bad_argument']}` | {r['exit_code']} | "
                     f"{r['help_best_s']:.2f} / {r['help_median_s']:.2f} s | "
                     f"{r['bad_best_s']:.2f} / {r['bad_median_s']:.2f} s | {r['message'][:90]} |")
    worst = max(r["bad_median_s"] for r in rows)
    lines += ["", f"Slowest bad-argument answer (median): {worst:.2f} s -- about one Python start-up plus click; "
              "torch is never imported for a bad argument (`--help` is the floor)."]
    if meta.get("before"):
        lines += ["", "Same cases on the checkout before the change (`--before`; exit 0 = the bad value was "
                  "accepted and the whole run made):", "",
                  "| command | exit | `--help` best | bad argument best / median | last stderr line |",
                  "|---|---|---|---|---|"]
        for r in meta["before"]:
            lines.append(f"| {r['command']} | {r['exit_code']} | {r['help_best_s']:.2f} s | {r['bad_best_s']:.2f} / "
                         f"{r['bad_median_s']:.2f} s | {r['message'][:90]} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", default=None, help="a checkout before the change: measured too, shown apart")
    args = ap.parse_args()
    meta = {"repeat": args.repeat, "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "load_average": round(os.getloadavg()[0], 1), "python": platform.python_version(),
            "entry": os.path.basename(_entry()[0])}
    rows = measure(ROOT, args.repeat)
    if args.before:
        print("before:")
        meta["before"] = measure(os.path.abspath(args.before), args.repeat)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "cli_latency.json"), "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=2)
    with open(os.path.join(HERE, "results", "cli_latency.md"), "w", encoding="utf-8") as f:
        f.write(markdown(rows, meta))
    return 0 if all(r["exit_code"] == 2 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
