import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memplan.cli.main import cli


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_analyze_table(model_path):
    r = invoke("analyze", model_path("mlp"), "-b", "4")
    assert r.exit_code == 0, r.output
    assert "peak allocated" in r.output and "Breakdown at the peak" in r.output
    assert "optimizer_state" in r.output and "net.2" in r.output


def test_analyze_json_contract(model_path):
    r = invoke("analyze", model_path("mlp"), "-b", "4", "--format", "json")
    d = json.loads(r.output)
    for key in ("schema_version", "memplan_version", "peak_allocated_bytes", "peak_reserved_bytes", "peak_phase",
                "breakdown_at_peak", "modules", "device", "capacity_bytes", "fits"):
        assert key in d
    assert d["fits"] is None and d["device"] is None
    assert set(d["breakdown_at_peak"]) == {"parameters", "gradients", "optimizer_state", "activations",
                                           "temporaries", "inputs", "other"}
    assert sum(d["breakdown_at_peak"].values()) == d["peak_allocated_bytes"]


def test_capacity_decides_exit_code(model_path):
    r = invoke("analyze", model_path("mlp"), "--capacity", "100MB", "--format", "json")
    assert r.exit_code == 1 and json.loads(r.output)["fits"] is False
    r = invoke("analyze", model_path("mlp"), "--capacity", "1GiB")
    assert r.exit_code == 0 and "FITS" in r.output


def test_device_shows_reserved(model_path):
    r = invoke("analyze", model_path("mlp"), "--device", "A100-80GB", "--format", "json")
    d = json.loads(r.output)
    assert d["peak_reserved_bytes"] >= d["peak_allocated_bytes"] and d["fits"] is True
    assert d["capacity_bytes"] > 70 * 2**30


BAD = [
    (["analyze", "no/such/model.py"], "not found"),
    (["analyze"], "no model"),
    (["analyze", "{mlp}", "--device", "warp-drive-9000"], "warp-drive-9000"),
    (["analyze", "{mlp}", "--capacity", "lots"], "size"),
    (["analyze", "{mlp}", "--precision", "fp8"], "fp8"),
    (["analyze", "{mlp}", "--optimizer", "lion"], "lion"),
    (["analyze", "{mlp}", "--batch-size", "0"], "batch size"),
    (["analyze", "{mlp}", "--checkpoint", "nothing.matches.*"], "matches no module"),
    (["analyze", "{mlp}", "--device", "A100-80GB", "--alloc-conf", "max_split_size_mb:banana"], "banana"),
]


@pytest.mark.parametrize("args,needle", BAD, ids=[b[1] for b in BAD])
def test_bad_input_one_line_exit_2(model_path, args, needle):
    args = [a.replace("{mlp}", model_path("mlp")) for a in args]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    msg = r.output.strip()
    assert needle in msg
    assert "Traceback" not in msg


MODEL_FILES = {
    "syntax": ("def build_model(:\n", "syntax error"),
    "no_build": ("import torch\ndef make_batch(b):\n    return torch.randn(b, 4)\n", "build_model"),
    "no_batch": ("import torch\ndef build_model():\n    return torch.nn.Linear(4, 4)\n", "make_batch"),
    "batch_raises": ("import torch\ndef build_model():\n    return torch.nn.Linear(4, 4)\n"
                     "def make_batch(b):\n    raise ValueError('no data here')\n", "no data here"),
    "not_module": ("def build_model():\n    return 42\ndef make_batch(b):\n    return None\n", "nn.Module"),
    "import_fails": ("import not_a_real_package_xyz\n", "failed to import"),
}


@pytest.mark.parametrize("kind", sorted(MODEL_FILES))
def test_bad_model_files(write_model, kind):
    src, needle = MODEL_FILES[kind]
    r = CliRunner().invoke(cli, ["analyze", write_model(src)])
    assert r.exit_code == 2, r.output
    assert needle in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_untraceable_op_is_named(write_model):
    src = '''
import torch

@torch.library.custom_op("memplan_test::opaque", mutates_args=())
def opaque(x: torch.Tensor) -> torch.Tensor:
    return x.clone()

class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.inner = Inner()
    def forward(self, x):
        return self.inner(self.lin(x))

class Inner(torch.nn.Module):
    def forward(self, x):
        return torch.ops.memplan_test.opaque(x)

def build_model():
    return M()

def make_batch(b):
    return torch.randn(b, 8)
'''
    r = CliRunner().invoke(cli, ["analyze", write_model(src), "--no-fallback"])
    assert r.exit_code == 2, r.output
    assert "memplan_test.opaque" in r.output or "memplan_test::opaque" in r.output
    assert "inner" in r.output
    assert "fallback" in r.output


def test_debug_shows_traceback(model_path):
    r = CliRunner().invoke(cli, ["analyze", "missing.py", "--debug"])
    assert r.exit_code == 2
    assert "Traceback" in r.output


def test_help_is_fast_and_does_not_import_torch():
    code = "import sys; from memplan.cli.main import cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_command_imports_only_its_own_module():
    """`memplan analyze` imports memplan.cli.analyze and no other command's module (memplan.cli.main's lazy
    group): the other commands and what only they import cost every analyze process nothing."""
    code = ("import sys; from memplan.cli.main import cli; cli.main(['analyze', '--help'], standalone_mode=False); "
            "print(sorted(m for m in sys.modules if m.startswith('memplan.cli.') and '._' not in m))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "['memplan.cli.analyze', 'memplan.cli.main']"


@pytest.mark.slow
def test_json_output_does_not_import_the_table_renderer():
    code = ("import sys; from memplan.cli.main import cli\ntry:\n"
            "    cli.main(['analyze', 'fixtures/models/mlp.py', '--format', 'json', '-q'], standalone_mode=False)\n"
            "finally:\n    print('memplan.report.text' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 0 and r.stdout.strip().splitlines()[-1] == "False", r.stderr[-2000:]


def test_help_lists_every_command_and_a_typo_gets_suggestions():
    r = subprocess.run([sys.executable, "-m", "memplan", "--help"], capture_output=True, text=True)
    listed = [line.split()[0] for line in r.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == sorted(["analyze", "plan", "validate", "shard", "devices", "diagnose", "decode"])
    r = subprocess.run([sys.executable, "-m", "memplan", "analyse"], capture_output=True, text=True)
    assert r.returncode == 2 and "Did you mean 'analyze'?" in r.stderr


def test_python_m_memplan():
    r = subprocess.run([sys.executable, "-m", "memplan", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "analyze" in r.stdout
