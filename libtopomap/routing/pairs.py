"""Per-pair kernels of the local-search engine: one demand at a time, every load change logged.

:func:`pair_context` packs what a model needs of a topology into one tuple type (the engine compiles
once); :func:`pair_flows` routes pairs of demands under it, :func:`pair_hops` counts the hops of a pair
under dragonfly ``minimal`` or ``valiant`` in ``O(1)``.  The hybrid's fat-tree leg is routed here too.
"""

from __future__ import annotations

import numpy as np

from .._kernels.ecmp import ecmp_pair_flows
from .._jit import njit
from ._common import leaves, load_link, no_log, put
from ._models import get_routing, model_context
from .dmodk import dmodk_route
from .dragonfly import dragonfly_route, gate, valiant_tables, valiant_total
from .grid import dimension_order_route
from .lft import lft_hops, lft_route
from .table import table_leg
from .twisted import twisted_route

__all__ = ["pair_context", "pair_flows", "pair_hops", "pair_hops_batch", "routes_batch"]


@njit(cache=True)
def _fat_tree_route(indptr, indices, T, D, k, n, j, cs, ct, w, traffic, log_arc, log_val, log_n):
    """Up-down route in fat tree ``j`` of a hybrid from component ``cs`` to ``ct`` (as
    :func:`libtopomap.generators.hybrid.fat_tree_path`); its hops, or -1 when a link is missing."""
    if cs == ct:
        return 0
    words = k ** (n - 1)
    base = T + j * n * words
    i = 0
    p = words
    while (cs // p) % k == (ct // p) % k:  # first base-k digit (most significant first) that differs
        i += 1
        p //= k
    u = cs * D + j
    wd = cs // k
    h = 0
    for lv in range(n - 1, i - 1, -1):  # up to level i without changing the word
        v = base + lv * words + wd
        if not load_link(indptr, indices, u, v, w, traffic, log_arc, log_val, log_n):
            return -1
        u = v
        h += 1
    for lv in range(i, n - 1):  # going down from lv to lv + 1 sets digit lv
        place = k ** (n - 2 - lv)
        wd = wd - ((wd // place) % k) * place + ((ct // k ** (n - 1 - lv)) % k) * place
        v = base + (lv + 1) * words + wd
        if not load_link(indptr, indices, u, v, w, traffic, log_arc, log_val, log_n):
            return -1
        u = v
        h += 1
    if not load_link(indptr, indices, u, ct * D + j, w, traffic, log_arc, log_val, log_n):
        return -1
    return h + 1



# model codes of the compiled kernels (first entry of pair_context()[0])
_ECMP, _TABLE, _OBLIVIOUS, _DIMORDER, _RT, _RTT, _MINIMAL, _VALIANT, _HYBRID, _DMODK, _LFT = range(11)
_CODES = {"ecmp": _ECMP, "table": _TABLE, "oblivious": _OBLIVIOUS, "dimension-order": _DIMORDER, "rt": _RT,
          "rtt": _RTT, "minimal": _MINIMAL, "valiant": _VALIANT, "hybrid": _HYBRID, "dmodk": _DMODK, "lft": _LFT}


@njit(cache=True)
def _route_one(rctx, s, t, w, indptr, indices, arc_reverse, meta, packed, table, prune, no_targets, traffic, dist,
               sigma, flow, order, log_arc, log_val, log_n):
    """Route one demand ``s -> t`` (``s != t``) of volume ``w`` under the model of ``rctx``
    (:func:`pair_context`; not ``ecmp``): leaf hosts' links first, then the model's route.  Returns
    False when a link is missing or a vertex unreachable."""
    ip, att, off, arcs, dims, wrap, dorder, strides, rid, rv, near, far, _, _, _, tv, ta, lft, lv, portarc = rctx
    kind = ip[0]
    if kind == _DMODK:  # whole routes, host to host (the leaf links are the routes' own)
        return dmodk_route(indices, tv[0], tv[1], tv[2], tv[3], ta[0], tv[4], ta[1], s, t, w, traffic, log_arc,
                           log_val, log_n) >= 0
    if kind == _LFT:
        return lft_route(lft, lv[0], lv[1], lv[2], lv[3], portarc, s, t, w, traffic, log_arc, log_val, log_n) >= 0
    if off[s] == 1:
        put(traffic, indptr[s], w, log_arc, log_val, log_n)
        s = att[s]
    if off[t] == 1:
        put(traffic, arc_reverse[indptr[t]], w, log_arc, log_val, log_n)
        t = att[t]
    if s == t:
        return True
    if kind == _TABLE or kind == _OBLIVIOUS:
        return table_leg(indptr, indices, s, t, w, kind == _OBLIVIOUS, meta, packed, table, prune, no_targets,
                         traffic, dist, sigma, flow, order, log_arc, log_val, log_n)
    if kind == _DIMORDER:
        dimension_order_route(arcs, indices, dims, wrap, dorder, strides, s, t, w, traffic, log_arc, log_val, log_n)
        return True
    if kind == _RT or kind == _RTT:
        return twisted_route(indptr, indices, ip[1], kind == _RTT, s, t, w, traffic, log_arc, log_val, log_n) >= 0
    if kind == _MINIMAL or kind == _VALIANT:
        dragonfly_route(indptr, indices, rv, near, far, ip[2], ip[3], kind == _VALIANT, rid[s], rid[t], w, traffic,
                        log_arc, log_val, log_n)
        return True
    # hybrid: inside the source's component to the destination's position, then its fat tree
    T, D, k, n = ip[4], ip[5], ip[6], ip[7]
    cs, js = s // D, s % D
    ct, jt = t // D, t % D
    if js != jt:
        if ip[8] == 1:  # hypercube components: e-cube, lowest differing bit first
            x = js
            diff = js ^ jt
            while diff:
                low = diff & -diff
                u = cs * D + x
                x ^= low
                diff ^= low
                if not load_link(indptr, indices, u, cs * D + x, w, traffic, log_arc, log_val, log_n):
                    return False
        elif not table_leg(indptr, indices, s, cs * D + jt, w, False, meta, packed, table, prune, no_targets,
                           traffic, dist, sigma, flow, order, log_arc, log_val, log_n):
            return False
    return _fat_tree_route(indptr, indices, T, D, k, n, jt, cs, ct, w, traffic, log_arc, log_val, log_n) >= 0


@njit(cache=True)
def pair_flows(rctx, cnt, es, et, ewf, ewr, sign, indptr, indices, arc_reverse, meta, packed, table, prune, traffic,
               dist, sigma, flow, order, log_arc, log_val, log_n):
    """:func:`libtopomap._kernels.ecmp.ecmp_pair_flows` under the routing model of ``rctx``
    (:func:`pair_context`): add ``sign * ewf[i]`` from vertex ``es[i]`` to ``et[i]`` and ``sign *
    ewr[i]`` back for ``i < cnt``, logging every change (same arguments and contract).  ``ecmp``
    calls ``ecmp_pair_flows`` itself (bit-identical); the other models route each direction on its
    own (their routes back are not the reverse of the routes there).  False if a pair cannot be
    routed."""
    if rctx[0][0] == _ECMP:
        return ecmp_pair_flows(cnt, es, et, ewf, ewr, sign, indptr, indices, arc_reverse, meta, packed,
                                        table, prune, traffic, dist, sigma, flow, order, log_arc, log_val, log_n)
    no_targets = np.zeros(0, np.bool_)
    ok = True
    for i in range(cnt):
        if es[i] == et[i]:
            continue
        for a, b, x in ((es[i], et[i], ewf[i]), (et[i], es[i], ewr[i])):  # there, then back
            w = sign * x
            if w != 0.0 and not _route_one(rctx, a, b, w, indptr, indices, arc_reverse, meta, packed, table, prune,
                                           no_targets, traffic, dist, sigma, flow, order, log_arc, log_val, log_n):
                ok = False
    return ok


@njit(cache=True)
def routes_batch(rctx, s, t, w, indptr, indices, arc_reverse, meta, packed, table, prune, traffic):
    """:func:`_route_one` of every demand (serial, ``O(n)`` scratch); False when one cannot be routed."""
    n = indptr.size - 1
    dist = np.full(n, -1, np.int64)
    sigma = np.zeros(n)
    flow = np.zeros(n)
    order = np.empty(n, np.int64)
    no_targets = np.zeros(0, np.bool_)
    log_arc, log_val, log_n = no_log()
    ok = True
    for i in range(s.size):
        if s[i] != t[i] and not _route_one(rctx, s[i], t[i], w[i], indptr, indices, arc_reverse, meta, packed, table,
                                           prune, no_targets, traffic, dist, sigma, flow, order, log_arc, log_val,
                                           log_n):
            ok = False
    return ok


@njit(cache=True, inline="always")
def pair_hops(rctx, s, t):
    """Links crossed from vertex ``s`` to ``t`` under dragonfly ``minimal`` or ``valiant`` routing
    (the model of ``rctx``, :func:`pair_context`), as :func:`route_hops` counts them, in ``O(1)``
    and without walking the route: the engine's hop objectives under those models.

    The terminal links of leaf hosts (one each), then between routers ``rs`` and ``rd``: none on one
    router, one local link in one group; across groups ``minimal`` takes ``[rs != gate] + 1 + [gate'
    != rd]`` over the global link that minimises it (Dorier et al., section II-A.2; :func:`gate`), and
    ``valiant`` the expected links over the ``g - 2`` intermediate groups, summed as integers and
    divided by ``g - 2`` (from the counts of :func:`valiant_tables` with one global link per pair of
    groups, else ``O(g m)`` gate choices).  Shortest-path models are not handled here: their hops are
    the hop distance (:attr:`Topology.distances <libtopomap.Topology.distances>`).  Returns float64."""
    ip, att, off, _, _, _, _, _, rid, _, near, far, cn, cf, mid, _, _, lft, lv, portarc = rctx
    if s == t:
        return 0.0
    if ip[0] == _LFT:  # the walk of the tables (hosts only: the context checked every host pair)
        return np.float64(lft_hops(lft, lv[0], lv[1], lv[3], portarc, s, t))
    h = off[s] + off[t]
    s = att[s]
    t = att[t]
    if s == t:
        return np.float64(h)
    a, g = ip[2], ip[3]
    rs, rd = rid[s], rid[t]
    gs, gd = rs // a, rd // a
    if gs == gd:
        return np.float64(h + (1 if rs != rd else 0))
    if ip[0] == _MINIMAL or g <= 2:
        u, v = gate(near, far, gs, gd, rs, rd)
        return np.float64(h + (1 if u != rs else 0) + 1 + (1 if v != rd else 0))
    if cn.shape[0] > 0:
        total = valiant_total(near, far, a, g, cn, cf, mid, rs, rd)
    else:
        total = 0
        for gi in range(g):
            if gi == gs or gi == gd:
                continue
            u, v = gate(near, far, gs, gi, rs, -1)
            u2, v2 = gate(near, far, gi, gd, v, rd)
            total += (1 if u != rs else 0) + 1 + (1 if u2 != v else 0) + 1 + (1 if v2 != rd else 0)
    return np.float64(h) + total / (g - 2)


@njit(cache=True)
def pair_hops_batch(rctx, s, t, out):
    """``out[i] = pair_hops(rctx, s[i], t[i])``; returns ``out``."""
    for i in range(s.size):
        out[i] = pair_hops(rctx, s[i], t[i])
    return out


def pair_context(topology, routing=None):
    """The arrays the compiled per-pair kernels (:func:`pair_flows`) need for a model on ``topology``.

    One tuple type for every model (unused entries are empty arrays), so the engine compiles once.
    ``O(n)`` memory (leaf attachments; router ids on dragonflies; the grid's arc table on tori),
    plus ``g x g x m`` global links on a dragonfly and, for Valiant with one link per pair of groups,
    the ``g x g`` and ``g x a`` counts of :func:`valiant_tables`; no per-pair table.  ``ip[9]`` is 1
    when :func:`pair_hops` is the same both ways (all models but Valiant with several global links
    between two groups, whose first leg leaves by the gate nearest the source only).

    Raises
    ------
    TopologyError
        The model cannot route on ``topology``.
    """
    r = get_routing(routing, topology)
    ctx = model_context(r.name, topology)
    z1 = np.zeros(0, np.int64)
    z2 = np.zeros((0, 0), np.int64)
    cn = cf = mid = z2
    ip = np.zeros(10, np.int64)
    ip[0] = _CODES[r.model]
    ip[9] = 1  # hops the same both ways (all but Valiant with several links per pair of groups)
    att, off = leaves(topology) if r.model != "ecmp" else (z1, z1)
    arcs, dims, wrap, dorder, strides = np.zeros((0, 0), np.int64), z1, np.zeros(0, np.bool_), z1, z1
    rid = rv = z1
    near = far = portarc = np.zeros((0, 0, 0), np.int64)
    tv = ta = lv = z2
    lft = np.zeros((0, 0), np.uint8)
    if r.model == "dimension-order":
        dims, wrap, dorder = ctx
        arcs = np.array(topology.distances.grid_arcs(), dtype=np.int64, order="C")
        strides = np.ones(dims.size, np.int64)
        for j in range(dims.size - 2, -1, -1):
            strides[j] = strides[j + 1] * dims[j + 1]
    elif r.model in ("rt", "rtt"):
        ip[1] = ctx
    elif r.model in ("minimal", "valiant"):
        q = ctx
        ip[2], ip[3] = q.routers, q.groups
        rid = np.array(q.router_ids, dtype=np.int64)
        rv = np.array(q.router_vertices, dtype=np.int64)
        near = np.array(q.gate_router, dtype=np.int64, order="C")
        far = np.array(q.landing_router, dtype=np.int64, order="C")
        if r.name == "valiant" and q.groups > 2:
            if q.links_per_pair == 1:
                cn, cf, mid = valiant_tables(near, far, q.routers, q.groups)
            else:
                ip[9] = 0
    elif r.model == "hybrid":
        ip[4:9] = ctx
    elif r.model == "dmodk":
        n = topology.n_vertices
        tv = np.zeros((5, n + 1), np.int64)
        tv[0, :n], tv[1, :n], tv[2, :n], tv[3], tv[4] = ctx.lo, ctx.hi, ctx.didx, ctx.uptr, ctx.dptr
        ta = np.full((2, max(ctx.uarc.size, ctx.darc.size)), -1, np.int64)
        ta[0, :ctx.uarc.size], ta[1, :ctx.darc.size] = ctx.uarc, ctx.darc
    elif r.model == "lft":
        ip[9] = 0  # a route back need not be as long as the route there
        lft, portarc = ctx.lft, ctx.portarc
        lv = np.stack([ctx.swrow, ctx.hostlid, ctx.hostarc, ctx.hosthead]).astype(np.int64)
    return (ip, np.array(att, np.int64), np.array(off, np.int64), arcs, np.array(dims, np.int64),
            np.array(wrap, np.bool_), np.array(dorder, np.int64), strides, rid, rv, near, far, cn, cf, mid,
            tv, ta, lft, lv, portarc)
