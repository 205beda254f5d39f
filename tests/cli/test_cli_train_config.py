"""`memplan analyze --train-config / --lora / --peft-config`: the mapping is printed, bad input exits 2."""
import json

import pytest
from click.testing import CliRunner

from memplan.cli.main import cli

TINY = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 512, "hidden_size": 64,
        "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
        "max_position_embeddings": 256, "tie_word_embeddings": False}


@pytest.fixture
def model_dir(tmp_path):
    d = tmp_path / "tiny-llama"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(TINY))
    return d


def run(*args):
    return CliRunner().invoke(cli, ["analyze", *map(str, args)], catch_exceptions=False)


def test_unknown_key_is_one_line_exit_2(tmp_path, model_dir):
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"per_device_train_batchsize": 2}))
    res = run("--hf-config", model_dir, "--train-config", args)
    assert res.exit_code == 2
    assert res.stderr.strip().count("\n") == 0 and "per_device_train_batchsize" in res.stderr


def test_bad_lora_option_exit_2(model_dir):
    res = run("--hf-config", model_dir, "--lora", "rank=8,alpah=16")
    assert res.exit_code == 2 and "unknown key 'alpah'" in res.stderr


def test_trainer_args_mapping_printed_and_in_json(tmp_path, model_dir):
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"output_dir": "o", "per_device_train_batch_size": 2, "max_steps": 3}))
    res = run("--hf-config", model_dir, "--train-config", args, "--seq-len", 32, "-q")
    assert res.exit_code == 0, res.output
    assert "as trainer-args" in res.stdout and "max_steps" in res.stdout
    res = run("--hf-config", model_dir, "--train-config", args, "--seq-len", 32, "-b", 1, "-q", "--format", "json")
    d = json.loads(res.stdout)
    assert d["config"]["batch_size"] == 1                          # an explicit option overrides the file
    assert d["config"]["optimizer_impl"] == "fused" and d["config"]["clip_grad_norm"] == 1.0
    assert {r["key"] for r in d["train_config"]["ignored"]} == {"output_dir", "max_steps"}


def test_lora_trains_adapters_only(tmp_path, model_dir):
    pytest.importorskip("peft", reason="peft is not installed (pip install 'memplan[peft]')")
    full = json.loads(run("--hf-config", model_dir, "--seq-len", 32, "-q", "--format", "json").stdout)
    lora = json.loads(run("--hf-config", model_dir, "--seq-len", 32, "-q", "--format", "json",
                          "--lora", "r=4,alpha=8,target=all-linear").stdout)
    adapter = tmp_path / "adapter_config.json"
    adapter.write_text(json.dumps({"peft_type": "LORA", "r": 4, "lora_alpha": 8, "target_modules": "all-linear",
                                   "task_type": "CAUSAL_LM"}))
    same = json.loads(run("--hf-config", model_dir, "--seq-len", 32, "-q", "--format", "json",
                          "--peft-config", adapter).stdout)
    assert lora["peak_allocated_bytes"] < full["peak_allocated_bytes"]
    assert same["peak_allocated_bytes"] == lora["peak_allocated_bytes"]
    # 2 layers x 7 linears, r=4: A (4 x in) + B (out x 4) fp32; AdamW: 2 moments + a step scalar per tensor
    linears = [(64, 64)] * 4 + [(64, 128), (64, 128), (128, 64)]
    adapter_bytes = 2 * sum(4 * (i + o) for i, o in linears) * 4
    assert lora["breakdown_at_peak"]["optimizer_state"] in (0, 2 * adapter_bytes + 2 * 14 * 4)


def test_lf_model_by_directory(tmp_path, model_dir):
    pytest.importorskip("peft", reason="peft is not installed (pip install 'memplan[peft]')")
    lf = tmp_path / "lf.json"
    lf.write_text(json.dumps({"model_name_or_path": str(model_dir), "finetuning_type": "lora", "lora_rank": 4,
                              "cutoff_len": 32, "per_device_train_batch_size": 1, "disable_gradient_checkpointing": True}))
    res = run("--train-config", lf, "-q", "--format", "json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["config"]["seq_len"] == 32 and d["train_config"]["format"] == "llamafactory"


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["trainer-args", "llamafactory"])
def test_plan_written_back_as_config_keys(tmp_path, model_dir, fmt):
    res = CliRunner().invoke(cli, ["plan", "--hf-config", str(model_dir), "--seq-len", "32", "--capacity", "64MiB",
                                   "--fast", "-q", "--format", fmt], catch_exceptions=False)
    assert res.exit_code in (0, 1), res.output
    text = res.stdout
    if fmt == "trainer-args":
        keys = json.loads(text)
        assert keys["gradient_checkpointing"] in (True, False) and keys["optim"]
    else:
        yaml = pytest.importorskip("yaml", reason="pyyaml is not installed")
        keys = yaml.safe_load(text)
        assert "disable_gradient_checkpointing" in keys and keys["cutoff_len"] == 32
    assert keys["per_device_train_batch_size"] >= 1
