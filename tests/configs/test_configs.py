"""Training config readers: TrainingArguments, LLaMA-Factory YAML, DeepSpeed JSON (pure parsing)."""
import json
import sys

import pytest

from memplan.configs import detect_format, read_deepspeed, read_train_config
from memplan.errors import UserError


def write(tmp_path, name, data):
    p = tmp_path / name
    if name.endswith(".json"):
        p.write_text(json.dumps(data))
    else:
        yaml = pytest.importorskip("yaml", reason="pyyaml is not installed")
        p.write_text(yaml.safe_dump(data))
    return str(p)


LF = {"model_name_or_path": "Qwen/Qwen3-4B-Instruct-2507", "trust_remote_code": True, "stage": "sft",
      "do_train": True, "finetuning_type": "lora", "lora_rank": 16, "lora_target": "all",
      "dataset": "identity,alpaca_en_demo", "template": "qwen3_nothink", "cutoff_len": 1024,
      "output_dir": "saves/x", "per_device_train_batch_size": 2, "gradient_accumulation_steps": 8,
      "learning_rate": 1.0e-4, "num_train_epochs": 3.0, "bf16": True, "ddp_timeout": 180000000}


def test_trainer_args_defaults_are_the_trainers(tmp_path):
    job = read_train_config(write(tmp_path, "args.json", {"output_dir": "o", "bf16": True}))
    t = job.train
    assert job.format == "trainer-args"
    assert (t.batch_size, t.grad_accum, t.precision) == (8, 1, "bf16-amp")       # Trainer's defaults
    assert (t.optimizer, t.optimizer_impl, t.clip_grad_norm) == ("adamw", "fused", 1.0)
    assert t.keep_outputs is False and job.prep.amp_outputs_fp32
    assert ("output_dir", "no effect on the memory of a training step") in job.ignored
    assert {u.key for u in job.used} >= {"per_device_train_batch_size", "optim", "max_grad_norm", "bf16"}


@pytest.mark.parametrize("optim,expect", [("adamw_torch", ("adamw", "default")), ("adafactor", ("adafactor", "default")),
                                          ("adamw_8bit", ("adamw-8bit", "default"))])
def test_trainer_optim_names(tmp_path, optim, expect):
    job = read_train_config(write(tmp_path, "a.json", {"optim": optim, "max_grad_norm": 0}))
    assert (job.train.optimizer, job.train.optimizer_impl) == expect
    assert job.train.clip_grad_norm is None


def test_trainer_checkpointing_and_fsdp(tmp_path):
    job = read_train_config(write(tmp_path, "a.json", {"gradient_checkpointing": True,
                                                       "gradient_checkpointing_kwargs": {"use_reentrant": True},
                                                       "fsdp": "full_shard auto_wrap"}))
    assert job.prep.activation_checkpointing == {"use_reentrant": True}
    assert job.sharding == "zero3"


@pytest.mark.parametrize("data,msg", [
    ({"bf16": True, "fp16": True}, "contradictory"),
    ({"per_device_train_batch_sz": 4}, "unknown key(s) for transformers TrainingArguments: per_device_train_batch_sz"),
    ({"optim": "lion_8bit"}, "not modelled"),
    ({"per_device_train_batch_size": 0}, ">= 1"),
])
def test_trainer_bad_input_is_one_clear_error(tmp_path, data, msg):
    with pytest.raises(UserError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        read_train_config(write(tmp_path, "a.json", data))


def test_llamafactory_yaml(tmp_path):
    job = read_train_config(write(tmp_path, "lf.yaml", LF))
    assert job.format == "llamafactory" and detect_format(LF) == "llamafactory"
    assert job.model == "Qwen/Qwen3-4B-Instruct-2507"
    assert (job.train.batch_size, job.train.grad_accum, job.train.seq_len) == (2, 8, 1024)
    c = job.finetune.peft_config
    assert (c["r"], c["lora_alpha"], c["target_modules"]) == (16, 32, "all-linear")   # alpha = 2 x rank
    assert job.prep.activation_checkpointing == {"use_reentrant": True}                # on by default
    assert job.prep.load_dtype == "auto" and job.prep.upcast_trainable
    assert dict(job.ignored)["template"].startswith("prompt formatting")


def test_llamafactory_full_freeze_and_contradictions(tmp_path):
    full = read_train_config(write(tmp_path, "f.json", dict(LF, finetuning_type="full",
                                                             disable_gradient_checkpointing=True, pure_bf16=True)))
    assert full.finetune.method == "full" and full.prep.activation_checkpointing is None
    assert full.train.precision == "bf16" and not full.prep.upcast_trainable
    assert ("lora_rank", "finetuning_type is full") in full.ignored
    frz = read_train_config(write(tmp_path, "z.json", dict(LF, finetuning_type="freeze", freeze_trainable_layers=1)))
    assert frz.finetune.method == "freeze" and frz.finetune.freeze_layers == 1
    with pytest.raises(UserError, match="contradictory"):
        read_train_config(write(tmp_path, "c.json", dict(LF, gradient_checkpointing=True,
                                                         disable_gradient_checkpointing=True)))
    with pytest.raises(UserError, match="unknown key"):
        read_train_config(write(tmp_path, "u.json", dict(LF, lora_rnak=8)))
    with pytest.raises(UserError, match="stage 'dpo' is not modelled"):
        read_train_config(write(tmp_path, "d.json", dict(LF, stage="dpo")))


def test_deepspeed_config(tmp_path):
    ds = read_deepspeed(write(tmp_path, "ds.json", {
        "train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"},
        "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": True},
                              "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
                              "stage3_param_persistence_threshold": "auto", "sub_group_size": 1e9}}))
    assert (ds.stage, ds.offload_optimizer, ds.offload_param, ds.overlap_comm) == (3, "cpu", None, True)
    r = ds.resolved(hidden_size=1000)
    assert (r.reduce_bucket_size, r.prefetch_bucket_size, r.param_persistence_threshold) == (10**6, 900_000, 10_000)
    assert ("zero_optimization.sub_group_size", "no modelled effect on memory") in ds.ignored
    with pytest.raises(UserError, match="offload_param needs ZeRO stage 3"):
        read_deepspeed({"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}})


def test_readers_import_no_torch():
    import subprocess

    code = ("import sys, memplan.configs, memplan.configs.build; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_hf_config_resolves_a_model_id_from_the_local_cache(tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub", reason="huggingface_hub is not installed")
    snap = tmp_path / "models--acme--tiny" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (tmp_path / "models--acme--tiny" / "refs").mkdir()
    (tmp_path / "models--acme--tiny" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_CACHE", str(tmp_path))
    from memplan.hf import resolve_config_path

    assert resolve_config_path("acme/tiny") == str(snap / "config.json")
    assert resolve_config_path(str(snap)) == str(snap / "config.json")
    with pytest.raises(UserError, match="not in the local Hugging Face cache|no config.json for model id"):
        resolve_config_path("acme/absent")


def test_plan_keys_round_trip_through_the_readers(tmp_path):
    from memplan.configs.writer import plan_keys, render
    from memplan.workload import TrainConfig

    cfg = TrainConfig(batch_size=3, seq_len=512, precision="bf16-amp", optimizer="adamw", optimizer_impl="fused")
    keys, notes = plan_keys(cfg, 3, 4, ("model.layers.*",), "trainer-args")
    text = render(keys, notes, {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, "trainer-args")
    data = json.loads(text)
    p = tmp_path / "args.json"
    p.write_text(json.dumps(data))
    job = read_train_config(str(p))
    assert (job.train.batch_size, job.train.grad_accum, job.train.precision) == (3, 4, "bf16-amp")
    assert job.train.optimizer_impl == "fused" and job.prep.activation_checkpointing == {}
    keys, _ = plan_keys(cfg.with_(precision="bf16"), 3, 1, (), "llamafactory")
    assert keys["pure_bf16"] is True and keys["disable_gradient_checkpointing"] is True and keys["cutoff_len"] == 512
