"""Robustness: encodings, pasted logs, empty and binary input, estimates, property-based fuzzing."""
from __future__ import annotations

import os
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memplan.diagnose import Category, diagnose
from memplan.errors import UserError

from corpus_helpers import LOGS

NPU_OOM = ("RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; "
           "49.47 GiB already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved in total "
           "by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")


def test_empty_input():
    for empty in ("", b""):
        d = diagnose(empty)
        assert d.primary_category == Category.UNKNOWN and not d.incidents
        assert any("empty" in n for n in d.notes)


def test_binary_garbage_gives_clear_answer():
    d = diagnose(bytes(range(256)) * 200 + b"\x00\x01\x02")
    assert d.primary_category == Category.UNKNOWN
    assert any("binary" in n for n in d.notes)


def test_clean_log_says_nothing_found():
    d = diagnose("step 1 loss 2.3\nstep 2 loss 2.1\n")
    assert not d.incidents and any("No error" in n for n in d.notes)


def test_gbk_log(tmp_path):
    text = "训练开始，显存不足：\n" + NPU_OOM + "\n请检查日志。\n"
    p = tmp_path / "gbk.log"
    p.write_bytes(text.encode("gbk"))
    d = diagnose(str(p))
    assert d.primary_category == Category.FRAGMENTATION
    assert any("gbk" in n for n in d.notes)


def test_utf16_log(tmp_path):
    p = tmp_path / "u16.log"
    p.write_bytes(("hello\n" + NPU_OOM + "\n").encode("utf-16"))
    assert diagnose(str(p)).primary_category == Category.FRAGMENTATION


def test_quoted_and_wrapped_paste():
    words = NPU_OOM.split(" ")
    wrapped = "\n".join("> " + " ".join(words[i:i + 6]) for i in range(0, len(words), 6))
    d = diagnose("some chatter\n" + wrapped + "\n")
    assert d.primary_category == Category.FRAGMENTATION
    assert d.primary.numbers["requested_bytes"] == round(5.03 * 2**30)
    assert d.primary.numbers["free_bytes"] == int(round(1.32 * 2**30))


def test_several_files_and_incidents(tmp_path):
    a = LOGS / "npu_kernel_tilelang82.log"
    b = LOGS / "hccl_comm_vllmascend3413.log"
    d = diagnose([str(a), str(b)])
    cats = [i.category for i in d.incidents]
    assert Category.KERNEL_FAULT in cats and Category.COMM in cats
    assert d.primary_category == Category.KERNEL_FAULT  # the cause before the timeouts it triggers


def test_repeated_incidents_are_merged():
    line = "torch_npu.memory: [ERROR] [1] Get a block from the existing pool failed. This error log can be ignored.\n"
    d = diagnose((line + "step\n" * 40) * 5)
    assert len(d.incidents) == 1 and d.incidents[0].occurrences == 5
    assert d.primary_category == Category.BENIGN


def test_missing_file_is_user_error():
    with pytest.raises(UserError):
        diagnose("does/not/exist.log")
    with pytest.raises(UserError):
        diagnose([])


def test_estimate_relates_failure_to_prediction():
    est = {"peak_allocated_bytes": 40 * 2**30, "peak_reserved_bytes": 44 * 2**30, "peak_phase": "backward",
           "breakdown_at_peak": {"activations": 30 * 2**30, "parameters": 5 * 2**30, "optimizer_state": 5 * 2**30},
           "capacity_bytes": 64 * 2**30, "device": "npu"}
    d = diagnose(NPU_OOM, estimate=est)
    inc = d.primary
    assert inc.estimate["predicted_fits"] is True
    assert inc.estimate["largest_category_at_peak"] == "activations"
    assert inc.estimate["excess_over_prediction_bytes"] > 0
    assert "predicted a peak" in inc.summary
    with pytest.raises(UserError):
        diagnose(NPU_OOM, estimate=[1, 2])


def test_capacity_advice_follows_breakdown():
    est = {"peak_allocated_bytes": 70 * 2**30, "peak_reserved_bytes": 75 * 2**30,
           "breakdown_at_peak": {"optimizer_state": 40 * 2**30, "activations": 10 * 2**30}, "capacity_bytes": 64 * 2**30}
    d = diagnose(str(LOGS / "npu_capacity_vllmascend6611.log"), estimate=est)
    assert d.primary.advice[0].id == "MP003"
    assert d.primary.estimate["predicted_fits"] is False


def test_numeric_code_contradicted_by_text():
    log = ("RuntimeError: NPU function error: AclrtSynchronizeDevice, error code is 100000\n"
           "[ERROR] 2025-01-01-00:00:00 (PID:1, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n"
           "EZ9999: Inner Error!\n"
           "EZ9999: The error from device(chipId:0, dieId:0), there is an aicore error exception, core id is 0\n")
    d = diagnose(log)
    assert d.primary_category == Category.KERNEL_FAULT
    assert "100000" in d.primary.codes


LOG_ALPHABET = st.sampled_from([
    NPU_OOM, "EL0004: Failed to allocate memory.", "error code is 507015", "EI0002: Notify register times out",
    "Traceback (most recent call last):", '  File "train.py", line 3, in <module>', "> ", "\x00\xff", "GiB", "(",
    "Tried to allocate 1.00 GiB (GPU 0; ", "reserved in total by PyTorch)", "训练", "ERR00100", "\n", "\r\n",
])


@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(LOG_ALPHABET, st.text(max_size=80)), max_size=40))
def test_random_logs_never_crash(parts):
    start = time.perf_counter()
    d = diagnose("".join(parts) + "\n")
    assert time.perf_counter() - start < 2
    assert isinstance(d.to_dict()["incidents"], list)
    for inc in d.incidents:
        assert inc.category in Category and inc.advice


@settings(max_examples=40, deadline=2000)
@given(st.binary(max_size=4000))
def test_random_bytes_never_crash(data):
    d = diagnose(data)
    assert d.primary_category in Category


@settings(max_examples=40, deadline=2000)
@given(st.integers(min_value=0, max_value=len(NPU_OOM) - 1), st.sampled_from(["", "\n", "> ", "\x00", "??"]))
def test_mutated_oom_message(pos, insert):
    d = diagnose(NPU_OOM[:pos] + insert + NPU_OOM[pos:])
    assert d.primary_category in Category


@pytest.mark.slow
def test_200mb_log_in_bounded_memory(tmp_path):
    p = tmp_path / "big.log"
    noise = ("[2025-01-01 00:00:00] INFO step 12345 loss 1.2345 lr 0.0001 grad_norm 0.5 tokens/s 12345.6 "
             "samples 64\n") * 1000
    target = 200 * 1024 * 1024
    with open(p, "w") as f:
        written = 0
        i = 0
        while written < target:
            f.write(noise)
            written += len(noise)
            i += 1
            if i % 400 == 0:
                f.write("Warning: something minor happened\n")
        f.write(NPU_OOM + "\n")
    assert os.path.getsize(p) >= target
    tracemalloc.start()
    d = diagnose(str(p))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert d.primary_category == Category.FRAGMENTATION
    assert peak < 64 * 1024 * 1024, peak
