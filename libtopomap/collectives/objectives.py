"""Costs of a collective schedule under a rank placement (Cui 2024, sections 3.3 and 3.4).

A *placement* is ``vertices[r]``, the vertex that runs rank ``r``; the objectives are ``hops`` (the
thesis' total hops), ``contention`` (its two-opt for contentions) and ``step`` (ours), over
deterministic single shortest routes.  Their definitions: docs/internals.rst, "Collectives: schedule
costs and rank placement".
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import MappingError
from ..distances import hop_distance, next_arc
from ..vocabulary import COLLECTIVE_OBJECTIVES as OBJECTIVES
from .._jit import njit

__all__ = ["OBJECTIVES", "total_hops", "contention", "step_model", "evaluate_schedule", "job_distances",
           "next_hop_arcs", "route"]


# Largest next-hop table (destinations x vertices) built for the path-based objectives.
_MAX_TABLE = 1 << 28


def _placement(topology, vertices):
    v = np.asarray(vertices if hasattr(vertices, "__len__") else list(vertices))
    if v.ndim != 1 or (v.size and not np.issubdtype(v.dtype, np.integer)):
        raise MappingError(f"a placement is a 1-D integer array of vertices, got shape {v.shape} dtype {v.dtype}")
    v = v.astype(np.int64)
    bad = np.flatnonzero((v < 0) | (v >= topology.n_vertices))
    if bad.size:
        raise MappingError(f"rank {bad[0]} is placed on vertex {v[bad[0]]}, outside 0..{topology.n_vertices - 1}")
    return v


def job_distances(topology, nodes):
    """Hop distances between the job's nodes, ``(m, m)`` ``int32`` (``nodes`` may repeat a vertex).

    .. deprecated::
        An ``m x m`` matrix; use ``topology.distances.pairs(a, b)`` (no code in the library uses it).
    """
    warnings.warn("job_distances is deprecated (P x P memory); use topology.distances.pairs(a, b)",
                  DeprecationWarning, stacklevel=2)
    nodes = _placement(topology, nodes)
    m = nodes.size
    d = topology.distances.pairs(np.repeat(nodes, m), np.tile(nodes, m)).astype(np.int32).reshape(m, m)
    return np.ascontiguousarray(d)


@njit(cache=True)
def _next_hop_kernel(indptr, indices, dist, out):
    m, n = dist.shape
    for t in range(m):
        for v in range(n):
            out[t, v] = -1
            dv = dist[t, v]
            if dv <= 0:
                continue
            for a in range(indptr[v], indptr[v + 1]):
                if dist[t, indices[a]] == dv - 1:
                    out[t, v] = a
                    break


def next_hop_arcs(topology, destinations):
    """``out[t, v]``: CSR arc leaving vertex ``v`` on the route towards ``destinations[t]`` (-1 at it).

    The next hop is the lowest-index neighbour one hop closer (a deterministic minimal route).  A
    ``destinations x n`` table for inspection; the objectives and optimizers do not build it, they
    find each next hop from oracle distances (:func:`libtopomap.mappers.local_search.next_arc`).

    Raises
    ------
    MappingError
        When the table would exceed 2**28 entries.
    """
    dest = np.asarray(destinations, dtype=np.int64)
    if dest.size * topology.n_vertices > _MAX_TABLE:
        raise MappingError(f"a route table for {dest.size} destinations on {topology.n_vertices} vertices is "
                           "too large")
    dist = topology.hop_distances(dest)
    out = np.empty(dist.shape, dtype=np.int32)
    _next_hop_kernel(topology.indptr, topology.indices, dist, out)
    return out


def route(topology, src, dst, table=None):
    """The CSR arcs of the deterministic route from vertex ``src`` to vertex ``dst`` (a list)."""
    if table is not None:
        arcs, v = [], int(src)
        while v != dst:
            a = int(table[0, v])
            arcs.append(a)
            v = int(topology.indices[a])
        return arcs
    o = topology.distances
    scratch = o.new_scratch()
    arcs, v = [], int(src)
    dv = int(o.pairs([v], [dst])[0])
    while v != dst:
        a = int(next_arc(o.kernel_args, scratch, topology.indptr, topology.indices, v, int(dst), dv))
        arcs.append(a)
        v = int(topology.indices[a])
        dv -= 1
    return arcs


@njit(cache=True)
def _path_costs(msrc, mdst, mstep, sweight, n_steps, vert, oracle, scratch, indptr, indices, n_arcs):
    """(contention, step sum) of messages sorted by step; one arc-load array reused per step.  Routes
    are found hop by hop from oracle distances (no route table)."""
    load = np.zeros(n_arcs, dtype=np.int64)
    cont = 0
    stepsum = 0
    k = 0
    buf = np.empty(max(n_arcs, 1), dtype=np.int64)
    for t in range(n_steps):
        nt = 0
        mx = 0
        c = 0
        while k < msrc.size and mstep[k] == t:
            v = vert[msrc[k]]
            target = vert[mdst[k]]
            dv = hop_distance(oracle, v, target, scratch)
            while v != target:
                a = next_arc(oracle, scratch, indptr, indices, v, target, dv)
                if load[a] == 0:
                    buf[nt] = a
                    nt += 1
                else:
                    c += 1
                load[a] += 1
                if load[a] > mx:
                    mx = load[a]
                v = indices[a]
                dv -= 1
            k += 1
        for i in range(nt):
            load[buf[i]] = 0
        cont += c * sweight[t]
        stepsum += mx * sweight[t]
    return cont, stepsum


def dedupe_steps(steps):
    """Merge identical steps: (unique steps, multiplicity of each)."""
    keys, uniq, weight = {}, [], []
    for s in steps:
        key = (s.shape[0], s.tobytes())
        if key in keys:
            weight[keys[key]] += 1
        else:
            keys[key] = len(uniq)
            uniq.append(s)
            weight.append(1)
    return uniq, np.array(weight, dtype=np.int64)


def flatten_steps(steps):
    """The messages of all ``steps`` as arrays ``(source, destination, step index)``."""
    if not steps:
        z = np.zeros(0, np.int64)
        return z, z, z
    sizes = [len(s) for s in steps]
    pairs = np.concatenate(steps) if sum(sizes) else np.zeros((0, 2), np.int64)
    stepid = np.repeat(np.arange(len(steps), dtype=np.int64), sizes)
    return pairs[:, 0].copy(), pairs[:, 1].copy(), stepid


def total_hops(topology, steps, vertices, *, routing="ecmp"):
    """Sum over all messages of the hop distance between the two ranks' vertices.

    With ``routing`` a model of :mod:`libtopomap.routing` that is not shortest-path (dragonfly
    ``minimal``; ``valiant``, whose expected hops make the sum a float), the hops of its routes;
    shortest-path models (the default ``ecmp``, ``table``, ...) give the hop distance.

    Examples
    --------
    >>> from libtopomap.generators.circulant import circulant
    >>> from libtopomap.collectives.schedules import schedule
    >>> total_hops(circulant(16), schedule("allreduce", 16), range(16))
    64
    """
    from ..routing import get_routing, route_hops

    r = get_routing(routing, topology)
    r.check(topology)
    v = _placement(topology, vertices)
    src, dst, _ = flatten_steps(steps)
    if src.size == 0:
        return 0
    _check_ranks(src, dst, v.size)
    if r.shortest:
        return int(topology.distances.pairs(v[src], v[dst]).sum())
    h = route_hops(topology, v[src], v[dst], routing=r)
    return int(h.sum()) if h.dtype.kind == "i" else float(h.sum())


def _path_eval(topology, steps, v):
    usteps, sw = dedupe_steps(steps)
    src, dst, stepid = flatten_steps(usteps)
    if src.size == 0:
        return 0, 0
    _check_ranks(src, dst, v.size)
    o = topology.distances
    c, s = _path_costs(src, dst, stepid, sw, len(usteps), v, o.kernel_args, o.new_scratch(), topology.indptr,
                       topology.indices, topology.n_arcs)
    return int(c), int(s)


def contention(topology, steps, vertices):
    """Sum over steps and arcs of ``max(0, load - 1)``: messages of a step sharing a link direction."""
    return _path_eval(topology, steps, _placement(topology, vertices))[0]


def step_model(topology, steps, vertices):
    """Sum over steps of the step's largest arc load (bulk-synchronous link-time model)."""
    return _path_eval(topology, steps, _placement(topology, vertices))[1]


def evaluate_schedule(topology, steps, vertices, *, paths=True, routing="ecmp"):
    """All objectives of a placement: ``{"hops", "contention", "step"}`` (the last two ``None`` when
    ``paths`` is false).  ``routing`` applies to ``hops`` (:func:`total_hops`); contention and the step
    model always follow the fixed lowest-index next hop (the ``table`` model)."""
    v = _placement(topology, vertices)
    out = {"hops": total_hops(topology, steps, v, routing=routing), "contention": None, "step": None}
    if paths:
        out["contention"], out["step"] = _path_eval(topology, steps, v)
    return out


def _check_ranks(src, dst, p):
    hi = max(int(src.max()), int(dst.max()))
    if hi >= p:
        raise MappingError(f"the schedule names rank {hi} but the placement has only {p} ranks")
