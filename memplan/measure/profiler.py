"""`memory_profile()`: torch.profiler with CPU memory events, without kineto's start/stop chatter.

Kineto prints `USDT: ... profiler_start/stop` lines on the process's stderr (file descriptor 2) when a
profiling session starts and stops; only those two moments are silenced, so errors and warnings the
profiled code prints in between still reach the user.
"""
from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def _silence_fd2():
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real stderr (e.g. captured by a test runner)
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


@contextlib.contextmanager
def memory_profile():
    """A `torch.profiler.profile(activities=[CPU], profile_memory=True)` session; yields the profiler."""
    from torch.profiler import ProfilerActivity, profile

    prof = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
    with _silence_fd2():
        prof.__enter__()
    try:
        yield prof
    finally:
        with _silence_fd2():
            prof.__exit__(None, None, None)
