"""Python numbers where an op takes a tensor (`x * 0.5`) are 0-dim host tensors in a real run ("wrapped
numbers"): allocated before the op, copied to the op's dtype on the CPU, and kept by autograd until
backward when the derivative needs them (without saved-tensor hooks). On a CPU target they are counted
to the byte; on a device target they are host memory and are not."""
import pytest

from memplan.step import Target
from memplan.trace.tracer import trace_workload
from memplan.workload import TrainConfig, load_model_file

MODEL = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = 0.5 * self.a(x)              # MulBackward0 keeps the 0.5 (8 bytes) until backward
        h = h / 3 + 1                    # an int: kept by DivBackward0; `+ 1` only for the op
        h = torch.where(h > 0, h, 0.0)   # not saved
        return self.b(h).sum() * 2

def build_model():
    return Net()

def make_batch(batch_size):
    return torch.randn(batch_size, 8)

def loss_fn(out, batch):
    return out
'''


@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
def test_wrapped_numbers_counted_to_the_byte(phase_peaks, precision):
    est, real = phase_peaks(MODEL, batch_size=2, precision=precision)
    assert est == real


def test_wrapped_numbers_are_host_memory_on_device_targets(write_model):
    wl = load_model_file(write_model(MODEL))
    cfg = TrainConfig(batch_size=2)
    host = trace_workload(wl, cfg, Target())
    kept = [r for r in host.storages if r.op == "<wrapped number>"]
    assert kept and {r.nbytes for r in kept} == {8}
    assert not [r for r in trace_workload(wl, cfg, Target(family="cuda")).storages if r.op == "<wrapped number>"]


VIEW_INPLACE = """
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(8, 8)

    def forward(self, x):
        q = self.q(x)        # a 3-d input: linear's output is a view
        q /= 2.0             # in place on the view (Longformer's query scaling)
        return (q * q).sum()

def build_model():
    return Net()

def make_batch(batch_size):
    return torch.randn(batch_size, 4, 8)

def loss_fn(out, batch):
    return out
"""


def test_in_place_on_a_view_with_a_number(phase_peaks):
    # autograd rebuilds the view's node by replaying view ops while it holds the view's metadata lock:
    # reading the node's saved tensors then would deadlock (it hung Longformer and LED)
    est, real = phase_peaks(VIEW_INPLACE, batch_size=2)
    assert est == real

