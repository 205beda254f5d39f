"""plan/advice.py: a plan's configuration as TrainConfig edits, and 'what would fit' as a modelled Change."""
from __future__ import annotations

from memplan.plan.advice import _what_would_fit, config_edits
from memplan.workload import TrainConfig


def test_config_edits_keep_the_real_accumulation():
    cfg = TrainConfig(batch_size=8, grad_accum=1)
    traced = cfg.with_(batch_size=2, grad_accum=2)         # a plan traces at most 2 micro-steps
    assert config_edits(cfg, traced, 4) == {"batch_size": 2, "grad_accum": 4}
    assert config_edits(cfg.with_(grad_accum=4), traced, 4) == {"batch_size": 2}
    assert config_edits(cfg, cfg.with_(precision="bf16-amp"), 1) == {"precision": "bf16-amp"}


def test_what_would_fit():
    shard = {"devices": 4, "per_rank_bytes": 100, "method": "approximate ZeRO-3", "how": "..."}
    c = _what_would_fit({"sharding": shard, "bigger_devices": []}, 300)
    assert c.kind == "sharding" and c.method == "model" and c.saving_bytes == 200 and "4 devices" in c.title
    big = {"sharding": None, "lowest_traced_total_bytes": 250, "note": "",
           "bigger_devices": [{"device": "A100-80GB", "family": "cuda", "capacity_bytes": 80 << 30}]}
    c = _what_would_fit(big, 300)
    assert c.kind == "device" and "A100-80GB" in c.title and c.predicted_total_bytes == 250
    assert _what_would_fit({}, 300) is None
