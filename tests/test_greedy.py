"""The greedy (Hoefler & Snir, ICS'11, Algorithm 1): exact recovery of scrambled tori from any start,
its orientation and tree-order helpers, and the leaf-block fill on host networks."""

from __future__ import annotations

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap._kernels.bfs import multi_source_levels
from libtopomap.commgraph import SymGraph
from libtopomap.mappers import map_greedy
from libtopomap.mappers import greedy as greedy_mod
from libtopomap.patterns import random_graph, scrambled_torus, stencil


@pytest.mark.parametrize("dims", ["12x12x12", "16x16x16"])
@pytest.mark.parametrize("seed", [0, 1, 2, 7])
def test_greedy_recovers_scrambled_cube_with_any_seed(dims, seed):
    # the seed picks the start vertex and the scramble; the optimum puts every edge on one link
    topo = ltm.torus(dims)
    g = scrambled_torus(dims, seed=seed + 1)
    q = ltm.evaluate(topo, g, map_greedy(topo, g, seed=seed))
    assert q["avg_dilation"] == 1.0 and q["max_congestion"] == 1.0


@pytest.mark.parametrize("hdims", ["16x8x8", "8x16x8", "8x8x16"])
@pytest.mark.parametrize("seed", [0, 3])
def test_greedy_orients_a_long_stencil_on_every_torus_orientation(hdims, seed):
    # a 16x8x8 stencil fits a 16x8x8 torus in any orientation only with its long axis on the long
    # dimension; distances and common neighbours alone cannot tell the axes apart near the start
    # (the old code reached avg dilation 2.37 on two of the three)
    topo = ltm.torus(hdims)
    g = scrambled_torus("16x8x8", seed=1)
    q = ltm.evaluate(topo, g, map_greedy(topo, g, seed=seed))
    assert q["avg_dilation"] == 1.0 and q["max_congestion"] == 1.0


def test_greedy_orients_from_every_start_on_a_small_long_torus():
    topo = ltm.torus("8x4x4")
    g = scrambled_torus("8x4x4", seed=2)
    for s in range(topo.n_vertices):
        assert ltm.hop_bytes(topo, g, map_greedy(topo, g, start=s)) / 2 == topo.n_links


def _csr(topo):
    return topo.indptr.astype(np.int64), topo.indices.astype(np.int64)


def test_axis_depths_are_the_half_lengths_of_a_torus():
    # along a dimension of length L the vertices at offsets 1 .. L/2 - 1 have one shortest path
    # (offset L/2 has two), so the straight line through each arc is L/2 - 1 long
    topo = ltm.torus("16x8x6")
    ptr, idx = _csr(topo)
    n = topo.n_vertices
    root = 37
    depth = greedy_mod._axis_depths(ptr, idx, root, n, np.zeros(n, np.int64), np.zeros(n, np.int64),
                                    np.zeros(n, np.int64), np.zeros(n, np.int64), np.empty(n, np.int64), 1)
    coords = np.array(np.unravel_index(np.arange(n), (16, 8, 6))).T
    want = []
    for w in idx[ptr[root]:ptr[root + 1]]:
        dim = int(np.flatnonzero(coords[w] != coords[root])[0])
        want.append((16, 8, 6)[dim] // 2 - 1)
    assert depth.tolist() == want
    # the level cap holds
    capped = greedy_mod._axis_depths(ptr, idx, root, 2, np.zeros(n, np.int64), np.zeros(n, np.int64),
                                     np.zeros(n, np.int64), np.zeros(n, np.int64), np.empty(n, np.int64), 1)
    assert capped.tolist() == [min(d, 2) for d in want]


def test_axis_depths_of_a_path_and_a_star():
    # a path 0-1-2-3-4 from 1: 1 towards 0, 3 towards 4; a star from its centre: 1 everywhere
    ptr = np.array([0, 1, 3, 5, 7, 8], np.int64)
    idx = np.array([1, 0, 2, 1, 3, 2, 4, 3], np.int64)
    z = [np.zeros(5, np.int64) for _ in range(4)]
    assert greedy_mod._axis_depths(ptr, idx, 1, 5, *z, np.empty(5, np.int64), 1).tolist() == [1, 3]
    ptr = np.array([0, 3, 4, 5, 6], np.int64)
    idx = np.array([1, 2, 3, 0, 0, 0], np.int64)
    z = [np.zeros(4, np.int64) for _ in range(4)]
    assert greedy_mod._axis_depths(ptr, idx, 0, 4, *z, np.empty(4, np.int64), 1).tolist() == [1, 1, 1]


def _runs(order, key):
    """Number of maximal runs of equal ``key`` along ``order``."""
    k = key[order]
    return int(1 + np.count_nonzero(k[1:] != k[:-1]))


@pytest.mark.parametrize("root", [0, 100, 300])
def test_tree_order_keeps_leaf_switches_and_pods_contiguous(root):
    topo = ltm.fattree(8, 3)  # 512 hosts, 8 per leaf switch, 64 per pod
    ptr, idx = _csr(topo)
    slots = topo.slots.astype(np.int64)
    order = greedy_mod._tree_order(ptr, idx, multi_source_levels(ptr, idx, topo.n_vertices, [root]), slots)
    assert np.array_equal(np.sort(order), np.flatnonzero(slots > 0))  # every slot vertex once
    hosts = np.flatnonzero(slots > 0)
    leaf = np.full(topo.n_vertices, -1, np.int64)
    leaf[hosts] = idx[ptr[hosts]]  # a host's only link
    assert _runs(order, leaf) == np.unique(leaf[hosts]).size
    # a pod: the leaves that share their first upper switch's neighbours (distance 4 between hosts)
    pod = np.full(topo.n_vertices, -1, np.int64)
    for h in hosts:
        if pod[h] < 0:
            d = topo.distances.pairs(np.full(hosts.size, h), hosts)
            pod[hosts[d <= 4]] = h
    assert _runs(order, pod) == np.unique(pod[hosts]).size


def test_tree_order_of_a_torus_is_a_permutation_of_its_slots():
    topo = ltm.torus("6x5")
    ptr, idx = _csr(topo)
    slots = np.ones(30, np.int64)
    slots[[3, 17]] = 0
    order = greedy_mod._tree_order(ptr, idx, multi_source_levels(ptr, idx, 30, [4]), slots)
    assert order[0] == 4 and np.array_equal(np.sort(order), np.flatnonzero(slots))


def test_grow_block_prefers_edges_into_the_block():
    # a 4x4 grid: from a corner, a block of 4 grown by weight into the block is the 2x2 square
    # (breadth-first alone takes the corner, its two neighbours and a third-diagonal vertex)
    g = stencil((4, 4), periodic=False)
    sym = SymGraph(g)
    P = g.n
    block = np.empty(P, np.int64)
    nb = greedy_mod._grow_block(0, 4, sym.indptr, sym.indices, sym.wsum, np.full(P, -1, np.int64),
                                np.zeros(P, np.int8), np.zeros(P), np.empty(P, np.int64), block)
    assert nb == 4 and sorted(block[:4].tolist()) == [0, 1, 4, 5]
    # mapped processes are left out, and the block stops when the component runs out
    gamma = np.full(P, -1, np.int64)
    gamma[[1, 4]] = 0
    nb = greedy_mod._grow_block(0, 4, sym.indptr, sym.indices, sym.wsum, gamma, np.zeros(P, np.int8), np.zeros(P),
                                np.empty(P, np.int64), block)
    assert nb == 1 and block[0] == 0


def test_greedy_fills_whole_leaf_switches():
    # 64 processes on a fat tree with 8 hosts per leaf switch: 8 leaves, each full
    topo = ltm.fattree(8, 3)
    g = scrambled_torus("4x4x4", seed=1)
    m = map_greedy(topo, g, seed=2)
    ptr, idx = _csr(topo)
    leaves = idx[ptr[np.asarray(m.vertices)]]
    counts = np.bincount(leaves)
    assert sorted(counts[counts > 0].tolist()) == [8] * 8


@pytest.mark.parametrize("seed", [0, 1])
def test_greedy_leaf_blocks_with_two_slots_per_host(seed):
    topo = ltm.fattree(4, 3)  # 64 hosts, 4 per leaf switch: 8 slots per leaf
    slots = 2 * topo.slots.astype(np.int64)
    ptr, idx = _csr(topo)
    m = map_greedy(topo, scrambled_torus("4x4x4", seed=1), slots=slots, seed=seed)
    used = np.bincount(np.asarray(m.vertices), minlength=topo.n_vertices)
    assert np.all(used <= slots) and used.sum() == 64
    per_leaf = np.bincount(idx[ptr[np.asarray(m.vertices)]])
    assert sorted(per_leaf[per_leaf > 0].tolist()) == [8] * 8
    # a random graph can run out of unmapped neighbours before a leaf is full: still a bijection
    g = random_graph(100, 4, seed=3)
    used = np.bincount(np.asarray(map_greedy(topo, g, slots=slots, seed=seed).vertices), minlength=topo.n_vertices)
    assert np.all(used <= slots) and used.sum() == g.n


def test_greedy_on_a_large_fat_tree_beats_its_old_average_dilation():
    # 16-ary 3-tree, 4,096 hosts and a scrambled 16^3 stencil (bench_scale's 4,096 fat tree): the
    # fallback now fills leaves with blocks of the stencil (old code: 5.645, Scotch 4.277)
    topo = ltm.fattree(16, 3)
    g = scrambled_torus("16x16x16", seed=1)
    m = map_greedy(topo, g, seed=0)
    q = ltm.evaluate(topo, g, m)
    assert q["avg_dilation"] < 3.8 and q["max_congestion"] == 6.0
    assert greedy_mod._STATS[3] > 0  # the network is over the search budget: the fallback ran
