"""Two-opt rank placement (Cui 2024, section 3.3.2) applied to a general communication graph."""

from __future__ import annotations

import numpy as np

from ._common import finish, prepare
from .baselines import initial_vertices
from .objectives import check_objective, local_search

__all__ = ["refine_two_opt"]


def _zeros(progress, size, scale):
    return np.zeros(size)


def refine_two_opt(topology, graph, mapping=None, *, slots=None, seed=None, objective="congestion", time_budget=None,
                   iterations=None, stall=None):
    """Improve a mapping by random swaps that are kept only when the objective drops.

    Two random processes swap vertices (or one process moves to a free slot); the move is kept if
    the objective decreases, otherwise undone.  Each move is evaluated incrementally: only the
    edges of the moved processes are re-measured (their hops, or for congestion their ECMP flows).

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    mapping : Mapping or array_like of int, optional
        Starting placement (default: the usable slots filled in vertex order).
    slots : array_like of int, optional
        Usable slots per vertex (default ``topology.slots``).
    seed : int, optional
    objective : {"congestion", "dilation", "hopbytes"}
    time_budget : float, optional
        Seconds.
    iterations : int, optional
        Moves to try (default 20000 when no time budget is given).
    stall : int, optional
        Stop after this many moves in a row without improvement (default ``max(2000, 20 P)``).

    Returns
    -------
    Mapping
        The best mapping seen (for congestion: by the search score ``max c + sqrt(mean c^2)``;
        :func:`map_processes` keeps the construction when the refinement is not better).

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, section 3.3.2 (two-opt rank placement).
    """
    topology, g, slots, rng = prepare(topology, graph, slots, seed)
    check_objective(objective)
    start = initial_vertices(topology, g, slots, mapping)
    stall = max(2000, 20 * g.n) if stall is None else int(stall)
    best, _stats = local_search(topology, g, start, slots, objective, thresholds_fn=_zeros, rng=rng,
                                time_budget=time_budget, iterations=iterations, stall_limit=stall)
    return finish(topology, best, slots, "two-opt")
