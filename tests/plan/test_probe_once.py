"""The module probe written from 1-, 2- and 3-layer probes (memplan.plan.probe_once) equals the probe of
the full model: the same module names in the same order and the same row for every module."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from memplan.hf import load_hf_config
from memplan.plan import checkpoint_probe, probe_once
from memplan.trace import blocks
from memplan.workload import TrainConfig

HF = Path(__file__).resolve().parents[2] / "fixtures" / "hf"


def _config(tmp_path, name: str, **changes) -> str:
    cfg = json.loads((HF / name).read_text())
    cfg.update(changes)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return str(path)


@pytest.mark.parametrize("name,changes,precision", [
    ("gpt2.json", {"n_layer": 6}, "fp32"),
    ("llama_small.json", {"num_hidden_layers": 6, "hidden_size": 64, "intermediate_size": 128,
                          "vocab_size": 256}, "bf16-amp"),
])
def test_probe_from_shallow_probes_is_the_full_probe(tmp_path, monkeypatch, name, changes, precision):
    monkeypatch.setattr(blocks, "MIN_LAYERS", 4)
    workload = load_hf_config(_config(tmp_path, name, **changes))
    cfg = TrainConfig(batch_size=1, seq_len=16, precision=precision).validate()
    full = checkpoint_probe.probe_modules(workload, cfg, "npu")
    depths = []
    real = probe_once.probe_modules
    monkeypatch.setattr(probe_once, "probe_modules",
                        lambda wl, c, f: depths.append(wl.extra["hf_config"].num_hidden_layers) or real(wl, c, f))
    fast = probe_once.probe_block_once(workload, cfg, "npu")
    assert depths == [1, 2, 3]
    assert fast == full
    assert len(fast.names) == len(full.names) and fast.forward_flops == full.forward_flops


def test_few_layers_probe_the_full_model(tmp_path):
    workload = load_hf_config(_config(tmp_path, "gpt2.json", n_layer=3))
    cfg = TrainConfig(batch_size=1, seq_len=16).validate()
    assert probe_once.probe_block_once(workload, cfg) == checkpoint_probe.probe_modules(workload, cfg)
