"""Recurrent layers on the CPU: memplan's estimate vs. PyTorch's own accounting of the real run.

Every variant of `nn.RNN` / `nn.GRU` / `nn.LSTM` a speech or time-series model uses: sequence-first or
`batch_first`, with or without an initial state, bidirectional, multi-layer with dropout, LSTM with
`proj_size`, packed sequences (`pack_padded_sequence`, unsorted lengths), fp32 and bf16-amp. Each is
estimated by `memplan.api.analyze` (the code path of `memplan analyze`) and run for real under the CPU
allocator's profiler (`measure_cpu`), two optimizer steps of AdamW, and the steady-state peaks are compared.

    python benchmarks/rnn_cpu.py [--only SUBSTRING ...] [--out benchmarks/results/rnn_cpu]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from memplan import api  # noqa: E402
from memplan.measure.cpu import measure_cpu  # noqa: E402
from memplan.workload import TrainConfig, Workload  # noqa: E402

T, IN, HID, BATCH = 120, 40, 96, 6


class RecurrentNet(torch.nn.Module):
    """A recurrent layer, an initial state made per batch when asked, and a linear head."""

    def __init__(self, kind: str, batch_first: bool, init_state: bool, packed: bool, **rnn_kw):
        super().__init__()
        self.kind, self.batch_first, self.init_state, self.packed = kind, batch_first, init_state, packed
        self.rnn = getattr(torch.nn, kind)(IN, HID, batch_first=batch_first, **rnn_kw)
        out = (self.rnn.proj_size or HID) * (2 if self.rnn.bidirectional else 1)
        self.head = torch.nn.Linear(out, 8)

    def forward(self, x, lengths):
        state = None
        if self.init_state:
            rnn = self.rnn
            n = rnn.num_layers * (2 if rnn.bidirectional else 1)
            b = x.shape[0] if self.batch_first else x.shape[1]
            h = torch.zeros(n, b, rnn.proj_size or HID)
            state = (h, torch.zeros(n, b, HID)) if self.kind == "LSTM" else h
        if self.packed:
            x = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=self.batch_first,
                                                        enforce_sorted=False)
        y, _ = self.rnn(x, state)
        if self.packed:
            y, _ = torch.nn.utils.rnn.pad_packed_sequence(y, batch_first=self.batch_first)
        return self.head(y)


def variants() -> list[dict]:
    out = []
    for kind in ("RNN", "GRU", "LSTM"):
        for bf in (False, True):
            for h0 in (False, True):
                out.append(dict(kind=kind, batch_first=bf, init_state=h0))
        out.append(dict(kind=kind, batch_first=True, init_state=False, bidirectional=True))
        out.append(dict(kind=kind, batch_first=False, init_state=True, num_layers=2, dropout=0.2))
        out.append(dict(kind=kind, batch_first=True, init_state=False, num_layers=2, dropout=0.2,
                        bidirectional=True))
        out.append(dict(kind=kind, batch_first=True, init_state=False, packed=True))
        out.append(dict(kind=kind, batch_first=False, init_state=True, packed=True, bidirectional=True))
        out.append(dict(kind=kind, batch_first=True, init_state=False, precision="bf16-amp"))
    out.append(dict(kind="RNN", batch_first=True, init_state=False, nonlinearity="relu"))
    out.append(dict(kind="LSTM", batch_first=True, init_state=False, proj_size=48))
    out.append(dict(kind="LSTM", batch_first=False, init_state=True, proj_size=48, num_layers=2,
                    bidirectional=True))
    out.append(dict(kind="LSTM", batch_first=True, init_state=False, proj_size=48, packed=True))
    return out


def workload(v: dict) -> Workload:
    kw = {k: x for k, x in v.items() if k not in ("kind", "batch_first", "init_state", "packed", "precision")}

    def build():
        return RecurrentNet(v["kind"], v["batch_first"], v["init_state"], v.get("packed", False), **kw)

    def batch(b):
        x = torch.randn(b, T, IN) if v["batch_first"] else torch.randn(T, b, IN)
        return x, torch.tensor([T - 9 * i for i in range(b)])
    return Workload(name=label(v), build_model=build, make_batch=batch, source="<rnn_cpu>")


def label(v: dict) -> str:
    parts = [v["kind"], "batch_first" if v["batch_first"] else "seq_first",
             "h0" if v["init_state"] else "no_h0"]
    for k in ("bidirectional", "packed"):
        if v.get(k):
            parts.append(k)
    if v.get("num_layers", 1) > 1:
        parts.append(f"{v['num_layers']}layers+dropout" if v.get("dropout") else f"{v['num_layers']}layers")
    for k in ("proj_size", "nonlinearity"):
        if k in v:
            parts.append(f"{k}={v[k]}")
    parts.append(v.get("precision", "fp32"))
    return " ".join(parts)


def run_case(v: dict) -> dict:
    wl = workload(v)
    cfg = TrainConfig(batch_size=BATCH, precision=v.get("precision", "fp32"))
    torch.manual_seed(0)
    t0 = time.perf_counter()
    try:
        meas = measure_cpu(wl, cfg)
    except RuntimeError as exc:   # e.g. oneDNN has no bf16 LSTM on a CPU without AVX512-BF16
        msg = str(exc).splitlines()[0]
        try:
            api.analyze(wl, config=cfg)
            said = "memplan gave an estimate"
        except Exception as exc2:  # noqa: BLE001
            said = f"memplan: {str(exc2).splitlines()[0]}"
        return {"variant": label(v), "config": v, "real_run_fails": msg, "memplan": said}
    t_real = time.perf_counter() - t0
    gc.collect()
    t0 = time.perf_counter()
    est = api.analyze(wl, config=cfg)
    t_trace = time.perf_counter() - t0
    err = 100.0 * (est.peak_allocated_bytes - meas.peak_allocated_bytes) / meas.peak_allocated_bytes
    return {"variant": label(v), "config": v, "estimate_bytes": est.peak_allocated_bytes,
            "measured_bytes": meas.peak_allocated_bytes, "error_pct": err,
            "estimate_phase": est.peak_phase, "measured_phase": meas.peak_phase,
            "trace_s": round(t_trace, 2), "real_s": round(t_real, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="substrings of variant labels")
    ap.add_argument("--out", default="benchmarks/results/rnn_cpu")
    args = ap.parse_args()
    rows = []
    for v in variants():
        if args.only and not any(s in label(v) for s in args.only):
            continue
        row = run_case(v)
        rows.append(row)
        if "real_run_fails" in row:
            print(f"{row['variant']:60s} real run fails on this host: {row['real_run_fails']} ({row['memplan']})")
            continue
        print(f"{row['variant']:60s} est {row['estimate_bytes']:>11,d}  meas {row['measured_bytes']:>11,d}  "
              f"err {row['error_pct']:+.4f} %", flush=True)
    errs = [abs(r["error_pct"]) for r in rows if "error_pct" in r]
    summary = {"cases": len(errs), "real_run_fails": len(rows) - len(errs), "max_abs_error_pct": max(errs) if errs else None,
               "within_0_5_pct": sum(e <= 0.5 for e in errs), "exact": sum(e == 0 for e in errs)}
    result = {"benchmark": "rnn_cpu", "torch": torch.__version__, "python": platform.python_version(),
              "cpu_capability": torch.backends.cpu.get_cpu_capability(),
              "shape": {"seq_len": T, "input_size": IN, "hidden_size": HID, "batch_size": BATCH},
              "ground_truth": "torch.profiler CPU allocator events (c10 ProfiledCPUMemoryReporter), steady-state step",
              "summary": summary, "cases": rows}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump(result, f, indent=2)
    lines = ["# Recurrent layers on CPU: estimate vs. measured peak allocated", "",
             f"torch {torch.__version__}, CPU capability {result['cpu_capability']}; sequence {T}, input {IN}, "
             f"hidden {HID}, batch {BATCH}, AdamW, 2 steps. Estimate: `memplan.api.analyze`; measured: PyTorch's "
             "CPU-allocator accounting of the real run (profiler memory events).", "",
             f"**{summary['cases']} variants**: max |error| {summary['max_abs_error_pct']:.4f} %, "
             f"{summary['within_0_5_pct']} within 0.5 %, {summary['exact']} exact to the byte; "
             f"{summary['real_run_fails']} variants whose real run fails on this host.", "",
             "| variant | estimate | measured | error | phase (est / meas) |", "|---|---|---|---|---|"]
    for r in rows:
        if "real_run_fails" in r:
            lines.append(f"| {r['variant']} | real run fails on this host: {r['real_run_fails']} | | | "
                         f"{r['memplan']} |")
            continue
        lines.append(f"| {r['variant']} | {r['estimate_bytes']:,} | {r['measured_bytes']:,} | "
                     f"{r['error_pct']:+.4f} % | {r['estimate_phase']} / {r['measured_phase']} |")
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
