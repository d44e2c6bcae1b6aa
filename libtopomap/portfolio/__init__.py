"""One portfolio driver for every mapping race: candidates, budgets, scores, memory, selection.

``libtopomap map``, the MPI layer and :func:`~libtopomap.reorder_for_collective` all race a *portfolio*
of candidates (Hoefler & Snir, ICS'11, section 4.2); this package holds everything of that race except
communication (:func:`make_candidates`, :class:`MappingProblem`, :func:`selection_key`,
:func:`plan_ranks`, :func:`run_portfolio`), so the same inputs give the same winner offline or under MPI.
It never imports mpi4py.  The parts: docs/internals.rst, "The portfolio".
"""

from __future__ import annotations

import contextlib

from .budget import (CONSTRUCTION_SHARE, DEFAULT_TOTAL_BUDGET, assign_candidates, check_memory, default_iterations,
                     default_max_memory, estimate_memory, estimate_seconds, format_bytes, numba_thread_limit,
                     numba_threads, plan_ranks, topology_family)
from .candidates import Candidate, candidate_seed, make_candidates
from .problems import CAPPED_PASSES, PARTITIONING, REFINE_GAIN, CollectiveProblem, MappingProblem
from .selection import (REFINE_BEST, STRATEGY_ORDER, Outcome, PortfolioResult, Skipped, refinement_choice, select,
                        selection_key)

__all__ = ["STRATEGY_ORDER", "Candidate", "Outcome", "Skipped", "PortfolioResult", "candidate_seed",
           "make_candidates", "selection_key", "select", "REFINE_BEST", "refinement_choice", "not_refined",
           "bound_skip", "budget_skip", "MappingProblem", "CollectiveProblem", "lower_bounds",
           "estimate_memory", "default_max_memory", "default_iterations", "format_bytes", "check_memory", "plan_ranks",
           "assign_candidates", "numba_threads", "numba_thread_limit", "run_portfolio", "DEFAULT_TOTAL_BUDGET",
           "CONSTRUCTION_SHARE", "estimate_seconds", "race_caches", "CAPPED_PASSES", "PARTITIONING", "REFINE_GAIN",
           "topology_family"]


def __getattr__(name):
    # lower_bounds is defined in libtopomap.metrics, which imports numba: imported on first use, so that
    # ``import libtopomap.portfolio`` stays light (the CLI's parsers import it)
    if name == "lower_bounds":
        from ..metrics import lower_bounds

        return lower_bounds
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------------- serial driver
def _skip_reason(candidate, est, max_memory):
    return (f"{candidate.label} skipped: estimated {format_bytes(est)} > max_memory "
            f"{format_bytes(max_memory)} per node")


def bound_skip(candidate, stop):
    """The :class:`Skipped` entry of a candidate after ``stop``, the first outcome at the lower bound."""
    return Skipped(candidate, f"{candidate.label} skipped: {stop.label} (candidate {stop.candidate.index}) "
                              "reached the lower bound")


def budget_skip(problem, candidate, candidates=None):
    """The :class:`Skipped` entry of a construction not worth its work or that cannot finish in time,
    else ``None``.

    The rule of every driver (:func:`run_portfolio`, and each mapping rank of
    :func:`libtopomap.mpi.driver.race` for its own candidates): a raced candidate is skipped when
    another strategy of the race (``candidates``) does its work for less on a dense graph
    (:meth:`MappingProblem.dominated_by`), or when its estimated seconds
    (:meth:`MappingProblem.estimate_seconds`) exceed what is left of the constructions' share of the
    problem's ``total_budget`` on the process that would run it
    (:meth:`MappingProblem.construction_time_left`).  The current placement is never skipped;
    problems without a budget (:class:`CollectiveProblem`) never skip.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> p = MappingProblem(ltm.torus("8x8"), ltm.load_graph("stencil:8x8"), total_budget=1e-9)
    >>> c = make_candidates(["greedy"], seed=0)
    >>> budget_skip(p, c[0]) is None, budget_skip(p, c[1]).reason.split(":")[0]
    (True, 'greedy skipped')
    """
    if candidate.baseline or not hasattr(problem, "construction_time_left"):
        return None
    if candidates is not None:
        by = problem.dominated_by(candidate, [c.strategy for c in candidates])
        if by is not None:
            per = problem.graph.n_edges / problem.graph.n
            return Skipped(candidate, f"{candidate.label} skipped: a dense graph ({per:.0f} edges per process), "
                                      f"partitioned by {by} for less work")
    secs, left = problem.estimate_seconds(candidate), problem.construction_time_left()
    if secs <= left:
        return None
    return Skipped(candidate, f"{candidate.label} skipped: estimated {secs:.3g} s > {max(left, 0):.3g} s left of "
                              f"the constructions' share of the {problem.total_budget:.3g} s budget")


def not_refined(outcome, stop=None):
    """A construction left unrefined by :func:`refinement_choice`, with the reason in its note:
    ``stop``, the first outcome at the lower bound, or not among the best constructions (those that
    cannot win included)."""
    if outcome.candidate.refine and not outcome.note:
        why = (f"{stop.label} (candidate {stop.candidate.index}) reached the lower bound" if stop is not None
               else "not among the best constructions")
        outcome.note = f"{outcome.candidate.refine} skipped: {why}"
    return outcome


def race_caches(problem):
    """The block of one race: what its candidates share (the refinements' nearest slot vertices,
    :func:`libtopomap.distances.near_slot_cache`) lives until the race ends."""
    topology = getattr(problem, "topology", None)
    if topology is None:
        return contextlib.nullcontext()
    from ..distances import near_slot_cache

    return near_slot_cache(topology)


def run_portfolio(problem, candidates, *, max_memory=None, threads=None, on_outcome=None, progress=None):
    """Run every candidate here, one after the other, and select the winner.

    Mapping problems (those with ``construct`` and ``refine``) run in two phases: every candidate's
    construction in index order, stopping at the first one at the lower bound (the remaining
    candidates are skipped: nothing can beat it), then the refinement of the best constructions only
    (:func:`refinement_choice`: the best few, less those that cannot win even with the most a refinement
    was measured to gain), the best first; the other candidates keep their construction.
    Collective problems run each candidate in one go.

    A mapping race keeps within the problem's ``total_budget`` (:class:`MappingProblem`): the clock
    starts here; a construction whose estimated time (:meth:`MappingProblem.estimate_seconds`)
    exceeds what is left of the constructions' share is skipped with the reason; each refinement
    gets an equal part of what is left when it starts (the last one all of it).  Only a
    construction that overruns its estimate can take the race past the budget.  The winner is then
    polished where the problem does so (:meth:`MappingProblem.polish`: hop-bytes objectives).

    Parameters
    ----------
    problem : MappingProblem or CollectiveProblem
    candidates : list of Candidate
        From :func:`make_candidates` (candidate 0, the current placement, is always run).
    max_memory : int, optional
        Bytes: a candidate estimated above it is skipped with a reason (default: a quarter of the
        physical memory).
    threads : int, optional
        Numba threads while running (default: numba's own).
    on_outcome : callable, optional
        Called with each :class:`Outcome` as it completes, and with the winner again when
        :meth:`MappingProblem.polish` improved it.
    progress : callable, optional
        ``progress(phase, candidate, outcome)``, for progress displays: ``phase`` is ``"construct"``
        or ``"refine"``; called with ``outcome=None`` when the phase of ``candidate`` starts, and with
        its :class:`Outcome` when it ends (``libtopomap.cli._progress.Progress.portfolio``).

    Returns
    -------
    PortfolioResult
    """
    max_memory = check_memory(max_memory)
    two_phase = hasattr(problem, "construct")
    timed = hasattr(problem, "construction_time_left")
    if timed:
        problem.start_clock()
    outcomes, skipped = {}, []
    estimates = {}
    stop = None
    with numba_thread_limit(threads) if threads else contextlib.nullcontext(), race_caches(problem):
        for c in candidates:
            est = problem.estimate(c)
            estimates[c.index] = est
            if not c.baseline and est > max_memory:
                skipped.append(Skipped(c, _skip_reason(c, est, max_memory)))
                continue
            if stop is not None:
                skipped.append(bound_skip(c, stop))
                continue
            late = budget_skip(problem, c, candidates)
            if late is not None:
                skipped.append(late)
                continue
            if progress is not None:
                progress("construct", c, None)
            o = problem.construct(c) if two_phase else problem.evaluate(c)
            outcomes[c.index] = o
            if progress is not None:
                progress("construct", c, o)
            if o.at_bound:
                stop = o
            if on_outcome is not None and not (two_phase and c.refine and not o.at_bound):
                on_outcome(o)
        if two_phase:
            chosen = refinement_choice(outcomes.values(), candidates, problem.order,
                                       reach=getattr(problem, "refine_reach", None))
            # the best construction first; each refinement gets an equal part of what is left
            todo = sorted((o for i, o in outcomes.items() if i in chosen), key=lambda o: o.sort_key(problem.order))
            for k, o in enumerate(todo):
                i = o.candidate.index
                share = problem.remaining() / (len(todo) - k) if timed else None
                if progress is not None:
                    progress("refine", o.candidate, None)
                outcomes[i] = problem.refine(o.candidate, o, share=share) if timed else problem.refine(o.candidate, o)
                if progress is not None:
                    progress("refine", o.candidate, outcomes[i])
            for i, o in outcomes.items():
                if o.candidate.refine and not o.at_bound and i not in chosen:
                    outcomes[i] = not_refined(o, stop)
            for i in sorted(outcomes):
                o = outcomes[i]
                if on_outcome is not None and o.candidate.refine and not o.at_bound:
                    on_outcome(o)
        outcomes = [outcomes[i] for i in sorted(outcomes)]
        winner = select(outcomes, problem.order)
        if hasattr(problem, "polish"):
            polished = problem.polish(winner)
            if polished is not winner:
                outcomes = [polished if o is winner else o for o in outcomes]
                winner = polished
                if on_outcome is not None:
                    on_outcome(polished)
    baseline = next(o for o in outcomes if o.candidate.baseline)
    return PortfolioResult(winner, baseline, outcomes, skipped,
                           {"max_memory": max_memory, "estimates": estimates, "mapping_ranks": None,
                            "threads": threads})
