"""Device kernel rules: memory real kernels use that fake kernels do not show."""
import pytest
import torch

from memplan import api
from memplan.measure.cpu import measure_cpu
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



MASKED_SDPA = '''
import torch
import torch.nn.functional as F

LEARNED_BIAS = {bias!r}


class Attn(torch.nn.Module):
    def __init__(self, d=32, heads=4, t=96):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)
        self.bias = torch.nn.Parameter(torch.zeros(1, heads, t, t)) if LEARNED_BIAS else None

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        # a boolean mask: the CPU's flash kernel; a mask that needs a gradient: the math path, whose
        # softmax is aten._safe_softmax
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.bias if LEARNED_BIAS else mask)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


def build_model():
    return Attn()


def make_batch(batch_size):
    mask = torch.ones(batch_size, 1, 96, 96, dtype=torch.bool).tril()
    return torch.randn(batch_size, 96, 32), mask
'''


@pytest.mark.parametrize("bias", [False, True], ids=["flash-bool-mask", "math-learned-bias"])
def test_cpu_attention_temporaries(write_model, bias):
    # the CPU flash kernel's per-thread buffers (forward and backward); the math path's _safe_softmax
    # makes a score-sized boolean mask (isneginf), its row reduction and a 0-dim zero
    wl = load_model_file(write_model(MASKED_SDPA.format(bias=bias)))
    cfg = TrainConfig(batch_size=2)
    est = api.analyze(wl, config=cfg)
    meas = measure_cpu(wl, cfg)
    for phase in ("forward", "backward"):
        assert est.phase_peaks[phase] == meas.phase_peaks[phase], (phase, est.phase_peaks, meas.phase_peaks)
    assert est.peak_allocated_bytes == meas.peak_allocated_bytes


REPEAT = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)

    def forward(self, x):
        ids = torch.arange(4096).repeat(x.shape[0], 3)   # TAPAS-style index grid, made at the peak
        return self.a(x).sum() + ids.sum()

def build_model():
    return Net()

def make_batch(batch_size):
    return torch.randn(batch_size, 8)

def loss_fn(out, batch):
    return out
'''


def test_cpu_repeat_host_buffers(phase_peaks):
    # repeat's copy into the unfolded result allocates small host buffers while the result is live
    est, real = phase_peaks(REPEAT, batch_size=2)
    assert est["forward"] == real["forward"]


BATCH_NORM = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(1, 16, 1, 1))
        self.bn = torch.nn.BatchNorm2d(16)

    def forward(self, x):
        return (self.bn(x * self.w) * 2).sum()   # the backward peak is inside native_batch_norm_backward

def build_model():
    return Net()

def make_batch(batch_size):
    return torch.randn(batch_size, 16, 32, 32)

def loss_fn(out, batch):
    return out
'''


def test_cpu_batch_norm_backward_transient(phase_peaks):
    # contiguous inputs: the CPU kernel allocates grad_input twice and frees the first on return
    # (ResNet's backward peak was 512 B under its real run)
    est, real = phase_peaks(BATCH_NORM, batch_size=2)
    assert est == real


REDUCTIONS = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)

    def forward(self, x):
        return self.a(x).pow(2).{op}()   # bf16 under autocast; the forward peak is inside the reduction

def build_model():
    return Net()

def make_batch(batch_size):
    return torch.randn(batch_size, 256, 64)

def loss_fn(out, batch):
    return out
'''


@pytest.mark.parametrize("op, precision", [("sum", "fp32"), ("mean", "fp32"), ("mean", "bf16-amp")])
def test_cpu_reduction_temporaries(phase_peaks, op, precision):
    # a reduction split over threads keeps a partial result per thread; mean divides by a wrapped count
    # and, for bf16, sums a float copy of its whole input (128 KiB here, missed before)
    est, real = phase_peaks(REDUCTIONS.format(op=op), batch_size=2, precision=precision)
    assert est == real


EXPANDED_GRAD = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(256, 256)

    def forward(self, x):
        return self.a(x).sum()   # the linear's gradient is sum's expanded one: strides 0

def build_model():
    return Net()

def make_batch(batch_size):
    return torch.randn(batch_size, 128, 256, requires_grad=True)

def loss_fn(out, batch):
    return out
'''


def test_cpu_gemm_clones_an_expanded_gradient(phase_peaks):
    # BLAS cannot read a stride-0 matrix: both backward GEMMs of the linear clone the gradient first
    # (a 3-d linear whose output is summed was 255 KiB under its real run in backward)
    est, real = phase_peaks(EXPANDED_GRAD, batch_size=2)
    assert est == real


def test_a_kernel_that_refuses_the_fake_arguments_is_not_measured():
    # bf16 batch norm: the fake saved statistics have the input's dtype, the real kernel wants float
    x = torch.zeros(2, 4, 3, 3, dtype=torch.bfloat16)
    w = torch.zeros(4)
    stats = torch.zeros(4, dtype=torch.bfloat16)
    args = (x, x, w, w, w, stats, stats, True, 1e-5, [True, True, True])
    assert kernels.measure_cpu_scratch(torch.ops.aten.native_batch_norm_backward.default, args, {}, (x, w, w)) is None
