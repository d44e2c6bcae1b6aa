"""Threshold accepting refinement (Hoefler & Snir, ICS'11, section 3.5; Dueck & Scheuer 1990)."""

from __future__ import annotations

import numpy as np

from ._common import finish, prepare
from .baselines import initial_vertices
from .objectives import check_objective, local_search, objective_value

__all__ = ["refine_threshold_accepting", "ta_thresholds"]

# Threshold at the start of the walk, in units of the median size of a worsening move.  Measured on
# a 512-process SpMV pattern on an 8x8x8 torus (4 s, ~18k moves): 0.005-0.02 beat 0.25-4 (walks that
# never come back within the budget) and plain descent by a few percent.
TA_START = 0.01
# Moves per threshold level (the paper's inner loop of 20 iterations).
TA_INNER = 20


def ta_thresholds(progress, size, scale, *, start=TA_START, inner=TA_INNER):
    """Thresholds of the next ``size`` moves (one chunk): constant within the chunk, falling
    linearly with the budget used (``progress`` in [0, 1]) from ``start * scale`` to 0."""
    return np.full(size, start * scale * (1.0 - min(max(progress, 0.0), 1.0)))


def refine_threshold_accepting(topology, graph, mapping=None, *, slots=None, seed=None, objective="congestion",
                               time_budget=None, iterations=None, warmup=0.15):
    """Improve a mapping by threshold accepting: a random walk that also takes worse moves, as long
    as they are worse by less than a threshold that falls to zero over the budget.

    Moves swap two random processes (or move one to a free slot).  Each move is evaluated
    incrementally: only the edges of the moved processes change, and for the congestion objective
    only their ECMP flows are removed from and re-added to the per-arc traffic (one single-pair
    BFS per edge), so a move costs ``O(degree x path ball + arcs)`` and P = 1728 runs at tens of
    thousands of moves per second.  The best mapping seen is returned.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    mapping : Mapping or array_like of int, optional
        Starting placement (default: the usable slots filled in vertex order).
    slots : array_like of int, optional
    seed : int, optional
    objective : {"congestion", "dilation", "hopbytes"}
        For congestion the walk minimises ``max c + sqrt(mean c^2)`` over arcs (the smooth
        term breaks the plateaus of the maximum); the returned mapping is the best by that score.
    time_budget : float, optional
        Seconds (the threshold schedule follows the fraction of the budget used).
    iterations : int, optional
        Moves (default 20000 when no time budget is given).
    warmup : float
        For the congestion objective, the share of the time budget first spent on a hop-bytes walk
        (with an iteration budget: as many hop-bytes moves).  0 disables it.  On a 512-process
        SpMV pattern on an 8x8x8 torus, 4 s: max congestion 238.6 without, 217.4 with 0.5 s warm-up.

    Returns
    -------
    Mapping
        Never worse than ``mapping`` in ``objective``.

    Notes
    -----
    LibTopoMap's loop never walked: each trial swapped two entries of the *input* mapping and kept
    the best.  Here accepted moves change the current state, thresholds decrease in a staircase
    (one level per chunk of 2000 moves; the paper used 20 per level), and the threshold scale is the
    median worsening seen in a first descent chunk.  Nine moves in ten put a process next to one of
    its communication partners (one of the 12 nearest slot vertices of the partner's vertex), the
    rest go to a uniformly random slot.  Congestion is the exact ECMP model of section 2.5,
    not Algorithm 3's estimate.

    References
    ----------
    T. Hoefler and M. Snir, ICS'11, section 3.5.
    G. Dueck and T. Scheuer, "Threshold accepting: a general purpose optimization algorithm appearing
    superior to simulated annealing", J. Comput. Phys. 90(1), 1990.
    """
    topology, g, slots, rng = prepare(topology, graph, slots, seed)
    check_objective(objective)
    start = initial_vertices(topology, g, slots, mapping)
    current = start
    if objective == "congestion" and warmup > 0:
        # hop-bytes moves cost ~1000x less than ECMP re-routing: shorten the paths first
        wb = None if time_budget is None else warmup * time_budget
        wi = None if iterations is None else iterations
        current, _ = local_search(topology, g, current, slots, "hopbytes", thresholds_fn=ta_thresholds, rng=rng,
                                  time_budget=wb, iterations=wi)
        if time_budget is not None:
            time_budget = time_budget * (1.0 - warmup)
    best, _stats = local_search(topology, g, current, slots, objective, thresholds_fn=ta_thresholds, rng=rng,
                                time_budget=time_budget, iterations=iterations)
    if objective_value(topology, g, best, objective) > objective_value(topology, g, start, objective):
        best = start
    return finish(topology, best, slots, "ta")
