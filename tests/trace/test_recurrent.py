"""Recurrent layers: the estimate against the CPU allocator's ledger of the same real step.

nn.LSTM on the CPU runs oneDNN (`mkldnn_rnn_layer`, whose training workspace the meta kernel leaves
empty); nn.GRU / nn.RNN and LSTM with proj_size run aten's native cells; packed sequences read their
batch sizes element by element in C++. Each path must be exact."""
import pytest
import torch

from memplan import api
from memplan.trace import kernels
from memplan.measure.cpu import measure_cpu
from memplan.workload import TrainConfig, load_model_file

MODEL = '''
import torch

KIND, BATCH_FIRST, INIT, PACKED, KW = {kind!r}, {batch_first!r}, {init!r}, {packed!r}, {kw!r}
T, IN, HID = 24, 12, 20


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = getattr(torch.nn, KIND)(IN, HID, batch_first=BATCH_FIRST, **KW)
        self.head = torch.nn.Linear((self.rnn.proj_size or HID) * (2 if self.rnn.bidirectional else 1), 3)

    def forward(self, x, lengths):
        state = None
        if INIT:
            n = self.rnn.num_layers * (2 if self.rnn.bidirectional else 1)
            b = x.shape[0] if BATCH_FIRST else x.shape[1]
            h = torch.zeros(n, b, self.rnn.proj_size or HID)
            state = (h, torch.zeros(n, b, HID)) if KIND == "LSTM" else h
        if PACKED:
            x = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=BATCH_FIRST, enforce_sorted=False)
        y, _ = self.rnn(x, state)
        if PACKED:
            y, lengths = torch.nn.utils.rnn.pad_packed_sequence(y, batch_first=BATCH_FIRST)
            assert lengths.tolist() == sorted(lengths.tolist(), reverse=True) or True
        return self.head(y)


def build_model():
    return Net()


def make_batch(batch_size):
    x = torch.randn(batch_size, T, IN) if BATCH_FIRST else torch.randn(T, batch_size, IN)
    return x, torch.tensor([T - 5 * (i % 4) for i in range(batch_size)][::-1])
'''

CASES = [
    dict(kind="LSTM", batch_first=True, init=False, packed=False, kw={}),
    dict(kind="LSTM", batch_first=False, init=True, packed=False, kw=dict(num_layers=2, dropout=0.3,
                                                                           bidirectional=True)),
    dict(kind="LSTM", batch_first=True, init=False, packed=False, kw=dict(proj_size=8)),
    dict(kind="GRU", batch_first=True, init=False, packed=False, kw=dict(bidirectional=True)),
    dict(kind="RNN", batch_first=False, init=True, packed=False, kw=dict(nonlinearity="relu")),
    dict(kind="LSTM", batch_first=True, init=False, packed=True, kw={}),
    dict(kind="GRU", batch_first=False, init=True, packed=True, kw=dict(bidirectional=True)),
]


def _ids(c):
    extra = "-".join(f"{k}={v}" for k, v in c["kw"].items())
    return (f"{c['kind']}-{'bf' if c['batch_first'] else 'sf'}-{'h0' if c['init'] else 'noh0'}"
            f"{'-packed' if c['packed'] else ''}{'-' + extra if extra else ''}")


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_recurrent_estimate_is_exact(write_model, case):
    wl = load_model_file(write_model(MODEL.format(**case)))
    cfg = TrainConfig(batch_size=3)
    est = api.analyze(wl, config=cfg)
    meas = measure_cpu(wl, cfg)
    assert est.peak_allocated_bytes == meas.peak_allocated_bytes, (est.peak_allocated_bytes,
                                                                   meas.peak_allocated_bytes)


def test_packed_lengths_unknown_are_counted_full(write_model):
    # lengths computed from activations have no values on fake tensors: every sequence counts as full,
    # an upper bound, and the notes say so
    src = MODEL.format(kind="GRU", batch_first=True, init=False, packed=True, kw={}).replace(
        "x = torch.nn.utils.rnn.pack_padded_sequence(x, lengths,",
        "lengths = (x[:, :, 0] > -1e9).sum(1)\n"
        "            x = torch.nn.utils.rnn.pack_padded_sequence(x, lengths,")
    est = api.analyze(load_model_file(write_model(src)), config=TrainConfig(batch_size=2))
    assert any("worst-case" in n and "_pack_padded_sequence" in n for n in est.notes), est.notes


def test_measured_rule_gives_the_real_workspace():
    T, B, I, H = 7, 2, 5, 6
    args = (torch.zeros(T, B, I), torch.zeros(4 * H, I), torch.zeros(4 * H, H), torch.zeros(4 * H),
            torch.zeros(4 * H), torch.zeros(B, H), torch.zeros(B, H), False, [], 2, H, 1, True, False,
            False, True)
    op = torch.ops.aten.mkldnn_rnn_layer.default
    real = op(*args)
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fargs = tuple(mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args)
        fake = op(*fargs)
        assert fake[3].numel() == 0           # the meta kernel's workspace is empty
        plan = kernels.measure_cpu_scratch(op, fargs, {}, fake)
        fixed = kernels.real_layouts(plan, fake)
    assert fixed[3].untyped_storage().nbytes() == real[3].untyped_storage().nbytes() > 0
    assert fixed[0].shape == real[0].shape


def test_real_layouts_restrides_same_shape_outputs():
    from torch._subclasses.fake_tensor import FakeTensorMode
    plan = kernels.Measured([kernels.OUTPUTS])
    plan.layouts = (((2, 3, 4, 5), (60, 1, 15, 3), 0, 480),)   # channels_last
    with FakeTensorMode():
        out = torch.empty(2, 3, 4, 5)
        fixed = kernels.real_layouts(plan, out)
        assert fixed.stride() == (60, 1, 15, 3) and fixed.shape == out.shape
        plan.layouts = (((7,), (1,), 0, 28),)   # a different shape with data: left alone
        assert kernels.real_layouts(plan, out) is out


@pytest.mark.parametrize("family,per_step", [("cuda", 5), ("npu", 7)])
def test_device_targets_keep_an_rnn_reserve(write_model, family, per_step):
    # approximate device rules (cuDNN reserve; torch_npu npu_lstm's saved gates): the oneDNN layer's
    # empty workspace stands for what the device kernel keeps for backward
    from memplan.trace.tracer import trace_workload
    from memplan.step import Target

    wl = load_model_file(write_model(MODEL.format(kind="LSTM", batch_first=True, init=False, packed=False, kw={})))
    tr = trace_workload(wl, TrainConfig(batch_size=3), Target(family=family))
    kept = [r.nbytes for r in tr.storages if r.op.endswith("mkldnn_rnn_layer") and r.dtype == "uint8"]
    assert kept and set(kept) == {per_step * 24 * 3 * 20 * 4}


CTC = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(6, 5, batch_first=True)

    def forward(self, x, lengths):
        return self.gru(x)

def build_model():
    return Net()

def make_batch(batch_size):
    return (torch.randn(batch_size, 20, 6), torch.tensor([4, 7, 3][:batch_size]))

def loss_fn(output, batch):
    logp = output[0].log_softmax(-1).transpose(0, 1)
    lens = batch[1]
    targets = torch.ones(lens.shape[0], 7, dtype=torch.long)
    return torch.nn.functional.ctc_loss(logp, targets, torch.full_like(lens, 20), lens)
'''


def test_ctc_loss_with_tensor_lengths_is_sized_from_them(write_model):
    wl = load_model_file(write_model(CTC))
    cfg = TrainConfig(batch_size=3)
    est = api.analyze(wl, config=cfg)
    assert est.method == "trace" and any("_ctc_loss" in n for n in est.notes), est.notes
    # known gap: ctc_loss_backward_cpu's log_beta temporary (batch x T x (2 x longest + 1) floats) is not
    # modelled; here it is at the (tiny) peak, in the unseen speech model it was not
    log_beta = 3 * 20 * (2 * 7 + 1) * 4
    real = measure_cpu(wl, cfg).peak_allocated_bytes
    assert 0 <= real - est.peak_allocated_bytes <= log_beta
