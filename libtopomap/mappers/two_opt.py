"""Two-opt rank placement (Cui 2024, section 3.3.2) applied to a general communication graph.

A schedule over the one local-search engine (:mod:`libtopomap.mappers.local_search`): every move is
accepted only when it lowers the objective (threshold 0), until the budget is spent, the search
stalls, or the objective reaches its lower bound.
"""

from __future__ import annotations

import numpy as np

from ..commgraph import sym_graph
from ._refine import run_refinement
from .local_search import local_search, work_moves
from .threshold_accepting import DEFAULT_MOVES

__all__ = ["refine_two_opt"]


def _zeros(progress, size, scale):
    return np.zeros(size)


def two_opt(topology, g, start, slots, objective, *, rng, time_budget=None, iterations=None, stall=None,
            t_start=None, routing=None):
    """The search behind :func:`refine_two_opt`, on validated input.

    Returns ``(vertices, start_value, best_value, stats)`` as
    :func:`~libtopomap.mappers.threshold_accepting.threshold_accepting` does.  ``iterations``
    (default 20,000 without a ``time_budget``) counts moves of
    :data:`~libtopomap.mappers.local_search.WORK_DEGREE` edges, as threshold accepting's
    (:func:`~libtopomap.mappers.local_search.work_moves`: fewer moves on a dense graph).
    """
    g = sym_graph(g)
    stall = max(2000, 20 * g.n) if stall is None else int(stall)
    if iterations is None and time_budget is None:
        iterations = DEFAULT_MOVES
    if iterations is not None:
        iterations = work_moves(iterations, g)
    search_objective = "hopbytes" if objective == "dilation" else objective
    best, stats = local_search(topology, g, np.asarray(start, np.int64), slots, search_objective, thresholds_fn=_zeros,
                               rng=rng, time_budget=time_budget, iterations=iterations, stall_limit=stall,
                               t_start=t_start, calibrate=False, routing=routing)
    if stats["best_value"] > stats["start_value"]:
        return np.asarray(start), stats["start_value"], stats["start_value"], stats
    return best, stats["start_value"], stats["best_value"], stats


def refine_two_opt(topology, graph, mapping=None, *, slots=None, seed=None, objective="congestion", time_budget=None,
                   iterations=None, stall=None, routing=None):
    """Improve a mapping by random swaps that are kept only when the objective drops.

    Two random processes swap vertices (or one process moves to a free slot); the move is kept if
    the objective decreases, otherwise undone.  Each move is evaluated incrementally by the engine
    of :mod:`~libtopomap.mappers.local_search`: only the edges of the moved processes are
    re-measured (their oracle hop distances, or for congestion their ECMP flows).

    Parameters
    ----------
    topology, graph, mapping, slots
        As in :func:`~libtopomap.mappers.threshold_accepting.refine_threshold_accepting`.
    seed : int, optional
    objective : {"congestion", "dilation", "hopbytes"}
    time_budget : float, optional
        Seconds of wall time, setup and final evaluation included.
    iterations : int, optional
        Moves to try (default 20000 when no time budget is given).
    stall : int, optional
        Stop after this many moves in a row without improvement (default ``max(2000, 20 P)``).
    routing : str or Routing, optional
        Routing model of the congestion objective (:mod:`libtopomap.routing`: ``"minimal"`` on a
        dragonfly, ``"dimension-order"`` on a torus, ``"native"``...); default ``ecmp``.  Hop
        objectives use hop distances.

    Returns
    -------
    Mapping
        The best mapping seen, never worse than ``mapping`` in ``objective``.

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, section 3.3.2 (two-opt rank placement).
    """
    return run_refinement(two_opt, "two-opt", topology, graph, mapping, slots=slots, seed=seed, objective=objective,
                          time_budget=time_budget, iterations=iterations, stall=stall, routing=routing)
