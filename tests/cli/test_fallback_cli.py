"""A model whose shapes depend on data it cannot know under fake tensors: the CLI falls back to small
real steps, and says so."""
import json

from click.testing import CliRunner

from memplan.cli.main import cli

SRC = '''
import torch

class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        h = self.lin(x)
        a = h.detach().abs()
        counts = (a > a.mean()).long().sum(-1).clamp(max=4)   # activations compared with each other
        return h.repeat_interleave(counts, dim=0)

def build_model():
    return M()

def make_batch(batch_size):
    return torch.randn(batch_size, 16)
'''


def test_fallback_is_stated(write_model):
    path = write_model(SRC)
    r = CliRunner().invoke(cli, ["analyze", path, "-b", "8"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "METHOD: FALLBACK" in r.output and "measured at batch" in r.output
    d = json.loads(CliRunner().invoke(cli, ["analyze", path, "-b", "8", "--format", "json"]).output)
    assert d["method"] == "fallback" and "fallback" in d["notes"][0]


def test_no_fallback_names_op_and_module(write_model):
    r = CliRunner().invoke(cli, ["analyze", write_model(SRC), "--no-fallback"])
    assert r.exit_code == 2
    assert "repeat_interleave" in r.output and "'M'" in r.output and "fallback" in r.output
