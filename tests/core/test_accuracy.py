"""The estimate against PyTorch's own CPU-allocator accounting of the same real step.

Tolerance 0.5 % (the fake trace is byte-exact on these models up to a few scalar bytes)."""
import pytest

from memplan import api
from memplan.measure import measure_cpu
from memplan.workload import TrainConfig, load_model_file

TOL_PCT = 0.5

CASES = [
    ("mlp", TrainConfig(batch_size=4)),
    ("mlp", TrainConfig(batch_size=2, precision="fp16-amp", clip_grad_norm=1.0)),
    ("mlp", TrainConfig(batch_size=2, precision="bf16", optimizer="adafactor")),
    ("mlp", TrainConfig(batch_size=2, optimizer="sgd", optimizer_impl="foreach")),
    ("mlp", TrainConfig(batch_size=2, optimizer="adam", optimizer_impl="fused")),
    ("llama_gqa", TrainConfig(batch_size=1, seq_len=64, grad_accum=2)),
    ("llama_gqa", TrainConfig(batch_size=1, seq_len=64, checkpoint=("layers.*",))),
    ("bert_classifier", TrainConfig(batch_size=2, seq_len=32, precision="bf16-amp")),
    ("encoder_decoder", TrainConfig(batch_size=1, seq_len=32)),
    ("frozen_backbone", TrainConfig(batch_size=2, seq_len=32)),
    ("custom_step", TrainConfig(batch_size=8)),
    ("cnn_resnet", TrainConfig(batch_size=2)),
]


@pytest.mark.parametrize("name,cfg", CASES, ids=[f"{n}-{c.precision}-b{c.batch_size}-k{c.grad_accum}"
                                                  + ("-ckpt" if c.checkpoint else "") for n, c in CASES])
def test_estimate_matches_cpu_allocator(model_path, name, cfg):
    wl = load_model_file(model_path(name))
    est = api.analyze(wl, config=cfg)
    meas = measure_cpu(wl, cfg)
    err = 100 * (est.peak_allocated_bytes - meas.peak_allocated_bytes) / meas.peak_allocated_bytes
    assert abs(err) <= TOL_PCT, f"estimate {est.peak_allocated_bytes} vs measured {meas.peak_allocated_bytes}: {err:+.3f} %"
    assert meas.ledger_check_bytes == 0  # our running sum equals the allocator's own running total
