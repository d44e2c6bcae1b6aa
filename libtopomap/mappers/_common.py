"""Input validation and result wrapping shared by all mapping strategies."""

from __future__ import annotations

import numpy as np

from ..commgraph import CommGraph, as_commgraph
from ..errors import CommGraphError, MappingError
from ..mapping import Mapping

__all__ = ["prepare", "finish", "check_slots", "slot_list"]


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
    return s.astype(np.int64)


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
    return topology, g, s, np.random.default_rng(seed)


def slot_list(slots):
    """Vertex of every usable slot, vertices in index order, each repeated by its slot count."""
    return np.repeat(np.arange(slots.size), slots).astype(np.int64)


def finish(topology, vertices, slots, strategy):
    return Mapping(topology, np.asarray(vertices, dtype=np.int64), strategy=strategy, slots=slots)
