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

__all__ = ["refine_hopbytes_swap", "hopbytes_swap", "threshold_swap_passes", "hopbytes_ils", "ils_moves", "nc_moves",
           "nc_cap", "batch_size",
           "NC_DEPTH", "NC_CAP", "BATCH", "ILS_MOVES", "ILS_FULL", "ILS_KICK_CHARGE", "ILS_DESCENT", "ILS_DEPTH",
           "ILS_RADIUS", "ILS_KICK"]

#: VieM's default communication-graph distance of the swap neighbourhood ``N_C^d``
#: (``communication_neighborhood_dist = 10`` in VieM's default configuration).
NC_DEPTH = 10
#: Partners per process at the most (the nearest in breadth-first order): keeps a batch of moves
#: ``O(processes x cap)`` when the communication graph is dense (VieM lists every pair).
NC_CAP = 4096
#: Processes whose moves are listed at once (at most ``BATCH x NC_CAP`` swaps, plus the shifts).
BATCH = 256
#: Swaps the kicks of :func:`hopbytes_ils` try at the most (each kick and the descent after it) for
#: up to :data:`ILS_FULL` processes; above, the budget shrinks as ``1 / P`` (:func:`ils_moves`).  A
#: kick counts at least :data:`ILS_KICK_CHARGE` swaps (its Python overhead is worth about as many
#: compiled moves), so at most 512 kicks: 0.3-1.5 s on a loaded 2-core machine.
ILS_MOVES = 1 << 19
ILS_FULL = 4096
ILS_KICK_CHARGE = 1024
#: Swaps of the first descent of :func:`hopbytes_ils` per process at the most (a sweep over a local
#: optimum of ``N_C^3`` on a 2-D stencil tries about 60 per process).
ILS_DESCENT = 128
#: ``d`` of the ``N_C^d`` descents of :func:`hopbytes_ils`.  On the dragonfly g9 a4 p2 h2 of
#: ``benchmarks/bench_quality.py`` (multisection's 876 hop-bytes, 2^19 moves, 8 seeds): d = 3 gave
#: 848-874 (mean 859) with 480 kicks, d = 4 846-870 (mean 862) with 300, d = 2 850-864 (mean 856)
#: with 970 kicks for 1.6x the CPU time (the kicks' Python overhead).
ILS_DEPTH = 3
#: A kick of :func:`hopbytes_ils` shuffles at most :data:`ILS_KICK` processes within
#: :data:`ILS_RADIUS` hops of a random process in the communication graph.
ILS_RADIUS = 2
ILS_KICK = 8
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


def _chunk_max(sym):
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
    chunk_max, batch = _chunk_max(state.sym), batch_size(state.sym)
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
    chunk_max, batch = _chunk_max(state.sym), batch_size(state.sym)
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


def ils_moves(nprocs):
    """Swaps :func:`hopbytes_ils` may try for ``nprocs`` processes: :data:`ILS_MOVES` up to
    :data:`ILS_FULL` processes, then ``ILS_MOVES x ILS_FULL / nprocs`` (a fixed count: never the clock).

    Examples
    --------
    >>> ils_moves(72) == ils_moves(4096) == 8 * ils_moves(32768)
    True
    """
    return int(ILS_MOVES * min(1.0, ILS_FULL / max(int(nprocs), 1)))


def _reversed_csr(sym):
    """The communication graph with its processes numbered backwards (``n - 1 - p``): its
    :func:`~libtopomap._kernels.bfs.bfs_balls` lists the partners ``w < p`` that the plain one leaves out."""
    n = sym.n
    deg = np.diff(sym.indptr)[::-1]
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(deg, out=ptr[1:])
    idx = (n - 1) - sym.indices[ragged_arange(sym.indptr[:-1][::-1].copy(), deg)]
    return ptr, idx.astype(np.int64)


def _all_moves(state, procs, depth, rev):
    """:func:`nc_moves` of ``procs`` (partners ``b > a`` and shifts) plus the swaps with their
    partners ``b < a`` within ``depth`` hops: every move of ``N_C^depth`` of each process in ``procs``."""
    a, b = nc_moves(state, procs, depth)
    n = state.sym.n
    ptr, idx = bfs_balls(rev[0], rev[1], n, (n - 1) - procs, int(depth), nc_cap(state.sym))
    return np.concatenate([a, np.repeat(procs, np.diff(ptr))]), np.concatenate([b, (n - 1) - idx])


def _neighbourhood(sym, procs):
    """``procs`` and their communication partners, sorted, each once."""
    deg = sym.indptr[procs + 1] - sym.indptr[procs]
    return np.unique(np.concatenate([procs, sym.indices[ragged_arange(sym.indptr[procs], deg)]]))


def _descend(state, dirty, depth, rev, rng, budget, lower, deadline=None):
    """First-improvement descent over ``N_C^depth`` from the processes ``dirty``: each round visits
    them in a random order and tries all their moves (:func:`_all_moves`); the next round visits
    the processes moved and their partners (whose costs changed), until a round moves nothing,
    ``budget`` moves were tried, or hop-bytes reach ``lower``.  Returns the moves tried."""
    sym = state.sym
    tried = 0
    chunk_max, batch = _chunk_max(sym), batch_size(sym)
    while dirty.size and tried < budget:
        order = rng.permutation(dirty).astype(np.int64)
        moved = []
        for lo in range(0, order.size, batch):
            if past(deadline):
                return tried
            ma, mb = _all_moves(state, order[lo:lo + batch], depth, rev)
            ma, mb = ma[:budget - tried], mb[:budget - tried]
            for k in range(0, ma.size, chunk_max):
                if past(deadline):
                    return tried
                a, b = ma[k:k + chunk_max], mb[k:k + chunk_max]
                th = -1e-12 * (1.0 + abs(state.score))  # strictly lower: a descent cannot cycle
                _, _, n, d = state.run(np.full(a.size, th), rng, lower=lower, moves=(a, b))
                tried += n
                ok = d < th
                moved += [a[:n][ok], b[:n][ok & (b[:n] >= 0)]]
                if n < a.size:  # at the lower bound
                    return tried
            if tried >= budget:
                return tried
        moved = np.concatenate(moved) if moved else np.zeros(0, np.int64)
        dirty = _neighbourhood(sym, np.unique(moved)) if moved.size else moved
    return tried


def _ball(sym, p, radius, size, rng):
    """``p`` and at most ``size - 1`` processes within ``radius`` hops of it in the communication
    graph, nearest first (a random choice within the last level that fits)."""
    ball = np.array([p], np.int64)
    frontier = ball
    for _ in range(int(radius)):
        if ball.size >= size or frontier.size == 0:
            break
        nxt = np.setdiff1d(_neighbourhood(sym, frontier), ball)
        frontier = rng.permutation(nxt)[:size - ball.size].astype(np.int64)
        ball = np.concatenate([ball, frontier])
    return ball


def hopbytes_ils(topology, g, start, slots, *, rng, moves, descent=None, depth=ILS_DEPTH, radius=ILS_RADIUS,
                 kick=ILS_KICK, routing=None, deadline=None):
    """Iterated local search on hop-bytes: a descent over ``N_C^depth``, then kicks.

    The start is first brought to a local optimum of ``N_C^depth`` (first-improvement swaps and
    shifts, :func:`_descend`; at most ``descent`` swaps).  Each kick then takes a random process and at
    most ``kick - 1`` processes within ``radius`` hops of it in the communication graph, permutes their slots at
    random (a uniformly random permutation, as ``kick - 1`` swaps), and descends again from those
    processes and their partners only.  The result is kept when its hop-bytes are at most the best
    so far (equal ones too: the search drifts over plateaus), else the best state is restored.  The
    kicks stop after ``moves`` swaps tried (each kick counting at least :data:`ILS_KICK_CHARGE`) or
    at the lower bound.  Nothing depends on the clock unless ``deadline`` binds: the same ``rng``
    state gives the same mapping.

    Parameters
    ----------
    topology, g, start, slots, rng
        As in :func:`threshold_swap_passes`.
    moves : int
        Swaps the kicks may try (:func:`ils_moves` for a budget that shrinks with the job).
    descent : int, optional
        Swaps of the first descent at the most (default :data:`ILS_DESCENT` per process).
    depth : int
        ``d`` of the descents' ``N_C^d``.
    radius, kick : int
        Size of a kick: processes within ``radius`` hops of the random one, ``kick`` at the most.
    routing : str or Routing, optional
        Routing model whose hops count (:class:`~libtopomap.mappers.local_search.SwapState`).
    deadline : float, optional
        ``time.perf_counter()`` value after which no batch of moves and no kick starts (a race's
        budget; it binds only where that is nearly spent).

    Returns
    -------
    vertices, start_value, best_value
        As :func:`threshold_swap_passes` returns them.
    stats : dict
        ``iterations`` (swaps tried), ``descent_moves`` (of them in the first descent),
        ``descent_value`` (hop-bytes after the first descent),
        ``kicks``, ``kept`` (kicks whose result was kept), ``improved`` (kicks that lowered the
        best), ``stopped`` (``"moves"``, ``"budget"`` (the deadline), ``"bound"`` or ``"trivial"``:
        nothing to search).

    Notes
    -----
    Iterated local search (Lourenço, Martin and Stützle, "Iterated Local Search", Handbook of
    Metaheuristics, 2003): a local search, a perturbation of the local optimum and an acceptance
    test, here "better or equal".  The threshold passes of :func:`threshold_swap_passes` keep the
    best state seen during a walk, which on some instances is always the start (the walk never goes
    below a deep local optimum before the next descent would); a kick descends from where the
    perturbation left the mapping instead.  On the dragonfly g9 a4 p2 h2 with an 8x9 torus stencil
    (``benchmarks/bench_quality.py``), multisection's 876 hop-bytes are a local optimum of the
    threshold rounds over four seeds; kicks of 8 processes within 2 hops reach 856-872.  The
    descents list each process's pairs in ``N_C^d`` in both directions (the plain
    :func:`nc_moves` lists ``b > a`` only, enough for a pass over every process but not for a
    subset), and only the processes whose cost a move changed are visited again ("don't look
    bits").
    """
    state = SwapState(topology, sym_graph(g), np.asarray(start, np.int64), slots, "hopbytes", routing=routing)
    sym = state.sym
    P = sym.n
    start_value = state.score
    lower = hops_lower_bound(sym, slots) * (1 + 1e-12)
    stats = {"iterations": 0, "descent_moves": 0, "descent_value": start_value, "kicks": 0, "kept": 0,
             "improved": 0, "stopped": "moves"}
    if P < 2 or sym.indices.size == 0 or start_value <= lower or moves < 0:
        stats["stopped"] = "trivial" if start_value > lower else "bound"
        return np.asarray(start, np.int64).copy(), start_value, start_value, stats
    r = np.random.default_rng(rng.integers(2**63))
    rev = _reversed_csr(sym)
    moves = work_moves(moves, sym)  # budgets of WORK_DEGREE-edge moves: fewer on a dense graph
    descent = work_moves(ILS_DESCENT * P if descent is None else int(descent), sym)
    first = _descend(state, np.arange(P, dtype=np.int64), int(depth), rev, r, descent, lower, deadline)
    state.keep()
    best = state.snapshot()
    best_value = stats["descent_value"] = state.score
    stats["descent_moves"] = first
    tried = 0
    while tried < moves and best_value > lower:
        if deadline is not None and time.perf_counter() >= deadline:
            stats["stopped"] = "budget"
            break
        ball = _ball(sym, int(r.integers(P)), radius, max(2, int(kick)), r)
        if ball.size < 2:
            continue
        j = np.array([r.integers(i, ball.size) for i in range(ball.size - 1)], np.int64)
        swap = j != np.arange(ball.size - 1)
        ka, kb = ball[:-1][swap], ball[j[swap]]
        ka, kb = ka[:moves - tried], kb[:moves - tried]
        _, _, n, _ = state.run(np.full(ka.size, np.inf), r, moves=(ka, kb))
        stats["kicks"] += 1
        n += _descend(state, _neighbourhood(sym, ball), int(depth), rev, r, moves - tried - n, lower, deadline)
        tried += max(n, ILS_KICK_CHARGE)
        tol = 1e-9 * (1.0 + abs(best_value))
        if state.score <= best_value + tol:
            stats["kept"] += 1
            if state.score < best_value - tol:
                stats["improved"] += 1
                best_value = state.score
            state.keep()
            best = state.snapshot()
        else:
            state.restore(best)
    stats["iterations"] = first + tried
    if best_value <= lower:
        stats["stopped"] = "bound"
    if not best_value < start_value:
        return np.asarray(start, np.int64).copy(), start_value, start_value, stats
    return best[2].copy(), start_value, float(best_value), stats


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
