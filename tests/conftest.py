"""The one conftest: shared fixtures, and the hardware markers' auto-skip.

Tests marked `gpu` are skipped where no CUDA device is visible, tests marked `npu` where torch_npu cannot
be imported or sees no NPU (markers are declared in pyproject.toml). Helpers shared by several test
packages (snapshot_synth, report_builders, validate_helpers) sit next to this file or in their package.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "fixtures" / "models"
HF = ROOT / "fixtures" / "hf"
LOGS = ROOT / "fixtures" / "logs"


def tiny_llama_config(tmp_path, layers=8) -> str:
    """A small llama_small config (64 wide, 256 tokens) with `layers` layers, written under `tmp_path`."""
    import json

    cfg = json.loads((HF / "llama_small.json").read_text())
    cfg.update(num_hidden_layers=layers, hidden_size=64, intermediate_size=128, vocab_size=256)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def rank_both(workload, cfg, sharding: str, rank: int):
    """One rank of 8 (a 910B3) traced as `memplan analyze` does and with `--full-trace`:
    (fast, full, fast's strategy info, full's)."""
    from memplan.distributed._fake_trace import trace_rank
    from memplan.step import Target

    target = Target(family="npu", name="910B3")
    fast, info = trace_rank(workload, cfg, sharding, 8, rank, target)
    full, full_info = trace_rank(workload, cfg, sharding, 8, rank, target, full_trace=True)
    return fast, full, info, full_info
for _d in ("", "report", "validate", "diagnose"):    # helper modules imported by name (snapshot_synth, ...)
    _p = str(Path(__file__).parent / _d)
    if _p not in sys.path:
        sys.path.insert(0, _p)

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def _cuda_ready() -> bool:
    import torch

    return torch.cuda.is_available()


def _npu_ready() -> bool:
    from memplan.compat import import_torch_npu, torch_npu_installed
    from memplan.errors import UserError

    if not torch_npu_installed():
        return False
    try:
        import_torch_npu("npu tests")
    except UserError:
        return False
    import torch

    return torch.npu.is_available()


def pytest_collection_modifyitems(config, items):
    needs = {"gpu": (_cuda_ready, "needs a CUDA GPU"),
             "npu": (_npu_ready, "needs an Ascend NPU with torch_npu and CANN")}
    ready: dict[str, bool] = {}
    for item in items:
        for marker, (probe, reason) in needs.items():
            if marker in item.keywords:
                if marker not in ready:
                    ready[marker] = probe()
                if not ready[marker]:
                    item.add_marker(pytest.mark.skip(reason=reason))


# ---- shared fixtures ----------------------------------------------------------------------------
@pytest.fixture
def model_path():
    """The path of a fixture model file: model_path("mlp")."""
    def get(name: str) -> str:
        return str(MODELS / (name + ".py"))
    return get


@pytest.fixture
def write_model(tmp_path):
    """Write a model file from source text and return its path."""
    def write(src: str, name: str = "model.py") -> str:
        p = tmp_path / name
        p.write_text(src)
        return str(p)
    return write


@pytest.fixture(scope="session")
def corpus() -> list[dict[str, str]]:
    """The diagnose corpus index under fixtures/logs/."""
    from corpus_helpers import corpus_rows

    return corpus_rows()


@pytest.fixture
def model_file(tmp_path):
    """Write a model file from source text and return its path (validate tests)."""
    from validate_helpers import _model_file

    return _model_file(tmp_path)


@pytest.fixture
def peaks():
    """(traced peak, measured peak, trace notes) of a workload at a TrainConfig."""
    def get(workload, **cfg):
        from memplan.measure import measure_cpu
        from memplan.trace.analysis import summarize
        from memplan.trace.tracer import trace_workload
        from memplan.workload import TrainConfig

        c = TrainConfig(**cfg)
        tr = trace_workload(workload, c)
        return summarize(tr).peak_allocated_bytes, measure_cpu(workload, c).peak_allocated_bytes, tr.notes
    return get


@pytest.fixture
def phase_peaks(write_model):
    """(estimated, measured) per-phase peaks of a model file's source at a TrainConfig (full trace)."""
    def get(src: str, **cfg):
        from memplan import api
        from memplan.measure import measure_cpu
        from memplan.workload import TrainConfig, load_model_file

        wl, c = load_model_file(write_model(src)), TrainConfig(**cfg)
        est = api.analyze(wl, config=c, fallback=False, full_trace=True)
        return est.phase_peaks, measure_cpu(wl, c).phase_peaks
    return get


class Ev:
    """Build (is_alloc, sid, nbytes) event lists: `e.a("x", 3 * MiB)`, `e.f("x")`."""

    def __init__(self):
        self.events = []
        self._ids = {}
        self._sizes = {}

    def a(self, name, nbytes):
        sid = len(self._ids)
        self._ids[name] = sid
        self._sizes[name] = nbytes
        self.events.append((True, sid, nbytes))
        return self

    def f(self, name):
        self.events.append((False, self._ids[name], self._sizes[name]))
        return self


@pytest.fixture
def ev():
    """An allocator event-list builder (alloc tests)."""
    return Ev()


# ---- the planner's traces of fixture model files, taken once per test session ---------------------------
_PLAN_TRACES: dict = {}


def _fixture_file(workload) -> Path | None:
    """The fixture model file `workload` is, unchanged (every callable defined in that file: no LoRA or
    other wrapper, no extra settings), else None."""
    src = getattr(workload, "source", "") or ""
    if not src.endswith(".py") or getattr(workload, "extra", None):
        return None
    path = Path(src).resolve()
    if path.parent != MODELS:
        return None
    for fn in (workload.build_model, workload.make_batch, workload.loss_fn, workload.make_optimizer,
               workload.train_step):
        code = getattr(fn, "__code__", None)
        if fn is not None and (code is None or Path(code.co_filename).resolve() != path):
            return None
    return path


@pytest.fixture(autouse=True, scope="session")
def _planner_trace_cache():
    """Many plan tests (API, CLI, preflight) plan the same fixture model files at other capacities or
    options, and each plan's Evaluator traces every configuration it checks. Within the session a trace of
    an unchanged fixture model file at one configuration and target is taken once: a trace is
    device-neutral data the planner only reads (its Evaluator still counts it as a trace)."""
    from memplan.plan import evaluate

    real = evaluate.trace

    def trace(workload, cfg, dev, *args, **kwargs):
        path = _fixture_file(workload)
        if path is None or args or kwargs:
            return real(workload, cfg, dev, *args, **kwargs)
        key = (str(path), path.stat().st_mtime_ns, workload.name, cfg, dev.family, dev.name)
        if key not in _PLAN_TRACES:
            _PLAN_TRACES[key] = real(workload, cfg, dev)
        return _PLAN_TRACES[key]

    evaluate.trace = trace
    yield
    evaluate.trace = real
