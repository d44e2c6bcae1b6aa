"""Threshold accepting refinement (Hoefler & Snir, ICS'11, section 3.5; Dueck & Scheuer 1990).

A schedule over the one local-search engine (:mod:`libtopomap.mappers.local_search`): the
acceptance level of a move is a threshold that falls linearly to zero over the budget.
"""

from __future__ import annotations

import time

import numpy as np

from .local_search import SwapState, local_search, run_refinement

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


def _stall(n):
    """Moves without improvement after which a threshold walk stops (it has converged)."""
    return max(5000, 50 * n)


def threshold_accepting(topology, g, start, slots, objective, *, rng, time_budget=None, iterations=None,
                        warmup=0.15, t_start=None):
    """The search behind :func:`refine_threshold_accepting`, on validated input.

    Returns
    -------
    vertices : numpy.ndarray
        Never worse than ``start`` in ``objective`` (``start`` itself otherwise).
    start_value, best_value : float
        The objective (hop-bytes for ``dilation``) of ``start`` and of the result, as evaluated by
        the engine (exact, up to float rounding of the running congestion).
    stats : dict
        Of the last walk (see :func:`~libtopomap.mappers.local_search.local_search`).
    """
    t0 = time.perf_counter() if t_start is None else t_start
    start = np.asarray(start, np.int64)
    search_objective = "hopbytes" if objective == "dilation" else objective
    state = SwapState(topology, g, start, slots, search_objective)
    start_value = state.current_max() if objective == "congestion" else state.score
    current = start
    budget = time_budget
    if objective == "congestion" and warmup > 0:
        from .local_search import congestion_lower_bound

        if start_value > congestion_lower_bound(topology, state.sym, slots) * (1 + 1e-12):
            # hop-bytes moves cost ~1000x less than ECMP re-routing: shorten the paths first
            wb = None if time_budget is None else max(warmup * time_budget - (time.perf_counter() - t0), 0.0)
            if wb is None or wb > 0:
                current, _ = local_search(topology, state.sym, current, slots, "hopbytes",
                                          thresholds_fn=ta_thresholds, rng=rng, time_budget=wb, iterations=iterations,
                                          stall_limit=_stall(g.n))
            if time_budget is not None:
                budget = max(time_budget - (time.perf_counter() - t0), 0.0)
                t0 = time.perf_counter()
            if not np.array_equal(current, start):
                state = None  # a new state from the warmed-up mapping
    best, stats = local_search(topology, g if state is None else state.sym, current, slots, search_objective,
                               thresholds_fn=ta_thresholds, rng=rng, time_budget=budget, iterations=iterations,
                               stall_limit=_stall(g.n), state=state, t_start=t0)
    if stats["best_value"] > start_value:
        return start, start_value, start_value, stats
    return best, start_value, stats["best_value"], stats


def refine_threshold_accepting(topology, graph, mapping=None, *, slots=None, seed=None, objective="congestion",
                               time_budget=None, iterations=None, warmup=0.15):
    """Improve a mapping by threshold accepting: a random walk that also takes worse moves, as long
    as they are worse by less than a threshold that falls to zero over the budget.

    Moves swap two processes or shift one to a free slot (nine in ten next to a communication
    partner).  Each move is evaluated incrementally by the engine of
    :mod:`~libtopomap.mappers.local_search`: only the edges of the moved processes change (oracle
    hop distances, or for congestion their ECMP flows removed and re-added), so a move costs
    ``O(degree x path region)`` and no distance matrix is built.  The best mapping seen is returned.

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
        term breaks the plateaus of the maximum); the returned mapping is the better by the maximum
        of the best-by-score and best-by-maximum states.
    time_budget : float, optional
        Seconds of wall time for the whole call, setup and final evaluation included (checked
        every ~20 ms).
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
    The walk stops early when the objective reaches a lower bound (every edge at dilation 1; the
    largest per-process volume over the largest injection capacity for congestion) or after
    ``max(5000, 50 P)`` moves without improvement.  LibTopoMap's loop never walked: each trial
    swapped two entries of the *input* mapping and kept the best.  Here accepted moves change the
    current state, thresholds decrease in a staircase (one level per compiled chunk of ~20 ms; the
    paper used 20 moves per level), and the threshold scale is the median worsening seen in a first
    descent chunk.  Congestion is the exact ECMP model of section 2.5, not Algorithm 3's estimate.

    References
    ----------
    T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for Large-scale Parallel
    Architectures", ICS'11, section 3.5 (threshold accepting).
    G. Dueck and T. Scheuer, "Threshold accepting: a general purpose optimization algorithm appearing
    superior to simulated annealing", J. Comput. Phys. 90(1), 1990.
    """
    return run_refinement(threshold_accepting, "ta", topology, graph, mapping, slots=slots, seed=seed,
                          objective=objective, time_budget=time_budget, iterations=iterations, warmup=warmup)
