"""Multicore step: partition G into groups of p processes, map the quotient graph (sections 3.4, 4.2)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..commgraph import CommGraph, SymGraph
from ..errors import MappingError
from ._common import finish, validated
from .partition import subgraph
from .recursive import balance_parts, metis_parts
from .._jit import njit

__all__ = ["map_multicore", "multicore_slots", "partition_exact", "GROUPS_PER_BLOCK"]


def multicore_slots(slots, n_processes):
    """The common slot count ``p`` when every usable vertex has the same ``p >= 2`` slots and ``p``
    divides ``n_processes``; otherwise None."""
    s = np.asarray(slots)
    used = s[s > 0]
    if used.size == 0:
        return None
    p = int(used[0])
    if p < 2 or np.any(used != p) or n_processes % p:
        return None
    return p


#: Groups per first-level part of :func:`partition_exact` beyond which it splits in two levels.
GROUPS_PER_BLOCK = 64


def partition_exact(adj, k, p, seed=None):
    """Split a graph into ``k`` parts of exactly ``p`` vertices: METIS k-way, then the fix-up that
    moves the least connected vertices out of overfull parts (section 4.2).

    With more than :data:`GROUPS_PER_BLOCK` parts, in two levels: METIS k-way into
    ``ceil(k / GROUPS_PER_BLOCK)`` blocks of whole groups (fixed up to exact sizes), then each block
    into its groups by heavy-edge growth (:func:`_grow_groups`).  METIS k-way into parts of two
    processes is slow (P = 8,192, ``k = 4,096``: 8-15 s on a loaded 2-core machine, longer than
    greedy on the quotient; 64 blocks of 128 into 64 parts each took as long).
    """
    if k <= GROUPS_PER_BLOCK:
        parts = metis_parts(adj, k, seed=seed)
        return balance_parts(adj, parts, np.full(k, p))
    adj = adj.tocsr()
    if not adj.has_sorted_indices:
        adj = adj.copy()
        adj.sort_indices()
    nb = -(-k // GROUPS_PER_BLOCK)
    groups = np.full(nb, k // nb, np.int64)
    groups[:k % nb] += 1
    block = balance_parts(adj, metis_parts(adj, nb, seed=seed), p * groups)
    out = np.empty(adj.shape[0], np.int64)
    order = np.argsort(block, kind="stable")
    start = np.zeros(nb + 1, np.int64)
    np.cumsum(p * groups, out=start[1:])
    first = np.zeros(nb + 1, np.int64)
    np.cumsum(groups, out=first[1:])
    pos = np.full(adj.shape[0], -1, np.int64)
    indices = adj.indices.astype(np.int64)
    data = adj.data.astype(np.float64)
    for b in range(nb):
        verts = order[start[b]:start[b + 1]]
        ptr, idx, val = subgraph(adj.indptr, indices, data, verts, pos)
        out[verts] = first[b] + _grow_groups(ptr, idx, val, int(p))
    return out


@njit(cache=True)
def _grow_groups(indptr, indices, data, p):
    """Groups of exactly ``p`` vertices (``n`` a multiple of ``p``): each group starts at the first
    ungrouped vertex and grows by the ungrouped vertex most connected to it (heavy-edge growth; the
    next ungrouped vertex when none is connected).  ``O(p^2 x degree)`` per group."""
    n = indptr.size - 1
    group = np.full(n, -1, np.int64)
    conn = np.zeros(n)
    touched = np.empty(indices.size + 1, np.int64)
    members = np.empty(p, np.int64)
    nxt = 0
    g = 0
    for v in range(n):
        if group[v] >= 0:
            continue
        group[v] = g
        members[0] = v
        size = 1
        nt = 0
        while size < p:
            m = members[size - 1]
            for a in range(indptr[m], indptr[m + 1]):
                w = indices[a]
                if group[w] < 0:
                    if conn[w] == 0.0:
                        touched[nt] = w
                        nt += 1
                    conn[w] += data[a] + 1e-300
            best = -1
            bw = 0.0
            for i in range(nt):
                w = touched[i]
                if group[w] < 0 and conn[w] > bw:
                    bw = conn[w]
                    best = w
            if best < 0:
                while group[nxt] >= 0:
                    nxt += 1
                best = nxt
            group[best] = g
            members[size] = best
            size += 1
        for i in range(nt):
            conn[touched[i]] = 0.0
        g += 1
    return group


@validated
def map_multicore(topology, graph, *, slots=None, seed=None, inner="greedy", start=None):
    """Map onto hosts that all run ``p >= 2`` processes: partition G into ``P/p`` groups of ``p``
    (METIS k-way plus exact-balance fix-up), map the quotient graph (one vertex per group, only the
    inter-group edges, summed) with the ``inner`` strategy onto one slot per host, and put each group
    on its host.

    Parameters
    ----------
    topology, graph, slots, seed
        As for :func:`~libtopomap.mappers.map_processes`; every usable vertex must have the same
        ``p >= 2`` slots.
    inner : {"greedy", "rcm", "recursive"}
        Strategy for the quotient graph.
    start : int or str, optional
        Greedy's start vertex.

    Returns
    -------
    Mapping
        Strategy ``inner``: the ``p`` processes of a group share a host.

    Raises
    ------
    MappingError
        If the usable vertices differ in slots, ``p < 2``, or ``p`` does not divide P.

    References
    ----------
    T. Hoefler and M. Snir, ICS'11, sections 3.4 and 4.2.
    """
    from .greedy import map_greedy
    from .rcm import map_rcm
    from .recursive import map_recursive

    g, rng = graph, np.random.default_rng(seed)
    p = multicore_slots(slots, g.n)
    if p is None:
        raise MappingError("the multicore step needs every usable vertex to have the same p >= 2 slots, "
                           "with p dividing the number of processes")
    k = g.n // p
    sym = SymGraph(g)
    adj = sp.csr_matrix((sym.wsum, sym.indices, sym.indptr), shape=(g.n, g.n))
    parts = partition_exact(adj, k, p, seed=None if seed is None else int(rng.integers(2**31 - 1)))
    src, dst = g.src, g.dst
    cross = parts[src] != parts[dst]
    quotient = CommGraph(k, parts[src][cross], parts[dst][cross], g.weights[cross])
    fn = {"greedy": map_greedy, "rcm": map_rcm, "recursive": map_recursive}.get(inner)
    if fn is None:
        raise MappingError(f"unknown inner strategy {inner!r} for the multicore step")
    kw = {"start": start} if inner == "greedy" else {}
    qmap = fn.trusted(topology, quotient, slots=slots // p, seed=seed, **kw)  # checked here, at the door
    return finish(topology, qmap.vertices[parts], slots, f"{inner}")
