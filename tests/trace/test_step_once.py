"""Step-once (memplan.trace.step_once): step 2's forward and backward written from step 1's recording
give the trace of running step 2 in full -- every record, event, mark and note -- or step 2 runs in full
and the trace says why."""
from __future__ import annotations

from pathlib import Path

import pytest

from memplan.core.analyze import run_analysis
from memplan.trace import blocks, step_once
from memplan.trace.blocks import same_trace

ROOT = Path(__file__).resolve().parents[2]
HF = ROOT / "fixtures" / "hf"
MODELS = ROOT / "fixtures" / "models"
_EST_FIELDS = ("peak_allocated_bytes", "peak_reserved_bytes", "peak_phase", "peak_step", "breakdown_at_peak",
               "phase_peaks", "first_step_peak_bytes", "modules", "fragmentation_bytes", "n_events", "notes")


def _both(monkeypatch, device="910B3", **kw):
    """The same analysis with step-once on and off (full trace of every layer unless `full_trace` is given)."""
    kw.setdefault("full_trace", True)
    monkeypatch.setattr(step_once, "ENABLED", False)
    full = run_analysis(device=device, fallback=False, **kw)
    monkeypatch.setattr(step_once, "ENABLED", True)
    fast = run_analysis(device=device, fallback=False, **kw)
    assert same_trace(fast.trace, full.trace)
    for f in _EST_FIELDS:
        assert getattr(fast.estimate, f) == getattr(full.estimate, f), f
    assert not full.trace.step_once
    return fast.trace


@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
def test_mlp_step_two_is_written_from_step_one(monkeypatch, precision):
    tr = _both(monkeypatch, model=str(MODELS / "mlp.py"), batch_size=2, precision=precision)
    assert tr.step_once and tr.step_once_why == ""


def test_hf_decoder_checkpointed_block_once(monkeypatch):
    """Block-once's reduced traces use it too (the default path of `analyze`)."""
    monkeypatch.setattr(blocks, "MIN_LAYERS", 4)
    tr = _both(monkeypatch, hf_config=str(HF / "llama_small.json"), batch_size=1, seq_len=32,
               precision="bf16-amp", checkpoint=("model.layers.*",), full_trace=False)
    assert tr.mode == "block-once"


def _lazy_cache_model(tmp_path) -> str:
    path = tmp_path / "lazy.py"
    path.write_text(
        "import torch\n\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(16, 16)\n"
        "        self.cache = None\n\n"
        "    def forward(self, x):\n"
        "        if self.cache is None:   # made by the first forward only: step 2 differs from step 1\n"
        "            self.cache = torch.zeros(64, 64)\n"
        "        return self.lin(x)\n\n"
        "def build_model():\n    return M()\n\n"
        "def make_batch(batch_size):\n    return torch.randn(batch_size, 16)\n")
    return str(path)


def test_state_kept_by_step_one_falls_back(monkeypatch, tmp_path):
    tr = _both(monkeypatch, model=_lazy_cache_model(tmp_path), batch_size=2)
    assert not tr.step_once
    assert tr.step_once_why == "step 1's forward/backward left storages alive besides the gradients"


@pytest.mark.parametrize("kw", [dict(model=str(MODELS / "custom_step.py")), dict(model=str(MODELS / "mlp.py"),
                                                                                  grad_accum=2)])
def test_custom_step_and_accumulation_run_step_two(monkeypatch, kw):
    tr = _both(monkeypatch, batch_size=2, **kw)
    assert not tr.step_once and "default step" in tr.step_once_why


SLOW_HF = [(name, p, c) for name in sorted(p.name for p in HF.glob("*.json")) if "70b" not in name
           for p in ("fp32", "bf16-amp") for c in (False, True)]


@pytest.mark.slow
@pytest.mark.parametrize("name,precision,checkpoint", SLOW_HF)
def test_hf_configs_step_once_is_the_full_step(monkeypatch, name, precision, checkpoint):
    kw = dict(hf_config=str(HF / name), batch_size=1, seq_len=32, precision=precision)
    if checkpoint:
        kw["checkpoint"] = ("transformer.h.*",) if "gpt2" in name else ("model.layers.*",)
    tr = _both(monkeypatch, **kw)
    assert tr.step_once, tr.step_once_why


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.stem for p in MODELS.glob("*.py")))
@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
@pytest.mark.parametrize("device", [None, "910B3"])
def test_model_files_step_once_is_the_full_step(monkeypatch, name, precision, device):
    tr = _both(monkeypatch, device=device, model=str(MODELS / f"{name}.py"), batch_size=2, precision=precision)
    assert tr.step_once == (name != "custom_step"), tr.step_once_why


@pytest.mark.slow
@pytest.mark.parametrize("precision,checkpoint", [("fp32", ()), ("bf16-amp", ("model.layers.*",))])
@pytest.mark.parametrize("full_trace", [False, True])
def test_zero3_ranks_are_unchanged(monkeypatch, precision, checkpoint, full_trace):
    """`--world-size 8 --sharding zero3`: the per-rank estimates are those with step-once off."""
    from memplan.core.analyze import load_workload
    from memplan.distributed import estimate_per_rank
    from memplan.workload import TrainConfig

    workload = load_workload(hf_config=str(HF / "llama_small.json"))
    cfg = TrainConfig(batch_size=1, seq_len=16, precision=precision, checkpoint=checkpoint)
    out = []
    for on in (False, True):
        monkeypatch.setattr(step_once, "ENABLED", on)
        out.append(estimate_per_rank(workload, cfg, 8, "zero3", "910B3", full_trace=full_trace))
    off, on = out
    assert on.per_rank == off.per_rank and on.strategy_info == off.strategy_info and on.notes == off.notes
    assert (on.peak_allocated_bytes, on.peak_reserved_bytes) == (off.peak_allocated_bytes, off.peak_reserved_bytes)


def test_module_hooks_fall_back(monkeypatch, tmp_path):
    """A module hook is user code run in every step: step 2 runs in full."""
    path = tmp_path / "hooked.py"
    path.write_text(
        "import torch\n\n"
        "def build_model():\n"
        "    m = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))\n"
        "    m[0].register_forward_hook(lambda mod, args, out: None)\n"
        "    return m\n\n"
        "def make_batch(batch_size):\n    return torch.randn(batch_size, 16)\n")
    tr = _both(monkeypatch, model=str(path), batch_size=2)
    assert not tr.step_once and tr.step_once_why == "a module has forward or backward hooks"
