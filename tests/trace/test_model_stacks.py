"""Block-once for model files (memplan.trace.model_stacks): the model's stack cut to d, d+1 and d+2 layers in
the tracer, the N-layer trace written from them -- byte-identical to the full trace (every record, event and
mark, hence the same peak, reserved bytes, breakdown, phase peaks and module rows) -- or the full trace runs
and says why."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import rank_both

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
    dict(device="910B3", precision="bf16-amp", checkpoint=("layers.*.down",)),
    dict(clip_grad_norm=1.0, optimizer_impl="for-loop", precision="bf16-amp"),   # the stacked norms grow
    dict(optimizer="adafactor", clip_grad_norm=0.5, precision="bf16"))] + [      # .item() reads, answered 0
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


def test_clipping_is_block_once_and_the_full_trace(tmp_path):
    """clip_grad_norm stacks one norm per parameter: that record grows by the same bytes per layer, so
    block-once writes its size at the full depth (memplan.trace.blocks `sized_keys`), byte-identical."""
    fast, full = _both(_write(tmp_path), clip_grad_norm=1.0)
    assert fast.trace.mode == "block-once", fast.trace.mode_reason
    stacked = [r for r in full.trace.storages if r.phase == "optimizer" and r.op == "stack"]
    assert stacked and stacked[0].nbytes == 4 * (2 + 20 * 6)   # fp32 norms of every parameter
    _assert_identical(fast, full)


def test_adafactor_is_block_once_and_the_full_trace(tmp_path):
    """Adafactor's `.item()` reads of its step counter are answered 0 in every trace, the cut ones as the
    full one: no longer a reason to refuse; the note's count grows per layer and is written at the full
    depth."""
    from memplan import compat

    if not compat.has_adafactor():
        pytest.skip("this torch has no torch.optim.Adafactor")
    fast, full = _both(_write(tmp_path), optimizer="adafactor")
    assert fast.trace.mode == "block-once", fast.trace.mode_reason
    assert any(".item()" in n for n in full.trace.notes)
    _assert_identical(fast, full)


@pytest.mark.slow
def test_item_read_in_forward_is_block_once(tmp_path):
    """An `.item()` read in forward is answered 0 at every depth (one read per layer): block-once."""
    fast, full = _both(_write(tmp_path, extra="\n            x = x * (x.sum().item() + 1)"))
    assert fast.trace.mode == "block-once", fast.trace.mode_reason
    assert "40 data-dependent scalar reads" in full.trace.notes[0]
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
    """A step that allocates by `len(self.layers) ** 2` is not the cut model plus repeated chunks, nor a
    record growing by the same bytes per layer: the check at d+2 layers refuses, the full trace runs."""
    extra = "\n        x = x + torch.zeros(len(self.layers) ** 2, *x.shape).sum(0)"
    fast, full = _both(_write(tmp_path, extra=extra))
    assert fast.trace.mode == "full" and "differs from its prediction" in fast.trace.mode_reason
    _assert_identical(fast, full)


def test_forward_that_allocates_per_layer_is_block_once(tmp_path):
    """A step that allocates by `len(self.layers)`: that record grows by the same bytes per layer, so its
    size at the full depth is written from its growth (checked at d+2), byte-identical to the full trace."""
    extra = "\n        x = x + torch.zeros(len(self.layers), *x.shape).sum(0)"
    fast, full = _both(_write(tmp_path, extra=extra))
    assert fast.trace.mode == "block-once", fast.trace.mode_reason
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
    # a value read back while the model is built (its structure may depend on it): not on fake tensors
    "build_item": "\n\ndef build_model():\n    net = Net()\n    net.scale = net.head.weight.sum().item()\n"
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
    ("mask", "guesses values"),
    ("build_item", "cannot be built on fake tensors"),
    ("indexed", "reduced-depth trace failed"),
])
def test_refusals_say_why(tmp_path, case, reason):
    # a mask assumed full on fake tensors: a guessed value, refused (an `.item()` read in forward is not)
    extra = "\n            if not torch.isfinite(x).all():\n                x = x * 0" if case == "mask" else ""
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


# ---- FSDP ranks: each cut depth wrapped as the full model, through the distributed tracer's trace_fn ---
def _per_rank_both(path, sharding, ranks=(7,), **kw):
    from memplan.core.analyze import load_workload
    from memplan.distributed import estimate_per_rank

    workload = load_workload(model=path)
    cfg = TrainConfig(batch_size=2, seq_len=8, **kw)
    fast = estimate_per_rank(workload, cfg, 8, sharding, "910B3", ranks=ranks)
    full = estimate_per_rank(workload, cfg, 8, sharding, "910B3", ranks=ranks, full_trace=True)
    assert full.trace_mode == "full" and full.trace_mode_reason == "--full-trace"
    assert fast.per_rank == full.per_rank and fast.strategy_info == full.strategy_info
    assert fast.notes == full.notes
    return fast


@pytest.fixture
def _from_4_layers(monkeypatch):
    """8 layers suffice to check the same code paths (the speed threshold is 16)."""
    from memplan.trace import blocks

    monkeypatch.setattr(blocks, "MIN_LAYERS", 4)


def test_zero3_rank_of_a_model_file_is_block_once(tmp_path, _from_4_layers):
    """`--world-size 8 --sharding zero3`, rank 7: the stack cut to 2, 3 and 4 layers, each wrapped in FSDP
    with the units the full model gets (`layers.*`), written to 8: the per-rank estimate of all 8."""
    fast = _per_rank_both(_write(tmp_path, layers=8), "zero3")
    assert fast.trace_mode == "block-once", fast.trace_mode_reason
    assert "a model file" in fast.trace_mode_reason and "cut to 2, 3, 4 layers" in fast.trace_mode_reason
    assert fast.strategy_info["fsdp_units"] == [f"layers.{i}" for i in range(8)]


@pytest.mark.slow
@pytest.mark.parametrize("sharding,kw", [
    ("zero2", dict(precision="bf16-amp", checkpoint=("layers.*",))), ("fsdp", dict(precision="bf16-mp")),
    ("zero3", dict(clip_grad_norm=1.0))], ids=str)   # (no Adafactor: DTensor refuses its in-place ops on partial norms, a real step's failure too)
def test_fsdp_rank_traces_of_a_model_file_are_byte_identical(tmp_path, sharding, kw):
    from memplan.core.analyze import load_workload

    fast, full, info, full_info = rank_both(load_workload(model=_write(tmp_path)),
                                            TrainConfig(batch_size=2, seq_len=8, **kw), sharding, 7)
    assert fast.mode == "block-once", fast.mode_reason
    assert same_trace(fast, full) and info == full_info


def test_ddp_rank_of_a_model_file_is_block_once(tmp_path, _from_4_layers):
    """DDP: the stack cut to a few layers, its gradient buckets proven to repeat layer by layer
    (memplan.distributed._ddp_buckets): the per-rank estimate of all 8 layers."""
    fast = _per_rank_both(_write(tmp_path, layers=8), "ddp", ranks=(0,))
    assert fast.trace_mode == "block-once", fast.trace_mode_reason
    assert "a model file" in fast.trace_mode_reason and "buckets proven to repeat" in fast.trace_mode_reason


def test_zero1_rank_of_a_model_file_is_block_once_with_its_optimizer_spliced_in(tmp_path, _from_4_layers):
    """ZeRO-1: the DDP rank's trace (the stack cut) with the rank's ZeroRedundancyOptimizer phase traced alone
    and spliced in (memplan.distributed._fake_trace): the per-rank estimate of all 8 layers."""
    fast = _per_rank_both(_write(tmp_path, layers=8), "zero1", ranks=(7,))
    assert fast.trace_mode == "block-once", fast.trace_mode_reason
    assert "a model file" in fast.trace_mode_reason and "spliced in" in fast.trace_mode_reason


@pytest.mark.slow
@pytest.mark.parametrize("kw", [dict(precision="bf16-amp", checkpoint=("layers.*",)), dict(clip_grad_norm=1.0),
                                dict(optimizer="adafactor")], ids=str)
def test_ddp_rank_traces_of_a_model_file_are_byte_identical(tmp_path, kw):
    from memplan.core.analyze import load_workload

    fast, full, info, full_info = rank_both(load_workload(model=_write(tmp_path)),
                                            TrainConfig(batch_size=2, seq_len=8, **kw), "ddp", 0)
    assert fast.mode == "block-once", fast.mode_reason
    assert same_trace(fast, full) and info == full_info


# ---- the plan's optimizer-only run (memplan.trace.optsplice) ---------------------------------------------
@pytest.mark.parametrize("kw", [dict(optimizer="sgd"), pytest.param(dict(optimizer="adafactor", clip_grad_norm=1.0),
                                                                      marks=pytest.mark.slow)], ids=str)
def test_optimizer_only_trace_of_a_model_file_is_block_once(tmp_path, kw):
    from memplan.trace.optsplice import _optimizer_run, optimizer_trace

    wl = load_model_file(_write(tmp_path))
    cfg = TrainConfig(batch_size=2, seq_len=8, **kw).validate()
    target = Target(family="npu", name="910B3")
    fast = optimizer_trace(wl, cfg, target)
    assert fast.mode == "block-once" and "a model file" in fast.mode_reason, fast.mode_reason
    assert same_trace(fast, trace_workload(wl, cfg, target, runner=_optimizer_run))


def test_evaluator_splices_a_model_file_optimizer_change(tmp_path, _from_4_layers):
    """The plan's splice of adafactor onto a model file's adamw trace, its optimizer-only trace block-once:
    byte-identical to the full trace of the adafactor configuration."""
    from memplan.core import run_analysis as analysis
    from memplan.plan.evaluate import OPTIMIZER_SPLICE, Evaluator

    path = _write(tmp_path, layers=8)
    base = analysis(model=path, batch_size=2, seq_len=8, fallback=False)
    ev = Evaluator(base.workload, base.device, 1 << 40)
    ev.trace(base.config)
    new = base.config.with_(optimizer="adafactor")
    tr = ev.trace(new)
    assert [row["mode"] for row in ev.log] == ["block-once", OPTIMIZER_SPLICE], ev.splice_why
    assert next(iter(ev._minis.values())).mode == "block-once"
    full = analysis(model=path, config=new, fallback=False, full_trace=True)
    assert same_trace(tr, full.trace)
