"""Optimizer splice (memplan.trace.optsplice): the base trace's forward/backward with the new optimizer's
phase traced alone is byte-identical to tracing the new configuration -- every record, event, mark and
note, hence the same peak, reserved bytes, breakdown, phase peaks, module rows and timeline -- or it is
not used and says why."""
from __future__ import annotations

from pathlib import Path

import pytest

from memplan.core import estimate_from_trace, run_analysis, trace_optimizer_change
from memplan.plan.evaluate import OPTIMIZER_SPLICE, Evaluator
from memplan.trace.blocks import same_trace
from memplan.trace.optsplice import differs_in_optimizer_only

ROOT = Path(__file__).resolve().parents[2]
HF = ROOT / "fixtures" / "hf"
MODELS = ROOT / "fixtures" / "models"
CHANGES = [("adafactor", "default"), ("sgd", "default"), ("adamw", "foreach"), ("adam", "for-loop")]
# where the splice is not proven and the full trace runs instead, and the reason it says
FALLBACKS = {"custom_step": "train_step"}


def _spliced_vs_traced(optimizer, impl, **kw):
    """The splice of `optimizer`/`impl` onto the adamw trace, and the analysis that traces it itself."""
    base = run_analysis(fallback=False, **kw)
    new_cfg = base.config.with_(optimizer=optimizer, optimizer_impl=impl)
    traced = run_analysis(fallback=False, config=new_cfg, **{k: v for k, v in kw.items()
                                                              if k in ("model", "hf_config", "device")})
    tr, why = trace_optimizer_change(base.workload, new_cfg, base.device, base.trace)
    return tr, why, traced


def _check(tr, why, traced, name):
    if name in FALLBACKS:
        assert tr is None and FALLBACKS[name] in why
        return
    assert tr is not None, why
    assert same_trace(tr, traced.trace)
    est = estimate_from_trace(traced.workload, traced.config, traced.device, tr, 0.0)
    a, b = est.to_dict(), traced.estimate.to_dict()
    a.pop("trace_seconds", None), b.pop("trace_seconds", None)
    assert a == b


@pytest.mark.parametrize("optimizer,impl", CHANGES)
def test_mlp_splice_is_the_trace(optimizer, impl):
    tr, why, traced = _spliced_vs_traced(optimizer, impl, model=str(MODELS / "mlp.py"), batch_size=2)
    _check(tr, why, traced, "mlp")


def test_custom_step_falls_back():
    tr, why, traced = _spliced_vs_traced("sgd", "default", model=str(MODELS / "custom_step.py"), batch_size=2)
    _check(tr, why, traced, "custom_step")


@pytest.mark.slow
@pytest.mark.parametrize("optimizer,impl", CHANGES)
@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
@pytest.mark.parametrize("name", sorted(p.stem for p in MODELS.glob("*.py")))
def test_model_file_splice_is_the_trace(name, precision, optimizer, impl):
    tr, why, traced = _spliced_vs_traced(optimizer, impl, model=str(MODELS / f"{name}.py"), batch_size=2,
                                         precision=precision)
    _check(tr, why, traced, name)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer,impl", CHANGES[:3])
@pytest.mark.parametrize("precision", ["fp32", "bf16-amp"])
@pytest.mark.parametrize("name", sorted(p.stem for p in HF.glob("*.json")))
def test_hf_splice_is_the_trace(name, precision, optimizer, impl):
    tr, why, traced = _spliced_vs_traced(optimizer, impl, hf_config=str(HF / f"{name}.json"), batch_size=1,
                                         seq_len=32, precision=precision, device="910B3")
    _check(tr, why, traced, name)


@pytest.mark.parametrize("optimizer", ["sgd", "adafactor"])
def test_grad_accumulation_splice_is_the_trace(optimizer):
    """K = 2: the optimizer runs after the last micro-step, its records carry micro-step K as the driver's."""
    tr, why, traced = _spliced_vs_traced(optimizer, "default", model=str(MODELS / "mlp.py"), batch_size=2,
                                         grad_accum=2)
    _check(tr, why, traced, "mlp")


def test_grad_scaler_falls_back():
    base = run_analysis(model=str(MODELS / "mlp.py"), batch_size=2, precision="fp16-amp", fallback=False)
    tr, why = trace_optimizer_change(base.workload, base.config.with_(optimizer="sgd"), base.device, base.trace)
    assert tr is None and "GradScaler" in why


def test_evaluator_splices_an_optimizer_change():
    base = run_analysis(model=str(MODELS / "mlp.py"), batch_size=2, fallback=False)
    ev = Evaluator(base.workload, base.device, 1 << 40)
    ev.trace(base.config)
    new = base.config.with_(optimizer="adafactor")
    assert differs_in_optimizer_only(base.config, new) and not differs_in_optimizer_only(new, new)
    assert not differs_in_optimizer_only(base.config, new.with_(batch_size=3))
    ev.trace(new)
    assert [row["mode"] for row in ev.log] == ["full", OPTIMIZER_SPLICE]
    traced = run_analysis(model=str(MODELS / "mlp.py"), config=new, fallback=False)
    assert same_trace(ev.trace(new), traced.trace)


@pytest.mark.parametrize("checkpoint", ["every layer", pytest.param("runs", marks=pytest.mark.slow)])
def test_evaluator_traces_checkpointing_under_the_proxy_optimizer(tmp_path, checkpoint):
    """Once the plan took adafactor's optimizer-only trace (splicing it onto adamw), a checkpointed adafactor
    configuration is traced under the PROXY optimizer and adafactor's phase spliced in: byte-identical to
    tracing it itself (block-once over every layer checkpointed; block runs over mixed checkpointing)."""
    import json

    from memplan.core import trace
    from memplan.plan.evaluate import PROXY

    cfg = json.loads((HF / "llama_small.json").read_text())
    cfg.update(num_hidden_layers=20, hidden_size=64, intermediate_size=128, vocab_size=256)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    base = run_analysis(hf_config=str(tmp_path / "config.json"), batch_size=1, seq_len=16, device="910B3",
                        fallback=False)
    ev = Evaluator(base.workload, base.device, 1 << 40)
    ev.trace(base.config)
    ev.trace(base.config.with_(optimizer="adafactor", optimizer_impl="for-loop"))
    ckpt = (tuple(f"model.layers.{i}" for i in range(20)) if checkpoint == "every layer" else
            tuple(f"model.layers.{i}" for i in range(5)) + ("model.layers.5.self_attn", "model.layers.5.mlp"))
    new = base.config.with_(optimizer="adafactor", optimizer_impl="for-loop", checkpoint=ckpt)
    assert not ev.traced(new.with_(**PROXY))
    tr = ev.trace(new)
    assert ev.log[-1]["mode"] == OPTIMIZER_SPLICE, ev.splice_why.get(new)
    traced = trace(base.workload, new, base.device)
    assert traced.mode == "block-once" and (checkpoint == "runs") == ("runs of identical" in traced.mode_reason)
    assert same_trace(tr, traced)
    # without the optimizer-only trace taken first, the configuration is traced itself
    ev2 = Evaluator(base.workload, base.device, 1 << 40)
    ev2.trace(new)
    assert ev2.log[-1]["mode"] == "block-once"
