"""After an in-place op on a view, autograd rebuilds the view's gradient node; a real run gets
`AsStridedBackward0` (a new base-sized gradient storage), fake tensors a replay of the view ops
(memplan.trace.views gives the trace the real one's storage)."""

VIEW_INPLACE_TRANSPOSED = """
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(8, 8)

    def forward(self, x):
        q = self.q(x)                        # a view (linear's 3-d output)
        q /= 2.0                             # in place on the view: autograd rebuilds q's node
        return q.transpose(1, 2).sum()       # ... as AsStridedBackward0 in a real run

def build_model():
    return Net()

def make_batch(batch_size):
    return torch.randn(batch_size, 4, 8)

def loss_fn(out, batch):
    return out
"""


def test_in_place_on_a_view_then_used_gets_the_real_view_node(phase_peaks):
    # the real node scatters the view's gradient into a new base-sized storage; fake tensors replay the
    # view ops instead (no storage): 252 B under the real backward before memplan.trace.views
    est, real = phase_peaks(VIEW_INPLACE_TRANSPOSED, batch_size=2)
    assert est == real
