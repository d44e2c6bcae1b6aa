"""Mapping strategies: bijection into slots (property tests), exact optima, errors."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import libtopomap as ltm
from libtopomap import CommGraph, CommGraphError, MappingError, Topology
from libtopomap.mappers import (OBJECTIVES, STRATEGIES, map_greedy, map_multicore, map_processes, map_rcm,
                                map_recursive, objective_value, refine_threshold_accepting, refine_two_opt)
from libtopomap.commgraph import SymGraph
from libtopomap.mappers.local_search import SwapState
from libtopomap.mappers.recursive import balance_parts
from libtopomap.patterns import random_graph, scrambled_torus, stencil

ALL = list(STRATEGIES)


def assert_bijection(m, topo, n, slots):
    v = np.asarray(m.vertices)
    assert v.shape == (n,)
    used = np.bincount(v, minlength=topo.n_vertices)
    assert np.all(used <= slots), (used, slots)


# --------------------------------------------------------------------------- random instances
@st.composite
def instances(draw):
    """A random connected topology (hosts + optional switches, heterogeneous capacities and slots)
    and a random graph no larger than the usable slots (possibly disconnected, isolated processes)."""
    nh = draw(st.integers(2, 9))
    nsw = draw(st.integers(0, 3))
    n = nh + nsw
    rng = np.random.default_rng(draw(st.integers(0, 10**6)))
    # random spanning tree + extra links
    links = [(int(rng.integers(i)), i) for i in range(1, n)]
    for _ in range(draw(st.integers(0, 6))):
        u, v = rng.choice(n, 2, replace=False)
        links.append((int(u), int(v)))
    caps = rng.choice([1.0, 2.0, 4.0], size=len(links))
    slots = np.zeros(n, np.int64)
    slots[:nh] = draw(st.lists(st.integers(1, 3), min_size=nh, max_size=nh))
    topo = Topology([f"n{i}" for i in range(n)], links, capacities=caps, slots=slots)
    usable = slots.copy()
    if draw(st.booleans()):  # the job gets only part of the machine
        usable = np.minimum(usable, rng.integers(0, 3, size=n))
        if usable.sum() == 0:
            usable[0] = 1
    P = draw(st.integers(1, int(usable.sum())))
    m = draw(st.integers(0, 3 * P))
    src = rng.integers(0, P, m)
    dst = rng.integers(0, P, m)
    w = rng.choice([0.5, 1.0, 3.0], m)
    return topo, CommGraph(P, src, dst, w), usable


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from(ALL), st.sampled_from([None, "two-opt", "ta"]),
       st.sampled_from(OBJECTIVES))
def test_every_strategy_is_a_bijection_into_slots(inst, strategy, refine, objective):
    topo, g, usable = inst
    m = map_processes(topo, g, strategy=strategy, slots=usable, refine=refine, objective=objective, seed=1,
                      iterations=300)
    assert_bijection(m, topo, g.n, usable)


@settings(max_examples=15, deadline=None)
@given(instances())
def test_multicore_forced_off_and_on(inst):
    topo, g, usable = inst
    m = map_processes(topo, g, strategy="greedy", slots=usable, multicore=False)
    assert_bijection(m, topo, g.n, usable)


# --------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("strategy", ALL)
def test_smaller_job_multi_slot_disconnected_isolated(strategy):
    topo = ltm.torus("4x4")
    slots = np.full(16, 2)
    # two disconnected triangles, an isolated process, 7 processes on 32 slots
    g = CommGraph(7, [0, 1, 2, 3, 4, 5], [1, 2, 0, 4, 5, 3], [1, 2, 3, 1, 1, 1])
    m = map_processes(topo, g, strategy=strategy, slots=slots, seed=3)
    assert_bijection(m, topo, 7, slots)


def test_edgeless_graph_maps():
    g = CommGraph(5, [], [])
    for s in ALL:
        m = map_processes(ltm.torus("3x3"), g, strategy=s, seed=0)
        assert_bijection(m, ltm.torus("3x3"), 5, np.ones(9, int))


def test_identity_returns_current():
    topo = ltm.torus("4")
    m = map_processes(topo, [(0, 1)], strategy="identity", placement=[3, 1])
    assert list(m.vertices) == [3, 1]
    assert list(map_processes(topo, [(0, 1)], strategy="identity").vertices) == [0, 1]


def test_current_is_the_deprecated_name_of_placement():
    from libtopomap import ArgumentTypeError
    from libtopomap.mappers import map_identity

    topo = ltm.torus("4")
    with pytest.warns(DeprecationWarning, match=r"map_processes\(current=...\) is deprecated; use placement="):
        m = map_processes(topo, [(0, 1)], strategy="identity", current=[3, 1])
    assert list(m.vertices) == [3, 1]
    with pytest.warns(DeprecationWarning, match=r"map_identity\(current=...\)"):
        assert list(map_identity(topo, [(0, 1)], current=[2, 0]).vertices) == [2, 0]
    with pytest.raises(ArgumentTypeError, match="got both placement and current"), pytest.warns(DeprecationWarning):
        map_processes(topo, [(0, 1)], strategy="identity", current=[3, 1], placement=[3, 1])


# --------------------------------------------------------------------------- errors
def test_more_processes_than_slots():
    with pytest.raises(MappingError, match="5 processes but only 4 usable slots"):
        map_processes(ltm.torus("4"), CommGraph(5, [0], [1]))


def test_empty_graph():
    with pytest.raises(MappingError, match="empty"):
        map_processes(ltm.torus("4"), CommGraph(0, [], []))


@pytest.mark.parametrize("w", [-1.0, float("nan"), float("inf")])
def test_bad_weights(w):
    with pytest.raises(CommGraphError, match="weight"):
        map_processes(ltm.torus("4"), [(0, 1, w)])


def test_bad_options():
    t = ltm.torus("4")
    with pytest.raises(MappingError, match="unknown strategy"):
        map_processes(t, [(0, 1)], strategy="magic")
    with pytest.raises(MappingError, match="unknown objective"):
        map_processes(t, [(0, 1)], objective="speed")
    with pytest.raises(MappingError, match="unknown refinement"):
        map_processes(t, [(0, 1)], refine="sa")
    with pytest.raises(MappingError, match="slots must have one entry per vertex"):
        map_processes(t, [(0, 1)], slots=[1, 1])
    with pytest.raises(MappingError, match="multicore=True"):
        map_processes(t, [(0, 1)], multicore=True)
    with pytest.raises(MappingError, match="current|processes|slots"):
        map_processes(t, [(0, 1)], strategy="identity", placement=[0, 0])


# --------------------------------------------------------------------------- exact values
def brute_force(topo, g, objective):
    hosts = topo.hosts.tolist()
    best = np.inf
    for perm in itertools.permutations(hosts, g.n):
        best = min(best, objective_value(topo, g, np.array(perm), objective))
    return best


@pytest.mark.slow
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_refinements_reach_brute_force_optimum(objective):
    # 6 processes on a 2x3 mesh with a random weighted graph: 720 permutations
    topo = ltm.mesh("2x3")
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 6, 14), rng.integers(0, 6, 14)
    g = CommGraph(6, src, dst, rng.integers(1, 5, 14))
    opt = brute_force(topo, g, objective)
    best = min(objective_value(topo, g, map_processes(topo, g, strategy="random", refine="ta", objective=objective,
                                                      seed=s, iterations=4000), objective) for s in range(3))
    assert best == pytest.approx(opt)


def test_objective_values_closed_form():
    topo = ltm.torus("8")
    g = CommGraph(3, [0, 1], [1, 2], [2.0, 1.0])
    assert objective_value(topo, g, [0, 3, 4], "hopbytes") == 2 * 3 + 1 * 1
    assert objective_value(topo, g, [0, 3, 4], "dilation") == pytest.approx(7 / 3)
    # ring of 8: 0 -> 4 has two shortest paths, each arc gets 1/2 of the weight 2
    assert objective_value(topo, CommGraph(2, [0], [1], [2.0]), [0, 4], "congestion") == pytest.approx(1.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_recovers_scrambled_4x4_torus(seed):
    topo = ltm.torus("4x4")
    g = scrambled_torus("4x4", seed)
    m = map_greedy(topo, g)
    # total hops, each undirected pair once = number of links = the optimum
    assert ltm.hop_bytes(topo, g, m) / 2 == 32
    assert ltm.max_congestion(topo, g, m) == pytest.approx(1.0)


def test_greedy_recovers_scrambled_8x8_torus_from_every_start():
    topo = ltm.torus("8x8")
    g = scrambled_torus("8x8", 7)
    for s in range(0, 64, 9):
        assert ltm.hop_bytes(topo, g, map_greedy(topo, g, start=s)) / 2 == 128


def test_rcm_on_a_path_is_optimal():
    # a scrambled chain onto a chain: RCM orders both from an end, every edge gets dilation 1
    topo = ltm.mesh("12")
    perm = np.random.default_rng(3).permutation(12)
    g = CommGraph(12, perm[np.arange(11)], perm[np.arange(1, 12)])
    assert ltm.max_dilation(topo, g, map_rcm(topo, g)) == 1


def test_recursive_keeps_clusters_on_hosts():
    # 4 hosts with 4 slots, 4 cliques of 4: every clique must land on one host (zero hops)
    topo = Topology(["a", "b", "c", "d", "sw"], [(0, 4), (1, 4), (2, 4), (3, 4)], slots=[4, 4, 4, 4, 0])
    rng = np.random.default_rng(0)
    label = rng.permutation(16)
    edges = [(label[4 * c + i], label[4 * c + j]) for c in range(4) for i in range(4) for j in range(4) if i != j]
    g = CommGraph.from_edges(edges, n=16)
    for m in (map_recursive(topo, g, seed=1), map_multicore(topo, g, inner="greedy"),
              map_processes(topo, g, strategy="rcm")):
        assert ltm.hop_bytes(topo, g, m) == 0


def test_balance_parts_exact_sizes():
    import scipy.sparse as sp

    adj = sp.csr_matrix(np.ones((6, 6)) - np.eye(6))
    parts = balance_parts(adj, [0, 0, 0, 0, 0, 1], [3, 3])
    assert np.bincount(parts).tolist() == [3, 3]


# --------------------------------------------------------------------------- incremental kernels
@pytest.mark.parametrize("objective", ["congestion", "hopbytes"])
def test_incremental_score_matches_recomputation(objective):
    topo = ltm.concentrate(ltm.torus("3x3"), 2)
    g = random_graph(14, 4, seed=2)
    start = map_processes(topo, g, strategy="random", seed=0).vertices
    state = SwapState(topo, g, start, topo.slots.astype(np.int64), objective)
    rng = np.random.default_rng(0)
    state.run(np.full(500, np.inf), rng)  # accept every move: a random walk
    running = state.score
    assert running == pytest.approx(state.recompute(), rel=1e-9)
    if objective == "hopbytes":
        assert running == pytest.approx(ltm.hop_bytes(topo, g, state.proc_vertex))
    else:
        assert np.allclose(state.traffic, ltm.link_traffic(topo, g, state.proc_vertex))


@pytest.mark.slow
def test_refinements_reach_the_brute_force_optimum():
    # 6 processes on a 2x3 mesh: 720 placements, enumerated.  Both refinements, called directly (no
    # map_processes safety net), must find the exact optimum of every objective from a random start.
    import itertools

    topo = ltm.mesh("2x3")
    g = random_graph(6, 3, seed=5)
    start = map_processes(topo, g, strategy="random", seed=4)
    for obj in OBJECTIVES:
        best = min(objective_value(topo, g, list(p), obj) for p in itertools.permutations(range(6)))
        for fn in (refine_two_opt, refine_threshold_accepting):
            kw = {"stall": 20000} if fn is refine_two_opt else {}
            m = fn(topo, g, start, objective=obj, iterations=20000, seed=1, **kw)
            assert_bijection(m, topo, 6, np.ones(6, int))
            got = objective_value(topo, g, m, obj)
            assert got <= objective_value(topo, g, start, obj)
            if fn is refine_threshold_accepting:
                assert got == pytest.approx(best), (obj, fn.__name__)


def test_time_budget_is_respected():
    import time

    topo = ltm.torus("8x8")
    g = scrambled_torus("8x8", 1)
    m0 = map_processes(topo, g, strategy="random", seed=0)
    refine_threshold_accepting(topo, g, m0, iterations=10)  # compile
    t0 = time.perf_counter()
    refine_threshold_accepting(topo, g, m0, time_budget=0.3, seed=0)
    assert time.perf_counter() - t0 < 1.5


def test_symgraph_keeps_both_directions():
    s = SymGraph(CommGraph(3, [0, 1, 2], [1, 0, 2], [2.0, 5.0, 9.0]))
    assert s.indptr.tolist() == [0, 1, 2, 2]
    assert s.wout.tolist() == [2.0, 5.0] and s.win.tolist() == [5.0, 2.0]


def test_multicore_automatic_when_hosts_equal():
    topo = ltm.concentrate(ltm.torus("4"), 1)  # routers + 4 hosts with 1 slot
    slots = np.where(np.asarray(topo.slots) > 0, 4, 0)
    g = stencil("4x4")
    auto = map_processes(topo, g, strategy="greedy", slots=slots)
    assert_bijection(auto, topo, 16, slots)
    # the section 4.2 step was applied: same result as calling it directly
    assert auto == map_multicore(topo, g, slots=slots, inner="greedy")
    assert ltm.hop_bytes(topo, g, auto) < ltm.hop_bytes(topo, g, map_processes(topo, g, strategy="random",
                                                                               slots=slots, seed=0))


def test_refinements_default_start_and_silent_scotch(capfd):
    topo = ltm.torus("4x4")
    g = scrambled_torus("4x4", 1)
    m = refine_two_opt(topo, g, objective="hopbytes", iterations=20000, seed=0)
    assert ltm.hop_bytes(topo, g, m) < ltm.hop_bytes(topo, g, np.arange(16))
    if "scotch" in STRATEGIES:
        from libtopomap.mappers import map_scotch

        assert_bijection(map_scotch(topo, g, seed=0), topo, 16, np.ones(16, int))
        out, err = capfd.readouterr()
        assert out == "" and err == ""


def test_spare_slots_leave_the_weakest_host_link_idle():
    # One switch, five hosts; h4's link has half the capacity.  Four processes talk all-to-all:
    # any mapping that uses h4 has congestion 3/0.5 = 6 on its link, any other has 3.
    names = ["sw", "h0", "h1", "h2", "h3", "h4"]
    links = [(0, i) for i in range(1, 6)]
    caps = [1, 1, 1, 1, 0.5]
    topo = ltm.Topology(names, links, capacities=caps, slots=[0, 1, 1, 1, 1, 1])
    g = ltm.CommGraph(4, [i for i in range(4) for j in range(4) if i != j],
                      [j for i in range(4) for j in range(4) if i != j])
    for strategy in [s for s in ltm.STRATEGIES if s != "identity"]:
        for seed in range(5):
            m = ltm.map_processes(topo, g, strategy=strategy, seed=seed)
            assert 5 not in m.vertices.tolist(), (strategy, seed)
            assert ltm.max_congestion(topo, g, m) == 3.0
    # other objectives do not look at capacities; identity keeps the current placement
    m = ltm.map_processes(topo, g, strategy="identity", placement=[2, 3, 4, 5])
    assert m.vertices.tolist() == [2, 3, 4, 5]


def test_spare_weakest_hosts_is_a_no_op_on_homogeneous_machines():
    from libtopomap.mappers import spare_weakest_hosts

    topo = ltm.torus("4x4")
    slots = topo.slots.astype(np.int64)
    assert spare_weakest_hosts(topo, slots, 10).tolist() == slots.tolist()


def test_compile_kernels_runs_every_strategy_and_refinement():
    from libtopomap.mappers import compile_kernels

    for refine in (None, "two-opt", "ta"):
        for objective in OBJECTIVES:
            compile_kernels(objective=objective, refine=refine)
    with pytest.raises(MappingError, match="unknown strategy"):
        compile_kernels(["no-such-strategy"])


# ---------------------------------------------------------------------------- bad seeds and slots on switches
@pytest.mark.parametrize("seed, exc", [(-1, ltm.ArgumentError), (1.5, ltm.ArgumentTypeError),
                                       ("x", ltm.ArgumentTypeError), (True, ltm.ArgumentTypeError)])
@pytest.mark.parametrize("strategy", ["random", "greedy", "rcm"])
def test_bad_seeds_are_library_errors(seed, exc, strategy):
    with pytest.raises(exc, match="seed must be a non-negative integer"):
        ltm.map_processes(ltm.torus("4"), ltm.as_commgraph([(0, 1), (1, 2)]), strategy=strategy, seed=seed)
    with pytest.raises(ValueError if exc is ltm.ArgumentError else TypeError):
        ltm.map_processes(ltm.torus("4"), ltm.as_commgraph([(0, 1)]), strategy=strategy, seed=seed)


def test_slots_on_switches_are_rejected():
    ft = ltm.fattree(4, 2)
    slots = np.ones(ft.n_vertices, dtype=int)
    with pytest.raises(ltm.MappingError, match=r"process\(es\) on switch 'sw-"):
        ltm.map_processes(ft, ltm.as_commgraph([(0, 1)]), slots=slots)
    hosts_only = np.where(np.asarray(ft.kinds) == "switch", 0, 1)
    m = ltm.map_processes(ft, ltm.as_commgraph([(0, 1)]), slots=hosts_only)
    assert all(ft.kinds[v] != "switch" for v in m.vertices)
