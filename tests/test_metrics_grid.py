"""ECMP link loads on verified grids (tori, meshes, hypercubes) against the breadth-first-search path,
path enumeration and closed forms."""

import math
import zlib

import networkx as nx
import numba
import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import CommGraph, Topology, link_traffic
from libtopomap._kernels import grid_ecmp
from libtopomap.generators import parse_dims


def arc_index(topo, u, v):
    lo, hi = topo.indptr[u], topo.indptr[u + 1]
    return lo + int(np.flatnonzero(topo.indices[lo:hi] == v)[0])


def plain(topo):
    """The same network without generator attributes: the oracle cannot verify a grid, so
    ``link_traffic`` takes the breadth-first-search path (same link order, same CSR arcs)."""
    t = Topology(topo.names, np.stack([topo.link_u, topo.link_v], 1), capacities=topo.capacity,
                 slots=topo.slots, kinds=topo.kinds, attrs={})
    assert t.distances.grid_shape is None
    assert np.array_equal(t.indices, topo.indices) and np.array_equal(t.indptr, topo.indptr)
    return t


def brute_force_ecmp(topo, src, dst, w):
    """Traffic per arc by enumerating every shortest path between vertices (networkx)."""
    nxg = topo.to_networkx()
    traffic = np.zeros(topo.n_arcs)
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        if u == v:
            continue
        paths = list(nx.all_shortest_paths(nxg, u, v))
        for p in paths:
            for a, b in zip(p, p[1:]):
                traffic[arc_index(topo, a, b)] += x / len(paths)
    return traffic


def link_traffic_of_vertices(topo, src, dst, w):
    # a mapping only places processes on slot vertices: map process i to the i-th slot vertex
    hosts = np.flatnonzero(topo.slots > 0)
    pos = np.full(topo.n_vertices, -1)
    pos[hosts] = np.arange(hosts.size)
    assert np.all(pos[src] >= 0) and np.all(pos[dst] >= 0)
    g = CommGraph(hosts.size, pos[src], pos[dst], w)
    return link_traffic(topo, g, hosts)


SHAPES = [
    ("torus", "5"), ("torus", "6"), ("torus", "2"), ("torus", "3x2"), ("torus", "3x3"), ("torus", "4x4"),
    ("torus", "6x5"), ("torus", "4x2x3"), ("torus", "4x4x4"), ("torus", "3x4x2x4"), ("torus", "1x4"),
    ("mesh", "5"), ("mesh", "3x4"), ("mesh", "2x3x2"), ("mesh", "2x2x3x2"), ("mesh", "4x1x3"),
    ("hypercube", 1), ("hypercube", 2), ("hypercube", 4), ("hypercube", 6),
]


def build(kind, arg, conc):
    topo = getattr(ltm, kind)(arg)
    return ltm.concentrate(topo, conc) if conc else topo


@pytest.mark.parametrize("conc", [0, 2])
@pytest.mark.parametrize("kind,arg", SHAPES)
def test_grid_ecmp_equals_search_ecmp(kind, arg, conc):
    topo = build(kind, arg, conc)
    assert topo.distances.grid_shape is not None
    ref = plain(topo)
    rng = np.random.default_rng(zlib.crc32(f"{kind}{arg}{conc}".encode()))
    p = topo.total_slots
    slots = np.repeat(np.arange(topo.n_vertices), topo.slots)
    vert = rng.permutation(slots)
    m = 6 * p
    g = CommGraph(p, rng.integers(0, p, m), rng.integers(0, p, m), rng.uniform(0.5, 3.0, m))
    got = link_traffic(topo, g, vert)
    want = link_traffic(ref, g, vert)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    # every unit of traffic travels exactly its hop count
    assert got.sum() == pytest.approx(ltm.hop_bytes(topo, g, vert), rel=1e-12)


@pytest.mark.parametrize("dims", ["4", "6x4", "4x4x4", "4x3x6", "2x4x4x4"])
def test_antipodal_ties_split_over_both_ways(dims):
    # every demand has displacement k/2 in each even dimension: all 2**ties orientations are shortest
    topo = ltm.torus(dims)
    d = np.array(parse_dims(dims))
    n = topo.n_vertices
    coords = np.stack(np.unravel_index(np.arange(n), d), 1)
    half = np.where(d % 2 == 0, d // 2, (d - 1) // 2)
    dst = np.ravel_multi_index(((coords + half) % d).T, d)
    src = np.arange(n)
    w = np.random.default_rng(0).uniform(0.5, 2.0, n)
    got = link_traffic_of_vertices(topo, src, dst, w)
    want = link_traffic_of_vertices(plain(topo), src, dst, w)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    if n <= 64:
        np.testing.assert_allclose(got, brute_force_ecmp(topo, src, dst, w), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("topo", [ltm.torus("4x3"), ltm.mesh("3x3"), ltm.hypercube(3),
                                  ltm.concentrate(ltm.torus("4x2"), 2), ltm.concentrate(ltm.mesh("3"), 1)],
                         ids=lambda t: t.name)
def test_grid_ecmp_equals_path_enumeration_all_pairs(topo):
    hosts = np.flatnonzero(topo.slots > 0)
    src, dst = np.repeat(hosts, hosts.size), np.tile(hosts, hosts.size)
    w = 1.0 + (src * 7 + dst * 3) % 5
    got = link_traffic_of_vertices(topo, src, dst, w)
    np.testing.assert_allclose(got, brute_force_ecmp(topo, src, dst, w), rtol=1e-9, atol=1e-9)


def test_closed_forms():
    # ring of 6, 0 -> 3: both ways shortest, half each
    t = ltm.torus("6")
    tr = link_traffic_of_vertices(t, np.array([0]), np.array([3]), np.array([2.0]))
    for a, b in [(0, 1), (1, 2), (2, 3), (0, 5), (5, 4), (4, 3)]:
        assert tr[arc_index(t, a, b)] == pytest.approx(1.0, abs=1e-12)
    assert tr.sum() == pytest.approx(6.0)
    # 5x5 torus, (0,0) -> (2,2): the arc (0,0)->(0,1) carries paths((0,1)->(2,2)) / paths = 3/6;
    # (1,1)->(1,2) carries paths(s->(1,1)) * paths((1,2)->t) / paths = 2*1/6
    t = ltm.torus("5x5")
    tr = link_traffic_of_vertices(t, np.array([0]), np.array([12]), np.array([1.0]))
    assert tr[arc_index(t, 0, 1)] == pytest.approx(0.5, abs=1e-12)
    assert tr[arc_index(t, 6, 7)] == pytest.approx(2 / 6, abs=1e-12)
    assert tr[arc_index(t, 0, 4)] == 0.0 and tr[arc_index(t, 1, 0)] == 0.0
    # 16x16x16 torus, (0,0,0) -> (8,8,8): ties in every dimension, 8 orientations of 1/8 each; the
    # first arc up dimension 0 lies in the 4 orientations going up dimension 0, each sending
    # paths((1,0,0)->(8,8,8)) / paths((0,0,0)->(8,8,8)) = 8/24 of its share over it
    t = ltm.torus("16x16x16")
    tgt = 8 * 256 + 8 * 16 + 8
    tr = link_traffic_of_vertices(t, np.array([0]), np.array([tgt]), np.array([1.0]))
    assert tr[arc_index(t, 0, 256)] == pytest.approx(4 * (8 / 24) / 8, abs=1e-12)
    inner = (3 * 256 + 2 * 16 + 5, 4 * 256 + 2 * 16 + 5)  # (3,2,5) -> (4,2,5)
    multi = math.factorial(24) // math.factorial(8) ** 3
    via = (math.factorial(10) // (math.factorial(3) * math.factorial(2) * math.factorial(5))
           * math.factorial(13) // (math.factorial(4) * math.factorial(6) * math.factorial(3)))
    assert tr[arc_index(t, *inner)] == pytest.approx(via / multi / 8, rel=1e-12)
    # hypercube: 0 -> 2**d - 1 flows 1/d over each first arc and 1/(d * C(d-1, a)) over an arc
    # leaving a vertex with a bits set
    d = 6
    t = ltm.hypercube(d)
    tr = link_traffic_of_vertices(t, np.array([0]), np.array([2 ** d - 1]), np.array([1.0]))
    for u in range(2 ** d):
        for b in range(d):
            if not u >> b & 1:
                a = bin(u).count("1")
                assert tr[arc_index(t, u, u | 1 << b)] == pytest.approx(1 / (d * math.comb(d - 1, a)), rel=1e-12)


def test_concentrated_hosts_charge_their_own_link():
    t = ltm.concentrate(ltm.torus("4x4"), 3)
    att, _ = t.distances.attachments()
    hosts = np.flatnonzero(t.slots > 0)
    a, b = hosts[0], hosts[1]  # same router
    assert att[a] == att[b]
    tr = link_traffic_of_vertices(t, np.array([a]), np.array([b]), np.array([2.5]))
    assert np.count_nonzero(tr) == 2
    assert tr[arc_index(t, a, att[a])] == 2.5 and tr[arc_index(t, att[b], b)] == 2.5


@pytest.mark.parametrize("topo", [ltm.fattree(4, 3), ltm.dragonfly(5, 4, 2, 1), ltm.rtt(3), ltm.rt(3),
                                  ltm.circulant(12, [1, 5]), ltm.random_shortcut_ring(16, 2, seed=1)],
                         ids=lambda t: t.name)
def test_other_topologies_keep_the_search(topo):
    assert topo.distances.grid_shape is None
    rng = np.random.default_rng(1)
    hosts = np.flatnonzero(topo.slots > 0)
    src, dst = rng.choice(hosts, 40), rng.choice(hosts, 40)
    w = rng.uniform(0.5, 2.0, 40)
    np.testing.assert_allclose(link_traffic_of_vertices(topo, src, dst, w), brute_force_ecmp(topo, src, dst, w),
                               rtol=1e-9, atol=1e-9)


def test_a_file_claiming_to_be_a_torus_keeps_the_search():
    t = ltm.torus("4x4")
    links = np.stack([t.link_u, t.link_v], 1).copy()
    links[0] = (0, 5)
    fake = Topology(t.names, links, attrs=t.attrs)
    assert fake.distances.grid_shape is None
    rng = np.random.default_rng(2)
    src, dst = rng.integers(0, 16, 60), rng.integers(0, 16, 60)
    w = np.ones(60)
    np.testing.assert_allclose(link_traffic_of_vertices(fake, src, dst, w), brute_force_ecmp(fake, src, dst, w),
                               rtol=1e-9, atol=1e-9)


def test_grid_shape_and_arcs():
    o = ltm.torus("4x3x2").distances
    assert o.grid_shape == ((4, 3, 2), (True, True, True))
    assert ltm.mesh("3x5").distances.grid_shape == ((3, 5), (False, False))
    assert ltm.hypercube(3).distances.grid_shape == ((2, 2, 2), (False, False, False))
    t = ltm.concentrate(ltm.torus("4x3x2"), 2)
    arcs = t.distances.grid_arcs()
    assert arcs.shape == (24, 6)
    coords = np.stack(np.unravel_index(np.arange(24), (4, 3, 2)), 1)
    for v in range(24):
        for j, k in enumerate((4, 3, 2)):
            for col, step in ((2 * j, 1), (2 * j + 1, -1)):
                c = coords[v].copy()
                c[j] = (c[j] + step) % k
                u = int(np.ravel_multi_index(c, (4, 3, 2)))
                assert t.arc_source[arcs[v, col]] == v and t.indices[arcs[v, col]] == u
    assert ltm.fattree(4, 2).distances.grid_shape is None
    with pytest.raises(ltm.TopologyError):
        ltm.fattree(4, 2).distances.grid_arcs()


def test_chunking_does_not_change_the_result():
    t = ltm.torus("8x8x8")
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 512, 300), rng.integers(0, 512, 300)
    w = rng.uniform(0.5, 2.0, 300)
    o = t.distances
    dims, wrap = o.grid_shape
    args = (o.grid_arcs(), t.arc_reverse, np.array(dims), np.array(wrap), src, dst, w, t.n_arcs)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = grid_ecmp.grid_ecmp_traffic(*args)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_allclose(grid_ecmp.grid_ecmp_traffic(*args), one, rtol=1e-12, atol=1e-12)


def test_large_torus_conservation():
    # 64^3: no search per source; loads are conserved at every vertex and add up to the hop-bytes
    t = ltm.torus("64x64x64")
    rng = np.random.default_rng(4)
    k = 200
    src, dst = rng.integers(0, t.n_vertices, k), rng.integers(0, t.n_vertices, k)
    w = rng.uniform(0.5, 2.0, k)
    tr = link_traffic_of_vertices(t, src, dst, w)
    assert tr.sum() == pytest.approx(float(np.dot(w, t.distances.pairs(src, dst))), rel=1e-9)
    out = np.bincount(t.arc_source, weights=tr, minlength=t.n_vertices)
    into = np.bincount(t.indices, weights=tr, minlength=t.n_vertices)
    net = np.bincount(src, weights=w, minlength=t.n_vertices) - np.bincount(dst, weights=w, minlength=t.n_vertices)
    np.testing.assert_allclose(out - into, net, atol=1e-9)


@pytest.mark.parametrize("case", ["symmetric", "one-way", "other-way", "unequal", "mixed"])
def test_both_directions_of_a_pair_in_one_pass(case):
    # s -> t and t -> s share one box (paths reversed): every combination of weights each way,
    # duplicates and zero weights, against path enumeration on a 6x5x4 torus (ties on the 6 and 4 rings)
    topo = ltm.torus("6x5x4")
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    a, b = rng.integers(0, 120, 40), rng.integers(0, 120, 40)
    wa, wb = rng.uniform(0.5, 3.0, 40), rng.uniform(0.5, 3.0, 40)
    if case == "symmetric":
        src, dst, w = np.r_[a, b], np.r_[b, a], np.r_[wa, wa]
    elif case == "one-way":
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        src, dst, w = lo, hi, wa
    elif case == "other-way":
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        src, dst, w = hi, lo, wa
    elif case == "unequal":
        src, dst, w = np.r_[a, b], np.r_[b, a], np.r_[wa, wb]
    else:
        # duplicates adding up to equal weights both ways, a zero weight, one-way and unequal pairs
        src = np.r_[a[:10], a[:10], b[:10], a[10:20], b[20:30], a[30:], b[30:], 7]
        dst = np.r_[b[:10], b[:10], a[:10], b[10:20], a[20:30], b[30:], a[30:], 8]
        w = np.r_[wa[:10], wa[:10], 2 * wa[:10], wa[10:20], wb[20:30], wa[30:], wb[30:], 0.0]
    got = link_traffic_of_vertices(topo, src, dst, w)
    np.testing.assert_allclose(got, brute_force_ecmp(topo, src, dst, w), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dims,pairs", [
    ("260x260", [(0, 259 * 260 + 259), (0, 249 * 260 + 249), (5 * 260 + 3, 200 * 260 + 240)]),
    ("700", [(0, 699), (3, 650), (650, 3)]),
])
def test_long_boxes_beyond_the_closed_form(dims, pairs):
    # boxes longer than grid_ecmp._CLOSED_MAX steps (binomials would overflow) are pushed through point by
    # point; both ways agree with the breadth-first-search path
    assert grid_ecmp._CLOSED_MAX < 518
    topo = ltm.mesh(dims)
    src, dst = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    w = np.array([1.0, 2.5, 0.75])
    got = link_traffic_of_vertices(topo, src, dst, w)
    want = link_traffic_of_vertices(plain(topo), src, dst, w)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert got.sum() == pytest.approx(float(np.dot(w, topo.distances.pairs(src, dst))), rel=1e-12)
