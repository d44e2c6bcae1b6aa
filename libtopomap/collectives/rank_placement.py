"""Rank placement on allocated nodes: ascending order, two-opt, simulated annealing (Cui 2024, 3.3).

The job's nodes are fixed (an allocation, :mod:`.allocation`); what is chosen is which rank runs on
which of them.  A placement is a permutation ``perm``: rank ``r`` runs on ``nodes[perm[r]]``.

* Ascending order (section 3.3.1): ``perm`` is the identity, rank ``i`` on the ``i``-th node.
* Two-opt (section 3.3.2): swap the ranks of two random nodes and keep the swap only if the objective
  drops.  Each swap is evaluated incrementally from the messages of the two ranks alone.
* Annealing (ours): simulated annealing over the same swaps, with a geometric temperature schedule
  and half of the moves *guided*: pick a rank ``a`` and one of its partners ``c`` and swap ``a`` with
  the rank on a node next to ``c``'s node, so a message can become one hop.  The best placement seen
  is returned.

Both run in numba; ``objective`` is ``"hops"`` (a distance-matrix delta), or ``"contention"`` /
``"step"`` (routes of the affected messages are removed from and re-added to per-step arc loads).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import MappingError
from .objectives import OBJECTIVES, _dedupe_steps, _flatten, job_distances, next_hop_arcs

__all__ = ["OPTIMIZERS", "RankSearch", "ascending_order", "optimize_ranks", "two_opt", "anneal"]

OPTIMIZERS = ("none", "two-opt", "greedy", "anneal")

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


# ---------------------------------------------------------------------------------------------------
# hops objective


@njit(cache=True)
def _hops_total(pos, D, inc_ptr, inc_other, inc_w):
    tot = 0
    for a in range(pos.size):
        for k in range(inc_ptr[a], inc_ptr[a + 1]):
            o = inc_other[k]
            if o > a:
                tot += inc_w[k] * D[pos[a], pos[o]]
    return tot


@njit(cache=True)
def _hops_delta(a, b, pos, D, inc_ptr, inc_other, inc_w):
    pa = pos[a]
    pb = pos[b]
    d = 0
    for k in range(inc_ptr[a], inc_ptr[a + 1]):
        o = inc_other[k]
        if o != b:
            po = pos[o]
            d += inc_w[k] * (D[pb, po] - D[pa, po])
    for k in range(inc_ptr[b], inc_ptr[b + 1]):
        o = inc_other[k]
        if o != a:
            po = pos[o]
            d += inc_w[k] * (D[pa, po] - D[pb, po])
    return d


@njit(cache=True)
def _pick(P, pos, rank_at, inc_ptr, inc_other, nbr_ptr, nbr, pguide):
    """A pair of ranks to swap: uniform, or guided next to a partner (returns a == b to skip)."""
    a = np.random.randint(0, P)
    if pguide > 0.0 and np.random.random() < pguide:
        deg = inc_ptr[a + 1] - inc_ptr[a]
        if deg == 0:
            return a, a
        c = inc_other[inc_ptr[a] + np.random.randint(0, deg)]
        x = pos[c]
        nd = nbr_ptr[x + 1] - nbr_ptr[x]
        if nd == 0:
            return a, a
        return a, rank_at[nbr[nbr_ptr[x] + np.random.randint(0, nd)]]
    return a, np.random.randint(0, P)


@njit(cache=True)
def _hops_search(pos, rank_at, D, inc_ptr, inc_other, inc_w, nbr_ptr, nbr, iters, annealing, pguide, t0, t1,
                 seed, best_pos):
    np.random.seed(seed)
    P = pos.size
    cur = _hops_total(pos, D, inc_ptr, inc_other, inc_w)
    best = cur
    best_pos[:] = pos
    accepted = 0
    temp = t0
    factor = (t1 / t0) ** (1.0 / max(iters, 1)) if annealing else 1.0
    for _ in range(iters):
        if annealing:
            temp *= factor
        a, b = _pick(P, pos, rank_at, inc_ptr, inc_other, nbr_ptr, nbr, pguide)
        if a == b:
            continue
        d = _hops_delta(a, b, pos, D, inc_ptr, inc_other, inc_w)
        if d < 0 or (annealing and np.random.random() < math.exp(-d / temp)):
            pa = pos[a]
            pb = pos[b]
            pos[a] = pb
            pos[b] = pa
            rank_at[pa] = b
            rank_at[pb] = a
            cur += d
            accepted += 1
            if annealing and cur < best:
                best = cur
                best_pos[:] = pos
    if annealing:
        pos[:] = best_pos
        for i in range(P):
            rank_at[pos[i]] = i
        return best, accepted
    return cur, accepted


@njit(cache=True)
def _hops_sample(pos, rank_at, D, inc_ptr, inc_other, inc_w, nbr_ptr, nbr, n, pguide, seed):
    """Positive deltas of ``n`` candidate swaps from the current placement (nothing applied)."""
    np.random.seed(seed)
    out = np.empty(n, dtype=np.float64)
    k = 0
    for _ in range(n):
        a, b = _pick(pos.size, pos, rank_at, inc_ptr, inc_other, nbr_ptr, nbr, pguide)
        if a == b:
            continue
        d = _hops_delta(a, b, pos, D, inc_ptr, inc_other, inc_w)
        if d > 0:
            out[k] = d
            k += 1
    return out[:k]


@njit(cache=True)
def _greedy(P, D, inc_ptr, inc_other, inc_w, nbr_ptr, nbr, first_node):
    """Greedy construction: place the rank with the most placed partners next, on the free node with
    the least hops to them (ties: the node with fewer free job neighbours, keeping well-connected nodes
    for later ranks)."""
    pos = np.full(P, -1, dtype=np.int64)
    used = np.zeros(P, dtype=np.bool_)
    conn = np.zeros(P, dtype=np.int64)
    free_nbrs = np.empty(P, dtype=np.int64)
    for x in range(P):
        free_nbrs[x] = nbr_ptr[x + 1] - nbr_ptr[x]
    scale = 1.0 / (P + 1.0)  # tie-break term stays below one hop
    for i in range(P):
        r = 0
        bx = first_node
        if i > 0:
            bc = -1
            for q in range(P):
                if pos[q] < 0 and conn[q] > bc:
                    bc = conn[q]
                    r = q
            bcost = 1e300
            for x in range(P):
                if used[x]:
                    continue
                c = 0.0
                for k in range(inc_ptr[r], inc_ptr[r + 1]):
                    o = inc_other[k]
                    if pos[o] >= 0:
                        c += inc_w[k] * D[x, pos[o]]
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
# path objectives: contention (1) and step model (2)


@njit(cache=True)
def _route(sign, ps, pd, st, sw, nodes, node_row, table, heads, load, hist, smax, objective, big):
    """Add (sign > 0) or remove one message's route; returns the change of the objective.

    Objective 1 is the contention; objective 2 is ``big * step model + contention``: the step model
    decides, contention breaks its many ties (a max-load objective is flat for most swaps)."""
    v = nodes[ps]
    target = nodes[pd]
    row = node_row[pd]
    delta = 0
    while v != target:
        a = table[row, v]
        L = load[st, a]
        if sign > 0:
            load[st, a] = L + 1
            if L >= 1:
                delta += sw
            if objective == 2:
                hist[st, L] -= 1
                hist[st, L + 1] += 1
                if L + 1 > smax[st]:
                    smax[st] = L + 1
                    delta += sw * big
        else:
            load[st, a] = L - 1
            if L >= 2:
                delta -= sw
            if objective == 2:
                hist[st, L] -= 1
                hist[st, L - 1] += 1
                if L == smax[st] and hist[st, L] == 0:
                    smax[st] = L - 1
                    delta -= sw * big
        v = heads[a]
    return delta


@njit(cache=True)
def _paths_init(pos, msrc, mdst, mstep, sw, nodes, node_row, table, heads, load, hist, smax, objective, big):
    tot = 0
    for m in range(msrc.size):
        tot += _route(1, pos[msrc[m]], pos[mdst[m]], mstep[m], sw[mstep[m]], nodes, node_row, table, heads,
                      load, hist, smax, objective, big)
    return tot


@njit(cache=True)
def _paths_move(a, b, pos, msrc, mdst, mstep, sw, minc_ptr, minc, buf, nodes, node_row, table, heads, load, hist,
                smax, objective, big):
    """Swap ranks a and b, updating loads; returns (delta, number of affected messages in buf)."""
    n = 0
    for k in range(minc_ptr[a], minc_ptr[a + 1]):
        buf[n] = minc[k]
        n += 1
    for k in range(minc_ptr[b], minc_ptr[b + 1]):
        m = minc[k]
        if msrc[m] != a and mdst[m] != a:
            buf[n] = m
            n += 1
    d = 0
    for i in range(n):
        m = buf[i]
        d += _route(-1, pos[msrc[m]], pos[mdst[m]], mstep[m], sw[mstep[m]], nodes, node_row, table, heads, load,
                    hist, smax, objective, big)
    pa = pos[a]
    pos[a] = pos[b]
    pos[b] = pa
    for i in range(n):
        m = buf[i]
        d += _route(1, pos[msrc[m]], pos[mdst[m]], mstep[m], sw[mstep[m]], nodes, node_row, table, heads, load,
                    hist, smax, objective, big)
    return d, n


@njit(cache=True)
def _paths_undo(a, b, n, pos, msrc, mdst, mstep, sw, buf, nodes, node_row, table, heads, load, hist, smax,
                objective, big):
    for i in range(n):
        m = buf[i]
        _route(-1, pos[msrc[m]], pos[mdst[m]], mstep[m], sw[mstep[m]], nodes, node_row, table, heads, load, hist,
               smax, objective, big)
    pa = pos[a]
    pos[a] = pos[b]
    pos[b] = pa
    for i in range(n):
        m = buf[i]
        _route(1, pos[msrc[m]], pos[mdst[m]], mstep[m], sw[mstep[m]], nodes, node_row, table, heads, load, hist,
               smax, objective, big)


@njit(cache=True)
def _paths_search(pos, rank_at, msrc, mdst, mstep, sw, minc_ptr, minc, inc_ptr, inc_other, nbr_ptr, nbr, nodes,
                  node_row, table, heads, load, hist, smax, objective, big, iters, annealing, pguide, t0, t1, seed,
                  best_pos, sample_only):
    np.random.seed(seed)
    P = pos.size
    cur = _paths_init(pos, msrc, mdst, mstep, sw, nodes, node_row, table, heads, load, hist, smax, objective, big)
    start = cur
    best = cur
    best_pos[:] = pos
    accepted = 0
    buf = np.empty(msrc.size + 1, dtype=np.int64)
    temp = t0
    factor = (t1 / t0) ** (1.0 / max(iters, 1)) if annealing else 1.0
    samples = np.empty(iters if sample_only else 0, dtype=np.float64)
    ns = 0
    for _ in range(iters):
        if annealing:
            temp *= factor
        a, b = _pick(P, pos, rank_at, inc_ptr, inc_other, nbr_ptr, nbr, pguide)
        if a == b:
            continue
        d, n = _paths_move(a, b, pos, msrc, mdst, mstep, sw, minc_ptr, minc, buf, nodes, node_row, table, heads,
                           load, hist, smax, objective, big)
        if sample_only:
            if d > 0:
                samples[ns] = d
                ns += 1
            _paths_undo(a, b, n, pos, msrc, mdst, mstep, sw, buf, nodes, node_row, table, heads, load, hist, smax,
                        objective, big)
            continue
        if d < 0 or (annealing and np.random.random() < math.exp(-d / temp)):
            rank_at[pos[a]] = a
            rank_at[pos[b]] = b
            cur += d
            accepted += 1
            if annealing and cur < best:
                best = cur
                best_pos[:] = pos
        else:
            _paths_undo(a, b, n, pos, msrc, mdst, mstep, sw, buf, nodes, node_row, table, heads, load, hist, smax,
                        objective, big)
    if annealing and best < cur:
        pos[:] = best_pos
        for i in range(P):
            rank_at[pos[i]] = i
        cur = best
    return start, cur, accepted, samples[:ns]


# ---------------------------------------------------------------------------------------------------
# problem setup


def _csr(n, owner, values):
    order = np.argsort(owner, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=ptr[1:])
    return ptr, [v[order] for v in values]


class _Problem:
    """Arrays shared by the search kernels for one (topology, nodes, schedule, objective)."""

    def __init__(self, topology, nodes, steps, objective):
        if objective not in OBJECTIVES:
            raise MappingError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
        self.objective = objective
        nodes = np.asarray(nodes, dtype=np.int64)
        P = nodes.size
        self.P = P
        src, dst, _ = _flatten(steps)
        if src.size and max(int(src.max()), int(dst.max())) >= P:
            raise MappingError(f"the schedule names rank {max(int(src.max()), int(dst.max()))} but only {P} nodes "
                               "are allocated")
        self.D = job_distances(topology, nodes)
        # Hop costs are symmetric: merge (s, d) and (d, s) messages into one weighted pair.
        lo, hi = np.minimum(src, dst), np.maximum(src, dst)
        key, w = np.unique(lo * P + hi, return_counts=True)
        a, b = key // P, key % P
        owner = np.concatenate([a, b])
        self.inc_ptr, (self.inc_other, self.inc_w) = _csr(P, owner, [np.concatenate([b, a]),
                                                                     np.concatenate([w, w]).astype(np.int64)])
        # Job nodes within one hop of each node (targets of guided moves).
        near = (self.D <= 1)
        np.fill_diagonal(near, False)
        ii, jj = np.nonzero(near)
        self.nbr_ptr, (self.nbr,) = _csr(P, ii, [jj.astype(np.int64)])
        if objective != "hops":
            usteps, self.sw = _dedupe_steps(steps)
            self.msrc, self.mdst, self.mstep = _flatten(usteps)
            m = np.arange(self.msrc.size, dtype=np.int64)
            self.minc_ptr, (self.minc,) = _csr(P, np.concatenate([self.msrc, self.mdst]), [np.concatenate([m, m])])
            uniq, inv = np.unique(nodes, return_inverse=True)
            self.nodes = nodes
            self.node_row = inv.astype(np.int64)
            self.table = next_hop_arcs(topology, uniq)
            self.heads = topology.indices.astype(np.int64)
            S = len(usteps)
            per_step = np.bincount(self.mstep, minlength=S) if S else np.zeros(0, np.int64)
            self.S = S
            self.n_arcs = topology.n_arcs
            self.lmax = int(per_step.max()) if S else 0
            # Exceeds any contention, so big * step + contention orders by step first.
            self.big = int(self.sw[self.mstep].sum() * max(int(self.D.max()), 1) + 1) if self.msrc.size else 1

    def _loads(self):
        load = np.zeros((self.S, self.n_arcs), dtype=np.int32)
        hist = np.zeros((self.S, self.lmax + 2), dtype=np.int64)
        hist[:, 0] = self.n_arcs
        return load, hist, np.zeros(self.S, dtype=np.int64)

    def search(self, perm, iters, annealing, pguide, t0, t1, seed, sample_only=False):
        pos = perm.copy()
        rank_at = np.empty(self.P, dtype=np.int64)
        rank_at[pos] = np.arange(self.P)
        best = np.empty_like(pos)
        if self.objective == "hops":
            if sample_only:
                s = _hops_sample(pos, rank_at, self.D, self.inc_ptr, self.inc_other, self.inc_w, self.nbr_ptr,
                                 self.nbr, iters, pguide, seed)
                return s
            start = _hops_total(pos, self.D, self.inc_ptr, self.inc_other, self.inc_w)
            cost, acc = _hops_search(pos, rank_at, self.D, self.inc_ptr, self.inc_other, self.inc_w, self.nbr_ptr,
                                     self.nbr, iters, annealing, pguide, t0, t1, seed, best)
            return pos, int(start), int(cost), int(acc)
        load, hist, smax = self._loads()
        objective = 1 if self.objective == "contention" else 2
        start, cost, acc, samples = _paths_search(
            pos, rank_at, self.msrc, self.mdst, self.mstep, self.sw, self.minc_ptr, self.minc, self.inc_ptr,
            self.inc_other, self.nbr_ptr, self.nbr, self.nodes, self.node_row, self.table, self.heads, load, hist,
            smax, objective, self.big, iters, annealing, pguide, t0, t1, seed, best, sample_only)
        if sample_only:
            return samples % self.big if objective == 2 else samples
        if objective == 2:  # report the step model itself
            return pos, int(start) // self.big, int(cost) // self.big, int(acc)
        return pos, int(start), int(cost), int(acc)


def _seed(seed):
    if isinstance(seed, (int, np.integer)) and 0 <= seed < 2**32:
        return int(seed)
    return int(np.random.default_rng(seed).integers(0, 2**31 - 1))


def optimize_ranks(topology, nodes, steps, *, objective="hops", optimizer="two-opt", iterations=200_000, seed=None,
                   initial=None, guide=None, temperatures=None):
    """Choose which rank runs on which allocated node.

    Parameters
    ----------
    topology : Topology
    nodes : array_like of int
        The allocated vertices in allocation order (a vertex may repeat when it has several slots).
    steps : list of numpy.ndarray
        The collective's schedule (:func:`~libtopomap.collectives.schedules.schedule`).
    objective : {"hops", "contention", "step"}
        See :mod:`~libtopomap.collectives.objectives`.
    optimizer : {"none", "two-opt", "anneal"}
        ``"none"`` keeps ``initial``; ``"two-opt"`` is section 3.3.2 (random swaps, strict
        improvement); ``"anneal"`` is simulated annealing with guided swaps.
    iterations : int
        Swaps tried (the thesis uses 200,000).
    seed : int, optional
        Reproducible random swaps.
    initial : array_like of int, optional
        Starting permutation (default ascending order).
    guide : float, optional
        Share of guided moves (annealing default 0.5, two-opt 0).
    temperatures : (float, float), optional
        Annealing start/end temperature (default: calibrated from the deltas of random swaps).

    Returns
    -------
    RankSearch

    Raises
    ------
    MappingError
        Unknown objective or optimizer, negative iterations, a bad initial permutation, or a schedule
        that names more ranks than there are nodes.

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, section 3.3.1 (ascending order), 3.3.2 (two-opt rank placement).
    """
    if optimizer not in OPTIMIZERS:
        raise MappingError(f"unknown optimizer {optimizer!r}; expected one of {', '.join(OPTIMIZERS)}")
    iters = int(iterations)
    if iters != iterations or iters < 0:
        raise MappingError(f"iterations must be a non-negative integer, got {iterations!r}")
    nodes = np.asarray(nodes, dtype=np.int64)
    P = nodes.size
    if P == 0:
        raise MappingError("no nodes allocated")
    perm = ascending_order(P) if initial is None else np.asarray(initial, dtype=np.int64).copy()
    if perm.shape != (P,) or not np.array_equal(np.sort(perm), np.arange(P)):
        raise MappingError(f"initial placement must be a permutation of 0..{P - 1}")
    problem = _Problem(topology, nodes, steps, objective)
    annealing = optimizer == "anneal"
    if optimizer in ("none", "greedy"):
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
    _, start, _, _ = problem.search(perm, 0, False, 0.0, 1.0, 1.0, s)
    if optimizer in ("greedy", "anneal"):
        # Greedy constructions from the most central node and a few random ones (the best one wins);
        # the given start is kept if it is better.
        firsts = [int(np.argmin(problem.D.sum(axis=1)))]
        firsts += np.random.default_rng(s).choice(P, min(P, _GREEDY_STARTS) - 1, replace=False).tolist()
        best_cost = start
        for first in dict.fromkeys(firsts):
            built = _greedy(P, problem.D, problem.inc_ptr, problem.inc_other, problem.inc_w, problem.nbr_ptr,
                            problem.nbr, first)
            _, built_cost, _, _ = problem.search(built, 0, False, 0.0, 1.0, 1.0, s)
            if built_cost < best_cost:
                perm, best_cost = built, built_cost
    t0 = t1 = 1.0
    if annealing and temperatures is None:
        t0, t1 = _calibrate(problem, perm, pguide, s)
    elif annealing:
        t0, t1 = (float(x) for x in temperatures)
    pos, _, cost, acc = problem.search(perm, iters, annealing, pguide, t0, t1, s)
    seconds = time.perf_counter() - tic
    return RankSearch(pos, objective, optimizer, start, cost, iters, acc, seconds)


def _calibrate(problem, perm, pguide, seed):
    """Start/end temperatures from the smallest uphill step of sampled swaps (the objective's unit:
    1 hop, or 2 for exchanges).  The search starts from a good placement, so it runs cold: an uphill
    step of one unit is accepted with probability exp(-1/0.7) ~ 24 % at the start and ~ 0.7 % at
    the end."""
    n = _CALIBRATION_SWAPS if problem.objective == "hops" else _CALIBRATION_SWAPS // 4
    d = problem.search(perm, n, False, pguide, 1.0, 1.0, seed + 1, sample_only=True)
    d = d[d > 0]
    unit = float(d.min()) if d.size else 1.0
    return _T_START * unit, _T_END * unit


def two_opt(topology, nodes, steps, *, objective="hops", iterations=200_000, seed=None, initial=None):
    """Two-opt rank placement (section 3.3.2); see :func:`optimize_ranks`."""
    return optimize_ranks(topology, nodes, steps, objective=objective, optimizer="two-opt", iterations=iterations,
                          seed=seed, initial=initial)


def anneal(topology, nodes, steps, *, objective="hops", iterations=200_000, seed=None, initial=None, guide=None,
           temperatures=None):
    """Simulated annealing with guided swaps; see :func:`optimize_ranks`."""
    return optimize_ranks(topology, nodes, steps, objective=objective, optimizer="anneal", iterations=iterations,
                          seed=seed, initial=initial, guide=guide, temperatures=temperatures)
