"""Per-mode kernels of the local-search engine (:mod:`libtopomap.mappers.local_search`).

The exact ECMP (or routing model) traffic of a whole mapping and the running congestion statistics
of the ``ecmp`` mode, and the deterministic routes and their per-step loads of the ``paths`` mode;
the compiled walk calls them for the delta of a move and its undo.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .._kernels.ecmp import ecmp_traffic_parallel
from .._kernels.fattree_ecmp import fattree_ecmp_traffic
from .._kernels.oracle import KIND_SEARCH, KIND_TABLE, new_search_scratch
from .._kernels.ecmp import ecmp_pair_flows
from ..distances import hop_distance, next_arc
from ..routing import ecmp_vertex_traffic, get_routing, route_traffic
from .._jit import njit

__all__ = ["full_traffic", "congestion_stats", "congestion_update", "route_messages", "paths_init", "move_messages"]


# ----------------------------------------------------------------------------- congestion (mode 1)
@njit(cache=True, parallel=True)
def _edge_traffic_pruned(indptr, indices, arc_reverse, meta, packed, table, g_ptr, g_idx, g_wout, g_win, proc_vertex,
                         parts, nchunks):
    """Traffic of every edge (each undirected pair once) by pruned single-pair searches, parallel over
    chunks of processes with one traffic array per chunk.  Work: edges x shortest-path region."""
    P = g_ptr.size - 1
    n = indptr.size - 1
    for c in prange(nchunks):
        lo = c * P // nchunks
        hi = (c + 1) * P // nchunks
        m = 0
        for u in range(lo, hi):
            for k in range(g_ptr[u], g_ptr[u + 1]):
                if g_idx[k] > u:
                    m += 1
        es = np.empty(m, np.int64)
        et = np.empty(m, np.int64)
        ewf = np.empty(m)
        ewr = np.empty(m)
        m = 0
        for u in range(lo, hi):
            for k in range(g_ptr[u], g_ptr[u + 1]):
                x = g_idx[k]
                if x > u:
                    es[m] = proc_vertex[u]
                    et[m] = proc_vertex[x]
                    ewf[m] = g_wout[k]
                    ewr[m] = g_win[k]
                    m += 1
        ecmp_pair_flows(m, es, et, ewf, ewr, 1.0, indptr, indices, arc_reverse, meta, packed, table, True, parts[c],
                        np.full(n, -1, np.int64), np.zeros(n), np.zeros(n), np.empty(n, np.int64),
                        np.empty(0, np.int64), np.empty(0), np.zeros(2, np.int64))
    return parts


#: Arcs one pruned single-pair search visits, counted low (about 1,000 on dragonfly(17, 8, 8, 2)): the
#: per-source searches replace the per-edge ones only where they are clearly cheaper, so sparse graphs
#: keep the per-edge searches (and the exact sums of their traffic) they always had.
PAIR_SEARCH_ARCS = 16


def _per_source_cheaper(oracle, sym, vert):
    """Whether one search per source (``S x A``: the distinct switches and other non-leaf vertices the
    processes sit on or under, times the arcs) costs less than the pruned per-edge searches
    (``PAIR_SEARCH_ARCS`` per undirected edge).  At 1,000 processes of mean degree 355 on
    dragonfly(17, 8, 8, 2): 125 x 3,400 against 16 x 177,575; the traffic of a mapping takes
    0.04-0.06 s of CPU instead of 0.22."""
    edges = sym.indices.size // 2
    if vert.size == 0:
        return False
    att, off = oracle.attachments()
    sources = np.count_nonzero(np.bincount(np.where(off[vert] == 1, att[vert], vert), minlength=att.size))
    return sources * oracle.n_arcs < PAIR_SEARCH_ARCS * edges


def full_traffic(topology, sym, proc_vertex, oracle=None, *, routing=None):
    """Traffic per arc of a whole mapping under ``routing`` (default ECMP), by the cheapest exact method.

    A model other than ``ecmp`` goes to :func:`libtopomap.routing.route_traffic` (every directed
    volume of the graph as one demand).  For ECMP:

    On a fat tree from :func:`libtopomap.fattree` with every process on a host, in closed form
    (:func:`libtopomap._kernels.fattree_ecmp.fattree_ecmp_traffic`: all shortest paths go up to the level of the
    leaves' lowest common ancestors and down).  Else, with an oracle that answers every vertex, one
    pruned single-pair search per edge (work proportional to the edges' shortest-path regions)
    unless the graph is so dense that one search per source switch is far cheaper
    (:func:`_per_source_cheaper`); otherwise one breadth-first search per source vertex with
    Brandes accumulation (:func:`libtopomap._kernels.ecmp.ecmp_traffic_parallel`).
    """
    r = get_routing(routing, topology)
    if r.name != "ecmp":
        vert = np.asarray(proc_vertex, np.int64)
        rows = np.repeat(np.arange(sym.n, dtype=np.int64), np.diff(sym.indptr))
        return route_traffic(topology, vert[rows], vert[sym.indices], sym.wout, routing=r)
    oracle = topology.distances if oracle is None else oracle
    t = topology
    ft = oracle.fattree_arcs()  # a generated fat tree, checked against its CSR: loads in closed form
    vert = np.asarray(proc_vertex, np.int64)
    if ft is not None and (vert.size == 0 or int(vert.max()) < ft[2][1].size):
        k, n, ft = ft
        ptr, idx = sym.indptr, sym.indices
        u = np.repeat(np.arange(sym.n, dtype=np.int64), np.diff(ptr))
        once = idx > u  # each undirected pair once, as the pruned searches take them
        return fattree_ecmp_traffic(ft, t.arc_reverse, k, n, vert[u[once]],
                                             vert[idx[once]], sym.wout[once], sym.win[once], t.n_arcs)
    if oracle.covers_all and not _per_source_cheaper(oracle, sym, vert):
        nchunks = max(1, min(numba.get_num_threads(), sym.n))
        parts = np.zeros((nchunks, t.n_arcs))
        meta, packed, table = oracle.fast_arrays
        _edge_traffic_pruned(t.indptr, t.indices, t.arc_reverse, meta, packed, table, sym.indptr, sym.indices,
                             sym.wout, sym.win, np.asarray(proc_vertex, np.int64), parts, nchunks)
        return parts.sum(axis=0)
    if oracle.covers_all:  # a dense graph: its demands meet on few pairs of switches
        rows = np.repeat(np.arange(sym.n, dtype=np.int64), np.diff(sym.indptr))
        return ecmp_vertex_traffic(t, vert[rows], vert[sym.indices], sym.wout)
    g = sym.graph
    s = vert[g.src]
    d = vert[g.dst]
    keep = s != d
    s, d, w = s[keep], d[keep], g.weights[keep]
    order = np.lexsort((d, s))
    s, d, w = s[order], d[order], w[order]
    sources, start = np.unique(s, return_index=True)
    ptr = np.append(start, s.size).astype(np.int64)
    return ecmp_traffic_parallel(t.indptr, t.indices, t.arc_reverse, t.n_vertices, sources.astype(np.int64),
                                          ptr, d, w)


@njit(cache=True)
def congestion_stats(traffic, inv_cap):
    mx = 0.0
    sq = 0.0
    for a in range(traffic.size):
        c = traffic[a] * inv_cap[a]
        if c > mx:
            mx = c
        sq += c * c
    return mx, sq


@njit(cache=True)
def congestion_update(traffic, inv_cap, log_arc, log_val, log_n, mark, acc, stamp, mx_old, sq_old):
    """(max, sum of squares) after the logged changes, from the changed arcs alone unless an arc at
    the old maximum dropped (then one full rescan)."""
    if log_n[1] != 0:
        return congestion_stats(traffic, inv_cap)
    for i in range(log_n[0]):
        a = log_arc[i]
        if mark[a] != stamp:
            mark[a] = stamp
            acc[a] = 0.0
        acc[a] += log_val[i]
    mx = mx_old
    sq = sq_old
    rescan = False
    lim = mx_old * (1.0 - 1e-12)
    for i in range(log_n[0]):
        a = log_arc[i]
        if mark[a] != stamp:
            continue
        mark[a] = stamp + 1
        new = traffic[a] * inv_cap[a]
        old = (traffic[a] - acc[a]) * inv_cap[a]
        sq += new * new - old * old
        if new > mx:
            mx = new
        if old >= lim and new < old:
            rescan = True
    if rescan:
        mx = 0.0
        for a in range(traffic.size):
            c = traffic[a] * inv_cap[a]
            if c > mx:
                mx = c
    return mx, max(sq, 0.0)


# ----------------------------------------------------------------------------- path routes (mode 2)
@njit(cache=True)
def _route(sign, sv, tv, st, sw, oracle, scratch, indptr, indices, load, hist, smax, pobj, big):
    """Add (sign > 0) or remove the deterministic route from vertex sv to tv at step st; returns the
    change of the objective (1: contention; 2: ``big * step model + contention``).  The next hop is
    the lowest-index neighbour one hop closer to tv, found with oracle distances."""
    v = sv
    dv = hop_distance(oracle, v, tv, scratch)
    delta = 0
    while v != tv:
        a = next_arc(oracle, scratch, indptr, indices, v, tv, dv)
        L = load[st, a]
        if sign > 0:
            load[st, a] = L + 1
            if L >= 1:
                delta += sw
            if pobj == 2:
                hist[st, L] -= 1
                hist[st, L + 1] += 1
                if L + 1 > smax[st]:
                    smax[st] = L + 1
                    delta += sw * big
        else:
            load[st, a] = L - 1
            if L >= 2:
                delta -= sw
            if pobj == 2:
                hist[st, L] -= 1
                hist[st, L - 1] += 1
                if L == smax[st] and hist[st, L] == 0:
                    smax[st] = L - 1
                    delta -= sw * big
        v = indices[a]
        dv -= 1
    return delta


@njit(cache=True)
def route_messages(sign, n, buf, proc_vertex, paths, oracle, scratch, indptr, indices):
    msrc, mdst, mstep, sw, minc_ptr, minc, load, hist, smax, pobj, big = paths
    d = 0
    for i in range(n):
        m = buf[i]
        d += _route(sign, proc_vertex[msrc[m]], proc_vertex[mdst[m]], mstep[m], sw[mstep[m]], oracle, scratch,
                    indptr, indices, load, hist, smax, pobj, big)
    return d


@njit(cache=True)
def paths_init(proc_vertex, paths, oracle, indptr, indices):
    msrc = paths[0]
    buf = np.arange(msrc.size)
    scratch = new_search_scratch(indptr.size - 1 if oracle[0][0] == KIND_SEARCH
                                          or oracle[0][0] == KIND_TABLE else 1)
    return route_messages(1, msrc.size, buf, proc_vertex, paths, oracle, scratch, indptr, indices)


@njit(cache=True)
def move_messages(a, b, paths, buf):
    msrc, mdst, minc_ptr, minc = paths[0], paths[1], paths[4], paths[5]
    n = 0
    for k in range(minc_ptr[a], minc_ptr[a + 1]):
        buf[n] = minc[k]
        n += 1
    if b >= 0:
        for k in range(minc_ptr[b], minc_ptr[b + 1]):
            m = minc[k]
            if msrc[m] != a and mdst[m] != a:
                buf[n] = m
                n += 1
    return n
