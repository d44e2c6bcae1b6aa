"""Iterated local search on hop-bytes over the communication-graph neighbourhood N_C^d.

A descent over ``N_C^d`` (the swaps of :mod:`libtopomap.mappers.hopbytes_swap`, listed in both
directions), then kicks: a few processes near one another in the communication graph permuted at
random, and a descent again from them.  The portfolio's hop-bytes polish
(:meth:`libtopomap.portfolio.MappingProblem.polish`) runs it.
"""

from __future__ import annotations

import time

import numpy as np

from .._kernels.bfs import bfs_balls
from ..commgraph import sym_graph
from ..metrics import hops_lower_bound
from .hopbytes_swap import batch_size, chunk_moves, nc_cap, nc_moves, ragged_arange
from .local_search import SwapState, past, work_moves

__all__ = ["hopbytes_ils", "ils_moves", "ILS_MOVES", "ILS_FULL", "ILS_KICK_CHARGE", "ILS_DESCENT", "ILS_DEPTH",
           "ILS_RADIUS", "ILS_KICK"]

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
    """:func:`~libtopomap.mappers.hopbytes_swap.nc_moves` of ``procs`` (partners ``b > a`` and shifts)
    plus the swaps with their partners ``b < a`` within ``depth`` hops: every move of ``N_C^depth`` of
    each process in ``procs``."""
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
    chunk_max, batch = chunk_moves(sym), batch_size(sym)
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
        As in :func:`~libtopomap.mappers.hopbytes_swap.threshold_swap_passes`.
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
        As :func:`~libtopomap.mappers.hopbytes_swap.threshold_swap_passes` returns them.
    stats : dict
        ``iterations`` (swaps tried), ``descent_moves`` (of them in the first descent),
        ``descent_value`` (hop-bytes after the first descent),
        ``kicks``, ``kept`` (kicks whose result was kept), ``improved`` (kicks that lowered the
        best), ``stopped`` (``"moves"``, ``"budget"`` (the deadline), ``"bound"`` or ``"trivial"``:
        nothing to search).

    Notes
    -----
    Iterated local search (Lourenço, Martin and Stützle, "Iterated Local Search", Handbook of
    Metaheuristics, 2003): a local search, a perturbation of the local optimum and an acceptance test,
    here "better or equal".  The threshold passes of
    :func:`~libtopomap.mappers.hopbytes_swap.threshold_swap_passes` keep the best state seen during a
    walk, which on some instances is always the start (the walk never goes below a deep local optimum
    before the next descent would); a kick descends from where the perturbation left the mapping
    instead.  On the dragonfly g9 a4 p2 h2 with an 8x9 torus stencil (``benchmarks/bench_quality.py``),
    multisection's 876 hop-bytes are a local optimum of the threshold rounds over four seeds; kicks of 8
    processes within 2 hops reach 856-872.  The descents list each process's pairs in ``N_C^d`` in both
    directions (the plain :func:`~libtopomap.mappers.hopbytes_swap.nc_moves` lists ``b > a`` only,
    enough for a pass over every process but not for a subset), and only the processes whose cost a move
    changed are visited again ("don't look bits").
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
