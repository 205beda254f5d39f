"""The CPU rank measurement recovers frees made on gloo's worker threads, which neither the profiler's
record nor the allocator's running total see (c10's ProfiledCPUMemoryReporter only accounts frees on
threads with profiling enabled)."""
import threading

import torch

from memplan.distributed._measure import _ledger, allocation_events, recovered_frees

MB = 1 << 20


def _ev(t, size, total, ptr, label="backward::1::1", c10d_end=None):
    return (t, t, size, total, label, ptr, c10d_end)


def test_free_on_another_thread_is_missing_from_the_allocator_total():
    """The mechanism itself: a tensor freed on a thread the profiler does not follow leaves no event and
    stays in `total_allocated`."""
    from memplan.measure.profiler import memory_profile

    with memory_profile() as prof:
        box = [torch.ones(MB)]           # 4 MiB, allocated on this thread
        t = threading.Thread(target=box.pop)
        t.start()
        t.join()                         # ... and freed on another one
        c = torch.ones(1 << 16)          # 256 KiB, allocated and freed here
        del c
    ev = [e for e in allocation_events(prof) if abs(e[2]) >= 1 << 18]
    assert [e[2] for e in ev] == [4 * MB, 1 << 18, -(1 << 18)]
    assert ev[1][3] - ev[0][3] == 1 << 18      # the 4 MiB are still counted after they were freed


def test_with_the_flag_the_allocator_total_counts_the_other_threads_free():
    """c10's caffe2_report_cpu_memory_usage flag: the same free on another thread is now subtracted from
    `total_allocated` (still no event), it is put back when it happened, and the flag is back off
    afterwards."""
    from memplan import compat
    from memplan.measure.profiler import memory_profile

    with compat.cpu_allocator_counts_every_thread() as every_thread:
        assert every_thread
        with memory_profile() as prof:
            box = [torch.ones(MB)]
            t = threading.Thread(target=box.pop)
            t.start()
            t.join()
            c = torch.ones(1 << 16)
            del c
    assert not compat._c10_flag("FLAGS_caffe2_report_cpu_memory_usage").value
    events = allocation_events(prof)
    ev = [e for e in events if abs(e[2]) >= 1 << 18]
    assert [e[2] for e in ev] == [4 * MB, 1 << 18, -(1 << 18)]
    assert ev[1][3] - ev[0][3] == (1 << 18) - 4 * MB   # the 4 MiB left the total when they were freed
    assert (ev[1][0], 4 * MB) in recovered_frees(events)   # ... seen at the next event


def test_unseen_drop_times_a_block_freed_on_another_thread():
    """DDP's broadcast copy under load (the CI failure): freed on gloo's thread after DDP allocated its
    bucket at another address; no free event, no reuse. The all-thread total shows when."""
    events = [
        _ev(1, 100, 100, 0xA, "build::0::0"),   # the flattened copy
        _ev(3, 100, 100, 0xB, "build::0::0"),   # the bucket; the copy was freed in between
        _ev(4, 10, 110, 0xC),                   # a step
        _ev(5, -10, 100, 0xC),
    ]
    assert recovered_frees(events) == [(3, 100)]
    m = _ledger(events, steps=1, every_thread=True)
    assert m.running_sum_peak_bytes == 210 and m.peak_allocated_bytes == 110 and m.every_thread
    flagless = [(t, q, s, t_s, lab, p, e) for (t, q, s, _tot, lab, p, e), t_s in zip(events, [100, 200, 210, 200])]
    assert recovered_frees(flagless) == []        # without the flag: nothing to go by (the old failure)
    assert _ledger(flagless, steps=1).peak_allocated_bytes == 210


def test_a_collective_temporary_keeps_its_op_end_with_the_flag():
    events = [
        _ev(1, 50, 50, 0xA, c10d_end=2),        # reduce-scatter's copy, freed on gloo's thread at 4
        _ev(3, 20, 70, 0xB),
        _ev(5, 1, 21, 0xC),                     # the total already fell by 50
    ]
    assert recovered_frees(events) == [(2, 50)]   # the drop of 50 at 5 is its own, not used again
    assert _ledger(events, steps=1, every_thread=True).peak_allocated_bytes == 50
    # a block of the same size allocated earlier and never freed does not take the temporary's drop
    events = [_ev(0, 50, 50, 0xD)] + [(t, q, s, tot + 50, lab, p, e) for t, q, s, tot, lab, p, e in events]
    assert recovered_frees(events) == [(2, 50)]


def test_reused_address_recovers_the_lost_free():
    events = [
        _ev(1, 10, 10, 0xA),
        _ev(2, 100, 110, 0xB, c10d_end=3),   # a collective's copy; its free happens on gloo's thread
        _ev(4, 5, 115, 0xC),                 # after the collective: the copy is gone in reality
        _ev(5, 100, 215, 0xB),               # the address is handed out again
        _ev(6, -100, 115, 0xB),
    ]
    assert recovered_frees(events) == [(3, 100)]
    m = _ledger(events, steps=1)
    assert m.raw_peak_allocated_bytes == 215
    assert m.peak_allocated_bytes == 115 and m.recovered_free_bytes == 100 and m.recovered_frees == 1


def test_collective_temporary_never_freed_is_recovered_at_its_op_end():
    events = [
        _ev(1, 50, 50, 0xA, c10d_end=2),     # inside a collective, no free recorded
        _ev(3, 20, 70, 0xB),
        _ev(4, -20, 50, 0xB),
    ]
    m = _ledger(events, steps=1)
    assert m.peak_allocated_bytes == 50      # 50 at t=1; 20 at t=3 once the temporary is gone
    assert m.recovered_free_bytes == 50


def test_no_lost_frees_no_change():
    events = [_ev(1, 10, 10, 0xA), _ev(2, 20, 30, 0xB), _ev(3, -10, 20, 0xA), _ev(4, 10, 30, 0xA)]
    m = _ledger(events, steps=1)
    assert recovered_frees(events) == []
    assert m.peak_allocated_bytes == m.raw_peak_allocated_bytes == 30


def test_fake_trace_has_gloo_reduce_scatter_copy_on_cpu_only():
    from memplan.api import load_workload
    from memplan.distributed._fake_trace import trace_rank
    from memplan.step import Target
    from memplan.workload import TrainConfig

    wl = load_workload("fixtures/models/mlp.py", None, None)
    cfg = TrainConfig(batch_size=2)
    cpu, _ = trace_rank(wl, cfg, "fsdp", 2, 0, Target(family="cpu"))
    cuda, _ = trace_rank(wl, cfg, "fsdp", 2, 0, Target(family="cuda"))
    clones = [s.nbytes for s in cpu.storages if s.op == "clone" and s.phase == "backward"]
    # one copy of each unit's padded, unsharded gradients per backward: 2 steps x 4 units
    assert sorted(set(clones)) == [819_600, 4_202_496, 16_785_408]
    assert len(clones) == 2 * 4
    assert not [s for s in cuda.storages if s.op == "clone" and s.phase == "backward"]
