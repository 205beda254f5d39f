"""PEFT models under the fake-tensor tracer: they build, and the estimate equals the real CPU step."""
import pytest

pytest.importorskip("peft", reason="peft is not installed (pip install 'memplan[peft]')")

MODEL = '''
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from peft import LoraConfig, get_peft_model

def build_model():
    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128)
    return get_peft_model(LlamaForCausalLM(cfg), LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))

def make_batch(batch_size, seq_len=32):
    ids = torch.randint(0, 512, (batch_size, seq_len))
    return {"input_ids": ids, "labels": ids.clone()}
'''


def test_get_peft_model_in_a_model_file_traces_and_matches_the_real_step(tmp_path):
    from memplan.trace.tracer import trace_workload
    from memplan.trace.analysis import summarize
    from memplan.measure.cpu import measure_cpu
    from memplan.workload import TrainConfig, Workload

    path = tmp_path / "peft_model.py"
    path.write_text(MODEL)
    wl = Workload.from_file(str(path))
    cfg = TrainConfig(batch_size=2, seq_len=32)
    s = summarize(trace_workload(wl, cfg))
    assert s.breakdown_at_peak["gradients"] < 20_000           # adapters only: 4 x (64x4 + 4x64) floats
    assert s.breakdown_at_peak["optimizer_state"] <= 2 * 4 * 4 * 2 * 4 * 64 * 2 + 4096
    measured = measure_cpu(wl, cfg)
    assert abs(s.peak_allocated_bytes - measured.peak_allocated_bytes) <= 1e-4 * measured.peak_allocated_bytes
