"""The distance oracle against breadth-first search: every generator, the bundled fabrics, every kind."""

import pathlib

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap._kernels.ecmp import ecmp_traffic
from libtopomap._kernels.oracle import vertex_distance, vertex_distances
from libtopomap.distances import DistanceOracle

FILES = pathlib.Path(__file__).resolve().parents[1] / "topology_files"


def _bfs_all(t):
    """All-vertex hop matrix by plain BFS (the reference; small instances only)."""
    return t.hop_distances(np.arange(t.n_vertices)).astype(np.int64)


def _topologies():
    yield "torus", ltm.torus("5x4x3")
    yield "torus-2", ltm.torus("2x3")
    yield "mesh", ltm.mesh("4x5")
    yield "ring", ltm.torus("9")
    yield "hypercube", ltm.hypercube(5)
    yield "torus-c3", ltm.concentrate(ltm.torus("4x3"), 3)
    yield "hypercube-c2", ltm.concentrate(ltm.hypercube(3), 2)
    yield "fattree", ltm.fattree(4, 3)
    yield "dragonfly", ltm.dragonfly(5, 4, 2, 1)
    yield "percs", ltm.percs(4, 3, seed=1)
    yield "shortcut", ltm.random_shortcut_ring(64, 4, seed=2)
    yield "circulant", ltm.circulant(30)
    yield "ldr", ltm.ldr(40, 4, seed=1, trials=2)
    yield "rt", ltm.rt(4)
    yield "rtt", ltm.rtt(4)
    for f in sorted(FILES.glob("*.ltm")) + sorted(FILES.glob("*.ibnetdiscover")):
        yield f.name, ltm.load(f)


CASES = list(_topologies())


@pytest.mark.parametrize("table_limit", [1 << 30, 4, 0])
@pytest.mark.parametrize("name, topo", CASES, ids=[c[0] for c in CASES])
def test_oracle_matches_bfs_on_every_pair(name, topo, table_limit):
    ref = _bfs_all(topo)
    o = DistanceOracle(topo, table_limit=table_limit)
    n = topo.n_vertices
    a, b = np.divmod(np.arange(n * n), n)
    assert np.array_equal(o.pairs(a, b), ref[a, b]), (name, o.kind)
    # the compiled single-pair path (closed form, table or bidirectional search)
    out = np.empty(a.size, np.int64)
    vertex_distances(o.kernel_args, a, b, out)
    assert np.array_equal(out, ref[a, b]), (name, o.kind)
    sc = o.new_scratch()
    for i in range(0, a.size, max(1, a.size // 50)):
        assert vertex_distance(o.kernel_args, a[i], b[i], sc) == ref[a[i], b[i]]


@pytest.mark.parametrize("name, topo", CASES, ids=[c[0] for c in CASES])
def test_table_over_attachment_vertices_matches_bfs(name, topo):
    """A limit one under the vertex count: where hosts hang on single links, the table covers their
    attachment vertices only and is filled by searches over the network without its leaves."""
    ref = _bfs_all(topo)
    o = DistanceOracle(topo, table_limit=topo.n_vertices - 1)
    _, off = o.attachments()
    if name in ("fattree", "dragonfly"):
        assert o.kind == "table" and off.any()
    n = topo.n_vertices
    a, b = np.divmod(np.arange(n * n), n)
    assert np.array_equal(o.pairs(a, b), ref[a, b]), (name, o.kind)
    out = np.empty(a.size, np.int64)
    vertex_distances(o.kernel_args, a, b, out)
    assert np.array_equal(out, ref[a, b]), (name, o.kind)


@pytest.mark.parametrize("name, topo", CASES, ids=[c[0] for c in CASES])
def test_host_sums_match_brute_force(name, topo):
    ref = _bfs_all(topo)
    hosts = topo.hosts
    sub = ref[np.ix_(hosts, hosts)]
    for limit in (1 << 30, 0):
        total, diameter = DistanceOracle(topo, table_limit=limit).host_sums(topo.slots)
        assert total == int(sub.sum())
        assert diameter == int(sub.max())


def test_kinds_chosen():
    assert ltm.torus("4x4").distances.kind == "grid"
    assert ltm.concentrate(ltm.torus("4x4"), 2).distances.kind == "grid"
    assert ltm.hypercube(4).distances.kind == "hypercube"
    assert ltm.fattree(4, 3).distances.kind == "table"
    assert DistanceOracle(ltm.fattree(4, 3), table_limit=0).kind == "search"


def test_a_file_claiming_to_be_a_torus_gets_no_formula():
    t = ltm.torus("4x4")
    # same attributes, one link moved: the formula must not be trusted
    links = np.stack([t.link_u, t.link_v], 1).copy()
    links[0] = (0, 5)
    fake = ltm.Topology(t.names, links, attrs=t.attrs)
    assert fake.distances.kind == "table"
    ref = _bfs_all(fake)
    n = fake.n_vertices
    a, b = np.divmod(np.arange(n * n), n)
    assert np.array_equal(fake.distances.pairs(a, b), ref[a, b])


def test_closed_form_at_scale_without_a_matrix():
    t = ltm.torus("64x64x64")
    o = t.distances
    assert o.kind == "grid" and o.nbytes < 16 * 2**20
    assert o.pairs([0, 0], [32 * 64 * 64 + 32 * 64 + 32, 1]).tolist() == [96, 1]
    total, diameter = o.host_sums(t.slots)
    assert diameter == 96
    # a ring of 64 has distance sum 64 * 1024 per coordinate; three coordinates, 64^4 pairs each
    assert total == 3 * (64 * 1024) * (64 * 64) ** 2


def test_properties_use_the_oracle():
    p = ltm.properties(ltm.torus("8x8x8"))
    assert p["diameter"] == 12
    # each ring of 8 has row sum 0+1+2+3+4+3+2+1 = 16, times the 64 choices of the other two coordinates
    assert p["aspl"] == pytest.approx(3 * 16 * 64 / 511)


def test_bad_queries():
    o = ltm.torus("3").distances
    with pytest.raises(ltm.TopologyError, match="unknown vertex index 7"):
        o.pairs([0], [7])
    with pytest.raises(ltm.TopologyError, match="one length"):
        o.pairs([0, 1], [1])


@pytest.mark.parametrize("name, topo", CASES, ids=[c[0] for c in CASES])
def test_link_traffic_equals_plain_brandes(name, topo):
    """Attachment hand-off and pruned searches give the full-BFS ECMP loads (random mappings,
    a sparse graph that prunes and a dense one that does not)."""
    rng = np.random.default_rng(3)
    slots = topo.slots
    slot_vertices = np.repeat(np.arange(topo.n_vertices), slots)
    P = min(slot_vertices.size, 40)
    for deg in (3, 30):
        src = np.repeat(np.arange(P), deg)
        dst = rng.integers(0, P, src.size)
        w = rng.random(src.size) + 0.1
        g = ltm.CommGraph(P, src, dst, w)
        vert = rng.permutation(slot_vertices)[:P]
        got = ltm.link_traffic(topo, g, vert)
        s, t = vert[src], vert[dst]
        keep = s != t
        order = np.lexsort((t[keep], s[keep]))
        ss, tt, ww = s[keep][order], t[keep][order], w[keep][order]
        us, start = np.unique(ss, return_index=True)
        ref = ecmp_traffic(topo.indptr, topo.indices, topo.arc_reverse, topo.n_vertices, us.astype(np.int64),
                                    np.append(start, ss.size).astype(np.int64), tt, ww)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def _brandes(topo, s, t, w):
    keep = s != t
    order = np.lexsort((t[keep], s[keep]))
    ss, tt, ww = s[keep][order], t[keep][order], w[keep][order]
    us, start = np.unique(ss, return_index=True)
    return ecmp_traffic(topo.indptr, topo.indices, topo.arc_reverse, topo.n_vertices, us.astype(np.int64),
                                 np.append(start, ss.size).astype(np.int64), tt, ww)


@pytest.mark.parametrize("k, n", [(2, 1), (3, 2), (2, 4), (3, 3), (4, 3)])
def test_fat_tree_loads_in_closed_form_equal_the_searches(k, n):
    """link_traffic / evaluate on a generated fat tree use the closed form (oracle.fattree_arcs):
    the same loads as plain Brandes searches, exactly for integer weights and k a power of two."""
    topo = ltm.fattree(k, n)
    assert topo.distances.fattree_arcs() is not None and topo.distances.fattree_arcs()[:2] == (k, n)
    rng = np.random.default_rng(k * 10 + n)
    H = k ** n
    src = np.repeat(np.arange(H), 3)
    dst = rng.integers(0, H, src.size)
    w = rng.integers(1, 9, src.size).astype(np.float64)
    g = ltm.CommGraph(H, src, dst, w)
    vert = rng.permutation(H)
    got = ltm.link_traffic(topo, g, vert)
    ref = _brandes(topo, vert[src].astype(np.int64), vert[dst].astype(np.int64), w)
    if k & (k - 1) == 0:
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    # a process on a switch: the searches (the closed form is for hosts)
    from libtopomap.routing import ecmp_vertex_traffic

    vert2 = np.append(vert[:-1], topo.n_vertices - 1).astype(np.int64)
    got = ecmp_vertex_traffic(topo, vert2[src], vert2[dst], w)
    np.testing.assert_allclose(got, _brandes(topo, vert2[src], vert2[dst], w), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("k, n", [(2, 2), (3, 3), (2, 4), (4, 3)])
def test_fat_tree_leaf_table_by_formula_equals_bfs(k, n):
    # a table over the leaf switches only (table_limit = their number): filled by formula
    topo = ltm.fattree(k, n)
    o = DistanceOracle(topo, table_limit=k ** (n - 1))
    assert o.kind == "table" and o._fattree_table(np.unique(o.attachments()[0][:k ** n]).astype(np.int64)) is not None
    ref = _bfs_all(topo)
    a, b = np.divmod(np.arange(topo.n_vertices ** 2), topo.n_vertices)
    assert np.array_equal(o.pairs(a, b), ref[a, b])
    out = np.empty(a.size, np.int64)
    vertex_distances(o.kernel_args, a, b, out)
    assert np.array_equal(out, ref[a, b])


def test_fat_tree_closed_form_only_where_it_holds():
    topo = ltm.fattree(2, 3)
    assert ltm.torus("4x4").distances.fattree_arcs() is None
    links = np.stack([topo.arc_source, topo.indices], 1)
    links = links[links[:, 0] < links[:, 1]]
    links = np.delete(links, np.flatnonzero(links[:, 0] >= 8)[0], axis=0)  # one switch-to-switch link fewer
    broken = ltm.Topology(topo.names, links, slots=topo.slots, kinds=topo.kinds, attrs=topo.attrs)
    assert broken.distances.fattree_arcs() is None
    # the searches still answer on the broken one
    g = ltm.CommGraph(8, np.arange(8), (np.arange(8) + 3) % 8, np.ones(8))
    vert = np.arange(8)
    np.testing.assert_allclose(ltm.link_traffic(broken, g, vert),
                               _brandes(broken, vert.astype(np.int64), (vert[(np.arange(8) + 3) % 8]).astype(np.int64),
                                        np.ones(8)), rtol=1e-12, atol=1e-12)


def test_equal_topologies_and_mappings_hash_alike():
    a, b = ltm.torus("3x3"), ltm.torus("3x3")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    m1, m2 = ltm.Mapping(a, [0, 1, 2]), ltm.Mapping(b, [0, 1, 2])
    assert m1 == m2 and hash(m1) == hash(m2)
    assert ltm.Mapping(a, [1, 0, 2]) != m1
