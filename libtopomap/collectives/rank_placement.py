"""Rank placement on allocated nodes: ascending order, two-opt, simulated annealing (Cui 2024, 3.3).

A placement is a permutation ``perm``: rank ``r`` runs on ``nodes[perm[r]]``; all optimizers are
schedules of :mod:`libtopomap.mappers.local_search`.  The three and their moves: docs/internals.rst,
"Collectives: schedule costs and rank placement".
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._kernels.bfs import source_sums
from .._kernels.oracle import KIND_SEARCH, KIND_TABLE, new_search_scratch
from .._deprecation import renamed_keyword
from ..commgraph import CommGraph, SymGraph
from ..errors import MappingError
from ..vocabulary import check_choice
from ..distances import hop_distance
from ..mappers.local_search import SwapState, local_search
from ..vocabulary import OPTIMIZERS
from .multicast import cco_order
from .objectives import dedupe_steps, flatten_steps
from .._jit import njit

__all__ = ["OPTIMIZERS", "RankSearch", "ascending_order", "optimize_ranks", "two_opt", "anneal"]


# Share of guided moves in annealing, and the start/end temperature in units of the smallest uphill
# step (tuned on the thesis' 1024-node degree-19 instance, 512 processes).
_GUIDE = 0.9
_T_START = 0.7
_T_END = 0.2
_CALIBRATION_SWAPS = 2000
# Greedy constructions tried by "greedy" and "anneal" (from the most central node and random ones).
_GREEDY_STARTS = 4


@dataclass
class RankSearch:
    """Outcome of :func:`optimize_ranks`.

    Attributes
    ----------
    permutation : numpy.ndarray of int64
        Rank ``r`` runs on ``nodes[permutation[r]]``.
    cost_before, cost_after : int
        The objective for the initial and the returned placement.
    iterations : int
        Swaps tried.
    accepted : int
        Swaps kept.
    seconds : float
        Wall time of the search (compilation excluded).
    """

    permutation: np.ndarray
    objective: str
    optimizer: str
    cost_before: int
    cost_after: int
    iterations: int
    accepted: int
    seconds: float


def ascending_order(nprocs):
    """Ascending-order rank placement (section 3.3.1): rank ``i`` on the ``i``-th allocated node."""
    return np.arange(int(nprocs), dtype=np.int64)


@njit(cache=True)
def _greedy(P, node_vertex, oracle, inc_ptr, inc_other, inc_w, nbr_ptr, nbr, first_node):
    """Greedy construction: place the rank with the most placed partners next, on the free node with
    the least hops to them (ties: the node with fewer free job neighbours, keeping well-connected nodes
    for later ranks).  Hops come from the distance oracle: ``O(P^2 x degree)`` time, ``O(P)`` memory."""
    scratch = new_search_scratch(oracle[3].size - 1 if oracle[0][0] == KIND_SEARCH
                                          or oracle[0][0] == KIND_TABLE else 1)
    pos = np.full(P, -1, dtype=np.int64)
    used = np.zeros(P, dtype=np.bool_)
    conn = np.zeros(P, dtype=np.float64)
    free_nbrs = np.empty(P, dtype=np.int64)
    for x in range(P):
        free_nbrs[x] = nbr_ptr[x + 1] - nbr_ptr[x]
    scale = 1.0 / (P + 1.0)  # tie-break term stays below one hop
    for i in range(P):
        r = 0
        bx = first_node
        if i > 0:
            bc = -1.0
            for q in range(P):
                if pos[q] < 0 and conn[q] > bc:
                    bc = conn[q]
                    r = q
            bcost = 1e300
            for x in range(P):
                if used[x]:
                    continue
                c = 0.0
                vx = node_vertex[x]
                for k in range(inc_ptr[r], inc_ptr[r + 1]):
                    o = inc_other[k]
                    if pos[o] >= 0:
                        c += inc_w[k] * hop_distance(oracle, vx, node_vertex[pos[o]], scratch)
                c += scale * free_nbrs[x]
                if c < bcost:
                    bcost = c
                    bx = x
        pos[r] = bx
        used[bx] = True
        for k in range(nbr_ptr[bx], nbr_ptr[bx + 1]):
            free_nbrs[nbr[k]] -= 1
        for k in range(inc_ptr[r], inc_ptr[r + 1]):
            conn[inc_other[k]] += inc_w[k]
    return pos


# ---------------------------------------------------------------------------------------------------
# problem setup


def _csr(n, owner, values):
    order = np.argsort(owner, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=ptr[1:])
    return ptr, [v[order] for v in values]


class _Problem:
    """One (topology, nodes, schedule, objective) on the local-search engine.

    The placement is held by :class:`~libtopomap.mappers.local_search.SwapState` as vertices with one
    slot per allocated node; guided moves go next to a partner (the allocated vertices one hop from
    the partner's vertex).  ``hops`` is the engine's hop-bytes mode (message counts as weights),
    ``contention`` / ``step`` its path mode.  No ``P x P`` or ``P x n`` array is built.
    """

    def __init__(self, topology, nodes, steps, objective):
        check_choice("collective-objective", objective)
        self.objective = objective
        self.topology = topology
        nodes = np.asarray(nodes, dtype=np.int64)
        P = nodes.size
        self.P = P
        self.nodes = nodes
        src, dst, _ = flatten_steps(steps)
        if src.size and max(int(src.max()), int(dst.max())) >= P:
            raise MappingError(f"the schedule names rank {max(int(src.max()), int(dst.max()))} but only {P} nodes "
                               "are allocated")
        n = topology.n_vertices
        self.oracle = topology.distances
        # Hop costs are symmetric: the engine's graph merges (s, d) and (d, s) messages into one pair.
        self.sym = SymGraph(CommGraph(P, src, dst, np.ones(src.size)))
        self.slots = np.bincount(nodes, minlength=n).astype(np.int64)
        # Allocated vertices one hop away (targets of guided moves), per vertex.
        t = topology
        arc_u = t.arc_source.astype(np.int64)
        arc_v = t.indices.astype(np.int64)
        keep = (self.slots[arc_u] > 0) & (self.slots[arc_v] > 0) & (arc_u != arc_v)
        key = np.unique(arc_u[keep] * n + arc_v[keep])
        near_ptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(key // n, minlength=n), out=near_ptr[1:])
        self.near = (near_ptr, key % n)
        # node-level one-hop neighbours (same vertex included) for the greedy construction
        order = np.argsort(nodes, kind="stable")
        vptr = np.zeros(n + 1, np.int64)
        np.cumsum(self.slots, out=vptr[1:])
        nb = []
        for x in range(P):
            v = nodes[x]
            vs = np.concatenate([[v], self.near[1][near_ptr[v]:near_ptr[v + 1]]])
            cand = np.concatenate([order[vptr[w]:vptr[w + 1]] for w in vs.tolist()])
            nb.append(cand[cand != x])
        self.nbr_ptr = np.zeros(P + 1, np.int64)
        np.cumsum([c.size for c in nb], out=self.nbr_ptr[1:])
        self.nbr = np.concatenate(nb).astype(np.int64) if nb else np.zeros(0, np.int64)
        uniq, inv = np.unique(nodes, return_inverse=True)
        w = np.zeros(n)
        w[uniq] = np.bincount(inv).astype(np.float64)
        sums, ecc, _, _ = source_sums(t.indptr, t.indices, n, uniq, w)
        self.central = int(np.argmin(sums[inv]))  # the node with the least hops to all others
        self.paths = None
        if objective != "hops":
            usteps, sw = dedupe_steps(steps)
            msrc, mdst, mstep = flatten_steps(usteps)
            m = np.arange(msrc.size, dtype=np.int64)
            minc_ptr, (minc,) = _csr(P, np.concatenate([msrc, mdst]), [np.concatenate([m, m])])
            S = len(usteps)
            per_step = np.bincount(mstep, minlength=S) if S else np.zeros(0, np.int64)
            lmax = int(per_step.max()) if S else 0
            # Exceeds any contention, so big * step + contention orders by step first.
            self.big = int(sw[mstep].sum() * max(int(ecc.max()) if ecc.size else 0, 1) + 1) if msrc.size else 1
            self.pobj = 1 if objective == "contention" else 2
            self.paths = (msrc, mdst, mstep, sw, minc_ptr, minc, np.zeros((S, t.n_arcs), np.int32),
                          np.zeros((S, lmax + 2), np.int64), np.zeros(S, np.int64), self.pobj, self.big)

    def state(self, perm):
        paths = self.paths
        if paths is not None:  # loads of its own for every state
            paths = paths[:6] + tuple(np.zeros_like(x) for x in paths[6:9]) + paths[9:]
        return SwapState(self.topology, self.sym, self.nodes[perm], self.slots, "hops", near=self.near, paths=paths)

    def cost(self, score):
        c = int(round(score))
        return c // self.big if self.paths is not None and self.pobj == 2 else c

    def permutation(self, vertices, like):
        """A node permutation placing rank ``r`` on a node at ``vertices[r]`` (ranks that kept the
        vertex of ``like`` keep their node)."""
        P = self.P
        perm = np.full(P, -1, np.int64)
        keep = self.nodes[like] == vertices
        perm[keep] = like[keep]
        free = np.ones(P, np.bool_)
        free[perm[keep]] = False
        rest = np.flatnonzero(~keep)
        fn = np.flatnonzero(free)
        fo = fn[np.argsort(self.nodes[fn], kind="stable")]
        ro = rest[np.argsort(vertices[rest], kind="stable")]
        perm[ro] = fo
        return perm

    def greedy(self, first):
        return _greedy(self.P, self.nodes, self.oracle.kernel_args, self.sym.indptr, self.sym.indices, self.sym.wsum,
                       self.nbr_ptr, self.nbr, first)


def _seed(seed):
    if isinstance(seed, (int, np.integer)) and 0 <= seed < 2**32:
        return int(seed)
    return int(np.random.default_rng(seed).integers(0, 2**31 - 1))


@renamed_keyword("nodes", "allocation")
def optimize_ranks(topology, allocation, steps, *, objective="hops", optimizer="two-opt", iterations=200_000, seed=None,
                   initial=None, guide=None, temperatures=None, time_budget=None):
    """Choose which rank runs on which allocated node.

    Parameters
    ----------
    topology : Topology
    allocation : array_like of int
        The allocated vertices in allocation order (a vertex may repeat when it has several slots).
        Its old name ``nodes=`` still works, with a :class:`DeprecationWarning`.
    steps : list of numpy.ndarray
        The collective's schedule (:func:`~libtopomap.collectives.schedules.schedule`).
    objective : {"hops", "contention", "step"}
        See :mod:`~libtopomap.collectives.objectives`.
    optimizer : {"none", "two-opt", "greedy", "anneal", "cco"}
        ``"none"`` keeps ``initial``; ``"two-opt"`` is section 3.3.2 (random swaps, strict
        improvement); ``"greedy"`` the greedy construction alone; ``"anneal"`` greedy followed by
        simulated annealing with guided swaps; ``"cco"`` the chain concatenation order
        (:func:`~libtopomap.collectives.multicast.cco_order`, section 3.4.4): the nodes in breadth-first
        order from the node of rank 0 (of ``initial``), no search.
    iterations : int
        Swaps tried (the thesis uses 200,000).
    seed : int, optional
        Reproducible random swaps.
    initial : array_like of int, optional
        Starting permutation (default ascending order).
    guide : float, optional
        Share of guided moves (annealing default 0.9, two-opt 0).
    temperatures : (float, float), optional
        Annealing start/end temperature (default: calibrated from the deltas of random swaps).
    time_budget : float, optional
        Seconds of wall time for the search (it also stops after ``iterations`` swaps); the
        annealing temperature then follows the share of the budget used.

    Returns
    -------
    RankSearch

    Raises
    ------
    MappingError
        Unknown objective or optimizer, negative iterations, a bad initial permutation, or a schedule
        that names more ranks than there are nodes.

    Notes
    -----
    Every optimizer is a schedule over the engine of :mod:`libtopomap.mappers.local_search` (one
    move generator, acceptance rule and bookkeeping for the mappers and the collectives): two-opt
    accepts below a threshold of 0, annealing by the Metropolis rule.

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, section 3.3.1 (ascending order), 3.3.2 (two-opt rank placement).
    S. Kirkpatrick, C. D. Gelatt and M. P. Vecchi, "Optimization by simulated annealing", Science
    220(4598), 1983 (the annealing schedule).
    """
    check_choice("collective-order", optimizer)
    iters = int(iterations)
    if iters != iterations or iters < 0:
        raise MappingError(f"iterations must be a non-negative integer, got {iterations!r}")
    nodes = np.asarray(allocation, dtype=np.int64)
    P = nodes.size
    if P == 0:
        raise MappingError("no nodes allocated")
    perm = ascending_order(P) if initial is None else np.asarray(initial, dtype=np.int64).copy()
    if perm.shape != (P,) or not np.array_equal(np.sort(perm), np.arange(P)):
        raise MappingError(f"initial placement must be a permutation of 0..{P - 1}")
    problem = _Problem(topology, nodes, steps, objective)
    annealing = optimizer == "anneal"
    if optimizer == "cco":
        perm = cco_order(topology, nodes, root=int(nodes[perm[0]]))
    if optimizer in ("none", "greedy", "cco"):
        iters = 0
    pguide = float(guide if guide is not None else (_GUIDE if annealing else 0.0))
    if not 0.0 <= pguide <= 1.0:
        raise MappingError(f"guide must be in [0, 1], got {guide!r}")
    if temperatures is not None:
        t0, t1 = (float(x) for x in temperatures)
        if not (t0 > 0 and t1 > 0):
            raise MappingError(f"temperatures must be positive, got {temperatures!r}")
    s = _seed(seed)
    tic = time.perf_counter()
    state = problem.state(perm)
    start = problem.cost(state.score)
    if optimizer in ("greedy", "anneal"):
        # Greedy constructions from the most central node and a few random ones (the best one wins);
        # the given start is kept if it is better.
        firsts = [problem.central]
        firsts += np.random.default_rng(s).choice(P, min(P, _GREEDY_STARTS) - 1, replace=False).tolist()
        best_score = state.score
        for first in dict.fromkeys(firsts):
            built = problem.greedy(first)
            st = problem.state(built)
            if st.score < best_score:
                perm, best_score, state = built, st.score, st
    cost, acc, done = problem.cost(state.score), 0, 0
    if iters > 0 and P > 1:
        t0 = t1 = 1.0
        if annealing and temperatures is None:
            t0, t1 = _calibrate(problem, state, pguide, s)
        elif annealing:
            t0, t1 = (float(x) for x in temperatures)
        best, stats = local_search(topology, problem.sym, None, problem.slots, "hops", state=state,
                                   thresholds_fn=_anneal_schedule(t0, t1, iters) if annealing else _zeros,
                                   rng=np.random.default_rng(s), time_budget=time_budget, iterations=iters,
                                   metropolis=annealing, p_local=pguide, lower=-np.inf, calibrate=False)
        cost, acc, done = problem.cost(stats["best"]), stats["accepted"], stats["iterations"]
        perm = problem.permutation(best.astype(np.int64), perm)
    seconds = time.perf_counter() - tic
    return RankSearch(perm, objective, optimizer, start, cost, done, acc, seconds)


def _zeros(progress, size, scale):
    return np.zeros(size)


def _anneal_schedule(t0, t1, total):
    """Temperatures of the next chunk: geometric from ``t0`` to ``t1`` over the budget."""
    ratio = t1 / t0

    def temps(progress, size, scale):
        return t0 * ratio ** np.minimum(progress + np.arange(1, size + 1) / max(total, 1), 1.0)
    return temps


def _calibrate(problem, state, pguide, seed):
    """Start/end temperatures from the smallest uphill step of sampled swaps (the objective's unit:
    1 hop, or 2 for exchanges).  The search starts from a good placement, so it runs cold: an uphill
    step of one unit is accepted with probability exp(-1/0.7) ~ 24 % at the start and ~ 0.7 % at
    the end.  The sampled moves are evaluated and undone (acceptance level -inf)."""
    n = _CALIBRATION_SWAPS if problem.objective == "hops" else _CALIBRATION_SWAPS // 4
    _, _, _, d = state.run(np.full(n, -np.inf), np.random.default_rng(seed + 1), p_local=pguide)
    d = d[np.isfinite(d) & (d > 0)]
    if problem.paths is not None and problem.pobj == 2:
        d = d % problem.big
        d = d[d > 0]
    unit = float(d.min()) if d.size else 1.0
    return _T_START * unit, _T_END * unit


@renamed_keyword("nodes", "allocation")
def two_opt(topology, allocation, steps, *, objective="hops", iterations=200_000, seed=None, initial=None):
    """Two-opt rank placement (section 3.3.2); see :func:`optimize_ranks`."""
    return optimize_ranks(topology, allocation, steps, objective=objective, optimizer="two-opt", iterations=iterations,
                          seed=seed, initial=initial)


@renamed_keyword("nodes", "allocation")
def anneal(topology, allocation, steps, *, objective="hops", iterations=200_000, seed=None, initial=None, guide=None,
           temperatures=None):
    """Simulated annealing with guided swaps; see :func:`optimize_ranks`."""
    return optimize_ranks(topology, allocation, steps, objective=objective, optimizer="anneal", iterations=iterations,
                          seed=seed, initial=initial, guide=guide, temperatures=temperatures)
