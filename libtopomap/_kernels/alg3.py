"""Algorithm 3 of Hoefler & Snir (fast congestion estimate), compiled with numba.

:func:`alg3_levels` is what :func:`libtopomap.congestion_estimate` uses; :func:`alg3_traffic` is the
Dijkstra version of the seed, kept as the reference the tests compare it against.
"""

import heapq

import numpy as np
from .._jit import njit

__all__ = ["alg3_traffic", "alg3_levels"]


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
