"""Threshold accepting refinement (Hoefler & Snir, ICS'11, section 3.5; Dueck & Scheuer 1990).

A schedule over the one local-search engine (:mod:`libtopomap.mappers.local_search`): the
acceptance level of a move is a threshold that falls linearly to zero over the budget.
"""

from __future__ import annotations

import time

import numpy as np

from ..commgraph import sym_graph
from ..distances import near_slot_cache
from ..metrics import congestion_lower_bound, hops_lower_bound
from ._deltas import full_traffic
from ._refine import run_refinement
from .local_search import WORK_DEGREE, SwapState, local_search, work_moves

__all__ = ["refine_threshold_accepting", "ta_thresholds", "capped_hopbytes_descent", "capped_moves", "CAPPED_MOVES",
           "near_partner_moves", "partner_cap", "few_independent"]

# Threshold at the start of the walk, in units of the median size of a worsening move.  Measured on
# a 512-process SpMV pattern on an 8x8x8 torus (4 s, ~18k moves): 0.005-0.02 beat 0.25-4 (walks that
# never come back within the budget) and plain descent by a few percent.
TA_START = 0.01
# Moves per threshold level (the paper's inner loop of 20 iterations).
TA_INNER = 20
# Moves of WORK_DEGREE edges of a walk given neither moves nor time (local_search's own default).
DEFAULT_MOVES = 20000


def ta_thresholds(progress, size, scale, *, start=TA_START, inner=TA_INNER):
    """Thresholds of the next ``size`` moves (one chunk): constant within the chunk, falling
    linearly with the budget used (``progress`` in [0, 1]) from ``start * scale`` to 0."""
    return np.full(size, start * scale * (1.0 - min(max(progress, 0.0), 1.0)))


def _stall(n):
    """Moves without improvement after which a threshold walk stops (it has converged)."""
    return max(5000, 50 * n)


# Share of a time budget left to the hop-bytes clean-up after a congestion walk, and its passes over
# the processes without a time budget (each: every process's N_C^1 swaps and shifts).
CLEANUP_SHARE = 0.2
CLEANUP_PASSES = 3
#: Moves (priced and played) of the race winner's capped clean-up
#: (:meth:`libtopomap.portfolio.MappingProblem.polish`) per process (:func:`capped_moves`).  On the
#: 4,224-host dragonfly(33, 16, 8, 2) with a scrambled 16^3 stencil (4,096 processes) the winner,
#: scotch+ta (max congestion 23, hop-bytes 79,028 after the three passes every threshold-accepting
#: result gets), reaches its local optimum, 75,350, after 44 passes and 4.3 million moves (2.8 s
#: CPU, load 7); with 128 / 256 / 384 moves per process it stops at 76,928 / 76,080 / 75,826 after
#: 6 / 11 / 17 passes, 0.47 / 0.82 / 1.16 s CPU at load 4-7 (states included), the maximum kept.
CAPPED_MOVES = 128


def capped_moves(nprocs):
    """Moves tried by the race winner's capped hop-bytes clean-up: :data:`CAPPED_MOVES` per process.

    Examples
    --------
    >>> capped_moves(4096)
    524288
    """
    return int(CAPPED_MOVES * max(int(nprocs), 1))


# Processes whose swap moves are listed at once by the clean-up, and moves played at once on the
# congestion state (they share the room under the cap).
_CLEANUP_BATCH = 512
_CAP_CHUNK = 16


def _independent(ma, mb, order, ptr, idx, P):
    """Indices (into ``ma``/``mb``) of moves, taken in ``order``, whose hop-bytes deltas add up: no
    selected move moves a process whose vertex another selected move reads (its two processes and
    their communication partners), and no two target the same free slot."""
    read = np.zeros(P, np.bool_)
    moved = np.zeros(P, np.bool_)
    used_free = set()
    out = []
    for i in order:
        a = int(ma[i])
        b = int(mb[i])
        if read[a] or (b >= 0 and read[b]):
            continue
        if b < 0 and b in used_free:
            continue
        nb = idx[ptr[a]:ptr[a + 1]]
        if b >= 0:
            nb = np.concatenate([nb, idx[ptr[b]:ptr[b + 1]]])
        if moved[nb].any():
            continue
        out.append(i)
        read[nb] = True
        read[a] = moved[a] = True
        if b >= 0:
            read[b] = moved[b] = True
        else:
            used_free.add(b)
    return np.asarray(out, np.int64)


def partner_cap(sym):
    """Partners per process whose vertices :func:`near_partner_moves` lists moves next to: all of
    them (``None``) up to mean degree :data:`~libtopomap.mappers.local_search.WORK_DEGREE`, a random
    ``WORK_DEGREE^2 / degree`` above (at least 1), so that listing and pricing a process's moves
    costs ``O(WORK_DEGREE^2)`` edge evaluations whatever the degree (a pass ``O(P)``, not
    ``O(P x degree^2)``: 1e9 edge evaluations a pass at 1,000 processes of mean degree 355).
    ``sym``: a :class:`~libtopomap.commgraph.SymGraph` or its mean degree.

    Examples
    --------
    >>> partner_cap(8.0), partner_cap(64.0), partner_cap(355.0)
    (None, 4, 1)
    """
    deg = float(sym) if np.isscalar(sym) else sym.indices.size / max(sym.n, 1)
    return None if deg <= WORK_DEGREE else work_moves(WORK_DEGREE, deg)


def few_independent(sym):
    """Whether the clean-up (:func:`capped_hopbytes_descent`) can play only a move or two per batch:
    every process communicates with more than a quarter of the job (mean degree above ``P / 4``).

    Its moves are played in sets whose hop-bytes deltas add up (:func:`_independent`): a chosen move
    rules out every move that reads or moves its two processes and their partners, about
    ``2 x degree`` processes.  At 1,000 processes of mean degree 355 a pass priced 4,000 moves for
    about 5 played (3 passes: 0.33 s of CPU per threshold-accepting result, 5 moves accepted; the
    winner's polish 0.27 s, hop-bytes 2.00265e6 -> 2.00235e6), so the descent is not run there.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> few_independent(sym_graph(ltm.load_graph("random:40:30:1")))
    True
    >>> few_independent(sym_graph(ltm.load_graph("stencil:8x8")))
    False
    """
    return 4 * sym.indices.size > sym.n * sym.n


def near_partner_moves(state, procs, rng, per=3, cap=None):
    """Moves of ``procs`` next to their communication partners: process ``a`` to a slot (a random one
    of the vertex) on the vertex of each partner and on ``per`` random ones of that vertex's nearest
    slot vertices (``state.near_ptr / near_idx``), as ``(a, b)`` for the engine's walk (``b`` the
    occupant of the slot, or ``-slot - 1`` when it is free).  ``(per + 1) x min(degree, cap)`` moves
    per process at the most: a process of more than ``cap`` partners (default :func:`partner_cap`;
    none on a sparse graph) takes ``cap`` of them at random (drawn with replacement)."""
    from .hopbytes_swap import ragged_arange

    s = state.sym
    cap = partner_cap(s) if cap is None else max(int(cap), 1)
    procs = np.asarray(procs, np.int64)
    deg = s.indptr[procs + 1] - s.indptr[procs]
    if cap is None:
        cap = max(int(deg.max(initial=0)), 1)
    take = np.minimum(deg, cap)
    pa = np.repeat(procs, take)
    edge = ragged_arange(s.indptr[procs], take)
    if np.any(deg > cap):  # sparse graphs draw nothing here: their moves and streams are unchanged
        many = np.repeat(deg > cap, take)
        drawn = np.repeat(s.indptr[procs], take) + (rng.random(pa.size) * np.repeat(deg, take)).astype(np.int64)
        edge = np.where(many, drawn, edge)
    vx = state.proc_vertex[s.indices[edge]]
    nn = state.near_ptr[vx + 1] - state.near_ptr[vx]
    # `per` of the nearest slot vertices of each partner's vertex, at random (ties make the lists long)
    pick = state.near_ptr[vx].repeat(per) + (rng.random(vx.size * per) * nn.repeat(per)).astype(np.int64)
    has = nn.repeat(per) > 0
    a = np.concatenate([pa, pa.repeat(per)[has]])
    w = np.concatenate([vx, state.near_idx[pick[has]]])
    slot = state.slot_first[w] + (rng.random(w.size) * state.slot_count[w]).astype(np.int64)
    b = state.occupant[slot]
    b = np.where(b >= 0, b, -slot - 1)
    keep = (b != a) & (state.slot_vertex[slot] != state.proc_vertex[a])
    return a[keep], b[keep]


def capped_hopbytes_descent(topology, g, start, slots, *, rng, deadline=None, passes=CLEANUP_PASSES, near=None,
                            routing=None, moves=None):
    """Lower the hop-bytes of a mapping without raising its maximum ECMP congestion.

    Each pass visits the processes in a random order, a batch at a time: it lists their moves onto
    and next to their communication partners' vertices (:func:`near_partner_moves`: swaps, or
    shifts to free slots), prices them on hop-bytes (a hops state
    of the engine, nothing accepted), keeps the improving ones that do not interfere (their deltas
    add up: :func:`_independent`, most improving first), then plays those on a congestion state
    whose score is the maximum alone: a move is accepted only when the maximum stays at or below
    that of ``start``.  Accepted moves are replayed on the hops state.  Hop-bytes fall with every
    accepted move; the maximum never rises.

    Parameters
    ----------
    topology, g, start, slots, rng
        The validated inputs of every search here: the machine, the graph (CommGraph or SymGraph),
        the start (vertex per process), usable slots per vertex, a ``numpy.random.Generator``.
    deadline : float, optional
        ``time.perf_counter()`` value after which no batch starts (the final exact check of the
        maximum runs only when it fits; otherwise the running maximum, which never exceeded the cap,
        is trusted).
    passes : int
        Passes over the processes at the most (a pass that accepts nothing ends the descent).
    near : (ptr, idx), optional
        Nearest slot vertices per vertex (default
        :func:`~libtopomap.mappers.local_search.near_slot_vertices`).
    routing : str or Routing, optional
        Routing model of the congestion cap and of the hop-bytes (:mod:`libtopomap.routing`; default
        ``ecmp``; the hops of dragonfly ``minimal``/``valiant`` routes, else the hop distance).
    moves : int, optional
        Moves tried at the most, priced on hop-bytes and played on the congestion state together
        (checked before each batch of :data:`_CLEANUP_BATCH` processes, so a batch may finish past
        it); a count, so the result does not depend on the clock.  Moves of
        :data:`~libtopomap.mappers.local_search.WORK_DEGREE` edges
        (:func:`~libtopomap.mappers.local_search.work_moves`: fewer moves on a dense graph).

    Returns
    -------
    vertices : numpy.ndarray of int64
    stats : dict
        ``start_max``, ``max`` (exact when checked), ``start_hopbytes``, ``hopbytes``, ``accepted``,
        ``priced``, ``played``, ``passes``, ``reverted`` (the exact maximum came out above the cap
        through float drift: ``start`` is returned), ``stopped`` (``"local optimum"``, ``"passes"``,
        ``"budget"``, ``"moves"``, ``"bound"``: ``start``'s hop-bytes are at their lower bound,
        every edge at distance 1, and nothing is tried, or ``"dense"``: :func:`few_independent`,
        nothing is tried and the hop-bytes are not computed), ``seconds``.

    Notes
    -----
    A lexicographic (maximum congestion, hop-bytes) descent: the congestion winner of the portfolio
    (threshold accepting on the maximum) pays for its low maximum with long paths (on a 32,768-host
    dragonfly, 1.56x Scotch's hop-bytes); most of those can be shortened on links that are not at
    the maximum.  The moves are the engine's local moves (next to a partner), enumerated instead of
    drawn; the cap makes the descent a congestion-preserving clean-up.
    """
    t0 = time.perf_counter()
    start = np.asarray(start, np.int64)
    if few_independent(sym_graph(g)):
        return start.copy(), {"start_hopbytes": np.nan, "hopbytes": np.nan, "accepted": 0, "priced": 0, "played": 0,
                               "passes": 0, "stopped": "dense", "start_max": np.nan, "max": np.nan,
                               "seconds": time.perf_counter() - t0}
    hops = SwapState(topology, sym_graph(g), start, slots, "hopbytes", near=near, routing=routing)
    sym = hops.sym
    P = sym.n
    stats = {"start_hopbytes": hops.score, "hopbytes": hops.score, "accepted": 0, "priced": 0, "played": 0,
             "passes": 0, "stopped": "local optimum"}
    at_bound = hops.score <= hops_lower_bound(sym, slots) * (1 + 1e-12)
    if P < 2 or sym.indices.size == 0 or at_bound or (deadline is not None and time.perf_counter() >= deadline):
        stats.update(start_max=np.nan, max=np.nan, seconds=time.perf_counter() - t0,
                     stopped="local optimum" if P < 2 or sym.indices.size == 0 else "bound" if at_bound else "budget")
        return start.copy(), stats
    if moves is not None:
        moves = work_moves(moves, sym)
    cong = SwapState(topology, sym, start, slots, "congestion", near=(hops.near_ptr, hops.near_idx), routing=routing)
    setup = time.perf_counter() - t0
    cap = cong.current_max()
    # score the congestion state by its maximum alone (no smooth term): delta = change of the maximum
    cong.scal[9] = 0.0
    cong.scal[0] = cong.scal[1] = cap
    stats["start_max"] = cap
    order_rng = np.random.default_rng(rng.integers(2**63))
    for _ in range(int(passes)):
        stats["passes"] += 1
        acc_pass = 0
        order = order_rng.permutation(P).astype(np.int64)
        for lo in range(0, P, _CLEANUP_BATCH):
            if deadline is not None and time.perf_counter() >= deadline:
                stats["stopped"] = "budget"
                break
            if moves is not None and stats["priced"] + stats["played"] >= moves:
                stats["stopped"] = "moves"
                break
            ma, mb = near_partner_moves(hops, order[lo:lo + _CLEANUP_BATCH], order_rng)
            if ma.size == 0:
                continue
            _, _, _, d = hops.run(np.full(ma.size, -np.inf), rng, moves=(ma, mb))
            stats["priced"] += ma.size
            tol = 1e-9 * (1.0 + abs(hops.score))
            good = np.flatnonzero(d < -tol)
            if good.size == 0:
                continue
            # the most improving move of each process, most improving first
            good = good[np.lexsort((d[good], ma[good]))]
            good = good[np.r_[True, ma[good][1:] != ma[good][:-1]]]
            pick = _independent(ma, mb, good[np.argsort(d[good], kind="stable")], sym.indptr, sym.indices, P)
            pa, pb = ma[pick], mb[pick]
            # a move is accepted when it raises the running maximum by less than its level; the
            # levels of a chunk of k moves share the room left under the cap (k of them cannot add
            # up past it), plus a rounding allowance so moves that leave the maximum alone pass
            for c0 in range(0, pa.size, _CAP_CHUNK):
                # one batch can hold many chunks (59 of about 1 s each on a 65,536-host fat tree):
                # check the clock per chunk, both states have made the same moves at this point
                if deadline is not None and time.perf_counter() >= deadline:
                    stats["stopped"] = "budget"
                    break
                ca, cb = pa[c0:c0 + _CAP_CHUNK], pb[c0:c0 + _CAP_CHUNK]
                level = max(cap - cong.current_max(), 0.0) / ca.size + 1e-14 * cap
                _, _, n, dc = cong.run(np.full(ca.size, level), rng, moves=(ca, cb))
                stats["played"] += n
                ok = np.flatnonzero(dc < level)
                if ok.size:
                    hops.run(np.full(ok.size, np.inf), rng, moves=(ca[ok], cb[ok]))
                    acc_pass += ok.size
            if stats["stopped"] in ("budget", "moves"):
                break
        stats["accepted"] += acc_pass
        if stats["stopped"] in ("budget", "moves"):
            break
        if acc_pass == 0:
            stats["stopped"] = "local optimum"
            break
        stats["stopped"] = "passes"
    out = cong.proc_vertex.copy()  # the hops state made the same moves
    mx = cong.current_max()
    if stats["accepted"] and (deadline is None or time.perf_counter() + setup <= deadline):
        # exact maximum of the result (the running one carries float drift)
        mx = float(np.max(full_traffic(topology, sym, out, cong.oracle, routing=cong.routing) * cong.inv_cap))
    stats["reverted"] = bool(mx > cap * (1.0 + 1e-9))
    if stats["reverted"]:  # float drift of the running maximum let a move past the cap: keep start
        out, mx = start.copy(), cap
        stats["hopbytes"] = stats["start_hopbytes"]
    else:
        stats["hopbytes"] = hops.score
    stats.update(max=mx, seconds=time.perf_counter() - t0)
    return out, stats


def threshold_accepting(topology, g, start, slots, objective, *, rng, time_budget=None, iterations=None,
                        warmup=0.15, t_start=None, cleanup=CLEANUP_SHARE, deadline=None, routing=None):
    """The search behind :func:`refine_threshold_accepting`, on validated input.

    ``deadline`` (a ``time.perf_counter()`` value) stops every phase without changing its moves
    when it does not bind (the portfolio's overall budget); with the congestion objective and
    ``cleanup > 0`` the walk stops early enough to leave that share of the time to
    :func:`capped_hopbytes_descent`.  ``routing`` is the model of the congestion objective
    (:mod:`libtopomap.routing`; default ``ecmp``).  ``iterations`` (default 20,000 without a
    ``time_budget``) counts moves of :data:`~libtopomap.mappers.local_search.WORK_DEGREE` edges
    (:func:`~libtopomap.mappers.local_search.work_moves`): the same on a sparse graph, fewer moves on
    a dense one, whose moves each re-evaluate ``degree`` edges (at 1,000 processes of mean degree
    355 the race's 4,000 ECMP moves took more than 28 s of CPU; now 180, and twice that where the
    clean-up does not run, :func:`few_independent`).

    Returns
    -------
    vertices : numpy.ndarray
        Never worse than ``start`` in ``objective`` (``start`` itself otherwise).
    start_value, best_value : float
        The objective (hop-bytes for ``dilation``) of ``start`` and of the result, as evaluated by
        the engine (exact, up to float rounding of the running congestion).
    stats : dict
        Of the last walk (see :func:`~libtopomap.mappers.local_search.local_search`), with
        ``cleanup`` (the stats of :func:`capped_hopbytes_descent`) for congestion.
    """
    g = sym_graph(g)  # one symmetric view for every state of the walk (built once per graph)
    if iterations is None and time_budget is None:
        iterations = DEFAULT_MOVES
    if iterations is not None:
        iterations = work_moves(iterations, g)
        if objective == "congestion" and cleanup > 0 and few_independent(g):
            # no clean-up there: the walk takes its work (its three passes cost as much CPU as the walk,
            # 0.35 s each at 1,000 processes of mean degree 355; from recursive's mapping, three seeds,
            # the walk with twice the moves ends at a maximum congestion of 1955-1965, walk and
            # clean-up at 1988-2002)
            iterations *= 2
    with near_slot_cache(topology):  # its states share one list of nearest slot vertices
        return _threshold_accepting(topology, g, start, slots, objective, rng=rng, time_budget=time_budget,
                                    iterations=iterations, warmup=warmup, t_start=t_start, cleanup=cleanup,
                                    deadline=deadline, routing=routing)


def _threshold_accepting(topology, g, start, slots, objective, *, rng, time_budget, iterations, warmup, t_start,
                         cleanup, deadline, routing):
    t0 = time.perf_counter() if t_start is None else t_start
    t_call = t0
    start = np.asarray(start, np.int64)
    search_objective = "hopbytes" if objective == "dilation" else objective
    tidy = objective == "congestion" and cleanup > 0
    walk_deadline = deadline
    if tidy:
        ends = [x for x in (deadline, None if time_budget is None else t0 + time_budget) if x is not None]
        end = min(ends) if ends else None
        if end is not None:
            walk_deadline = t0 + (1.0 - cleanup) * (end - t0)
            if time_budget is not None:
                time_budget = (1.0 - cleanup) * time_budget
        deadline = end
    tic = time.perf_counter()
    state = SwapState(topology, g, start, slots, search_objective, routing=routing)
    setup = time.perf_counter() - tic
    start_value = state.current_max() if objective == "congestion" else state.score
    current = start
    budget = time_budget
    if objective == "congestion" and warmup > 0:
        if start_value > congestion_lower_bound(topology, state.sym, slots) * (1 + 1e-12):
            # hop-bytes moves cost ~1000x less than ECMP re-routing: shorten the paths first
            wb = None if time_budget is None else max(warmup * time_budget - (time.perf_counter() - t0), 0.0)
            if wb is None or wb > 0:
                current, _ = local_search(topology, state.sym, current, slots, "hopbytes",
                                          thresholds_fn=ta_thresholds, rng=rng, time_budget=wb, iterations=iterations,
                                          stall_limit=_stall(g.n), deadline=walk_deadline)
            if time_budget is not None:
                budget = max(time_budget - (time.perf_counter() - t0), 0.0)
                t0 = time.perf_counter()
            if not np.array_equal(current, start):
                if walk_deadline is not None and time.perf_counter() + setup >= walk_deadline:
                    # no time for a state of the warmed-up mapping (nor to score it): keep the start
                    stats = {"stopped": "budget", "best_value": start_value, "setup_seconds": setup}
                    return start, start_value, start_value, stats
                state = None  # a new state from the warmed-up mapping
    best, stats = local_search(topology, g if state is None else state.sym, current, slots, search_objective,
                               thresholds_fn=ta_thresholds, rng=rng, time_budget=budget, iterations=iterations,
                               stall_limit=_stall(g.n), state=state, t_start=t0, deadline=walk_deadline,
                               routing=routing)
    if stats["best_value"] > start_value:
        best, best_value = start, start_value
    else:
        best_value = stats["best_value"]
    if tidy and (deadline is None or time.perf_counter() + 2 * setup < deadline):
        best, stats["cleanup"] = capped_hopbytes_descent(topology, g, best, slots, rng=rng, deadline=deadline,
                                                         routing=routing)
        if np.isfinite(stats["cleanup"]["max"]):
            best_value = min(best_value, stats["cleanup"]["max"]) if stats["cleanup"]["accepted"] else best_value
    stats["total_seconds"] = time.perf_counter() - t_call
    return best, start_value, best_value, stats


def refine_threshold_accepting(topology, graph, mapping=None, *, slots=None, seed=None, objective="congestion",
                               time_budget=None, iterations=None, warmup=0.15, cleanup=CLEANUP_SHARE, routing=None):
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
        Usable slots per vertex (default ``topology.slots``).
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
    cleanup : float
        For the congestion objective, the share of the time budget left to
        :func:`capped_hopbytes_descent` after the walk (without a time budget: at most
        :data:`CLEANUP_PASSES` passes): hop-bytes are lowered without raising the maximum
        congestion.  0 disables it.
    routing : str or Routing, optional
        Routing model of the congestion objective (:mod:`libtopomap.routing`: ``"minimal"`` on a
        dragonfly, ``"dimension-order"`` on a torus, ``"native"``...); default ``ecmp``.  The moves'
        loads are updated by that model's per-pair kernel.  The hop objectives count the model's
        hops: the hop distance under shortest-path models, the route's links under dragonfly
        ``minimal`` and ``valiant`` (:func:`libtopomap.routing.pair_hops`).

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
                          objective=objective, time_budget=time_budget, iterations=iterations, warmup=warmup,
                          cleanup=cleanup, routing=routing)
