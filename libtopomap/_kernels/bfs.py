"""Chunked breadth-first searches from many sources, compiled with numba.

Many sources, each searched independently: the sources are split into contiguous chunks run in
parallel (numba threads), and each chunk reuses one visit stamp, level and queue array, so nothing
is cleared between sources and no distance matrix is formed.  The single steps (:func:`bfs_scratch`,
:func:`bfs_start`, :func:`bfs_visit`, :func:`bfs_targets`) are shared with other kernels.
"""

import numba
import numpy as np
from .._jit import njit

__all__ = ["bfs_distance_rows", "leafless_csr", "grouped_pair_search", "source_sums", "k_nearest", "bfs_balls",
           "multi_source_levels", "multi_source_owners", "bfs_scratch", "bfs_start", "bfs_visit", "bfs_targets"]


def _nchunks(n_sources):
    """Chunks of a parallel per-source search: a few per thread (for load balance)."""
    return min(n_sources, 4 * numba.get_num_threads())


@njit(cache=True, inline="always")
def _chunk(c, n_sources, nchunks):
    """Source range ``[lo, hi)`` of chunk ``c``."""
    return c * n_sources // nchunks, (c + 1) * n_sources // nchunks


@njit(cache=True, inline="always")
def bfs_scratch(n):
    """``(stamp, level, queue)`` of one chunk's searches (stamp -1: never visited)."""
    return np.full(n, -1, np.int64), np.zeros(n, np.int32), np.empty(n, np.int32)


@njit(cache=True, inline="always")
def bfs_start(s, mark, stamp, level, queue):
    """Begin search ``mark`` (any id unique within the chunk) at ``s``; returns ``(head, tail)``."""
    stamp[s] = mark
    level[s] = 0
    queue[0] = s
    return 0, 1


@njit(cache=True, inline="always")
def bfs_visit(indptr, indices, v, mark, stamp, level, queue, tail, targets):
    """Append the neighbours of ``v`` not yet visited by search ``mark`` to the queue, one level
    below ``v``; returns ``(new tail, how many of them have targets[w] == mark)`` (the new vertices
    are ``queue[old tail:new tail]``; pass ``stamp`` as ``targets`` when no vertex is a target)."""
    lv = level[v] + 1
    hits = 0
    for a in range(indptr[v], indptr[v + 1]):
        w = indices[a]
        if stamp[w] != mark:
            stamp[w] = mark
            level[w] = lv
            queue[tail] = w
            tail += 1
            if targets[w] == mark:
                hits += 1
    return tail, hits


@njit(cache=True, inline="always")
def bfs_targets(targets, lo, hi, mark, tstamp, s):
    """Mark the targets ``targets[lo:hi]`` of search ``mark`` from ``s`` (``tstamp[t] = mark``);
    returns how many distinct ones other than ``s`` the search must reach (stop it at 0, counting
    the ``hits`` of :func:`bfs_visit` with ``tstamp`` as its ``targets``)."""
    need = 0
    for k in range(lo, hi):
        t = targets[k]
        if tstamp[t] != mark:
            tstamp[t] = mark
            need += 1
    if tstamp[s] == mark:
        need -= 1
    return need


def bfs_distance_rows(indptr, indices, n, sources, column, out):
    """Unweighted BFS from every ``sources[i]``, writing ``out[i, column[v]] = hops(sources[i], v)``
    for each reached vertex ``v`` with ``column[v] >= 0``; unreached entries keep their value.
    Returns ``out``.  Parallel over sources (numba threads), except on small graphs (under
    ``_SERIAL_WORK`` sources x vertices), where waking the threads costs more than the searches
    (42 ms per call for an 18-vertex node on a loaded 2-core machine, against microseconds)."""
    if sources.size * n < _SERIAL_WORK:
        _bfs_rows_range(indptr, indices, n, sources, column, out, 0, sources.size)
        return out
    nchunks = _nchunks(sources.size)
    if nchunks:
        _bfs_rows(indptr, indices, n, sources, column, out, nchunks)
    return out


_SERIAL_WORK = 1 << 16


def leafless_csr(indptr, indices, keep):
    """The CSR graph on the vertices where ``keep`` is True (e.g. all but the leaves).

    Returns
    -------
    (indptr, indices, new, arcs)
        The kept graph (vertices renumbered in index order), ``new`` the new number of every vertex
        (-1 where not kept) and ``arcs`` the original CSR arc of every kept arc (in CSR order).
    """
    keep = np.asarray(keep, np.bool_)
    new = np.cumsum(keep, dtype=np.int64) - 1
    new[~keep] = -1
    src = np.repeat(np.arange(keep.size, dtype=np.int64), np.diff(indptr))
    arcs = np.flatnonzero(keep[src] & keep[indices])
    n = int(keep.sum())
    out = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(new[src[arcs]], minlength=n), out=out[1:])
    return out, new[indices[arcs]], new, arcs


@njit(cache=True)
def _bfs_rows_range(indptr, indices, n, sources, column, out, lo, hi):
    """:func:`bfs_distance_rows` for the sources ``lo..hi-1``, one thread."""
    stamp, level, queue = bfs_scratch(n)
    for i in range(lo, hi):
        s = sources[i]
        head, tail = bfs_start(s, i, stamp, level, queue)
        while head < tail:
            v = queue[head]
            head += 1
            if column[v] >= 0:
                out[i, column[v]] = level[v]
            tail, _ = bfs_visit(indptr, indices, v, i, stamp, level, queue, tail, stamp)


@njit(cache=True, parallel=True)
def _bfs_rows(indptr, indices, n, sources, column, out, nchunks):
    """:func:`bfs_distance_rows` on chunks of sources (what dominates
    ``scipy.sparse.csgraph.shortest_path`` on large tori is the float64 matrix this never forms)."""
    for c in numba.prange(nchunks):
        lo, hi = _chunk(c, sources.size, nchunks)
        _bfs_rows_range(indptr, indices, n, sources, column, out, lo, hi)
    return out


def grouped_pair_search(indptr, indices, n, group_ptr, group_source, targets, out):
    """Breadth-first search from each ``group_source[g]`` until every vertex of
    ``targets[group_ptr[g]:group_ptr[g+1]]`` is reached, writing the hops to ``out`` (-1 if
    unreachable).  Parallel over groups (numba threads), ``O(n)`` scratch per thread."""
    nchunks = _nchunks(group_source.size)
    if nchunks:
        _grouped_pair_search(indptr, indices, n, group_ptr, group_source, targets, out, nchunks)
    return out


@njit(cache=True, parallel=True)
def _grouped_pair_search(indptr, indices, n, group_ptr, group_source, targets, out, nchunks):
    for c in numba.prange(nchunks):
        lo, hi = _chunk(c, group_source.size, nchunks)
        stamp, level, queue = bfs_scratch(n)
        tstamp = np.full(n, -1, np.int64)
        for g in range(lo, hi):
            s = group_source[g]
            remaining = bfs_targets(targets, group_ptr[g], group_ptr[g + 1], g, tstamp, s)
            head, tail = bfs_start(s, g, stamp, level, queue)
            while head < tail and remaining > 0:
                v = queue[head]
                head += 1
                tail, hits = bfs_visit(indptr, indices, v, g, stamp, level, queue, tail, tstamp)
                remaining -= hits
            for k in range(group_ptr[g], group_ptr[g + 1]):
                t = targets[k]
                out[k] = level[t] if stamp[t] == g else -1
    return out


def source_sums(indptr, indices, n, sources, weight):
    """For each source, BFS over the whole graph: ``(sum_v weight[v] * hops, max hops to a vertex
    with weight > 0, count of such vertices at that max, reached weight)``.  Parallel over sources."""
    ns = sources.size
    sums = np.zeros(ns, np.float64)
    ecc = np.zeros(ns, np.int64)
    cnt = np.zeros(ns, np.int64)
    reach = np.zeros(ns, np.float64)
    nchunks = _nchunks(ns)
    if nchunks:
        _source_sums(indptr, indices, n, sources, weight, sums, ecc, cnt, reach, nchunks)
    return sums, ecc, cnt, reach


@njit(cache=True, parallel=True)
def _source_sums(indptr, indices, n, sources, weight, sums, ecc, cnt, reach, nchunks):
    for c in numba.prange(nchunks):
        lo, hi = _chunk(c, sources.size, nchunks)
        stamp, level, queue = bfs_scratch(n)
        for i in range(lo, hi):
            head, tail = bfs_start(sources[i], i, stamp, level, queue)
            tot = 0.0
            mx = 0
            nmx = 0
            rw = 0.0
            while head < tail:
                v = queue[head]
                head += 1
                lv = level[v]
                wv = weight[v]
                if wv > 0:
                    tot += wv * lv
                    rw += wv
                    if lv > mx:
                        mx = lv
                        nmx = 0
                    if lv == mx:
                        nmx += 1
                tail, _ = bfs_visit(indptr, indices, v, i, stamp, level, queue, tail, stamp)
            sums[i] = tot
            ecc[i] = mx
            cnt[i] = nmx
            reach[i] = rw
    return sums


def k_nearest(indptr, indices, n, sources, mask, k):
    """For every source, the vertices with ``mask`` set (other than itself) in BFS order up to the
    ``k``-th one, plus every further one at the same hop distance (so index order cannot bias a sample).
    Returns CSR ``(ptr, idx)`` over ``sources``.  Parallel over sources; O(k + ball) per source."""
    return _two_pass_csr(_k_nearest, sources.size, _nchunks(sources.size), indptr, indices, n, sources, mask, k)


def _two_pass_csr(kernel, ns, nchunks, *args):
    """CSR ``(ptr, idx)`` over ``ns`` sources from a kernel run twice: once to count each source's
    entries, once to write them (``kernel(*args, counts, idx, ptr, nchunks, write)``)."""
    counts = np.zeros(ns, np.int64)
    if nchunks == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.int64)
    ptr = np.zeros(ns + 1, np.int64)  # all zero in the counting pass, which reads ptr[i] but writes nothing
    kernel(*args, counts, np.zeros(0, np.int64), ptr, nchunks, False)
    np.cumsum(counts, out=ptr[1:])
    idx = np.empty(ptr[-1], np.int64)
    kernel(*args, counts, idx, ptr, nchunks, True)
    return ptr, idx


@njit(cache=True, parallel=True)
def _k_nearest(indptr, indices, n, sources, mask, k, counts, idx, ptr, nchunks, write):
    for c in numba.prange(nchunks):
        lo, hi = _chunk(c, sources.size, nchunks)
        stamp, level, queue = bfs_scratch(n)
        for i in range(lo, hi):
            counts[i] = _nearest_from(indptr, indices, sources[i], i, stamp, level, queue, mask, k, idx, ptr[i], write)
    return counts


@njit(cache=True, inline="always")
def _nearest_from(indptr, indices, s, mark, stamp, level, queue, mask, k, idx, base, write):
    """One search of :func:`k_nearest` (search id ``mark``): the ``mask`` vertices nearest ``s``, all
    of the level where the ``k``-th is found; written at ``idx[base:]`` when ``write``.  Returns
    how many."""
    head, tail = bfs_start(s, mark, stamp, level, queue)
    found = 0
    stop_level = -1
    while head < tail:
        v = queue[head]
        head += 1
        lv = level[v]
        if stop_level >= 0 and lv > stop_level:
            break
        if v != s and mask[v]:
            if write:
                idx[base + found] = v
            found += 1
            if found >= k and stop_level < 0:
                stop_level = lv
        tail, _ = bfs_visit(indptr, indices, v, mark, stamp, level, queue, tail, stamp)
    return found


def bfs_balls(indptr, indices, n, sources, depth, cap):
    """For every source ``s``, the vertices ``w > s`` within ``depth`` hops, in breadth-first order,
    at most ``cap`` of them.  Returns CSR ``(ptr, idx)`` over ``sources``.  ``O(ball)`` work per
    source and ``O(len(sources) x cap)`` memory.  Sequential: it is called per batch of a search,
    and starting the threads cost ~0.1 s a call on a busy 2-core machine (more than the work)."""
    return _two_pass_csr(_bfs_balls, sources.size, min(sources.size, 1), indptr, indices, n, sources, depth, cap)


@njit(cache=True)
def _bfs_balls(indptr, indices, n, sources, depth, cap, counts, idx, ptr, nchunks, write):
    for c in numba.prange(nchunks):
        lo, hi = _chunk(c, sources.size, nchunks)
        stamp, level, queue = bfs_scratch(n)
        for i in range(lo, hi):
            counts[i] = _ball_from(indptr, indices, sources[i], i, stamp, level, queue, depth, cap, idx, ptr[i], write)
    return counts


@njit(cache=True, inline="always")
def _ball_from(indptr, indices, s, mark, stamp, level, queue, depth, cap, idx, base, write):
    """One search of :func:`bfs_balls` (search id ``mark``): the vertices ``w > s`` within ``depth``
    hops, at most ``cap``; written at ``idx[base:]`` when ``write``.  Returns how many."""
    head, tail = bfs_start(s, mark, stamp, level, queue)
    found = 0
    while head < tail and found < cap:
        v = queue[head]
        head += 1
        if v > s:
            if write:
                idx[base + found] = v
            found += 1
        if level[v] < depth:
            tail, _ = bfs_visit(indptr, indices, v, mark, stamp, level, queue, tail, stamp)
    return found


def multi_source_levels(indptr, indices, n, sources):
    """Hops from the nearest of ``sources`` to every vertex (-1: unreachable); one BFS, O(n)."""
    return _multi_source_bfs(indptr, indices, n, np.asarray(sources, np.int64), np.zeros(0, np.int64))


def multi_source_owners(indptr, indices, n, sources, owner):
    """Voronoi cells of a breadth-first search from all ``sources`` at once: every vertex not yet
    owned takes ``owner`` of the vertex that reaches it first (sources in the given order, then
    queue order); ``owner`` (int64, -1: none) is updated in place and returned.  ``owner[s] >= 0``
    must hold for the sources.  One BFS, O(n)."""
    _multi_source_bfs(indptr, indices, n, np.asarray(sources, np.int64), owner)
    return owner


@njit(cache=True)
def _multi_source_bfs(indptr, indices, n, sources, owner):
    """Levels of a BFS from all ``sources`` at once; when ``owner`` is not empty, each vertex reached
    also takes the owner of the vertex it was reached from."""
    label = owner.size > 0
    level = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    tail = 0
    for s in sources:
        if level[s] < 0:
            level[s] = 0
            queue[tail] = s
            tail += 1
    head = 0
    while head < tail:
        v = queue[head]
        head += 1
        for a in range(indptr[v], indptr[v + 1]):
            w = indices[a]
            if level[w] < 0:
                level[w] = level[v] + 1
                if label:
                    owner[w] = owner[v]
                queue[tail] = w
                tail += 1
    return level
