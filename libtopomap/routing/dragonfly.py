"""``minimal`` and ``valiant``: dragonfly routing (Dorier et al., CLUSTER 2016, section II-A.2).

``minimal``: terminal link, at most one local hop to the gate router, one global link, at most one
local hop, terminal link (the gate choice of :meth:`libtopomap.collectives.Dragonfly.route`); its hops
can exceed the hop distance.  ``valiant``: across groups, through an intermediate group drawn uniformly
among the ``g - 2`` others (two global links); loads and hops are expected values over that group.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .._jit import njit
from ..generators.dragonfly import dragonfly_queries
from ._common import find_arc, leaves, no_log, put, strip_leaves
from ._models import Model

__all__ = ["gate", "dragonfly_route", "dragonfly_walk", "valiant_sums", "valiant_tables", "valiant_total",
           "MINIMAL", "VALIANT"]


def _context(name, topology):
    return dragonfly_queries(topology)


@njit(cache=True, inline="always")
def gate(near, far, gs, gd, rs, rd):
    """Global link of the minimal route from router ``rs`` (group ``gs``) to router ``rd`` (group
    ``gd``; ``rd = -1``: only the local hop at the source counts): fewest local hops, first link on
    ties (the links are sorted by near then far router)."""
    best, bu, bv = 4, -1, -1
    for k in range(near.shape[2]):
        u = near[gs, gd, k]
        if u < 0:
            break
        v = far[gs, gd, k]
        c = (1 if u != rs else 0) + (1 if (rd >= 0 and v != rd) else 0)
        if c < best:
            best, bu, bv = c, u, v
    return bu, bv


@njit(cache=True, inline="always")
def _charge(indptr, indices, rv, ru, rw, f, traffic, log_arc, log_val, log_n):
    """Charge ``f`` on the link between router ids ``ru`` and ``rw``; returns 1 (a hop) or 0 when equal."""
    if ru == rw:
        return 0
    a = find_arc(indptr, indices, rv[ru], rv[rw])
    put(traffic, a, f, log_arc, log_val, log_n)
    return 1


@njit(cache=True)
def dragonfly_route(indptr, indices, rv, near, far, a, g, valiant, rs, rd, w, traffic, log_arc, log_val, log_n):
    """Minimal or (expected) Valiant route between router ids ``rs`` and ``rd``; its (expected) hops."""
    gs, gd = rs // a, rd // a
    if gs == gd:
        return float(_charge(indptr, indices, rv, rs, rd, w, traffic, log_arc, log_val, log_n))
    if not valiant or g <= 2:
        u, v = gate(near, far, gs, gd, rs, rd)
        h = _charge(indptr, indices, rv, rs, u, w, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, u, v, w, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, v, rd, w, traffic, log_arc, log_val, log_n)
        return float(h)
    f = w / (g - 2)
    total = 0
    for gi in range(g):
        if gi == gs or gi == gd:
            continue
        u, v = gate(near, far, gs, gi, rs, -1)
        h = _charge(indptr, indices, rv, rs, u, f, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, u, v, f, traffic, log_arc, log_val, log_n)
        u2, v2 = gate(near, far, gi, gd, v, rd)
        h += _charge(indptr, indices, rv, v, u2, f, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, u2, v2, f, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, v2, rd, f, traffic, log_arc, log_val, log_n)
        total += h
    return total / (g - 2)


@njit(cache=True)
def dragonfly_walk(indptr, indices, rid, rv, near, far, a, g, valiant, s, t, w, traffic, hops):
    """Minimal or (expected) Valiant routes between routers (terminal links already charged)."""
    log_arc, log_val, log_n = no_log()
    for i in range(s.size):
        hops[i] = dragonfly_route(indptr, indices, rv, near, far, a, g, valiant, rid[s[i]], rid[t[i]], w[i], traffic,
                                  log_arc, log_val, log_n)


@njit(cache=True, parallel=True)
def _dragonfly_chunks(indptr, indices, rid, rv, near, far, a, g, valiant, s, t, w, parts, hops):
    nchunks = parts.shape[0]
    for c in prange(nchunks):
        lo = c * s.size // nchunks
        hi = (c + 1) * s.size // nchunks
        dragonfly_walk(indptr, indices, rid, rv, near, far, a, g, valiant, s[lo:hi], t[lo:hi], w[lo:hi], parts[c],
                       hops[lo:hi])


@njit(cache=True)
def valiant_sums(indptr, indices, rid, rv, near, far, a, g, s, t, w, traffic, hops):
    """Expected Valiant loads and hops of every demand with one global link per pair of groups
    (``near[G, H, 0]``, ``far[G, H, 0]``), from sums instead of ``g - 2`` routes per demand.

    With ``N = near``, ``F = far`` and ``G[gs, gd]`` the volume between groups, every route via ``I``
    is ``rs -> N[gs,I] -> F[gs,I] -> N[I,gd] -> F[I,gd] -> rd``; each of its five links depends on
    fewer indices than the route, so the load of a link is a sum over those only (``c`` counts the
    groups whose gate is a given router; the demands' own group ``I = gd`` / ``I = gs`` is taken off
    per demand):

    * local ``rs -> x``: ``(out[rs] c[gs, x] - S[rs, x]) / (g - 2)``, ``S[rs, x]`` the volume of the
      demands from ``rs`` whose gate towards their destination group is ``x``;
    * global ``gs -> I``: ``(sum_H G[gs, H] - G[gs, I]) / (g - 2)``, and ``I -> gd`` alike;
    * local ``F[gs,I] -> N[I,gd]`` inside ``I``: ``sum G[gs, gd] / (g - 2)`` over the pairs of groups
      landing on ``F[gs,I]`` and leaving from ``N[I,gd]`` (``O(g^3)`` additions, ``O(a^2)`` memory);
    * local ``x -> rd``: as the first, mirrored.

    Work ``O(demands + g^3 + g a^2)``, memory ``O(g a^2 + g^2)`` (the walk: ``O(demands x g)``).  Hops:
    integer counts of the same sums, divided by ``g - 2`` as the walk does (bit-identical)."""
    R = g * a
    log_arc, log_val, log_n = no_log()
    wout = np.zeros(R)
    win = np.zeros(R)
    sx = np.zeros((R, a))
    sy = np.zeros((R, a))
    G = np.zeros((g, g))
    for i in range(s.size):
        rs, rd = rid[s[i]], rid[t[i]]
        gs, gd = rs // a, rd // a
        if gs == gd:
            hops[i] = _charge(indptr, indices, rv, rs, rd, w[i], traffic, log_arc, log_val, log_n)
            continue
        wout[rs] += w[i]
        win[rd] += w[i]
        sx[rs, near[gs, gd, 0] - gs * a] += w[i]
        sy[rd, far[gs, gd, 0] - gd * a] += w[i]
        G[gs, gd] += w[i]
    cn, cf, mid = valiant_tables(near, far, a, g)
    d = g - 2
    for r in range(R):  # first and last local hops
        gr = r // a
        for x in range(a):
            u = gr * a + x
            if u == r:
                continue
            if wout[r] != 0.0:
                _charge(indptr, indices, rv, r, u, (wout[r] * cn[gr, x] - sx[r, x]) / d, traffic, log_arc, log_val,
                        log_n)
            if win[r] != 0.0:
                _charge(indptr, indices, rv, u, r, (win[r] * cf[gr, x] - sy[r, x]) / d, traffic, log_arc, log_val,
                        log_n)
    gout = np.zeros(g)
    gin = np.zeros(g)
    for g1 in range(g):
        for g2 in range(g):
            gout[g1] += G[g1, g2]
            gin[g2] += G[g1, g2]
    for g1 in range(g):  # global links g1 -> g2: first leg (from g1 via g2) and second leg (via g1 to g2)
        for g2 in range(g):
            if g1 != g2:
                f = (gout[g1] - G[g1, g2]) / d + (gin[g2] - G[g1, g2]) / d
                if f != 0.0:
                    _charge(indptr, indices, rv, near[g1, g2, 0], far[g1, g2, 0], f, traffic, log_arc, log_val,
                            log_n)
    m = np.zeros((a, a))
    for I in range(g):  # noqa: E741 (local hop inside the intermediate group I)
        m[:, :] = 0.0
        for gs in range(g):
            if gs == I or gout[gs] == 0.0:
                continue
            x = far[gs, I, 0] - I * a
            for gd in range(g):
                if gd != I and gd != gs:
                    m[x, near[I, gd, 0] - I * a] += G[gs, gd]
        for x in range(a):
            for y in range(a):
                if x != y and m[x, y] != 0.0:
                    _charge(indptr, indices, rv, I * a + x, I * a + y, m[x, y] / d, traffic, log_arc, log_val, log_n)
    for i in range(s.size):  # hops: 2 global links + the local ones, summed over I as integers
        rs, rd = rid[s[i]], rid[t[i]]
        gs, gd = rs // a, rd // a
        if gs == gd:
            continue
        hops[i] = valiant_total(near, far, a, g, cn, cf, mid, rs, rd) / d


@njit(cache=True)
def valiant_tables(near, far, a, g):
    """``(cn, cf, mid)`` of Valiant routing with one global link per pair of groups: ``cn[G, x]`` the
    groups ``I != G`` whose gate from ``G`` is router ``x`` of ``G``, ``cf[H, x]`` the groups ``I !=
    H`` whose link into ``H`` lands on router ``x`` of ``H``, ``mid[gs, gd]`` the intermediate groups
    ``I`` whose route from ``gs`` to ``gd`` takes a local hop inside ``I``.  ``O(g^3)`` work,
    ``O(g^2 + g a)`` memory."""
    cn = np.zeros((g, a), np.int64)
    cf = np.zeros((g, a), np.int64)
    for g1 in range(g):
        for g2 in range(g):
            if g1 != g2:
                cn[g1, near[g1, g2, 0] - g1 * a] += 1
                cf[g2, far[g1, g2, 0] - g2 * a] += 1
    mid = np.zeros((g, g), np.int64)
    for gs in range(g):
        for I in range(g):  # noqa: E741 (group I, as in the docstring)
            if I != gs:
                x = far[gs, I, 0]
                for gd in range(g):
                    if gd != I and gd != gs and x != near[I, gd, 0]:
                        mid[gs, gd] += 1
    return cn, cf, mid


@njit(cache=True, inline="always")
def valiant_total(near, far, a, g, cn, cf, mid, rs, rd):
    """Links of the Valiant routes from router ``rs`` to ``rd`` (different groups, one global link per
    pair of groups) summed over the ``g - 2`` intermediate groups, from :func:`valiant_tables`:
    2 global links each, the local hops inside the intermediate groups (``mid``), and a first (last)
    local hop for every ``I`` whose gate (landing router) is not ``rs`` (``rd``)."""
    gs, gd = rs // a, rd // a
    total = 2 * (g - 2) + mid[gs, gd]
    total += (g - 1) - cn[gs, rs - gs * a] - (1 if near[gs, gd, 0] != rs else 0)
    total += (g - 1) - cf[gd, rd - gd * a] - (1 if far[gs, gd, 0] != rd else 0)
    return total


def _dragonfly_call(topology, q, valiant, s, t, w, traffic, hops):
    """Minimal or Valiant walks; Valiant (``O(g)`` routes per demand) from sums (:func:`valiant_sums`)
    with one global link per pair of groups, else in parallel chunks of demands, one load array per
    thread."""
    if valiant and q.groups > 2 and q.links_per_pair == 1:
        valiant_sums(topology.indptr, topology.indices, q.router_ids, q.router_vertices, q.gate_router,
                     q.landing_router, q.routers, q.groups, s, t, w, traffic, hops)
        return
    args = (topology.indptr, topology.indices, q.router_ids, q.router_vertices, q.gate_router, q.landing_router,
            q.routers, q.groups, valiant, s, t, w)
    nchunks = min(numba.get_num_threads(), s.size // 1024) if valiant and q.groups > 2 else 1
    if nchunks <= 1:
        dragonfly_walk(*args, traffic, hops)
        return
    parts = np.zeros((nchunks, traffic.size))
    _dragonfly_chunks(*args, parts, hops)
    traffic += parts.sum(axis=0)


def _traffic(topology, name, ctx, s, t, w):
    traffic = np.zeros(topology.n_arcs)
    s, t, w = strip_leaves(topology, s, t, w, traffic)
    if s.size == 0:
        return traffic
    _dragonfly_call(topology, ctx, name == "valiant", s, t, w, traffic, np.zeros(s.size))
    return traffic


def _hops(topology, name, ctx, s, t):
    att, off = leaves(topology)
    out = np.where(s != t, off[s] + off[t], 0).astype(np.float64)
    cs, ct = att[s].astype(np.int64), att[t].astype(np.int64)
    core = cs != ct
    hops = np.zeros(int(core.sum()))
    scratch = np.zeros(topology.n_arcs)
    _dragonfly_call(topology, ctx, name == "valiant", cs[core], ct[core], np.zeros(hops.size), scratch, hops)
    out[core] += hops
    if name == "valiant":
        return out
    return np.rint(out).astype(np.int64)


#: The ``minimal`` model.
MINIMAL = Model("minimal", _traffic, context=_context, hops=_hops, shortest=False)
#: The ``valiant`` model (expected loads and hops over the intermediate group).
VALIANT = Model("valiant", _traffic, context=_context, hops=_hops, shortest=False)
