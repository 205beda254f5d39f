"""Block-once tracing of a stack made of runs of identical layers (e.g. the first layers checkpointed, one
layer with only its attention and MLP checkpointed, the rest plain: what `memplan plan` recommends).

memplan.trace.blocks writes an N-layer trace from traces at d, d+1 and d+2 layers when every layer from
d on is identical. Here the layers fall into runs of identical layers (same class, parameters, hooks,
attributes, per-layer config values and checkpointed submodules), and each long run is a dimension of
its own: memplan traces the base model (one layer of each long run, every layer of the short ones), the
base with one more layer in each long run in turn, and the base with two more in every long run. From
the base and each one-more trace it finds what one more layer of that run adds to the event stream (the
chunks and where they go, `blocks.align`), writes the check model's trace from all of them at once and
requires it to equal the traced check byte for byte; then writes the full depth the same way.

The runs' layer indices are renumbered as in `blocks.extend`: a base token keeps its index plus, per run,
the count of inserted layers times its shift in that run's one-more trace; a run's inserted chunk tokens
must name layers of that run only (else: the full trace). Records whose size grows with the depth
(clip_grad_norm's stacked norms) are sized as in `blocks.synthesize`, grown by each run's growth per layer.
On one device and per DDP or FSDP rank (memplan.trace.block_once's `runs_fn`; FSDP ranks grow each run
from 2 layers, `Runs.base`, as `blocks.from_reduced` starts there).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from memplan.trace import blocks
from memplan.step import frozen_heap
from memplan.trace.events import Trace

GROW = 3            # a run of at least this many layers is traced at 1, 2 and 3 layers and written out
MAX_TRIES = 25      # strategy combinations tried per encoding of the frees


@dataclass(frozen=True)
class Runs:
    """The stack at `path`: `runs` (first layer, length) of identical layers in order; `grow`: the runs
    written out from `base` layers (1; 2 per FSDP rank, as `blocks.from_reduced` starts there); `ckpt`: per
    layer, its checkpointed module names relative to the layer; `outside`: checkpointed module names
    outside the stack."""

    path: str
    n_layers: int
    runs: tuple[tuple[int, int], ...]
    grow: tuple[int, ...]
    ckpt: tuple[frozenset, ...]
    outside: tuple[str, ...]
    base: int = 1

    def keep(self, extra: dict[int, int]) -> list[int]:
        """Original layer indices of a reduced model: each grown run's first base + extra[r] layers, every
        layer of the others."""
        out: list[int] = []
        for r, (start, length) in enumerate(self.runs):
            n = self.base + extra.get(r, 0) if r in self.grow else length
            out.extend(range(start, start + n))
        return out

    def checkpoint(self, keep: list[int]) -> tuple[str, ...]:
        """The checkpoint names of the reduced model with layers `keep`."""
        names = [f"{self.path}.{j}{rel}" for j, o in enumerate(keep) for rel in sorted(self.ckpt[o])]
        return self.outside + tuple(names)


def layer_runs(workload, cfg, base: int = 1) -> tuple[Runs | None, str]:
    """The runs of an HF-config workload whose layers differ only in runs (None and why otherwise); the
    grown runs traced from `base` layers."""
    config = workload.extra.get("hf_config")
    n = getattr(config, "num_hidden_layers", None)
    if config is None or workload.extra.get("kind") != "lm" or not isinstance(n, int) or n < blocks.MIN_LAYERS:
        return None, "not a single-stack decoder model with enough layers"
    try:
        model = blocks._meta_model(workload, config)
    except Exception as exc:  # noqa: BLE001 - an optimisation; the full trace decides
        return None, f"the model cannot be built on the meta device ({type(exc).__name__})"
    path = blocks._stack_path(model, n)
    if path is None:
        return None, f"no module list of {n} layers"
    ckpt = blocks._checkpointed(model, path, cfg.checkpoint)
    if any("<outer>" in c for c in ckpt):
        return None, "a module around the stack is checkpointed"
    lists = [list(getattr(config, k)) for k in blocks._per_layer_lists(config, n)]
    stack = model.get_submodule(path)
    classes = [(blocks._signature(layer), ckpt[i], tuple(v[i] for v in lists)) for i, layer in enumerate(stack)]
    runs: list[tuple[int, int]] = []
    for i in range(n):
        if runs and classes[i] == classes[runs[-1][0]]:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((i, 1))
    grow = tuple(r for r, (_, length) in enumerate(runs) if length >= GROW + base - 1)
    base_n = sum(base if r in grow else length for r, (_, length) in enumerate(runs))
    traced = (len(grow) + 2) * base_n + 3 * len(grow)
    # from 2 layers (FSDP ranks) the traces' own costs weigh more: Llama-2-7B's 32 layers under zero3, 5 + 1 + 26
    # layers traced at 5, 6, 6 and 9 per rank took 1.11x the full trace (a run of `benchmarks/speed.py --ddp`
    # before this refusal)
    if not grow or traced >= n or (base > 1 and 2 * traced > n):
        return None, f"the layers form {len(runs)} runs: tracing them separately would not be faster"
    outside = tuple(_outside(model, path, cfg.checkpoint))
    return Runs(path, n, tuple(runs), grow, tuple(ckpt), outside, base), ""


def _outside(model, path: str, patterns) -> list[str]:
    """Checkpointed module names (as `step.apply_checkpointing` chooses them) outside the stack."""
    import fnmatch

    chosen: list[str] = []
    for name, _ in model.named_modules():
        if name and any(fnmatch.fnmatchcase(name, p) for p in patterns) and not any(
                name.startswith(c + ".") for c in chosen):
            chosen.append(name)
    return [c for c in chosen if c != path and not c.startswith(path + ".")]


# ---- synthesis -------------------------------------------------------------------------------------------
@dataclass
class _Edit:
    """What one more layer of a run does to the base's tokens: per base token its layer index shift (0/1)
    and, for a record whose size grows with the depth (`blocks.SIZED`), its growth in bytes; the inserted
    chunks (base position, tokens, layer indices in the grown trace, direction, record sizes or None)."""

    delta: list
    ins: list
    grow: list


def _edit(base: blocks._Tokens, grown: blocks._Tokens, how) -> _Edit | None:
    ops = blocks.align(base.toks, grown.toks, how)
    dirs = ops and blocks._directions(ops, base, grown)
    if ops is None or dirs is None:
        return None
    delta = [0] * len(base.toks)
    grow = [0] * len(base.toks)
    ins, i, d_iter = [], 0, iter(dirs)
    for op in ops:
        if op[0] == "eq":
            _, i0, j0, n = op
            for k in range(n):
                if base.idx[i0 + k] >= 0:
                    delta[i0 + k] = grown.idx[j0 + k] - base.idx[i0 + k]
                tok = base.toks[i0 + k]
                if base.nb is not None and tok[0] == "A" and tok[1][0] == blocks.SIZED:
                    grow[i0 + k] = grown.nb[j0 + k] - base.nb[i0 + k]
            i = i0 + n
        else:
            _, j, n = op
            ins.append((i, grown.toks[j:j + n], grown.idx[j:j + n], next(d_iter),
                        tuple(grown.nb[j:j + n]) if grown.nb is not None else None))
    return _Edit(delta, ins, grow)


def _merge(base: blocks._Tokens, edits: dict[int, _Edit], copies: dict[int, int], runs: Runs,
           shift: dict[int, int]) -> tuple[list, list, list | None] | None:
    """Tokens, layer indices and (with sized keys) record sizes of the base with `copies[r]` more layers in
    each grown run r (`shift[r]`: the layers inserted before run r; a `blocks.SIZED` record of the base grown
    by each run's growth per layer). A chunk that every run inserts alike at the same place (where the runs
    do not differ: building, the optimizer) is one chunk copied for all of them."""
    at: dict[int, dict[tuple, list[int]]] = {}
    for r, e in edits.items():
        for pos, toks, idx, direction, nbs in e.ins:
            at.setdefault(pos, {}).setdefault((tuple(toks), tuple(idx), direction, nbs), []).append(r)
    for here in at.values():
        for (_, idx, _, _), rs in here.items():
            if 1 < len(rs) < len(edits):
                return None    # shared by some runs only
            if len(rs) == 1 and any(x >= 0 and x not in _allowed(runs, rs[0]) for x in idx):
                return None    # naming another grown run's layers: its shift there is not known
    toks_out, idx_out = [], []
    nb_out = [] if base.nb is not None else None
    for i in range(len(base.toks) + 1):
        here = at.get(i, {})
        if len({key[2] for key in here}) > 1:
            return None
        for key, rs in sorted(here.items(), key=lambda kv: min(kv[1]) * kv[0][2]):
            shared = len(rs) > 1
            n = sum(copies[r] for r in rs)
            add = 0 if shared else shift[rs[0]]
            toks, idx, direction, nbs = key
            for c in (range(n) if direction > 0 else range(n - 1, -1, -1)):
                toks_out.extend(toks)
                idx_out.extend(x + c + add if x >= 0 else -1 for x in idx)
                if nb_out is not None:
                    nb_out.extend(nbs)
        if i < len(base.toks):
            x = base.idx[i]
            toks_out.append(base.toks[i])
            idx_out.append(x + sum(e.delta[i] * copies[r] for r, e in edits.items()) if x >= 0 else -1)
            if nb_out is not None:
                nb_out.append(base.nb[i] + sum(e.grow[i] * copies[r] for r, e in edits.items()))
    return toks_out, idx_out, nb_out


def _allowed(runs: Runs, r: int) -> set[int]:
    """Layer indices (in run r's one-more trace) its chunks may name: run r's, and those of the runs next
    to it that are not grown (no grown run between), which move with it."""
    lay = _layout(runs, {r: 1})
    out = set(range(*lay[r]))
    for step in (-1, 1):
        t = r + step
        while 0 <= t < len(runs.runs) and t not in runs.grow:
            out.update(range(*lay[t]))
            t += step
    return out


def _layout(runs: Runs, extra: dict[int, int]) -> dict[int, tuple[int, int]]:
    """Per run: its (first, end) layer indices in the reduced model with `extra` layers."""
    out, at = {}, 0
    for r, (_, length) in enumerate(runs.runs):
        n = runs.base + extra.get(r, 0) if r in runs.grow else length
        out[r] = (at, at + n)
        at += n
    return out


def _notes(base: Trace, grown: dict[int, Trace], copies: dict[int, int]) -> list[str] | None:
    """The notes with `copies[r]` more layers in each run: equal text, each number in it the base's plus,
    per run, its growth from one more layer times the copies; None when the texts differ."""
    out = []
    for k, text in enumerate(base.notes):
        parts = blocks._COUNT.split(text)
        nums = [int(x) for x in blocks._COUNT.findall(text)]
        for r, t in grown.items():
            if len(t.notes) != len(base.notes) or blocks._COUNT.split(t.notes[k]) != parts:
                return None
            nums = [v + (int(g) - int(b)) * copies[r] for v, g, b in
                    zip(nums, blocks._COUNT.findall(t.notes[k]), blocks._COUNT.findall(text))]
        out.append("".join(p + (str(nums[i]) if i < len(nums) else "") for i, p in enumerate(parts)))
    return out


def synthesize_runs(runs: Runs, base: Trace, grown: dict[int, Trace], check: Trace) -> tuple[Trace | None, str]:
    """The full-depth trace from the base, the one-more traces and the check (two more in every grown run),
    after the same rule wrote the check exactly; (None, why) when no chunk-finding strategy does."""
    two = {r: 2 for r in runs.grow}
    full = {r: runs.runs[r][1] - runs.base for r in runs.grow}
    check_notes, notes = _notes(base, grown, two), _notes(base, grown, full)
    if check_notes != check.notes or notes is None:
        return None, "the trace notes do not grow per layer of each run"
    shift = _shifts(runs, two), _shifts(runs, full)
    why = "the one-more-layer traces are not the base plus repeated chunks"
    key_sets = blocks.size_key_sets(runs.path, base, grown.values())   # lazy: the sized keys only if needed
    for sized, front in ((s, f) for s in key_sets for f in (False, True)):
        tb = blocks.tokenize(base, runs.path, front, sized)
        tg = {r: blocks.tokenize(t, runs.path, front, sized) for r, t in grown.items()}
        cache: dict[tuple, _Edit | None] = {}
        for hows in _combinations(len(runs.grow)):
            edits = {}
            for r, how in zip(runs.grow, hows):
                if (r, how) not in cache:
                    cache[(r, how)] = _edit(tb, tg[r], how)
                edits[r] = cache[(r, how)]
            if any(e is None for e in edits.values()):
                continue
            written = _merge(tb, edits, two, runs, shift[0])
            predicted = written and blocks.untokenize(written[0], written[1], check.steps, check.notes, written[2])
            if predicted is None or not blocks.same_trace(predicted, check):
                why = "the check trace differs from its prediction from the base and one-more traces"
                continue
            written = _merge(tb, edits, full, runs, shift[1])
            trace = written and blocks.untokenize(written[0], written[1], check.steps, notes, written[2])
            if trace is not None:
                return trace, ""
            why = "a free could not be matched in the synthesized trace"
    return None, why


def _combinations(n: int, most: int = MAX_TRIES) -> list[tuple]:
    """Chunk-finding strategies to try, one per grown run: the same for all first, then mixed ones (at most
    `most` in all: each failed try writes and compares the check trace)."""
    same = [(how,) * n for how in blocks.STRATEGIES]
    mixed = [c for c in itertools.product(blocks.STRATEGIES, repeat=n) if len(set(c)) > 1]
    return (same + mixed)[:most]


def _shifts(runs: Runs, copies: dict[int, int]) -> dict[int, int]:
    """Per grown run: the layers inserted into the grown runs before it."""
    return {r: sum(copies[s] for s in runs.grow if s < r) for r in runs.grow}


def trace_runs(workload, cfg, runs: Runs, trace_fn, on_phase=None) -> tuple[Trace | None, str]:
    """The block-once trace of a stack of runs (see the module's docstring), or (None, why not).
    `trace_fn(workload, cfg, on_phase)` traces one reduced workload."""
    plans = [{}] + [{r: 1} for r in runs.grow] + [{r: 2 for r in runs.grow}]
    try:
        with frozen_heap():   # the heap is scanned once for the reduced traces
            traces = []
            for k, extra in enumerate(plans):
                keep = runs.keep(extra)
                wl = blocks.reduced_workload(workload, len(keep), keep)
                traces.append(trace_fn(wl, cfg.with_(checkpoint=runs.checkpoint(keep)),
                                       on_phase if k == len(plans) - 1 else None))
    except Exception as exc:  # noqa: BLE001 - the full trace reports the real failure
        return None, f"a reduced-depth trace failed ({type(exc).__name__})"
    trace, why = synthesize_runs(runs, traces[0], dict(zip(runs.grow, traces[1:-1])), traces[-1])
    if trace is not None:
        sizes = [len(runs.keep(e)) for e in plans]
        trace.mode = "block-once"
        trace.mode_reason = (f"{runs.n_layers} layers in {runs.path}, {len(runs.runs)} runs of identical layers "
                             f"(checkpointing differs between them): traced {', '.join(map(str, sizes))} layers, "
                             f"the rest written from them (checked exact at {sizes[-1]})")
    return trace, why
