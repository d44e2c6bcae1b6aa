"""``evaluate`` on generated fat trees takes ECMP loads in closed form: the same numbers as the
breadth-first searches it replaces (Brandes accumulation over all shortest paths)."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.routing import ecmp_vertex_traffic

from _helpers import ecmp_searched


@pytest.mark.parametrize("k,n", [(2, 3), (3, 3), (4, 2), (4, 3)])
def test_closed_form_equals_search(k, n):
    t = ltm.fattree(k, n)
    rng = np.random.default_rng(k * 10 + n)
    m = 4 * t.hosts.size
    s = rng.choice(t.hosts, m).astype(np.int64)
    d = rng.choice(t.hosts, m).astype(np.int64)  # includes s == d demands (no load)
    w = rng.integers(1, 9, m).astype(np.float64)
    got = ecmp_vertex_traffic(t, s, d, w)
    np.testing.assert_allclose(got, ecmp_searched(t, s, d, w), rtol=1e-12, atol=1e-12)


def test_plain_topology_of_the_same_graph_is_searched():
    # the same links without the generator's attrs take the search path: equal results
    t = ltm.fattree(4, 2)
    plain = ltm.Topology(t.names, np.stack([t.link_u, t.link_v], 1), capacities=t.capacity, slots=t.slots,
                         kinds=t.kinds)
    g = ltm.load_graph("stencil:4x4")
    v = np.random.default_rng(0).permutation(t.hosts)[:g.n]
    a, b = ltm.evaluate(t, g, v), ltm.evaluate(plain, g, v)
    assert a == pytest.approx(b, rel=1e-12)
