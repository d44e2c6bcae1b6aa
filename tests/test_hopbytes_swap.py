"""The N_C^d swap local search on hop-bytes (mappers/hopbytes_swap.py): exact local optimality by brute
force, agreement with libtopomap.evaluate, monotonicity, bijection, determinism, budgets."""

import itertools
import time

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap._kernels.bfs import bfs_balls, bfs_distance_rows
from libtopomap.errors import MappingError
from libtopomap.mapping import check_mapping
from libtopomap.mappers import map_processes, refine_hopbytes_swap
from libtopomap.mappers.hopbytes_swap import hopbytes_swap
from libtopomap.commgraph import SymGraph
from libtopomap.patterns import stencil

from _helpers import dense_distances, hop_bytes_of, random_ring_graph


SMALL = [ltm.torus("2x4"), ltm.fattree(2, 3), ltm.mesh("2x4")]


@pytest.mark.parametrize("topo", SMALL, ids=["torus2x4", "fattree2x3", "mesh2x4"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_local_optimum_by_brute_force(topo, seed):
    hosts = np.flatnonzero(topo.slots > 0)
    n = hosts.size
    assert n <= 8
    g = random_ring_graph(n, 10, seed)
    D = dense_distances(topo)
    start = np.random.default_rng(seed).permutation(hosts)
    m = refine_hopbytes_swap(topo, g, start, seed=seed, depth=n)  # N_C^n: every pair of a connected graph
    v = np.asarray(m.vertices, np.int64)
    # a bijection into the slots, reported hop-bytes equal evaluate's and the brute force
    check_mapping(topo, v, n, slots=topo.slots)
    assert sorted(v) == sorted(hosts)
    hb = hop_bytes_of(D, g, v)
    assert ltm.evaluate(topo, g, v)["hop_bytes"] == pytest.approx(hb)
    _, start_value, best_value, stats = hopbytes_swap(topo, g, start, topo.slots.astype(np.int64),
                                                      rng=np.random.default_rng(seed), depth=n)
    assert stats["stopped"] in ("local optimum", "bound")
    assert best_value == pytest.approx(hb) and start_value == pytest.approx(hop_bytes_of(D, g, start))
    # no single swap improves (exact), and the result is never worse than the start
    for i, j in itertools.combinations(range(n), 2):
        w = v.copy()
        w[i], w[j] = w[j], w[i]
        assert hop_bytes_of(D, g, w) >= hb
    assert hb <= hop_bytes_of(D, g, start)
    # and the global optimum over all n! placements is no better than ... a lower bound of it
    best = min(hop_bytes_of(D, g, hosts[list(p)]) for p in itertools.permutations(range(n)))
    assert best <= hb


def test_free_slots_shift_moves():
    # 5 processes on 8 hosts: no swap and no shift to a free slot improves
    topo = ltm.torus("2x4")
    g = random_ring_graph(5, 6, 3)
    D = dense_distances(topo)
    start = np.array([0, 7, 2, 5, 3])
    m = refine_hopbytes_swap(topo, g, start, seed=0, depth=5)
    v = np.asarray(m.vertices, np.int64)
    assert np.unique(v).size == 5
    hb = hop_bytes_of(D, g, v)
    free = sorted(set(range(8)) - set(v.tolist()))
    for i in range(5):
        for f in free:
            w = v.copy()
            w[i] = f
            assert hop_bytes_of(D, g, w) >= hb
        for j in range(i + 1, 5):
            w = v.copy()
            w[i], w[j] = w[j], w[i]
            assert hop_bytes_of(D, g, w) >= hb


def test_never_increases_and_deterministic():
    topo = ltm.torus("6x6x6")
    g = stencil((6, 6, 6))
    start = np.random.default_rng(4).permutation(topo.n_vertices)
    slots = topo.slots.astype(np.int64)
    runs = [hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(7), iterations=200_000) for _ in range(2)]
    (v1, s1, b1, st1), (v2, s2, b2, st2) = runs
    assert np.array_equal(v1, v2) and b1 == b2 and st1["trace"] == st2["trace"]
    trace = [s1] + st1["trace"]
    assert all(b <= a for a, b in zip(trace, trace[1:]))
    assert b1 < s1 and b1 == ltm.evaluate(topo, g, v1)["hop_bytes"]
    assert st1["iterations"] <= 200_000


def test_budget_and_stall():
    topo = ltm.torus("12x12x12")
    g = stencil((12, 12, 12))
    start = np.random.default_rng(0).permutation(topo.n_vertices)
    slots = topo.slots.astype(np.int64)
    hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(0), iterations=10)  # load the kernels
    _, s0, b, st = hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(0), iterations=2000)
    assert st["stopped"] == "moves" and st["iterations"] == 2000 and b < s0
    # the budget stops the search by the clock (setup may use all of it on a loaded machine: no progress
    # is asserted here; how close to the budget it stops is benchmarks/bench_engine.py's business)
    t = time.perf_counter()
    _, s0, b, st = hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(0), time_budget=0.3)
    assert st["stopped"] == "budget" and b <= s0
    assert time.perf_counter() - t < 0.3 + 30.0
    _, _, _, st = hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(0), stall=50)
    assert st["stopped"] == "stall"


def test_bfs_balls_exact():
    s = SymGraph(stencil((5, 7)))
    src = np.arange(s.n, dtype=np.int64)
    ptr, idx = bfs_balls(s.indptr, s.indices, s.n, src, 3, 10**6)
    hops = np.full((s.n, s.n), -1)
    bfs_distance_rows(s.indptr, s.indices, s.n, src, np.arange(s.n), hops)
    for u in range(s.n):
        want = {w for w in range(u + 1, s.n) if 0 < hops[u, w] <= 3}
        got = idx[ptr[u]:ptr[u + 1]]
        assert set(got.tolist()) == want and got.size == len(want)
        assert np.all(np.diff(hops[u, got]) >= 0)  # breadth-first order
    ptr, idx = bfs_balls(s.indptr, s.indices, s.n, src, 3, 4)
    assert np.diff(ptr).max() == 4


def test_registered_and_used_for_hopbytes():
    topo, g = ltm.torus("4x4"), stencil((4, 4))
    start = np.random.default_rng(1).permutation(16)
    m = map_processes(topo, g, strategy="identity", placement=start, refine="hb-swap", objective="hopbytes", seed=0)
    assert m.strategy == "identity+hb-swap"
    assert ltm.evaluate(topo, g, m)["hop_bytes"] <= ltm.evaluate(topo, g, start)["hop_bytes"]
    with pytest.raises(MappingError, match="depth"):
        refine_hopbytes_swap(topo, g, start, depth=0)


@pytest.mark.parametrize("topo", SMALL, ids=["torus2x4", "fattree2x3", "mesh2x4"])
@pytest.mark.parametrize("seed", [0, 1])
def test_threshold_passes_exact_values_and_deterministic(topo, seed):
    from libtopomap.mappers.hopbytes_swap import threshold_swap_passes

    hosts = np.flatnonzero(topo.slots > 0)
    n = hosts.size
    g = random_ring_graph(n, 10, seed)
    D = dense_distances(topo)
    slots = topo.slots.astype(np.int64)
    start = np.random.default_rng(seed).permutation(hosts)
    runs = [threshold_swap_passes(topo, g, start, slots, rng=np.random.default_rng(seed), passes=6, depth=n,
                                  level=8.0, moves=10_000) for _ in range(2)]
    (v, s0, s1, stats), (v2, *_rest) = runs
    assert np.array_equal(v, v2)  # the same seed gives the same mapping
    check_mapping(topo, v, n, slots=topo.slots)
    assert s0 == pytest.approx(hop_bytes_of(D, g, start))
    assert s1 == pytest.approx(hop_bytes_of(D, g, v)) and s1 <= s0  # the best seen, never worse than the start
    best = min(hop_bytes_of(D, g, hosts[list(p)]) for p in itertools.permutations(range(n)))
    assert s1 >= best
    assert stats["passes"] <= 6 and stats["iterations"] <= 10_000


def test_threshold_passes_keep_to_their_move_budget():
    from libtopomap.mappers.hopbytes_swap import threshold_swap_passes

    t, g = ltm.torus("8x8"), stencil("4x16")
    start = np.random.default_rng(3).permutation(64)
    _, s0, s1, stats = threshold_swap_passes(t, g, start, t.slots.astype(np.int64), rng=np.random.default_rng(0),
                                             passes=50, depth=4, level=4.0, moves=777)
    assert stats["iterations"] == 777 and s1 <= s0
