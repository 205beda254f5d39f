"""memplan.finetune: LoRA option parsing, PEFT configs, the 8-bit AdamW state model (no peft needed)."""
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
