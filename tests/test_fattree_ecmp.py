"""Closed-form ECMP loads on k-ary n-trees (``fattree_ecmp_traffic``, used by the local-search
engine's setup) agree with the breadth-first searches they replace."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap._kernels.ecmp import ecmp_traffic
from libtopomap.commgraph import SymGraph
from libtopomap.mappers._deltas import full_traffic


def _searched(topo, sym, vert):
    """Today's method for a topology the oracle does not cover: one search per source vertex."""
    g = sym.graph
    s, d = vert[g.src], vert[g.dst]
    keep = s != d
    s, d, w = s[keep], d[keep], np.asarray(g.weights, np.float64)[keep]
    order = np.lexsort((d, s))
    s, d, w = s[order], d[order], w[order]
    sources, start = np.unique(s, return_index=True)
    ptr = np.append(start, s.size).astype(np.int64)
    return ecmp_traffic(topo.indptr, topo.indices, topo.arc_reverse, topo.n_vertices,
                                 sources.astype(np.int64), ptr, d.astype(np.int64), w)


def _graph(P, rng):
    m = 3 * P
    src, dst = rng.integers(P, size=m), rng.integers(P, size=m)
    return ltm.CommGraph(P, src, dst, rng.integers(1, 9, size=m).astype(float))


@pytest.mark.parametrize("k,n", [(2, 1), (2, 2), (2, 3), (4, 2), (4, 3), (2, 4), (3, 2), (3, 3)])
@pytest.mark.parametrize("seed", [0, 1])
def test_closed_form_equals_the_searches(k, n, seed):
    rng = np.random.default_rng(seed)
    topo = ltm.fattree(k, n)
    H = k ** n
    assert topo.distances.fattree_arcs() is not None
    P = 2 * H
    g = _graph(P, rng)
    sym = SymGraph(g)
    vert = rng.integers(H, size=P).astype(np.int64)  # several processes per host too
    got = full_traffic(topo, sym, vert)
    ref = _searched(topo, sym, vert)
    if k & (k - 1) == 0:  # every split is a power of two: exact in binary
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_the_closed_form_applies_only_where_it_holds():
    rng = np.random.default_rng(3)
    topo = ltm.fattree(2, 3)
    g = _graph(16, rng)
    sym = SymGraph(g)
    # a process on a switch: the searches (the closed form is for hosts)
    vert = rng.integers(8, size=16).astype(np.int64)
    vert[0] = topo.n_vertices - 1
    np.testing.assert_array_equal(full_traffic(topo, sym, vert), _searched(topo, sym, vert))
    # other topologies, or a fat tree's links changed behind its attributes: no closed form
    assert ltm.torus("4x4").distances.fattree_arcs() is None
    links = np.stack([topo.arc_source, topo.indices], 1)
    links = links[links[:, 0] < links[:, 1]]
    links = np.delete(links, np.flatnonzero(links[:, 0] >= 8)[0], axis=0)  # one switch-to-switch link fewer
    broken = ltm.Topology(topo.names, links, slots=topo.slots, kinds=topo.kinds, attrs=topo.attrs)
    assert broken.distances.fattree_arcs() is None


def test_engine_setup_on_a_fat_tree_matches_evaluate():
    topo = ltm.fattree(4, 3)
    g = ltm.load_graph("torus-scrambled:4x4x4:1")
    m = ltm.map_processes(topo, g, strategy="random", seed=2)
    from libtopomap.mappers.local_search import SwapState

    st = SwapState(topo, g, m.vertices, topo.slots, "congestion")
    assert st.current_max() == pytest.approx(ltm.evaluate(topo, g, m)["max_congestion"], rel=1e-12)
