"""memplan.finetune (LoRA options, PEFT configs, PEFT models under the tracer) and memplan.optim8bit."""
import json

import pytest

from memplan.errors import UserError
from memplan.finetune import parse_lora_option, read_peft_config


def test_lora_option_forms():
    assert parse_lora_option("16").peft_config["r"] == 16
    c = parse_lora_option("r=4,alpha=8,dropout=0.1,target=all-linear").peft_config
    assert (c["r"], c["lora_alpha"], c["lora_dropout"], c["target_modules"]) == (4, 8.0, 0.1, "all-linear")
    assert parse_lora_option("target=q_proj+k_proj").peft_config["target_modules"] == ["q_proj", "k_proj"]
    for bad in ("r=0", "dropout=1.5", "rank=x", "8,alpha"):
        with pytest.raises(UserError):
            parse_lora_option(bad)


def test_peft_config_file(tmp_path):
    (tmp_path / "adapter_config.json").write_text(json.dumps(
        {"peft_type": "IA3", "target_modules": ["k_proj"], "base_model_name_or_path": "x", "inference_mode": True}))
    spec = read_peft_config(str(tmp_path))
    assert spec.method == "peft" and "base_model_name_or_path" not in spec.peft_config
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(UserError, match="peft_type"):
        read_peft_config(str(tmp_path / "bad.json"))


def test_adamw_8bit_state_is_bitsandbytes_block_wise_layout():
    import torch

    from memplan.optim8bit import AdamW8bitStateModel

    big, small = torch.nn.Parameter(torch.zeros(100, 100)), torch.nn.Parameter(torch.zeros(10))
    opt = AdamW8bitStateModel([big, small])
    big.grad, small.grad = torch.ones_like(big), torch.ones_like(small)
    opt.step()
    s = opt.state[big]
    assert s["state1"].dtype == torch.uint8 and s["state1"].shape == big.shape
    assert s["absmax1"].numel() == 40                 # ceil(10000 / 256)
    assert opt.state[small]["state1"].dtype == torch.float32   # under min_8bit_size: 32-bit state

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
    pytest.importorskip("peft", reason="peft is not installed (pip install 'memplan[peft]')")
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


def test_prepared_workloads_are_not_rebuilt_from_their_hf_config():
    """Block-once tracing rebuilds HF workloads from the config: a LoRA workload must be traced in full."""
    from memplan.finetune import lora_spec, prepare
    from memplan.workload import Workload

    wl = Workload(name="x", build_model=lambda: None, make_batch=lambda b: None,
                  extra={"hf_config": object(), "hf_model_class": object, "kind": "lm"})
    out = prepare(wl, lora_spec(8))
    assert "hf_config" not in out.extra and "hf_model_class" not in out.extra
    assert out.extra["base_hf_config"] is wl.extra["hf_config"]
