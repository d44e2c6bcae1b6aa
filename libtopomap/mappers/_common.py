"""Input validation (the strategies' one door) and result wrapping shared by all mapping strategies."""

from __future__ import annotations

import functools

import numpy as np

from ..errors import MappingError
from ..mapping import Mapping
from ..validation import check_graph, check_seed, check_slots

__all__ = ["prepare", "validated", "finish", "check_slots", "slot_list", "settle_domain"]


def prepare(topology, graph, slots, seed):
    """The door of every strategy: check (topology, graph, slots, seed) once; returns (topology, CommGraph,
    slots as ``int64``, seed as an ``int`` or None).

    Raises
    ------
    CommGraphError
        Bad graph (negative/NaN weights are rejected by :class:`CommGraph`).
    MappingError
        Empty graph, bad slots, or more processes than usable slots.
    ArgumentError, ArgumentTypeError
        A bad seed.
    """
    g = check_graph(graph)
    if g.n == 0:
        raise MappingError("the communication graph is empty: there are no processes to map")
    s = check_slots(topology, slots)
    total = int(s.sum())
    if g.n > total:
        raise MappingError(f"{g.n} processes but only {total} usable slots on topology "
                           f"{topology.name or '<unnamed>'}")
    return topology, g, s, check_seed(seed)


def validated(strategy):
    """The public function of a mapping strategy: :func:`prepare`, then ``strategy`` on the checked inputs.

    scipy's pattern (``validate_graph``, then the kernel): ``strategy(topology, graph, *, slots, seed, **options)``
    trusts that ``graph`` is a :class:`~libtopomap.CommGraph` with processes, ``slots`` checked ``int64`` slots that
    hold them and ``seed`` an ``int`` or None.  Callers that checked their inputs already (:func:`map_processes` and
    so the portfolio's race, the multicore step's quotient graph) call it as ``public.trusted``, so one race checks
    its inputs once rather than once per candidate.
    """
    @functools.wraps(strategy)
    def public(topology, graph, *, slots=None, seed=None, **options):
        topology, g, slots, seed = prepare(topology, graph, slots, seed)
        return strategy(topology, g, slots=slots, seed=seed, **options)

    public.trusted = strategy
    return public


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
