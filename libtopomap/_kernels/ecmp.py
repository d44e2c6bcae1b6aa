"""ECMP link loads by search: Brandes path counting from each source, compiled with numba.

:func:`ecmp_traffic` (threaded: :func:`ecmp_traffic_parallel`) serves many targets per source;
:func:`ecmp_pair_flows` one target per pair, for the local-search engine.
"""

import numba
import numpy as np
from .._jit import njit
from .oracle import grid3_dims, grid3_hops, grid3_target, hop_distance

__all__ = ["ecmp_traffic", "ecmp_traffic_parallel", "ecmp_pair_flows", "sigma_search", "sigma_reset"]


# Both ECMP kernels search level by level from a source, counting shortest paths (sigma), and push
# the flow at the targets back towards the source in proportion to the path counts (Brandes).
# :func:`ecmp_traffic` serves many targets per source; :func:`ecmp_pair_flows` one target per pair,
# optionally pruned to the vertices on shortest paths by oracle distances (the local-search engine).

@njit(cache=True, inline="always")
def sigma_search(indptr, indices, s, order, dist, sigma, is_target, remaining, prune, oracle, t, dst_t, g3, tg):
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
def sigma_reset(order, tail, dist, sigma, flow):
    """Clear what a path-counting search (:func:`sigma_search`) set (``order[:tail]``)."""
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
    # no pruning: placeholders for the oracle arguments of sigma_search
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
        tail, remaining = sigma_search(indptr, indices, s, order, dist, sigma, is_target, remaining, False, no_oracle,
                                        z, z, no_grid3, (z, z, z, z))
        if remaining > 0:
            # unreachable target: flag with NaN so the caller raises
            traffic[0] = np.nan
        # back-propagate flow from the deepest discovered vertices
        _push_back(indptr, indices, arc_reverse, order, tail, dist, sigma, flow, traffic, False, 1.0, 0.0, no_log,
                   sigma[:0], no_log)
        for j in range(tail):
            is_target[order[j]] = False
        sigma_reset(order, tail, dist, sigma, flow)
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
        tail, missed = sigma_search(indptr, indices, s, order, dist, sigma, no_targets, 1, prune, oracle, t, dst_t,
                                     g3, tg)
        if missed == 0:
            flow[t] = 1.0
            _push_back(indptr, indices, arc_reverse, order, tail, dist, sigma, flow, traffic, True, wf, wr, log_arc,
                       log_val, log_n)
        else:
            ok = False
        sigma_reset(order, tail, dist, sigma, flow)
    return ok



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
