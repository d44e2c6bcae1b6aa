"""Compiled inner loops (numba) shared by metrics and mappers.

Per-source shortest-path counting is a graph traversal whose work per source is proportional to the
part of the network it reaches; numpy cannot express the early exit, so these loops are compiled.
Measured on a 16x16x16 torus with a 7-point stencil: see ``benchmarks/bench_core.py``.
"""

import heapq

import numba
import numpy as np
from numba import njit
from . import _numba_cache  # noqa: F401  (an unreadable cache file is a miss, not an error)

__all__ = ["ecmp_traffic", "ecmp_traffic_parallel", "alg3_traffic", "ecmp_pair_flows", "bfs_distance_rows",
           "alg3_levels", "hop_distance", "grid3_dims", "grid3_target", "grid3_hops", "hop_distance_search",
           "NEEDS_SEARCH", "vertex_distance",
           "vertex_distances", "pair_search", "new_search_scratch",
           "grouped_pair_search", "source_sums", "k_nearest", "bfs_balls", "multi_source_levels", "multi_source_owners",
           "KIND_SEARCH", "KIND_GRID", "KIND_CUBE", "KIND_TABLE", "leafless_csr"]


# ----------------------------------------------------------------------------- ECMP (Brandes) flows
# Both ECMP kernels search level by level from a source, counting shortest paths (sigma), and push
# the flow at the targets back towards the source in proportion to the path counts (Brandes).
# :func:`ecmp_traffic` serves many targets per source; :func:`ecmp_pair_flows` one target per pair,
# optionally pruned to the vertices on shortest paths by oracle distances (the local-search engine).

@njit(cache=True, inline="always")
def _sigma_search(indptr, indices, s, order, dist, sigma, is_target, remaining, prune, oracle, t, dst_t, g3, tg):
    """Path-counting search from ``s``, one whole level at a time (so ``sigma`` is complete for the
    next one): new vertices get ``dist + 1`` and ``sigma[w] += sigma[v]`` over the arcs one level down.
    It stops after the level that reaches the last of ``remaining`` targets (vertices with
    ``is_target`` set, or ``t`` alone when ``is_target`` is empty).  With ``prune``, a vertex is kept
    only when its oracle distance to ``t`` (``dst_t`` from ``s``) is one less per level
    (``oracle = (meta, packed, table)``; ``g3, tg`` from :func:`grid3_dims` and :func:`grid3_target`).
    Returns ``(tail, remaining)``: the searched vertices are ``order[:tail]``."""
    meta, packed, table = oracle
    grid3, k0, k1, k2, w0, w1, w2 = g3
    toff, t0, t1, t2 = tg
    many = is_target.size > 0
    dist[s] = 0
    sigma[s] = 1.0
    order[0] = s
    head = 0
    tail = 1
    while head < tail:
        level_end = tail
        while head < level_end:
            v = order[head]
            head += 1
            dv = dist[v]
            for a in range(indptr[v], indptr[v + 1]):
                w = indices[a]
                if dist[w] < 0:
                    if prune:
                        if grid3:
                            if w != t:
                                if grid3_hops(packed, w, t0, t1, t2, toff, k0, k1, k2, w0, w1, w2) != dst_t - dv - 1:
                                    continue
                        elif hop_distance(meta, packed, table, w, t) != dst_t - dv - 1:
                            continue
                    dist[w] = dv + 1
                    order[tail] = w
                    tail += 1
                    if is_target[w] if many else w == t:
                        remaining -= 1
                if dist[w] == dv + 1:
                    sigma[w] += sigma[v]
        if remaining == 0:
            break
    return tail, remaining


@njit(cache=True, inline="always")
def _push_back(indptr, indices, arc_reverse, order, tail, dist, sigma, flow, traffic, pair, wf, wr, log_arc, log_val,
               log_n):
    """Brandes back-propagation over the searched vertices ``order[:tail]``, deepest first: the flow at
    ``w`` goes to its predecessors one level up in proportion ``sigma[v] / sigma[w]``.  Adds ``f`` to
    the arc ``v -> w`` or, with ``pair``, ``wf * f`` to it and ``wr * f`` to ``w -> v``, logging both
    (see :func:`ecmp_pair_flows`)."""
    cap = log_arc.size
    for j in range(tail - 1, 0, -1):
        w = order[j]
        fw = flow[w]
        if fw == 0.0:
            continue
        dw = dist[w]
        ratio = fw / sigma[w]
        for a in range(indptr[w], indptr[w + 1]):
            v = indices[a]
            if dist[v] == dw - 1:
                f = ratio * sigma[v]
                # arc a goes w -> v; its reverse goes v -> w (the source -> target direction)
                ra = arc_reverse[a]
                flow[v] += f
                if not pair:
                    traffic[ra] += f
                    continue
                traffic[ra] += wf * f
                traffic[a] += wr * f
                k = log_n[0]
                if k + 2 <= cap:
                    log_arc[k] = ra
                    log_val[k] = wf * f
                    log_arc[k + 1] = a
                    log_val[k + 1] = wr * f
                    log_n[0] = k + 2
                else:
                    log_n[1] = 1


@njit(cache=True, inline="always")
def _sigma_reset(order, tail, dist, sigma, flow):
    """Clear what a path-counting search (:func:`_sigma_search`) set (``order[:tail]``)."""
    for j in range(tail):
        w = order[j]
        dist[w] = -1
        sigma[w] = 0.0
        flow[w] = 0.0


@njit(cache=True)
def ecmp_traffic(indptr, indices, arc_reverse, n, sources, dem_ptr, dem_dst, dem_w):
    """Per-arc traffic with equal split over all shortest paths (Brandes-style accumulation).

    ``sources[i]`` sends ``dem_w[dem_ptr[i]:dem_ptr[i+1]]`` to ``dem_dst[...]`` (vertex indices).
    BFS from each source counts shortest paths (sigma) and stops after the level holding the
    farthest target; then flow is pushed back from the deepest vertices to their predecessors in
    proportion sigma[pred] / sigma[v].  Returns traffic per CSR arc.
    """
    traffic = np.zeros(indices.size, dtype=np.float64)
    dist = np.full(n, -1, dtype=np.int64)
    sigma = np.zeros(n, dtype=np.float64)
    flow = np.zeros(n, dtype=np.float64)
    order = np.empty(n, dtype=np.int64)
    is_target = np.zeros(n, dtype=np.bool_)
    no_log = np.zeros(0, np.int64)
    # no pruning: placeholders for the oracle arguments of _sigma_search
    z = np.int64(0)
    no_oracle = (no_log, no_log.reshape(0, 1), no_log.reshape(0, 1))
    no_grid3 = (False, z, z, z, z, z, z)
    for i in range(sources.size):
        s = sources[i]
        remaining = 0
        for k in range(dem_ptr[i], dem_ptr[i + 1]):
            t = dem_dst[k]
            if t != s:
                if not is_target[t]:
                    is_target[t] = True
                    remaining += 1
                flow[t] += dem_w[k]
        if remaining == 0:
            for k in range(dem_ptr[i], dem_ptr[i + 1]):
                flow[dem_dst[k]] = 0.0
            continue
        tail, remaining = _sigma_search(indptr, indices, s, order, dist, sigma, is_target, remaining, False, no_oracle,
                                        z, z, no_grid3, (z, z, z, z))
        if remaining > 0:
            # unreachable target: flag with NaN so the caller raises
            traffic[0] = np.nan
        # back-propagate flow from the deepest discovered vertices
        _push_back(indptr, indices, arc_reverse, order, tail, dist, sigma, flow, traffic, False, 1.0, 0.0, no_log,
                   sigma[:0], no_log)
        for j in range(tail):
            is_target[order[j]] = False
        _sigma_reset(order, tail, dist, sigma, flow)
        flow[s] = 0.0
    return traffic


@njit(cache=True)
def ecmp_pair_flows(cnt, es, et, ewf, ewr, sign, indptr, indices, arc_reverse, meta, packed, table, prune, traffic,
                    dist, sigma, flow, order, log_arc, log_val, log_n):
    """Add ECMP flow ``sign * ewf[i]`` from vertex ``es[i]`` to ``et[i]`` (and ``sign * ewr[i]`` back)
    to ``traffic`` for ``i < cnt``; False if a pair is unreachable.

    Per pair: breadth-first search from s, level by level, stopping after the level that holds t;
    then the unit flow at t is pushed back to s in proportion to path counts (Brandes).  With
    ``prune`` (the oracle answers every vertex) only vertices on shortest s-t paths are visited
    (oracle distance to t exactly one less per level).  Changes are appended to ``log_arc/log_val``
    while they have room (``log_n[1] = 1`` on overflow).  ``dist`` must be -1 and ``sigma, flow`` 0
    on entry; they are reset on return.  One call serves all pairs of a move (one call overhead).
    """
    ok = True
    no_targets = np.zeros(0, np.bool_)
    # 3-D tori and meshes: the pruning distance with the dimensions and the target's coordinates hoisted
    grid3, k0, k1, k2, w0, w1, w2 = grid3_dims(meta)
    g3 = (grid3 and prune, k0, k1, k2, w0, w1, w2)
    oracle = (meta, packed, table)
    for i in range(cnt):
        s = es[i]
        t = et[i]
        if s == t:
            continue
        wf = sign * ewf[i]
        wr = sign * ewr[i]
        dst_t = hop_distance(meta, packed, table, s, t) if prune else 0
        tg = grid3_target(packed, t, g3[0])
        tail, missed = _sigma_search(indptr, indices, s, order, dist, sigma, no_targets, 1, prune, oracle, t, dst_t,
                                     g3, tg)
        if missed == 0:
            flow[t] = 1.0
            _push_back(indptr, indices, arc_reverse, order, tail, dist, sigma, flow, traffic, True, wf, wr, log_arc,
                       log_val, log_n)
        else:
            ok = False
        _sigma_reset(order, tail, dist, sigma, flow)
    return ok


# ----------------------------------------------------------------------------- Algorithm 3 (Hoefler & Snir)
@njit(cache=True, inline="always")
def _add_route(load, found, pred_arc, arc_source, arc_capacity, s, t, w):
    """Add ``w / c`` to the load of every arc of the route ``s -> t`` given by ``pred_arc`` (walked
    back from ``t``); ``load[0] = NaN`` when ``t`` was not ``found`` (unreachable)."""
    if not found:
        load[0] = np.nan
        return
    x = t
    while x != s:
        a = pred_arc[x]
        load[a] += w / arc_capacity[a]
        x = arc_source[a]


@njit(cache=True)
def alg3_traffic(indptr, indices, arc_source, arc_capacity, n, esrc, edst, ew, omega_hat):
    """Hoefler & Snir Algorithm 3 as written in the seed: one Dijkstra per application edge on
    weights rho, where rho starts at omega_hat (so fewer hops always win) and each routed edge adds
    w/c along its path.  Returns the per-arc load (rho - omega_hat).  Kept as the reference that
    tests compare :func:`alg3_levels` (what :func:`libtopomap.congestion_estimate` uses) against."""
    rho = np.full(indices.size, omega_hat, dtype=np.float64)
    dist = np.full(n, np.inf)
    pred_arc = np.full(n, -1, dtype=np.int64)
    done = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)
    for e in range(esrc.size):
        s = esrc[e]
        t = edst[e]
        if s == t:
            continue
        ntouched = 0
        dist[s] = 0.0
        touched[ntouched] = s
        ntouched += 1
        heap = [(0.0, np.int64(s))]
        while len(heap) > 0:
            d, v = heapq.heappop(heap)
            if done[v]:
                continue
            done[v] = True
            if v == t:
                break
            for a in range(indptr[v], indptr[v + 1]):
                w = indices[a]
                nd = d + rho[a]
                if nd < dist[w]:
                    if dist[w] == np.inf:
                        touched[ntouched] = w
                        ntouched += 1
                    dist[w] = nd
                    pred_arc[w] = a
                    heapq.heappush(heap, (nd, np.int64(w)))
        _add_route(rho, done[t], pred_arc, arc_source, arc_capacity, s, t, ew[e])
        for j in range(ntouched):
            v = touched[j]
            dist[v] = np.inf
            pred_arc[v] = -1
            done[v] = False
    return rho - omega_hat


# ----------------------------------------------------------------------------- chunked breadth-first searches
# Many sources, each searched independently: the sources are split into contiguous chunks run in
# parallel (numba threads), and each chunk reuses one visit stamp, level and queue array, so nothing
# is cleared between sources and no distance matrix is formed.
def _nchunks(n_sources):
    """Chunks of a parallel per-source search: a few per thread (for load balance)."""
    return min(n_sources, 4 * numba.get_num_threads())


@njit(cache=True, inline="always")
def _chunk(c, n_sources, nchunks):
    """Source range ``[lo, hi)`` of chunk ``c``."""
    return c * n_sources // nchunks, (c + 1) * n_sources // nchunks


@njit(cache=True, inline="always")
def _bfs_scratch(n):
    """``(stamp, level, queue)`` of one chunk's searches (stamp -1: never visited)."""
    return np.full(n, -1, np.int64), np.zeros(n, np.int32), np.empty(n, np.int32)


@njit(cache=True, inline="always")
def _bfs_start(s, mark, stamp, level, queue):
    """Begin search ``mark`` (any id unique within the chunk) at ``s``; returns ``(head, tail)``."""
    stamp[s] = mark
    level[s] = 0
    queue[0] = s
    return 0, 1


@njit(cache=True, inline="always")
def _bfs_visit(indptr, indices, v, mark, stamp, level, queue, tail, targets):
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
def _bfs_targets(targets, lo, hi, mark, tstamp, s):
    """Mark the targets ``targets[lo:hi]`` of search ``mark`` from ``s`` (``tstamp[t] = mark``);
    returns how many distinct ones other than ``s`` the search must reach (stop it at 0, counting
    the ``hits`` of :func:`_bfs_visit` with ``tstamp`` as its ``targets``)."""
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
    stamp, level, queue = _bfs_scratch(n)
    for i in range(lo, hi):
        s = sources[i]
        head, tail = _bfs_start(s, i, stamp, level, queue)
        while head < tail:
            v = queue[head]
            head += 1
            if column[v] >= 0:
                out[i, column[v]] = level[v]
            tail, _ = _bfs_visit(indptr, indices, v, i, stamp, level, queue, tail, stamp)


@njit(cache=True, parallel=True)
def _bfs_rows(indptr, indices, n, sources, column, out, nchunks):
    """:func:`bfs_distance_rows` on chunks of sources (what dominates
    ``scipy.sparse.csgraph.shortest_path`` on large tori is the float64 matrix this never forms)."""
    for c in numba.prange(nchunks):
        lo, hi = _chunk(c, sources.size, nchunks)
        _bfs_rows_range(indptr, indices, n, sources, column, out, lo, hi)
    return out


@njit(cache=True)
def alg3_levels(indptr, indices, arc_source, arc_capacity, n, esrc, edst, ew):
    """Algorithm 3 of Hoefler & Snir without a priority queue.

    With ``rho = omega_hat + load`` and ``omega_hat`` larger than any path load, Dijkstra on ``rho``
    minimises (hops, load) lexicographically.  A breadth-first search from the source that keeps,
    per vertex, the least-loaded predecessor arc among those one level up computes the same
    optimum exactly (no float cancellation against ``omega_hat``) in ``O(reached arcs)``; the
    search stops once the level holding the target is complete.  Returns the per-arc load (sum of
    ``w / c`` over the edges routed through each arc); ``load[0] = NaN`` flags an unreachable target.
    """
    load = np.zeros(indices.size, dtype=np.float64)
    dist = np.full(n, -1, dtype=np.int64)
    best = np.zeros(n, dtype=np.float64)
    pred_arc = np.full(n, -1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    for e in range(esrc.size):
        s = esrc[e]
        t = edst[e]
        if s == t:
            continue
        dist[s] = 0
        best[s] = 0.0
        order[0] = s
        head = 0
        tail = 1
        found = False
        while head < tail and not found:
            level_end = tail
            while head < level_end:
                v = order[head]
                head += 1
                dv = dist[v]
                bv = best[v]
                for a in range(indptr[v], indptr[v + 1]):
                    w = indices[a]
                    if dist[w] < 0:
                        dist[w] = dv + 1
                        best[w] = bv + load[a]
                        pred_arc[w] = a
                        order[tail] = w
                        tail += 1
                        if w == t:
                            found = True
                    elif dist[w] == dv + 1:
                        c = bv + load[a]
                        if c < best[w]:
                            best[w] = c
                            pred_arc[w] = a
        _add_route(load, found, pred_arc, arc_source, arc_capacity, s, t, ew[e])
        for j in range(tail):
            v = order[j]
            dist[v] = -1
            pred_arc[v] = -1
    return load


# ----------------------------------------------------------------------------- distance oracle kernels
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
        tail, hits = _bfs_visit(indptr, indices, v, c, stamp, dist, queue, tail, other_stamp)
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
        stamp, level, queue = _bfs_scratch(n)
        tstamp = np.full(n, -1, np.int64)
        for g in range(lo, hi):
            s = group_source[g]
            remaining = _bfs_targets(targets, group_ptr[g], group_ptr[g + 1], g, tstamp, s)
            head, tail = _bfs_start(s, g, stamp, level, queue)
            while head < tail and remaining > 0:
                v = queue[head]
                head += 1
                tail, hits = _bfs_visit(indptr, indices, v, g, stamp, level, queue, tail, tstamp)
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
        stamp, level, queue = _bfs_scratch(n)
        for i in range(lo, hi):
            head, tail = _bfs_start(sources[i], i, stamp, level, queue)
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
                tail, _ = _bfs_visit(indptr, indices, v, i, stamp, level, queue, tail, stamp)
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
    kernel(*args, counts, np.zeros(0, np.int64), np.zeros(1, np.int64), nchunks, False)
    ptr = np.zeros(ns + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    idx = np.empty(ptr[-1], np.int64)
    kernel(*args, counts, idx, ptr, nchunks, True)
    return ptr, idx


@njit(cache=True, parallel=True)
def _k_nearest(indptr, indices, n, sources, mask, k, counts, idx, ptr, nchunks, write):
    for c in numba.prange(nchunks):
        lo, hi = _chunk(c, sources.size, nchunks)
        stamp, level, queue = _bfs_scratch(n)
        for i in range(lo, hi):
            counts[i] = _nearest_from(indptr, indices, sources[i], i, stamp, level, queue, mask, k, idx, ptr[i], write)
    return counts


@njit(cache=True, inline="always")
def _nearest_from(indptr, indices, s, mark, stamp, level, queue, mask, k, idx, base, write):
    """One search of :func:`k_nearest` (search id ``mark``): the ``mask`` vertices nearest ``s``, all
    of the level where the ``k``-th is found; written at ``idx[base:]`` when ``write``.  Returns
    how many."""
    head, tail = _bfs_start(s, mark, stamp, level, queue)
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
        tail, _ = _bfs_visit(indptr, indices, v, mark, stamp, level, queue, tail, stamp)
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
        stamp, level, queue = _bfs_scratch(n)
        for i in range(lo, hi):
            counts[i] = _ball_from(indptr, indices, sources[i], i, stamp, level, queue, depth, cap, idx, ptr[i], write)
    return counts


@njit(cache=True, inline="always")
def _ball_from(indptr, indices, s, mark, stamp, level, queue, depth, cap, idx, base, write):
    """One search of :func:`bfs_balls` (search id ``mark``): the vertices ``w > s`` within ``depth``
    hops, at most ``cap``; written at ``idx[base:]`` when ``write``.  Returns how many."""
    head, tail = _bfs_start(s, mark, stamp, level, queue)
    found = 0
    while head < tail and found < cap:
        v = queue[head]
        head += 1
        if v > s:
            if write:
                idx[base + found] = v
            found += 1
        if level[v] < depth:
            tail, _ = _bfs_visit(indptr, indices, v, mark, stamp, level, queue, tail, stamp)
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


def ecmp_traffic_parallel(indptr, indices, arc_reverse, n, sources, dem_ptr, dem_dst, dem_w):
    """:func:`ecmp_traffic` split over numba threads (sources in chunks, one traffic array per
    chunk, summed at the end): ``O(threads x arcs)`` memory, the same result up to float rounding."""
    ns = sources.size
    nchunks = min(ns, numba.get_num_threads())
    if nchunks <= 1:
        return ecmp_traffic(indptr, indices, arc_reverse, n, sources, dem_ptr, dem_dst, dem_w)
    parts = np.zeros((nchunks, indices.size), np.float64)
    _ecmp_chunks(indptr, indices, arc_reverse, n, sources, dem_ptr, dem_dst, dem_w, parts, nchunks)
    return parts.sum(axis=0)


@njit(cache=True, parallel=True)
def _ecmp_chunks(indptr, indices, arc_reverse, n, sources, dem_ptr, dem_dst, dem_w, parts, nchunks):
    ns = sources.size
    for c in numba.prange(nchunks):
        lo = c * ns // nchunks
        hi = (c + 1) * ns // nchunks
        parts[c, :] = ecmp_traffic(indptr, indices, arc_reverse, n, sources[lo:hi], dem_ptr[lo:hi + 1], dem_dst,
                                   dem_w)
    return parts


# ============================================================================ ECMP link loads on grids
# Exact ECMP (path-uniform) link loads on verified tori, meshes and hypercubes from the structure of
# their shortest paths, without a search per source (issue 11).  Used by
# :func:`libtopomap.metrics.link_traffic` when ``topology.distances.grid_shape`` is not None.
#
# On a grid the shortest paths from s to t are the monotone lattice paths in the box spanned by the
# per-dimension shortest displacements L_j (on a ring of k > 2 vertices the shorter way round; both
# ways when the displacement is exactly k/2, each orientation then carrying the same number of
# paths).  A path drawn uniformly among the multinomial(L) monotone paths passes box point x with
# probability prod_i binom(L_i, x_i) / binom(|L|, |x|) (paths through x over all paths: a product of
# multinomials that reduces to binomials) and steps from there along dimension i with probability
# (L_i - x_i) / (|L| - |x|); the flow on the arc leaving x along i is the weight times both, i.e.
# paths(s->u) * paths(u+e_i->t) / paths(s->t).  With at most three active dimensions (every demand
# on a 3-D torus) and |L| <= _CLOSED_MAX (so that no binomial overflows), these are products of
# per-dimension tables: no dependence between box points, no buffer.  Otherwise the weight is pushed
# forward through the box with the step probabilities (the same numbers, a point at a time).  Work per
# demand is O(box volume x active dimensions); a demand one hop long costs O(1).
# The two directions of a pair of vertices share their paths reversed, so ``s -> t`` and ``t -> s``
# are scored in one pass: loads go to a per-thread array indexed by (slot, core vertex, step) whose
# slot says where they end up (the arc, its reverse, or both, for a pair with equal weights both ways).
# A hypercube is the mesh 2 x 2 x ... x 2 (vertex id = coordinates as bits, most significant first).

__all__ += ["grid_arc_table", "grid_demand_costs", "grid_ecmp_traffic"]

_CLOSED_MAX = 500   # binom(500, 250) ~ 1e149: box tables stay far from overflow and underflow
_SLOT_ARC, _SLOT_REVERSE, _SLOT_BOTH = 0, 1, 2
_GRID_PART_BYTES = 256 << 20   # per-thread load arrays of grid_ecmp_traffic, all threads together

@njit(cache=True)
def grid_arc_table(indptr, indices, m, dims, strides):
    """CSR arc of each step on a grid: ``arcs[v, 2j]`` goes from core vertex ``v`` one step up
    dimension ``j`` (wrapping on a ring), ``arcs[v, 2j + 1]`` one step down; -1 where there is none.

    Core vertices are ``0..m-1`` with coordinates ``(v // strides[j]) % dims[j]`` (row-major); arcs to
    vertices ``>= m`` (attached hosts) are skipped.  On a 2-vertex dimension both columns name the one
    link.  ``O(m x degree x len(dims))``.
    """
    nd = dims.size
    table = np.full((m, 2 * nd), -1, np.int64)
    for v in range(m):
        for a in range(indptr[v], indptr[v + 1]):
            w = indices[a]
            if w >= m:
                continue
            for j in range(nd):
                k = dims[j]
                cv = (v // strides[j]) % k
                cw = (w // strides[j]) % k
                if cv != cw:
                    up = (cw - cv) % k
                    if up == 1:
                        table[v, 2 * j] = a
                    if up == k - 1:
                        table[v, 2 * j + 1] = a
                    break
    return table


@njit(cache=True)
def _grid_displacements(dims, wrap, strides, s, t, length, sign, dim, coord, tied):
    """Active dimensions of the demand ``s -> t``: writes ``length, sign, dim, coord`` (source
    coordinate) and ``tied`` (both ways round are shortest) per active dimension; returns
    ``(active, ties)``.  ``wrap[j]`` must be False on rings of 2 (one link, one way)."""
    na = 0
    nt = 0
    for j in range(dims.size):
        k = dims[j]
        cs = (s // strides[j]) % k
        ct = (t // strides[j]) % k
        if cs == ct:
            continue
        d = ct - cs
        tie = False
        if wrap[j]:
            up = d % k
            dn = k - up
            if up < dn:
                sg, ln = 1, up
            elif dn < up:
                sg, ln = -1, dn
            else:
                sg, ln = 1, up
                tie = True
                nt += 1
        elif d > 0:
            sg, ln = 1, d
        else:
            sg, ln = -1, -d
        length[na] = ln
        sign[na] = sg
        dim[na] = j
        coord[na] = cs
        tied[na] = tie
        na += 1
    return na, nt


@njit(cache=True)
def grid_demand_costs(dims, wrap, strides, src, dst):
    """Work of each demand in :func:`grid_ecmp_traffic`: box volume x active dimensions x
    orientations (used to split demands into chunks of equal work)."""
    nd = dims.size
    length = np.zeros(nd, np.int64)
    sign = np.zeros(nd, np.int64)
    dim = np.zeros(nd, np.int64)
    coord = np.zeros(nd, np.int64)
    tied = np.zeros(nd, np.bool_)
    cost = np.zeros(src.size, np.float64)
    for i in range(src.size):
        na, nt = _grid_displacements(dims, wrap, strides, src[i], dst[i], length, sign, dim, coord, tied)
        vol = 1.0
        for a in range(na):
            vol *= length[a] + 1
        cost[i] = 1.0 + vol * na * (1 << nt)
    return cost


@njit(cache=True)
def _grid_box_flow(acc, base1, base2, ratio, ncol, dims, strides, s, weight, na, length, sign, dim, coord, buf,
                   bstride, x, cur):
    """Push ``weight`` from ``s`` through the box of one orientation (see the section comment): any
    number of active dimensions, any length.  The load of the step from vertex ``v`` along column
    ``col`` of :func:`grid_arc_table` goes to ``acc[base1 + v * ncol + col]``, and ``ratio`` times it
    to ``acc[base2 + ...]`` when ``ratio != 0``."""
    total = 0
    for i in range(na):
        total += length[i]
    bstride[na - 1] = 1
    for i in range(na - 2, -1, -1):
        bstride[i] = bstride[i + 1] * (length[i + 1] + 1)
    vol = bstride[0] * (length[0] + 1)
    for b in range(vol):
        buf[b] = 0.0
    buf[0] = weight
    for i in range(na):
        x[i] = 0
        cur[i] = coord[i]
    v = s
    lev = 0
    for b in range(vol):
        if lev < total:
            r = buf[b] / (total - lev)
            for i in range(na):
                left = length[i] - x[i]
                if left > 0:
                    f = r * left
                    col = v * ncol + 2 * dim[i] + (0 if sign[i] > 0 else 1)
                    acc[base1 + col] += f
                    if ratio != 0.0:
                        acc[base2 + col] += f * ratio
                    buf[b + bstride[i]] += f
        # next box point (row-major odometer over the active dimensions), moving v along
        i = na - 1
        while i >= 0:
            j = dim[i]
            k = dims[j]
            if x[i] < length[i]:
                x[i] += 1
                lev += 1
                c = cur[i] + sign[i]
                if c == k:
                    c = 0
                elif c < 0:
                    c = k - 1
                v += (c - cur[i]) * strides[j]
                cur[i] = c
                break
            lev -= x[i]
            x[i] = 0
            v += (coord[i] - cur[i]) * strides[j]
            cur[i] = coord[i]
            i -= 1


@njit(cache=True)
def _grid_box_closed3(acc, base1, base2, ratio, ncol, dims, strides, s, weight, na, length, sign, dim, coord, off,
                      tab):
    """:func:`_grid_box_flow` for at most three active dimensions and ``|L| <= _CLOSED_MAX``, in
    closed form (see the section comment): the flow at each box point is a product of table entries,
    so the points are independent and nothing is carried from one to the next (about 3x faster)."""
    # pad to three dimensions of length 0 (one box point, no step)
    l0 = length[0]
    l1 = length[1] if na > 1 else 0
    l2 = length[2] if na > 2 else 0
    total = l0 + l1 + l2
    c0 = 2 * dim[0] + (0 if sign[0] > 0 else 1)
    c1 = 2 * dim[1] + (0 if sign[1] > 0 else 1) if na > 1 else 0
    c2 = 2 * dim[2] + (0 if sign[2] > 0 else 1) if na > 2 else 0
    # off[i, x]: vertex index change after x steps along active dimension i (wrapping);
    # tab[i, x] = binom(L_i, x); tab[3, n] = weight / (binom(|L|, n) (|L| - n))
    for i in range(3):
        li = length[i] if i < na else 0
        if i < na:
            j = dim[i]
            k = dims[j]
            for x in range(li + 1):
                c = (coord[i] + sign[i] * x) % k
                off[i, x] = (c - coord[i]) * strides[j]
        else:
            off[i, 0] = 0
        b = 1.0
        tab[i, 0] = 1.0
        for x in range(1, li + 1):
            b = b * (li - x + 1) / x
            tab[i, x] = b
    b = 1.0
    for n in range(total):
        tab[3, n] = weight / (b * (total - n))
        b = b * (total - n) / (n + 1)
    for x0 in range(l0 + 1):
        r0 = l0 - x0
        v0 = s + off[0, x0]
        a0 = tab[0, x0]
        for x1 in range(l1 + 1):
            r1 = l1 - x1
            v1 = v0 + off[1, x1]
            a01 = a0 * tab[1, x1]
            n0 = x0 + x1
            end = l2 if r0 + r1 == 0 else l2 + 1   # the far corner sends nothing
            if ratio == 0.0:
                for x2 in range(end):
                    r2 = l2 - x2
                    p = a01 * tab[2, x2] * tab[3, n0 + x2]
                    at = base1 + (v1 + off[2, x2]) * ncol
                    if r0 > 0:
                        acc[at + c0] += p * r0
                    if r1 > 0:
                        acc[at + c1] += p * r1
                    if r2 > 0:
                        acc[at + c2] += p * r2
            else:
                for x2 in range(end):
                    r2 = l2 - x2
                    p = a01 * tab[2, x2] * tab[3, n0 + x2]
                    v = (v1 + off[2, x2]) * ncol
                    if r0 > 0:
                        f = p * r0
                        acc[base1 + v + c0] += f
                        acc[base2 + v + c0] += f * ratio
                    if r1 > 0:
                        f = p * r1
                        acc[base1 + v + c1] += f
                        acc[base2 + v + c1] += f * ratio
                    if r2 > 0:
                        f = p * r2
                        acc[base1 + v + c2] += f
                        acc[base2 + v + c2] += f * ratio


@njit(cache=True)
def _grid_ecmp_range(dims, wrap, strides, src, dst, wf, wr, lo, hi, acc, slot_base, buf, maxlen):
    """Pairs ``lo..hi-1``: ``src -> dst`` with weight ``wf``, ``dst -> src`` with weight ``wr``."""
    nd = dims.size
    ncol = 2 * nd
    length = np.zeros(nd, np.int64)
    sign = np.zeros(nd, np.int64)
    dim = np.zeros(nd, np.int64)
    coord = np.zeros(nd, np.int64)
    tied = np.zeros(nd, np.bool_)
    bstride = np.zeros(nd, np.int64)
    x = np.zeros(nd, np.int64)
    cur = np.zeros(nd, np.int64)
    base = np.zeros(nd, np.int64)
    off = np.zeros((3, maxlen + 1), np.int64)
    tab = np.zeros((4, 3 * maxlen + 2), np.float64)
    for i in range(lo, hi):
        s = src[i]
        na, nt = _grid_displacements(dims, wrap, strides, s, dst[i], length, sign, dim, coord, tied)
        if na == 0:
            continue
        # where the loads of the box of s -> t go: both directions alike, one of them, or both scaled
        ratio = 0.0
        base2 = 0
        if wf[i] == wr[i]:
            weight, base1 = wf[i], slot_base[_SLOT_BOTH]
        elif wr[i] == 0.0:
            weight, base1 = wf[i], slot_base[_SLOT_ARC]
        elif wf[i] == 0.0:
            weight, base1 = wr[i], slot_base[_SLOT_REVERSE]
        else:
            weight, base1 = wf[i], slot_base[_SLOT_ARC]
            ratio, base2 = wr[i] / wf[i], slot_base[_SLOT_REVERSE]
        total = 0
        for a in range(na):
            total += length[a]
            base[a] = sign[a]
        closed = na <= 3 and total <= _CLOSED_MAX
        # both ways round a ring are shortest in the tied dimensions: 2**nt orientations with equally
        # many paths each, so each carries an equal share
        share = weight / (1 << nt)
        for o in range(1 << nt):
            bit = 0
            for a in range(na):
                if tied[a]:
                    sign[a] = -base[a] if (o >> bit) & 1 else base[a]
                    bit += 1
            if closed:
                _grid_box_closed3(acc, base1, base2, ratio, ncol, dims, strides, s, share, na, length, sign, dim,
                                  coord, off, tab)
            else:
                _grid_box_flow(acc, base1, base2, ratio, ncol, dims, strides, s, share, na, length, sign, dim,
                               coord, buf, bstride, x, cur)
        for a in range(na):
            sign[a] = base[a]


@njit(cache=True, parallel=True)
def _grid_ecmp_chunks(dims, wrap, strides, src, dst, wf, wr, bounds, parts, slot_base, maxvol, maxlen):
    for c in numba.prange(bounds.size - 1):
        buf = np.empty(maxvol, np.float64)
        _grid_ecmp_range(dims, wrap, strides, src, dst, wf, wr, bounds[c], bounds[c + 1], parts[c], slot_base, buf,
                         maxlen)
    return parts


@njit(cache=True)
def _grid_collect(parts, slot_base, arcs, arc_reverse, n_arcs):
    """Per-arc traffic from the per-thread (slot, vertex, step) loads of :func:`_grid_ecmp_chunks`."""
    m, ncol = arcs.shape
    out = np.zeros(n_arcs, np.float64)
    for c in range(parts.shape[0]):
        acc = parts[c]
        for v in range(m):
            for col in range(ncol):
                a = arcs[v, col]
                if a < 0:
                    continue
                k = v * ncol + col
                if slot_base[_SLOT_ARC] >= 0:
                    out[a] += acc[slot_base[_SLOT_ARC] + k]
                if slot_base[_SLOT_REVERSE] >= 0:
                    out[arc_reverse[a]] += acc[slot_base[_SLOT_REVERSE] + k]
                if slot_base[_SLOT_BOTH] >= 0:
                    x = acc[slot_base[_SLOT_BOTH] + k]
                    out[a] += x
                    out[arc_reverse[a]] += x
    return out


def grid_ecmp_traffic(arcs, arc_reverse, dims, wrap, src, dst, w, n_arcs):
    """Per-arc ECMP traffic of the demands ``src[i] -> dst[i]`` (weight ``w[i]``) between core
    vertices of a grid: path-uniform split over all shortest paths, as :func:`ecmp_traffic` computes
    by searches.

    Parameters
    ----------
    arcs : ndarray of int64, shape (m, 2 * len(dims))
        :func:`grid_arc_table` of the grid.
    arc_reverse : ndarray of int64
        The reverse of each CSR arc (``Topology.arc_reverse``).
    dims : ndarray of int64
        Ring or line length per dimension; core vertex ``v`` has row-major coordinates over ``dims``.
    wrap : ndarray of bool
        Whether dimension ``j`` is a ring (torus) rather than a line (mesh); a ring of 2 is one link
        and counts as a line.
    src, dst : ndarray of int64
        Core vertices (``0 <= v < prod(dims)``) of each demand.
    w : ndarray of float64
    n_arcs : int

    Returns
    -------
    ndarray of float64 per CSR arc.

    Notes
    -----
    Demands between the same two vertices, either way, are merged into one pair scored in one pass
    (the paths of ``t -> s`` are those of ``s -> t`` reversed).  Pairs are split into one chunk per
    numba thread by estimated work (box volume, from a regular sample of the pairs), each chunk
    adding into its own array of up to three loads per core vertex and step: ``O(threads x m x
    2 len(dims))`` memory, with fewer chunks than threads when that would pass
    ``_GRID_PART_BYTES`` (256 MiB) in all.
    """
    dims = np.ascontiguousarray(dims, np.int64)
    wrap = np.ascontiguousarray(np.asarray(wrap, np.bool_) & (dims > 2))
    nd = dims.size
    m = int(np.prod(dims))
    strides = np.ones(nd, np.int64)
    for j in range(nd - 2, -1, -1):
        strides[j] = strides[j + 1] * dims[j + 1]
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    w = np.asarray(w, np.float64)
    if src.size == 0 or nd == 0:
        return np.zeros(n_arcs)
    # one pair per unordered {s, t}, s < t, sorted by s: weight s -> t and weight t -> s
    fwd = src < dst
    key, inv = np.unique(np.minimum(src, dst) * m + np.maximum(src, dst), return_inverse=True)
    wf = np.bincount(inv, weights=np.where(fwd, w, 0.0), minlength=key.size)
    wr = np.bincount(inv, weights=np.where(fwd, 0.0, w), minlength=key.size)
    src, dst = key // m, key % m
    # the slots in use (a symmetric graph needs only _SLOT_BOTH), each m x ncol long
    used = [None] * 3
    used[_SLOT_ARC] = bool(np.any((wf != wr) & (wf != 0.0)))
    used[_SLOT_REVERSE] = bool(np.any((wf != wr) & (wr != 0.0)))
    used[_SLOT_BOTH] = bool(np.any(wf == wr))
    slot_base = np.full(3, -1, np.int64)
    size = 0
    for k in range(3):
        if used[k]:
            slot_base[k] = size
            size += m * 2 * nd
    maxvol = 1
    for k, wr_ in zip(dims.tolist(), wrap.tolist()):
        maxvol *= k // 2 + 1 if wr_ else k
    maxlen = int(dims.max())
    nchunks = int(max(1, min(src.size, numba.get_num_threads(), _GRID_PART_BYTES // (8 * size))))
    # chunks of equal estimated work, from the costs of a regular sample of at most ~65,536 pairs
    step = max(1, src.size // 65536)
    sample = np.arange(0, src.size, step)
    cost = np.cumsum(grid_demand_costs(dims, wrap, strides, src[sample], dst[sample]))
    cuts = sample[np.minimum(np.searchsorted(cost, cost[-1] * np.arange(1, nchunks) / nchunks), sample.size - 1)]
    bounds = np.concatenate([[0], cuts, [src.size]]).astype(np.int64)
    parts = np.zeros((nchunks, size), np.float64)
    _grid_ecmp_chunks(dims, wrap, strides, src, dst, wf, wr, bounds, parts, slot_base, maxvol, maxlen)
    return _grid_collect(parts, slot_base, np.ascontiguousarray(arcs, np.int64),
                         np.ascontiguousarray(arc_reverse, np.int64), n_arcs)


# ============================================================================ ECMP link loads on fat trees
# Exact ECMP (path-uniform) link loads on a k-ary n-tree (libtopomap.fattree: hosts 0..k^n - 1,
# then n levels of k^(n-1) switches, level 0 the top; switch <w, l> joined to <w', l+1> when the
# (n-1)-digit words w, w' agree except in digit l, digit 0 the most significant; host p under leaf
# <p // k, n-1>).  Every shortest path between hosts s, t under different leaves goes up to level d,
# the first digit where their leaves' words differ, and down: up, digits n-2 .. d are free (k ways
# each), down they are set to t's, one way.  So the k^(n-1-d) paths carry w / k^(n-1-d) each, and
# the arc from level l + 1 up to level l, like the arc from level l down to level l + 1, carries
# w / k^(n-1-l) on each of the k^(n-1-l) arcs used (issue 11: no search per source).

__all__ += ["fattree_up_arcs", "fattree_ecmp_traffic"]


def fattree_up_arcs(indptr, indices, k, n):
    """The CSR arcs of a k-ary n-tree by structure, or None when the CSR is not one.

    Returns
    -------
    up : numpy.ndarray of int64, shape (n k^(n-1), k)
        ``up[l * k^(n-1) + w, j]``: the arc from switch ``<w, l>`` (``l >= 1``) up to the switch of
        level ``l - 1`` whose digit ``l - 1`` is ``j``; row ``w`` of level 0 is -1.
    host_up : numpy.ndarray of int64, shape (k^n,)
        The arc from each host to its leaf switch.
    """
    k, n = int(k), int(n)
    H, S = k ** n, k ** (n - 1)
    indptr = np.asarray(indptr, np.int64)
    indices = np.asarray(indices, np.int64)
    if indptr.size != H + n * S + 1 or indices.size != 2 * (H + (n - 1) * S * k):
        return None
    src = np.repeat(np.arange(H + n * S, dtype=np.int64), np.diff(indptr))
    # hosts: one arc each, to their leaf
    if not np.array_equal(np.diff(indptr[:H + 1]), np.ones(H, np.int64)):
        return None
    host_up = indptr[:H].copy()
    if not np.array_equal(indices[host_up], H + (n - 1) * S + np.arange(H) // k):
        return None
    up = np.full((n * S, k), -1, np.int64)
    a = np.flatnonzero((src >= H) & (indices >= H))
    cl, cw = (src[a] - H) // S, (src[a] - H) % S
    pl, pw = (indices[a] - H) // S, (indices[a] - H) % S
    a, cl, cw, pl, pw = a[pl == cl - 1], cl[pl == cl - 1], cw[pl == cl - 1], pl[pl == cl - 1], pw[pl == cl - 1]
    if a.size != (n - 1) * S * k:
        return None
    place = k ** (n - 2 - pl)
    j = (pw // place) % k
    if not np.array_equal(pw - j * place, cw - ((cw // place) % k) * place):  # words differ only in digit l
        return None
    up[cl * S + cw, j] = a
    if (up[S:] < 0).any():
        return None
    return up, host_up


@njit(cache=True)
def _fattree_gather(src, dst, wf, wr, k, n, host_up, arc_reverse, traffic, up_w, down_w):
    """Host links of every demand into ``traffic``; the rest summed per (source leaf, digit) in
    ``up_w`` and per (target leaf, digit) in ``down_w``: the switch-level loads of a demand depend only
    on its source leaf (up), its target leaf (down) and the first digit ``d`` where they differ."""
    S = k ** (n - 1)
    for e in range(src.size):
        for side in range(2):
            s, t, w = (src[e], dst[e], wf[e]) if side == 0 else (dst[e], src[e], wr[e])
            if s == t or w == 0.0:
                continue
            traffic[host_up[s]] += w
            traffic[arc_reverse[host_up[t]]] += w
            ws = s // k
            wt = t // k
            if ws == wt:
                continue
            d = 0
            place = S // k
            while (ws // place) % k == (wt // place) % k:
                d += 1
                place //= k
            up_w[ws, d] += w
            down_w[wt, d] += w


@njit(cache=True)
def _fattree_spread(leaf, d, w_up, w_down, k, n, up, arc_reverse, traffic):
    """Switch-level ECMP loads of the demands summed in ``w_up`` (from leaf ``leaf``) and ``w_down``
    (into it) whose leaves first differ in digit ``d``: up from level ``l + 1`` to ``l`` for
    ``l = n-2 .. d``, split evenly over the switches that keep the leaf's digits ``0..l``; down
    symmetrically, the arc at level ``l`` setting digit ``l`` to the target's."""
    S = k ** (n - 1)
    if w_up != 0.0:
        span = 1
        for l in range(n - 2, d - 1, -1):
            f = w_up / (span * k)
            base = (leaf // span) * span
            row0 = (l + 1) * S
            for x in range(span):
                r = row0 + base + x
                for j in range(k):
                    traffic[up[r, j]] += f
            span *= k
    if w_down != 0.0:
        span = S
        for _ in range(d):
            span //= k
        for l in range(d, n - 1):
            f = w_down / span
            place = span // k  # of digit l
            tl = (leaf // place) % k
            base = (leaf // span) * span
            row0 = (l + 1) * S
            for x in range(span):
                p = base + x
                pl = (p // place) % k
                child = p + (tl - pl) * place
                traffic[arc_reverse[up[row0 + child, pl]]] += f
            span //= k


@njit(cache=True, parallel=True)
def _fattree_chunks(up_w, down_w, k, n, up, arc_reverse, parts, nchunks):
    S = up_w.shape[0]
    for c in numba.prange(nchunks):
        for leaf in range(c * S // nchunks, (c + 1) * S // nchunks):
            for d in range(n - 1):
                _fattree_spread(leaf, d, up_w[leaf, d], down_w[leaf, d], k, n, up, arc_reverse, parts[c])
    return parts


def fattree_ecmp_traffic(arcs, arc_reverse, k, n, src, dst, wf, wr, n_arcs):
    """ECMP traffic per arc of the demands ``src[e] -> dst[e]`` (weight ``wf[e]``) and back
    (``wr[e]``) between hosts of a k-ary n-tree, in closed form (no search).

    ``arcs`` is :func:`fattree_up_arcs`'s result.  The switch-level loads of a demand depend only on
    its source leaf, its target leaf and the first digit ``d`` where they differ, so the demands are
    first summed per (leaf, ``d``) (``O(1)`` each), then each sum is spread over the arcs its paths
    use (``O(k^(n-1-d))``): work ``O(demands + leaves x n x k^(n-1))``, whatever the placement;
    memory ``O(threads x arcs)``.
    Equal to :func:`ecmp_traffic` up to float rounding (exactly when ``k`` is a power of two).

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t = ltm.fattree(2, 2)
    >>> arcs = fattree_up_arcs(t.indptr, t.indices, 2, 2)
    >>> tr = fattree_ecmp_traffic(arcs, t.arc_reverse, 2, 2, [0], [3], [1.0], [0.0], t.n_arcs)
    >>> sorted(tr[tr > 0].tolist())
    [0.5, 0.5, 0.5, 0.5, 1.0, 1.0]
    """
    up, host_up = arcs
    k, n = int(k), int(n)
    src = np.ascontiguousarray(src, np.int64)
    dst = np.ascontiguousarray(dst, np.int64)
    wf = np.ascontiguousarray(wf, np.float64)
    wr = np.ascontiguousarray(wr, np.float64)
    arc_reverse = np.ascontiguousarray(arc_reverse, np.int64)
    traffic = np.zeros(n_arcs, np.float64)
    if not src.size:
        return traffic
    S = k ** (n - 1)
    up_w = np.zeros((S, max(n - 1, 1)), np.float64)
    down_w = np.zeros_like(up_w)
    _fattree_gather(src, dst, wf, wr, k, n, host_up, arc_reverse, traffic, up_w, down_w)
    if n < 2:
        return traffic
    nchunks = int(max(1, min(S, numba.get_num_threads())))
    parts = np.zeros((nchunks, n_arcs), np.float64)
    _fattree_chunks(up_w, down_w, k, n, up, arc_reverse, parts, nchunks)
    return traffic + parts.sum(axis=0)
