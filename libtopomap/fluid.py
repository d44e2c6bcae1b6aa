"""How long the traffic of a mapping takes to drain when links share bandwidth as SimGrid's CM02 model does.

:func:`phase_time` sends every demand of the communication graph at once along its single route and shares each
link max-min fairly with each flow's share inversely proportional to its route's latency (the RTT unfairness of TCP
that CM02 models: Casanova and Marchal, "A network model for simulation of grid application", LIP RR 2002-40;
Velho and Legrand, SIMUTools 2009), until every flow has arrived.  Two placements with the same maximum congestion
differ here: a link is only busy the whole time when the flows crossing it are not throttled elsewhere.  The race
uses it to break ties of its objective (:mod:`libtopomap.portfolio.selection`).
"""

from __future__ import annotations

import time

import numpy as np

from ._jit import njit
from .commgraph import as_commgraph
from .errors import TopologyError
from .mapping import Mapping, check_mapping
from .routing import get_routing, pair_context, pair_flows
from .vocabulary import MULTIPATH_ROUTINGS

__all__ = ["FLUID_WORK", "demand_routes", "phase_time"]

#: Arc visits :func:`phase_time` spends on progressive filling at the most (a round visits the arcs on routes and
#: the routes of the flows it fixes); beyond it the flows left drain at full link capacity (a lower bound of the
#: rest).  Work, not time, so the result does not depend on the machine's load.  2^24: exact on all 165 placements
#: of benchmarks/results/smpi_64_keys.json (2^22 differs on one); at 2^28 a random placement of a 4,096-rank 3-D
#: stencil on fattree(4, 6) took 20.6 s at load 25 and still hit the bound.
FLUID_WORK = 1 << 24


@njit(cache=True)
def _routes(rctx, s, t, indptr, indices, arc_reverse, meta, packed, table, prune, out_ptr, out_arc):
    n = indptr.size - 1
    traffic = np.zeros(indices.size)
    dist = np.full(n, -1, np.int64)
    sigma = np.zeros(n)
    flow = np.zeros(n)
    order = np.empty(n, np.int64)
    log_arc = np.empty(4 * n + 8, np.int64)
    log_val = np.empty(4 * n + 8)
    log_n = np.zeros(2, np.int64)
    es = np.empty(1, np.int64)
    et = np.empty(1, np.int64)
    one = np.ones(1)
    zero = np.zeros(1)
    k = 0
    for i in range(s.size):
        es[0] = s[i]
        et[0] = t[i]
        log_n[0] = 0
        log_n[1] = 0
        ok = pair_flows(rctx, 1, es, et, one, zero, 1.0, indptr, indices, arc_reverse, meta, packed, table, prune,
                        traffic, dist, sigma, flow, order, log_arc, log_val, log_n)
        if not ok or log_n[1] != 0:
            return -1 - i
        if k + log_n[0] > out_arc.size:
            return -(s.size + 1)  # out of room: the caller retries with more
        for j in range(log_n[0]):
            traffic[log_arc[j]] = 0.0
            out_arc[k] = log_arc[j]
            k += 1
        out_ptr[i + 1] = k
    return k


def demand_routes(topology, src, dst, *, routing):
    """The arcs of the single route of each demand ``src[i] -> dst[i]`` under a single-path routing model.

    Returns
    -------
    indptr, arcs : numpy.ndarray of int64
        CSR: the arcs of demand ``i`` are ``arcs[indptr[i]:indptr[i + 1]]`` (none when ``src[i] == dst[i]``).

    Raises
    ------
    TopologyError
        The model splits demands (:data:`~libtopomap.vocabulary.MULTIPATH_ROUTINGS`) or cannot route one of them.
    """
    r = get_routing(routing, topology)
    if r.model in MULTIPATH_ROUTINGS:
        raise TopologyError(f"routing {r.name!r} splits demands over several paths: no single route per demand")
    s = np.ascontiguousarray(src, dtype=np.int64)
    t = np.ascontiguousarray(dst, dtype=np.int64)
    ctx = pair_context(topology, r)
    meta, packed, table = topology.distances.fast_arrays
    ptr = np.zeros(s.size + 1, np.int64)
    room = max(16, 8 * s.size)
    while True:
        arcs = np.empty(room, np.int64)
        k = _routes(ctx, s, t, topology.indptr, topology.indices, topology.arc_reverse, meta, packed, table,
                    bool(topology.distances.covers_all), ptr, arcs)
        if k >= 0:
            return ptr, arcs[:k]
        if k == -(s.size + 1):
            room *= 4
            continue
        i = -1 - k
        raise TopologyError(f"routing {r.name!r} cannot route from {topology.names[s[i]]!r} to "
                            f"{topology.names[t[i]]!r}")


@njit(cache=True)
def _drain(fptr, farc, aptr, aflow, used, size, share, cap, left, active, rounds):
    """Progressive filling until every flow has arrived or ``rounds`` are played; updates ``left`` and
    ``active`` in place and returns ``(time elapsed, rounds played)``.  A round scans the ``used`` arcs (those on
    a route) and the routes of the flows it fixes."""
    nf = size.size
    na = cap.size
    rate = np.zeros(nf)
    fixed = np.zeros(nf, np.bool_)
    room = np.empty(na)
    weight = np.empty(na)
    free_on = np.empty(na, np.int64)  # free flows crossing each arc: weight's float residue must not count
    tiny = 1e-12 * share.max()
    elapsed = 0.0
    played = 0
    n_active = 0
    for f in range(nf):
        if active[f]:
            n_active += 1
    while n_active > 0 and played < rounds:
        for a in used:
            room[a] = cap[a]
            weight[a] = 0.0
            free_on[a] = 0
        n_free = 0
        for f in range(nf):
            fixed[f] = not active[f]
            rate[f] = 0.0
            if active[f]:
                n_free += 1
                for j in range(fptr[f], fptr[f + 1]):
                    weight[farc[j]] += share[f]
                    free_on[farc[j]] += 1
        while n_free > 0:  # raise every free flow until a link saturates; fix the flows crossing it
            played += 1
            x = np.inf
            for a in used:
                if free_on[a] > 0 and weight[a] > tiny and room[a] / weight[a] < x:
                    x = room[a] / weight[a]
            lim = x * (1 + 1e-12)
            for a in used:
                if free_on[a] > 0 and weight[a] > tiny and room[a] / weight[a] <= lim:
                    for j in range(aptr[a], aptr[a + 1]):
                        f = aflow[j]
                        if fixed[f]:
                            continue
                        fixed[f] = True
                        n_free -= 1
                        rate[f] = x * share[f]
                        for k in range(fptr[f], fptr[f + 1]):
                            b = farc[k]
                            room[b] = max(room[b] - rate[f], 0.0)
                            weight[b] -= share[f]
                            free_on[b] -= 1
        dt = np.inf
        for f in range(nf):
            if active[f] and left[f] / rate[f] < dt:
                dt = left[f] / rate[f]
        elapsed += dt
        for f in range(nf):
            if active[f]:
                left[f] -= rate[f] * dt
                if left[f] <= 1e-9 * size[f]:
                    active[f] = False
                    n_active -= 1
    return elapsed, played


def phase_time(topology, graph, mapping, *, routing, work=FLUID_WORK, deadline=None):
    """Time until every message of ``graph`` has arrived when all are sent at once (CM02 fluid model).

    Each demand is one flow along its route (:func:`demand_routes`) with penalty the route's hop count (uniform link
    latencies: CM02 weighs a flow by its route's latency).  Flows share a link's capacity max-min fairly, flow ``f``
    getting a share proportional to ``1 / hops_f`` (progressive filling); when the first flows arrive the rates are
    shared again among the rest.  Units: ``graph``'s volume over ``topology.arc_capacity`` (with unit capacities, a
    time in the units of :func:`libtopomap.max_congestion`, which bounds it from below).

    Parameters
    ----------
    work : int
        Arc visits of progressive filling at the most (:data:`FLUID_WORK`; a round visits the ``r`` arcs on routes
        and the routes of the flows it fixes, so at least ``work // (r + route arcs)`` rounds are played); then,
        and at ``deadline`` (a :func:`time.perf_counter` value, checked every few million arc visits), the flows
        left drain at full link capacity (a lower bound of the rest).

    Returns
    -------
    float, or None under a multipath routing model (:data:`~libtopomap.vocabulary.MULTIPATH_ROUTINGS`).
    """
    r = get_routing(routing, topology)
    if r.model in MULTIPATH_ROUTINGS:
        return None
    g = as_commgraph(graph)
    # a Mapping of this topology was checked when it was made (as libtopomap.evaluate takes it)
    vert = mapping.vertices if isinstance(mapping, Mapping) and mapping.topology is topology else check_mapping(
        topology, mapping)
    s, t, size = vert[g.src], vert[g.dst], np.asarray(g.weights, dtype=np.float64)
    keep = (s != t) & (size > 0)
    s, t, size = s[keep], t[keep], size[keep]
    if size.size == 0:
        return 0.0
    fptr, farc = demand_routes(topology, s, t, routing=r)
    flows = np.repeat(np.arange(size.size, dtype=np.int64), np.diff(fptr))
    order = np.argsort(farc, kind="stable")
    aflow = flows[order]
    cap = np.asarray(topology.arc_capacity, dtype=np.float64)
    aptr = np.zeros(cap.size + 1, np.int64)
    np.cumsum(np.bincount(farc, minlength=cap.size), out=aptr[1:])
    used = np.flatnonzero(np.diff(aptr)).astype(np.int64)
    share = 1.0 / np.diff(fptr).astype(np.float64)
    per_round = used.size + farc.size  # arc visits of a round, at the most
    rounds = int(work) // per_round
    chunk = max(1, (1 << 24) // per_round)  # rounds between two looks at the clock
    left = size.copy()
    active = np.ones(size.size, np.bool_)
    elapsed, played = 0.0, 0
    while active.any() and played < rounds:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        dt, n = _drain(fptr, farc, aptr, aflow, used, size, share, cap, left, active, min(chunk, rounds - played))
        elapsed += dt
        played += n
    if active.any():  # the rest at full link capacity: the busiest link's remaining load
        load = np.bincount(farc, weights=np.where(active, left, 0.0)[flows], minlength=cap.size)
        elapsed += float(np.max(load / cap))
    return elapsed
