"""One portfolio driver for every mapping race: candidates, budgets, scores, memory, selection.

The offline ``libtopomap map`` command, the MPI layer (:func:`libtopomap.Create_dist_graph_adjacent`,
:func:`~libtopomap.Create_dist_graph`, :func:`~libtopomap.topomap`) and
:func:`~libtopomap.reorder_for_collective` all race a *portfolio* of candidates (Hoefler & Snir,
ICS'11, section 4.2): each candidate is a strategy with a seed (and, for mappings, a start vertex
and a refinement); the best scored candidate wins.  This module holds everything of that race except
communication, so the same inputs give the same winner offline or under MPI:

* :func:`make_candidates` -- the list: candidate 0 is always the current placement (``identity``,
  never refined), then ``strategy x seed x refinement``, strategy ``k mod S`` for candidate ``k + 1``,
  seeds derived from the base seed and the candidate's position (not from who runs it);
* :class:`MappingProblem` / :class:`CollectiveProblem` -- how one candidate is run within its budget
  and scored (generic: the driver only calls ``evaluate(candidate)``, ``estimate(candidate)`` and
  reads ``order``);
* :func:`selection_key` / :func:`select` -- the deterministic lexicographic order: the score tuple
  (for mappings: the chosen objective, then average congestion, then hop-bytes), then a fixed strategy
  order (the current placement first, so a full tie moves nothing, then :data:`STRATEGY_ORDER`),
  then the candidate's position;
* :func:`estimate_memory`, :func:`plan_ranks`, :func:`assign_candidates`, :func:`numba_threads` --
  how many ranks of a node may run a strategy at once under a per-node memory bound, which rank runs
  which candidate, and how many numba threads each mapping rank gets;
* :func:`run_portfolio` -- the serial driver (the MPI driver is :func:`libtopomap.mpi.driver.race`).

This module never imports mpi4py.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ._deprecation import renamed_keyword
from .errors import MappingError

__all__ = ["STRATEGY_ORDER", "Candidate", "Outcome", "Skipped", "PortfolioResult", "candidate_seed",
           "make_candidates", "selection_key", "select", "REFINE_BEST", "refinement_choice", "not_refined",
           "bound_skip", "budget_skip", "MappingProblem", "CollectiveProblem", "lower_bounds",
           "estimate_memory", "default_max_memory", "default_iterations", "format_bytes", "check_memory", "plan_ranks",
           "assign_candidates", "numba_threads", "numba_thread_limit", "run_portfolio", "DEFAULT_TOTAL_BUDGET",
           "CONSTRUCTION_SHARE", "estimate_seconds", "race_caches", "CAPPED_PASSES"]

#: Tie order of raced strategies after equal scores, by how structured their result is.  The current
#: placement (candidate 0) comes before all of them (a full tie moves nothing); ``identity`` here is a
#: *refined* current placement.
STRATEGY_ORDER = ("greedy", "recursive", "multisection", "scotch", "rcm", "random", "identity")

# Scores are compared after rounding to this many significant digits, so two placements whose values
# are mathematically equal but were summed in another order tie (and the next key decides).
_DIGITS = 12


# ----------------------------------------------------------------------------------- candidates
@dataclass(frozen=True)
class Candidate:
    """One entry of the portfolio.

    Attributes
    ----------
    index : int
        Position in the list; 0 is the current placement.
    strategy : str
        Mapping strategy (or collective optimizer); ``"identity"`` for candidate 0.
    seed : int or None
    refine : str or None
        Refinement after the construction (mappings only).
    start : int or None
        Greedy's start vertex (mappings only).
    """

    index: int
    strategy: str
    seed: int | None = None
    refine: str | None = None
    start: int | None = None

    @property
    def baseline(self):
        """Whether this is the current placement (candidate 0)."""
        return self.index == 0

    @property
    def label(self):
        """``"current"`` for candidate 0, else ``strategy[+refine]``."""
        if self.baseline:
            return "current"
        return self.strategy + (f"+{self.refine}" if self.refine else "")


def candidate_seed(base, k, salt=None):
    """Seed of raced candidate ``k`` (0-based, candidate index ``k + 1``) from the base seed.

    Examples
    --------
    >>> candidate_seed(1, 0) == candidate_seed(1, 0) != candidate_seed(1, 1)
    True
    """
    entropy = [int(base), int(k)] + ([] if salt is None else [int(salt)])
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint32)[0])


def make_candidates(strategies, *, seed, refine=None, count=None, starts=None, salt=None):
    """The portfolio: candidate 0 is the current placement, then ``count`` raced candidates.

    Parameters
    ----------
    strategies : sequence of str
        Raced candidate ``k`` (index ``k + 1``) runs ``strategies[k % S]``.
    seed : int
        Base seed; candidate ``k + 1`` gets :func:`candidate_seed` ``(seed, k, salt)``.
    refine : str, optional
        Refinement of every raced candidate.
    count : int, optional
        Number of raced candidates, at least ``S`` (default ``S``).  The MPI layer passes the number
        of mapping ranks, so larger jobs try more seeds and start vertices.
    starts : sequence of int, optional
        Start vertices; round ``k // S`` uses ``starts[(k // S) % len(starts)]``.
    salt : int, optional
        Mixed into the seeds (the collective race uses its own seed stream).

    Returns
    -------
    list of Candidate

    Examples
    --------
    >>> [c.label for c in make_candidates(["greedy", "rcm"], seed=0, refine="ta", count=3)]
    ['current', 'greedy+ta', 'rcm+ta', 'greedy+ta']
    """
    strategies = tuple(strategies)
    if not strategies:
        raise MappingError("the portfolio has no strategies")
    n = len(strategies) if count is None else max(int(count), len(strategies))
    starts = None if starts is None or len(starts) == 0 else [int(s) for s in starts]
    out = [Candidate(0, "identity")]
    for k in range(n):
        rnd = k // len(strategies)
        out.append(Candidate(k + 1, strategies[k % len(strategies)], candidate_seed(seed, k, salt), refine,
                             None if starts is None else starts[rnd % len(starts)]))
    return out


# ----------------------------------------------------------------------------------- outcomes and selection
@dataclass
class Outcome:
    """A candidate that ran: its result, score and cost.

    Attributes
    ----------
    candidate : Candidate
    label : str
        What ran (e.g. ``"greedy+ta"``, ``"multicore(greedy)"``, ``"current"``).
    key : tuple of float
        The score, lower is better (for mappings ``(objective, avg_congestion, hop_bytes)``).
    metrics : dict
        Numbers for the report (for mappings: ``objective`` and the keys of
        :func:`libtopomap.evaluate`).
    payload : numpy.ndarray or None
        The result: topology vertex per process (mappings) or the rank permutation (collectives).
    seconds : float
    rank : int or None
        Rank that ran it (MPI), else None.
    note : str
        E.g. why a refinement was skipped.
    at_bound : bool
        The result reaches the problem's lower bounds (nothing can beat it): it wins before every
        candidate that does not (see :func:`selection_key`).
    """

    candidate: Candidate
    label: str
    key: tuple
    metrics: dict
    payload: np.ndarray | None = field(default=None, repr=False)
    seconds: float = 0.0
    rank: int | None = None
    note: str = ""
    at_bound: bool = False

    def record(self):
        """A small JSON-ready dict (no payload)."""
        c = self.candidate
        return {"index": c.index, "strategy": c.strategy, "label": self.label, "seed": c.seed, "refine": c.refine,
                "start": c.start, "key": [float(x) for x in self.key], "metrics": dict(self.metrics),
                "seconds": float(self.seconds), "rank": self.rank, "note": self.note, "at_bound": self.at_bound}

    @classmethod
    def from_record(cls, candidate, rec, payload=None):
        """The outcome of :meth:`record` (``payload`` given separately)."""
        return cls(candidate, rec["label"], tuple(rec["key"]), rec["metrics"], payload, rec["seconds"], rec["rank"],
                   rec["note"], bool(rec.get("at_bound", False)))

    def sort_key(self, order=STRATEGY_ORDER):
        """:func:`selection_key` of this outcome."""
        c = self.candidate
        return selection_key(self.key, c.strategy, c.index, order, at_bound=self.at_bound)


@dataclass(frozen=True)
class Skipped:
    """A candidate that was not run, and why."""

    candidate: Candidate
    reason: str


def _round(x):
    x = float(x)
    if not math.isfinite(x):
        return math.inf
    return float(f"{x:.{_DIGITS}g}")


def _rounded(key):
    return tuple(_round(x) for x in key)


def _order_index(strategy, index, order=STRATEGY_ORDER):
    if index == 0:
        return -1
    return order.index(strategy) if strategy in order else len(order)


def selection_key(key, strategy, index, order=STRATEGY_ORDER, *, at_bound=False):
    """The total order of the race: ``(*rounded score, strategy order, candidate index)``.

    The current placement (index 0) comes first in the strategy order, then ``order``, then unknown
    strategies.  NaN and infinite scores count as ``+inf``.  A result at the problem's lower bounds
    (``at_bound``) comes before all others, the lowest candidate index first: ``(-1, ..., -1,
    index)``; the serial driver stops at the first one, so the MPI race, which runs every candidate,
    picks the same.  Every entry is a float, so the key can be reduced component by component with
    ``MPI.MIN``.

    Examples
    --------
    >>> selection_key((1.0, 2.0), "random", 3) > selection_key((1.0, 2.0), "greedy", 7)
    True
    >>> selection_key((5.0, 9.0), "rcm", 4, at_bound=True) < selection_key((1.0, 2.0), "greedy", 1)
    True
    """
    if at_bound:
        return (-1.0,) * (len(key) + 1) + (float(index),)
    return _rounded(key) + (float(_order_index(strategy, index, order)), float(index))


def select(outcomes, order=STRATEGY_ORDER):
    """The winning outcome: lowest :func:`selection_key`."""
    outcomes = list(outcomes)
    if not outcomes:
        raise MappingError("no candidate ran")
    return min(outcomes, key=lambda o: o.sort_key(order))


#: Refinements start from the best constructions only: this many per round of strategies (a round
#: is one candidate of every strategy; the MPI layer races more rounds on more ranks).
REFINE_BEST = 2


def refinement_choice(constructions, candidates, order=STRATEGY_ORDER):
    """Indices of the candidates whose construction is refined: none when a construction (or the
    current placement) is at the lower bound, else the ``REFINE_BEST x rounds`` best constructions
    of candidates with a refinement, by :func:`selection_key`.

    Parameters
    ----------
    constructions : iterable of Outcome
        Scored constructions (or their records via :meth:`Outcome.from_record`), the current placement
        included; the same on every rank.
    candidates : list of Candidate

    Returns
    -------
    set of int

    Examples
    --------
    >>> cands = make_candidates(["greedy", "rcm", "random"], seed=0, refine="ta")
    >>> outs = [Outcome(c, c.label, (float(k),), {}) for k, c in zip([9, 3, 1, 2], cands)]
    >>> sorted(refinement_choice(outs, cands))
    [2, 3]
    """
    constructions = list(constructions)
    if any(o.at_bound for o in constructions):
        return set()
    raced = [c for c in candidates if not c.baseline]
    rounds = -(-len(raced) // max(1, len({c.strategy for c in raced})))
    ranked = sorted((o for o in constructions if not o.candidate.baseline and o.candidate.refine),
                    key=lambda o: o.sort_key(order))
    return {o.candidate.index for o in ranked[:REFINE_BEST * rounds]}


@dataclass
class PortfolioResult:
    """The result of a race.

    Attributes
    ----------
    winner, baseline : Outcome
        The chosen candidate and the current placement (the same object when nothing beat it).
    outcomes : list of Outcome
        Every candidate that ran, in index order (payloads only on the rank that ran them under MPI).
    skipped : list of Skipped
    plan : dict
        Who ran what: ``max_memory``, ``mapping_ranks``, ``threads`` (MPI) and the estimates.
    """

    winner: Outcome
    baseline: Outcome
    outcomes: list
    skipped: list
    plan: dict = field(default_factory=dict)

    @property
    def improved(self):
        return not self.winner.candidate.baseline


# ----------------------------------------------------------------------------------- lower bounds
def lower_bounds(topology, graph, slots):
    """Cheap lower bounds of the mapping objectives, or 0 where none is known.

    With at most one process per host (``max(slots) <= 1``) every edge between two processes
    crosses at least one link, so

    * hop-bytes >= the weight of the edges between distinct processes, and average dilation >=
      that weight over the total weight;
    * max congestion >= every process's outgoing (incoming) weight over the largest total
      outgoing (incoming) link capacity of a usable host: all of it leaves through the host's
      links, and the most loaded of them carries at least the capacity-weighted average; and
      >= the total cross weight over the total arc capacity (every such edge loads at least one arc).

    Parameters
    ----------
    topology : Topology
    graph : CommGraph
    slots : array_like of int
        Usable slots per vertex.

    Returns
    -------
    dict
        ``{"congestion", "dilation", "hopbytes"}``.
    """
    zero = {"congestion": 0.0, "dilation": 0.0, "hopbytes": 0.0}
    slots = np.asarray(slots)
    if graph.n_edges == 0 or slots.size == 0 or int(slots.max()) > 1:
        return zero
    src, dst, w = graph.src, graph.dst, np.asarray(graph.weights, dtype=np.float64)
    cross = src != dst
    total = float(w.sum())
    wx = float(w[cross].sum())
    if wx <= 0:
        return zero
    n = graph.n
    outw = np.bincount(src[cross], weights=w[cross], minlength=n)
    inw = np.bincount(dst[cross], weights=w[cross], minlength=n)
    usable = np.flatnonzero(slots > 0)
    cap = np.asarray(topology.arc_capacity, dtype=np.float64)
    outcap = np.bincount(topology.arc_source, weights=cap, minlength=topology.n_vertices)[usable].max()
    incap = np.bincount(topology.indices, weights=cap, minlength=topology.n_vertices)[usable].max()
    cong = max(outw.max() / outcap, inw.max() / incap, wx / cap.sum())
    return {"congestion": float(cong), "dilation": wx / total, "hopbytes": wx}


def _at_bound(value, bound):
    return bound > 0 and value <= bound * (1 + 1e-9)


# ----------------------------------------------------------------------------------- memory
_MIB = 1 << 20
# Distance table of the distance oracle (libtopomap.distances.TABLE_LIMIT attachment vertices, uint8).
_ORACLE_TABLE = 64 * _MIB
# Hosts up to which greedy keeps a dense host-distance matrix (mappers/greedy.py).
_GREEDY_DENSE_HOSTS = 20000
# The local-search engine (mappers/local_search.py) is linear: per usable host its nearest slot
# vertices (k = NEAR_SLOTS = 12 with the ties at the k-th distance; int64, counted as 4 k), per
# vertex the k-nearest and ECMP search scratch; for congestion the move log (_LOG entries of
# 16 bytes) and one partial traffic array per thread while the start is evaluated (up to 16).
_NEAR_BYTES_PER_HOST = 8 * 4 * 12
_SEARCH_BYTES_PER_VERTEX = 48
_ECMP_LOG = 16 * _MIB
_TRAFFIC_PARTS = 16


def _sizes(topology, graph, slots=None):
    P = int(graph.n)
    E = int(graph.n_edges)
    n = int(topology.n_vertices)
    A = int(topology.n_arcs)
    H = int(topology.hosts.size)
    S = int(np.asarray(topology.slots if slots is None else slots).sum())
    return P, E, n, A, H, S


def estimate_memory(strategy, topology, graph, refine=None, *, objective="congestion", slots=None):
    """Conservative peak memory, in bytes, of running one candidate (construction, refinement, scoring).

    Counts what the candidate allocates on top of the inputs every rank already holds (topology,
    graph).  With ``P`` processes, ``E`` communication edges, ``n`` topology vertices, ``A`` arcs
    (two per link), ``H`` hosts and ``S`` slots:

    ======================  ==================================================================
    part                    bytes
    ======================  ==================================================================
    scoring (every one)     ``min(n^2, 64 MiB)`` (distance-oracle table) ``+ 48 A + 64 E + 32 P
                            + 64 n``
    ``identity``            ``+ 16 P``
    ``random``              ``+ 24 S + 16 P``
    ``rcm``                 ``+ 96 (E + A) + 64 (P + n)``
    ``recursive``           ``+ 256 (P + E + n + A)`` (METIS copies, one level at a time)
    ``multisection``        ``+ 256 (P + E + n + A) + 64 n`` (as ``recursive``, plus the
                            hierarchy and the swap search's scratch)
    ``scotch``              ``+ 400 (E + A) + 200 (P + n)`` (Python edge lists for pyscotch and
                            Scotch's own graphs and decomposition-defined architecture)
    ``greedy``              ``+ 2 H^2`` while ``H <= 20,000`` (dense host distances)
                            ``+ 64 (P + n + A) + 48 E``
    refinement (ta/2-opt)   ``+ 384 H`` (nearest slot vertices) ``+ 48 n`` (search scratch)
                            ``+ 8 (3 A + 6 P + 12 E + 2 S)``; for congestion also ``+ 16 MiB``
                            (move log) ``+ 128 A`` (per-thread traffic of the start, 16 threads)
    ======================  ==================================================================

    ``identity``, ``random``, ``rcm``, ``recursive``, ``scotch`` and the refinements (the
    local-search engine keeps no distance matrix) are linear in the size of the inputs; ``greedy``
    is quadratic in the number of hosts up to the threshold above (a dense host-distance matrix)
    and linear beyond it.

    Parameters
    ----------
    strategy : str
        A mapping strategy (``identity``, ``random``, ``greedy``, ``rcm``, ``recursive``, ``scotch``).
    topology : Topology
    graph : CommGraph
    refine : {None, "two-opt", "ta", "hb-swap"}
    objective : {"congestion", "dilation", "hopbytes"}
    slots : array_like of int, optional

    Returns
    -------
    int

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t, g = ltm.torus("4x4"), ltm.load_graph("stencil:4x4")
    >>> estimate_memory("rcm", t, g) < estimate_memory("rcm", t, g, refine="ta")
    True
    """
    P, E, n, A, H, S = _sizes(topology, graph, slots)
    total = min(n * n, _ORACLE_TABLE) + 48 * A + 64 * E + 32 * P + 64 * n
    if strategy == "identity":
        total += 16 * P
    elif strategy == "random":
        total += 24 * S + 16 * P
    elif strategy == "rcm":
        total += 96 * (E + A) + 64 * (P + n)
    elif strategy == "recursive":
        total += 256 * (P + E + n + A)
    elif strategy == "multisection":
        total += 256 * (P + E + n + A) + 64 * n
    elif strategy == "scotch":
        total += 400 * (E + A) + 200 * (P + n)
    elif strategy == "greedy":
        total += (2 * H * H if H <= _GREEDY_DENSE_HOSTS else 0) + 64 * (P + n + A) + 48 * E
    else:
        raise MappingError(f"no memory estimate for strategy {strategy!r}")
    if refine:
        total += _NEAR_BYTES_PER_HOST * H + _SEARCH_BYTES_PER_VERTEX * n + 8 * (3 * A + 6 * P + 12 * E + 2 * S)
        if objective == "congestion":
            total += _ECMP_LOG + 8 * _TRAFFIC_PARTS * A
        if refine == "hb-swap" or objective == "hopbytes":
            from .mappers.hopbytes_swap import BATCH, NC_CAP

            total += 40 * BATCH * NC_CAP  # a batch of listed moves, its levels and deltas
    return int(total)


def _collective_memory(topology, nprocs, objective, n_messages):
    """Conservative bytes of one collective rank search (collectives/rank_placement.py on the
    local-search engine, no ``P x P``, ``H x H`` or ``n x P`` array): the distance oracle's table,
    per-message and per-process arrays, the one-hop neighbour lists ``16 (A + P)``, the search
    scratch ``56 n``, and for path objectives the per-step arc loads ``4 (log2 P + P) A``."""
    P, n, A = int(nprocs), int(topology.n_vertices), int(topology.n_arcs)
    total = min(n * n, _ORACLE_TABLE) + 64 * n_messages + 64 * P + 16 * (A + P) + 56 * n
    if objective != "hops":
        total += 4 * (P + max(P, 2).bit_length()) * A
    return int(total)


def default_max_memory():
    """A quarter of this node's physical memory, in bytes (``SC_PHYS_PAGES x SC_PAGE_SIZE / 4``)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")) // 4
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 4 << 30


def format_bytes(b):
    """``3.2 GB``-style text (powers of 1000).

    Examples
    --------
    >>> format_bytes(3_200_000_000), format_bytes(512)
    ('3.2 GB', '512 B')
    """
    b = float(b)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(b) < 1000 or unit == "TB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.3g} {unit}"
        b /= 1000


def check_memory(max_memory):
    """Validate ``max_memory`` (bytes per node, positive) or return the default."""
    if max_memory is None:
        return default_max_memory()
    try:
        ok = float(max_memory) > 0 and float(max_memory) == int(max_memory)
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise MappingError(f"max_memory must be a positive number of bytes, got {max_memory!r}")
    return int(max_memory)


def plan_ranks(node_of_rank, estimates, max_memory):
    """Which ranks may map, so that no node holds more than ``max_memory`` of running strategies.

    Every candidate whose estimate exceeds ``max_memory`` is skipped.  Each node runs at most
    ``k = max_memory // peak`` candidates at once, ``peak`` being the largest estimate that fits
    (``k = 1`` when none fits: one rank scores the current placement): its first ``k`` ranks (in
    rank order) map, the others only wait.

    Parameters
    ----------
    node_of_rank : array_like of int
        A node id per rank (ranks sharing memory share the id).
    estimates : sequence of int
        Bytes of each candidate to place.
    max_memory : int
        Bytes per node.

    Returns
    -------
    mapping_ranks : list of int
        Round robin over the nodes (first mapping rank of every node, then the second...), so a
        few candidates spread over nodes rather than crowding one.
    fits : list of bool
        Per estimate.

    Examples
    --------
    >>> plan_ranks([0, 0, 0, 0, 4, 4], [100, 300, 900], 650)
    ([0, 4, 1, 5], [True, True, False])
    """
    node_of_rank = np.asarray(node_of_rank, dtype=np.int64).reshape(-1)
    fits = [int(e) <= max_memory for e in estimates]
    peak = max([int(e) for e, f in zip(estimates, fits) if f], default=0)
    k = max_memory // peak if peak > 0 else 1
    nodes, first = np.unique(node_of_rank, return_index=True)
    members = [np.flatnonzero(node_of_rank == nd) for nd in nodes[np.argsort(first)]]
    out = []
    for j in range(int(min(k, max((m.size for m in members), default=0)))):
        out.extend(int(m[j]) for m in members if j < m.size)
    return out, fits


def assign_candidates(indices, mapping_ranks):
    """Raced candidate ``indices[j]`` runs on ``mapping_ranks[j % R]``; the baseline (index 0) on
    ``mapping_ranks[0]``.  Returns ``{rank: [candidate index, ...]}``.

    Examples
    --------
    >>> assign_candidates([0, 1, 2, 3], [2, 0])
    {2: [0, 1, 3], 0: [2]}
    """
    out = {r: [] for r in mapping_ranks}
    raced = [i for i in indices if i != 0]
    if 0 in indices:
        out[mapping_ranks[0]].append(0)
    for j, i in enumerate(raced):
        out[mapping_ranks[j % len(mapping_ranks)]].append(i)
    return {r: v for r, v in out.items() if v}


def numba_threads(cores, mapping_ranks_on_node):
    """Numba threads per mapping rank: the node's cores shared among its mapping ranks (at least 1).

    Examples
    --------
    >>> numba_threads(16, 3), numba_threads(2, 8)
    (5, 1)
    """
    return max(1, int(cores) // max(1, int(mapping_ranks_on_node)))


@contextlib.contextmanager
def numba_thread_limit(n):
    """Run the block with ``numba.set_num_threads(n)`` (capped by numba's pool), then restore.

    Imports numba, so use it only where a strategy is about to run anyway.
    """
    if n is None:
        yield
        return
    import numba

    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(old)


# ----------------------------------------------------------------------------------- budgets
#: Refinement moves per process of the default budget, and its bounds.
MOVES_PER_PROCESS = 4
MIN_ITERATIONS, MAX_ITERATIONS = 2000, 20000


def default_iterations(nprocs):
    """Default refinement budget of a portfolio candidate: ``4 P`` moves, within [2,000, 20,000].

    The refinements' own default (20,000 moves, plus as many hop-bytes warm-up moves for the
    congestion objective) spends ~4 s per candidate at P = 1,728 on a loaded 2-core machine; the
    portfolio runs one per strategy, so a move budget proportional to the job keeps small races
    short and, unlike a time budget, gives the same result on every run.

    Examples
    --------
    >>> default_iterations(16), default_iterations(1728), default_iterations(262144)
    (2000, 6912, 20000)
    """
    return int(min(MAX_ITERATIONS, max(MIN_ITERATIONS, MOVES_PER_PROCESS * int(nprocs))))


#: Passes of the congestion winner's capped hop-bytes clean-up at the most (:meth:`MappingProblem.polish`);
#: a pass that moves nothing ends it first (a local optimum), and so does its move budget.
CAPPED_PASSES = 50

#: Seconds of a whole mapping race on one process when none is given: every phase keeps within it
#: (the scale issue's target is 120 s for ``map --strategy all --refine ta`` at 32,768 processes).
DEFAULT_TOTAL_BUDGET = 100.0
#: Share of the overall budget the constructions may use; the refinements get what is left.
CONSTRUCTION_SHARE = 0.5
# Idle seconds per unit of work (P + n + E + A) of each construction, scoring included: the slowest of
# torus, fat tree and dragonfly in benchmarks/bench_scale.py runs on an idle 2-core machine at 32,768
# processes (results/scale_32768_portfolio_idle, scale_32768_scotch_idle), plus about 25 %, checked
# against the loaded runs at 4,096 to 262,144 (results/*_s5_loaded).  identity and random are mostly
# the scoring of a scattered placement, which grows faster than linearly on large tori (1.8e-6
# measured at 32,768; about 3e-6 expected at 65,536 from the growth of the ECMP boxes, not measured
# idle): they are set for 65,536, so that a loaded machine, not the scoring, sets the race's slowdown
# (:meth:`MappingProblem._calibrate`).  Scotch ranges from 1.4e-5
# (dragonfly) to 1.2e-4 (fat tree) and multisection has no idle measurement: both keep the rates of
# the earlier fits (middle of the range), so they are skipped only when clearly out of the share.
_SECONDS_PER_UNIT = {"identity": 3e-6, "random": 3e-6, "rcm": 1.5e-6, "greedy": 3e-6, "recursive": 1e-5,
                     "multisection": 3e-5, "scotch": 4e-5}
# Fixed cost of a construction (call, validation, scoring of a small job).
_SECONDS_FIXED = 0.02


def estimate_seconds(strategy, topology, graph, *, slowdown=1.0):
    """Rough idle seconds of one construction and its scoring, times ``slowdown``.

    Linear in ``P + n + E + A`` (processes, topology vertices, communication edges, arcs) with a
    per-strategy rate measured at 32,768 processes; used to skip constructions that cannot finish
    in what is left of the constructions' share of the portfolio's budget.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t, g = ltm.torus("4x4"), ltm.load_graph("stencil:4x4")
    >>> estimate_seconds("greedy", t, g) < estimate_seconds("scotch", t, g) < 0.1
    True
    """
    P, E, n, A, _, _ = _sizes(topology, graph)
    rate = _SECONDS_PER_UNIT.get(strategy, max(_SECONDS_PER_UNIT.values()))
    return float(slowdown) * (_SECONDS_FIXED + rate * (P + n + E + A))


# ----------------------------------------------------------------------------------- problems
class MappingProblem:
    """Run and score mapping candidates (the dist-graph calls and ``libtopomap map``).

    Parameters
    ----------
    topology : Topology
    graph : CommGraph
    slots : array_like of int, optional
        Slots this job may use per vertex (default ``topology.slots``).
    placement : array_like of int, optional
        Current placement of the processes, candidate 0 of the race (default: the usable slots
        filled in vertex order).  Its old name ``current=`` still works, with a
        :class:`DeprecationWarning`.
    objective : {"congestion", "dilation", "hopbytes"}
    time_budget : float, optional
        Seconds for each candidate's refinement.
    iterations : int, optional
        Moves of each candidate's refinement.  Default (when no ``time_budget`` either):
        :func:`default_iterations` of the number of processes, so small races stay fast and the result
        does not depend on timing.
    total_budget : float, optional
        Seconds for the whole race on this process, counted from :meth:`start_clock` (the first
        construction when nobody called it): constructions whose :func:`estimate_seconds` exceeds
        what is left of their share (:data:`CONSTRUCTION_SHARE`) are skipped by
        :func:`run_portfolio`, and refinements stop at the budget (threshold accepting through a
        deadline that leaves its moves alone when it does not bind, so small races stay
        reproducible).  Default :data:`DEFAULT_TOTAL_BUDGET`; ``math.inf`` for none.
    routing : str or Routing, optional
        Routing model (:mod:`libtopomap.routing`; ``"native"``: the topology's own) of the scores
        and of the refinements (threshold accepting and two-opt move the loads of that model; the
        hop-bytes refinements count its hops).  Default ``ecmp``.  Constructions are routing-blind.

    Notes
    -----
    Score: ``(objective, avg_congestion, hop_bytes)`` from :func:`libtopomap.evaluate` under ``routing``.  A candidate
    whose construction already reaches :func:`lower_bounds` on both the objective and hop-bytes is
    not refined (nothing can beat it).
    """

    kind = "mapping"
    order = STRATEGY_ORDER
    key_length = 3

    @renamed_keyword("current", "placement")
    def __init__(self, topology, graph, *, slots=None, placement=None, objective="congestion", time_budget=None,
                 iterations=None, total_budget=None, routing=None):
        from .mappers import check_objective
        from .routing import get_routing
        from .mappers._common import check_slots

        self.topology = topology
        self.graph = graph
        self.objective = check_objective(objective)
        r = get_routing(routing, topology)
        r.check(topology)
        self.routing = r.name
        self.slots = check_slots(topology, slots).astype(np.int64)
        if placement is None:
            from .mappers import map_identity

            placement = map_identity(topology, graph, slots=self.slots).vertices
        self.placement = np.asarray(placement, dtype=np.int64)
        self.time_budget = time_budget
        self.iterations = (default_iterations(graph.n) if iterations is None and time_budget is None
                           else iterations)
        self._bounds = None
        total_budget = DEFAULT_TOTAL_BUDGET if total_budget is None else total_budget
        try:
            ok = float(total_budget) > 0
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise MappingError(f"total_budget must be a positive number of seconds, got {total_budget!r}")
        self.total_budget = float(total_budget)
        self._t0 = None
        self._slowdown = 1.0
        self._score_seconds = 0.0
        self._baseline_seconds = 0.0
        self._baseline_score = None

    @property
    def current(self):
        """Deprecated name of :attr:`placement` (the current placement)."""
        warnings.warn("MappingProblem.current is deprecated; use MappingProblem.placement", DeprecationWarning,
                      stacklevel=2)
        return self.placement

    # ------------------------------------------------------------------ budget
    def start_clock(self):
        """Start the race's clock (the overall budget counts from here)."""
        self._t0 = time.perf_counter()
        self._slowdown = 1.0
        self._baseline_seconds = 0.0

    def elapsed(self):
        """Seconds since :meth:`start_clock` (which this starts when nobody has)."""
        if self._t0 is None:
            self.start_clock()
        return time.perf_counter() - self._t0

    def remaining(self):
        """Seconds left of the overall budget (``inf`` without one)."""
        return self.total_budget - self.elapsed()

    def construction_time_left(self):
        """Seconds left of the constructions' share of the overall budget, never more than is left of
        the budget.  Scoring the current placement is not charged to the share: on a large scrambled
        torus it takes 7 s on an idle machine and over 90 s on a loaded one, and it used to leave no
        time for greedy, the cheapest construction that reaches the optimum there."""
        elapsed = self.elapsed()
        return min(CONSTRUCTION_SHARE * self.total_budget - (elapsed - self._baseline_seconds),
                   self.total_budget - elapsed)

    def estimate_seconds(self, candidate):
        """:func:`estimate_seconds` of a candidate's construction, scaled by how much slower than
        their estimates the earlier constructions of this race ran (a loaded machine)."""
        if candidate.baseline:
            return estimate_seconds("identity", self.topology, self.graph, slowdown=self._slowdown)
        return estimate_seconds(candidate.strategy, self.topology, self.graph, slowdown=self._slowdown)

    def _state_seconds(self):
        """Rough seconds of one search state of a refinement (a refinement builds two or three): the
        scoring time of a mapping, or for congestion where the distance oracle cannot prune the ECMP
        searches (switches outside its table), one breadth-first search of the whole topology per
        used vertex (about 2 ns per vertex or arc visited, idle), times the machine's slowdown.  A fat
        tree from :func:`libtopomap.fattree` has its loads in closed form (no search)."""
        secs = self._score_seconds
        if (self.objective == "congestion" and not self.topology.distances.covers_all
                and self.topology.distances.fattree_arcs() is None):
            t = self.topology
            secs = max(secs, 2e-9 * self._slowdown * int(np.count_nonzero(self.slots)) * (t.n_vertices + t.n_arcs))
        return secs

    def _calibrate(self, strategy, seconds):
        if seconds >= 0.5:
            ratio = seconds / estimate_seconds(strategy, self.topology, self.graph)
            self._slowdown = float(min(max(self._slowdown, ratio), 10.0))

    @property
    def bounds(self):
        """:func:`lower_bounds` of this instance (computed once)."""
        if self._bounds is None:
            self._bounds = lower_bounds(self.topology, self.graph, self.slots)
        return self._bounds

    def estimate(self, candidate):
        """:func:`estimate_memory` of a candidate (0 extra for the current placement's scoring is not
        assumed: it is estimated as ``identity``)."""
        return estimate_memory(candidate.strategy, self.topology, self.graph, candidate.refine,
                               objective=self.objective, slots=self.slots)

    def score(self, vertices):
        """``(key, metrics)`` of a placement."""
        from .metrics import evaluate

        t0 = time.perf_counter()
        m = evaluate(self.topology, self.graph, vertices, routing=self.routing)
        self._score_seconds = max(self._score_seconds, time.perf_counter() - t0)
        obj = {"congestion": m["max_congestion"], "dilation": m["avg_dilation"],
               "hopbytes": m["hop_bytes"]}[self.objective]
        metrics = {"objective": float(obj), **m}
        return (float(obj), float(m["avg_congestion"]), float(m["hop_bytes"])), metrics

    def can_reach_bound(self):
        """Whether a placement can be at the lower bounds (:meth:`at_lower_bound`): both the objective's
        and the hop-bytes' bounds are positive (they are 0 with several slots on a vertex)."""
        b = self.bounds
        return b[self.objective] > 0 and b["hopbytes"] > 0

    def at_lower_bound(self, metrics):
        """Whether nothing can beat these metrics (objective and hop-bytes at their lower bounds)."""
        b = self.bounds
        return _at_bound(metrics["objective"], b[self.objective]) and _at_bound(metrics["hop_bytes"], b["hopbytes"])

    def validate(self, vertices):
        """Raise MappingError unless ``vertices`` is a placement of this job into its slots."""
        from .mapping import check_mapping

        check_mapping(self.topology, vertices, self.graph.n, slots=self.slots)

    def _outcome(self, c, verts, label, t0, note="", scored=None):
        if scored is None:
            self.validate(verts)
            scored = self.score(verts)
        key, metrics = scored
        return Outcome(c, label, key, metrics, verts, time.perf_counter() - t0, note=note,
                       at_bound=self.at_lower_bound(metrics))

    def _where(self, c):
        return f"strategy {c.strategy!r} (seed {c.seed}" + (
            f", start vertex {self.topology.names[c.start]!r})" if c.start is not None else ")")

    def construct(self, candidate):
        """Run a candidate's construction (no refinement) and score it; returns an :class:`Outcome`
        whose ``at_bound`` says whether it reaches :func:`lower_bounds`."""
        from . import mappers

        self.elapsed()  # the clock starts with the first construction when nobody started it
        t0 = time.perf_counter()
        c = candidate
        if c.baseline:
            out = self._outcome(c, self.placement.copy(), "current", t0)
            self._baseline_seconds += out.seconds
            self._baseline_score = (out.key, out.metrics)
            return out
        if self.graph.n_edges == 0:  # nothing to place: every placement is as good as the current one
            return self._outcome(c, self.placement.copy(), c.label, t0, "no communication: current placement")
        try:
            m = mappers.map_processes(self.topology, self.graph, strategy=c.strategy, slots=self.slots,
                                      placement=self.placement, objective=self.objective, seed=c.seed, start=c.start)
            verts = np.asarray(m.vertices, dtype=np.int64)
            scored = None
            if self._baseline_score is not None and np.array_equal(verts, self.placement):
                # the current placement again (identity): its score is known, scoring it again could
                # take seconds on a large scrambled start
                self.validate(verts)
                scored = (self._baseline_score[0], dict(self._baseline_score[1]))
            out = self._outcome(c, verts, m.strategy or c.strategy, t0, scored=scored)
        except Exception as e:
            raise MappingError(f"{self._where(c)}: {type(e).__name__}: {e}") from e
        self._calibrate(c.strategy, out.seconds)
        if c.refine and out.at_bound:
            out.note = f"{c.refine} skipped: at the lower bound"
        return out

    def refine(self, candidate, built, *, share=None):
        """Refine the construction ``built`` (an :class:`Outcome` of :meth:`construct`) of a candidate
        within the refinement budget; the construction is kept when the refinement does not beat it on the
        race's score (:func:`selection_key`: the objective, then average congestion, then hop-bytes).

        The refinement (and its final scoring) ends within ``share`` seconds (default: all that is
        left of the overall budget); it is skipped, with a note, when that is less than three times
        the estimated cost of one search state (:meth:`_state_seconds`).
        """
        from .commgraph import as_commgraph
        from .mappers import spare_weakest_hosts
        from .mappers.hopbytes_swap import hopbytes_swap
        from .mappers.threshold_accepting import threshold_accepting
        from .mappers.two_opt import two_opt

        c = candidate
        if not c.refine or built.at_bound or c.baseline or self.graph.n_edges == 0:
            return built
        t0 = time.perf_counter()
        left = self.remaining() if share is None else min(share, self.remaining())
        if left < 3 * self._state_seconds() + 0.05:
            built.note = (f"{c.refine} skipped: {max(left, 0.0):.3g} s left of the {self.total_budget:.3g} s budget")
            return built
        deadline = t0 + left - self._score_seconds  # the result is scored after the search
        try:
            # Refine the construction in the slots map_processes used for it (the spare slots of a
            # congestion mapping are those behind the weakest host links).
            used = self.slots
            if c.strategy != "identity" and self.objective == "congestion":
                used = spare_weakest_hosts(self.topology, self.slots, self.graph.n)
            # as map_processes(strategy="identity", refine=...) does, with the race's deadline
            rng = np.random.default_rng(c.seed)
            g = as_commgraph(self.graph)
            r = built.payload
            # two-opt is a plain descent bounded by its moves and its stall limit: no deadline
            names = (("hb-swap",) if self.objective == "hopbytes" and c.refine != "hb-swap" else ()) + (c.refine,)
            for name in names:
                now = time.perf_counter()
                if now >= deadline:
                    break
                budget = self.time_budget
                kw = {"routing": self.routing}
                if name == "ta":
                    kw["deadline"] = deadline
                elif name == "hb-swap":  # its moves do not depend on the clock until the budget binds
                    budget = deadline - now if budget is None else min(budget, deadline - now)
                fn = {"ta": threshold_accepting, "hb-swap": hopbytes_swap, "two-opt": two_opt}[name]
                r, _, _, _ = fn(self.topology, g, r, used, self.objective, rng=rng, time_budget=budget,
                                iterations=self.iterations, t_start=now, **kw)
            out = self._outcome(c, np.asarray(r, dtype=np.int64), f"{built.label}+{c.refine}", t0)
        except Exception as e:
            raise MappingError(f"{self._where(c)}: {type(e).__name__}: {e}") from e
        out.seconds += built.seconds
        # the one rule of the race: a refinement that does not beat its construction on the whole
        # score (objective, then average congestion, then hop-bytes) gives it back, so a refinement
        # that keeps the objective but adds traffic never wins over its own start
        if _rounded(out.key) >= _rounded(built.key) and not (out.at_bound and not built.at_bound):
            out = Outcome(c, out.label, built.key, built.metrics, built.payload, out.seconds,
                          note=f"{c.refine} kept the construction", at_bound=built.at_bound)
        return out

    def polish(self, winner):
        """The race winner polished on hop-bytes, or ``winner`` itself when that does not beat it.

        * Under the hop-bytes (and dilation) objective, the winner's mapping gets an iterated local
          search on hop-bytes (:func:`~libtopomap.mappers.hopbytes_swap.hopbytes_ils`) with a move
          budget that shrinks with the job (:func:`~libtopomap.mappers.hopbytes_swap.ils_moves`),
          whether or not the race refined: the constructions and their refinements stop at local
          optima of their own neighbourhoods, which a few hundred kicks on a small job leave
          (label ``+ils``).
        * Under the congestion objective, a winner refined by threshold accepting gets its capped
          hop-bytes clean-up (:func:`~libtopomap.mappers.threshold_accepting.capped_hopbytes_descent`,
          which never raises the maximum congestion) continued towards a local optimum: up to
          :data:`CAPPED_PASSES` passes, at most
          :func:`~libtopomap.mappers.threshold_accepting.capped_moves` moves played (label
          ``+capped``).  Every threshold-accepting result gets three passes; only the winner gets
          more, so the race pays for one.

        Nothing is done at the lower bound, without communication, or when what is left of the race's
        budget is less than three search states; both searches also stop at the budget (which binds
        only on races that have nearly spent it: large jobs on a loaded machine).  The polished mapping replaces the winner only when
        it beats it on the whole score (:func:`selection_key`), so the tie rule is unchanged; it keeps
        the winner's candidate (and so its place in the strategy order) and its note gives the
        hop-bytes before and after.  Deterministic: the search's seed is the candidate's, and its
        budget counts moves, not seconds.

        Under MPI the winner's rank polishes before it broadcasts (:func:`libtopomap.mpi.driver.race`).
        """
        from .commgraph import as_commgraph
        from .mappers import spare_weakest_hosts
        from .mappers.hopbytes_swap import hopbytes_ils, ils_moves
        from .mappers.threshold_accepting import capped_hopbytes_descent, capped_moves

        c = winner.candidate
        hop = self.objective in ("hopbytes", "dilation")
        if (winner.at_bound or winner.payload is None or self.graph.n_edges == 0
                or not (hop or (c.refine == "ta" and not c.baseline))):
            return winner
        if self.remaining() < 3 * self._state_seconds() + 0.05:
            return winner
        t0 = time.perf_counter()
        rng = np.random.default_rng([0 if c.seed is None else int(c.seed), int(c.index), 1])
        g = as_commgraph(self.graph)
        try:
            # the race's budget binds only where it is nearly spent (as for the refinements)
            deadline = t0 + self.remaining() - self._score_seconds
            if hop:
                v, before, after, stats = hopbytes_ils(self.topology, g, winner.payload, self.slots, rng=rng,
                                                       moves=ils_moves(g.n), routing=self.routing, deadline=deadline)
                label, note = "ils", f"hop-bytes polish {before:.6g} -> {after:.6g} ({stats['kicks']} kicks)"
            else:
                # the slots the refinement used (as refine: the spares behind the weakest host links)
                used = self.slots if c.strategy == "identity" else spare_weakest_hosts(self.topology, self.slots, g.n)
                v, stats = capped_hopbytes_descent(self.topology, g, winner.payload, used, rng=rng, passes=CAPPED_PASSES,
                                                   moves=capped_moves(g.n), routing=self.routing, deadline=deadline)
                before, after = stats["start_hopbytes"], stats["hopbytes"]
                label, note = "capped", (f"capped hop-bytes descent {before:.6g} -> {after:.6g} ({stats['passes']} "
                                         f"passes, {stats['stopped']})")
            if not after < before:
                return winner
            out = self._outcome(c, np.asarray(v, dtype=np.int64), f"{winner.label}+{label}", t0, note=note)
        except Exception as e:
            raise MappingError(f"{self._where(c)}, polish: {type(e).__name__}: {e}") from e
        out.seconds += winner.seconds
        out.rank = winner.rank
        if _rounded(out.key) >= _rounded(winner.key) and not (out.at_bound and not winner.at_bound):
            return winner
        return out

    def evaluate(self, candidate):
        """Run one candidate (construction, then refinement) and score it; returns an :class:`Outcome`."""
        return self.refine(candidate, self.construct(candidate))


class CollectiveProblem:
    """Run and score rank orders for a collective's schedule (:func:`libtopomap.reorder_for_collective`).

    Parameters
    ----------
    topology : Topology
    current : array_like of int
        Vertex of each rank now.
    steps : list
        The collective's schedule (:func:`libtopomap.collectives.schedule`).
    objective : {"hops", "contention", "step"}
    iterations : int
        Swaps per candidate.

    Notes
    -----
    The payload of an outcome is the permutation ``perm`` (new rank ``r`` runs on
    ``current[perm[r]]``); the score is ``(objective, total hops)``.
    """

    kind = "collective"
    order = ("none", "two-opt", "greedy", "anneal")
    key_length = 2

    def __init__(self, topology, current, steps, *, objective="hops", iterations=200_000):
        from .collectives import OBJECTIVES

        if objective not in OBJECTIVES:
            raise MappingError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
        self.topology = topology
        self.current = np.asarray(current, dtype=np.int64)
        self.steps = steps
        self.objective = objective
        self.iterations = int(iterations)
        self._messages = sum(len(s) for s in steps) if steps is not None else 0

    def estimate(self, candidate):
        """Conservative bytes of one rank search (see :func:`estimate_memory` for the conventions)."""
        return _collective_memory(self.topology, self.current.size, self.objective, self._messages)

    def score(self, perm):
        from .collectives import evaluate_schedule

        v = self.current[np.asarray(perm, dtype=np.int64)]
        m = evaluate_schedule(self.topology, self.steps, v, paths=self.objective != "hops")
        obj = m[self.objective]
        if obj is None:
            raise MappingError(f"the {self.objective} of this schedule cannot be evaluated (route table too large)")
        return (float(obj), float(m["hops"])), {"objective": float(obj), **m}

    def validate(self, perm):
        p = np.asarray(perm, dtype=np.int64)
        if p.size != self.current.size or not np.array_equal(np.sort(p), np.arange(self.current.size)):
            raise MappingError("the chosen rank order is not a permutation of the ranks")

    def evaluate(self, candidate):
        from .collectives import optimize_ranks

        t0 = time.perf_counter()
        c = candidate
        if c.baseline:
            perm, label = np.arange(self.current.size, dtype=np.int64), "current"
        else:
            try:
                res = optimize_ranks(self.topology, self.current, self.steps, objective=self.objective,
                                     optimizer=c.strategy, iterations=self.iterations, seed=c.seed)
            except Exception as e:
                raise MappingError(f"collective placement (optimizer {c.strategy!r}, seed {c.seed}): "
                                   f"{type(e).__name__}: {e}") from e
            perm, label = np.asarray(res.permutation, dtype=np.int64), c.strategy
        self.validate(perm)
        key, metrics = self.score(perm)
        return Outcome(c, label, key, metrics, perm, time.perf_counter() - t0)


# ----------------------------------------------------------------------------------- serial driver
def _skip_reason(candidate, est, max_memory):
    return (f"{candidate.label} skipped: estimated {format_bytes(est)} > max_memory "
            f"{format_bytes(max_memory)} per node")


def bound_skip(candidate, stop):
    """The :class:`Skipped` entry of a candidate after ``stop``, the first outcome at the lower bound."""
    return Skipped(candidate, f"{candidate.label} skipped: {stop.label} (candidate {stop.candidate.index}) "
                              "reached the lower bound")


def budget_skip(problem, candidate):
    """The :class:`Skipped` entry of a construction that cannot finish in time, else ``None``.

    The rule of every driver (:func:`run_portfolio`, and each mapping rank of
    :func:`libtopomap.mpi.driver.race` for its own candidates): a raced candidate is skipped when its
    estimated seconds (:meth:`MappingProblem.estimate_seconds`) exceed what is left of the
    constructions' share of the problem's ``total_budget`` on the process that would run it
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
    secs, left = problem.estimate_seconds(candidate), problem.construction_time_left()
    if secs <= left:
        return None
    return Skipped(candidate, f"{candidate.label} skipped: estimated {secs:.3g} s > {max(left, 0):.3g} s left of "
                              f"the constructions' share of the {problem.total_budget:.3g} s budget")


def not_refined(outcome, stop=None):
    """A construction left unrefined by :func:`refinement_choice`, with the reason in its note:
    ``stop``, the first outcome at the lower bound, or not among the best constructions."""
    if outcome.candidate.refine and not outcome.note:
        why = (f"{stop.label} (candidate {stop.candidate.index}) reached the lower bound" if stop is not None
               else "not among the best constructions")
        outcome.note = f"{outcome.candidate.refine} skipped: {why}"
    return outcome


def race_caches(problem):
    """The block of one race: what its candidates share (the refinements' nearest slot vertices,
    :func:`libtopomap.mappers.local_search.near_slot_cache`) lives until the race ends."""
    topology = getattr(problem, "topology", None)
    if topology is None:
        return contextlib.nullcontext()
    from .mappers.local_search import near_slot_cache

    return near_slot_cache(topology)


def run_portfolio(problem, candidates, *, max_memory=None, threads=None, on_outcome=None, progress=None):
    """Run every candidate here, one after the other, and select the winner.

    Mapping problems (those with ``construct`` and ``refine``) run in two phases: every candidate's
    construction in index order, stopping at the first one at the lower bound (the remaining
    candidates are skipped: nothing can beat it), then the refinement of the best constructions only
    (:func:`refinement_choice`), the best first; the other candidates keep their construction.
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
            late = budget_skip(problem, c)
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
            chosen = refinement_choice(outcomes.values(), candidates, problem.order)
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
