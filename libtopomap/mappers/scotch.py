"""Scotch static mapping through pyscotch (optional peer strategy)."""

from __future__ import annotations

import contextlib
import io
import sys

import numpy as np

from ..errors import MappingError
from ._common import finish, prepare, slot_list

__all__ = ["map_scotch", "HAVE_SCOTCH", "repair_slots"]

try:  # pragma: no cover - depends on the environment
    import importlib.util

    HAVE_SCOTCH = importlib.util.find_spec("pyscotch") is not None
except Exception:  # pragma: no cover
    HAVE_SCOTCH = False


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

    Returns a new ``int64`` array; unchanged where every vertex is within its slots.
    """
    from scipy.sparse import csgraph

    v = np.asarray(vertices, dtype=np.int64).copy()
    used = np.bincount(v, minlength=topology.n_vertices)
    free = slots - used
    over = np.flatnonzero(free < 0)
    if over.size == 0:
        return v
    d = csgraph.shortest_path(topology.adjacency, unweighted=True, indices=over)
    for row, x in enumerate(over):
        procs = np.flatnonzero(v == x)[slots[x]:]
        order = np.argsort(d[row], kind="stable")
        for p in procs:
            for y in order:
                if free[y] > 0:
                    v[p] = y
                    free[y] -= 1
                    free[x] += 1
                    break
    return v


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
