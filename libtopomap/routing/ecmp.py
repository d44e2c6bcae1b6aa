"""``ecmp``: path-uniform equal-cost multipath, a demand split evenly over *all* its shortest paths.

The loads of :func:`libtopomap.metrics.link_traffic` (Hoefler & Snir, ICS'11, section 2.5): closed
forms on verified grids, hypercubes and fat trees, else one breadth-first search per source (Brandes).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._kernels.bfs import leafless_csr
from .._kernels.ecmp import ecmp_traffic_parallel
from .._kernels.fattree_ecmp import fattree_ecmp_traffic
from .._kernels.grid_ecmp import grid_ecmp_traffic
from ..errors import TopologyError
from ._models import Model

__all__ = ["ecmp_vertex_traffic", "ECMP"]


def _demands(topology, s, t, w, oracle):
    """Vertex-level demands between the vertices where their shortest paths fan out.

    A vertex on a single link to its attachment vertex (a leaf: a host under its switch or router)
    sends everything over that link first and receives everything over it last (all its shortest
    paths start or end there), so those links are charged here and the demands handed to the
    attachment vertices: one search per switch or router instead of one per host, over the network
    without its leaves (no shortest path between two other vertices goes through a leaf).  Returns
    ``(sources, ptr, targets, weights, first_hop)`` with ``first_hop`` the per-arc traffic already
    placed on those single links.
    """
    keep = s != t
    s, t, w = s[keep], t[keep], w[keep]
    att, off = oracle.attachments()
    first_hop = np.zeros(oracle.n_arcs)
    leaf = off[s] == 1
    if leaf.any():
        first_hop += np.bincount(oracle.first_arc(s[leaf]), weights=w[leaf], minlength=oracle.n_arcs)
        s = np.where(leaf, att[s], s)
        keep = s != t
        s, t, w = s[keep], t[keep], w[keep]
    leaf = off[t] == 1
    if leaf.any():
        first_hop += np.bincount(topology.arc_reverse[oracle.first_arc(t[leaf])], weights=w[leaf],
                                 minlength=oracle.n_arcs)
        t = np.where(leaf, att[t], t)
        keep = s != t
        s, t, w = s[keep], t[keep], w[keep]
    # one demand per pair of vertices, by source then target: a sparse matrix sums the duplicates in
    # O(demands + vertices) (a dense graph's 355,000 demands meet on about 15,000 pairs of routers)
    n = topology.n_vertices
    m = sp.csr_matrix((w, (s, t)), shape=(n, n))
    m.sum_duplicates()
    rows = np.diff(m.indptr)
    sources = np.flatnonzero(rows)
    ptr = np.append(m.indptr[sources], m.indptr[-1]).astype(np.int64)
    return sources.astype(np.int64), ptr, m.indices.astype(np.int64), m.data.astype(np.float64), first_hop


def _without_leaves(topology, off):
    """The CSR graph of the vertices that are not leaves (``off == 0``): ``(indptr, indices,
    arc_reverse, n, new, arcs)`` as :func:`libtopomap._kernels.bfs.leafless_csr`, with the reverse of
    every kept arc."""
    indptr, indices, new, arcs = leafless_csr(topology.indptr, topology.indices, np.asarray(off) == 0)
    pos = np.full(topology.n_arcs, -1, np.int64)
    pos[arcs] = np.arange(arcs.size)
    return indptr, indices, pos[topology.arc_reverse[arcs]], indptr.size - 1, new, arcs


def _grid_link_traffic(topology, oracle, s, t, w):
    """:func:`ecmp_vertex_traffic` on a verified grid or hypercube (``oracle.grid_shape`` is not None)."""
    dims, wrap = oracle.grid_shape
    m = int(np.prod(dims))
    keep = s != t
    s, t, w = s[keep], t[keep], w[keep]
    n_arcs = oracle.n_arcs
    att, _ = oracle.attachments()
    traffic = np.zeros(n_arcs)
    # hosts beyond the grid sit on one link to their router: the whole demand crosses it
    hs = s >= m
    if hs.any():
        traffic += np.bincount(topology.indptr[s[hs]], weights=w[hs], minlength=n_arcs)
        s[hs] = att[s[hs]]
    ht = t >= m
    if ht.any():
        traffic += np.bincount(topology.arc_reverse[topology.indptr[t[ht]]], weights=w[ht], minlength=n_arcs)
        t[ht] = att[t[ht]]
    keep = s != t
    s, t, w = s[keep], t[keep], w[keep]
    traffic += grid_ecmp_traffic(oracle.grid_arcs(), topology.arc_reverse, np.asarray(dims, np.int64),
                                          np.asarray(wrap, np.bool_), s, t, w, n_arcs)
    return traffic


def ecmp_vertex_traffic(topology, s, t, w):
    """Per-arc ECMP load of vertex demands ``s[i] -> t[i]`` of volume ``w[i]`` (``int64``, ``int64``,
    ``float64`` arrays); the computation of :func:`libtopomap.metrics.link_traffic` (see there)."""
    oracle = topology.distances
    if oracle.grid_shape is not None:
        return _grid_link_traffic(topology, oracle, s, t, w)
    ft = oracle.fattree_arcs()
    if ft is not None and (s.size == 0 or max(int(s.max()), int(t.max())) < ft[2][1].size):
        # a generated fat tree, hosts only: closed form, no search (every shortest path goes up to the
        # level of the leaves' lowest common ancestor and down, split evenly at each level)
        k, n, arcs = ft
        keep = s != t
        w = np.asarray(w, np.float64)[keep]
        return fattree_ecmp_traffic(arcs, topology.arc_reverse, k, n, s[keep], t[keep], w,
                                             np.zeros_like(w), oracle.n_arcs)
    sources, ptr, t, w, first_hop = _demands(topology, s, t, w, oracle)
    if not sources.size:
        return first_hop
    _, off = oracle.attachments()
    if off.any():
        indptr, indices, reverse, n, new, arcs = _without_leaves(topology, off)
        part = ecmp_traffic_parallel(indptr, indices, reverse, n, new[sources], ptr, new[t], w)
        if part.size and np.isnan(part[0]):
            raise TopologyError("a communicating pair of vertices is not connected")
        first_hop[arcs] += part
        return first_hop
    traffic = ecmp_traffic_parallel(topology.indptr, topology.indices, topology.arc_reverse,
                                             topology.n_vertices, sources, ptr, t, w)
    if traffic.size and np.isnan(traffic[0]):
        raise TopologyError("a communicating pair of vertices is not connected")
    return traffic + first_hop


def _traffic(topology, name, ctx, s, t, w):
    return ecmp_vertex_traffic(topology, s, t, w)


#: The ``ecmp`` model (the default of every metric).
ECMP = Model("ecmp", _traffic)
