"""Memory, time and thread budgets of a race: estimates per candidate, who may run, default budgets."""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ..errors import MappingError
from ..validation import check_bytes

__all__ = ["estimate_memory", "collective_memory", "default_max_memory", "format_bytes", "check_memory", "plan_ranks",
           "assign_candidates", "numba_threads", "numba_thread_limit", "default_iterations", "DEFAULT_TOTAL_BUDGET",
           "CONSTRUCTION_SHARE", "estimate_seconds", "topology_family"]

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
    ``scotch``              ``+ 400 (E + A) + 200 (P + n)`` (CSR arrays for scotchpy and
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
    if strategy in ("identity", "diagonal-shift"):  # a closed form per process
        total += 16 * P
    elif strategy == "random":
        total += 24 * S + 16 * P
    elif strategy == "rcm":
        total += 96 * (E + A) + 64 * (P + n)
    elif strategy == "recursive":
        total += 256 * (P + E + n + A)
    elif strategy == "dual-bisection":
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
            from ..mappers.hopbytes_swap import BATCH, NC_CAP

            total += 40 * BATCH * NC_CAP  # a batch of listed moves, its levels and deltas
    return int(total)


def collective_memory(topology, nprocs, objective, n_messages):
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
    return default_max_memory() if max_memory is None else check_bytes(max_memory, name="max_memory")


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


#: Seconds of a whole mapping race on one process when none is given: every phase keeps within it
#: (the scale issue's target is 120 s for ``map --strategy all --refine ta`` at 32,768 processes).
DEFAULT_TOTAL_BUDGET = 100.0
#: Share of the overall budget the constructions may use; the refinements get what is left.
CONSTRUCTION_SHARE = 0.5
# Idle seconds per unit of work (P + n + E + A) of each construction, scoring included, per topology family
# (:func:`topology_family`), measured on an idle 2-core machine at 32,768 processes in
# benchmarks/bench_scale.py plus about 25 % (results/scale_32768_portfolio_idle, scale_32768_s7_idle,
# scale_32768_scotch_idle), and checked against the loaded runs at 4,096 to 262,144 (results/*_s5_loaded).
# "default" holds every family without a measurement of its own (tori, dragonflies, fabrics read from
# files): the slowest of torus, fat tree and dragonfly.  identity and random are mostly the scoring of a
# scattered placement, which grows faster than linearly on large tori (1.8e-6 measured at 32,768; about
# 3e-6 expected at 65,536 from the growth of the ECMP boxes, not measured idle): they are set for 65,536,
# so that a loaded machine, not the scoring, sets the race's slowdown (:meth:`MappingProblem._calibrate`).
# Scotch ranges from 1.4e-5 (dragonfly) to 1.2e-4 (fat tree) and multisection from 6.9e-6 (fat tree) to
# 3.6e-5 (torus); the default keeps the rates of the earlier fits for both, so that they are skipped only
# when clearly out of the share.
_SECONDS_PER_UNIT = {
    "default": {"identity": 3e-6, "diagonal-shift": 3e-6, "random": 3e-6, "rcm": 1.5e-6, "greedy": 3e-6,
                "recursive": 1e-5, "multisection": 3e-5, "scotch": 4e-5,
                # 25.8 s for 16x16x16 onto a 64x64 torus (4,096 processes) at load 12: 5e-4 loaded;
                # not measured idle (issue 29 part 2), set for a 5x slowdown
                "dual-bisection": 1e-4},
    # the 32-ary 3-tree: multisection 3.19 s (6.9e-6), Scotch's deco-2 target 57.1 s (1.24e-4, it never
    # wins there); with the default rates the race ran Scotch for 60 s of its 77 s when idle and, loaded,
    # skipped multisection, the winner (results/scale_32768_peers*)
    "fattree": {"multisection": 1e-5, "scotch": 1.5e-4},
}
# Fixed cost of a construction (call, validation, scoring of a small job).
_SECONDS_FIXED = 0.02


def topology_family(topology):
    """The family whose construction costs :func:`estimate_seconds` uses: the generator of a generated
    topology (``attrs["generator"]``: ``"fattree"``, ``"torus"``, ``"dragonfly"``...) when the cost
    table has rates of its own for it, else ``"default"``.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> topology_family(ltm.fattree(4, 2)), topology_family(ltm.torus("4x4"))
    ('fattree', 'default')
    """
    family = getattr(topology, "attrs", {}).get("generator")
    return family if family in _SECONDS_PER_UNIT else "default"


def estimate_seconds(strategy, topology, graph, *, slowdown=1.0):
    """Rough idle seconds of one construction and its scoring, times ``slowdown``.

    Linear in ``P + n + E + A`` (processes, topology vertices, communication edges, arcs) with a
    rate per strategy and topology family (:func:`topology_family`) measured at 32,768 processes
    (docs/internals.rst, "Time budget"); used to skip constructions that cannot finish in what is
    left of the constructions' share of the portfolio's budget.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t, g = ltm.torus("4x4"), ltm.load_graph("stencil:4x4")
    >>> estimate_seconds("greedy", t, g) < estimate_seconds("scotch", t, g) < 0.1
    True
    """
    P, E, n, A, _, _ = _sizes(topology, graph)
    rates = _SECONDS_PER_UNIT["default"]
    rate = _SECONDS_PER_UNIT[topology_family(topology)].get(strategy, rates.get(strategy, max(rates.values())))
    return float(slowdown) * (_SECONDS_FIXED + rate * (P + n + E + A))
