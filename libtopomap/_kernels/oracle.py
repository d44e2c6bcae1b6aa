"""Distance-oracle kernels: hop distances of :class:`libtopomap.distances.DistanceOracle` in compiled
code (closed forms on grids and hypercubes, a table, or a bidirectional breadth-first search).
"""

import numpy as np
from .._jit import njit
from .bfs import bfs_visit

__all__ = ["hop_distance", "grid3_dims", "grid3_target", "grid3_hops", "hop_distance_search", "NEEDS_SEARCH",
           "vertex_distance", "vertex_distances", "pair_search", "new_search_scratch",
           "KIND_SEARCH", "KIND_GRID", "KIND_CUBE", "KIND_TABLE"]


# Kinds of :class:`libtopomap.distances.DistanceOracle` (see there for what each means).
KIND_SEARCH = 0
KIND_GRID = 1
KIND_CUBE = 2
KIND_TABLE = 3


@njit(cache=True)
def new_search_scratch(n):
    """Scratch of :func:`pair_search` for a graph of ``n`` vertices: one ``(7, n)`` int64 array
    (two stamp rows, two level rows, two queues, and the stamp counter at ``[6, 0]``)."""
    return np.zeros((7, max(n, 1)), np.int64)


@njit(cache=True)
def _expand_level(indptr, indices, queue, head, tail, stamp, dist, other_stamp, other_dist, c):
    """One whole BFS level of one side of :func:`pair_search`; returns ``(head, tail, best)`` where
    ``best`` is the meeting distance ``dist + other_dist`` (-1: no meeting in this level).

    It returns at the first meeting: all meetings of the first level that has any are at the same
    distance.  A vertex the other side saw before its deepest level was expanded by it, so its
    neighbours, this level's vertices among them, would have met earlier (links are undirected)."""
    end = tail
    while head < end:
        v = queue[head]
        head += 1
        first = tail
        tail, hits = bfs_visit(indptr, indices, v, c, stamp, dist, queue, tail, other_stamp)
        if hits:
            for j in range(first, tail):
                w = queue[j]
                if other_stamp[w] == c:
                    return head, tail, dist[w] + other_dist[w]
    return head, tail, -1


@njit(cache=True)
def pair_search(indptr, indices, s, t, scratch):
    """Hop distance between ``s`` and ``t`` by bidirectional breadth-first search (-1: unreachable).

    Whole levels are expanded from the side with the smaller frontier; the first level that reaches a
    vertex seen from the other side gives ``min(ds + dt)`` over that level, which is the distance.
    Stamps make the scratch reusable without clearing (``O(ball)`` work per call).
    """
    if s == t:
        return 0
    stamp_s = scratch[0]
    stamp_t = scratch[1]
    ds = scratch[2]
    dt = scratch[3]
    qs = scratch[4]
    qt = scratch[5]
    scratch[6, 0] += 1
    c = scratch[6, 0]
    stamp_s[s] = c
    ds[s] = 0
    stamp_t[t] = c
    dt[t] = 0
    qs[0] = s
    qt[0] = t
    hs, ts, ht, tt = 0, 1, 0, 1
    while hs < ts and ht < tt:
        if ts - hs <= tt - ht:
            hs, ts, best = _expand_level(indptr, indices, qs, hs, ts, stamp_s, ds, stamp_t, dt, c)
        else:
            ht, tt, best = _expand_level(indptr, indices, qt, ht, tt, stamp_t, dt, stamp_s, ds, c)
        if best >= 0:
            return best
    return -1


@njit(cache=True, inline="always")
def _popcount(x):
    # SWAR bit count of a non-negative int64
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56


#: Returned by :func:`hop_distance` when the pair needs :func:`hop_distance_search`.
NEEDS_SEARCH = -2


@njit(cache=True, inline="always")
def hop_distance(meta, packed, table, u, v):
    """Hop distance between vertices ``u`` and ``v`` from a distance oracle's fast path, or
    :data:`NEEDS_SEARCH` (-2) when only a search can tell (then call :func:`hop_distance_search`).

    ``(meta, packed, table)`` is ``DistanceOracle.fast_arrays``.  ``d(u, v) = off(u) + off(v) +
    D(u', v')`` for ``u != v``, where ``off = packed[:, 0]`` is 1 for a host on a single link to its
    switch and ``packed[:, 1:]`` holds what the oracle's kind needs of the attachment vertex ``u'``:
    grid coordinates, a hypercube id, or a table row.  ``meta = [kind, ndims, dims..., wrap...]``.
    Three array arguments keep a call at a few tens of nanoseconds (each array argument costs).
    """
    if u == v:
        return 0
    base = np.int64(packed[u, 0]) + np.int64(packed[v, 0])
    kind = meta[0]
    if kind == KIND_GRID:
        nd = meta[1]
        d = np.int64(0)
        for j in range(nd):
            dx = np.int64(packed[u, 1 + j]) - np.int64(packed[v, 1 + j])
            dx = dx if dx >= 0 else -dx
            # the way around a wrapped dimension when shorter; branch-free (the wrap flag is 0 or 1),
            # which halves the cost of a call on random pairs
            alt = meta[2 + j] - dx
            d += dx + (meta[2 + nd + j] & np.int64(alt < dx)) * (alt - dx)
        return base + d
    if kind == KIND_CUBE:
        return base + _popcount(np.int64(packed[u, 1]) ^ np.int64(packed[v, 1]))
    if kind == KIND_TABLE:
        px = packed[u, 1]
        py = packed[v, 1]
        if px >= 0 and py >= 0:
            return base + np.int64(table[px, py])
        if packed[u, 2] == packed[v, 2]:
            return base
        return NEEDS_SEARCH
    if packed[u, 1] == packed[v, 1]:
        return base
    return NEEDS_SEARCH


@njit(cache=True, inline="always")
def grid3_dims(meta):
    """``(grid3, k0, k1, k2, w0, w1, w2)``: whether the oracle is a 3-D torus or mesh, its sizes and
    wrap flags (zeros otherwise), hoisted out of a hot loop for :func:`grid3_hops`."""
    grid3 = meta[0] == KIND_GRID and meta[1] == 3
    if grid3:
        return True, meta[2], meta[3], meta[4], meta[5], meta[6], meta[7]
    z = np.int64(0)
    return False, z, z, z, z, z, z


@njit(cache=True, inline="always")
def grid3_target(packed, t, grid3):
    """``(toff, t0, t1, t2)``: the row of ``packed`` of a fixed target ``t`` for :func:`grid3_hops`
    (zeros but ``toff`` when not ``grid3``)."""
    return (np.int64(packed[t, 0]), np.int64(packed[t, 1 if grid3 else 0]), np.int64(packed[t, 2 if grid3 else 0]),
            np.int64(packed[t, 3 if grid3 else 0]))


@njit(cache=True, inline="always")
def grid3_hops(packed, v, t0, t1, t2, toff, k0, k1, k2, w0, w1, w2):
    """:func:`hop_distance` from vertex ``v`` to a fixed target on a 3-D grid
    oracle, with the target's row ``(toff, t0, t1, t2)`` of ``packed`` and :func:`grid3_dims` hoisted
    (the general kernel reloads them on every call); ``v`` must differ from the target."""
    e0 = t0 - packed[v, 1]
    e0 = e0 if e0 >= 0 else -e0
    f0 = k0 - e0
    e1 = t1 - packed[v, 2]
    e1 = e1 if e1 >= 0 else -e1
    f1 = k1 - e1
    e2 = t2 - packed[v, 3]
    e2 = e2 if e2 >= 0 else -e2
    f2 = k2 - e2
    return (toff + packed[v, 0] + e0 + e1 + e2 + (w0 & np.int64(f0 < e0)) * (f0 - e0)
            + (w1 & np.int64(f1 < e1)) * (f1 - e1) + (w2 & np.int64(f2 < e2)) * (f2 - e2))


@njit(cache=True)
def hop_distance_search(meta, packed, indptr, indices, scratch, u, v):
    """The search path of :func:`hop_distance`: bidirectional BFS between the attachment vertices
    (``scratch`` from :func:`new_search_scratch`).  -1: unreachable."""
    if u == v:
        return 0
    col = 2 if meta[0] == KIND_TABLE else 1
    x = packed[u, col]
    y = packed[v, col]
    base = np.int64(packed[u, 0]) + np.int64(packed[v, 0])
    if x == y:
        return base
    d = pair_search(indptr, indices, x, y, scratch)
    return -1 if d < 0 else base + d


@njit(cache=True)
def vertex_distance(oracle, u, v, scratch):
    """Hop distance from ``DistanceOracle.kernel_args`` (one tuple; slower per call than
    :func:`hop_distance`, for code outside hot loops).  -1: unreachable."""
    meta, packed, table, indptr, indices = oracle
    d = hop_distance(meta, packed, table, u, v)
    if d == NEEDS_SEARCH:
        d = hop_distance_search(meta, packed, indptr, indices, scratch, u, v)
    return d


@njit(cache=True)
def vertex_distances(oracle, a, b, out):
    """``out[i] = vertex_distance(oracle, a[i], b[i])`` (sequential; see :func:`grouped_pair_search`)."""
    meta, packed, table, indptr, indices = oracle
    scratch = new_search_scratch(indptr.size - 1)
    for i in range(a.size):
        d = hop_distance(meta, packed, table, a[i], b[i])
        if d == NEEDS_SEARCH:
            d = hop_distance_search(meta, packed, indptr, indices, scratch, a[i], b[i])
        out[i] = d
    return out
