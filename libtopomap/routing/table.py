"""``table`` and ``oblivious``: next hops towards the destination, one hop closer at every vertex.

``table`` is a fixed next-hop table: at every vertex the next hop towards ``t`` is the lowest-index
neighbour one hop closer to ``t`` (a BFS tree per destination), one path per pair.  ``oblivious``
splits the flow evenly among those neighbours at every vertex.  Batches run one breadth-first search
per destination, in parallel chunks of destinations; no table is stored.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .._kernels.bfs import bfs_scratch, bfs_start, bfs_targets, bfs_visit
from .._kernels.ecmp import sigma_reset, sigma_search
from .._kernels.oracle import grid3_dims, grid3_target, hop_distance
from .._jit import njit
from ..errors import TopologyError
from ._common import put, strip_leaves
from ._models import Model

__all__ = ["table_leg", "TABLE", "OBLIVIOUS"]


@njit(cache=True)
def _toward_destinations(indptr, indices, n, dests, ptr, srcs, ws, oblivious, traffic):
    """``table`` / ``oblivious`` loads: per destination a BFS from it (stopped at the farthest
    source; search ``i`` marks what it visits with ``stamp == i``), then the flow pushed from the
    far sources towards it, each vertex handing its flow to its lowest-index minimal next hop
    (table) or evenly to all of them (oblivious).  False when a source is not reached."""
    stamp, level, queue = bfs_scratch(n)
    is_src = np.full(n, -1, np.int64)
    flow = np.zeros(n)
    for i in range(dests.size):
        t = dests[i]
        need = bfs_targets(srcs, ptr[i], ptr[i + 1], i, is_src, t)
        for j in range(ptr[i], ptr[i + 1]):
            flow[srcs[j]] += ws[j]
        head, tail = bfs_start(t, i, stamp, level, queue)
        while head < tail and need > 0:
            tail, hits = bfs_visit(indptr, indices, queue[head], i, stamp, level, queue, tail, is_src)
            need -= hits
            head += 1
        if need > 0:
            return False
        for k in range(tail - 1, 0, -1):
            u = queue[k]
            f = flow[u]
            if f != 0.0:
                du = level[u] - 1
                if oblivious:
                    c = 0
                    for a in range(indptr[u], indptr[u + 1]):
                        v = indices[a]
                        if stamp[v] == i and level[v] == du:
                            c += 1
                    share = f / c
                    for a in range(indptr[u], indptr[u + 1]):
                        v = indices[a]
                        if stamp[v] == i and level[v] == du:
                            traffic[a] += share
                            flow[v] += share
                else:
                    for a in range(indptr[u], indptr[u + 1]):  # neighbours in increasing index
                        v = indices[a]
                        if stamp[v] == i and level[v] == du:
                            traffic[a] += f
                            flow[v] += f
                            break
            flow[u] = 0.0
        flow[t] = 0.0
    return True


@njit(cache=True, parallel=True)
def _toward_chunks(indptr, indices, n, dests, ptr, srcs, ws, oblivious, parts, oks):
    nchunks = parts.shape[0]
    for c in prange(nchunks):
        lo = c * dests.size // nchunks
        hi = (c + 1) * dests.size // nchunks
        oks[c] = _toward_destinations(indptr, indices, n, dests[lo:hi], ptr[lo:hi + 1], srcs, ws, oblivious,
                                      parts[c])


def _toward_parallel(indptr, indices, n, dests, ptr, srcs, ws, oblivious, traffic):
    """:func:`_toward_destinations` over chunks of destinations in parallel, one load array per thread
    (``O(threads x (n + arcs))`` memory)."""
    nchunks = min(numba.get_num_threads(), dests.size)
    if nchunks <= 1:
        return _toward_destinations(indptr, indices, n, dests, ptr, srcs, ws, oblivious, traffic)
    parts = np.zeros((nchunks, traffic.size))
    oks = np.zeros(nchunks, np.bool_)
    _toward_chunks(indptr, indices, n, dests, ptr, srcs, ws, oblivious, parts, oks)
    traffic += parts.sum(axis=0)
    return bool(oks.all())


@njit(cache=True)
def table_leg(indptr, indices, s, t, w, oblivious, meta, packed, table, prune, no_targets, traffic, dist, sigma,
              flow, order, log_arc, log_val, log_n):
    """One ``table`` / ``oblivious`` demand ``s -> t`` of volume ``w``: a search from ``t`` (pruned to
    the shortest ``s``-``t`` paths by oracle distances with ``prune``, else stopped after the level
    holding ``s``) gives the distances to ``t``; the route takes the lowest-index neighbour one hop
    closer (table), or the flow is split evenly over those neighbours (oblivious).  ``dist`` must be
    -1 and ``sigma, flow`` 0 on entry (reset on return).  False when ``s`` is not reached."""
    grid3, k0, k1, k2, w0, w1, w2 = grid3_dims(meta)
    g3 = (grid3 and prune, k0, k1, k2, w0, w1, w2)
    dst = hop_distance(meta, packed, table, t, s) if prune else 0
    tg = grid3_target(packed, s, g3[0])
    tail, missed = sigma_search(indptr, indices, t, order, dist, sigma, no_targets, 1, prune,
                                          (meta, packed, table), s, dst, g3, tg)
    if missed == 0:
        if oblivious:
            flow[s] = w
            for j in range(tail - 1, 0, -1):
                u = order[j]
                f = flow[u]
                if f == 0.0:
                    continue
                du = dist[u] - 1
                c = 0
                for a in range(indptr[u], indptr[u + 1]):
                    if dist[indices[a]] == du:
                        c += 1
                share = f / c
                for a in range(indptr[u], indptr[u + 1]):
                    v = indices[a]
                    if dist[v] == du:
                        put(traffic, a, share, log_arc, log_val, log_n)
                        flow[v] += share
        else:
            u = s
            while u != t:
                du = dist[u] - 1
                for a in range(indptr[u], indptr[u + 1]):  # neighbours in increasing index
                    v = indices[a]
                    if dist[v] == du:
                        put(traffic, a, w, log_arc, log_val, log_n)
                        u = v
                        break
    sigma_reset(order, tail, dist, sigma, flow)
    return missed == 0


def _traffic(topology, name, ctx, s, t, w):
    traffic = np.zeros(topology.n_arcs)
    s, t, w = strip_leaves(topology, s, t, w, traffic)
    if s.size == 0:
        return traffic
    order = np.lexsort((s, t))
    s, t, w = s[order], t[order], w[order]
    dests, start = np.unique(t, return_index=True)
    ptr = np.append(start, t.size).astype(np.int64)
    ok = _toward_parallel(topology.indptr, topology.indices, topology.n_vertices, dests.astype(np.int64), ptr,
                          s, w, name == "oblivious", traffic)
    if not ok:
        raise TopologyError("a communicating pair of vertices is not connected")
    return traffic


#: The ``table`` model: the lowest-index minimal next hop.
TABLE = Model("table", _traffic)
#: The ``oblivious`` model: an even split among the minimal next hops.
OBLIVIOUS = Model("oblivious", _traffic)
