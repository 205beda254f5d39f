"""Shared builders for the report tests: a hand-computed Trace and a hand-computed snapshot."""
from __future__ import annotations

from array import array

from memplan.trace.events import StorageRecord, Trace


def _rec(nbytes, category, module, phase):
    return StorageRecord(nbytes=nbytes, category=category, module=module, phase=phase, op="aten::x",
                         step=1, micro_step=0)


def small_trace() -> Trace:
    """13 events; totals 1000 1500 1700 4700 5400 4700 5700 2700 3200 3000 5000 5400 5000.

    Peak 5700 at event 6 (backward): parameters 1500, inputs 200, activations 3000, gradients 1000.
    """
    st = [
        _rec(1000, "parameters", "fc1", "build"),        # 0
        _rec(500, "parameters", "fc2", "build"),         # 1
        _rec(200, "inputs", "", "inputs"),               # 2
        _rec(3000, "activations", "fc1", "forward"),     # 3
        _rec(700, "temporaries", "fc2", "forward"),      # 4
        _rec(1000, "gradients", "fc1", "backward"),      # 5
        _rec(500, "gradients", "fc2", "backward"),       # 6
        _rec(2000, "optimizer_state", "fc1", "optimizer"),  # 7
        _rec(400, "temporaries", "", "optimizer"),       # 8
    ]
    ev = array("q", [0, 1, 2, 3, 4, ~4, 5, ~3, 6, ~2, 7, 8, ~8])
    marks = [(2, "inputs", 1, 0), (3, "forward", 1, 0), (6, "backward", 1, 0), (10, "optimizer", 1, 0)]
    return Trace(storages=st, events=ev, marks=marks, steps=1)


def spike_trace(n: int = 50_000, spike_at: int = 31_337) -> Trace:
    """Saw-tooth alloc/free pairs with one large spike; the peak must survive downsampling."""
    st = [_rec(1000, "parameters", "w", "build")]
    ev = array("q", [0])
    for i in range(n):
        size = 10_000_000 if i == spike_at else 100 + (i % 97)
        st.append(_rec(size, "temporaries", f"layer{i % 5}", "forward"))
        ev.append(len(st) - 1)
        ev.append(~(len(st) - 1))
    return Trace(storages=st, events=ev, marks=[(1, "forward", 1, 0)], steps=1)


MiB = 1 << 20
USER_A = {"filename": "/home/u/train.py", "line": 10, "name": "step"}
USER_A2 = {"filename": "/home/u/train.py", "line": 20, "name": "step"}
USER_B = {"filename": "/home/u/model.py", "line": 5, "name": "forward"}
TORCH_F = {"filename": "/x/site-packages/torch/nn/modules/linear.py", "line": 125, "name": "forward"}


def small_snapshot() -> dict:
    """Hand-computed: baseline 900000 (400000 still live + 500000 freed in the trace), peak 4900000 at
    entry 5; reserved 10 MiB; cached free 5767168 B, largest free block 4194304 B."""
    a1, a2, a3, ap, ax = 0x1000, 0x200000, 0x400000, 0x800000, 0x900000
    trace = [
        {"action": "segment_alloc", "addr": a1, "size": 10 * MiB, "stream": 0, "frames": []},
        {"action": "alloc", "addr": a1, "size": 1_000_000, "stream": 0, "frames": [TORCH_F, USER_A],
         "time_us": 100},
        {"action": "alloc", "addr": a2, "size": 2_000_000, "stream": 0, "frames": [USER_B], "time_us": 101},
        {"action": "free_requested", "addr": a2, "size": 2_000_000, "stream": 0, "frames": []},
        {"action": "free_completed", "addr": a2, "size": 2_000_000, "stream": 0, "frames": []},
        {"action": "alloc", "addr": a3, "size": 3_000_000, "stream": 0, "frames": [TORCH_F, USER_A2],
         "time_us": 105},
        {"action": "free_completed", "addr": ax, "size": 500_000, "stream": 0, "frames": []},
        {"action": "oom", "size": 8_000_000, "device_free": 123, "stream": 0, "frames": [USER_A2]},
    ]
    blocks = [
        {"address": a1, "size": 1 * MiB, "requested_size": 1_000_000, "state": "active_allocated",
         "frames": [TORCH_F, USER_A]},
        {"address": a3, "size": 3 * MiB, "requested_size": 3_000_000, "state": "active_allocated",
         "frames": [TORCH_F, USER_A2]},
        {"address": ap, "size": 512 * 1024, "requested_size": 400_000, "state": "active_allocated",
         "frames": []},
        {"address": ap + 512 * 1024, "size": 4 * MiB, "requested_size": 0, "state": "inactive",
         "frames": []},
        {"address": ap + 9 * MiB, "size": 1_572_864, "requested_size": 0, "state": "inactive",
         "frames": []},
    ]
    seg = {"device": 0, "address": a1, "total_size": 10 * MiB, "stream": 0, "segment_type": "large",
           "segment_pool_id": (0, 0), "allocated_size": 4_718_592, "active_size": 4_718_592,
           "requested_size": 4_400_000, "blocks": blocks}
    return {"segments": [seg], "device_traces": [trace]}
