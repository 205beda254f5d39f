"""Start `world_size` rank processes on this machine the way torchrun does (one process per rank,
MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE / LOCAL_RANK in the environment) and collect their
results. Loopback only (127.0.0.1); the port is a free one picked by the OS."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from memplan.errors import UserError


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn_ranks(spec: dict, world_size: int, timeout_s: float = 600.0, threads_per_rank: int = 1) -> list[dict]:
    """Run `memplan.distributed._worker` once per rank and return the per-rank result dicts."""
    with tempfile.TemporaryDirectory(prefix="memplan-dist-") as tmp:
        spec_path = os.path.join(tmp, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        port = free_port()
        procs = []
        for rank in range(world_size):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                       WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(world_size),
                       OMP_NUM_THREADS=str(threads_per_rank))
            if spec["device"] == "cpu":
                env.setdefault("GLOO_SOCKET_IFNAME", "lo")
            log = open(os.path.join(tmp, f"rank{rank}.log"), "w+", encoding="utf-8")
            p = subprocess.Popen([sys.executable, "-m", "memplan.distributed._worker", spec_path, str(rank)],
                                 env=env, stdout=log, stderr=subprocess.STDOUT)
            procs.append((p, log))
        deadline = time.monotonic() + timeout_s
        timed_out = False
        for p, _log in procs:
            try:
                p.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
        if timed_out:
            for p, _log in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        results = []
        for rank, (p, log) in enumerate(procs):
            log.seek(0)
            tail = log.read()[-3000:]
            log.close()
            path = f"{spec_path}.rank{rank}.json"
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    res = json.load(f)
            else:
                why = "timed out" if timed_out else f"exited with code {p.returncode}"
                res = {"rank": rank, "ok": False, "error": f"rank {rank} {why} without a result"}
            res["log_tail"] = tail
            results.append(res)
        if timed_out and all(not r.get("ok") for r in results):
            raise UserError(f"the distributed job did not finish within {timeout_s:.0f} s")
        return results
