"""DeepSpeed ZeRO on CPU: memplan's per-rank model against real DeepSpeed runs and DeepSpeed's estimators.

DeepSpeed 0.19.8 runs on this machine's CPU (its CPU accelerator, gloo, installed with DS_BUILD_OPS=0), so
each case is a real `deepspeed.initialize` engine on 2 ranks (torch.multiprocessing, gloo) running 2
optimizer steps of fixtures/hf/llama_small.json (bf16, batch 4, seq 128, fused torch AdamW as the client
optimizer, gradient_clipping 1.0), measured per rank by PyTorch's CPU allocator accounting
(`memplan.measure.cpu.ledger`; model build and `deepspeed.initialize` excluded from the peak, their memory
included). DeepSpeed's JIT-built shared-memory collective op is switched off (gloo carries the collectives). On a CPU "device" and "host" memory are the same allocator: the measured peak is compared with
memplan's device peak + host bytes. memplan's numbers come from the CLI:
`memplan analyze --hf-config ... --train-config args.json --deepspeed ds.json --world-size 2 --format json`.
DeepSpeed's own `estimate_zero2_model_states_mem_needs` / `estimate_zero3_model_states_mem_needs` are
called with the model's parameter counts and set next to memplan's model states (weights, fp32 master,
moments, gradients, fp32 gradient partition) in its optimizer phase.
Writes benchmarks/results/deepspeed_cpu.json and .md.

    python benchmarks/deepspeed_cpu.py [--only z2 z3-offload ...]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "fixtures" / "hf" / "llama_small.json"
BATCH, SEQ, STEPS, RANKS = 4, 128, 2, 2
CASES = {"z2": (2, False), "z2-offload": (2, True), "z3": (3, False), "z3-offload": (3, True)}
STATE_KEYS = ("weights_16bit", "fp32_master_weights", "optimizer_moments", "gradients", "fp32_gradient_partition")


def ds_config(stage: int, offload: bool) -> dict:
    zero = {"stage": stage, "contiguous_gradients": True}
    if offload:
        zero["offload_optimizer"] = {"device": "cpu"}
    return {"train_micro_batch_size_per_gpu": BATCH, "gradient_accumulation_steps": 1, "bf16": {"enabled": True},
            "zero_optimization": zero, "zero_allow_untested_optimizer": True, "zero_force_ds_cpu_optimizer": False,
            "gradient_clipping": 1.0, "steps_per_print": 10 ** 9}


def _worker(rank: int, case: str, port: int, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(RANKS),
                      LOCAL_RANK=str(rank))
    import deepspeed
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    from memplan.measure.cpu import ledger
    from memplan.measure.profiler import memory_profile

    transformers.logging.set_verbosity_error()
    # DeepSpeed's CPU shared-memory collective op is a JIT-built C++ extension that two ranks building at
    # once deadlock on (torch's extension lock); gloo carries the collectives instead (same tensors)
    sys.modules["deepspeed.comm.torch"].build_shm_op = lambda: None
    deepspeed.init_distributed(dist_backend="gloo")
    data = json.loads(CONFIG.read_text())
    cfg = AutoConfig.for_model(**{k: v for k, v in data.items() if k != "architectures"})
    cur = [None]

    def mark(label):
        if cur[0] is not None:
            cur[0].__exit__(None, None, None)
        cur[0] = torch.autograd.profiler.record_function("memplan::" + label) if label else None
        if cur[0] is not None:
            cur[0].__enter__()

    with memory_profile() as prof:
        model = AutoModelForCausalLM.from_config(cfg)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=ds_config(*CASES[case]))
        g = torch.Generator().manual_seed(rank)
        for step in range(1, STEPS + 1):
            mark(f"inputs::{step}::1")
            ids = torch.randint(0, cfg.vocab_size, (BATCH, SEQ), generator=g)
            batch = {"input_ids": ids, "labels": ids.clone()}
            mark(f"forward::{step}::1")
            loss = engine(**batch).loss          # the output is dropped: only the loss is kept
            mark(f"backward::{step}::1")
            engine.backward(loss)
            del loss
            mark(f"optimizer::{step}::1")
            engine.step()
        mark(f"end::{STEPS + 1}::0")
        mark(None)
    m = ledger(prof, STEPS)
    Path(f"{out}.{rank}").write_text(json.dumps({"rank": rank, "peak_allocated_bytes": m.peak_allocated_bytes,
                                                 "peak_phase": m.peak_phase, "phase_peaks": m.phase_peaks}))


def truth(case: str) -> list[dict]:
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "rank")
        mp.spawn(_worker, args=(case, 29700 + list(CASES).index(case), out), nprocs=RANKS)
        return [json.loads(Path(f"{out}.{r}").read_text()) for r in range(RANKS)]


def estimate(case: str, tmp: Path) -> dict:
    ds = tmp / f"{case}.ds.json"
    ds.write_text(json.dumps(ds_config(*CASES[case])))
    args = tmp / "args.json"
    args.write_text(json.dumps({"output_dir": str(tmp), "per_device_train_batch_size": BATCH, "bf16": True,
                                "max_grad_norm": 1.0, "optim": "adamw_torch_fused"}))
    cmd = [sys.executable, "-m", "memplan", "analyze", "--hf-config", str(CONFIG), "--train-config", str(args),
           "--deepspeed", str(ds), "--world-size", str(RANKS), "--seq-len", str(SEQ), "--format", "json", "-q"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=900)
    if res.returncode:
        raise RuntimeError(f"{case}: memplan failed: {res.stderr.strip()[-500:]}")
    d = json.loads(res.stdout)
    d["command"] = " ".join(cmd[1:]).replace(str(ROOT) + "/", "").replace(str(tmp) + "/", "")
    return d


def deepspeed_estimators(stage: int, offload: bool) -> dict:
    """DeepSpeed's own model-state estimators for this model on RANKS GPUs of one node (device bytes)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    data = json.loads(CONFIG.read_text())
    with __import__("torch").device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(
            **{k: v for k, v in data.items() if k != "architectures"}))
    total = sum(p.numel() for p in model.parameters())
    largest = max(sum(p.numel() for p in m.parameters(recurse=False)) for m in model.modules())
    if stage == 2:
        from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

        _cpu, gpu = estimate_zero2_model_states_mem_needs(total, num_gpus_per_node=RANKS, cpu_offload=offload)
        return {"function": "estimate_zero2_model_states_mem_needs", "device_bytes": gpu, "total_params": total}
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs

    _cpu, gpu, _largest = estimate_zero3_model_states_mem_needs(total, largest, num_gpus_per_node=RANKS,
                                                                cpu_offload=offload, cpu_offload_params=False)
    return {"function": "estimate_zero3_model_states_mem_needs", "device_bytes": gpu, "total_params": total,
            "largest_layer_params": largest}


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), TRANSFORMERS_VERBOSITY="error", PYTHONWARNINGS="ignore")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "deepspeed_cpu"))
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, (stage, offload) in CASES.items():
            if a.only and case not in a.only:
                continue
            t0 = time.perf_counter()
            measured = truth(case)
            e = estimate(case, Path(tmp))
            predicted = e["device_peak_bytes"] + e["host_bytes"]
            worst = max(r["peak_allocated_bytes"] for r in measured)
            opt = e["phase_components"]["optimizer"]
            rows.append({"case": case, "stage": stage, "offload_optimizer": offload, "ranks": RANKS,
                         "predicted_device_bytes": e["device_peak_bytes"], "predicted_host_bytes": e["host_bytes"],
                         "predicted_total_bytes": predicted, "predicted_phase": e["device_peak_phase"],
                         "measured_per_rank": measured, "measured_max_bytes": worst,
                         "error_pct": round(100.0 * (predicted - worst) / worst, 3),
                         "memplan_model_states_device_bytes": sum(opt.get(k, 0) for k in STATE_KEYS),
                         "deepspeed_estimator": deepspeed_estimators(stage, offload),
                         "memplan_command": e["command"], "seconds": round(time.perf_counter() - t0, 1)})
            r = rows[-1]
            print(f"{case:11s} predicted {predicted:>14,d} (device {e['device_peak_bytes']:,d} + host "
                  f"{e['host_bytes']:,d})  measured {worst:>14,d}  error {r['error_pct']:+.3f} %", flush=True)
            write(rows, a.out)      # after every case: a partial run still leaves its results
    return 0


def write(rows: list, out: str) -> None:
    import deepspeed
    import torch

    from memplan import __version__

    meta = {"benchmark": "deepspeed_cpu", "memplan_version": __version__, "torch": torch.__version__,
            "deepspeed": deepspeed.__version__, "python": platform.python_version(),
            "config": str(CONFIG.relative_to(ROOT)), "batch_size": BATCH, "seq_len": SEQ, "ranks": RANKS,
            "steps": STEPS, "rows": rows}
    Path(out + ".json").write_text(json.dumps(meta, indent=1) + "\n")
    mib = 1024 * 1024
    lines = ["# DeepSpeed ZeRO on CPU: memplan's per-rank model vs real DeepSpeed runs", "",
             f"`python benchmarks/deepspeed_cpu.py` · memplan {__version__} · deepspeed {deepspeed.__version__} · "
             f"torch {torch.__version__} · {meta['config']}, bf16, batch {BATCH}, seq {SEQ}, {RANKS} gloo ranks, "
             f"{STEPS} steps. On the CPU device and host memory are one allocator: measured = the largest rank's "
             "peak; predicted = device peak + host (offloaded) bytes. DeepSpeed's default reduce_bucket_size "
             "(5e8 elements) makes a 1 GB bf16 bucket, which dominates this small model.", "",
             "| case | predicted device MiB | predicted host MiB | predicted total MiB | measured MiB (max rank) | "
             "error % | memplan model states MiB | DeepSpeed estimator MiB |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['predicted_device_bytes'] / mib:.2f} | {r['predicted_host_bytes'] / mib:.2f} | "
                     f"{r['predicted_total_bytes'] / mib:.2f} | {r['measured_max_bytes'] / mib:.2f} | "
                     f"{r['error_pct']:+.3f} | {r['memplan_model_states_device_bytes'] / mib:.2f} | "
                     f"{r['deepspeed_estimator']['device_bytes'] / mib:.2f} |")
    Path(out + ".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
