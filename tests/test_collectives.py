"""Collective schedules, objectives, allocations and rank placement (Cui 2024, chapters 2-4)."""

import functools
import json
import math
import time

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import libtopomap as ltm
from libtopomap.cli import main
from libtopomap.collectives import (allocate, collective_placement, contention, evaluate_schedule, optimize_ranks,
                                    schedule, schedule_graph, step_model, total_hops)
from libtopomap.errors import ArgumentTypeError, CommGraphError, MappingError
from libtopomap.generators.circulant import circulant
from libtopomap.generators.shortcut import random_shortcut_ring


@functools.lru_cache(maxsize=None)
def _circulant(n):
    """Shared across tests: the cached host distances are the expensive part."""
    return circulant(n)


def _pairs(steps):
    return [sorted(map(tuple, s.tolist())) for s in steps]


# ----------------------------------------------------------------------------------- schedules
def test_bcast_thesis_figure_2_13():
    assert _pairs(schedule("bcast", 8)) == [[(0, 4)], [(0, 2), (4, 6)], [(0, 1), (2, 3), (4, 5), (6, 7)]]


def test_allreduce_thesis_figure_2_14():
    steps = schedule("allreduce", 8)
    for t, step in enumerate(steps):
        assert sorted(map(tuple, step.tolist())) == sorted((i, i ^ (1 << t)) for i in range(8))


def test_bruck_thesis_figure_2_15():
    # The thesis' figure sends to i - 2^k, MPICH to i + 2^k: the same messages reversed.
    fig = [[(i, (i - 2**k) % 8) for i in range(8)] for k in range(3)]
    assert _pairs(schedule("alltoall", 8)) == [sorted((d, s) for s, d in step) for step in fig]


def _simulate(steps, p, start):
    """Each message carries everything the sender knows at the start of the step."""
    know = [set(s) for s in start]
    for step in steps:
        snap = [set(k) for k in know]
        for s, d in step.tolist():
            know[d] |= snap[s]
    return know


@settings(max_examples=40, deadline=None)
@given(p=st.integers(1, 70), data=st.data())
def test_bcast_reaches_everyone_once_any_root(p, data):
    root = data.draw(st.integers(0, p - 1))
    steps = schedule("bcast", p, root=root)
    assert len(steps) == math.ceil(math.log2(p)) if p > 1 else steps == []
    recv = np.concatenate(steps)[:, 1] if steps else np.zeros(0)
    assert sorted(recv.tolist()) == sorted(set(range(p)) - {root})
    # causality: a rank only sends once it has the data
    has = {root}
    for step in steps:
        assert set(step[:, 0].tolist()) <= has
        has |= set(step[:, 1].tolist())


@settings(max_examples=40, deadline=None)
@given(p=st.integers(1, 70))
def test_allreduce_and_allgather_combine_everything(p):
    everyone = set(range(p))
    for name in ("allreduce", "allgather"):
        know = _simulate(schedule(name, p), p, [{i} for i in range(p)])
        assert all(k == everyone for k in know), name
    steps = schedule("allreduce", p)
    pof2 = 1 << (p.bit_length() - 1)
    assert sum(len(s) for s in steps) == pof2 * int(math.log2(pof2)) + 2 * (p - pof2)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(2, 70))
def test_bruck_shape(p):
    steps = schedule("alltoall", p)
    assert len(steps) == math.ceil(math.log2(p))
    for k, s in enumerate(steps):
        assert s[:, 0].tolist() == list(range(p)) and s[:, 1].tolist() == [(i + 2**k) % p for i in range(p)]
    # Bruck's data movement lets every block reach every rank.
    know = _simulate(steps, p, [{i} for i in range(p)])
    assert all(k == set(range(p)) for k in know)


def test_user_schedule_and_errors():
    steps = schedule([[(0, 1)], [[1, 2], [2, 0]], []], 3)
    assert [s.shape for s in steps] == [(1, 2), (2, 2), (0, 2)] and steps[1].dtype == np.int64
    with pytest.raises(CommGraphError, match="step 0: message \\(0, 3\\)"):
        schedule([[(0, 3)]], 3)
    with pytest.raises(CommGraphError, match="sends to itself"):
        schedule([[(1, 1)]], 3)
    with pytest.raises(CommGraphError, match="unknown collective 'scatter'"):
        schedule("scatter", 4)
    with pytest.raises(CommGraphError, match="root 4"):
        schedule("bcast", 4, root=4)
    with pytest.raises(CommGraphError):
        schedule("bcast", 0)
    # Whole floats are rank numbers; anything else is not a list of (src, dst) pairs.
    assert schedule([[(0.0, 2.0)]], 3)[0].tolist() == [[0, 2]]
    for bad in ([[(0, 1, 2)]], [[(0, 1), (2,)]], [[(0.5, 1)]], [[(0, np.inf)]], [[(0, 1 + 0j)]], [[("0", "1")]],
                [[(0, None)]], [[[(0, 1)]]]):
        with pytest.raises(CommGraphError, match="step 0: expected \\(src, dst\\) rank pairs"):
            schedule(bad, 3)


def test_schedule_graph_weights():
    g = schedule_graph(schedule("allgather", 5), 5)
    assert g.n == 5 and g.n_edges == 5 and set(g.weights.tolist()) == {4.0}


# ----------------------------------------------------------------------------------- Table 4.1
@pytest.mark.parametrize("k", range(1, 11))
def test_table_4_1_all_nodes(k):
    n = 2**k
    t = _circulant(n)
    ranks = np.arange(n)
    assert total_hops(t, schedule("bcast", n), ranks) == n - 1
    assert total_hops(t, schedule("allreduce", n), ranks) == n * k
    assert total_hops(t, schedule("alltoall", n), ranks) == n * k
    for root in (1, n // 2, n - 1):  # circulants are vertex-transitive: any root
        assert total_hops(t, schedule("bcast", n, root=root), ranks) == n - 1


@pytest.mark.parametrize("n, m", [(16, 8), (64, 4), (256, 32), (1024, 512), (1024, 64), (1024, 1)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_table_4_1_circulant_stride_placement(n, m, seed):
    t = _circulant(n)
    nodes = allocate(t, m, "circulant", seed=seed)
    assert np.all(np.diff(nodes) % n == n // m) and len(set(nodes.tolist())) == m  # Algorithm 4.1
    j = int(math.log2(m))
    assert total_hops(t, schedule("bcast", m), nodes) == m - 1
    assert total_hops(t, schedule("allreduce", m), nodes) == m * j
    assert total_hops(t, schedule("alltoall", m), nodes) == m * j
    # every message is one hop, so no optimizer can improve it
    r = collective_placement(t, nodes, "alltoall", optimizer="anneal", iterations=500, seed=seed)
    assert r.after["hops"] == r.before["hops"] == m * j


# ----------------------------------------------------------------------------------- objectives
def test_total_hops_matches_networkx():
    t = random_shortcut_ring(60, 5, seed=4)
    g = t.to_networkx()
    rng = np.random.default_rng(0)
    nodes = rng.choice(60, 24, replace=False)
    for name in ("bcast", "allreduce", "alltoall", "allgather"):
        steps = schedule(name, 24)
        want = sum(nx.shortest_path_length(g, int(nodes[s]), int(nodes[d])) for st_ in steps for s, d in st_)
        assert total_hops(t, steps, nodes) == want


def _path_costs_brute(t, steps, nodes):
    """Route by hand (lowest-index next hop one closer), count arc loads per step."""
    dist = t.hop_distances(np.arange(t.n_vertices))
    cont = stepsum = 0
    for step in steps:
        load = {}
        for s, d in step.tolist():
            v, goal = int(nodes[s]), int(nodes[d])
            while v != goal:
                nxt = min(int(u) for u in t.neighbors(v) if dist[goal, u] == dist[goal, v] - 1)
                load[(v, nxt)] = load.get((v, nxt), 0) + 1
                v = nxt
        cont += sum(x - 1 for x in load.values())
        stepsum += max(load.values(), default=0)
    return cont, stepsum


def test_contention_and_step_on_a_path():
    t = ltm.mesh([4])  # 0-1-2-3
    steps = [np.array([[0, 2], [1, 3]]), np.array([[0, 3], [3, 0]])]
    # step 0: both cross 1->2; step 1: opposite directions do not contend
    assert contention(t, steps, [0, 1, 2, 3]) == 1
    assert step_model(t, steps, [0, 1, 2, 3]) == 2 + 1
    assert total_hops(t, steps, [0, 1, 2, 3]) == 2 + 2 + 3 + 3


@pytest.mark.parametrize("name", ["bcast", "allreduce", "alltoall", "allgather"])
def test_path_objectives_match_brute_force(name):
    t = random_shortcut_ring(40, 4, seed=7)
    nodes = allocate(t, 16, "random", seed=3)
    steps = schedule(name, 16)
    assert (contention(t, steps, nodes), step_model(t, steps, nodes)) == _path_costs_brute(t, steps, nodes)


# ----------------------------------------------------------------------------------- allocations
def test_allocations():
    t = random_shortcut_ring(128, 6, seed=2)
    for method in ("ascending", "random", "tree", "ring"):
        a = allocate(t, 32, method, seed=5)
        assert a.shape == (32,) and len(set(a.tolist())) == 32 and a.min() >= 0 and a.max() < 128
        assert np.array_equal(a, allocate(t, 32, method, seed=5))
    assert allocate(t, 5, "ascending").tolist() == [0, 1, 2, 3, 4]
    ring = allocate(t, 32, "ring", seed=5)
    assert np.all(np.diff(ring) % 128 == 1)
    tree = allocate(t, 32, "tree", seed=5)
    d = t.hop_distances([tree[0]])[0]
    # a BFS prefix: every chosen node is no farther from the root than any node left out
    assert d[tree].max() <= np.delete(d, tree).min() and list(d[tree]) == sorted(d[tree])
    with pytest.raises(MappingError, match="does not divide"):
        allocate(t, 48, "circulant")
    with pytest.raises(MappingError, match="only 128"):
        allocate(t, 129, "random")
    with pytest.raises(MappingError, match="unknown allocation"):
        allocate(t, 4, "snake")


# ----------------------------------------------------------------------------------- optimizers
@pytest.mark.parametrize("objective", ["hops", "contention", "step"])
@pytest.mark.parametrize("optimizer", ["two-opt", "greedy", "anneal"])
def test_incremental_costs_are_exact(objective, optimizer):
    t = random_shortcut_ring(64, 5, seed=1)
    nodes = allocate(t, 32, "random", seed=2)
    for name in ("bcast", "allreduce", "alltoall"):
        steps = schedule(name, 32)
        r = optimize_ranks(t, nodes, steps, objective=objective, optimizer=optimizer, iterations=3000, seed=4)
        v = nodes[r.permutation]
        got = evaluate_schedule(t, steps, v)[objective]
        assert r.cost_after == got <= r.cost_before == evaluate_schedule(t, steps, nodes)[objective]
        assert sorted(r.permutation.tolist()) == list(range(32))


def test_two_opt_is_deterministic_and_none_is_identity():
    t = random_shortcut_ring(64, 5, seed=1)
    nodes = allocate(t, 32, "random", seed=2)
    steps = schedule("allreduce", 32)
    a = optimize_ranks(t, nodes, steps, iterations=2000, seed=9)
    b = optimize_ranks(t, nodes, steps, iterations=2000, seed=9)
    assert np.array_equal(a.permutation, b.permutation) and a.accepted > 0
    n = optimize_ranks(t, nodes, steps, optimizer="none", seed=9)
    assert n.permutation.tolist() == list(range(32)) and n.cost_after == n.cost_before
    with pytest.warns(DeprecationWarning, match=r"optimize_ranks\(nodes=...\) is deprecated; use allocation="):
        old = optimize_ranks(t, nodes=nodes, steps=steps, iterations=2000, seed=9)
    assert np.array_equal(old.permutation, a.permutation)
    assert np.array_equal(optimize_ranks(t, allocation=nodes, steps=steps, iterations=2000, seed=9).permutation,
                          a.permutation)


def test_small_case_reaches_brute_force_optimum():
    import itertools

    t = random_shortcut_ring(12, 3, seed=5)
    nodes = allocate(t, 6, "random", seed=1)
    steps = schedule("alltoall", 6)
    best = min(total_hops(t, steps, nodes[list(p)]) for p in itertools.permutations(range(6)))
    r = optimize_ranks(t, nodes, steps, optimizer="anneal", iterations=5000, seed=0)
    assert r.cost_after == best


def test_thesis_instance_two_opt_and_speed():
    """Tables 3.4/3.5: 1024 nodes of degree 19, 512 processes, 200,000 two-opt iterations."""
    t = random_shortcut_ring(1024, 19, seed=0)
    nodes = allocate(t, 512, "random", seed=1)
    bc = collective_placement(t, nodes, "bcast", iterations=200_000, seed=3, evaluate_paths=False)
    assert 1300 <= bc.before["hops"] <= 1450 and 740 <= bc.after["hops"] <= 850  # thesis: 1,373 -> 794
    ring = allocate(t, 512, "ring", seed=1)
    collective_placement(t, ring, "allreduce", iterations=1000, seed=3, evaluate_paths=False)  # warm-up
    tic = time.perf_counter()
    ar = collective_placement(t, ring, "allreduce", iterations=200_000, seed=3, evaluate_paths=False)
    # speed is bench_collective.py's business (about 0.5 s idle); this only catches a pathological slowdown
    assert time.perf_counter() - tic < 30.0 and ar.seconds <= 30.0
    assert 10900 <= ar.before["hops"] <= 11400 and 9600 <= ar.after["hops"] <= 10000  # 11,152 -> 9,816
    an = collective_placement(t, ring, "allreduce", optimizer="anneal", iterations=50_000, seed=3,
                              evaluate_paths=False)
    assert an.after["hops"] <= 0.95 * ar.after["hops"]


# ----------------------------------------------------------------------------------- API and CLI
def test_collective_placement_api():
    t = circulant(64)
    r = ltm.collective_placement(t, [f"n{i}" for i in range(0, 64, 4)][::-1], "bcast", root=2, optimizer="two-opt",
                                 iterations=3000, seed=1)
    assert r.vertices.shape == (16,) and set(r.vertices.tolist()) == set(range(0, 64, 4))
    assert r.after["hops"] <= r.before["hops"] and r.after["hops"] >= 15
    assert r.mapping.vertices.tolist() == r.vertices.tolist()
    d = r.as_dict()
    assert {"hops_before", "hops_after", "contention_before", "contention_after", "seconds", "iterations"} <= set(d)
    json.dumps(d)
    with pytest.raises(MappingError, match="needs nprocs"):
        collective_placement(t, "random")
    with pytest.raises(MappingError, match="unknown optimizer"):
        collective_placement(t, [0, 1, 2], optimizer="magic")
    with pytest.raises(MappingError, match="unknown objective"):
        collective_placement(t, [0, 1, 2], objective="latency")
    with pytest.raises(MappingError, match="slots"):
        collective_placement(t, [0, 0, 1])
    with pytest.raises(CommGraphError):
        collective_placement(t, [0, 1, 2], "gather")


def test_cli(tmp_path, capsys):
    path = tmp_path / "c.ltm"
    ltm.save(str(path), circulant(256))
    assert main(["collective", "--topology", str(path), "--collective", "allreduce", "--procs", "32",
                 "--allocation", "circulant", "--optimizer", "none", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hops_before"] == out["hops_after"] == 32 * 5 and out["contention_after"] == 0
    assert out["allocation"] == "circulant"
    assert main(["collective", "--topology", str(path), "--collective", "bcast", "--procs", "40",
                 "--allocation", "random", "--optimizer", "anneal", "--iterations", "2000", "--seed", "3"]) == 0
    text = capsys.readouterr().out
    assert "hops" in text and "->" in text and "seconds" in text and "random allocation" in text
    assert main(["collective", "--topology", str(path), "--procs", "40", "--allocation", "circulant"]) == 1
    assert "does not divide" in capsys.readouterr().err


def test_cli_placement_is_the_deprecated_name_of_allocation(tmp_path, capsys):
    path = tmp_path / "c.ltm"
    ltm.save(str(path), circulant(64))
    with pytest.warns(DeprecationWarning, match="--placement is deprecated; use --allocation"):
        assert main(["collective", "--topology", str(path), "--procs", "16", "--placement", "circulant",
                     "--optimizer", "none", "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning: --placement is deprecated; use --allocation" in captured.err
    out = json.loads(captured.out)
    assert out["allocation"] == out["placement"] == "circulant" and out["hops_after"] == 16 * 4
    with pytest.raises(SystemExit):  # the alias checks the same choices
        main(["collective", "--topology", str(path), "--procs", "16", "--placement", "nowhere"])
    assert "invalid choice" in capsys.readouterr().err


def test_nodes_is_the_deprecated_name_of_allocation():
    t = circulant(64)
    new = collective_placement(t, allocation="circulant", nprocs=16, optimizer="none", seed=0)
    with pytest.warns(DeprecationWarning, match="use allocation="):
        old = collective_placement(t, nodes="circulant", nprocs=16, optimizer="none", seed=0)
    assert old.vertices.tolist() == new.vertices.tolist() and new.after["hops"] == 64
    with pytest.raises(ArgumentTypeError, match="needs an allocation"):
        collective_placement(t, nprocs=16)
    with pytest.raises(ArgumentTypeError, match="both"), pytest.warns(DeprecationWarning):
        collective_placement(t, "ring", nodes="ring", nprocs=16)
