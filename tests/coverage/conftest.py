import os

import pytest

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@pytest.fixture
def write_model(tmp_path):
    """Write a model file from source text and return its path."""
    def write(src: str, name: str = "model.py") -> str:
        p = tmp_path / name
        p.write_text(src)
        return str(p)
    return write


@pytest.fixture
def peaks():
    return _peaks


def _peaks(workload, **cfg):
    """(traced peak, measured peak, trace notes) at a TrainConfig."""
    from memplan.trace.analysis import summarize
    from memplan.trace.tracer import trace_workload
    from memplan.validate.cpu_measure import measure_cpu
    from memplan.workload import TrainConfig

    c = TrainConfig(**cfg)
    tr = trace_workload(workload, c)
    return summarize(tr).peak_allocated_bytes, measure_cpu(workload, c).peak_allocated_bytes, tr.notes
