"""Hierarchical multisection for tree-like networks (fat trees, InfiniBand fabrics, dragonflies).

:func:`topology_hierarchy` reads the machine's tree off the topology; :func:`map_multisection` splits the
communication graph top-down into parts sized by the slots under each subtree: the hierarchical
multisection of SharedMap (Schulz & Woydt 2025) and KaHIP's integrated mapping (Faraj et al. 2020), with
the hierarchy derived from the network.  What differs from them: docs/internals.rst, "Hierarchical
multisection".
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..commgraph import CommGraph, sym_graph
from ..distances import near_slot_cache
from ..topology import Topology
from ..mapping import Mapping
from ..metrics import evaluate
from ._common import finish, validated
from .hierarchy import Hierarchy, bottom_up, dragonfly_groups, topology_hierarchy
from .hopbytes_swap import hopbytes_swap, threshold_swap_passes
from .local_search import WORK_DEGREE, current_deadline, past
from .objectives import check_objective
from .partition import EFFORT_MAX, fill, placed_refine, refine_parts, split, subgraph, subset_arcs

__all__ = ["Hierarchy", "topology_hierarchy", "map_multisection", "refine_parts"]

#: METIS tries per split (different seeds); the split with the smallest cut after the exact-balance
#: fix-up and the swap refinement is kept.  Splits are METIS recursive bisections with target part
#: weights whatever the number of parts: k-way METIS gave the same part for every seed on the
#: 1,024- and 256-process splits of the 32,768-process fat tree and dragonfly, 5-30 % more cut
#: after the fix-up, and took three times as long.
TRIES = 5

#: Communication-graph depth ``d`` of the final hop-bytes swap search (the neighbourhood
#: ``N_C^d`` of :func:`~libtopomap.mappers.hopbytes_swap.hopbytes_swap`).  4 beat the former
#: partners-and-theirs search (``d = 2``) on the fat tree, avakas and dragonfly instances of
#: ``benchmarks/bench_quality.py``; ``d = 10`` (VieM's) gains a little more on avakas for twice the time.
SWAP_DEPTH = 4

#: Moves of the final hop-bytes swap search at the most (all instances of
#: ``benchmarks/bench_quality.py``, up to 4,096 processes, reach a local optimum in fewer).  At
#: 32,768 processes the search to a local optimum took 10-12 million moves, more than the whole
#: construction, for 0.04-0.1 % of hop-bytes.  Like every search budget (:data:`KICK_MOVES` too)
#: these are moves of :data:`~libtopomap.mappers.local_search.WORK_DEGREE` edges: on a denser graph
#: ``SWAP_MOVES x WORK_DEGREE`` edge evaluations (:func:`~libtopomap.mappers.local_search.work_moves`).
#: Where the time went on ``random:1000:437:1`` (mean degree 355) onto ``dragonfly(17, 8, 8, 2)``:
#: before, 2^22 moves of ~1,400 edge evaluations each, 575 s (2,711 of 2,997 py-spy samples in
#: this search); now the descents (METIS splits, 0.7 s CPU each) and their ECMP comparisons
#: (0.2 s CPU each) take most of it; see :func:`_swap_search` for the search's share.
SWAP_MOVES = 1 << 22
#: On a graph of mean degree above :data:`~libtopomap.mappers.local_search.WORK_DEGREE` the final
#: search (descent and rounds) evaluates at most ``SWAP_DENSE_PASSES x entries x log2 P`` edges
#: (``entries``: both directions of every edge), fewer than :data:`SWAP_MOVES` allows: on
#: ``random:1000:437:1`` 14 million instead of 67 million (with the other dense changes,
#: multisection alone 3.17 -> 1.19 s CPU); sparse graphs are unchanged.
SWAP_DENSE_PASSES = 4

#: Rounds of iterated local search after the descent: in round ``r`` (from 0) :data:`KICK_PASSES`
#: threshold passes (:func:`~libtopomap.mappers.hopbytes_swap.threshold_swap_passes` over
#: ``N_C^d``, first threshold ``(r + 1) x KICK_LEVEL`` median edge weights) from the best mapping
#: so far, then the descent again; the result replaces the best when it has fewer hop-bytes.  At
#: most :data:`KICK_MOVES` threshold swaps over all rounds.  On ``benchmarks/bench_quality.py``
#: (seed 1): the 16x16 torus / 4x64 stencil 1,756 -> 1,672 hop-bytes, 32x32 / 16x64 9,936 -> 9,108,
#: 8x8x8 7,104 -> 6,208, dragonfly g9 a4 p2 h2 892 -> 876, g17 a8 p4 h2 9,740 -> 9,570, the 4,096
#: fat tree 51,616 -> 51,576, never worse, for 0.1-0.7 s a round (idle); rounds with one threshold
#: gained after the first round nothing, passes over ``N_C^2`` a third to a half as much.
KICK_PASSES = 10
KICK_ROUNDS = 5
KICK_LEVEL = 2.0
KICK_MOVES = 1 << 21
#: Processes up to which the rounds get all of :data:`KICK_MOVES`; above, their swaps shrink as
#: ``1 / P``.  With the full budget at 4,096 processes (8-ary 4-tree, 64x64 stencil) the rounds
#: doubled multisection's CPU time (0.75 -> 1.8 s, load ~5) for 0.08 % of hop-bytes, and on the
#: 32,768-host 32-ary 3-tree added 5.2 s to 13.6 s for 0.016 %; the 1,024-process torus gains 8 %.
KICK_FULL = 1024
#: Processes above which there are no rounds.  At 4,096 processes they bought 32 hop-bytes of
#: 51,616 on the 8-ary 4-tree with a 64x64 stencil and 20 of 70,458 on the 4,224-host dragonfly
#: with a 16^3 stencil (gains by round [20, 12, 0, 0, 0] and [20, 0, 0, 0, 0]) for 0.3-0.6 s (load
#: ~4), mostly the descent after each round, which starts again from ``N_C^1``; and the result of
#: ``map --strategy all --refine ta`` was the same without them (fat tree: multisection+ta 4 /
#: 51,556 either way; dragonfly: 23.33 / 75,628 without, 23.33 / 75,734 with; the race's winners
#: in ``benchmarks/results/speed_s7.md`` unchanged).  ``bench_quality.py``'s fat tree: multisection
#: 51,584 -> 51,616 hop-bytes (SharedMap fast 51,816).
KICK_MAX = 2048

#: Processes up to which, on a dragonfly with its generator's groups, the final swap search runs on
#: both hierarchies and the lower (maximum congestion, hop-bytes) is kept; above, it runs on the
#: better of the two descents only.  At 512 processes (``dragonfly(17, 8, 4, 2)``, 8x8x8 stencil)
#: the search turned the order round (17.33 / 9,750 -> 16.5 / 9,654 on the group hierarchy,
#: 19.92 / 9,892 -> 15.5 / 9,570 on the links alone); on the 4,224-host dragonfly with a 16^3
#: stencil it kept it (41 / 70,550 -> 41 / 70,438 and 36.33 / 72,116 -> 36.33 / 71,952) and the
#: second search cost 2.0-3.5 s, the larger part of the whole ``map --strategy all --refine ta``.
SEARCH_BOTH_MAX = 1024

#: Descents from different METIS seeds per tree hierarchy under ``objective="hopbytes"`` (up to
#: :data:`EFFORT_MAX` processes), the lowest (maximum congestion, hop-bytes) going on, the order in
#: which the hierarchies are compared (by hop-bytes alone, a recursive-doubling allreduce on
#: ``dragonfly(5, 4, 2, 1)`` went from max congestion 48 to 56).  On the 8-ary 4-tree with a
#: scrambled 64x64 stencil six seeds gave descents of 51,500-51,908 hop-bytes, and the swap search
#: after them changed at most 20: the seed of the splits decides, not the search.  Not on a torus's
#: hierarchy of boxes, where the search decides: the descent with the fewest hop-bytes of three
#: ended at 8,868 hop-bytes on a 32x32 torus with a 16x64 stencil, the first alone at 8,384.
HOPBYTES_STARTS = 3

#: Processes a search of :func:`_repair_lonely_pairs` visits at the most (per lonely host).
REPAIR_VISITS = 4096

#: Edge work of the extra effort (stored entries of the symmetric graph, both directions): a split
#: gets ``min(tries, TRY_EDGES // entries)`` METIS tries (at least one), and the second tree
#: hierarchy of a dragonfly, the further METIS seeds of :data:`HOPBYTES_STARTS` and the swap search
#: of both descents (:data:`SEARCH_BOTH_MAX`) need a graph of at most ``TRY_EDGES`` entries.  Every
#: sparse instance of ``benchmarks/bench_quality.py`` (up to 4,096 processes, mean degree <= 12:
#: at most ~50,000 entries) keeps all of it.  On ``random:1000:437:1`` (355,150 entries, mean
#: degree 355) onto ``dragonfly(17, 8, 8, 2)`` the top split got five METIS runs of the whole graph
#: and the whole construction ran twice (two hierarchies); now one of each.
TRY_EDGES = 5 << 16


def _tries(tries, entries):
    """METIS tries of a split of ``entries`` stored edge entries: ``tries`` within
    :data:`TRY_EDGES` of edge work, fewer on a dense split (at least 1).

    Examples
    --------
    >>> _tries(5, 20_000), _tries(5, 355_150)
    (5, 1)
    """
    return max(1, min(int(tries), TRY_EDGES // max(int(entries), 1)))


def _order(topology, h, kids, targets, parts, procs, loc, sym, inside):
    """Assign the parts to the children (only among children of equal size) so that the traffic
    of each part to processes outside the subtree (at their current representative vertex)
    travels the fewest hops: a linear assignment per group of equal-sized children."""
    k = kids.size
    src_local, nb, w = subset_arcs(sym, procs, inside)
    if nb.size == 0:
        return np.arange(k)
    locs, inv = np.unique(loc[nb], return_inverse=True)
    cost = np.zeros((k, k))
    reps = h.rep[kids]
    for c in range(k):
        d = topology.distances.pairs(np.full(locs.size, reps[c]), locs)
        cost[:, c] = np.bincount(parts[src_local], weights=w * d[inv], minlength=k)
    assign = np.arange(k)
    for size in np.unique(targets).tolist():
        group = np.flatnonzero(targets == size)
        if group.size < 2:
            continue
        assign[group] = group[_assignment(cost[np.ix_(group, group)])]
    return assign


def _assignment(cost):
    """Column of every row in a minimum-cost perfect assignment of the square matrix ``cost``:
    :func:`scipy.optimize.linear_sum_assignment`, imported here, where it is used (importing
    :mod:`scipy.optimize` costs 0.1-0.5 s per interpreter, which a race that ends at greedy's
    bound should not pay).  ``scipy.sparse.csgraph.min_weight_full_bipartite_matching`` needs no
    new import but breaks ties otherwise, and on the tested dragonfly allreduce and 4x64 torus
    stencil its ties cost max congestion 48 -> 51 and hop-bytes 1,676 -> 1,736."""
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment(cost)[1].astype(np.int64)


def _descend(topology, h, cap, sym, base_seed, tries):
    """The top-down multisection of :func:`map_multisection`: the vertex of every process of
    ``sym`` (a :class:`~libtopomap.commgraph.SymGraph`) under the usable slots ``cap`` of
    every node of ``h``."""
    g_ptr, g_idx, g_val = sym.indptr, sym.indices, sym.wsum
    n = sym.n
    gpos = np.full(n, -1, np.int64)
    gamma = np.full(n, -1, np.int64)
    loc = np.full(n, h.rep[h.root], np.int64)
    inside = np.zeros(n, bool)
    grid = h.grid
    stack = [(h.root, np.arange(n, dtype=np.int64))]
    while stack:
        x, procs = stack.pop()
        if procs.size == 0:
            continue
        if h.vertex[x] >= 0:
            gamma[procs] = h.vertex[x]
            loc[procs] = h.vertex[x]
            continue
        kids = h.children(x)
        kids = kids[cap[kids] > 0]
        targets = fill(cap[kids], procs.size)
        kids, targets = kids[targets > 0], targets[targets > 0]
        if kids.size == 1:
            stack.append((kids[0], procs))
            continue
        sp_, si, sv = subgraph(g_ptr, g_idx, g_val, procs, gpos)
        parts = split(sp_, si, sv, targets, base_seed + x % 64, _tries(tries, si.size),
                       hosts=bool(np.all(h.vertex[kids] >= 0)))
        assign = np.arange(kids.size)
        child_of = None
        # the order of the parts matters where the children are uneven, and also where even
        # subtrees are not even to the outside (the routers of a dragonfly group: each has the
        # global links to other groups); hosts under one switch are even to everything
        if not h.flat[x] or not np.all(h.vertex[kids] >= 0):
            inside[procs] = True
            assign = _order(topology, h, kids, targets, parts, procs, loc, sym, inside)
            if grid and kids.size == 2:
                child_of = placed_refine(topology, h, kids, assign[parts], procs, sp_, si, sv, loc, sym, inside)
            inside[procs] = False
        if child_of is None:
            child_of = assign[parts]
        for c in range(kids.size - 1, -1, -1):
            sub = procs[child_of == c]
            loc[sub] = h.rep[kids[c]]
            stack.append((kids[c], sub))
    return gamma


@validated
def map_multisection(topology, graph, *, slots=None, seed=None, tries=TRIES, swap_depth=None, rounds=None,
                     objective="hopbytes", deadline=None):
    """Hierarchical multisection mapping: split the communication graph along the machine's tree.

    The hierarchy comes from the topology (:func:`topology_hierarchy`).  From the root down, the
    processes of a subtree are split into one part per child subtree, each exactly as large as the
    slots the child gets (all of them when the job fills the machine; otherwise the largest
    children are filled first, so a small job stays in few subtrees): METIS recursive bisection
    with target weights, the exact-balance fix-up of the recursive strategy, and a pairwise swap refinement
    that keeps sizes exact; ``tries`` METIS seeds, the smallest cut wins (one seed and no pairwise
    re-bisection for splits of more than :data:`EFFORT_MAX` processes).  Where the children are
    not all at the same distance, or whose children are subtrees (not hosts), the parts are
    assigned to equal-sized children so that their traffic to processes outside the subtree
    travels the fewest hops (on a dragonfly, the parts of a group go to the routers that hold the
    global links to the groups they talk to).  A host takes every process
    that reaches it (several slots per host are one more level).  On a torus or mesh (a hierarchy
    of boxes) every bisection is then refined with its placement in view: swaps between the two
    boxes lower the cut, counted at the distance between the boxes' centres, plus the traffic to
    processes outside the split, counted at the distances from each box's centre to where those
    processes are (the external costs of Scotch's dual recursive bipartitioning).  On hosts of two slots, a split
    that leaves two processes without traffic between them on one host is replaced by the pairs
    of a maximum-weight matching when they cut less.  Last, processes close in the
    communication graph swap places while hop-bytes drop (``swap_depth``), for at most
    :data:`SWAP_MOVES` moves, then a few rounds of threshold passes and descent again leave that
    local optimum (:data:`KICK_ROUNDS`; up to :data:`KICK_MAX` processes).  With
    ``objective="congestion"``, on hosts of two slots, hosts whose two processes do not
    communicate are then repaired along alternating paths (:func:`_repair_lonely_pairs`: such a
    host's link carries all of both processes' traffic; the 2-slot 8-ary 3-tree with a 32x32
    stencil went from max congestion 8 to 6 for 0.2 % more hop-bytes) and the pairs are moved as
    units by a hop-bytes descent.  On a dragonfly with its
    generator's group attributes the whole construction also runs (up to :data:`EFFORT_MAX`
    processes) on the hierarchy read off the links alone
    (``topology_hierarchy(topology, generator_groups=False)``) and the mapping with the lower
    (maximum ECMP congestion, hop-bytes) is kept: the group level cut hop-bytes but raised the
    maximum congestion of a recursive-doubling allreduce on ``dragonfly(5, 4, 2, 1)`` with 8 slots
    per host from 48 to 64.  Above :data:`SEARCH_BOTH_MAX` processes the two descents are compared
    that way and only the better one gets the swap search.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    slots : array_like of int, optional
        Usable slots per vertex (default ``topology.slots``); hosts without usable slots are
        skipped, and a job smaller than the machine fills few subtrees.
    seed : int, optional
        METIS seeds (the same seed gives the same mapping).
    tries : int
        METIS runs per split.
    swap_depth : int, optional
        Depth ``d`` of the final hop-bytes swap search over ``N_C^d`` (default :data:`SWAP_DEPTH`;
        0: none): processes within ``d`` communication hops swap places while hop-bytes drop, until a
        local optimum or :data:`SWAP_MOVES` moves (:func:`~libtopomap.mappers.hopbytes_swap.hopbytes_swap`).
    rounds : int, optional
        Deprecated (the former swap search's rounds): ``rounds=0`` is ``swap_depth=0``.
    objective : {"hopbytes", "congestion", "dilation"}
        ``"congestion"`` adds the repair of hosts of two slots whose processes do not communicate
        (it may cost hop-bytes); the others map for hop-bytes alone.  :func:`~libtopomap.mappers.map_processes`
        passes its own.
    deadline : float, optional
        A ``time.perf_counter()`` value (default: that of an enclosing
        :func:`~libtopomap.mappers.local_search.deadline_scope`, which the portfolio sets around each
        construction): past it no further descent starts and the swap searches stop with their
        best so far, so the construction ends about then (the first descent always runs).  Without
        one (or when it does not bind) the result does not depend on the clock.

    Returns
    -------
    Mapping

    Notes
    -----
    On a tree whose hosts are ``2 l`` hops apart when their lowest common subtree has height ``l``
    (a k-ary n-tree), hop-bytes are twice the traffic summed over the levels at which it is cut, so
    minimising the cut of every split is the hierarchical process-mapping objective of SharedMap
    and KaHIP.  Work: one METIS call per try and split, ``O((E + P) log P)`` over a balanced
    hierarchy; memory linear in the graph and the topology.  The final swap search is the one
    local-search engine's (:mod:`~libtopomap.mappers.local_search`), ``O(degree)`` per move, at most
    :data:`SWAP_MOVES` moves.

    References
    ----------
    C. Schulz and H. Woydt, "Shared-Memory Hierarchical Process Mapping" (SharedMap), 2025:
    hierarchical multisection.
    M. F. Faraj, A. van der Grinten, H. Meyerhenke, J. L. Träff and C. Schulz, "High-Quality
    Hierarchical Process Mapping", SEA 2020: the multisection initial mapping of integrated mapping.
    T. Hoefler and M. Snir, ICS'11, section 4.2 / Algorithm 2: the exact-balance fix-up.
    C. Schulz and J. L. Träff, "Better Process Mapping and Sparse Quadratic Assignment", SEA 2017:
    the swap neighbourhood ``N_C^d`` of the final search.

    Examples
    --------
    >>> from libtopomap import fattree
    >>> from libtopomap.patterns import stencil
    >>> m = map_multisection(fattree(4, 2), stencil("4x4"), seed=0)
    >>> len(m)
    16
    """
    objective = check_objective(objective)
    deadline = current_deadline() if deadline is None else float(deadline)
    g, rng = graph, np.random.default_rng(seed)
    if rounds is not None:
        warnings.warn("map_multisection(rounds=...) is deprecated; use swap_depth= (0: no swap search)",
                      DeprecationWarning, stacklevel=3)  # the caller of the public map_multisection
    depth = (SWAP_DEPTH if rounds is None or rounds > 0 else 0) if swap_depth is None else int(swap_depth)
    sym = sym_graph(g)
    base_seed = int(rng.integers(0, 2**31 - 1 - 64 * max(int(tries), 1))) if seed is not None else 0
    swap_seed = int(rng.integers(2**63))
    hierarchies = [topology_hierarchy(topology)]
    extra = g.n <= EFFORT_MAX and sym.indices.size <= TRY_EDGES  # effort that pays on sparse graphs
    if dragonfly_groups(topology) is not None and extra:
        # both hierarchies where the extra effort is cheap (at 32,768 processes on a dragonfly of
        # 128 groups the second one cost 5 s, and the group hierarchy won: max congestion 68 and
        # 530,496 hop-bytes against 74.1 and 536,590)
        hierarchies.append(topology_hierarchy(topology, generator_groups=False))
    descents = []
    for h in hierarchies:  # the first always; the others while the deadline allows
        if descents and past(deadline):
            break
        descents.append(_descend(topology, h, _capacities(h, slots, topology.hosts.size), sym, base_seed, tries))
    if objective == "hopbytes" and extra and HOPBYTES_STARTS > 1 and not past(deadline):
        # more METIS seeds on every tree hierarchy; the lowest (max congestion, hop-bytes) goes on,
        # as between hierarchies (the first on a tie)
        span = 2**31 - 1 - 64 * max(int(tries), 1)
        for i, h in enumerate(hierarchies):
            if h.grid:
                continue
            cap = _capacities(h, slots, topology.hosts.size)
            starts = [descents[i]]
            for k in range(1, HOPBYTES_STARTS):
                if past(deadline):
                    break
                starts.append(_descend(topology, h, cap, sym, (base_seed + k * 64 * max(int(tries), 1)) % span, tries))
            values = [_congestion_key(topology, g, gamma, slots) for gamma in starts]
            descents[i] = starts[values.index(min(values))]
    if len(descents) > 1 and (depth == 0 or g.n <= 1 or g.n > SEARCH_BOTH_MAX or not extra or past(deadline)):
        # the better descent alone goes on (the first on a tie)
        keys = [_congestion_key(topology, g, gamma, slots) for gamma in descents]
        descents = [descents[keys.index(min(keys))]]
    best, best_key = None, None
    with near_slot_cache(topology):  # the searches' states share one list of nearest slot vertices
        for gamma in descents:
            if best is not None and past(deadline):
                break
            if depth > 0 and g.n > 1:
                gamma = _swap_search(topology, g, gamma, slots, np.random.default_rng(swap_seed), depth, deadline)
                if objective == "congestion":
                    gamma = _pair_hosts(topology, g, sym, gamma, slots, np.random.default_rng(swap_seed), depth,
                                        deadline)
            if len(descents) > 1:
                key = _congestion_key(topology, g, gamma, slots)
                if best_key is not None and key >= best_key:
                    continue
                best_key = key
            best = gamma
    return finish(topology, best, slots, "multisection")


def _congestion_key(topology, g, gamma, slots):
    """``(maximum ECMP congestion, hop-bytes)`` of a mapping into ``slots``, the order in which the
    hierarchies' results are compared."""
    m = evaluate(topology, g, Mapping(topology, gamma, slots=slots))
    return (round(float(m["max_congestion"]), 9), float(m["hop_bytes"]))


def _swap_search(topology, g, gamma, slots, rng, depth, deadline=None):
    """The final search of :func:`map_multisection`: hop-bytes descent over ``N_C^depth`` to a local
    optimum (at most :data:`SWAP_MOVES` moves), then :data:`KICK_ROUNDS` rounds of iterated local
    search: :data:`KICK_PASSES` threshold passes from the best mapping so far
    (:func:`~libtopomap.mappers.hopbytes_swap.threshold_swap_passes`, the first threshold of round
    ``r`` ``(r + 1) x`` :data:`KICK_LEVEL` times the median edge weight, at most :data:`KICK_MOVES`
    swaps over all rounds, fewer above :data:`KICK_FULL` processes, none above :data:`KICK_MAX`)
    and the descent again, kept when it has fewer hop-bytes.  Deterministic for a given ``rng``
    state (no step depends on the clock) unless ``deadline`` (a ``time.perf_counter()`` value)
    binds: then every search stops between compiled chunks with its best so far.  The budgets are
    edge work (moves of :data:`~libtopomap.mappers.local_search.WORK_DEGREE` edges), so on a dense
    graph they allow fewer moves."""
    sym = sym_graph(g)  # built once per graph (0.1-0.2 s CPU at mean degree 355)
    # one edge-work budget for the whole search: SWAP_MOVES moves of WORK_DEGREE edges over the
    # descent and all rounds (the rounds of a sparse graph stay far below it); on a dense graph a
    # move costs deg / WORK_DEGREE of them.  Dense case (mean degree 355, 1,000 processes): the
    # search was 14.5 s CPU with per-call budgets (0.6 % of hop-bytes), 80 % of it in the walk.
    per_move = max(1.0, sym.indices.size / max(sym.n, 1) / WORK_DEGREE)
    left = [float(SWAP_MOVES)]
    if per_move > 1.0:  # dense: O(entries x log P) edge evaluations, not a fixed count
        left[0] = min(left[0], SWAP_DENSE_PASSES * sym.indices.size * math.log2(max(sym.n, 2)) / WORK_DEGREE)

    def descent(start):
        out, _, v, st = hopbytes_swap(topology, sym, start, slots, rng=rng, depth=depth,
                                      iterations=max(int(left[0]), 1), deadline=deadline)
        left[0] -= st["iterations"] * per_move
        return out, v

    gamma, value = descent(gamma)
    level = KICK_LEVEL * float(np.median(np.abs(g.weights))) if g.n_edges else 0.0
    budget = KICK_MOVES * min(1.0, KICK_FULL / max(g.n, 1)) // max(KICK_ROUNDS, 1)
    for r in range(KICK_ROUNDS if g.n <= KICK_MAX else 0):
        if past(deadline) or left[0] < 1:
            break
        kicked, before, after, st = threshold_swap_passes(topology, sym, gamma, slots, rng=rng, passes=KICK_PASSES,
                                                          depth=depth, level=level * (r + 1),
                                                          moves=int(min(budget, left[0])), deadline=deadline)
        left[0] -= st["iterations"] * per_move
        if after >= before or left[0] < 1:
            continue
        kicked, after = descent(kicked)
        if after < value:
            gamma, value = kicked, after
    return gamma


def _mates(gamma):
    """The other process on the same vertex of every process whose vertex holds exactly two, else -1."""
    order = np.argsort(gamma, kind="stable")
    mate = np.full(gamma.size, -1, np.int64)
    count = np.bincount(gamma)
    k = np.flatnonzero((gamma[order][1:] == gamma[order][:-1]) & (count[gamma[order][1:]] == 2))
    mate[order[k]], mate[order[k + 1]] = order[k + 1], order[k]
    return mate


def _repair_lonely_pairs(sym, gamma, visits=REPAIR_VISITS):
    """Give every host of two processes a communicating pair where an alternating path allows it.

    A host whose two processes do not communicate carries all of both processes' traffic on its
    link (the lonely pairs of :func:`~libtopomap.mappers.partition.split`).  For each such process
    ``p`` a breadth-first search (at most ``visits`` processes) looks for an alternating path
    ``p - x1 = y1 - x2 = ... - xk`` (``-``: communication, ``=``: sharing a vertex) that ends at a
    process of another lonely host, or at ``p``'s own partner on its host; then ``p`` joins
    ``x1``, ``y1`` joins ``x2``, ..., and the ``x`` stay where they are (an augmenting path of the
    pairing seen as a matching of the communication graph).  Every repair removes at least one
    lonely host.  Returns ``(gamma, repairs)``."""
    gamma = np.asarray(gamma, np.int64).copy()
    mate = _mates(gamma)
    ptr, idx, w = sym.indptr, sym.indices, sym.wsum

    def talks(a, b):
        seg = slice(ptr[a], ptr[a + 1])
        return bool(np.any((idx[seg] == b) & (w[seg] > 0)))

    def lonely(a):
        return mate[a] >= 0 and not talks(a, mate[a])

    row = np.repeat(np.arange(sym.n), np.diff(ptr))
    talk = np.bincount(row[(idx == mate[row]) & (w > 0)], minlength=sym.n) > 0
    repairs = 0
    for p in np.flatnonzero((mate >= 0) & ~talk).tolist():  # lonely at the start (re-checked: repairs move)
        if not lonely(p):
            continue
        prev, seen, end = {}, {p, int(mate[p])}, None
        queue = [p]
        head = 0
        while head < len(queue) and end is None and len(seen) < visits:
            u = queue[head]
            head += 1
            for x in idx[ptr[u]:ptr[u + 1]].tolist():
                if x == mate[p] and u != p:
                    prev[x], end = u, x
                    break
                if x in seen or mate[x] < 0 or gamma[x] == gamma[p]:
                    continue
                seen.add(x)
                prev[x] = u
                if lonely(x):
                    end = x
                    break
                y = int(mate[x])
                if y not in seen:
                    seen.add(y)
                    queue.append(y)
        if end is None:
            continue
        xs = [end]
        while prev[xs[-1]] != p:
            xs.append(int(mate[prev[xs[-1]]]))
        xs = xs[::-1]
        ys = [int(mate[x]) for x in xs]
        movers = [p] + ys[:-1]
        old = gamma.copy()
        partner, left = int(mate[p]), ys[-1]
        for m, x in zip(movers, xs):
            gamma[m] = old[x]
        for m, x in zip(movers, xs):
            mate[m], mate[x] = x, m
        if end != partner:  # p's partner and x_k's take p's place together
            gamma[left] = old[p]
            mate[partner], mate[left] = left, partner
        repairs += 1
    return gamma, repairs


def _pair_hosts(topology, g, sym, gamma, slots, rng, depth, deadline=None):
    """On hosts of two slots: :func:`_repair_lonely_pairs`, then the hop-bytes descent of
    :func:`_swap_search` over whole hosts (the communication graph contracted by vertex, one slot
    per used vertex), which moves pairs without splitting them (the threshold rounds there gained
    nothing on the 2-slot fat tree of ``bench_quality.py`` for twice the time).  Unchanged
    elsewhere, or when no lonely host can be repaired."""
    used = np.unique(gamma)
    if used.size < 2 or not np.all(slots[used] == 2):
        return gamma
    fixed, repairs = _repair_lonely_pairs(sym, gamma)
    if repairs == 0:
        return gamma
    unit = np.searchsorted(used, fixed)
    us, ud = unit[g.src], unit[g.dst]
    keep = us != ud
    cg = CommGraph(used.size, us[keep], ud[keep], g.weights[keep])
    one = np.zeros(topology.n_vertices, np.int64)
    one[used] = 1
    t1 = Topology(topology.names, np.stack([topology.link_u, topology.link_v], 1), capacities=topology.capacity,
                  slots=one, kinds=topology.kinds, name=topology.name, attrs=topology.attrs)
    if cg.n_edges == 0:
        return fixed
    where, _, _, _ = hopbytes_swap(t1, cg, used.copy(), one, rng=rng, depth=depth, iterations=SWAP_MOVES,
                                   deadline=deadline)
    return np.asarray(where, np.int64)[unit]


def _capacities(h, slots, H):
    """Usable slots under every node of ``h`` (``slots`` per vertex; leaves ``0 .. H-1``)."""
    cap = np.zeros(h.n_nodes, np.int64)
    cap[:H] = slots[h.vertex[:H]]
    for x in bottom_up(h.child_ptr, h.child_idx, h.root):
        if x >= H:
            cap[x] = cap[h.children(x)].sum()
    return cap
