"""Block-once tracing: the trace of an N-layer model from traces of the same model with few layers.

A transformer is one block N times. The events of layer k are those of layer 1 renamed (same shapes, same
ops, same order); only the seams between layers differ, and those repeat too. So instead of running all
N layers through the fake-tensor dispatcher, memplan traces the same model with d, d+1 and d+2 layers
(d = 1 unless the first layers differ), finds what one more layer adds to the event stream (one chunk of
events per place where the layers repeat: build, forward, backward, optimizer, zero_grad, the final
frees), and writes the N-layer trace with N-d-2 more copies of each chunk, the layer indices in the
module names renumbered.

Nothing is assumed that was not checked: the stack's layers must be structurally identical in the
full-depth model (class, parameter and buffer shapes and dtypes, hooks, plain attributes other than
the layer index, activation checkpointing), every per-layer list in the config uniform over them; and
the rule must predict the (d+2)-layer trace from the d- and (d+1)-layer ones byte for byte (every
storage record, every event, every phase mark, every note), with the same chunks found between d+1 and
d+2 as between d and d+1. Where no rule is found so, once more with the sizes of the records that only
one of the d and d+1 traces has (`sized_keys`: clip_grad_norm's stack of one norm per parameter) out of
the token keys, each grown by its growth from d to d+1 per layer -- under the same check. Otherwise the
full trace runs, and the trace says which mode ran and why.

Covers Hugging Face configs of decoder-style models (one stack of layers: `num_hidden_layers`), on
one device and per rank under FSDP (memplan.distributed._fake_trace passes its own `trace_fn`, and
starts at 2 layers); model files: their stack cut inside the tracer (memplan.trace.model_stacks, on
one device and per FSDP rank); per DDP rank where its gradient buckets repeat (ZeRO-1: the DDP rank with its
own optimizer phase spliced in, memplan.trace.optsplice); FSDP1 ranks in full. Layers that differ only in runs
(checkpointing on some of them): memplan.trace.block_runs; which one runs: memplan.trace.block_once.
"""
from __future__ import annotations

import atexit
import copy
import fnmatch
import re
from dataclasses import dataclass

from memplan.hf import workload_from_config
from memplan.step import frozen_heap
from memplan.trace.events import StorageRecord, Trace

MIN_LAYERS = 16           # below this, three short traces cost about as much as the full one
_WINDOW = 24              # tokens that must match again after an inserted chunk
_INDEX_ATTRS = frozenset({"layer_idx", "layer_id", "layer_index", "layer_number", "layer_num", "idx",
                          "block_idx", "block_index", "block_id"})
_PLAIN = (int, float, str, bool, type(None))
MIXED = "checkpointing differs between the layers"


@dataclass(frozen=True)
class Stack:
    """The repeated layers of a model: where they live (`path`, e.g. `model.layers`), how many, and the
    first layer from which all are identical."""

    path: str
    n_layers: int
    first_uniform: int


# ---- when block-once applies -------------------------------------------------------------------------
def hf_stack(workload, cfg) -> tuple[Stack | None, str]:
    """The repeated stack of an HF-config workload and the reason when there is none (or it cannot be
    proven identical)."""
    config = workload.extra.get("hf_config")
    if config is None:
        return None, "a model file: block-once applies to Hugging Face configs"
    if workload.extra.get("kind") != "lm" or getattr(config, "is_encoder_decoder", False):
        return None, "not a single-stack decoder model"
    n = getattr(config, "num_hidden_layers", None)
    if not isinstance(n, int) or n < MIN_LAYERS:
        return None, f"fewer than {MIN_LAYERS} layers (block-once would not be faster)"
    try:
        model = _meta_model(workload, config)
    except Exception as exc:  # noqa: BLE001 - block-once is an optimisation; the full trace decides
        return None, f"the model cannot be built on the meta device ({type(exc).__name__})"
    path = _stack_path(model, n)
    if path is None:
        return None, f"no module list of {n} layers"
    ckpt = _checkpointed(model, path, cfg.checkpoint)
    if len(set(ckpt)) > 1:
        return None, MIXED
    first = _first_uniform(model.get_submodule(path), ckpt, config, n)
    if first is None or first + 4 > n:
        return None, "the layers differ (structure, attributes, hooks, checkpointing or per-layer config)"
    return Stack(path, n, first), ""


_CACHES: list[list] = []   # every cache `remembered` has filled: emptied at exit (`_release`)


def remembered(cache: list, workload, key, make):
    """`make()`, made once per workload (by identity) and `key` among the last two asked of `cache` (a list of
    (workload, key, value)): a plan asks again for each configuration it traces. The caches are emptied at exit."""
    for w, k, value in cache:
        if w is workload and k == key:
            return value
    value = make()
    if not _CACHES:
        atexit.register(_release)
    if not any(c is cache for c in _CACHES):
        _CACHES.append(cache)
    cache.insert(0, (workload, key, value))
    del cache[2:]
    return value


def _release() -> None:
    """At exit, while torch is still whole: drop the remembered models. A model file's model inspected on fake
    tensors keeps its FakeTensorMode, whose converter keys storages by torch's `StorageWeakRef`; freed later, when
    the interpreter tears the modules down, their finalizers find torch's module globals gone and print
    `Exception ignored in: StorageWeakRef.__del__` tracebacks after memplan's own output. An exit handler registered
    while a command runs, so it runs before memplan.cli's own (handlers run last-registered first)."""
    for cache in _CACHES:
        cache.clear()


_META: list[tuple] = []   # (workload, its config as JSON, model): the last models built on the meta device


def _meta_model(workload, config):
    """The model on the meta device (only inspected, never run); built once per workload and config (a
    plan asks for each configuration it traces)."""
    import torch

    def build():
        builder = workload.extra.get("hf_model_class")
        with torch.device("meta"):
            return builder(config) if builder is not None else workload.build_model()

    return remembered(_META, workload, config.to_json_string(), build)


def _stack_path(model, n: int) -> str | None:
    import torch

    paths = [name for name, m in model.named_modules() if isinstance(m, torch.nn.ModuleList) and len(m) == n]
    return paths[0] if len(paths) == 1 else None


def _checkpointed(model, path: str, patterns) -> list[frozenset]:
    """Per layer: the module names (relative to the layer) that `step.apply_checkpointing` would wrap."""
    names = [name for name, _ in model.named_modules() if name]
    chosen: list[str] = []
    for name in names:
        if any(fnmatch.fnmatchcase(name, p) for p in patterns) and not any(
                name.startswith(c + ".") for c in chosen):
            chosen.append(name)
    layers = len(model.get_submodule(path))
    out = []
    for i in range(layers):
        pre = f"{path}.{i}"
        rel = {c[len(pre):] for c in chosen if c == pre or c.startswith(pre + ".")}
        if any(pre.startswith(c + ".") for c in chosen):
            rel.add("<outer>")
        out.append(frozenset(rel))
    return out


def _signature(layer) -> tuple:
    sig = []
    for name, m in layer.named_modules():
        attrs = tuple(sorted((k, v) for k, v in vars(m).items()
                             if not k.startswith("_") and k not in _INDEX_ATTRS and isinstance(v, _PLAIN)))
        params = tuple((k, tuple(p.shape), p.dtype, p.requires_grad) for k, p in m._parameters.items()
                       if p is not None)
        buffers = tuple((k, tuple(b.shape), b.dtype) for k, b in m._buffers.items() if b is not None)
        hooks = tuple(len(getattr(m, h, {}) or {}) for h in (
            "_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
            "_state_dict_hooks", "_load_state_dict_pre_hooks"))
        sig.append((name, type(m).__qualname__, type(m).__module__, "forward" in vars(m), attrs, params,
                    buffers, hooks))
    return tuple(sig)


def _per_layer_lists(config, n: int) -> list[str]:
    return [k for k, v in vars(config).items() if isinstance(v, (list, tuple)) and len(v) == n]


def _first_uniform(stack, ckpt: list[frozenset], config, n: int) -> int | None:
    """The first layer index from which every layer is identical to the next (signature, checkpointing,
    per-layer config lists); checkpointing must be the same on every layer."""
    if len(set(ckpt)) > 1:
        return None
    sigs = [_signature(layer) for layer in stack]
    first = n - 1
    while first > 0 and sigs[first - 1] == sigs[n - 1]:
        first -= 1
    for key in _per_layer_lists(config, n):
        values = list(getattr(config, key))
        same_from = n - 1
        while same_from > 0 and values[same_from - 1] == values[n - 1]:
            same_from -= 1
        first = max(first, same_from)
    return first if first < n - 1 else None


def reduced_workload(workload, depth: int, keep: list[int] | None = None):
    """The same HF workload with only the first `depth` layers (or the layers `keep`, `depth` of them)."""
    config = copy.deepcopy(workload.extra["hf_config"])
    n = config.num_hidden_layers
    keep = list(range(depth)) if keep is None else keep
    for key in _per_layer_lists(config, n):
        values = list(getattr(config, key))
        setattr(config, key, type(getattr(config, key))(values[i] for i in keep))
    config.num_hidden_layers = depth
    return workload_from_config(config, name=workload.name, task=workload.extra.get("task"),
                                source=workload.source)


# ---- the event stream as tokens --------------------------------------------------------------------
SIZED = -1   # a token key's size where the record's size is kept aside (`_Tokens.nb`): it grows with the depth


@dataclass
class _Tokens:
    toks: list      # ("M", phase, step, micro) | ("A", key) | ("F", key, rank); key has no layer index
    idx: list       # layer index of each token's record, -1 for none
    nb: list | None = None   # with `sized` keys (`tokenize`): each token's record's size, 0 for a mark


def _record_keys(trace: Trace, path: str) -> tuple[list, list]:
    """Per record: its fields with the module's layer index taken out, and that index (-1 for none)."""
    pat = re.compile(re.escape(path) + r"\.(\d+)(\..*)?$")
    keys, kidx = [], []
    for r in trace.storages:
        m = pat.match(r.module)
        if m:
            module = path + ".{}" + (m.group(2) or "").replace("{", "{{").replace("}", "}}")
            i = int(m.group(1))
        else:
            module, i = r.module.replace("{", "{{").replace("}", "}}"), -1
        keys.append((r.nbytes, r.category, module, r.phase, r.op, r.step, r.micro_step, r.dtype))
        kidx.append(i)
    return keys, kidx


def sized_keys(a: Trace, b: Trace, path: str) -> frozenset:
    """The record keys (`_record_keys`) of either trace that the other trace never has: candidates for a
    record whose size grows with the depth (clip_grad_norm's stacked per-parameter norms, one per
    parameter), whose size `tokenize` then keeps out of the key."""
    ka, kb = set(_record_keys(a, path)[0]), set(_record_keys(b, path)[0])
    return frozenset(ka ^ kb)


def tokenize(trace: Trace, path: str, front: bool = False, sized: frozenset = frozenset()) -> _Tokens:
    """Marks and events in order; a record's module loses its layer index (kept aside in `idx`); a free
    names the freed record by its fields and its rank among the live records with the same fields,
    counted from the newest (r >= 0); with `front`, from the oldest (~r) where that is the smaller rank
    (records without a layer index that pile up one per layer and are freed oldest first, as FSDP's
    sharding temporaries are, then free at the same rank whatever the depth). Records whose key is in
    `sized` have their size replaced by `SIZED` in the key and kept in `nb` (`extend` grows it by the
    same bytes per layer as between the two depths)."""
    keys, kidx = _record_keys(trace, path)
    sizes = nb = None
    if sized:
        sizes, nb = [k[0] for k in keys], []
        keys = [(SIZED,) + k[1:] if k in sized else k for k in keys]
    toks, idx = [], []
    live: dict[tuple, list[int]] = {}
    marks = trace.marks
    mi = 0
    for e, v in enumerate(trace.events):
        while mi < len(marks) and marks[mi][0] <= e:
            toks.append(("M",) + tuple(marks[mi][1:]))
            idx.append(-1)
            if nb is not None:
                nb.append(0)
            mi += 1
        sid = v if v >= 0 else ~v
        full = (keys[sid], kidx[sid])
        if v >= 0:
            live.setdefault(full, []).append(sid)
            toks.append(("A", keys[sid]))
        else:
            same = live[full]
            pos = same.index(sid)
            rank = len(same) - 1 - pos
            toks.append(("F", keys[sid], ~pos if front and pos < rank else rank))
            del same[pos]
        idx.append(kidx[sid])
        if nb is not None:
            nb.append(sizes[sid])
    for mark in marks[mi:]:
        toks.append(("M",) + tuple(mark[1:]))
        idx.append(-1)
        if nb is not None:
            nb.append(0)
    return _Tokens(toks, idx, nb)


@dataclass(frozen=True)
class Strategy:
    """How `align` picks a chunk at a mismatch: the chunk after which `b` matches `a` again for longest
    (`shortest=False`, up to `window` tokens) or the shortest one that matches again for `window` tokens;
    `backup`: how many already matched tokens the chunk may start before the mismatch (a chunk whose
    first tokens look like what follows it, e.g. a foreach op's outputs of one layer before the final
    norm's)."""

    window: int
    shortest: bool
    backup: int


STRATEGIES = (Strategy(24, False, 0), Strategy(8, True, 16), Strategy(16, True, 48), Strategy(4, True, 8),
              Strategy(512, False, 0))   # the last: a chunk that starts like what follows it for a long way
                                          # (FSDP's all-gather buffer at a layer seam in backward)


def align(a: list, b: list, how: Strategy = STRATEGIES[0]) -> list[tuple] | None:
    """`b` as `a` with chunks inserted: ("eq", i, j, n) runs and ("ins", j, n) chunks, found greedily
    (see `Strategy`); None when `b` is not `a` plus chunks."""
    ops: list[tuple] = []
    i = j = 0
    na, nb = len(a), len(b)
    budget = nb - na
    if budget < 0:
        return None
    while True:
        k = _match(a, b, i, j, na)
        if k:
            if ops and ops[-1][0] == "eq" and ops[-1][1] + ops[-1][3] == i:
                ops[-1] = ("eq", ops[-1][1], ops[-1][2], ops[-1][3] + k)
            else:
                ops.append(("eq", i, j, k))
            i, j = i + k, j + k
        if i == na:
            break
        found = _chunk(a, b, i, j, budget, how, ops[-1][3] if ops and ops[-1][0] == "eq" else 0)
        if found is None:
            return None
        back, n = found
        if back:
            _, ei, ej, en = ops.pop()
            if en > back:
                ops.append(("eq", ei, ej, en - back))
            i, j = i - back, j - back
        ops.append(("ins", j, n))
        j += n
        budget -= n
    if j < nb:
        ops.append(("ins", j, nb - j))
    return ops


def _chunk(a, b, i, j, budget, how: Strategy, matched: int):
    """(tokens to back up, chunk length) at the mismatch `a[i]` != `b[j]`, or None."""
    na = len(a)
    best, best_at = 0, None
    for back in range(min(how.backup, matched) + 1):
        ib, jb = i - back, j - back
        need = min(how.window, na - ib)
        first = a[ib]
        for n in range(1, budget + 1):
            if b[jb + n] != first:
                continue
            m = _match(a, b, ib, jb + n, min(na, ib + how.window))
            if how.shortest:
                if m >= need and m > back and (best_at is None or n < best_at[1]):
                    best_at = (back, n)
                    break
            elif m > best:
                best, best_at = m, (back, n)
                if m == need:
                    break
    return best_at


def _match(a: list, b: list, i: int, j: int, stop: int) -> int:
    """How many tokens `a[i:stop]` and `b[j:]` have in common at their start."""
    k = 0
    nb = len(b)
    while i + k < stop and j + k < nb and a[i + k] == b[j + k]:
        k += 1
    return k


def _directions(ops: list, ta: _Tokens, tb: _Tokens) -> list[int] | None:
    """Per inserted chunk: +1 when copies follow it (layers in increasing order there, e.g. forward),
    -1 when they precede it (decreasing, e.g. backward); from the index shifts of the nearest indexed
    matched tokens on either side."""
    deltas = []   # per op: (first delta, last delta) of indexed tokens in an eq run, or None
    for op in ops:
        if op[0] != "eq":
            deltas.append(None)
            continue
        _, i, j, n = op
        ds = [tb.idx[j + k] - ta.idx[i + k] for k in range(n) if ta.idx[i + k] >= 0]
        if any(d not in (0, 1) for d in ds):
            return None
        deltas.append((ds[0], ds[-1]) if ds else None)
    out = []
    for k, op in enumerate(ops):
        if op[0] != "ins":
            continue
        before = next((deltas[x][1] for x in range(k - 1, -1, -1) if deltas[x] is not None), None)
        after = next((deltas[x][0] for x in range(k + 1, len(ops)) if deltas[x] is not None), None)
        inside = [x for x in tb.idx[op[1]:op[1] + op[2]] if x >= 0]
        if not inside:
            out.append(1)   # no layer index inside: the copies' order does not matter
        elif (before, after) in ((0, 1), (0, None), (None, 1)):
            out.append(1)
        elif (before, after) in ((1, 0), (1, None), (None, 0)):
            out.append(-1)
        else:   # the neighbours do not tell: the layer order from the last indexed token before the chunk
            prev = next((x for x in reversed(tb.idx[:op[1]]) if x >= 0), None)
            if prev is None or prev == inside[0]:
                return None
            out.append(1 if inside[0] > prev else -1)
    return out


def extend(ta: _Tokens, tb: _Tokens, extra: int, how: Strategy) -> tuple[list, list, list, list | None] | None:
    """Tokens of the trace with `extra` more layers than `tb` (which has one more than `ta`), the chunk
    structure used (normalised chunks and their directions, to compare between depths) and, with sized
    keys, the tokens' record sizes (a matched `SIZED` record grown by its growth from `ta` to `tb` per
    layer)."""
    ops = align(ta.toks, tb.toks, how)
    if ops is None:
        return None
    dirs = _directions(ops, ta, tb)
    if dirs is None:
        return None
    toks, idx, chunks = [], [], []
    nb = [] if tb.nb is not None else None
    d_iter = iter(dirs)
    for op in ops:
        if op[0] == "eq":
            _, i, j, n = op
            toks.extend(tb.toks[j:j + n])
            idx.extend(tb.idx[j + k] + (tb.idx[j + k] - ta.idx[i + k]) * extra if ta.idx[i + k] >= 0 else -1
                       for k in range(n))
            if nb is not None:
                nb.extend(tb.nb[j + k] + (tb.nb[j + k] - ta.nb[i + k]) * extra
                          if tb.toks[j + k][0] == "A" and tb.toks[j + k][1][0] == SIZED else tb.nb[j + k]
                          for k in range(n))
            continue
        _, j, n = op
        direction = next(d_iter)
        chunk, cidx = tb.toks[j:j + n], tb.idx[j:j + n]
        chunks.append((tuple(chunk), direction))
        order = range(extra + 1) if direction > 0 else range(extra, -1, -1)
        for c in order:
            toks.extend(chunk)
            idx.extend(x + c if x >= 0 else -1 for x in cidx)
            if nb is not None:
                nb.extend(tb.nb[j:j + n])
    return toks, idx, chunks, nb


def untokenize(toks: list, idx: list, steps: int, notes: list, nb: list | None = None) -> Trace | None:
    """The Trace the tokens describe (frees resolved by rank among identical live records; a `SIZED`
    record's size from `nb`)."""
    trace = Trace(steps=steps, notes=list(notes))
    st, ev, marks = trace.storages, trace.events, trace.marks
    live: dict[tuple, list[int]] = {}
    for t, (tok, i) in enumerate(zip(toks, idx)):
        kind = tok[0]
        if kind == "M":
            marks.append((len(ev), tok[1], tok[2], tok[3]))
        elif kind == "A":
            key = tok[1]
            nbytes, category, module, phase, op, step, micro, dtype = key
            if nbytes == SIZED:
                nbytes = nb[t]
            st.append(StorageRecord(nbytes, category, module.format(i) if i >= 0 else module.format(),
                                    phase, op, step, micro, dtype))
            sid = len(st) - 1
            live.setdefault((key, i), []).append(sid)
            ev.append(sid)
        else:
            same = live.get((tok[1], i))
            at = len(same) - 1 - tok[2] if same and tok[2] >= 0 else ~tok[2]
            if not same or not 0 <= at < len(same):
                return None
            ev.append(~same.pop(at))
    trace.sort_free_runs()
    return trace


def same_trace(x: Trace, y: Trace) -> bool:
    return (x.events == y.events and x.marks == y.marks and x.storages == y.storages
            and x.steps == y.steps and x.notes == y.notes)


_COUNT = re.compile(r"\d+")


def scaled_notes(notes: list[list[str]], depths: list[int], n_layers: int) -> list[str] | None:
    """The trace notes at `n_layers` from those at the three depths: equal text, each number in it the
    same at every depth or growing by the same count per layer (e.g. Adafactor's `.item()` reads, one
    per parameter); None otherwise. `synthesize` then compares every depth's notes as at `n_layers`."""
    if len({len(n) for n in notes}) != 1:
        return None
    out = []
    for texts in zip(*notes):
        parts = [_COUNT.split(t) for t in texts]
        if len({tuple(p) for p in parts}) != 1:
            return None
        nums = [[int(x) for x in _COUNT.findall(t)] for t in texts]
        scaled = []
        for a, b, c in zip(*nums):
            if b - a != c - b:
                return None
            scaled.append(str(a + (b - a) * (n_layers - depths[0])))
        out.append("".join(p + (scaled[k] if k < len(scaled) else "") for k, p in enumerate(parts[0])))
    return out


def _with_notes(trace: Trace, notes: list[str]) -> Trace:
    out = copy.copy(trace)
    out.notes = list(notes)
    return out


def synthesize(traces: list[Trace], depths: list[int], path: str, n_layers: int) -> tuple[Trace | None, str]:
    """The `n_layers` trace from the traces at depths d and d+1 (the chunks one more layer adds, copied
    N-d-1 times), after checking that the same rule predicts the d+2 trace exactly (with the first
    chunk-finding strategy that does); (None, why) when none does."""
    scaled = scaled_notes([t.notes for t in traces[:3]], depths, n_layers)
    if scaled is not None:   # a count per layer in a note: every depth's notes read as at `n_layers`
        traces = [_with_notes(t, scaled) for t in traces]
    if not traces[0].notes == traces[1].notes == traces[2].notes:
        return None, "the trace notes depend on the number of layers"
    why = f"the {depths[1]}-layer trace is not the {depths[0]}-layer one plus repeated chunks"
    for sized in size_key_sets(path, traces[0], [traces[1]]):
        for front in (False, True):
            t0, t1 = (tokenize(t, path, front, sized) for t in traces[:2])
            trace, why = _synthesize(t0, t1, traces, depths, n_layers, why)
            if trace is not None:
                return trace, ""
    return None, why


def size_key_sets(path: str, base: Trace, deeper):
    """The record keys whose sizes `tokenize` keeps out of the token keys: none first; then, where that finds no
    rule, those of records whose size grows with the depth (`sized_keys` of `base` against each trace of
    `deeper`; memplan.trace.block_runs passes one per run), when there are any."""
    yield frozenset()
    sized = frozenset().union(*(sized_keys(base, t, path) for t in deeper))
    if sized:
        yield sized


def _synthesize(t0: _Tokens, t1: _Tokens, traces, depths, n_layers, why):
    """`synthesize` for one encoding of the frees (`tokenize`), with the first strategy that works."""
    for how in STRATEGIES:
        first = extend(t0, t1, 1, how)
        if first is None:
            continue
        predicted = untokenize(first[0], first[1], traces[1].steps, traces[1].notes, first[3])
        if predicted is None or not same_trace(predicted, traces[2]):
            why = f"the {depths[2]}-layer trace differs from its prediction from {depths[0]} and {depths[1]} layers"
            continue
        rest = extend(t0, t1, n_layers - depths[1], how)
        trace = rest and untokenize(rest[0], rest[1], traces[2].steps, traces[2].notes, rest[3])
        if trace is not None:
            return trace, ""
        why = "a free could not be matched in the synthesized trace"
    return None, why


def from_reduced(workload, stack: Stack, trace_fn, on_phase, min_depth: int) -> tuple[Trace | None, str]:
    """The block-once trace from the d-, (d+1)- and (d+2)-layer traces, or (None, why not)."""
    d = max(min_depth, stack.first_uniform + 1)
    if d + 2 >= stack.n_layers:
        return None, f"fewer than {d + 3} layers (block-once would not be faster)"
    depths = [d, d + 1, d + 2]
    try:
        with frozen_heap():   # the heap is scanned once for the three traces, not once per trace
            traces = [trace_fn(reduced_workload(workload, k), on_phase if k == depths[-1] else None)
                      for k in depths]
    except Exception as exc:  # noqa: BLE001 - the full trace reports the real failure
        return None, f"a reduced-depth trace failed ({type(exc).__name__})"
    trace, why = synthesize(traces, depths, stack.path, stack.n_layers)
    if trace is not None:
        trace.mode = "block-once"
        trace.mode_reason = (f"{stack.n_layers} identical layers in {stack.path}: traced {d}, {d + 1} and "
                             f"{d + 2} layers, the rest written from them (checked exact at {d + 2})")
    return trace, why
