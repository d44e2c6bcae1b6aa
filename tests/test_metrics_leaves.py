"""ECMP loads by search hand the demands of leaves (hosts on a single link) to their attachment
vertices at both ends and search the network without its leaves: the same loads as one search per
source over the whole network, and as path enumeration."""

import networkx as nx
import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import Topology
from libtopomap.distances import DistanceOracle
from libtopomap.routing import ecmp_vertex_traffic

from _helpers import ecmp_searched


def _plain(topo, table_limit):
    """``topo`` without generator attributes (no closed form), its oracle built with ``table_limit``
    (small limits mark the leaves even on small networks)."""
    t = Topology(topo.names, np.stack([topo.link_u, topo.link_v], 1), capacities=topo.capacity, slots=topo.slots,
                 kinds=topo.kinds)
    t.__dict__["distances"] = DistanceOracle(t, table_limit=table_limit)
    return t


# one search per source over the whole network (no closed form, no leaf shortcut)
_whole_network = ecmp_searched


def _enumerated(t, s, d, w):
    g = t.to_networkx()
    out = np.zeros(t.n_arcs)
    for a, b, x in zip(s.tolist(), d.tolist(), w.tolist()):
        if a == b:
            continue
        paths = list(nx.all_shortest_paths(g, a, b))
        for p in paths:
            for u, v in zip(p, p[1:]):
                lo = t.indptr[u]
                out[lo + int(np.flatnonzero(t.indices[lo:t.indptr[u + 1]] == v)[0])] += x / len(paths)
    return out


@pytest.mark.parametrize("build", [lambda: ltm.dragonfly(5, 4, 2, 1), lambda: ltm.fattree(3, 3),
                                   lambda: ltm.concentrate(ltm.torus("3x4"), 2)], ids=["dragonfly", "fattree", "torus"])
@pytest.mark.parametrize("table_limit", [0, 4, 1 << 20])
def test_leaf_shortcut_equals_whole_network_search(build, table_limit):
    t = _plain(build(), table_limit)
    _, off = t.distances.attachments()
    assert off.any()   # leaves are marked whatever the limit (a table covers the other vertices): the shortcut runs
    rng = np.random.default_rng(table_limit + t.n_vertices)
    m = 6 * t.hosts.size
    # hosts, and now and then a switch or router, at either end; s == d and same-switch pairs included
    s = np.where(rng.random(m) < 0.9, rng.choice(t.hosts, m), rng.integers(0, t.n_vertices, m)).astype(np.int64)
    d = np.where(rng.random(m) < 0.9, rng.choice(t.hosts, m), rng.integers(0, t.n_vertices, m)).astype(np.int64)
    w = rng.uniform(0.5, 3.0, m)
    got = ecmp_vertex_traffic(t, s, d, w)
    np.testing.assert_allclose(got, _whole_network(t, s, d, w), rtol=1e-12, atol=1e-12)
    if table_limit == 4:
        np.testing.assert_allclose(got, _enumerated(t, s, d, w), rtol=1e-9, atol=1e-9)


def test_two_stars_joined_by_a_switch():
    # a -> c: a - s1 - x - s2 - c, one path; a -> b: a - s1 - b (both ends leaves of one switch)
    t = _plain(Topology(["s1", "a", "b", "s2", "c", "d", "x"], [[0, 1], [0, 2], [3, 4], [3, 5], [0, 6], [3, 6]],
                        slots=[0, 1, 1, 0, 1, 1, 0]), 0)
    tr = ecmp_vertex_traffic(t, np.array([1, 1]), np.array([4, 2]), np.array([1.0, 2.0]))
    want = {(1, 0): 3.0, (0, 6): 1.0, (6, 3): 1.0, (3, 4): 1.0, (0, 2): 2.0}
    for a in range(t.n_arcs):
        assert tr[a] == want.get((int(t.arc_source[a]), int(t.indices[a])), 0.0)
