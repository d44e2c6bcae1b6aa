"""Random shortcut rings and circulant graphs (Cui 2024, sections 2.1.3, 3.4.1 and 4.2)."""

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import libtopomap as ltm
from libtopomap.errors import TopologyError
from libtopomap.generators.circulant import circulant, power_of_two_jumps
from libtopomap.generators.shortcut import random_shortcut_ring


def _edges(t):
    return {(int(u), int(v)) for u, v in zip(t.link_u, t.link_v)}


# ----------------------------------------------------------------------------------- shortcut ring
@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 60), data=st.data())
def test_shortcut_degrees_as_equal_as_possible(n, data):
    degree = data.draw(st.integers(2, n - 1))
    seed = data.draw(st.integers(0, 2**16))
    t = random_shortcut_ring(n, degree, seed=seed)
    deg = np.sort(t.degree)
    if n * degree % 2 == 0:
        assert np.all(deg == degree)
    else:  # a degree sum must be even: exactly one vertex one short
        assert deg[0] == degree - 1 and np.all(deg[1:] == degree)
    assert t.n_links == n * degree // 2
    ring = {(min(i, (i + 1) % n), max(i, (i + 1) % n)) for i in range(n)}
    assert ring <= _edges(t)  # the ring is never broken by the repair switches


def test_shortcut_thesis_instance():
    t = random_shortcut_ring(1024, 19, seed=0)
    assert t.n_vertices == 1024 and t.n_links == 1024 * 19 // 2
    assert set(t.degree.tolist()) == {19}
    assert t.names[:3] == ("n0", "n1", "n2") and t.total_slots == 1024
    p = ltm.properties(t)
    # A random 19-regular graph on 1024 vertices: diameter 3-4, ASPL about 2.68.
    assert p["diameter"] in (3, 4) and 2.6 < p["aspl"] < 2.75


def test_shortcut_seeded():
    a = random_shortcut_ring(200, 7, seed=42)
    b = random_shortcut_ring(200, 7, seed=42)
    c = random_shortcut_ring(200, 7, seed=43)
    assert a == b and _edges(a) != _edges(c)


def test_shortcut_degree_two_is_the_ring():
    t = random_shortcut_ring(10, 2, seed=1)
    assert _edges(t) == {(min(i, (i + 1) % 10), max(i, (i + 1) % 10)) for i in range(10)}


def test_shortcut_complete_graph():
    t = random_shortcut_ring(9, 8, seed=3)
    assert t.n_links == 36


@pytest.mark.parametrize("n, degree", [(2, 1), (10, 1), (10, 10), (5, 0)])
def test_shortcut_rejects_bad_sizes(n, degree):
    with pytest.raises(TopologyError):
        random_shortcut_ring(n, degree)


# ----------------------------------------------------------------------------------- circulant
@pytest.mark.parametrize("k", range(1, 11))
def test_circulant_g_n_log_n(k):
    n = 2**k
    t = circulant(n)
    assert t.attrs["jumps"] == [2**i for i in range(k)]
    # degree 2k - 1 (section 4.2.2): the jump n/2 adds one link, every other jump two.
    assert set(t.degree.tolist()) == {max(2 * k - 1, 1)}
    nb = {int(v) for v in t.neighbors(0)}
    assert nb == {x % n for i in range(k) for x in (2**i, -(2**i))}


def test_circulant_matches_networkx():
    for n, jumps in [(16, None), (10, [1, 2, 4]), (12, [1, 5]), (9, [1, 8, 3])]:
        t = circulant(n, jumps)
        ref = nx.circulant_graph(n, jumps if jumps is not None else power_of_two_jumps(n))
        assert _edges(t) == {(min(u, v), max(u, v)) for u, v in ref.edges()}


def test_circulant_jumps_normalised():
    assert circulant(12, [11, 1, 5, 7]).attrs["jumps"] == [1, 5]
    assert circulant(2).n_links == 1


@pytest.mark.parametrize("n, jumps", [(1, None), (8, [0]), (8, [8]), (8, [2, 4]), (8, [])])
def test_circulant_rejects(n, jumps):
    with pytest.raises(TopologyError):
        circulant(n, jumps)


def test_circulant_diameter():
    # G(2^k, k): any distance is at most ceil(k/2) hops (signed binary digits).
    for k in (4, 6, 8):
        assert ltm.properties(circulant(2**k))["diameter"] == math.ceil(k / 2)


def test_top_level_exports():
    assert ltm.circulant is circulant and ltm.random_shortcut_ring is random_shortcut_ring


def test_shortcut_nearly_complete_graph_is_repaired():
    # found by hypothesis: the repair used to draw random shortcuts, which almost never qualify when the
    # graph is nearly complete, and gave up
    t = random_shortcut_ring(58, 56, seed=56)
    assert set(t.degree.tolist()) == {56}
    for n, d in ((40, 38), (41, 39), (60, 57)):
        deg = np.sort(random_shortcut_ring(n, d, seed=1).degree)
        assert deg[-1] == d and deg[0] >= d - 1 and deg.sum() == n * d - (n * d) % 2
