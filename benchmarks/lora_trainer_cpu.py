"""LoRA and full fine-tuning with the Hugging Face `Trainer`: memplan's estimate against the real run.

For each case (LoRA rank 8 on q_proj+v_proj, LoRA rank 8 on all-linear, full fine-tuning; fp32 and
bf16 mixed precision; gradient checkpointing off and on) on fixtures/hf/llama_small.json:
- truth: `transformers.Trainer.train()` itself runs 2 real optimizer steps on the CPU (PEFT's
  `get_peft_model` for LoRA), in a fresh process, under PyTorch's CPU allocator accounting
  (`memplan.measure.profiler.memory_profile`, `memplan.measure.cpu.ledger`); a TrainerCallback opens one
  profiler range per phase, and the peak is taken over the two steps (model build excluded, its memory
  included), as memplan's is;
- estimate: the CLI, in a fresh process: `memplan analyze --hf-config ... --train-config args.json
  (--lora r=8,... | --peft-config adapter_config.json) --seq-len T --format json`.
Writes benchmarks/results/lora_trainer_cpu.json and .md.

    python benchmarks/lora_trainer_cpu.py [--only lora-qv-bf16-gc ...]
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
BATCH, SEQ, STEPS = 4, 128, 2
METHODS = {"lora-qv": ["q_proj", "v_proj"], "lora-all": "all-linear", "full": None}


def cases():
    for method in METHODS:
        for prec in ("fp32", "bf16"):
            for gc in (False, True):
                yield f"{method}-{prec}-{'gc' if gc else 'nogc'}", method, prec, gc


def trainer_args(prec: str, gc: bool, out: str) -> dict:
    return {"output_dir": out, "per_device_train_batch_size": BATCH, "max_steps": STEPS, "bf16": prec == "bf16",
            "gradient_checkpointing": gc, "use_cpu": True, "report_to": [], "save_strategy": "no",
            "logging_strategy": "no", "disable_tqdm": True, "dataloader_num_workers": 0}


def lora_config(method: str) -> dict:
    return {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 8, "lora_alpha": 16, "lora_dropout": 0.05,
            "target_modules": METHODS[method]}


def truth(case: str) -> dict:
    """The real Trainer run (in this process); returns the measured peaks."""
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, Trainer, TrainerCallback, TrainingArguments

    from memplan.measure.cpu import ledger
    from memplan.measure.profiler import memory_profile

    transformers.logging.set_verbosity_error()
    _, method, prec, gc = next(c for c in cases() if c[0] == case)
    data = json.loads(CONFIG.read_text())
    cfg = AutoConfig.for_model(**{k: v for k, v in data.items() if k != "architectures"})
    vocab = cfg.vocab_size

    class Tokens(torch.utils.data.Dataset):
        def __len__(self):
            return 1000

        def __getitem__(self, i):
            ids = torch.randint(0, vocab, (SEQ,), generator=torch.Generator().manual_seed(i))
            return {"input_ids": ids, "labels": ids.clone()}

    class Ranges(TrainerCallback):
        """memplan::<phase>::<step>::1 profiler ranges, the labels memplan.measure.cpu reads."""
        cur = None

        def open(self, label):
            self.close()
            self.cur = torch.autograd.profiler.record_function("memplan::" + label)
            self.cur.__enter__()

        def close(self):
            if self.cur is not None:
                self.cur.__exit__(None, None, None)
                self.cur = None

        def on_train_begin(self, args, state, control, **kw):
            self.open("inputs::1::1")

        def on_step_begin(self, args, state, control, **kw):
            self.open(f"forward::{state.global_step + 1}::1")

        def on_pre_optimizer_step(self, args, state, control, **kw):
            self.open(f"optimizer::{state.global_step + 1}::1")

        def on_optimizer_step(self, args, state, control, **kw):
            self.open(f"zero_grad::{state.global_step + 1}::1")

        def on_step_end(self, args, state, control, **kw):
            self.open(f"inputs::{state.global_step + 1}::1")

        def on_train_end(self, args, state, control, **kw):
            self.close()

    ranges = Ranges()
    with tempfile.TemporaryDirectory() as d:
        args = TrainingArguments(**trainer_args(prec, gc, d))
        with memory_profile() as prof:
            model = AutoModelForCausalLM.from_config(cfg)
            if method != "full":
                from peft import get_peft_config, get_peft_model

                model = get_peft_model(model, get_peft_config(lora_config(method)))
            Trainer(model=model, args=args, train_dataset=Tokens(), callbacks=[ranges]).train()
            ranges.close()
    m = ledger(prof, STEPS)
    return {"peak_allocated_bytes": m.peak_allocated_bytes, "phase_peaks": m.phase_peaks,
            "ledger_check_bytes": m.ledger_check_bytes}


def estimate(case: str, tmp: Path) -> dict:
    """memplan's estimate through the CLI."""
    _, method, prec, gc = next(c for c in cases() if c[0] == case)
    args = tmp / f"{case}.trainer_args.json"
    args.write_text(json.dumps(trainer_args(prec, gc, str(tmp / "out"))))
    cmd = [sys.executable, "-m", "memplan", "analyze", "--hf-config", str(CONFIG), "--train-config", str(args),
           "--seq-len", str(SEQ), "--format", "json", "-q"]
    if method == "lora-qv":
        cmd += ["--lora", "r=8,alpha=16,dropout=0.05,target=q_proj+v_proj"]
    elif method == "lora-all":
        adapter = tmp / "adapter_config.json"
        adapter.write_text(json.dumps(lora_config(method)))
        cmd += ["--peft-config", str(adapter)]
    res = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=900)
    if res.returncode not in (0, 1):
        raise RuntimeError(f"{case}: memplan failed: {res.stderr.strip()[-500:]}")
    d = json.loads(res.stdout)
    return {"peak_allocated_bytes": d["peak_allocated_bytes"], "peak_phase": d["peak_phase"],
            "breakdown_at_peak": d["breakdown_at_peak"], "command": " ".join(cmd[1:]).replace(str(ROOT) + "/", "")}


def _env() -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRANSFORMERS_VERBOSITY="error", PYTHONWARNINGS="ignore")
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--truth", default=None, help=argparse.SUPPRESS)   # internal: run one real case
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "lora_trainer_cpu"))
    a = ap.parse_args(argv)
    if a.truth:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(truth(a.truth)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, method, prec, gc in cases():
            if a.only and case not in a.only:
                continue
            t0 = time.perf_counter()
            real = subprocess.run([sys.executable, __file__, "--truth", case], capture_output=True, text=True,
                                  env=_env(), timeout=900)
            if real.returncode:
                raise RuntimeError(f"{case}: the real Trainer run failed: {real.stderr.strip()[-800:]}")
            m = json.loads(real.stdout.strip().splitlines()[-1])
            e = estimate(case, Path(tmp))
            err = 100.0 * (e["peak_allocated_bytes"] - m["peak_allocated_bytes"]) / m["peak_allocated_bytes"]
            rows.append({"case": case, "method": method, "precision": "bf16-amp" if prec == "bf16" else "fp32",
                         "gradient_checkpointing": gc, "predicted_bytes": e["peak_allocated_bytes"],
                         "measured_bytes": m["peak_allocated_bytes"], "error_pct": round(err, 4),
                         "predicted_phase": e["peak_phase"], "breakdown_at_peak": e["breakdown_at_peak"],
                         "measured_phase_peaks": m["phase_peaks"], "ledger_check_bytes": m["ledger_check_bytes"],
                         "memplan_command": e["command"], "seconds": round(time.perf_counter() - t0, 1)})
            print(f"{case:22s} predicted {e['peak_allocated_bytes']:>12,d}  measured {m['peak_allocated_bytes']:>12,d}"
                  f"  error {err:+.4f} %  ({rows[-1]['seconds']} s)", flush=True)
    write(rows, a.out)
    return 0 if all(abs(r["error_pct"]) <= 0.5 for r in rows) else 1


def write(rows: list, out: str) -> None:
    import peft
    import torch
    import transformers

    from memplan import __version__

    meta = {"benchmark": "lora_trainer_cpu", "memplan_version": __version__, "torch": torch.__version__,
            "transformers": transformers.__version__, "peft": peft.__version__,
            "python": platform.python_version(), "config": str(CONFIG.relative_to(ROOT)), "batch_size": BATCH,
            "seq_len": SEQ, "steps": STEPS, "tolerance_pct": 0.5,
            "max_abs_error_pct": max((abs(r["error_pct"]) for r in rows), default=None), "rows": rows}
    Path(out + ".json").write_text(json.dumps(meta, indent=1) + "\n")
    Path(out + ".md").write_text(_markdown(meta))


def _markdown(meta: dict) -> str:
    mib = 1024 * 1024
    lines = [f"# LoRA / full fine-tuning with the HF Trainer on CPU: estimate vs real run",
             "",
             f"`python benchmarks/lora_trainer_cpu.py` · memplan {meta['memplan_version']} · torch {meta['torch']} · "
             f"transformers {meta['transformers']} · peft {meta['peft']} · {meta['config']}, batch {meta['batch_size']}, "
             f"seq {meta['seq_len']}, {meta['steps']} optimizer steps (Trainer defaults: adamw_torch_fused, "
             "max_grad_norm 1.0). Measured: the Trainer's own run under PyTorch's CPU allocator accounting. "
             f"Largest |error|: {meta['max_abs_error_pct']} % (tolerance {meta['tolerance_pct']} %).",
             "",
             "| precision | checkpointing | method | predicted MiB | measured MiB | error % | trainable grads+optimizer MiB |",
             "|---|---|---|---|---|---|---|"]
    order = {m: i for i, m in enumerate(METHODS)}
    for r in sorted(meta["rows"], key=lambda r: (r["precision"], r["gradient_checkpointing"], order[r["method"]])):
        b = r["breakdown_at_peak"]
        lines.append(f"| {r['precision']} | {'on' if r['gradient_checkpointing'] else 'off'} | {r['method']} | "
                     f"{r['predicted_bytes'] / mib:.2f} | {r['measured_bytes'] / mib:.2f} | {r['error_pct']:+.4f} | "
                     f"{(b.get('gradients', 0) + b.get('optimizer_state', 0)) / mib:.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
