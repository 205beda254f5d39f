"""Device kernel rules: memory real kernels use that fake kernels do not show."""
import pytest
import torch

from memplan import api
from memplan.trace import kernels
from memplan.workload import TrainConfig, load_model_file


def test_registry_refuses_duplicates():
    with pytest.raises(ValueError, match="already registered"):
        kernels.register(torch.ops.aten.mm.default, ("cpu",), source="test")(lambda a, k, o: [])


def test_every_rule_names_its_source():
    for rule in kernels.all_rules():
        assert rule.source and rule.families


def test_cublas_workspace_depends_on_architecture(model_path):
    wl = load_model_file(model_path("mlp"))
    cfg = TrainConfig(batch_size=2)
    a100 = api.analyze(wl, config=cfg, device="A100-80GB")
    h100 = api.analyze(wl, config=cfg, device="H100")
    assert h100.peak_allocated_bytes - a100.peak_allocated_bytes == (
        kernels.CUBLAS_WORKSPACE_BYTES_SM90 - kernels.CUBLAS_WORKSPACE_BYTES)
    cpu = api.analyze(wl, config=cfg)
    # the workspace is held from the first GEMM on; the CPU target has none, the optimizer scratch differs
    assert a100.breakdown_at_peak["temporaries"] != cpu.breakdown_at_peak["temporaries"]


def test_gpu_attention_kernel_saves_less_than_math(model_path):
    # GPT-2 trains with attention dropout: the CPU runs the math path (full attention matrices saved),
    # a GPU the memory-efficient / flash kernels (output + logsumexp)
    wl = load_model_file(model_path("gpt2"))
    cfg = TrainConfig(batch_size=2, seq_len=256)
    cpu = api.analyze(wl, config=cfg)
    gpu = api.analyze(wl, config=cfg, device="A100-80GB")
    assert gpu.breakdown_at_peak["activations"] < cpu.breakdown_at_peak["activations"]
    # 6 layers x 12 heads x 256 x 256 fp32 probabilities (+ dropout masks) no longer saved
    assert cpu.breakdown_at_peak["activations"] - gpu.breakdown_at_peak["activations"] >= 6 * 2 * 12 * 256 * 256 * 4


def test_sdpa_backend_choice():
    q = torch.empty(1, 8, 16, 64, dtype=torch.bfloat16, device="meta")
    assert kernels._sdpa_backend(q, q, q, None, 0.1, True, "cuda") == "flash"
    assert kernels._sdpa_backend(q.float(), q, q, None, 0.0, True, "cuda") == "efficient"
    mask = torch.empty(16, 16, dtype=torch.bool, device="meta")
    assert kernels._sdpa_backend(q, q, q, mask, 0.0, False, "cuda") == "efficient"
    big = torch.empty(1, 8, 16, 512, dtype=torch.bfloat16, device="meta")
    assert kernels._sdpa_backend(big, big, big, None, 0.0, False, "cuda") == "math"


@pytest.mark.skipif(not kernels._cpu_has_onednn_bf16(), reason="host CPU has no oneDNN bf16 GEMM")
def test_onednn_copies_expanded_bf16_inputs():
    a = torch.empty(4, 64, 64, dtype=torch.bfloat16)
    w = torch.empty(64, 64, dtype=torch.bfloat16).expand(4, 64, 64)  # batch stride 0: oneDNN copies it
    assert kernels._onednn_matmul_copies(a, w) == [4 * 64 * 64 * 2]
    assert kernels._onednn_matmul_copies(a, a) == []
    assert kernels._onednn_matmul_copies(a.float(), a.float()) == []  # fp32 does not go to oneDNN
