"""Greedy graph embedding (Hoefler & Snir, ICS'11, Algorithm 1)."""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

from ._common import finish, prepare
from .objectives import SymGraph

__all__ = ["map_greedy"]


@njit(cache=True)
def _dijkstra_free(anchor, rho, h_ptr, h_idx, free, hdist_ok, window, max_cand, dist, hops, done, touched,
                   cand):
    """Dijkstra from ``anchor`` on arc weights ``rho``; collect vertices with a free slot in order of
    weighted distance, up to ``max_cand`` of them and at most ``window`` hops beyond the first one.
    Returns the number of candidates written to ``cand``."""
    ntouched = 0
    ncand = 0
    first_hops = -1
    dist[anchor] = 0.0
    hops[anchor] = 0
    touched[ntouched] = anchor
    ntouched += 1
    heap = [(0.0, np.int64(anchor))]
    while len(heap) > 0:
        d, v = heapq.heappop(heap)
        if done[v]:
            continue
        done[v] = True
        if first_hops >= 0 and hops[v] > first_hops + window:
            break
        if free[v] > 0:
            if first_hops < 0:
                first_hops = hops[v]
            cand[ncand] = v
            ncand += 1
            if ncand >= max_cand or not hdist_ok:
                break
        for a in range(h_ptr[v], h_ptr[v + 1]):
            w = h_idx[a]
            nd = d + rho[a]
            if nd < dist[w]:
                if dist[w] == np.inf:
                    touched[ntouched] = w
                    ntouched += 1
                dist[w] = nd
                hops[w] = hops[v] + 1
                heapq.heappush(heap, (nd, np.int64(w)))
    for j in range(ntouched):
        v = touched[j]
        dist[v] = np.inf
        done[v] = False
    return ncand


@njit(cache=True)
def _route_loads(src, targets, tw_out, tw_in, ntargets, rho, h_ptr, h_idx, h_src, h_rev, inv_cap, dist, done,
                 touched, pred):
    """One Dijkstra from ``src`` until every target is settled; add ``tw_out[i]/c`` along the path
    to ``targets[i]`` and ``tw_in[i]/c`` along the reverse arcs (Algorithm 1, line 26)."""
    left = 0
    for i in range(ntargets):
        if targets[i] != src:
            left += 1
    if left == 0:
        return
    ntouched = 0
    dist[src] = 0.0
    touched[ntouched] = src
    ntouched += 1
    heap = [(0.0, np.int64(src))]
    # mark targets by a negative counter in pred (restored below)
    while len(heap) > 0 and left > 0:
        d, v = heapq.heappop(heap)
        if done[v]:
            continue
        done[v] = True
        for i in range(ntargets):
            if targets[i] == v and v != src:
                left -= 1
        for a in range(h_ptr[v], h_ptr[v + 1]):
            w = h_idx[a]
            nd = d + rho[a]
            if nd < dist[w]:
                if dist[w] == np.inf:
                    touched[ntouched] = w
                    ntouched += 1
                dist[w] = nd
                pred[w] = a
                heapq.heappush(heap, (nd, np.int64(w)))
    for i in range(ntargets):
        x = targets[i]
        if x == src or not done[x]:
            continue
        while x != src:
            a = pred[x]
            rho[a] += tw_out[i] * inv_cap[a]
            rho[h_rev[a]] += tw_in[i] * inv_cap[a]
            x = h_src[a]
    for j in range(ntouched):
        v = touched[j]
        dist[v] = np.inf
        done[v] = False
        pred[v] = -1


@njit(cache=True)
def _greedy(g_ptr, g_idx, g_wout, g_win, g_wsum, heavy_order, h_ptr, h_idx, h_src, h_rev, inv_cap, free, hpos,
            hdist, hdist_ok, start, omega_hat, window, max_cand, by_connectivity, lookahead):
    P = g_ptr.size - 1
    n = h_ptr.size - 1
    gamma = np.full(P, -1, np.int64)
    rho = np.full(h_idx.size, omega_hat)
    dist = np.full(n, np.inf)
    hops = np.zeros(n, np.int64)
    done = np.zeros(n, np.bool_)
    touched = np.empty(n, np.int64)
    pred = np.full(n, -1, np.int64)
    cand = np.empty(max_cand, np.int64)
    maxdeg = 1
    for u in range(P):
        if g_ptr[u + 1] - g_ptr[u] > maxdeg:
            maxdeg = g_ptr[u + 1] - g_ptr[u]
    targets = np.empty(maxdeg, np.int64)
    tw_out = np.empty(maxdeg)
    tw_in = np.empty(maxdeg)
    s = start
    hp = 0
    placed = 0
    conn = np.zeros(P)
    common = np.zeros(P, np.int64)
    second = np.empty(P, np.int64)
    mark = np.zeros(n, np.bool_)
    heap = [(0.0, np.int64(0), np.int64(0), np.int64(0))]
    heapq.heappop(heap)
    counter = 0
    while placed < P:
        while gamma[heavy_order[hp]] >= 0:
            hp += 1
        first = heavy_order[hp]
        # (negated key, entry counter for FIFO ties, process, anchor process)
        heapq.heappush(heap, (0.0, np.int64(counter), np.int64(first), np.int64(-1)))
        counter += 1
        while len(heap) > 0:
            negw, _c, m, anchor_p = heapq.heappop(heap)
            if gamma[m] >= 0:
                continue
            if by_connectivity and -negw < conn[m]:
                continue  # stale entry: m gained mapped neighbours since
            anchor = s if anchor_p < 0 else gamma[anchor_p]
            ncand = _dijkstra_free(anchor, rho, h_ptr, h_idx, free, hdist_ok, window, max_cand, dist, hops, done,
                                   touched, cand)
            best = cand[0]
            if ncand > 1:
                # among the nearest free vertices, the one closest (in hops, weighted) to all
                # already-mapped neighbours of m; ties go to the one whose common-neighbour counts
                # with the mapped second neighbours of m match those in G (this tells a "straight"
                # from a "turning" continuation on grids), then to the least loaded (earliest) one
                n2 = 0
                if lookahead:
                    for k in range(g_ptr[m], g_ptr[m + 1]):
                        y = g_idx[k]
                        for k2 in range(g_ptr[y], g_ptr[y + 1]):
                            z = g_idx[k2]
                            if z == m or gamma[z] < 0:
                                continue
                            if common[z] == 0:
                                second[n2] = z
                                n2 += 1
                            common[z] += 1
                best_cost = np.inf
                best_cost2 = np.inf
                for c in range(ncand):
                    t = cand[c]
                    cost = 0.0
                    pt = hpos[t]
                    for k in range(g_ptr[m], g_ptr[m + 1]):
                        x = g_idx[k]
                        if gamma[x] >= 0:
                            cost += g_wsum[k] * hdist[pt, hpos[gamma[x]]]
                    if cost > best_cost:
                        continue
                    cost2 = 0.0
                    if n2 > 0:
                        for a in range(h_ptr[t], h_ptr[t + 1]):
                            mark[h_idx[a]] = True
                        for i in range(n2):
                            z = second[i]
                            vz = gamma[z]
                            cn = 0
                            for a in range(h_ptr[vz], h_ptr[vz + 1]):
                                if mark[h_idx[a]]:
                                    cn += 1
                            cost2 += abs(cn - common[z])
                        for a in range(h_ptr[t], h_ptr[t + 1]):
                            mark[h_idx[a]] = False
                    if cost < best_cost or cost2 < best_cost2:
                        best_cost = cost
                        best_cost2 = cost2
                        best = t
                for i in range(n2):
                    common[second[i]] = 0
            gamma[m] = best
            free[best] -= 1
            placed += 1
            s = best
            nt = 0
            for k in range(g_ptr[m], g_ptr[m + 1]):
                x = g_idx[k]
                if gamma[x] >= 0:
                    targets[nt] = gamma[x]
                    tw_out[nt] = g_wout[k]
                    tw_in[nt] = g_win[k]
                    nt += 1
                else:
                    conn[x] += g_wsum[k]
                    key = conn[x] if by_connectivity else g_wsum[k]
                    heapq.heappush(heap, (-key, np.int64(counter), x, np.int64(m)))
                    counter += 1
            _route_loads(best, targets, tw_out, tw_in, nt, rho, h_ptr, h_idx, h_src, h_rev, inv_cap, dist, done,
                         touched, pred)
    return gamma


def map_greedy(topology, graph, *, slots=None, seed=None, start=None, window=1, max_candidates=16,
               order="edge", lookahead=True):
    """Greedy graph embedding (Hoefler & Snir, Algorithm 1) with load-aware shortest paths.

    The heaviest unmapped process goes to the start vertex (or the nearest vertex with a free slot);
    then its heaviest edges are taken from a priority queue, and each neighbour is placed on the
    nearest free vertex, where distance is Dijkstra on arc weights ``rho`` that start at
    ``max(w) * |V_H|^2`` (so fewer hops always win) and grow by ``w / c`` along the path of every
    routed edge (so, among equally short paths, less loaded ones win: link capacities count).

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    slots : array_like of int, optional
        Usable slots per vertex (default ``topology.slots``).
    seed : int, optional
        Picks the start vertex when ``start`` is None.
    start : int or str, optional
        Start vertex (index or name); ranks of the MPI layer use different ones.
    window : int
        Free vertices up to ``window`` hops beyond the nearest are candidates too.
    max_candidates : int
        At most this many candidates; the one with the least weighted hop distance to the
        already-mapped neighbours wins.
    order : {"edge", "connectivity"}
        Queue key: the weight of the edge that brought the process in (Algorithm 1), or its total
        weight to already-mapped processes (most constrained first).  Ties are first in, first out.
    lookahead : bool
        Break distance ties by matching common-neighbour counts (see Notes).

    Returns
    -------
    Mapping

    Notes
    -----
    Refinements of Algorithm 1 within its "nearest free vertex" rule: the search starts at the vertex
    of the neighbour that brought the process into the queue (not the last placed one); among the
    free vertices at the nearest hop distance (plus ``window``) the one closest to *all* mapped
    neighbours is taken; remaining ties go to the candidate ``t`` for which, over the mapped
    second neighbours ``z`` of the process ``m``, the number of common neighbours of ``t`` and
    ``z``'s vertex in H best matches that of ``m`` and ``z`` in G.  On a grid this tells a straight
    continuation (one common neighbour) from a turn (two), which distances alone cannot; with it
    the greedy recovers scrambled 8x8, 16x16, 8x8x8 and 12x12x12 tori exactly from every start
    vertex (total hops = number of links).  Queue ties are first in, first out (a breadth-first
    growth).  Every edge to an already-mapped neighbour adds its load to ``rho`` (line 26 routes
    only the queue edge).

    References
    ----------
    T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for Large-scale Parallel
    Architectures", ICS'11, section 3.1, Algorithm 1.
    """
    topology, g, slots, rng = prepare(topology, graph, slots, seed)
    sym = SymGraph(g)
    free = slots.astype(np.int64).copy()
    usable = np.flatnonzero(free > 0)
    if start is None:
        start_v = int(usable[rng.integers(usable.size)]) if seed is not None else int(usable[0])
    else:
        start_v = topology.index(start) if isinstance(start, str) else int(start)
        if not 0 <= start_v < topology.n_vertices:
            from ..errors import MappingError

            raise MappingError(f"start vertex {start} outside 0..{topology.n_vertices - 1}")
    vweight = np.zeros(g.n)
    np.add.at(vweight, np.repeat(np.arange(g.n), np.diff(sym.indptr)), sym.wsum)
    heavy_order = np.lexsort((np.arange(g.n), -vweight)).astype(np.int64)
    wmax = float(sym.wsum.max()) if sym.wsum.size else 1.0
    omega_hat = max(wmax, 1.0) * float(topology.n_vertices) ** 2
    hdist_ok = topology.hosts.size <= 20000
    hdist = topology.host_distances if hdist_ok else np.zeros((1, 1), np.uint8)
    gamma = _greedy(sym.indptr, sym.indices, sym.wout, sym.win, sym.wsum, heavy_order,
                    topology.indptr, topology.indices.astype(np.int64), topology.arc_source.astype(np.int64),
                    topology.arc_reverse, 1.0 / topology.arc_capacity, free, topology.host_position.astype(np.int64),
                    hdist, hdist_ok, start_v, omega_hat, int(window), int(max_candidates),
                    order == "connectivity", bool(lookahead))
    return finish(topology, gamma, slots, "greedy")
