"""Scotch static mapping through pyscotch (optional peer strategy)."""

from __future__ import annotations

import contextlib
import io
import sys

import numpy as np
from numba import njit

from ..errors import MappingError
from ..vocabulary import HAVE_SCOTCH
from ._common import finish, prepare, slot_list

__all__ = ["map_scotch", "HAVE_SCOTCH", "repair_slots"]


@contextlib.contextmanager
def _quiet_import():
    """pyscotch prints a 'Loaded Scotch' banner to stderr on first import; library code stays silent."""
    saved_out, saved_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved_out, saved_err


def repair_slots(topology, vertices, slots):
    """Move the processes that overfill a vertex to the nearest vertices with free slots (BFS hops).

    Overfull vertices are handled in index order; each of their extra processes (in process order)
    goes to the free vertex nearest to the overfull one, ties to the smallest index.  One
    breadth-first search per overfull vertex, stopped once its extra processes are placed (no
    distance matrix).  Returns a new ``int64`` array; unchanged where every vertex is within its
    slots.
    """
    v = np.asarray(vertices, dtype=np.int64).copy()
    used = np.bincount(v, minlength=topology.n_vertices)
    free = (np.asarray(slots, dtype=np.int64) - used[: topology.n_vertices]).astype(np.int64)
    over = np.flatnonzero(free < 0)
    if over.size == 0:
        return v
    order = np.argsort(v, kind="stable")
    first = np.searchsorted(v[order], over)
    n = topology.n_vertices
    stamp = np.zeros(n, np.int64)
    queue = np.empty(n, np.int64)
    for c, x in enumerate(over.tolist()):
        procs = order[first[c] + int(slots[x]): first[c] + int(used[x])]
        dest = _nearest_free(topology.indptr, topology.indices, x, free, procs.size, stamp, queue, c + 1)
        if dest.size < procs.size:
            raise MappingError("not enough free slots reachable to repair Scotch's mapping")
        v[procs] = dest
        free[x] = 0
    return v


@njit(cache=True)
def _nearest_free(indptr, indices, x, free, need, stamp, queue, c):
    """``need`` free slots nearest to ``x`` by breadth-first search, each level in index order (a
    vertex repeats while it has free slots); ``free`` is decremented.  ``stamp`` marks this search
    with ``c``."""
    out = np.empty(need, np.int64)
    k = 0
    stamp[x] = c
    queue[0] = x
    head = 0
    tail = 1
    while head < tail and k < need:
        level_end = tail
        lv = np.sort(queue[head:level_end])
        for y in lv:
            while free[y] > 0 and k < need and y != x:
                out[k] = y
                k += 1
                free[y] -= 1
        if k >= need:
            break
        while head < level_end:
            u = queue[head]
            head += 1
            for a in range(indptr[u], indptr[u + 1]):
                w = indices[a]
                if stamp[w] != c:
                    stamp[w] = c
                    queue[tail] = w
                    tail += 1
    return out[:k]


def map_scotch(topology, graph, *, slots=None, seed=None):
    """Scotch's static mapping onto a "deco 2" target built from the topology graph.

    The target graph is the whole network; its vertex weights are the usable slots (switches 1,
    since Scotch needs positive weights, and any process Scotch puts on a switch or over a
    vertex's slots is moved to the nearest free slot); its edge weights are traversal *costs*
    ``max(c) / c`` (Scotch reads them as distances, not capacities).

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    slots : array_like of int, optional
    seed : int, optional
        Resets Scotch's random generator when given (repeatable runs).

    Returns
    -------
    Mapping

    Raises
    ------
    MappingError
        If pyscotch is not installed.

    References
    ----------
    F. Pellegrini, "Scotch and PT-Scotch graph partitioning software: an overview", 2012.
    """
    if not HAVE_SCOTCH:
        raise MappingError("strategy 'scotch' needs pyscotch (pip install 'libtopomap[scotch]')")
    from ctypes import byref

    with _quiet_import():
        import pyscotch
        from pyscotch import Architecture, Graph
        from pyscotch import libscotch as lib
    topology, g, slots, _ = prepare(topology, graph, slots, seed)
    from .objectives import SymGraph

    sym = SymGraph(g)
    if sym.indices.size == 0:
        # Scotch cannot map an edgeless graph meaningfully; any placement is optimal
        return finish(topology, slot_list(slots)[:g.n], slots, "scotch")
    src = np.repeat(np.arange(g.n), np.diff(sym.indptr))
    keep = src < sym.indices
    from .recursive import int_weights

    app_edges = list(zip(src[keep].tolist(), sym.indices[keep].tolist()))
    gw = int_weights(sym.wsum[keep]).tolist()
    cost = int_weights(topology.capacity.max() / topology.capacity, scale=10)
    phys_edges = list(zip(topology.link_u.tolist(), topology.link_v.tolist()))
    vw = np.where(slots > 0, slots, 1).astype(np.int64).tolist()
    if seed is not None:
        pyscotch.random_reset() if hasattr(pyscotch, "random_reset") else None
    appg = Graph.from_edges(app_edges, num_vertices=g.n, edge_weights=gw)
    hg = Graph.from_edges(phys_edges, num_vertices=topology.n_vertices, vertex_weights=vw,
                          edge_weights=cost.tolist())
    arch = Architecture()
    rc = lib.SCOTCH_archBuild2(byref(arch._arch), byref(hg._graph), lib.SCOTCH_Num(topology.n_vertices), None)
    if rc != 0:
        raise MappingError(f"Scotch could not build a target architecture from {topology.name!r}")
    part = np.asarray(appg.map(arch), dtype=np.int64)
    return finish(topology, repair_slots(topology, part, slots), slots, "scotch")
