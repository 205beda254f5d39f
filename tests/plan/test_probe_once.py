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


@pytest.mark.parametrize("name,precision", [("gpt2.json", "fp32"), ("llama_small.json", "bf16-amp")])
def test_probe_with_the_cheaper_cache_key_is_the_probe_with_torchs(tmp_path, monkeypatch, name, precision):
    """The probe's fake mode builds its dispatch-cache key the tracer's way (memplan.trace.fastkey); its
    FLOPs, sizes and order are those of a probe with torch's own key, from an empty cache either way."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from memplan.trace import fastkey

    mode = checkpoint_probe._fake_mode_class()
    assert mode._prep_args_for_hash is (fastkey._prep_args_for_hash if fastkey.supported()
                                        else FakeTensorMode._prep_args_for_hash)
    workload = load_hf_config(str(HF / name))
    cfg = TrainConfig(batch_size=2, seq_len=16, precision=precision).validate()
    FakeTensorMode.cache.clear()
    fast = checkpoint_probe.probe_modules(workload, cfg, "npu")
    with monkeypatch.context() as m:
        m.setattr(mode, "_prep_args_for_hash", FakeTensorMode._prep_args_for_hash)
        FakeTensorMode.cache.clear()
        own = checkpoint_probe.probe_modules(workload, cfg, "npu")
    assert fast == own and fast.forward_flops > 0
