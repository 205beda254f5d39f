"""Unit tests of the planner's pieces: growth fit, accumulation math, the tree knapsack, allocator policy."""
import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

from memplan.errors import UserError
from memplan.plan.accum import accumulation
from memplan.plan.batch import fit_growth
from memplan.plan.checkpoint import snippet
from memplan.plan.knapsack import Selection, choose, find_blocks, solve_tree_knapsack
from memplan.plan.policy import check_alloc_conf

MiB = 1 << 20


# ---- growth fit -------------------------------------------------------------------------------

def test_affine_fit_predicts_largest_batch():
    # peak = 100 MiB + 10 MiB * b in backward; optimizer phase flat at 150 MiB
    p1 = (1, {"backward": 110 * MiB, "optimizer": 150 * MiB}, 150 * MiB, 150 * MiB)
    p2 = (2, {"backward": 120 * MiB, "optimizer": 150 * MiB}, 150 * MiB, 150 * MiB)
    fit = fit_growth("batch_size", p1, p2)
    assert fit.predict_allocated(10) == 200 * MiB
    assert fit.largest_within(300 * MiB) == 20
    assert fit.largest_within(149 * MiB) == 0          # the flat optimizer phase does not fit
    assert fit.largest_within(300 * MiB, multiple=8) == 16


def test_fit_follows_the_peak_moving_between_phases():
    # small batch: peak in optimizer; large batch: peak in backward
    p1 = (1, {"backward": 60, "optimizer": 100}, 100, 100)
    p2 = (2, {"backward": 80, "optimizer": 100}, 100, 100)
    fit = fit_growth("batch_size", p1, p2)
    assert fit.predict_allocated(1) == 100
    assert fit.predict_allocated(10) == 240


def test_overhead_ratio_scales_the_total():
    p1 = (1, {"backward": 100}, 100, 120)
    p2 = (3, {"backward": 300}, 300, 360)
    fit = fit_growth("batch_size", p1, p2)
    assert fit.overhead_ratio == pytest.approx(1.2)
    assert fit.largest_within(1200) == 10


@given(a=st.integers(0, 10**9), s=st.integers(1, 10**8), budget=st.integers(1, 10**10))
@settings(max_examples=60, deadline=None)
def test_affine_prediction_is_the_largest_within(a, s, budget):
    fit = fit_growth("batch_size", (1, {"b": a + s}, a + s, a + s), (2, {"b": a + 2 * s}, a + 2 * s, a + 2 * s))
    x = fit.largest_within(budget, max_value=10**12)
    if x:
        assert a + s * x <= budget * (1 + 1e-12)
    assert a + s * (x + 1) > budget * (1 - 1e-12)


# ---- accumulation ------------------------------------------------------------------------------

def test_accumulation_exact_split():
    a = accumulation(64, max_micro=12, dp_size=2)
    assert (a.micro_batch, a.grad_accum_steps, a.global_batch, a.exact) == (8, 4, 64, True)


def test_accumulation_fits_in_one_step():
    a = accumulation(16, max_micro=40)
    assert (a.micro_batch, a.grad_accum_steps) == (16, 1)


def test_accumulation_keeps_an_awkward_global_batch_exactly():
    a = accumulation(97, max_micro=10)         # 97 is prime: the only split is 97 steps of 1
    assert a.exact and (a.micro_batch, a.grad_accum_steps, a.global_batch) == (1, 97, 97)
    assert "97 micro-steps of 1" in a.note and "global batch 100 would take 10 steps" in a.note


def test_accumulation_target_16_is_16():
    # issue 16: the largest micro-batch that fits is 3; 18 = 3 x 6 is not what was asked
    a = accumulation(16, max_micro=3)
    assert a.exact and (a.micro_batch, a.grad_accum_steps, a.global_batch) == (2, 8, 16)


def test_accumulation_not_a_multiple_of_dp():
    a = accumulation(10, max_micro=4, dp_size=4)
    assert not a.exact and a.global_batch in (8, 12) and a.micro_batch <= 4
    assert "10 is not a multiple of dp size 4" in a.note and "nearest" in a.note


@given(G=st.integers(1, 5000), m=st.integers(1, 300), D=st.sampled_from([1, 2, 4, 8]))
@settings(max_examples=200, deadline=None)
def test_accumulation_invariants(G, m, D):
    a = accumulation(G, max_micro=m, dp_size=D)
    assert 1 <= a.micro_batch <= m
    assert a.global_batch == D * a.grad_accum_steps * a.micro_batch
    assert a.exact == (G % D == 0) == (a.global_batch == G)
    assert abs(a.global_batch - G) < D


def test_accumulation_bad_input():
    with pytest.raises(UserError):
        accumulation(0, 4)
    with pytest.raises(UserError):
        accumulation(8, 0)


# ---- the knapsack on a hand-made graph ----------------------------------------------------------

def _graph(spec):
    """spec: name -> (saving, saved, cost); parents implied by dotted names."""
    g = nx.DiGraph()
    g.add_node("", cls="Root", saving=0, saved=0, cost=0, order=0, calls=1)
    for i, (n, (saving, saved, cost)) in enumerate(spec.items(), 1):
        g.add_node(n, cls=n.split(".")[-1].rstrip("0123456789") or "B", saving=saving, saved=saved, cost=cost,
                   order=i, calls=1)
    for n in spec:
        parent = n.rsplit(".", 1)[0] if "." in n else ""
        g.add_edge(parent, n, kind="child")
    return g


def test_knapsack_picks_the_cheapest_cover():
    # three blocks; block 1 saves the most per FLOP; its cheap norm child saves almost as much
    g = _graph({
        "b0": (100, 120, 1000), "b1": (100, 120, 1000), "b2": (100, 120, 1000),
        "b1.norm": (90, 90, 10), "b1.mlp": (10, 30, 990),
    })
    got = solve_tree_knapsack(g, {n: (d["saving"], d["cost"]) for n, d in g.nodes(data=True) if n}, 180)
    assert got is not None
    cost, names = got
    assert sorted(names) == ["b0", "b1.norm"] or sorted(names) == ["b1.norm", "b2"]
    assert cost == 1010


def test_knapsack_never_takes_a_module_and_its_child():
    g = _graph({"b0": (100, 100, 50), "b0.a": (60, 60, 10), "b0.b": (60, 60, 10)})
    cost, names = solve_tree_knapsack(g, {n: (d["saving"], d["cost"]) for n, d in g.nodes(data=True) if n}, 100)
    assert set(names) == {"b0.a", "b0.b"} and cost == 20      # children cover it more cheaply than the parent
    cost, names = solve_tree_knapsack(g, {n: (d["saving"], d["cost"]) for n, d in g.nodes(data=True) if n}, 110)
    assert set(names) == {"b0.a", "b0.b"}
    assert solve_tree_knapsack(g, {n: (d["saving"], d["cost"]) for n, d in g.nodes(data=True) if n}, 121) is None


def test_knapsack_rounds_savings_down():
    g = _graph({"a": (99, 99, 1), "b": (99, 99, 1)})
    # each saving is just under the need: one alone must never be reported as enough
    cost, names = solve_tree_knapsack(g, {n: (d["saving"], d["cost"]) for n, d in g.nodes(data=True) if n}, 100)
    assert len(names) == 2


def test_choose_accounts_for_the_recompute_transient():
    g = _graph({"big": (500, 1000, 100), "s1": (100, 100, 60), "s2": (100, 100, 60), "s3": (100, 100, 60)})
    sel = choose(g, 150)
    assert isinstance(sel, Selection)
    # big: net 500 - 1000 < 150; two small ones: 200 - 100 >= 150
    assert set(sel.names) <= {"s1", "s2", "s3"} and len(sel.names) == 3 or sel.net_bytes >= 150
    assert sel.net_bytes >= 150
    assert "big" not in sel.names


def test_choose_needs_nothing():
    g = _graph({"a": (10, 10, 1)})
    assert choose(g, 0).names == ()


def test_find_blocks_prefers_repeated_children():
    g = nx.DiGraph()
    g.add_node("", cls="M", saved=0, calls=1, order=0)
    g.add_node("layers", cls="ModuleList", saved=300, calls=0, order=None)
    g.add_edge("", "layers", kind="child")
    for i in range(3):
        g.add_node(f"layers.{i}", cls="Block", saved=100, calls=1, order=i + 1)
        g.add_edge("layers", f"layers.{i}", kind="child")
    g.add_node("head", cls="Linear", saved=5, calls=1, order=9)
    g.add_edge("", "head", kind="child")
    assert find_blocks(g) == ["layers.0", "layers.1", "layers.2"]


def test_snippet_applies_checkpointing():
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU(), torch.nn.Linear(4, 1))
    code = snippet(["0", "2"])
    assert "use_reentrant=False" in code
    exec(code, {"model": model})
    x = torch.randn(3, 4, requires_grad=True)
    model(x).sum().backward()
    assert x.grad is not None


# ---- allocator policy -------------------------------------------------------------------------

def test_npu_excludes_expandable_with_max_split():
    why = check_alloc_conf("expandable_segments:True,max_split_size_mb:512", "npu")
    assert why is not None and "expandable_segments" in why
    assert check_alloc_conf("expandable_segments:True", "npu") is None
    assert check_alloc_conf("expandable_segments:True,max_split_size_mb:512", "cuda") is None
    assert check_alloc_conf("garbage_collection_threshold:0.8,expandable_segments:True", "npu") is not None


def _minplus_loop(a, b):
    """The min-plus product as first written (one argmin per k): the reference for `_minplus`."""
    import numpy as np

    c, arg = np.empty_like(a), np.zeros(len(a), dtype=np.int64)
    for k in range(len(a)):
        v = a[k::-1] + b[: k + 1]
        arg[k] = int(np.argmin(v))
        c[k] = v[arg[k]]
    return c, arg


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 1.0, 2.5, 7.0, float("inf")]), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.0, 1.0, 2.5, 7.0, float("inf")]), min_size=n, max_size=n))))
def test_minplus_table_equals_the_loop(ab):
    """The vectorised min-plus product gives the loop's values and argmins, ties and infinities included."""
    import numpy as np

    from memplan.plan.knapsack import _minplus
    a, b = (np.array(x, dtype=float) for x in ab)
    got, want = _minplus(a, b), _minplus_loop(a, b)
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    assert got[1].dtype == want[1].dtype and got[0].dtype == want[0].dtype
