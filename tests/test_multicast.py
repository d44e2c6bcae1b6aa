"""Seed 001 (Mehta 2005), chapter 6: multicast trees on hypercubes, LDR graphs and hybrids."""

import math

import numpy as np
import pytest

from libtopomap import TopologyError, hybrid, hypercube, ldr
from libtopomap.collectives.multicast import enclosing_subcube, hybrid_tree, hypercube_tree, ldr_tree


def _popcount(x):
    return bin(int(x)).count("1")


def _check_tree(tree, topology=None):
    """A tree: root first with parent -1, every other vertex's parent is in the tree one level up,
    every edge a link of the topology, every member present; steps send to each vertex once."""
    v, p, d = tree.vertices, tree.parents, tree.depths
    assert v[0] == tree.root and p[0] == -1 and d[0] == 0
    assert np.unique(v).size == v.size
    depth_of = dict(zip(v.tolist(), d.tolist()))
    for x, px, dx in zip(v[1:].tolist(), p[1:].tolist(), d[1:].tolist()):
        assert depth_of[px] == dx - 1
        if topology is not None:
            assert px in set(topology.neighbors(x).tolist())
    assert set(tree.members.tolist()) <= set(v.tolist())
    received = np.concatenate([s[:, 1] for s in tree.steps()]) if tree.links else np.zeros(0, int)
    assert sorted(received.tolist()) == sorted(v[1:].tolist())


def test_enclosing_subcube_of_3_5_7_is_0xx1():
    # section 6.1: 0011, 0101, 0111 differ in 2 bits -> 2**2 nodes, 0XX1 = {1, 3, 5, 7}
    assert enclosing_subcube([3, 5, 7]).tolist() == [1, 3, 5, 7]
    assert enclosing_subcube([6]).tolist() == [6]
    assert enclosing_subcube([0, 15]).tolist() == list(range(16))
    with pytest.raises(TopologyError, match="at least one node"):
        enclosing_subcube([])


def test_enclosing_subcube_is_the_smallest_closed_subcube_by_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(200):
        g = rng.choice(64, size=rng.integers(1, 6), replace=False)
        sub = set(enclosing_subcube(g).tolist())
        # brute force: the smallest set {x : x & mask == base & mask} containing g
        best = None
        for mask in range(64):
            for base in range(64):
                cube = {x for x in range(64) if x & mask == base & mask}
                if set(g.tolist()) <= cube and (best is None or len(cube) < len(best)):
                    best = cube
        assert sub == best


def test_hypercube_tree_parents_flip_the_highest_differing_bit():
    t = hypercube_tree(4, 3, [5, 7])
    assert t.vertices.tolist() == [3, 1, 7, 5] and t.parents.tolist() == [-1, 3, 3, 1]
    assert (t.links, t.depth, t.hops) == (3, 2, 3)  # 5 at 2 hops, 7 at 1, the root at 0
    _check_tree(t, hypercube(4))
    rng = np.random.default_rng(1)
    for _ in range(50):
        root = int(rng.integers(64))
        g = rng.choice(64, size=4, replace=False)
        t = hypercube_tree(6, root, g)
        assert sorted(t.vertices.tolist()) == enclosing_subcube(np.append(g, root)).tolist()
        for x, p, d in zip(t.vertices[1:].tolist(), t.parents[1:].tolist(), t.depths[1:].tolist()):
            assert d == _popcount(x ^ root)
            assert p == x ^ (1 << ((x ^ root).bit_length() - 1))
        _check_tree(t, hypercube(6))


@pytest.mark.parametrize("dim", [1, 3, 6])
def test_hypercube_broadcast_tree_is_binomial(dim):
    t = hypercube_tree(dim, 5 % (1 << dim), range(1 << dim))
    assert (t.links, t.depth, t.hops) == ((1 << dim) - 1, dim, dim << (dim - 1))
    assert [len(s) for s in t.steps()] == [math.comb(dim, i) for i in range(1, dim + 1)]


def test_ldr_tree_reaches_every_member_by_a_shortest_path():
    topo = ldr(64, 6, seed=2, trials=3)
    rng = np.random.default_rng(3)
    for _ in range(20):
        root = int(rng.integers(64))
        g = rng.choice(64, size=int(rng.integers(1, 20)), replace=False)
        t = ldr_tree(topo, root, g)
        _check_tree(t, topo)
        dist = topo.hop_distances([root])[0]
        depth_of = dict(zip(t.vertices.tolist(), t.depths.tolist()))
        for m in t.members.tolist():
            assert depth_of[m] == dist[m]
        assert t.hops == int(dist[t.members].sum())
        assert t.links <= int(dist[t.members].sum())
    # broadcast: a shortest-path spanning tree
    t = ldr_tree(topo, 0, range(64))
    dist = topo.hop_distances([0])[0]
    assert (t.links, t.depth, t.hops) == (63, int(dist.max()), int(dist.sum()))


def test_ldr_tree_on_a_hypercube_is_a_shortest_path_tree():
    t = ldr_tree(hypercube(5), 0, range(32))
    assert (t.links, t.depth, t.hops) == (31, 5, 5 * 16)
    t = ldr_tree(hypercube(4), 0, [15])
    assert t.vertices.tolist() == [0, 1, 3, 7, 15]  # lowest-index predecessor: 15 <- 7 <- 3 <- 1 <- 0


def test_hybrid_tree_exact_on_32_nodes():
    h = hybrid(32, 8, arity=2)
    # broadcast from node 5: 31 nodes + 3 fat-tree switches (leaf, root, the other leaf)
    t = hybrid_tree(h, 5, range(32))
    _check_tree(t, h)
    # depth: 5 -> leaf -> root -> leaf -> 29 (4 hops), then position 5 -> 2 in component 3 (3 hops);
    # hops: 12 in component 0, 8 x 2 + 12 in component 1, 8 x 4 + 12 in components 2 and 3
    assert (t.links, t.depth, t.hops) == (34, 7, 12 + 28 + 44 + 44)
    # multicast to 18, 20: positions {5, 2, 4} span the whole 8-cube in components 0 and 2
    t = hybrid_tree(h, 5, [18, 20])
    _check_tree(t, h)
    assert (t.links, t.depth, t.hops) == (18, 7, 7 + 5)
    assert not set(t.vertices.tolist()) & (set(range(8, 16)) | set(range(24, 32)))
    # one component: no fat tree
    t = hybrid_tree(h, 5, [4])
    assert t.vertices.tolist() == [5, 4] and t.links == 1


def test_hybrid_tree_on_ldr_components_is_a_tree_of_links():
    h = hybrid(64, 16, component="ldr", seed=1, trials=3)
    rng = np.random.default_rng(4)
    for _ in range(10):
        root = int(rng.integers(64))
        t = hybrid_tree(h, root, rng.choice(64, size=int(rng.integers(1, 12)), replace=False))
        _check_tree(t, h)
    t = hybrid_tree(h, 0, range(64))
    _check_tree(t, h)
    assert t.links == 63 + 1  # 4 components on a 4-ary 1-tree: one switch


def test_errors():
    with pytest.raises(TopologyError, match="outside 0..15"):
        hypercube_tree(4, 0, [16])
    with pytest.raises(TopologyError, match="not built by hybrid"):
        hybrid_tree(hypercube(3), 0, [1])
