"""The fallback: a model fake tensors cannot trace is measured at batch 1 and 2 and extrapolated."""
import pytest
import torch

from memplan.errors import TraceError
from memplan.core import analyze
from memplan.measure import measure_cpu
from memplan.workload import TrainConfig, Workload


class Untraceable(torch.nn.Module):
    """`repeat_interleave` by counts computed from activations: no bound on the output size."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(32, 32)
        self.b = torch.nn.Linear(32, 32)

    def forward(self, x):                        # (B, 16, 32)
        h = self.a(x)
        # all ones, but only the values say so (two activations compared: no stated assumption applies)
        reps = (h[..., 0] > h[..., 1] - 1e9).long().reshape(-1)
        h = torch.repeat_interleave(h.reshape(-1, 32), reps, dim=0)
        return self.b(torch.relu(h)).sum()


def workload():
    return Workload("untraceable", Untraceable, lambda b: torch.randn(b, 16, 32))


def test_no_fallback_raises_a_trace_error():
    with pytest.raises(TraceError, match="repeat_interleave"):
        analyze(workload(), batch_size=4, fallback=False)


def test_fallback_estimate_is_stated_and_close():
    est = analyze(workload(), batch_size=4)
    assert est.method == "fallback"
    assert est.notes[0].startswith("estimated by fallback: measured at batch 1 and 2, extrapolated to batch 4")
    assert "expected error" in est.notes[0]
    assert any("trace failed" in n and "repeat_interleave" in n for n in est.notes)
    real = measure_cpu(workload(), TrainConfig(batch_size=4)).peak_allocated_bytes
    assert abs(est.peak_allocated_bytes - real) / real < 0.03
    assert est.to_dict()["method"] == "fallback"


def test_traceable_models_are_traced():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, x):
            return self.lin(x)

    est = analyze(Workload("m", M, lambda b: torch.randn(b, 8)), batch_size=4)
    assert est.method == "trace"


class ReadsValuesWhileBuilding(torch.nn.Module):
    """Widths read back from a small tensor at build time (as Hiera does with `cumsum().tolist()`):
    a fake-tensor build may not see the values and fail where the real build works."""

    def __init__(self):
        super().__init__()
        widths = [32, 32, 32][: int(torch.tensor([1, 1]).sum())]
        self.a = torch.nn.Linear(32, widths[1])

    def forward(self, x):
        return self.a(x).sum()


def test_a_build_that_fails_only_under_fake_tensors_is_measured():
    wl = Workload("reads-values", ReadsValuesWhileBuilding, lambda b: torch.randn(b, 32))
    est = analyze(wl, batch_size=2)
    real = measure_cpu(wl, TrainConfig(batch_size=2)).peak_allocated_bytes
    assert est.method in ("trace", "fallback")
    if est.method == "fallback":
        assert any("build_model() raised" in n for n in est.notes)
    assert abs(est.peak_allocated_bytes - real) / real < 0.01


def test_a_model_that_does_not_build_keeps_its_error():
    from memplan.errors import UserError

    def broken():
        raise IndexError("list index out of range")

    with pytest.raises(UserError, match="build_model\\(\\) raised IndexError"):
        analyze(Workload("broken", broken, lambda b: torch.randn(b, 32)), batch_size=2)
