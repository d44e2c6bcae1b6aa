"""Seed 000 (Cui 2024), chapter 5: circulant vs random shortcut vs dragonfly; cable model; CCO order."""

import numpy as np
import pytest

from libtopomap import Topology, circulant, dragonfly, random_shortcut_ring
from libtopomap.collectives import allocate, schedule, total_hops
from libtopomap.collectives.multicast import cco_order
from libtopomap.errors import TopologyError
from libtopomap.generators.ldr import distance_total
from libtopomap.generators.shortcut import cable_lengths


def _diameter(t):
    return distance_total(t.n_vertices, np.stack([t.link_u, t.link_v], 1))[1]


def test_circulant_diameters_of_figure_51():
    # G(N, log2 N), N = 16 .. 8,192: 2, 3, 3, 4, 4, 5, 5, 6, 6, 7
    got = [_diameter(circulant(1 << k)) for k in range(4, 14)]
    assert got == [2, 3, 3, 4, 4, 5, 5, 6, 6, 7]


def test_the_1024_node_networks_have_degree_19_and_dragonfly_diameter_3():
    df = dragonfly(64, 16, 0, 4)
    assert df.hosts.size == 1024 and int(df.degree.max()) == 19 and _diameter(df) == 3
    assert set(circulant(1024).degree.tolist()) == {19}
    assert set(random_shortcut_ring(1024, 19, seed=0).degree.tolist()) == {19}


@pytest.mark.parametrize("net, expected", [("circulant", (1023, 10240, 10240)), ("dragonfly", (1093, 19968, 21888))])
def test_collective_hops_at_1024_in_ring_order(net, expected):
    # circulant: every binomial / recursive-doubling / Bruck message is one hop (Table 4.1, P - 1 and
    # P log2 P); dragonfly(64, 16, 0, 4): the reference the issue measured with the library
    t = circulant(1024) if net == "circulant" else dragonfly(64, 16, 0, 4)
    v = t.hosts.astype(np.int64)
    assert tuple(total_hops(t, schedule(c, 1024), v) for c in ("bcast", "allreduce", "alltoall")) == expected


def test_cable_lengths_by_hand():
    # 24 switches in a line, 8 per cabinet: 3 cabinets on 2 rows x 2 columns (0 at (0,0), 1 at (0,1), 2 at (1,0))
    links = [(i, i + 1) for i in range(23)] + [(0, 23)]
    t = Topology([f"n{i}" for i in range(24)], links)
    length = dict(zip(zip(t.link_u.tolist(), t.link_v.tolist()), cable_lengths(t).tolist()))
    assert length[(0, 1)] == 1.0 and length[(8, 9)] == 1.0
    assert length[(7, 8)] == pytest.approx(2.6)    # next column: 2 m + 0.6 m
    assert length[(15, 16)] == pytest.approx(4.7)  # (0,1) -> (1,0): 2 m + 0.6 m + 2.1 m
    assert length[(0, 23)] == pytest.approx(4.1)   # next row: 2 m + 2.1 m
    assert cable_lengths(t, switches_per_cabinet=24).tolist() == [1.0] * 24
    with pytest.raises(TopologyError, match="switches_per_cabinet"):
        cable_lengths(t, switches_per_cabinet=0)


def test_circulant_cables_are_shorter_than_random_shortcut_at_1024():
    # section 5.6: 46% shorter (the random shortcut's average varies by a few per cent with the seed)
    c = cable_lengths(circulant(1024)).mean()
    r = np.mean([cable_lengths(random_shortcut_ring(1024, 19, seed=s)).mean() for s in range(2)])
    assert 0.40 < 1 - c / r < 0.52


def test_cco_order_is_breadth_first_from_the_first_node():
    t = circulant(8)  # BFS from 0 visits 0, 1, 2, 4, 6, 7, 3, 5
    assert cco_order(t, [0, 5, 3, 1]).tolist() == [0, 3, 2, 1]
    assert cco_order(t, [3, 5, 3, 1], root=0).tolist() == [3, 0, 2, 1]  # repeated vertex keeps its copies together
    # a tree allocation already is a breadth-first order from its root
    s = random_shortcut_ring(256, 9, seed=1)
    nodes = allocate(s, 64, "tree", seed=2)
    assert cco_order(s, nodes).tolist() == list(range(64))
    # property: distances from the root never decrease along the order
    nodes = allocate(s, 100, "random", seed=3)
    d = s.hop_distances([nodes[0]])[0]
    assert (np.diff(d[nodes[cco_order(s, nodes)]]) >= 0).all()
    with pytest.raises(TopologyError, match="outside"):
        cco_order(t, [0, 8])
