"""The portfolio race under MPI: :mod:`libtopomap.portfolio` plus communication, nothing else.

Every rank calls :func:`race` with the same problem and candidates; the ranks of each node share its
cores and memory bound, run the candidates of one plan, and agree on the winner by
:func:`~libtopomap.portfolio.selection_key`; any failure on any rank becomes the same
:class:`~libtopomap.CommError` everywhere.  The steps: docs/internals.rst, "The race under MPI".
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
from mpi4py import MPI

from ..portfolio import (Outcome, PortfolioResult, Skipped, assign_candidates, bound_skip, budget_skip, check_memory,
                         default_max_memory, format_bytes, not_refined, numba_thread_limit, numba_threads, plan_ranks,
                         race_caches, refinement_choice)
from .agreement import agree_arguments, agreed, bcast_array, collective_call, lexmin

__all__ = ["race", "node_layout", "probe_plan", "REPORT_LIMIT"]

#: Up to this many candidates, every rank's report lists them all (one ``allgather`` of small
#: records); beyond it only the winner and the current placement are listed.
REPORT_LIMIT = 4096


def _affinity():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return list(range(os.cpu_count() or 1))


def _assignment_rank(assignment, index):
    """The rank that runs candidate ``index`` in ``assignment`` (``{rank: [index, ...]}``), or None."""
    return next((r for r, mine in assignment.items() if index in mine), None)


def node_layout(comm):
    """Per rank of ``comm``: its node (lowest rank of the node), the node's usable cores and the node's
    default ``max_memory``, as three ``int64`` arrays (the same on every rank).

    Ranks sharing memory (``MPI.COMM_TYPE_SHARED``) form a node; its cores are the union of their
    CPU affinities.
    """
    # The local facts first, agreed on before any collective: a failure on one rank (no affinity, no
    # memory size) reaches every rank as the same CommError instead of leaving them in the Allgather.
    affinity, memory = collective_call(comm, lambda: (_affinity(), int(default_max_memory())),
                                       what="finding the node layout")
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    try:
        leader = node.bcast(comm.Get_rank(), root=0)
        cpus = node.allgather(affinity)
    finally:
        node.Free()
    cores = len(set().union(*map(set, cpus)))
    mine = np.array([leader, cores, memory], dtype=np.int64)
    every = np.empty((comm.Get_size(), 3), dtype=np.int64)
    comm.Allgather(mine, every)
    return every[:, 0].copy(), every[:, 1].copy(), every[:, 2].copy()


def probe_plan(problem, assignment, mapping_ranks, leaders, cores):
    """The probe of a race: ``(candidate indices, rank, numba threads)``, or ``([], None, None)``.

    On a node with more mapping ranks than cores, the ranks would only share the cores: the first
    mapping rank then runs its candidates up to index 1 (the current placement and the first raced
    candidate, ``greedy`` in :data:`~libtopomap.portfolio.STRATEGY_ORDER`, the cheapest construction
    and the one that reaches the optimum on matching tori) alone, with every core of its node, while
    the other ranks wait without spinning.  When one of them reaches the problem's lower bounds the
    race ends there (the serial driver would skip every later candidate too); otherwise the other
    ranks run theirs.  No probe for problems that cannot reach a bound (no positive bound on the
    objective or the hop-bytes), for collective problems, or when the ranks have a core each (they
    run at once and waiting would only add the probe's time).  The same on every rank.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> from libtopomap.portfolio import MappingProblem
    >>> p = MappingProblem(ltm.torus("4x4"), ltm.load_graph("stencil:4x4"))
    >>> probe_plan(p, {0: [0, 1, 5], 1: [2], 2: [3], 3: [4]}, [0, 1, 2, 3], [0, 0, 0, 0], [2, 2, 2, 2])
    ([0, 1], 0, 2)
    >>> probe_plan(p, {0: [0, 1, 5], 1: [2], 2: [3], 3: [4]}, [0, 1, 2, 3], [0, 0, 0, 0], [4, 4, 4, 4])
    ([], None, None)
    """
    none = ([], None, None)
    if not mapping_ranks or len(assignment) < 2 or not hasattr(problem, "construct"):
        return none
    if not getattr(problem, "can_reach_bound", lambda: False)():
        return none
    per_node = {}
    for r in assignment:
        per_node[int(leaders[r])] = per_node.get(int(leaders[r]), 0) + 1
    if not any(per_node[int(leaders[r])] > int(cores[r]) for r in assignment):
        return none
    first = int(mapping_ranks[0])
    ids = [i for i in assignment.get(first, []) if i <= 1]
    return (ids, first, int(cores[first])) if ids else none


def race(comm, problem, make, *, max_memory=None, what="mapping", progress=None):
    """Race a portfolio over the ranks of ``comm`` (collective).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    problem : libtopomap.portfolio.MappingProblem or CollectiveProblem
        The same on every rank.
    make : callable
        ``make(n)`` returns the candidate list for ``n`` mapping ranks (the same on every rank);
        ``make(1)`` must list every (strategy, refinement) pair.
    max_memory : int, optional
        Bytes per node for the strategies running at once (already agreed between ranks).  Default:
        a quarter of the physical memory of the smallest node.
    what : str
        Names the step in error messages.
    progress : callable, optional
        This rank's ``progress(phase, candidate, outcome)``, as for
        :func:`~libtopomap.portfolio.run_portfolio`: called before (``outcome=None``) and after each of
        this rank's constructions and refinements, and, after the constructions' ``allgather``, with every
        rank's constructions (so the best so far is the job's).  Local: no rank waits for it (the CLI
        passes ``Progress.portfolio`` on rank 0 only).

    Returns
    -------
    PortfolioResult
        ``winner.payload`` is the winning result on every rank; ``baseline.payload`` is None.
        ``plan`` holds ``max_memory, mapping_ranks, assignment, threads`` (rank -> numba threads),
        ``estimates`` (``"strategy[+refine]" -> bytes``) and ``probe`` (``rank``, ``candidates``,
        ``ended_race``: see :func:`probe_plan`).

    Raises
    ------
    CommError
        On every rank when any rank failed.
    """
    with contextlib.ExitStack() as stack:  # the caches are released on every rank when the race ends
        # the budget is an option like every other: the same on every rank, or one CommError everywhere;
        # entering the caches is local work, agreed on with it
        agree_arguments(comm, lambda: stack.enter_context(race_caches(problem)), what=f"starting the {what}",
                        options=lambda: {"total_budget": getattr(problem, "total_budget", None),
                                         "routing": getattr(problem, "routing", None)})
        return _race(comm, problem, make, max_memory=max_memory, what=what, progress=progress)


def _race(comm, problem, make, *, max_memory, what, progress):
    rank = comm.Get_rank()
    leaders, cores, node_memory = node_layout(comm)

    def plan():
        budget = int(node_memory.min()) if max_memory is None else check_memory(max_memory)
        base = make(1)
        est = {}
        for c in base[1:]:
            if (c.strategy, c.refine) not in est:
                est[(c.strategy, c.refine)] = int(problem.estimate(c))
        baseline_est = int(problem.estimate(base[0]))
        mapping_ranks, _ = plan_ranks(leaders, list(est.values()) + [baseline_est], budget)
        cands = make(len(mapping_ranks))
        skipped, runnable = [], []
        for c in cands:
            e = baseline_est if c.baseline else est[(c.strategy, c.refine)]
            if c.baseline or e <= budget:
                runnable.append(c.index)
            else:
                skipped.append(Skipped(c, f"{c.label} skipped: estimated {format_bytes(e)} > max_memory "
                                          f"{format_bytes(budget)} per node"))
        assignment = assign_candidates(runnable, mapping_ranks)
        threads = {}
        for r in assignment:
            same_node = sum(1 for q in assignment if leaders[q] == leaders[r])
            threads[r] = numba_threads(cores[r], same_node)
        estimates = {(s + (f"+{rf}" if rf else "")): e for (s, rf), e in est.items()}
        probe = probe_plan(problem, assignment, mapping_ranks, leaders, cores)
        return budget, cands, skipped, assignment, mapping_ranks, threads, estimates, probe
    budget, cands, skipped, assignment, mapping_ranks, threads, estimates, probe = collective_call(
        comm, plan, what=f"planning the {what}")
    probe, probe_rank, probe_threads = probe

    mine = assignment.get(rank, [])
    two_phase = hasattr(problem, "construct")
    # The probe (see probe_plan): the first mapping rank runs its first candidates alone, with every
    # core of its node, and the race ends there when one of them reaches the lower bound.
    clock = []  # this rank's clock starts with its first construction (after the probe for the others)

    def work(ids, nthreads):
        outs, late = [], []
        if not ids:
            return outs, late
        if hasattr(problem, "start_clock") and not clock:
            problem.start_clock()
            clock.append(True)
        with numba_thread_limit(nthreads):
            for i in ids:
                s = budget_skip(problem, cands[i], cands)
                if s is not None:
                    late.append((i, s.reason))
                    continue
                if progress is not None:
                    progress("construct", cands[i], None)
                o = problem.construct(cands[i]) if two_phase else problem.evaluate(cands[i])
                o.rank = rank
                outs.append(o)
                if progress is not None:
                    progress("construct", cands[i], o)
        return outs, late
    outs, late = [], []
    stop_index = None
    if probe:
        with agreed(comm, what, quiet=True):
            outs, late = work(probe if rank == probe_rank else [], probe_threads)
            first_at_bound = min((o.candidate.index for o in outs if o.at_bound), default=None)
        stop_index = comm.bcast(first_at_bound, root=probe_rank)
    if stop_index is None:
        more, more_late = collective_call(comm, work, [i for i in mine if i not in probe], threads.get(rank),
                                          what=what, quiet=True)
        outs, late = outs + more, late + more_late
    late = [x for part in comm.allgather(late) for x in part]
    with agreed(comm, what):
        skipped = sorted(skipped + [Skipped(cands[i], f"{reason} (rank {r})") for r, i, reason in
                                    ((_assignment_rank(assignment, i), i, reason) for i, reason in late)],
                         key=lambda x: x.candidate.index)
    if two_phase:
        parts = comm.allgather(collective_call(comm, lambda: [o.record() for o in outs], what=what))

        def choose():
            # as run_portfolio, which stops at the first construction at the lower bound: the later
            # ones ran here at the same time, but are dropped with the serial driver's reason
            built = [Outcome.from_record(cands[r["index"]], r) for part in parts for r in part]
            if progress is not None:
                for o in built:
                    progress("construct", o.candidate, o)
            stop = min((o for o in built if o.at_bound), key=lambda o: o.candidate.index, default=None)
            kept, dropped = outs, skipped
            if stop is not None:
                kept = [o for o in outs if o.candidate.index <= stop.candidate.index]
                # the later ones: dropped if they ran, never started if the probe found the bound
                listed = {x.candidate.index for x in skipped}
                dropped = sorted(skipped + [bound_skip(c, stop) for c in cands
                                            if c.index > stop.candidate.index and c.index not in listed],
                                 key=lambda x: x.candidate.index)
            return kept, dropped, stop, refinement_choice(built, cands, problem.order,
                                                          reach=getattr(problem, "refine_reach", None))
        outs, skipped, stop, chosen = collective_call(comm, choose, what=what)

        def refine():
            # as run_portfolio: the best construction first, each refinement an equal part of what is left
            todo = sorted((o for o in outs if o.candidate.index in chosen and o.candidate.refine and not o.at_bound),
                          key=lambda o: o.sort_key(problem.order))
            timed = hasattr(problem, "remaining")
            done = {}
            with numba_thread_limit(threads.get(rank)):
                for k, o in enumerate(todo):
                    share = problem.remaining() / (len(todo) - k) if timed else None
                    if progress is not None:
                        progress("refine", o.candidate, None)
                    done[o.candidate.index] = (problem.refine(o.candidate, o, share=share) if timed
                                               else problem.refine(o.candidate, o))
                    if progress is not None:
                        progress("refine", o.candidate, done[o.candidate.index])
            done = [done.get(o.candidate.index) or (not_refined(o, stop) if o.candidate.refine and not o.at_bound
                                                    else o) for o in outs]
            for o in done:
                o.rank = rank
            return done
        outs = collective_call(comm, refine, what=what, quiet=True)

    # Selection: lexicographic minimum over ranks, then the owner broadcasts the result.  Every local
    # step runs inside collective_call, so a failure on one rank reaches the others before the next
    # collective; the collectives between them get only plain values.
    sel = f"selecting the {what}"

    def local_key():
        key = min((o.sort_key(problem.order) for o in outs), default=None)
        return None if key is None else tuple(float(x) for x in key)
    best, owner = lexmin(comm, collective_call(comm, local_key, what=sel))
    win_index = int(best[-1])
    base_rank = mapping_ranks[0]

    def own_records():
        win = next(o for o in outs if o.candidate.index == win_index) if rank == owner else None
        if win is not None and hasattr(problem, "polish"):  # as run_portfolio: the winner's rank polishes it
            with numba_thread_limit(threads.get(rank)):
                win = problem.polish(win)
        base = next(o for o in outs if o.candidate.baseline) if rank == base_rank else None
        return (None if win is None else win.record(),
                None if win is None else np.ascontiguousarray(win.payload, dtype=np.int64).reshape(-1),
                None if base is None else base.record(),
                [(win if win is not None and o.candidate.index == win_index else o).record() for o in outs]
                if len(cands) <= REPORT_LIMIT else None)
    win_rec, win_payload, base_rec, records = collective_call(comm, own_records, what=sel, quiet=True)
    win_rec = comm.bcast(win_rec, root=owner)
    payload = bcast_array(comm, win_payload, owner)
    base_rec = comm.bcast(base_rec, root=base_rank)
    if records is not None:
        records = [r for part in comm.allgather(records) for r in part]

    def outcomes_of():
        winner = Outcome.from_record(cands[win_index], win_rec, payload)
        baseline = Outcome.from_record(cands[0], base_rec)
        if records is not None:
            outcomes = [Outcome.from_record(cands[r["index"]], r) for r in sorted(records, key=lambda r: r["index"])]
        else:
            outcomes = [baseline] if winner.candidate.baseline else [baseline, winner]
        return winner, baseline, outcomes
    winner, baseline, outcomes = collective_call(comm, outcomes_of, what=sel)
    return PortfolioResult(winner, baseline, outcomes, skipped,
                           {"max_memory": budget, "mapping_ranks": list(mapping_ranks), "assignment": assignment,
                            "threads": threads, "estimates": estimates,
                            "probe": {"rank": probe_rank, "candidates": list(probe),
                                      "ended_race": stop_index is not None}})
