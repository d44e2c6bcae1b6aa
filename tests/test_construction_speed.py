"""Work the constructions of ``map --strategy all`` leave out (issue 19, time at 4,096 processes), and
that leaving it out changes no result: interchangeable hosts in recursive bisection, the minimum-cost
assignment of multisection's parts, the swap search on one hierarchy of a large dragonfly, no
threshold rounds above ``KICK_MAX``, and a distance table over the non-leaf vertices only."""

import importlib

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import Topology
from libtopomap.patterns import scrambled_torus

ms = importlib.import_module("libtopomap.mappers.multisection")
rec = importlib.import_module("libtopomap.mappers.recursive")


def _metrics(t, g, m):
    e = ltm.evaluate(t, g, m)
    return (round(e["max_congestion"], 9), round(e["avg_congestion"], 9), e["hop_bytes"], round(e["avg_dilation"], 9))


def _with_slots(t, k):
    return Topology(t.names, np.stack([t.link_u, t.link_v], 1), capacities=t.capacity,
                    slots=np.where(t.slots > 0, k, 0), kinds=t.kinds, name=t.name, attrs=t.attrs)


@pytest.mark.parametrize("case", ["fattree", "dragonfly", "two-slots", "partial"])
def test_recursive_places_interchangeable_hosts_without_bisecting(case, monkeypatch):
    t, g = {"fattree": (ltm.fattree(4, 3), scrambled_torus("8x8", 1)),
            "dragonfly": (ltm.dragonfly(5, 4, 2, 1), scrambled_torus("5x8", 2)),
            "two-slots": (_with_slots(ltm.fattree(4, 2), 2), scrambled_torus("4x8", 3)),
            "partial": (ltm.dragonfly(9, 4, 2, 2), scrambled_torus("7x9", 4))}[case]
    calls = []
    metis = rec.metis_csr

    def counted(*a, **k):
        calls.append(1)
        return metis(*a, **k)

    monkeypatch.setattr(rec, "metis_csr", counted)
    fast = rec.map_recursive(t, g, seed=5)
    n_fast = len(calls)
    # every bisection down to single hosts, as before
    monkeypatch.setattr(rec, "_interchangeable_hosts", lambda topology: np.full(topology.n_vertices, -1, np.int64))
    slow = rec.map_recursive(t, g, seed=5)
    n_slow = len(calls) - n_fast
    if case == "two-slots":   # which processes share a host matters: every bisection runs
        assert n_slow == n_fast
    else:   # the bisections below the switches are left out
        assert n_slow > n_fast
    assert _metrics(t, g, fast) == _metrics(t, g, slow)
    assert np.all(np.bincount(fast.vertices, minlength=t.n_vertices) <= t.slots)


def test_interchangeable_hosts_share_their_switch_and_link_capacity():
    # s1: hosts a, b (capacity 1) and c (capacity 2); s2: host d; s1 - s2
    t = Topology(["s1", "a", "b", "c", "s2", "d"], [[0, 1], [0, 2], [0, 3], [4, 5], [0, 4]],
                 capacities=[1, 1, 2, 1, 1], slots=[0, 1, 1, 1, 0, 1])
    twin = rec._interchangeable_hosts(t)
    assert twin[1] == twin[2] >= 0
    assert len({int(twin[1]), int(twin[3]), int(twin[5])}) == 3
    assert twin[0] == twin[4] == -1


def test_assignment_of_parts_is_a_minimum_cost_perfect_assignment():
    from itertools import permutations

    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(0)
    for k in (1, 2, 3, 4, 6, 16):
        for _ in range(200):
            # few distinct values and zeros: ties everywhere, and entries the sparse matrix would drop
            c = rng.integers(0, 4, (k, k)).astype(float) * rng.choice([1.0, 0.1, 3.7, 1e7])
            a = ms._assignment(c)
            assert sorted(a.tolist()) == list(range(k))
            rows = np.arange(k)
            if k <= 6:
                best = min(c[rows, list(p)].sum() for p in permutations(range(k)))
            else:
                best = c[rows, linear_sum_assignment(c)[1]].sum()
            assert c[rows, a].sum() == pytest.approx(best, rel=1e-12, abs=1e-9)


def _count(monkeypatch, name):
    calls = []
    f = getattr(ms, name)

    def counted(*a, **k):
        calls.append(1)
        return f(*a, **k)

    monkeypatch.setattr(ms, name, counted)
    return calls


def test_large_dragonfly_searches_the_better_descent_only(monkeypatch):
    t, g = ltm.dragonfly(9, 4, 2, 2), scrambled_torus("8x9", 0)
    monkeypatch.setattr(ms, "HOPBYTES_STARTS", 1)  # one descent per hierarchy: they are counted
    searches = _count(monkeypatch, "_swap_search")
    both = ms.map_multisection(t, g, seed=1)
    assert len(searches) == 2
    monkeypatch.setattr(ms, "SEARCH_BOTH_MAX", 8)
    descents = _count(monkeypatch, "_descend")
    one = ms.map_multisection(t, g, seed=1)
    assert len(searches) == 3 and len(descents) == 2
    assert np.array_equal(one.vertices, ms.map_multisection(t, g, seed=1).vertices)   # deterministic
    # the search kept the better descent's (max congestion, hop-bytes) order: never worse than it
    key = lambda m: (round(m["max_congestion"], 9), m["hop_bytes"])  # noqa: E731
    monkeypatch.setattr(ms, "SWAP_DEPTH", 0)
    assert key(ltm.evaluate(t, g, one)) <= key(ltm.evaluate(t, g, ms.map_multisection(t, g, seed=1)))
    assert len(both) == len(one) == g.n


def test_no_threshold_rounds_above_kick_max(monkeypatch):
    t, g = ltm.fattree(4, 3), scrambled_torus("8x8", 0)
    rounds = _count(monkeypatch, "threshold_swap_passes")
    ms.map_multisection(t, g, seed=1)
    assert len(rounds) == ms.KICK_ROUNDS
    monkeypatch.setattr(ms, "KICK_MAX", 63)
    ms.map_multisection(t, g, seed=1)
    assert len(rounds) == ms.KICK_ROUNDS


def test_small_network_table_covers_the_non_leaf_vertices():
    t = ltm.dragonfly(9, 4, 2, 2)   # 72 hosts on 36 routers
    o = t.distances
    routers = int(np.count_nonzero(t.slots == 0))
    assert o.kind == "table" and o.covers_all and o._table.shape == (routers, routers)
    a, b = np.meshgrid(np.arange(t.n_vertices), np.arange(t.n_vertices))
    import networkx as nx

    ref = dict(nx.all_pairs_shortest_path_length(t.to_networkx()))
    want = np.array([ref[int(x)][int(y)] for x, y in zip(a.ravel(), b.ravel())])
    assert np.array_equal(o.pairs(a.ravel(), b.ravel()), want)
