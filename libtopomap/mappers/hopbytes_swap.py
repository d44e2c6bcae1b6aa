"""Swap local search on hop-bytes over the communication-graph neighbourhood N_C^d (VieM).

Schulz and Träff's local search for process mapping (the sparse quadratic assignment problem) tries
swaps of the processes of a pair and keeps a swap when the communication cost ``sum w x hops`` drops;
its neighbourhood ``N_C^d`` holds the pairs of processes at distance at most ``d`` in the
communication graph (``d = 1``: the pairs that communicate), which is far smaller than all pairs
and holds almost all improving swaps.  VieM's default is ``d = 10``.

A schedule of the one local-search engine (:mod:`libtopomap.mappers.local_search`): the pairs are
enumerated (:func:`libtopomap._kernels.bfs.bfs_balls`) and handed to the engine's walk as an explicit
move list with threshold just below zero, so each swap is evaluated incrementally from the two
processes' neighbour lists and oracle distances.
"""

from __future__ import annotations

import time

import numpy as np

from .._kernels.bfs import bfs_balls
from ..commgraph import sym_graph
from ..errors import MappingError
from ..metrics import hops_lower_bound
from ._refine import run_refinement
from .local_search import SwapState, past, work_moves

__all__ = ["refine_hopbytes_swap", "hopbytes_swap", "threshold_swap_passes", "nc_moves", "nc_cap", "batch_size",
           "chunk_moves", "ragged_arange", "NC_DEPTH", "NC_CAP", "BATCH"]

#: VieM's default communication-graph distance of the swap neighbourhood ``N_C^d``
#: (``communication_neighborhood_dist = 10`` in VieM's default configuration).
NC_DEPTH = 10
#: Partners per process at the most (the nearest in breadth-first order): keeps a batch of moves
#: ``O(processes x cap)`` when the communication graph is dense (VieM lists every pair).
NC_CAP = 4096
#: Processes whose moves are listed at once (at most ``BATCH x NC_CAP`` swaps, plus the shifts).
BATCH = 256
# Target wall time of one compiled chunk, and its most moves (its levels and deltas arrays); on a
# dense graph the most moves shrink with the degree (:func:`~libtopomap.mappers.local_search.work_moves`:
# 2^16 moves of 16 edges, ~10-20 ms), so a deadline is checked that often whatever the degree.
_CHUNK_SECONDS = 0.02
_CHUNK_MAX = 1 << 16


def nc_cap(sym, cap=NC_CAP):
    """Partners per process listed by :func:`nc_moves` on ``sym``: ``cap`` up to mean degree
    :data:`~libtopomap.mappers.local_search.WORK_DEGREE`, fewer above (the same edge work per process:
    each listed swap costs ``O(degree)`` to list and to evaluate)."""
    return work_moves(cap, sym)


def batch_size(sym):
    """Processes whose moves are listed at once: :data:`BATCH`, fewer on a dense graph (as :func:`nc_cap`)."""
    return work_moves(BATCH, sym)


def chunk_moves(sym):
    """Moves of one compiled chunk at the most on ``sym`` (fewer on a dense graph, as :func:`nc_cap`)."""
    return work_moves(_CHUNK_MAX, sym)


def nc_moves(state, procs, depth, cap=None):
    """Moves of ``procs`` in ``N_C^depth``: ``(a, b)`` for the engine's walk.

    Swaps with every process ``b > a`` within ``depth`` hops of ``a`` in the communication graph
    (breadth-first order, at most ``cap``), then, when the allocation has free slots, shifts of ``a``
    to a free slot (``b = -slot - 1``) on each vertex near one of its partners' vertices (the
    engine's :func:`~libtopomap.mappers.local_search.near_slot_vertices`).  ``cap``: default
    :func:`nc_cap` of the graph.
    """
    s = state.sym
    cap = nc_cap(s) if cap is None else cap
    procs = np.asarray(procs, np.int64)
    ptr, idx = bfs_balls(s.indptr, s.indices, s.n, procs, int(depth), int(cap))
    a = np.repeat(procs, np.diff(ptr))
    b = idx
    if state.slot_vertex.size > s.n:
        # one free slot per vertex (the last one: slots of a vertex are interchangeable)
        free = np.flatnonzero(state.occupant < 0)
        free_slot = np.full(state.slot_first.size, -1, np.int64)
        free_slot[state.slot_vertex[free]] = free
        # only the first ``cap`` entries of a process count (below), and every partner's vertex has
        # nearest slot vertices, so its first ``cap`` partners list them all: O(cap), not O(degree)
        deg = np.minimum(s.indptr[procs + 1] - s.indptr[procs], cap)
        pa = np.repeat(procs, deg)
        px = s.indices[ragged_arange(s.indptr[procs], deg)]
        vx = state.proc_vertex[px]
        nn = state.near_ptr[vx + 1] - state.near_ptr[vx]
        fa = np.repeat(pa, nn)
        fw = state.near_idx[ragged_arange(state.near_ptr[vx], nn)]
        fs = free_slot[fw]
        keep = fs >= 0
        # at most ``cap`` shifts per process, the nearest partners' first (sparse graphs list far
        # fewer; a dense one would list degree x near-slot vertices, each costing O(degree))
        per = np.bincount(np.repeat(np.arange(procs.size), deg), weights=nn, minlength=procs.size).astype(np.int64)
        if per.size and per.max() > cap:
            rank = np.arange(fa.size) - np.repeat(np.cumsum(per) - per, per)
            keep &= rank < cap
        a = np.concatenate([a, fa[keep]])
        b = np.concatenate([b, -fs[keep] - 1])
    return a, b


def ragged_arange(starts, counts):
    """``concatenate([arange(s, s + c) for s, c in zip(starts, counts)])`` without the loop."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + np.arange(total) - offs


def _depths(depth):
    """Neighbourhood depths of the successive rounds: 1, 2, 4, ... up to ``depth``."""
    out = [1]
    while out[-1] < depth:
        out.append(min(2 * out[-1], depth))
    return out


def hopbytes_swap(topology, g, start, slots, objective="hopbytes", *, rng, time_budget=None, iterations=None,
                  depth=NC_DEPTH, stall=None, t_start=None, routing=None, deadline=None):
    """The search behind :func:`refine_hopbytes_swap`, on validated input.

    Returns ``(vertices, start_value, best_value, stats)`` as
    :func:`~libtopomap.mappers.threshold_accepting.threshold_accepting` does, the values being
    hop-bytes whatever ``objective`` (the search minimises hop-bytes).  ``stats``: ``iterations``,
    ``accepted``, ``passes``, ``depth`` (of the last pass), ``trace`` (hop-bytes after each pass),
    ``stopped`` (``"local optimum"``, ``"budget"``, ``"moves"``, ``"stall"`` or ``"bound"``),
    ``start_value``, ``best_value``, ``seconds``.  ``routing``: the model whose hops count
    (:class:`~libtopomap.mappers.local_search.SwapState`; default ``ecmp``, the hop distance).
    ``iterations`` counts moves of :data:`~libtopomap.mappers.local_search.WORK_DEGREE` edges
    (:func:`~libtopomap.mappers.local_search.work_moves`: fewer moves on a dense graph).
    ``deadline`` (a ``time.perf_counter()`` value) stops the search between compiled chunks
    (``stopped``: ``"budget"``) without changing them, so a search that ends before it is the same
    for the same ``rng`` state; ``time_budget`` sizes the chunks by the clock.
    """
    if int(depth) < 1:
        raise MappingError(f"the swap neighbourhood depth must be at least 1, got {depth}")
    t0 = time.perf_counter() if t_start is None else t_start
    hard_stop = deadline
    deadline = None if time_budget is None else t0 + time_budget
    state = SwapState(topology, sym_graph(g), np.asarray(start, np.int64), slots, "hopbytes", routing=routing)
    P = state.sym.n
    if iterations is not None:
        iterations = work_moves(iterations, state.sym)
    chunk_max, batch = chunk_moves(state.sym), batch_size(state.sym)
    start_value = state.score
    lower = hops_lower_bound(state.sym, slots) * (1 + 1e-12)
    stats = {"iterations": 0, "accepted": 0, "passes": 0, "depth": 0, "trace": [], "start_value": start_value}
    stopped = "bound" if start_value <= lower or state.sym.indices.size == 0 else None
    rate = None
    # the visiting orders from their own stream: the engine draws from ``rng`` once per compiled
    # chunk, and the chunks follow the clock, so a search that ends at a local optimum, a stall or
    # its move budget is the same for the same seed whatever the timing
    order_rng = np.random.default_rng(rng.integers(2**63))
    levels = _depths(int(depth))
    r = 0
    while stopped is None:
        d = levels[r]
        stats["depth"] = d
        stats["passes"] += 1
        acc_pass = 0
        order = order_rng.permutation(P).astype(np.int64)
        for lo in range(0, P, batch):
            if past(hard_stop):
                stopped = "budget"
                break
            ma, mb = nc_moves(state, order[lo:lo + batch], d)
            k = 0
            while k < ma.size and stopped is None:
                now = time.perf_counter()
                if (deadline is not None and now >= deadline) or past(hard_stop):
                    stopped = "budget"
                    break
                size = min(ma.size - k, chunk_max)
                if deadline is not None:
                    size = min(size, 256 if rate is None else max(16, int(rate * min(_CHUNK_SECONDS, deadline - now))))
                if iterations is not None:
                    size = min(size, int(iterations) - stats["iterations"])
                # strictly lower by more than rounding: a descent that cannot cycle
                th = np.full(size, -1e-12 * (1.0 + abs(state.score)))
                tic = time.perf_counter()
                acc, _imp, n, _ = state.run(th, rng, stall_limit=0 if stall is None else int(stall), lower=lower,
                                            moves=(ma[k:k + size], mb[k:k + size]))
                el = time.perf_counter() - tic
                if n:
                    rate = n / max(el, 1e-7) if rate is None else 0.5 * rate + 0.5 * n / max(el, 1e-7)
                k += n
                acc_pass += acc
                stats["iterations"] += n
                stats["accepted"] += acc
                if state.best_score <= lower:
                    stopped = "bound"
                elif n < size:
                    stopped = "stall"
                elif iterations is not None and stats["iterations"] >= iterations:
                    stopped = "moves"
            if stopped is not None:
                break
        stats["trace"].append(state.score)
        if stopped is None and acc_pass == 0:
            if r + 1 == len(levels):
                stopped = "local optimum"
            else:
                r += 1
    best = state.best_vertices
    stats.update(best_value=state.best_score, stopped=stopped, seconds=time.perf_counter() - t0)
    if stats["best_value"] > start_value:
        return np.asarray(start), start_value, start_value, stats
    return best.astype(np.int32), start_value, stats["best_value"], stats


def threshold_swap_passes(topology, g, start, slots, *, rng, passes, depth, level, moves, deadline=None):
    """Threshold accepting over ``N_C^depth`` with a schedule that does not depend on the clock.

    ``passes`` passes over the processes (a new random order each): every process tries the swaps
    of :func:`nc_moves` in turn, and a swap is kept when it raises hop-bytes by less than the
    pass's threshold, ``level x (1 - i / passes)`` in pass ``i`` (a descent in the last pass but
    strictly positive before: the walk leaves the local optimum of the descent).  The number of
    passes shrinks so that at most ``moves`` swaps are tried (the first pass's count as the size of
    a pass).  The best mapping seen is returned; the same ``rng`` state gives the same result
    whatever the timing (chunks are cut by count, never by time).

    Parameters
    ----------
    topology, g, start, slots, rng
        The validated inputs of every search here: the machine, the graph (CommGraph or SymGraph),
        the start (vertex per process), usable slots per vertex, a ``numpy.random.Generator``.
    passes : int
    depth : int
        ``d`` of ``N_C^d``.
    level : float
        Threshold of the first pass (hop-bytes).
    moves : int
        Swaps to try at the most (of :data:`~libtopomap.mappers.local_search.WORK_DEGREE` edges:
        :func:`~libtopomap.mappers.local_search.work_moves`).
    deadline : float, optional
        ``time.perf_counter()`` value after which no chunk starts (the best so far is returned).

    Returns
    -------
    vertices : numpy.ndarray of int64
    start_value, best_value : float
        Hop-bytes of ``start`` and of the result (never more than ``start``'s).
    stats : dict
        ``passes`` (run), ``iterations`` (swaps tried), ``accepted``.
    """
    state = SwapState(topology, sym_graph(g), np.asarray(start, np.int64), slots, "hopbytes")
    P = state.sym.n
    start_value = state.score
    stats = {"passes": 0, "iterations": 0, "accepted": 0}
    lower = hops_lower_bound(state.sym, slots) * (1 + 1e-12)
    if P < 2 or state.sym.indices.size == 0 or start_value <= lower:
        return np.asarray(start, np.int64).copy(), start_value, start_value, stats
    order_rng = np.random.default_rng(rng.integers(2**63))
    planned = int(passes)
    moves = work_moves(moves, state.sym)
    chunk_max, batch = chunk_moves(state.sym), batch_size(state.sym)
    i = 0
    while i < planned and stats["iterations"] < moves and not past(deadline):
        th = float(level) * (1.0 - i / planned)
        order = order_rng.permutation(P).astype(np.int64)
        for lo in range(0, P, batch):
            if stats["iterations"] >= moves or past(deadline):
                break
            ma, mb = nc_moves(state, order[lo:lo + batch], int(depth))
            ma, mb = ma[:moves - stats["iterations"]], mb[:moves - stats["iterations"]]
            for k in range(0, ma.size, chunk_max):
                if past(deadline):
                    break
                a, b = ma[k:k + chunk_max], mb[k:k + chunk_max]
                acc, _imp, n, _ = state.run(np.full(a.size, th if th > 0 else -1e-12 * (1.0 + abs(state.score))),
                                            rng, lower=lower, moves=(a, b))
                stats["iterations"] += n
                stats["accepted"] += acc
        if i == 0 and stats["iterations"] > 0:
            planned = int(min(planned, max(1, moves // stats["iterations"])))
        stats["passes"] += 1
        i += 1
    best = state.best_vertices
    if state.best_score >= start_value:
        return np.asarray(start, np.int64).copy(), start_value, start_value, stats
    return np.asarray(best, np.int64), start_value, float(state.best_score), stats


def refine_hopbytes_swap(topology, graph, mapping=None, *, slots=None, seed=None, time_budget=None, iterations=None,
                         depth=NC_DEPTH, stall=None, routing=None):
    """Improve a mapping's hop-bytes by swaps of processes that are close in the communication graph.

    Rounds of first-improvement descent: the processes are visited in a random order, and each
    tries the swap with every process within ``d`` hops of it in the communication graph (the
    neighbourhood ``N_C^d`` of Schulz and Träff), plus a shift to a free slot next to one of its
    partners when the allocation has free slots; a move is kept when hop-bytes drop.  The depth
    grows ``1, 2, 4, ...`` up to ``depth`` whenever a whole round finds nothing, and the search
    stops at a local optimum of ``N_C^depth`` (a round without improvement at full depth), at the
    budget, after ``stall`` moves without improvement, or at the lower bound.  Each move is
    evaluated incrementally by the engine of :mod:`~libtopomap.mappers.local_search` from the two
    processes' neighbour lists and oracle distances: ``O(degree)`` per move, no distance matrix.

    Parameters
    ----------
    topology, graph, mapping, slots
        As in :func:`~libtopomap.mappers.threshold_accepting.refine_threshold_accepting`.
    seed : int, optional
        Order in which the processes are visited.
    time_budget : float, optional
        Seconds of wall time, setup included (checked every ~20 ms).
    iterations : int, optional
        Moves to evaluate at the most (default: until a local optimum).
    depth : int
        ``d`` of ``N_C^d`` (default 10, VieM's).
    stall : int, optional
        Stop after this many moves in a row without improvement (default: never; a round without
        improvement at full depth ends the search anyway).
    routing : str or Routing, optional
        Routing model whose hops count (:mod:`libtopomap.routing`; default ``ecmp``: the hop
        distance, as every shortest-path model).  Dragonfly ``minimal`` and ``valiant`` count their
        own routes' links (``valiant``: expected over the intermediate group).

    Returns
    -------
    Mapping
        Never worse in hop-bytes than ``mapping``.

    Notes
    -----
    VieM lists all pairs of ``N_C^d`` once and walks the shuffled list until ``|list|`` tries in a
    row fail.  Here the pairs are enumerated per batch of processes (``O(batch x cap)`` memory,
    never all pairs), at most :data:`NC_CAP` per process, and the depth is widened from 1 so a
    budget-limited search has tried the closest pairs first.  The paper is not in the project's
    seed documents: the neighbourhood and the default ``d = 10`` are taken from the paper as
    recalled and from VieM's configuration.

    References
    ----------
    C. Schulz and J. L. Träff, "Better Process Mapping and Sparse Quadratic Assignment", SEA 2017,
    LIPIcs 75, 4:1-4:15 (arXiv:1702.04164), the local search over ``N_C^d``.
    """
    return run_refinement(hopbytes_swap, "hb-swap", topology, graph, mapping, slots=slots, seed=seed,
                          objective="hopbytes", time_budget=time_budget, iterations=iterations, depth=depth,
                          stall=stall, routing=routing)
