"""`memplan analyze` on a model whose forward calls `.numpy()` (fake tensors cannot): the one fallback
path measures small real steps and says so; a model that fails for real too is the user's error."""
from __future__ import annotations

import json

from click.testing import CliRunner

from memplan.cli.main import cli

NUMPY_MODEL = '''
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 16)
        self.b = torch.nn.Linear(16, 16)

    def forward(self, x):
        h = self.a(x)
        scale = float(h.detach().abs().mean().numpy()) + 1.0   # reads values back: no fake tensor can
        return self.b(h / scale)


def build_model():
    return M()


def make_batch(batch_size):
    return torch.randn(batch_size, 16)
'''

BROKEN_MODEL = NUMPY_MODEL.replace("return self.b(h / scale)", "return self.b(h / scale)[:, :, 99]")


def test_numpy_in_forward_falls_back_and_exits_0(write_model):
    r = CliRunner().invoke(cli, ["analyze", write_model(NUMPY_MODEL), "-b", "4", "-q"])
    assert r.exit_code == 0, r.output
    assert "METHOD: FALLBACK" in r.output


def test_numpy_in_forward_json_says_fallback(write_model):
    r = CliRunner().invoke(cli, ["analyze", write_model(NUMPY_MODEL), "-b", "4", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout if hasattr(r, "stdout") else r.output)
    assert d["method"] == "fallback" and d["schema_version"] == 1 and d["peak_allocated_bytes"] > 0
    # the real step ran: the notes put the failure on the tracer, not on the model
    assert any("limit of memplan's fake-tensor tracer, not an error in the model" in n for n in d["notes"])


def test_no_fallback_is_exit_2(write_model):
    r = CliRunner().invoke(cli, ["analyze", write_model(NUMPY_MODEL), "-b", "4", "-q", "--no-fallback"])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_a_bug_that_fails_for_real_too_is_the_users_error(write_model):
    r = CliRunner().invoke(cli, ["analyze", write_model(BROKEN_MODEL), "-b", "4", "-q"])
    assert r.exit_code == 2, r.output
    assert "fails on real tensors too" in r.output and "Traceback" not in r.output
