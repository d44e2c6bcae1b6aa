"""Input validation and result wrapping shared by all mapping strategies."""

from __future__ import annotations

import numpy as np

from ..commgraph import CommGraph, as_commgraph
from ..errors import ArgumentError, ArgumentTypeError, CommGraphError, MappingError
from ..mapping import Mapping
from ..topology import SWITCH

__all__ = ["prepare", "finish", "check_slots", "slot_list", "settle_domain"]


def check_slots(topology, slots):
    """Validate per-vertex usable slots (default ``topology.slots``) -> ``int64`` array."""
    if slots is None:
        return topology.slots.astype(np.int64)
    s = np.asarray(slots)
    if s.shape != (topology.n_vertices,):
        raise MappingError(f"slots must have one entry per vertex ({topology.n_vertices}), got shape {s.shape}")
    sf = s.astype(np.float64)
    if not np.all(np.isfinite(sf)) or np.any(sf != np.round(sf)):
        raise MappingError("slots must be integers")
    neg = np.flatnonzero(sf < 0)
    if neg.size:
        raise MappingError(f"vertex {topology.names[neg[0]]!r} has negative slots {s[neg[0]]}")
    switch = np.flatnonzero((sf > 0) & (np.asarray(topology.kinds) == SWITCH))
    if switch.size:
        raise MappingError(f"slots put {s[switch[0]]} process(es) on switch {topology.names[switch[0]]!r}; "
                           "processes run on hosts only")
    return s.astype(np.int64)


def check_seed(seed):
    """``seed`` must be None or a non-negative integer (what :func:`numpy.random.default_rng` takes)."""
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ArgumentTypeError(f"seed must be a non-negative integer or None, got {seed!r}")
    if seed < 0:
        raise ArgumentError(f"seed must be a non-negative integer, got {seed}")
    return int(seed)


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
