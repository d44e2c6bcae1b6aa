"""Compiled inner loops (numba) shared by metrics and mappers.

Per-source shortest-path counting is a graph traversal whose work per source is proportional to the
part of the network it reaches; numpy cannot express the early exit, so these loops are compiled.
Measured on a 16x16x16 torus with a 7-point stencil: see ``benchmarks/bench_core.py``.
"""

import heapq

import numba
import numpy as np
from numba import njit

__all__ = ["ecmp_traffic", "alg3_traffic", "multi_source_bfs_counts", "bfs_distance_rows", "alg3_levels"]


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
        dist[s] = 0
        sigma[s] = 1.0
        order[0] = s
        head = 0
        tail = 1
        level_end = 1
        level = 0
        while head < tail:
            # expand one whole level so sigma is complete for the next one
            while head < level_end:
                v = order[head]
                head += 1
                dv = dist[v]
                for a in range(indptr[v], indptr[v + 1]):
                    w = indices[a]
                    if dist[w] < 0:
                        dist[w] = dv + 1
                        order[tail] = w
                        tail += 1
                        if is_target[w]:
                            remaining -= 1
                    if dist[w] == dv + 1:
                        sigma[w] += sigma[v]
            level += 1
            level_end = tail
            if remaining == 0:
                break
        if remaining > 0:
            # unreachable target: flag with NaN so the caller raises
            traffic[0] = np.nan
        # back-propagate flow from the deepest discovered vertices
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
                    traffic[arc_reverse[a]] += f
                    flow[v] += f
        for j in range(tail):
            w = order[j]
            dist[w] = -1
            sigma[w] = 0.0
            flow[w] = 0.0
            is_target[w] = False
        flow[s] = 0.0
    return traffic


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
        if not done[t]:
            rho[0] = np.nan
        else:
            x = t
            while x != s:
                a = pred_arc[x]
                rho[a] += ew[e] / arc_capacity[a]
                x = arc_source[a]
        for j in range(ntouched):
            v = touched[j]
            dist[v] = np.inf
            pred_arc[v] = -1
            done[v] = False
    return rho - omega_hat


@njit(cache=True)
def multi_source_bfs_counts(indptr, indices, n, s):
    """Distances and shortest-path counts from one source (used by routing tests and plots)."""
    dist = np.full(n, -1, dtype=np.int64)
    sigma = np.zeros(n, dtype=np.float64)
    order = np.empty(n, dtype=np.int64)
    dist[s] = 0
    sigma[s] = 1.0
    order[0] = s
    head, tail = 0, 1
    while head < tail:
        v = order[head]
        head += 1
        for a in range(indptr[v], indptr[v + 1]):
            w = indices[a]
            if dist[w] < 0:
                dist[w] = dist[v] + 1
                order[tail] = w
                tail += 1
            if dist[w] == dist[v] + 1:
                sigma[w] += sigma[v]
    return dist, sigma


def bfs_distance_rows(indptr, indices, n, sources, column, out):
    """Unweighted BFS from every ``sources[i]``, writing ``out[i, column[v]] = hops(sources[i], v)``
    for each reached vertex ``v`` with ``column[v] >= 0``; unreached entries keep their value.
    Returns ``out``.  Parallel over sources (numba threads)."""
    nchunks = min(sources.size, 4 * numba.get_num_threads())
    if nchunks:
        _bfs_rows(indptr, indices, n, sources, column, out, nchunks)
    return out


@njit(cache=True, parallel=True)
def _bfs_rows(indptr, indices, n, sources, column, out, nchunks):
    """Unweighted BFS from every ``sources[i]``, writing ``out[i, column[v]] = hops(sources[i], v)``
    for each reached vertex ``v`` with ``column[v] >= 0``; unreached entries keep their value.

    Sources are split into contiguous chunks run in parallel; each chunk reuses one queue and a
    visit-stamp array, so nothing is cleared between sources and no float64 distance matrix is
    ever formed (what dominates ``scipy.sparse.csgraph.shortest_path`` on large tori).
    """
    ns = sources.size
    for c in numba.prange(nchunks):
        lo = c * ns // nchunks
        hi = (c + 1) * ns // nchunks
        stamp = np.full(n, -1, dtype=np.int64)
        queue = np.empty(n, dtype=np.int32)
        for i in range(lo, hi):
            s = sources[i]
            stamp[s] = i
            queue[0] = s
            if column[s] >= 0:
                out[i, column[s]] = 0
            head = 0
            tail = 1
            level = 0
            while head < tail:
                level_end = tail
                level += 1
                while head < level_end:
                    v = queue[head]
                    head += 1
                    for a in range(indptr[v], indptr[v + 1]):
                        w = indices[a]
                        if stamp[w] != i:
                            stamp[w] = i
                            queue[tail] = w
                            tail += 1
                            cw = column[w]
                            if cw >= 0:
                                out[i, cw] = level
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
        if not found:
            load[0] = np.nan
        else:
            x = t
            while x != s:
                a = pred_arc[x]
                load[a] += ew[e] / arc_capacity[a]
                x = arc_source[a]
        for j in range(tail):
            v = order[j]
            dist[v] = -1
            pred_arc[v] = -1
    return load
