"""What the trace says about a model whose numbers can be worked out by hand."""
from pathlib import Path

import torch

from memplan import api
from memplan.trace.tracer import trace_workload
from memplan.workload import TrainConfig, load_model_file

# fixtures/models/mlp.py: Linear(512, 2048), 2 x Linear(2048, 2048), Linear(2048, 100), fp32
PARAMS = (512 * 2048 + 2048) + 2 * (2048 * 2048 + 2048) + (2048 * 100 + 100)
PARAM_BYTES = 4 * PARAMS


def test_mlp_breakdown_by_hand(model_path):
    est = api.analyze(load_model_file(model_path("mlp")), config=TrainConfig(batch_size=8))
    b = est.breakdown_at_peak
    # the peak is in AdamW's step: parameters, gradients and both moments are all live
    assert est.peak_phase == "optimizer"
    assert b["parameters"] == PARAM_BYTES
    assert b["gradients"] == PARAM_BYTES
    # exp_avg + exp_avg_sq (fp32, like the parameter) + a 4-byte step counter per parameter tensor
    assert b["optimizer_state"] == 2 * PARAM_BYTES + 8 * 4
    # CPU default AdamW is the for-loop one: its scratch is 2 tensors of the largest parameter
    assert b["temporaries"] >= 2 * 4 * 2048 * 2048
    assert b["inputs"] == 8 * 512 * 4 + 8 * 8
    assert sum(b.values()) == est.peak_allocated_bytes


def test_frozen_parameters_get_no_gradients_or_state(model_path):
    wl = load_model_file(model_path("frozen_backbone"))
    model = wl.build_model()
    trainable = sum(p.numel() * 4 for p in model.parameters() if p.requires_grad)
    est = api.analyze(wl, config=TrainConfig(batch_size=2, seq_len=16))
    rows = {m["module"]: m for m in est.modules}
    assert not any(r["by_category"].get("gradients") for n, r in rows.items() if n.startswith("layers.0."))
    trace = trace_workload(wl, TrainConfig(batch_size=2, seq_len=16))
    grads = {s.nbytes for s in trace.storages if s.category == "gradients" and s.step == 2}
    total_grad = sum(s.nbytes for s in trace.storages if s.category == "gradients" and s.step == 2)
    assert total_grad == trainable and grads


def test_first_step_is_not_the_steady_state(model_path):
    est = api.analyze(load_model_file(model_path("gpt2")), config=TrainConfig(batch_size=1, seq_len=32))
    assert est.peak_allocated_bytes >= est.first_step_peak_bytes
    assert set(est.phase_peaks) >= {"forward", "backward", "optimizer"}


def test_checkpointing_saves_activations(model_path):
    wl = load_model_file(model_path("llama_gqa"))
    plain = api.analyze(wl, config=TrainConfig(batch_size=2, seq_len=128))
    ckpt = api.analyze(wl, config=TrainConfig(batch_size=2, seq_len=128, checkpoint=("layers.*",)))
    assert ckpt.phase_peaks["forward"] < plain.phase_peaks["forward"]


def test_foreach_scratch_is_larger_than_for_loop(model_path):
    wl = load_model_file(model_path("mlp"))
    loop = api.analyze(wl, config=TrainConfig(batch_size=2, optimizer_impl="for-loop"))
    foreach = api.analyze(wl, config=TrainConfig(batch_size=2, optimizer_impl="foreach"))
    fused = api.analyze(wl, config=TrainConfig(batch_size=2, optimizer_impl="fused"))
    assert foreach.phase_peaks["optimizer"] > loop.phase_peaks["optimizer"] > fused.phase_peaks["optimizer"]


def test_user_train_step_is_honoured(model_path):
    est = api.analyze(load_model_file(model_path("custom_step")), config=TrainConfig(batch_size=4))
    # SGD with momentum: one buffer per parameter, no Adam moments
    model = load_model_file(model_path("custom_step")).build_model()
    pbytes = sum(p.numel() * 4 for p in model.parameters())
    assert est.breakdown_at_peak["optimizer_state"] in (0, pbytes)
    assert "step" in est.phase_peaks


def test_trace_uses_no_real_memory(model_path, tmp_path):
    # the decoder_1b fixture's blocks at width 4096 and 5 layers (~1.1B parameters), batch 32, seq 512: far
    # beyond this machine's memory, traced in seconds (its 22 layers of width 2048 take longer, to the same end)
    src = Path(model_path("decoder_1b")).read_text()
    line = "DIM, LAYERS, HEADS, KV_HEADS, VOCAB, FFN = 2048, 22, 32, 4, 32000, 5632"
    assert line in src
    wide = tmp_path / "decoder_wide.py"
    wide.write_text(src.replace(line, "DIM, LAYERS, HEADS, KV_HEADS, VOCAB, FFN = 4096, 5, 32, 4, 32000, 11008"))
    est = api.analyze(load_model_file(str(wide)),
                      config=TrainConfig(batch_size=32, seq_len=512, precision="bf16-amp"))
    assert est.peak_allocated_bytes > 24 * 2**30
    assert est.breakdown_at_peak["parameters"] > 4 * 10**9


def test_hf_config_workload():
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    est = api.analyze(hf_config=os.path.join(root, "fixtures/hf/qwen2-0.5b.json"),
                      config=TrainConfig(batch_size=1, seq_len=64, precision="bf16-amp"))
    # Qwen2-0.5B: ~494M parameters (tied embeddings), fp32 master weights under AMP
    assert 480e6 * 4 < est.breakdown_at_peak["parameters"] < 510e6 * 4
    assert torch is not None
