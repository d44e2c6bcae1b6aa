"""Multicore step: partition G into groups of p processes, map the quotient graph (sections 3.4, 4.2)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..commgraph import CommGraph
from ..errors import MappingError
from ._common import finish, prepare
from .objectives import SymGraph
from .recursive import balance_parts, metis_parts

__all__ = ["map_multicore", "multicore_slots", "partition_exact"]


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


def partition_exact(adj, k, p, seed=None):
    """Split a graph into ``k`` parts of exactly ``p`` vertices: METIS k-way, then the fix-up that
    moves the least connected vertices out of overfull parts (section 4.2)."""
    parts = metis_parts(adj, k, seed=seed)
    return balance_parts(adj, parts, np.full(k, p))


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
    from . import map_greedy, map_rcm, map_recursive

    topology, g, slots, rng = prepare(topology, graph, slots, seed)
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
    qmap = fn(topology, quotient, slots=slots // p, seed=seed, **kw)
    return finish(topology, qmap.vertices[parts], slots, f"{inner}")
