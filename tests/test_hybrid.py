"""Seed 001 (Mehta 2005), chapter 5: hybrids of hypercube / LDR components and fat trees, and their routing."""

import networkx as nx
import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import TopologyError, hybrid
from libtopomap.cli import main
from libtopomap.generators.hybrid import HYBRID_EXAMPLES, fat_tree_path, hybrid_route


def _component_edges(t, c):
    d = t.attrs["component_size"]
    lo, hi = c * d, (c + 1) * d
    m = (t.link_u >= lo) & (t.link_u < hi) & (t.link_v >= lo) & (t.link_v < hi)
    return {(int(u) - lo, int(v) - lo) for u, v in zip(t.link_u[m], t.link_v[m])}


def test_32_nodes_in_8_node_hypercubes_is_4_hypercubes_and_8_fat_trees():
    # section 5.1: "for a 32 node network with each hypercube of 8 nodes, we have 4 such hypercubes,
    # and then 8 different fat-trees"
    t = hybrid(32, 8, arity=2)
    assert t.attrs["components"] == 4 and t.attrs["fat_trees"] == 8
    q3 = {(u, u | 1 << b) for u in range(8) for b in range(3) if not u >> b & 1}
    for c in range(4):
        assert _component_edges(t, c) == q3
    # each fat tree is a 2-ary 2-tree: 4 switches, 8 links, reaching node j of every component
    assert t.n_vertices == 32 + 8 * 4
    assert t.n_links == 4 * 12 + 8 * 8
    for j in range(8):
        sw = np.arange(32 + 4 * j, 32 + 4 * (j + 1))
        hosts_on_tree = set()
        for s in sw.tolist():
            hosts_on_tree |= {int(v) for v in t.neighbors(s) if v < 32}
        assert hosts_on_tree == {j, 8 + j, 16 + j, 24 + j}
    assert (t.degree[:32] == 4).all()  # 3 hypercube links + 1 fat-tree leaf link


@pytest.mark.parametrize("nodes, d", HYBRID_EXAMPLES)
def test_the_thesis_examples_have_d_fat_trees_of_t_over_d_leaves(nodes, d):
    t = hybrid(nodes, d)
    p = nodes // d
    k, n = t.attrs["arity"], t.attrs["levels"]
    assert k ** n == p
    assert t.attrs["fat_trees"] == d  # 1024/64: 64 fat trees, not the "1024/64, i.e. 16" of section 5.4
    assert t.hosts.size == nodes
    assert t.n_vertices == nodes + d * n * k ** (n - 1)
    # hypercube links + per fat tree n k**n links (k**n leaf links and (n-1) k**(n-1) k between levels)
    assert t.n_links == nodes * (d.bit_length() - 1) // 2 + d * n * k ** n


def test_ldr_components_are_one_regular_graph_replicated():
    t = hybrid(64, 16, component="ldr", seed=3, trials=5)
    first = _component_edges(t, 0)
    assert len(first) == 16 * 4 // 2
    for c in range(1, 4):
        assert _component_edges(t, c) == first
    assert t.attrs["component"] == "ldr" and t.attrs["degree"] == 4


def _check_paths(t):
    nodes = t.attrs["nodes"]
    s, d = np.meshgrid(np.arange(nodes), np.arange(nodes), indexing="ij")
    dist = t.distances.pairs(s.ravel(), d.ravel()).reshape(nodes, nodes)
    for a in range(nodes):
        for b in range(nodes):
            p = hybrid_route(t, a, b)
            assert p[0] == a and p[-1] == b
            for u, v in zip(p[:-1].tolist(), p[1:].tolist()):
                assert v in set(t.neighbors(u).tolist())
            assert len(p) - 1 == dist[a, b], (a, b, p)


@pytest.mark.parametrize("kwargs", [dict(nodes=32, component_size=8, arity=2), dict(nodes=32, component_size=8),
                                    dict(nodes=64, component_size=4, arity=2),
                                    dict(nodes=48, component_size=16, arity=3),
                                    dict(nodes=64, component_size=16, component="ldr", seed=1, trials=3)])
def test_routes_are_valid_paths_of_shortest_length_for_every_pair(kwargs):
    _check_paths(hybrid(**kwargs))


def test_route_goes_inside_the_component_first_then_up_down():
    t = hybrid(32, 8, arity=2)
    # node 5 (component 0, position 101b) to node 18 (component 2, position 010b): e-cube 5 -> 4 -> 6 -> 2,
    # then fat tree 2 (switches 40..43): leaf <0,1> = 42, root <0,0> = 40, leaf <1,1> = 43, node 18
    assert hybrid_route(t, 5, 18).tolist() == [5, 4, 6, 2, 42, 40, 43, 18]
    assert hybrid_route(t, 5, 5).tolist() == [5]
    assert hybrid_route(t, 5, 7).tolist() == [5, 7]
    # same leaf switch: up one, down one
    assert fat_tree_path(t, 0, 0, 1) == [0, 34, 8]


def test_errors_name_the_problem():
    with pytest.raises(TopologyError, match="dividing nodes"):
        hybrid(30, 8)
    with pytest.raises(TopologyError, match="at least two components"):
        hybrid(8, 8)
    with pytest.raises(TopologyError, match="power-of-two"):
        hybrid(36, 12)
    with pytest.raises(TopologyError, match="not a power of the fat tree arity 3"):
        hybrid(32, 8, arity=3)
    with pytest.raises(TopologyError, match="'hypercube' or 'ldr'"):
        hybrid(32, 8, component="torus")
    with pytest.raises(TopologyError, match="not a node"):
        hybrid_route(hybrid(32, 8), 0, 32)
    with pytest.raises(TopologyError, match="not built by hybrid"):
        hybrid_route(ltm.hypercube(3), 0, 1)


def test_cli_generate_hybrid(tmp_path, capsys):
    out = tmp_path / "h.ltm"
    assert main(["generate", "hybrid", "--nodes", "32", "--component-size", "8", "--k", "2", "-o", str(out)]) == 0
    t = ltm.load(out)
    assert t.hosts.size == 32 and t.n_vertices == 64
    assert main(["generate", "hybrid", "--nodes", "64", "--component-size", "16", "--component", "ldr",
                 "--seed", "1", "--trials", "2", "-o", str(out)]) == 0
    assert ltm.load(out).hosts.size == 64


@pytest.mark.parametrize("nodes, d, arity", [(32, 8, 2), (32, 8, 4), (256, 16, 4), (128, 8, 2)])
def test_hypercube_hybrid_distances_match_the_closed_form(nodes, d, arity):
    # node distance = Hamming(js, jt) + 2 (n - i) across components (i: first differing base-k digit)
    t = hybrid(nodes, d, arity=arity)
    p, k, n = nodes // d, t.attrs["arity"], t.attrs["levels"]
    dim = d.bit_length() - 1
    hamming_sum = d * d * dim // 2  # over ordered position pairs
    # ordered component pairs first differing at digit i: p * (k**(n-i) - k**(n-i-1))
    ft_sum = sum(p * (k ** (n - i) - k ** (n - i - 1)) * 2 * (n - i) for i in range(n))
    expected = p * p * hamming_sum + d * d * ft_sum
    rows = t.hop_distances(np.arange(nodes))[:, :nodes]
    assert int(rows.sum()) == expected
    assert int(rows.max()) == dim + 2 * n  # diameter


# ----------------------------------------------------------------------------- the hybrid routing model
def _defined_path(t, nxg, a, b):
    """Section 5.3's route written out from its definition (independent of hybrid_route): inside the
    source component to the destination's position (e-cube, or the lowest-index neighbour one hop
    closer on LDR components, by networkx distances), then up from the leaf switch of fat tree
    ``jt`` to the lowest common level and down, every switch chosen among all shortest paths of that
    tree as the one whose word keeps the source's digits going up."""
    d = t.attrs["component_size"]
    cs, js = divmod(a, d)
    ct, jt = divmod(b, d)
    p = [a]
    if t.attrs["component"] == "hypercube":
        x = js
        for bit in range(d.bit_length() - 1):
            if (x ^ jt) >> bit & 1:
                x ^= 1 << bit
                p.append(cs * d + x)
    else:
        dist = nx.single_source_shortest_path_length(nxg, cs * d + jt)
        while p[-1] != cs * d + jt:
            u = p[-1]
            p.append(min(v for v in nxg[u] if v < t.attrs["nodes"] and dist[v] == dist[u] - 1))
    if cs != ct:
        # the fat tree's shortest paths between the two nodes (they never leave tree jt); up-down keeps
        # the word while going up: the path whose switches on the way up all share the first leaf's word
        tree = [v for v in range(t.n_vertices) if t.names[v].startswith(f"sw-ft{jt}-")] + [cs * d + jt, ct * d + jt]
        sub = nxg.subgraph(tree)
        paths = list(nx.all_shortest_paths(sub, cs * d + jt, ct * d + jt))
        word = [t.names[v].rsplit("-", 1)[1] for v in paths[0][1:2]][0]
        up = [q for q in paths if all(t.names[v].rsplit("-", 1)[1] == word for v in q[1:len(q) // 2 + 1])]
        assert len(up) == 1
        p += up[0][1:]
    return p


@pytest.mark.parametrize("kwargs", [dict(nodes=32, component_size=8, arity=2),
                                    dict(nodes=64, component_size=4, arity=4),
                                    dict(nodes=48, component_size=16, arity=3),
                                    dict(nodes=64, component_size=16, component="ldr", seed=1, trials=3)])
def test_hybrid_routing_loads_are_the_defined_paths(kwargs):
    from libtopomap.routing import native_routing, route_hops, route_traffic

    t = hybrid(**kwargs)
    assert native_routing(t) == "hybrid" and t.routing == "hybrid"
    nxg = t.to_networkx()
    nodes = t.attrs["nodes"]
    s, d = np.divmod(np.arange(nodes * nodes), nodes)
    w = np.random.default_rng(2).uniform(0.5, 2.0, s.size)
    want = np.zeros(t.n_arcs)
    hops = []
    for a, b, x in zip(s.tolist(), d.tolist(), w.tolist()):
        p = _defined_path(t, nxg, a, b) if a != b else [a]
        assert p == hybrid_route(t, a, b).tolist()
        hops.append(len(p) - 1)
        for u, v in zip(p, p[1:]):
            lo = t.indptr[u]
            want[lo + int(np.flatnonzero(t.indices[lo:t.indptr[u + 1]] == v)[0])] += x
    np.testing.assert_allclose(route_traffic(t, s, d, w, routing="hybrid"), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(route_hops(t, s, d, routing="hybrid"), hops)
    # hops by definition: Hamming (hypercube) or component distance, plus 2 (n - i) across components
    k, n, dd = t.attrs["arity"], t.attrs["levels"], t.attrs["component_size"]
    cs, js, ct, jt = s // dd, s % dd, d // dd, d % dd
    inside = t.distances.pairs(cs * dd + js, cs * dd + jt)
    if t.attrs["component"] == "hypercube":
        np.testing.assert_array_equal(inside, [bin(x).count("1") for x in (js ^ jt).tolist()])
    i = np.array([next((x for x in range(n) if (a // k ** (n - 1 - x)) % k != (b // k ** (n - 1 - x)) % k), n)
                  for a, b in zip(cs.tolist(), ct.tolist())])
    np.testing.assert_array_equal(hops, inside + 2 * (n - i))


def test_hybrid_routing_needs_a_hybrid_and_drives_the_metrics():
    from libtopomap import metrics

    with pytest.raises(TopologyError, match="hybrid routing needs"):
        ltm.evaluate(ltm.hypercube(3), ltm.CommGraph(8, [0], [7]), np.arange(8), routing="hybrid")
    t = hybrid(32, 8, arity=2)
    g = ltm.random_graph(32, 4, seed=3)
    e = metrics.evaluate(t, g, np.arange(32), routing="native")
    assert e == metrics.evaluate(t, g, np.arange(32), routing="hybrid")
    assert e["hop_bytes"] == metrics.hop_bytes(t, g, np.arange(32))  # shortest paths: the same hop-bytes
    assert e["max_congestion"] != metrics.max_congestion(t, g, np.arange(32))  # one path, not all of them
