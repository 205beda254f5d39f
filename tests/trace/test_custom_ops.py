"""Custom ops without fake kernels: the user's own (model file), memplan's shipped ones (torch_npu
names), and the run-on-zeros last resort."""
import torch

from memplan.trace.analysis import summarize
from memplan.trace.tracer import trace_workload
from memplan.workload import TrainConfig, load_model_file

USER_OP = '''
import torch

@torch.library.custom_op("memplan_cov::fused_scale", mutates_args=())
def fused_scale(x: torch.Tensor, s: float) -> torch.Tensor:
    return x * s          # stands for a fused C++/CUDA kernel: no fake kernel registered

fused_scale.register_autograd(lambda ctx, g: (g * ctx.s, None),
                              setup_context=lambda ctx, inputs, output: setattr(ctx, "s", inputs[1]))

def _fake_fused_scale(x, s):
    return torch.empty_like(x)

MEMPLAN_FAKE_KERNELS = {"memplan_cov::fused_scale": _fake_fused_scale}

class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
    def forward(self, x):
        return torch.ops.memplan_cov.fused_scale(self.lin(x), 2.0)

def build_model():
    return M()

def make_batch(b):
    return torch.randn(b, 16)
'''


def test_user_fake_kernel_from_the_model_file(write_model):
    wl = load_model_file(write_model(USER_OP, "user_op.py"))
    tr = trace_workload(wl, TrainConfig(batch_size=4))
    assert any("memplan_cov::fused_scale" in n and "fake kernels" in n for n in tr.notes), tr.notes
    assert summarize(tr).peak_allocated_bytes > 0


def _define_npu_rms_norm():
    """Stand-in for torch_npu's op (same schema, a CPU kernel, no fake kernel)."""
    if hasattr(torch.ops, "npu") and hasattr(torch.ops.npu, "npu_rms_norm"):
        return
    lib = torch.library.Library("npu", "FRAGMENT")
    lib.define("npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)")

    def cpu(x, g, eps=1e-6):
        rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
        return (x * rstd * g).to(x.dtype), rstd
    lib.impl("npu_rms_norm", cpu, "CPU")
    _define_npu_rms_norm.lib = lib   # keep the registration alive


def test_shipped_npu_kernel_is_used_when_the_op_exists():
    _define_npu_rms_norm()

    class Norm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.g = torch.nn.Parameter(torch.ones(32))
            self.lin = torch.nn.Linear(32, 32)

        def forward(self, x):
            with torch.no_grad():
                y, rstd = torch.ops.npu.npu_rms_norm(x, self.g)
            assert rstd.shape == (*x.shape[:-1], 1) and rstd.dtype == torch.float32
            return self.lin(y)

    from memplan.workload import Workload
    tr = trace_workload(Workload("npu", Norm, lambda b: torch.randn(b, 8, 32)), TrainConfig(batch_size=2))
    assert any("npu::npu_rms_norm" in n for n in tr.notes), tr.notes


def test_op_without_any_fake_kernel_runs_on_zeros_and_says_so():
    @torch.library.custom_op("memplan_cov2::double", mutates_args=())
    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    double.register_autograd(lambda ctx, g: g * 2)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, x):
            return torch.ops.memplan_cov2.double(self.lin(x))

    from memplan.workload import Workload
    tr = trace_workload(Workload("z", M, lambda b: torch.randn(b, 8)), TrainConfig(batch_size=2))
    assert any("zero-filled" in n and "memplan_cov2::double" in n for n in tr.notes), tr.notes
