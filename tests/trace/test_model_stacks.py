"""Block-once for model files (memplan.trace.model_stacks): the model's stack cut to d, d+1 and d+2 layers in
the tracer, the N-layer trace written from them -- byte-identical to the full trace (every record, event and
mark, hence the same peak, reserved bytes, breakdown, phase peaks and module rows) -- or the full trace runs
and says why."""
from __future__ import annotations

from pathlib import Path

import pytest

from memplan.core.analyze import run_analysis
from memplan.step import Target
from memplan.trace import model_stacks
from memplan.trace.blocks import same_trace
from memplan.trace.tracer import trace_workload
from memplan.workload import TrainConfig, load_model_file

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "fixtures" / "models"
_EST_FIELDS = ("peak_allocated_bytes", "peak_reserved_bytes", "peak_phase", "peak_step", "peak_micro_step",
               "breakdown_at_peak", "phase_peaks", "first_step_peak_bytes", "modules", "fragmentation_bytes",
               "n_events", "notes")

# 20 small identical pre-norm blocks; an init pass over every module (in place, as GPT-2's `_init_weights`)
_MODEL = '''
import torch
from torch import nn
import torch.nn.functional as F

LAYERS, DIM = {layers}, 32


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.up = nn.Linear(DIM, 4 * DIM)
        self.down = nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(64, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.head = nn.Linear(DIM, 64, bias=False)
        self.apply(self._init)

    def _init(self, m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x){extra}
        return F.cross_entropy(self.head(x).flatten(0, 1), ids.flatten())


def build_model():
    return Net()


def make_batch(batch_size, seq_len=8):
    return torch.randint(0, 64, (batch_size, seq_len))


def loss_fn(output, batch):
    return output
'''


def _write(tmp_path, name="net", layers=20, extra="", tail=""):
    path = tmp_path / f"{name}.py"
    path.write_text(_MODEL.format(layers=layers, extra=extra) + tail)
    return str(path)


def _both(path, **kw):
    kw = dict(model=path, batch_size=2, seq_len=8, fallback=False, **kw)
    return run_analysis(**kw), run_analysis(full_trace=True, **kw)


def _assert_identical(fast, full):
    assert full.trace.mode == "full"
    assert same_trace(fast.trace, full.trace)
    for f in _EST_FIELDS:
        assert getattr(fast.estimate, f) == getattr(full.estimate, f), f


@pytest.mark.parametrize("precision,checkpoint", [("fp32", ()),
                                                  pytest.param("bf16-amp", ("layers.*",), marks=pytest.mark.slow)])
def test_model_file_block_once_is_the_full_trace(tmp_path, precision, checkpoint):
    fast, full = _both(_write(tmp_path), precision=precision, checkpoint=checkpoint)
    assert fast.trace.mode == "block-once", fast.trace.mode_reason
    assert "20 identical layers in layers" in fast.trace.mode_reason
    _assert_identical(fast, full)


def test_layers_copied_from_one_are_counted(tmp_path):
    """Layers made by `copy.deepcopy` of one built layer (as nn.TransformerEncoder makes them): each copy is
    one construction; the 20 originals the file builds first end elsewhere (garbage), recorded as built."""
    fast, full = _both(_write(tmp_path, tail=_TAILS["deepcopy"]))
    assert fast.trace.mode == "block-once", fast.trace.mode_reason
    _assert_identical(fast, full)


_ENCODER = '''
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(64, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 20, enable_nested_tensor=False)
        self.head = nn.Linear(32, 64)

    def forward(self, ids):
        return F.cross_entropy(self.head(self.enc(self.embed(ids))).flatten(0, 1), ids.flatten())


def build_model():
    return Net()


def make_batch(batch_size, seq_len=8):
    return torch.randint(0, 64, (batch_size, seq_len))


def loss_fn(output, batch):
    return output
'''


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
def test_transformer_encoder_block_once_is_the_full_trace(tmp_path, precision):
    """nn.TransformerEncoder deep-copies its prototype layer N times: block-once, identical."""
    path = tmp_path / "enc.py"
    path.write_text(_ENCODER)
    fast, full = _both(str(path), precision=precision)
    assert fast.trace.mode == "block-once" and "20 identical layers in enc.layers" in fast.trace.mode_reason
    _assert_identical(fast, full)


@pytest.mark.slow
def test_sequential_stack(tmp_path):
    tail = "\n\ndef build_model():\n    net = Net()\n    net.layers = nn.Sequential(*net.layers)\n    return net\n"
    fast, full = _both(_write(tmp_path, tail=tail))
    assert fast.trace.mode == "block-once", fast.trace.mode_reason
    _assert_identical(fast, full)


_OPTIONS = [(kw, "block-once") for kw in (
    dict(precision="fp16-amp"), dict(grad_accum=2), dict(optimizer="sgd"), dict(optimizer="adamw-8bit"),
    dict(optimizer_impl="fused"), dict(keep_outputs=False), dict(device="A100-80GB", precision="bf16"),
    dict(device="910B3", precision="bf16-amp", checkpoint=("layers.*.down",)))] + [
    (dict(clip_grad_norm=1.0), "full"),           # the stacked per-parameter norms grow with the layers
    (dict(optimizer="adafactor"), "full"),        # its .item() reads are answered 0: values guessed
    (dict(checkpoint=("layers.3",)), "full"),     # checkpointing on one layer only
]


@pytest.mark.slow
@pytest.mark.parametrize("kw,mode", _OPTIONS, ids=str)
def test_training_options_block_once_or_full_are_the_full_trace(tmp_path, kw, mode):
    fast, full = _both(_write(tmp_path), **kw)
    assert fast.trace.mode == mode, fast.trace.mode_reason
    _assert_identical(fast, full)


@pytest.mark.slow
def test_first_layers_that_differ_are_kept(tmp_path):
    """Layer 5 differs: the cut keeps layers 0..6 and block-once traces 7, 8 and 9 layers."""
    tail = ("\n\ndef build_model():\n    net = Net()\n    net.layers[5].up = nn.Linear(DIM, 2 * DIM)\n"
            "    net.layers[5].down = nn.Linear(2 * DIM, DIM)\n    return net\n")
    fast, full = _both(_write(tmp_path, tail=tail))
    assert fast.trace.mode == "block-once" and "cut to 7, 8, 9" in fast.trace.mode_reason
    _assert_identical(fast, full)


def test_cut_model_is_the_file_written_with_fewer_layers(tmp_path):
    """The stack cut to 2 layers in the tracer traces exactly as the same file written with 2 layers
    (the 18 layers past the cut, built unrecorded, and the init pass over them leave no trace)."""
    cfg = TrainConfig(batch_size=2, seq_len=8).validate()
    wl = load_model_file(_write(tmp_path))
    stack, why = model_stacks.file_stack(wl, cfg)
    assert stack is not None, why
    cut = trace_workload(model_stacks.cut_workload(wl, stack, 2), cfg, Target())
    two = trace_workload(load_model_file(_write(tmp_path, "net2", layers=2)), cfg, Target())
    assert same_trace(cut, two)


def test_forward_that_counts_the_layers_is_traced_in_full(tmp_path):
    """A step that allocates by `len(self.layers)` is not the cut model plus repeated chunks: the check at
    d+2 layers refuses, the full trace runs."""
    extra = "\n        x = x + torch.zeros(len(self.layers), *x.shape).sum(0)"
    fast, full = _both(_write(tmp_path, extra=extra))
    assert fast.trace.mode == "full" and "model file" in fast.trace.mode_reason
    _assert_identical(fast, full)


_TAILS = {
    "train_step": "\n\ndef train_step(model, batch, optimizer):\n    model(batch).backward()\n"
                  "    optimizer.step()\n    optimizer.zero_grad()\n",
    "differ": "\n\ndef build_model():\n    net = Net()\n    net.layers[18].up = nn.Linear(DIM, 2 * DIM)\n"
              "    net.layers[18].down = nn.Linear(2 * DIM, DIM)\n    return net\n",
    "deepcopy": "\n\nimport copy\n\n\ndef build_model():\n    net = Net()\n"
                "    net.layers = nn.ModuleList(copy.deepcopy(net.layers[0]) for _ in range(LAYERS))\n"
                "    return net\n",
    "shared": "\n\ndef build_model():\n    net = Net()\n    net.layers = nn.ModuleList([net.layers[0]] * LAYERS)\n"
              "    return net\n",
    # the layer count from a constant, not from the list
    "indexed": "\n\ndef _forward(self, ids):\n    x = self.embed(ids)\n    for i in range(LAYERS):\n"
               "        x = self.layers[i](x)\n"
               "    return F.cross_entropy(self.head(x).flatten(0, 1), ids.flatten())\n\n\n"
               "Net.forward = _forward\n",
}


@pytest.mark.parametrize("case,reason", [
    ("train_step", "train_step"),
    ("few", "fewer than 16 layers"),
    ("differ", "differ"),
    ("shared", "not built one construction each"),
])
def test_refused_before_any_trace(tmp_path, case, reason):
    path = _write(tmp_path, layers=8 if case == "few" else 20, tail=_TAILS.get(case, ""))
    stack, why = model_stacks.file_stack(load_model_file(path), TrainConfig())
    assert stack is None and "model file" in why and reason in why, why


@pytest.mark.slow
@pytest.mark.parametrize("case,reason", [
    ("train_step", "train_step"),
    ("item", "guesses values"),
    ("indexed", "reduced-depth trace failed"),
])
def test_refusals_say_why(tmp_path, case, reason):
    extra = "\n            x = x * (x.sum().item() + 1)" if case == "item" else ""   # a value read back
    fast, full = _both(_write(tmp_path, tail=_TAILS.get(case, ""), extra=extra))
    assert fast.trace.mode == "full"
    assert "model file" in fast.trace.mode_reason and reason in fast.trace.mode_reason, fast.trace.mode_reason
    _assert_identical(fast, full)


def test_the_stack_is_the_one_long_list(tmp_path):
    """A short list of identical modules next to the stack (4 heads) stays as built; two long ones refuse."""
    tail = ("\n\ndef build_model():\n    net = Net()\n"
            "    net.heads = nn.ModuleList(nn.Linear(DIM, DIM) for _ in range({}))\n    return net\n")
    cfg = TrainConfig()
    stack, why = model_stacks.file_stack(load_model_file(_write(tmp_path, "a", tail=tail.format(4))), cfg)
    assert stack is not None and stack.path == "layers" and stack.n_layers == 20, why
    stack, why = model_stacks.file_stack(load_model_file(_write(tmp_path, "b", tail=tail.format(16))), cfg)
    assert stack is None and "several stacks of layers (layers, heads)" in why


def test_fine_tuning_front_end_is_refused(tmp_path):
    from memplan.finetune import ModelPrep, prepare

    wl = prepare(load_model_file(_write(tmp_path)), None, ModelPrep(load_dtype="bfloat16"))
    stack, why = model_stacks.file_stack(wl, TrainConfig())
    assert stack is None and "fine-tuning" in why


def test_stacks_are_the_outermost_lists_of_one_class():
    import torch
    from torch import nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.experts = nn.ModuleList(nn.Linear(2, 2) for _ in range(8))

    model = nn.Module()
    model.layers = nn.ModuleList(Layer() for _ in range(6))
    model.mixed = nn.Sequential(*[nn.Linear(2, 2), nn.ReLU()] * 3)
    with torch.device("meta"):
        assert model_stacks._stacks(model) == ["layers"]


# ---- every fixture model file: its stack cut to 2 layers is the file written with 2 -------------------
_TWO_LAYERS = {   # fixture -> (text giving its layer count, the same with 2 layers)
    "decoder_1b": ("= 2048, 22,", "= 2048, 2,"),
    "llama_gqa": ("= 512, 4,", "= 512, 2,"),
    "frozen_backbone": ("= 16000, 384, 6,", "= 16000, 384, 2,"),
    "gpt2": ("n_layer=6", "n_layer=2"),
    "bert_classifier": ("num_hidden_layers=4", "num_hidden_layers=2"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_TWO_LAYERS))
@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
def test_fixture_stack_cut_to_two_is_the_two_layer_file(tmp_path, name, precision):
    text = (MODELS / f"{name}.py").read_text()
    old, new = _TWO_LAYERS[name]
    assert text.count(old) == 1
    two = tmp_path / f"{name}.py"
    two.write_text(text.replace(old, new))
    cfg = TrainConfig(batch_size=2, seq_len=32, precision=precision).validate()
    wl = load_model_file(str(MODELS / f"{name}.py"))
    model = model_stacks.inspected_model(wl)
    [path] = model_stacks._stacks(model)   # frozen_backbone's first layers differ: the cut needs no proof
    layers = model.get_submodule(path)
    cls = type(layers[0])
    stack = model_stacks.FileStack(path, len(layers), 0, cls, model_stacks._slots(wl, path, cls))
    cut = trace_workload(model_stacks.cut_workload(wl, stack, 2), cfg, Target())
    assert same_trace(cut, trace_workload(load_model_file(str(two)), cfg, Target()))
