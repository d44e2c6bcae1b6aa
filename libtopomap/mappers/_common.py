"""Input validation and result wrapping shared by all mapping strategies."""

from __future__ import annotations

import numpy as np

from ..commgraph import CommGraph, as_commgraph
from ..errors import CommGraphError, MappingError
from ..mapping import Mapping
from ..validation import check_seed, check_slots

__all__ = ["prepare", "finish", "check_slots", "slot_list", "settle_domain"]


def prepare(topology, graph, slots, seed):
    """Validate (topology, graph, slots) for a strategy; returns (topology, CommGraph, slots, rng).

    Raises
    ------
    CommGraphError
        Bad graph (negative/NaN weights are rejected by :class:`CommGraph`).
    MappingError
        Empty graph, or more processes than usable slots.
    """
    if isinstance(graph, CommGraph):
        g = graph
    else:
        try:
            g = as_commgraph(graph)
        except (TypeError, ValueError) as e:
            if isinstance(e, CommGraphError):
                raise
            raise CommGraphError(f"invalid communication graph: {e}") from None
    if g.n == 0:
        raise MappingError("the communication graph is empty: there are no processes to map")
    s = check_slots(topology, slots)
    total = int(s.sum())
    if g.n > total:
        raise MappingError(f"{g.n} processes but only {total} usable slots on topology "
                           f"{topology.name or '<unnamed>'}")
    return topology, g, s, np.random.default_rng(check_seed(seed))


def slot_list(slots):
    """Vertex of every usable slot, vertices in index order, each repeated by its slot count."""
    return np.repeat(np.arange(slots.size), slots).astype(np.int64)


def finish(topology, vertices, slots, strategy):
    return Mapping(topology, np.asarray(vertices, dtype=np.int64), strategy=strategy, slots=slots)


def settle_domain(gamma, hv, procs, slots):
    """One step of a domain recursion (:mod:`~libtopomap.mappers.recursive`,
    :mod:`~libtopomap.mappers.dual_bisection`): a domain that needs no split is settled here.

    A domain without processes is done; one with a single usable vertex (``slots > 0``) takes all
    of ``procs`` into ``gamma``.  Returns ``None`` then, else ``(slots[hv], usable vertices)`` for
    the caller to split.
    """
    if procs.size == 0:
        return None
    sl = slots[hv]
    usable = hv[sl > 0]
    if usable.size == 1:
        gamma[procs] = usable[0]
        return None
    return sl, usable
