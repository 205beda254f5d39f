"""The module probe (memplan.plan.checkpoint_probe) of an N-layer decoder from probes of the same model
with d, d+1 and d+2 layers, as block-once tracing does for the trace (memplan.trace.blocks).

Identical layers (proven on the full model: `blocks.hf_stack`) have identical rows (FLOPs, input and
output bytes, calls); what grows with the depth grows by the same amount per layer (the root's FLOPs,
the call position of the modules after the stack). So the N-layer probe is written from the d- and
(d+1)-layer ones: the rows of the last layer are copied for the new layers (an integer that differs
between the last two layers, such as a call position, keeps its step), every other integer is
extrapolated linearly, and the new layers' names go right after the last layer's. The same rule must
write the (d+2)-layer probe exactly (the module names in order, every row of every table); otherwise
the full probe runs.
"""
from __future__ import annotations

import re
from dataclasses import fields, replace

from memplan.plan.checkpoint_probe import ModuleProbe, probe_modules
from memplan.trace.blocks import hf_stack, reduced_workload
from memplan.workload import TrainConfig

_TABLES = ("classes", "order", "calls", "in_bytes", "out_bytes", "out_numel", "flops", "containers")


def probe_block_once(workload, cfg: TrainConfig, family: str = "cpu") -> ModuleProbe:
    """`probe_modules(workload, cfg, family)`, from three shallow probes where the layers are identical."""
    probe_cfg = cfg.with_(checkpoint=(), grad_accum=1)
    stack, _why = hf_stack(workload, probe_cfg)
    if stack is not None:
        d = stack.first_uniform + 1
        if d + 2 < stack.n_layers:
            try:
                probes = [probe_modules(reduced_workload(workload, k), cfg, family) for k in (d, d + 1, d + 2)]
            except Exception:  # noqa: BLE001 - the full probe reports the real failure
                probes = None
            if probes is not None:
                rule = _Grow(stack.path, d)
                if _same(rule.write(probes[0], probes[1], d + 2), probes[2]):
                    return rule.write(probes[0], probes[1], stack.n_layers)
    return probe_modules(workload, cfg, family)


def _same(a: ModuleProbe | None, b: ModuleProbe) -> bool:
    """Equal: the same names in the same order, the same row for each name in every table (the tables are
    looked up by name, memplan.plan.knapsack.module_graph; FlopCounterMode's row order is its own)."""
    return a is not None and a == b


class _Grow:
    """The probe with more layers from those at d and d+1 layers (see the module's docstring)."""

    def __init__(self, path: str, d: int):
        self.pat = re.compile(re.escape(path) + r"\.(\d+)(\..*)?$")
        self.path, self.d = path, d

    def write(self, a: ModuleProbe, b: ModuleProbe, n: int) -> ModuleProbe | None:
        if a.root_class != b.root_class:
            return None
        out = {"forward_flops": a.forward_flops + (b.forward_flops - a.forward_flops) * (n - self.d)}
        names = self._table(dict.fromkeys(a.names, 0), dict.fromkeys(b.names, 0), n)
        if names is None:
            return None
        out["names"] = tuple(names)
        for t in _TABLES:
            table = self._table(getattr(a, t), getattr(b, t), n)
            if table is None:
                return None
            out[t] = table
        return replace(b, **{f.name: out[f.name] for f in fields(b) if f.name in out})

    def _key(self, name: str):
        m = self.pat.match(name)
        return (int(m.group(1)), m.group(2) or "") if m else None

    def _table(self, a: dict, b: dict, n: int) -> dict | None:
        """Table b (d+1 layers) grown to n layers; a (d layers) gives the growth of the other rows."""
        keys = list(b)
        last = [k for k, name in enumerate(keys) if (self._key(name) or (-1,))[0] == self.d]
        prev = [name for name in keys if (self._key(name) or (-1,))[0] == self.d - 1]
        if not last and not prev:   # no layer rows (e.g. the containers): every row grows or stays
            out = {name: self._other(a, b, name, n) for name in keys}
            return None if _MISSING in out.values() else out
        if not last or last != list(range(last[0], last[-1] + 1)):
            return None
        block = [keys[k] for k in last]
        if sorted(self._key(x)[1] for x in block) != sorted(self._key(x)[1] for x in prev):
            return None   # (the first layer's rows may come in another order: first-seen parents)
        out = {}
        for name in keys[:last[-1] + 1]:
            out[name] = self._other(a, b, name, n)
        for i in range(self.d + 1, n):
            for name in block:
                rest = self._key(name)[1]
                step = _step(b[name], b[f"{self.path}.{self.d - 1}{rest}"])
                if step is None:
                    return None
                out[f"{self.path}.{i}{rest}"] = b[name] if step == 0 else b[name] + step * (i - self.d)
        for name in keys[last[-1] + 1:]:
            out[name] = self._other(a, b, name, n)
        return None if _MISSING in out.values() else out

    def _other(self, a: dict, b: dict, name: str, n: int):
        if self._key(name) is not None:
            return b[name]          # a layer present at d+1 layers: unchanged by more layers after it
        if name not in a:
            return _MISSING
        step = _step(b[name], a[name])
        return _MISSING if step is None else (b[name] if step == 0 else b[name] + step * (n - self.d - 1))


_MISSING = object()


def _step(x, y):
    """x - y for integers, 0 for equal other values, None otherwise."""
    if isinstance(x, int) and isinstance(y, int) and not isinstance(x, bool):
        return x - y
    return 0 if x == y else None
