"""`memplan diagnose` and `memplan decode` through click's CliRunner."""
from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from memplan.cli.main import cli

from corpus_helpers import LOGS

FRAG = str(LOGS / "npu_frag_touchnet100.log")


def _run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_diagnose_table():
    r = _run("diagnose", FRAG)
    assert r.exit_code == 0
    assert "PRIMARY  fragmentation" in r.output
    assert "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in r.output
    assert "5.03 GiB" in r.output


def test_diagnose_json_envelope():
    r = _run("diagnose", FRAG, "--format", "json")
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert data["schema_version"] and data["memplan_version"] and data["command"] == "diagnose"
    assert data["primary_category"] == "fragmentation"
    inc = data["incidents"][0]
    for key in ("category", "codes", "numbers", "summary", "advice", "confidence"):
        assert key in inc
    assert inc["numbers"]["requested_bytes"] > 0


def test_diagnose_stdin_and_several_files():
    r = _run("diagnose", "-", str(LOGS / "nccl_comm_sglang3836.log"), input=open(FRAG).read())
    assert r.exit_code == 0
    assert "fragmentation" in r.output and "comm" in r.output


def test_diagnose_with_estimate(tmp_path):
    est = tmp_path / "analyze.json"
    est.write_text(json.dumps({"peak_allocated_bytes": 50 * 2**30, "peak_reserved_bytes": 55 * 2**30,
                               "peak_phase": "forward", "breakdown_at_peak": {"activations": 30 * 2**30},
                               "capacity_bytes": 64 * 2**30, "device": "npu"}))
    r = _run("diagnose", FRAG, "--estimate", str(est), "--format", "json")
    assert r.exit_code == 0
    inc = json.loads(r.output)["incidents"][0]
    assert inc["estimate"]["peak_phase"] == "forward"


def test_diagnose_bad_input_is_one_line_exit_2(tmp_path):
    r = _run("diagnose", "no/such/file.log")
    assert r.exit_code == 2
    assert r.output.strip().count("\n") == 0 and "no such log file" in r.output
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = _run("diagnose", FRAG, "--estimate", str(bad))
    assert r.exit_code == 2 and "estimate" in r.output
    wrong = tmp_path / "wrong.json"
    wrong.write_text("{}")
    assert _run("diagnose", FRAG, "--estimate", str(wrong)).exit_code == 2


def test_diagnose_empty_binary_and_blank_are_bad_input(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    binary = tmp_path / "core.bin"
    binary.write_bytes(bytes(range(256)) * 100)
    blank = tmp_path / "blank.log"
    blank.write_text("\n   \n\t\n")
    for path, word in ((empty, "empty"), (binary, "binary"), (blank, "no log lines")):
        for fmt in ("table", "json"):
            r = _run("diagnose", str(path), "--format", fmt)
            assert r.exit_code == 2, (path, r.output)
            assert r.output.strip().count("\n") == 0 and word in r.output and "Traceback" not in r.output


def test_decode_table_and_json():
    r = _run("decode", "207001", "EL0004", "ERR00100", "HCCL_E_TIMEOUT")
    assert r.exit_code == 0
    assert "ACL_ERROR_RT_MEMORY_ALLOCATION" in r.output and "Memory_Allocation_Failure" in r.output
    r = _run("decode", "507015", "--format", "json")
    data = json.loads(r.output)
    assert data["command"] == "decode" and data["codes"][0]["category"] == "kernel-fault"


def test_decode_unknown_and_garbage():
    r = _run("decode", "507999")
    assert r.exit_code == 0 and "not in memplan's catalogs" in r.output
    r = _run("decode", "hello world")
    assert r.exit_code == 2 and r.output.startswith("memplan: error:")


def test_cli_does_not_import_torch():
    code = ("import sys, memplan.cli.main, memplan.cli.diagnose, memplan.cli.decode, memplan.diagnose; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
