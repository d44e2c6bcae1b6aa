"""Distributed-graph communicators that really reorder ranks onto the physical network.

MPICH ignores ``reorder`` for distributed graphs, and Open MPI's treematch leaves the neighbour lists
in the old numbering (ompi issues 11756, 8939).  :func:`Create_dist_graph_adjacent` and
:func:`Create_dist_graph` are drop-in replacements for mpi4py's methods that, given a topology,

1. locate every process on the topology (:func:`~libtopomap.mpi.locate.locate`);
2. gather the whole process graph on every rank with one ``Allgatherv`` of edge lists;
3. run a *portfolio* of mapping candidates (:mod:`libtopomap.portfolio`, raced over the ranks by
   :func:`libtopomap.mpi.driver.race`): candidate ``k + 1`` runs strategy ``k mod S`` with its own
   seed and start vertex on the ``k``-th mapping rank (Hoefler & Snir, ICS'11, section 4.2 and
   Figure 4); a per-node memory bound (``max_memory``) decides how many ranks of a node map, and
   skips strategies that cannot fit;
4. select the best candidate in the portfolio's lexicographic order (objective, average congestion,
   hop-bytes, strategy order); the winner broadcasts it; the current placement (identity) is always a
   candidate and wins full ties, so the result is never worse on the objective;
5. build the communicator with ``comm.Split(0, key=newrank)`` and
   ``Create_dist_graph_adjacent(..., reorder=False)``, new rank ``k`` passing the lists that old rank
   ``k`` passed: in the result, rank ``k`` plays logical vertex ``k`` and sits on the vertex the
   mapping chose for it.

Errors on any rank during steps 1-4 raise :class:`~libtopomap.CommError` on all ranks.
"""

from __future__ import annotations

import os
import time
import zlib
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

from ..commgraph import CommGraph
from ..errors import ArgumentError, ArgumentTypeError, CommError, CommGraphError, MappingError
from .auto import resolve as resolve_auto
from .locate import locate
from .driver import race
from .race import agree_arguments, collective_call, format_failures, wait_quietly

__all__ = ["Create_dist_graph_adjacent", "Create_dist_graph", "topomap", "TopomapReport",
           "TopomapDistgraphcomm", "report", "last_report", "DEFAULT_STRATEGIES"]

# The strategies raced by default, in rank order (those installed); the current placement (identity) is
# always a candidate on top, so it needs no rank of its own.
DEFAULT_STRATEGIES = ("greedy", "recursive", "multisection", "scotch", "rcm", "random")


def _default_strategies():
    from ..mappers import STRATEGIES

    return tuple(s for s in DEFAULT_STRATEGIES if s in STRATEGIES)

# How a rank passed its weights, so its new owner passes them the same way.
_W_NONE, _W_UNWEIGHTED, _W_EMPTY, _W_LIST = 0, 1, 2, 3


@dataclass
class TopomapReport:
    """What a reordering did; the same on every rank except ``old_rank``, ``new_rank`` and ``timings``.

    Attributes
    ----------
    strategy : str
        The winning strategy; ``"identity"`` when the current placement was kept.
    winner_rank : int or None
        Rank (in the input communicator) whose candidate won; ``None`` when the current placement
        was kept because no candidate beat it.
    objective : str
        ``"congestion"``, ``"dilation"`` or ``"hopbytes"``.
    before, after : dict
        Metrics of the current and the chosen placement: ``objective`` plus the keys of
        :func:`libtopomap.evaluate` (``max_congestion, avg_congestion, avg_dilation, max_dilation,
        hop_bytes``).
    improved : bool
        Whether the chosen placement is strictly better than the current one on
        ``(objective, average congestion, hop-bytes)``.
    old_rank, new_rank : int
        This process's rank before and after.
    new_rank_of : numpy.ndarray
        ``new_rank_of[r]``: the new rank of old rank ``r``.
    vertices_before, vertices_after : numpy.ndarray
        Topology vertex of each logical vertex (= rank of the input communicator) before, and of
        each new rank after.
    candidates : list of dict
        Per candidate that ran (the current placement excluded), in portfolio order: ``index,
        rank`` (who ran it), ``strategy`` (what ran, e.g. ``"greedy+ta"``), ``seed, refine, start,
        value`` (objective), ``tiebreak`` (hop-bytes), ``key`` (the score), ``metrics, seconds`` and
        ``note`` (e.g. a refinement skipped at the lower bound).
    timings : dict
        Seconds measured on this rank: ``locate, gather, kernels`` (rank 0 compiles or loads the
        numba kernels, the others wait), ``strategies, selection, build`` (``build`` only
        when a communicator was built, not for :func:`topomap`) and ``total``.
    seed : int
        The base seed (per-candidate seeds derive from it), for reproducing the run.
    skipped : list of str
        Candidates not run and why, e.g. ``"scotch skipped: estimated 3.2 GB > max_memory 1 GB per
        node"``.
    plan : dict
        ``max_memory`` (bytes per node), ``mapping_ranks`` (the ranks allowed to map),
        ``assignment`` (rank -> candidate indices), ``threads`` (rank -> numba threads) and
        ``estimates`` (``"strategy[+refine]"`` -> bytes).
    """

    strategy: str
    winner_rank: int | None
    objective: str
    before: dict
    after: dict
    improved: bool
    old_rank: int
    new_rank: int
    new_rank_of: np.ndarray
    vertices_before: np.ndarray
    vertices_after: np.ndarray
    candidates: list
    timings: dict
    seed: int
    n_processes: int = 0
    topology: str | None = None
    extra: dict = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    plan: dict = field(default_factory=dict)

    def summary(self):
        """A few human-readable lines (what the demo prints)."""
        who = "current placement kept" if self.winner_rank is None else f"found on rank {self.winner_rank}"
        b, a = self.before, self.after
        lines = [
            f"strategy: {self.strategy} ({who}); objective {self.objective}: "
            f"{b['objective']:.4g} -> {a['objective']:.4g}",
            f"max congestion {b['max_congestion']:.4g} -> {a['max_congestion']:.4g}, "
            f"avg dilation {b['avg_dilation']:.4g} -> {a['avg_dilation']:.4g}, "
            f"max dilation {b['max_dilation']} -> {a['max_dilation']}",
            "timings (s): " + ", ".join(f"{k} {v:.4f}" for k, v in self.timings.items()),
        ]
        if self.candidates:
            lines.append("candidates: " + ", ".join(f"{c['strategy']} on rank {c['rank']}" for c in self.candidates))
        lines += self.skipped
        return "\n".join(lines)


class TopomapDistgraphcomm(MPI.Distgraphcomm):
    """Deprecated: what the dist-graph calls returned before 0.4.  They now return the plain
    :class:`mpi4py.MPI.Distgraphcomm` (so that ``type(MPI.Comm.fromint(c.toint())) is type(c)``, as
    mpi4py's own tests require) and the report is read with :func:`report`."""

    report: TopomapReport


_keyval = None


def _report_keyval():
    global _keyval
    if _keyval is None:
        _keyval = MPI.Comm.Create_keyval()
    return _keyval


def report(comm):
    """The report of a communicator built (or reordered) by libtopomap, or ``None``.

    The dist-graph calls, :func:`libtopomap.Create_cart` and :func:`topomap` attach their
    :class:`TopomapReport` to the communicator as an MPI attribute (a keyval of this module), and
    :func:`libtopomap.reorder_for_collective` its :class:`~libtopomap.mpi.CollectiveReport`; the
    communicators themselves are mpi4py's plain types.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> report(MPI.COMM_SELF) is None
    True
    """
    if _keyval is None or comm == MPI.COMM_NULL:
        return None
    return comm.Get_attr(_keyval)


def last_report(comm):
    """The same as :func:`report` (the name before 0.4)."""
    rep = report(comm)
    if rep is None:  # a TopomapIntracomm of reorder_for_collective before it attached a keyval
        rep = getattr(comm, "report", None)
    return rep


def _attach(comm, report):
    comm.Set_attr(_report_keyval(), report)


# ----------------------------------------------------------------------------------- adjacency lists
def _weights_code(w):
    if w is None:
        return _W_NONE, None
    if w is MPI.UNWEIGHTED:
        return _W_UNWEIGHTED, None
    if w is MPI.WEIGHTS_EMPTY:
        return _W_EMPTY, None
    return _W_LIST, w


#: Largest value of an MPI ``int`` (ranks, degrees and weights end up in C ``int`` arrays).
INT_MAX = 2**31 - 1


def _int_array(values, what, *, upper):
    """``values`` (a sequence of integers, or None for none) as ``int64``, each in ``0..upper``."""
    if values is None:
        return np.zeros(0, np.int64)
    try:
        a = np.asarray(values if isinstance(values, np.ndarray) else list(values))
    except TypeError:
        raise ArgumentTypeError(f"{what} must be a sequence of integers, got {type(values).__name__}") from None
    a = a.reshape(-1)
    if a.size == 0:
        return np.zeros(0, np.int64)
    if a.dtype == object:  # Python ints beyond 64 bits, or mixed types
        for i, x in enumerate(a.tolist()):
            if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
                raise ArgumentTypeError(f"{what}[{i}] = {x!r} is not an integer")
            if not 0 <= x <= upper:
                raise ArgumentError(f"{what}[{i}] = {x} is out of range 0..{upper}")
        return a.astype(np.int64)
    if not np.issubdtype(a.dtype, np.integer):
        raise ArgumentTypeError(f"{what} must be integers, got {a.dtype}")
    bad = np.flatnonzero((a < 0) | (a > upper))
    if bad.size:
        raise ArgumentError(f"{what}[{bad[0]}] = {a[bad[0]]} is out of range 0..{upper}")
    return a.astype(np.int64)


def _local_lists(size, sources, destinations, sourceweights, destweights):
    """Validate this rank's adjacent lists (``None`` is an empty list, as in mpi4py); return
    (src int64, dst int64, sw, dw, codes).  Ranks must be ranks of the communicator and weights fit an
    MPI ``int``: a value that mpi4py would accept on one rank and MPI reject later must not get that far."""
    src = _int_array(sources, "sources", upper=size - 1)
    dst = _int_array(destinations, "destinations", upper=size - 1)
    codes = []
    weights = []
    for w, lst, what in ((sourceweights, src, "sourceweights"), (destweights, dst, "destweights")):
        code, vals = _weights_code(w)
        if code == _W_LIST:
            a = _int_array(vals, what, upper=INT_MAX)
            if a.size != lst.size:
                raise ArgumentError(f"{what} has {a.size} entries for {lst.size} neighbours")
        elif code == _W_EMPTY and lst.size:
            raise ArgumentError(f"{what} is MPI.WEIGHTS_EMPTY but there are {lst.size} neighbours")
        else:
            a = np.zeros(0, np.int64)
        codes.append(code)
        weights.append(a)
    return src, dst, weights[0], weights[1], codes


def _general_lists(size, sources, degrees, destinations, weights):
    """Validate this rank's lists of the general form (``Create_dist_graph``); return them as lists
    ready for MPI (weights keep ``None`` / ``MPI.UNWEIGHTED`` / ``MPI.WEIGHTS_EMPTY``)."""
    src = _int_array(sources, "sources", upper=size - 1)
    deg = _int_array(degrees, "degrees", upper=INT_MAX)
    if deg.size != src.size:
        raise ArgumentError(f"degrees has {deg.size} entries for {src.size} sources")
    dst = _int_array(destinations, "destinations", upper=size - 1)
    if int(deg.sum()) != dst.size:
        raise ArgumentError(f"the degrees add up to {int(deg.sum())} but there are {dst.size} destinations")
    code, vals = _weights_code(weights)
    if code == _W_LIST:
        w = _int_array(vals, "weights", upper=INT_MAX)
        if w.size != dst.size:
            raise ArgumentError(f"weights has {w.size} entries for {dst.size} destinations")
        weights = w.tolist()
    elif code == _W_EMPTY and dst.size:
        raise ArgumentError(f"weights is MPI.WEIGHTS_EMPTY but there are {dst.size} destinations")
    return src.tolist(), deg.tolist(), dst.tolist(), weights


def _check_options(*, strategies, objective, seed, time_budget, iterations, refine, max_memory, total_budget=None,
                   routing=None):
    """Local checks of the options that must be equal on every rank (their agreement is separate)."""
    import math
    import numbers

    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise ArgumentTypeError(f"seed must be a non-negative integer, got {seed!r}")
        if not 0 <= seed < 2**63:
            raise ArgumentError(f"seed must be in 0..2**63-1, got {seed}")
    if time_budget is not None:
        if isinstance(time_budget, bool) or not isinstance(time_budget, numbers.Real):
            raise ArgumentTypeError(f"time_budget must be a number of seconds, got {time_budget!r}")
        if not (math.isfinite(time_budget) and time_budget > 0):
            raise ArgumentError(f"time_budget must be a finite number of seconds > 0, got {time_budget!r}")
    if total_budget is not None:
        if isinstance(total_budget, bool) or not isinstance(total_budget, numbers.Real):
            raise ArgumentTypeError(f"total_budget must be a number of seconds, got {total_budget!r}")
        if not total_budget > 0:  # math.inf: no budget
            raise ArgumentError(f"total_budget must be a number of seconds > 0, got {total_budget!r}")
    if routing is not None:
        from ..routing import get_routing

        get_routing("ecmp" if routing == "native" else routing)  # the name; the topology is checked later
    if iterations is not None:
        if isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral):
            raise ArgumentTypeError(f"iterations must be an integer, got {iterations!r}")
        if not 0 <= iterations < 2**62:
            raise ArgumentError(f"iterations must be >= 0, got {iterations}")


def _options(reorder, topology, **options):
    """The per-rank arguments that must be equal on every rank, for :func:`agree_arguments`."""
    return {"reorder": bool(reorder), "topology given": topology is not None, **options}


def _agree_options(comm, check, *, what, reorder, topology, **options):
    """Entry of every reordering call: check the portfolio ``options`` (:func:`_check_options`) and this
    rank's own arguments (``check()``, which returns them normalized), and agree in one ``allgather``
    (:func:`~libtopomap.mpi.race.agree_arguments`) on the outcome and on ``reorder``, whether a topology
    was given, and every option (``total_budget`` included).

    Returns ``check()``'s result; raises the same error on every rank, or :class:`CommError` on every
    rank when some ranks failed or the options differ between ranks."""
    def run():
        _check_options(**options)
        return check()
    return agree_arguments(comm, run, what=what, options=_options(reorder, topology, **options))


class _GatheredGraph:
    """Every rank's adjacency lists, gathered with one Allgather of counts and one Allgatherv."""

    def __init__(self, comm, lists):
        src, dst, sw, dw, codes = lists
        size = comm.Get_size()
        head = np.array([src.size, dst.size, sw.size, dw.size, codes[0], codes[1]], dtype=np.int64)
        heads = np.empty((size, 6), dtype=np.int64)
        comm.Allgather(head, heads)
        payload = np.concatenate([src, dst, sw, dw])
        counts = heads[:, :4].sum(axis=1)
        displs = np.zeros(size, dtype=np.int64)
        np.cumsum(counts[:-1], out=displs[1:])
        allp = np.empty(int(counts.sum()), dtype=np.int64)
        comm.Allgatherv(payload, [allp, counts, displs, MPI.INT64_T])
        self.size = size
        self.heads = heads
        self.payload = allp
        self.displs = displs

    def lists(self, k):
        """Exactly what rank ``k`` passed: (sources, destinations, sourceweights, destweights)."""
        ns, nd, nsw, ndw, cs, cd = self.heads[k].tolist()
        o = int(self.displs[k])
        p = self.payload
        s = p[o:o + ns].tolist()
        d = p[o + ns:o + ns + nd].tolist()
        sw_vals = p[o + ns + nd:o + ns + nd + nsw].tolist()
        dw_vals = p[o + ns + nd + nsw:o + ns + nd + nsw + ndw].tolist()
        return s, d, _weights_back(cs, sw_vals), _weights_back(cd, dw_vals)

    def _segments(self, col):
        """Concatenated column ``col`` (0 src, 1 dst, 2 sw, 3 dw) of all ranks and the owner of each entry."""
        h = self.heads
        starts = self.displs + h[:, :col].sum(axis=1)
        lens = h[:, col]
        owner = np.repeat(np.arange(self.size, dtype=np.int64), lens)
        # index of each entry in the payload: start of its owner's block + position inside it
        pos = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        return self.payload[np.repeat(starts, lens) + pos], owner

    def commgraph(self):
        """The process graph: edge ``r -> d`` for every destination ``d`` of ``r`` (weighted by ``r``'s
        destination weight), plus ``s -> r`` for every source ``s`` of ``r`` that ``s`` does not list
        (weighted by ``r``'s source weight).  MPI implementations accept lists whose two ends do not
        match, and so do mpi4py's own tests (``Create_dist_graph_adjacent(sources, None)``)."""
        dst, out_owner = self._segments(1)
        src, in_owner = self._segments(0)
        weighted_out = np.isin(self.heads[:, 5], (_W_LIST, _W_EMPTY))
        weighted_in = np.isin(self.heads[:, 4], (_W_LIST, _W_EMPTY))
        dw, _ = self._segments(3)
        sw, _ = self._segments(2)
        w_out = np.ones(dst.size, dtype=np.int64)
        mask = weighted_out[out_owner]
        w_out[mask] = dw
        w_in = np.ones(src.size, dtype=np.int64)
        mask = weighted_in[in_owner]
        w_in[mask] = sw
        only_in = ~np.isin(src * self.size + in_owner, out_owner * self.size + dst)
        u = np.concatenate([out_owner, src[only_in]])
        v = np.concatenate([dst, in_owner[only_in]])
        w = np.concatenate([w_out, w_in[only_in]])
        return CommGraph(self.size, u, v, w.astype(np.float64))


def _weights_back(code, vals):
    if code == _W_NONE:
        return None
    if code == _W_UNWEIGHTED:
        return MPI.UNWEIGHTED
    if code == _W_EMPTY:
        return MPI.WEIGHTS_EMPTY
    return vals


# ----------------------------------------------------------------------------------- the portfolio
def _assign_new_ranks(current, chosen):
    """New rank of each process: processes whose host already hosts their own logical vertex keep it;
    the others take the remaining logical vertices of their host in rank order."""
    p = current.size
    new_rank_of = np.empty(p, dtype=np.int64)
    fixed = chosen == current
    new_rank_of[fixed] = np.flatnonzero(fixed)
    free_old = np.flatnonzero(~fixed)
    free_logical = np.flatnonzero(~fixed)
    old_sorted = free_old[np.lexsort((free_old, current[free_old]))]
    log_sorted = free_logical[np.lexsort((free_logical, chosen[free_logical]))]
    if not np.array_equal(current[old_sorted], chosen[log_sorted]):
        raise MappingError("the chosen mapping does not use the same slots as the current placement")
    new_rank_of[old_sorted] = log_sorted
    return new_rank_of


def _topology_fingerprint(topo):
    h = zlib.crc32("\n".join(topo.names).encode())
    for arr in (topo.link_u, topo.link_v, topo.capacity, topo.slots):
        h = zlib.crc32(np.ascontiguousarray(arr).tobytes(), h)
    return h.to_bytes(4, "little")


def _check_agreement(comm, what, data):
    """Raise CommError on all ranks if ``data`` (bytes) is not the same on every rank: inputs that must be
    the same everywhere (topology, options, placement) would otherwise give inconsistent ranks.

    Agreement costs two ``Allreduce`` of one integer (the CRC-32's minimum and maximum); only when they
    differ are the CRCs gathered, to name the ranks that differ from the most common value (the lowest
    rank's on a tie), so one odd rank is named whether it is first, last or in the middle.
    """
    verb = "differ" if what.startswith("options") else "differs"
    mine = zlib.crc32(data)
    lo = comm.allreduce(mine, op=MPI.MIN)
    hi = comm.allreduce(mine, op=MPI.MAX)
    if lo == hi:
        return
    crcs = np.empty(comm.Get_size(), dtype=np.int64)
    comm.Allgather(np.array([mine], dtype=np.int64), crcs)
    values, first, counts = np.unique(crcs, return_index=True, return_counts=True)
    best = np.lexsort((first, -counts))[0]         # most common value, then the lowest rank holding it
    ref = int(first[best])
    differ = np.flatnonzero(crcs != values[best])
    ranks = ", ".join(map(str, differ[:10].tolist())) + (" ..." if differ.size > 10 else "")
    raise CommError(f"the {what} {verb} between ranks: rank(s) {ranks} disagree with rank {ref}; "
                    "every rank must pass the same")


def _compile_on_rank0(comm, strategies, objective, refine):
    """Rank 0 compiles (or loads) the numba kernels of ``strategies`` while the others wait without
    spinning (MPICH busy-polls in a blocking barrier, which starves the compiling rank when ranks
    share cores); then every rank loads the kernels from numba's on-disk cache.  A failure here
    is not fatal: the same code runs again in the portfolio, where errors are agreed on and raised.
    An interruption (``KeyboardInterrupt``, ``SystemExit``: any ``BaseException`` that is not an
    ``Exception``) is: rank 0 re-raises it after telling the others, which raise :class:`CommError`.
    Returns rank 0's error message, or None."""
    from ..mappers import compile_kernels

    error = stop = interrupt = None
    if comm.Get_rank() == 0:
        try:
            compile_kernels(strategies, objective=objective, refine=refine)
        except Exception as e:  # reported by the portfolio step, which runs the same kernels
            error = f"{type(e).__name__}: {e}"
        except BaseException as e:  # noqa: BLE001 - must reach the ranks waiting below
            interrupt = e
            stop = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    try:
        wait_quietly(comm)
    except BaseException as e:  # noqa: BLE001 - an interruption while waiting must reach the others too
        if interrupt is None:
            interrupt, stop = e, (f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
    failures = [(r, m) for r, m in enumerate(comm.allgather(stop)) if m is not None]
    if failures:
        msg = format_failures("compiling the kernels", failures, comm.Get_size())
        if interrupt is not None:
            interrupt.add_note(msg)
            raise interrupt
        err = CommError(msg)
        err.failures = failures
        raise err
    return error


def _candidate_records(result, objective):
    """The report's ``candidates``: one dict per candidate that ran (the current placement excluded)."""
    out = []
    for o in result.outcomes:
        c = o.candidate
        if c.baseline:
            continue
        out.append({"index": c.index, "rank": o.rank, "strategy": o.label, "seed": c.seed, "refine": c.refine,
                    "start": c.start, "value": o.key[0], "tiebreak": o.key[2], "key": list(o.key),
                    "metrics": o.metrics, "seconds": o.seconds, "note": o.note})
    return out


def _reorder(comm, topology, lists, *, strategies, objective, seed, time_budget, iterations, refine,
             fake_names, placement, max_memory=None, total_budget=None, routing=None):
    """Steps 1-4 (locate, gather, portfolio, selection).  Returns (report, gathered graph).

    ``lists`` is this rank's ``(sources, destinations, sourceweights, destweights)``, or a
    :class:`~libtopomap.CommGraph` over ``comm``'s ranks that every rank already holds (then nothing
    is gathered and the gathered graph returned is ``None``)."""
    from ..formats import read as load
    from ..portfolio import MappingProblem, check_memory, make_candidates

    t_start = time.perf_counter()
    rank, size = comm.Get_rank(), comm.Get_size()
    timings = {}
    topology, fake_names, placement = resolve_auto(comm, topology, fake_names, placement)

    # 0. Inputs (same on all ranks): the topology and options, checked before any collective data.
    def prepare():
        topo = load(os.fspath(topology)) if isinstance(topology, (str, os.PathLike)) else topology
        from ..mappers import REFINEMENTS, STRATEGIES
        from ..mappers.objectives import check_objective

        strats = _default_strategies() if strategies is None else (
            (strategies,) if isinstance(strategies, str) else tuple(strategies))
        if not strats:
            raise MappingError("strategies is empty")
        unknown = [s for s in strats if s not in STRATEGIES]
        if unknown:
            raise MappingError(f"unknown strategy {unknown[0]!r}; expected some of {', '.join(STRATEGIES)}")
        check_objective(objective)
        if refine not in (None,) + REFINEMENTS:
            raise MappingError(f"unknown refinement {refine!r}; expected two-opt or ta")
        if max_memory is not None:
            check_memory(max_memory)
        return topo, strats
    topo, strats = collective_call(comm, prepare, what="preparing the topology")
    _check_agreement(comm, "topology", _topology_fingerprint(topo))
    _check_agreement(comm, "options (strategies, objective, seed, refine, iterations)",
                     repr((strats, objective, seed, refine, iterations, time_budget, max_memory,
                           total_budget, routing)).encode())

    # 1. Where is every process?
    t = time.perf_counter()
    current = locate(comm, topo, fake_names=fake_names, placement=placement).astype(np.int64)
    _check_agreement(comm, "process placement", current.tobytes())
    timings["locate"] = time.perf_counter() - t

    # 2. The whole process graph on every rank (Allgatherv of edge lists), unless the caller already holds
    # it on every rank (a CommGraph, agreed on: libtopomap.mpi.trace.reorder).
    t = time.perf_counter()
    if isinstance(lists, CommGraph):
        gathered, graph = None, lists
    else:
        local = collective_call(comm, _local_lists, size, *lists, what="checking the neighbour lists")
        gathered = _GatheredGraph(comm, local)
        graph = collective_call(comm, gathered.commgraph, what="gathering the process graph")
    timings["gather"] = time.perf_counter() - t

    # 3. Portfolio (libtopomap.portfolio, raced by mpi.driver): candidate k + 1 runs strategy k mod S
    # with its own seed and start vertex on the k-th mapping rank.  Rank 0 first compiles (or loads)
    # the numba kernels so the other ranks load them from the cache instead of all compiling at once.
    # On one host every placement is the same one: the current placement is kept without a race.
    job_slots = np.bincount(current, minlength=topo.n_vertices).astype(np.int64)
    job_hosts = np.flatnonzero(job_slots)
    one_host = job_hosts.size == 1
    t = time.perf_counter()
    warm_error = _compile_on_rank0(comm, strats, objective, refine) if graph.n_edges and not one_host else None
    timings["kernels"] = time.perf_counter() - t
    t = time.perf_counter()
    if seed is None:
        base = comm.bcast(int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0]), root=0)
    else:
        base = int(seed)
    problem = collective_call(comm, lambda: MappingProblem(
        topo, graph, slots=job_slots, placement=current, objective=objective, time_budget=time_budget,
        iterations=iterations, total_budget=total_budget, routing=routing), what="preparing the mapping")

    def make(n):
        return make_candidates(strats, seed=base, refine=refine, count=n, starts=job_hosts)
    if one_host:
        result = None
        before = collective_call(comm, lambda: problem.score(current)[1], what="scoring the current placement")
    else:
        result = race(comm, problem, make, max_memory=max_memory, what="mapping")
        before = dict(result.baseline.metrics)
    timings["strategies"] = time.perf_counter() - t

    # 4. Selection is done (every rank holds the winner); check it and derive the new ranks.
    t = time.perf_counter()
    win = None if one_host else result.winner
    if win is not None and not win.candidate.baseline:
        chosen = np.asarray(win.payload, dtype=np.int64)

        def check_winner():
            problem.validate(chosen)
            return _assign_new_ranks(current, chosen)
        new_rank_of = collective_call(comm, check_winner, what="checking the chosen mapping")
        strategy, winner_rank, after = win.label, win.rank, dict(win.metrics)
    else:
        chosen, strategy, winner_rank = current.copy(), "identity", None
        new_rank_of = np.arange(size, dtype=np.int64)
        after = dict(before)
    timings["selection"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t_start

    extra = {} if warm_error is None else {"kernel_warmup_error": warm_error}
    report = TopomapReport(
        strategy=strategy, winner_rank=winner_rank, objective=objective, before=before, after=after,
        improved=winner_rank is not None, old_rank=rank, new_rank=int(new_rank_of[rank]),
        new_rank_of=new_rank_of, vertices_before=current, vertices_after=np.asarray(chosen, np.int64),
        candidates=[] if one_host else _candidate_records(result, objective), timings=timings, seed=base,
        n_processes=size, topology=getattr(topo, "name", None), extra=extra,
        skipped=[] if one_host else [sk.reason for sk in result.skipped], plan={} if one_host else result.plan)
    return report, gathered


def _build(comm, report, gathered, info):
    """Step 5: Split by new rank, then each process passes the lists of the logical vertex it now plays."""
    t = time.perf_counter()
    split = comm.Split(0, key=report.new_rank)
    try:
        k = split.Get_rank()
        if k != report.new_rank:  # pragma: no cover - MPI_Comm_split orders by key
            raise MappingError(f"Split gave rank {k}, expected {report.new_rank}")
        s, d, sw, dw = gathered.lists(k)
        dcomm = split.Create_dist_graph_adjacent(s, d, sw, dw, info=info, reorder=False)
    finally:
        split.Free()
    build = time.perf_counter() - t
    total = report.timings.pop("total") + build
    report.timings["build"] = build
    report.timings["total"] = total
    _attach(dcomm, report)
    return dcomm


# ----------------------------------------------------------------------------------- public API
def Create_dist_graph_adjacent(comm, sources, destinations, sourceweights=None, destweights=None,
                               info=MPI.INFO_NULL, reorder=True, topology=None, *,
                               strategies=None, objective="congestion", seed=None,
                               time_budget=None, iterations=None, refine=None, fake_names=None,
                               placement=None, max_memory=None, total_budget=None, routing=None):
    """``comm.Create_dist_graph_adjacent`` that really reorders ranks onto ``topology``.

    A one-line change in an mpi4py application: replace ``comm.Create_dist_graph_adjacent(...)`` by
    ``ltm.Create_dist_graph_adjacent(comm, ..., topology=topo)``.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        Collective over all its processes.
    sources, destinations, sourceweights, destweights, info
        As for mpi4py (``None`` or ``MPI.UNWEIGHTED``: unweighted; ``MPI.WEIGHTS_EMPTY`` for a
        zero-degree rank of a weighted graph).  Weights are message volumes.
    reorder : bool
        With ``False``, or without a topology, this is exactly mpi4py's call.
    topology : Topology or path, optional
        The physical network (a path is loaded on every rank).
    strategies : sequence of str, optional
        Raced over the ranks: ``max(len(strategies), R)`` candidates for ``R`` mapping ranks,
        candidate ``k`` running ``strategies[k % len(strategies)]`` on the ``k``-th mapping rank
        (rank ``r`` runs ``strategies[r % len(strategies)]`` when every rank maps); the current
        placement is always a candidate as well.  Default: those of :data:`DEFAULT_STRATEGIES` that
        are installed.
    objective : {"congestion", "dilation", "hopbytes"}
    seed : int, optional
        Base seed; the same seed gives the same mapping (with ``time_budget=None``).  Default: drawn
        on rank 0 and reported in ``report.seed``.
    time_budget : float, optional
        Seconds per rank for a strategy and its refinement (makes results timing-dependent).
    iterations, refine
        Refinement moves and kind (``None``, ``"two-opt"``, ``"ta"``) of every candidate.  Default
        moves (without ``time_budget``): :func:`libtopomap.portfolio.default_iterations`, 4 per
        process within [2,000, 20,000].  A candidate whose construction reaches the lower bounds of
        :func:`libtopomap.portfolio.lower_bounds` is not refined.
    fake_names, placement
        Where the processes are (see :func:`libtopomap.mpi.locate.locate`); default: hostnames, or
        the file named by ``LIBTOPOMAP_FAKE_NAMES``.
    max_memory : int, optional
        Bytes per node (ranks sharing memory, ``MPI.COMM_TYPE_SHARED``) for the strategies running
        at once, from :func:`libtopomap.portfolio.estimate_memory`: a node lets ``max_memory //
        largest estimate`` of its ranks map, the others wait; a strategy estimated above it is
        skipped (``report.skipped`` says why).  Default: a quarter of the smallest node's physical
        memory.
    total_budget : float, optional
        Seconds for the whole race on each mapping rank (:class:`libtopomap.portfolio.MappingProblem`):
        a construction estimated beyond what is left of the constructions' share is skipped with
        the reason in ``report.skipped``, refinements stop at the budget.  Default
        :data:`libtopomap.portfolio.DEFAULT_TOTAL_BUDGET`; ``math.inf`` for none.
    routing : str, optional
        Routing model of the scores and of the congestion refinements
        (:class:`libtopomap.portfolio.MappingProblem`): a name of :mod:`libtopomap.routing` or
        ``"native"``; default ``ecmp``.

    Returns
    -------
    mpi4py.MPI.Distgraphcomm
        mpi4py's plain type, in which rank ``k`` plays logical vertex ``k``: ``Get_dist_neighbors()``
        at new rank ``k`` returns what old rank ``k`` passed.  ``libtopomap.report(comm)`` returns
        its :class:`TopomapReport` (an MPI attribute).  Without reordering, mpi4py's result.

    Raises
    ------
    ArgumentError, ArgumentTypeError
        On every rank, when every rank passed the same bad argument (a ``ValueError`` /
        ``TypeError``, as mpi4py raises): a rank out of range, a weight that does not fit an MPI
        ``int``, lists of different lengths, ``MPI.WEIGHTS_EMPTY`` with neighbours, a negative or
        non-integer ``seed``, a ``time_budget`` that is not finite and > 0...
    CommError
        On every rank, before any other collective, when only some ranks passed bad arguments, or
        the ranks passed different ``reorder``, ``topology`` (given or not), ``strategies``,
        ``objective``, ``seed``, ``time_budget``, ``iterations``, ``refine``, ``max_memory``,
        ``total_budget`` or ``routing``.
    CommError
        On every rank when any rank failed while mapping (bad topology, strategy error, inconsistent
        graph, host missing from the topology...), naming the rank(s) and cause.

    Notes
    -----
    Steps: locate, ``Allgatherv`` of edge lists, portfolio of candidates (:mod:`libtopomap.portfolio`:
    strategy x seed x start vertex, every construction first, then the refinement of the best ones;
    a construction at the lower bound ends the race), a lexicographic ``Allreduce(MIN)`` on ``(objective, average
    congestion, hop-bytes, strategy order, candidate)``, broadcast of the winning mapping, bijection
    check on every rank, ``Split(0, key=newrank)`` and ``Create_dist_graph_adjacent(reorder=False)``.

    References
    ----------
    T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for Large-scale Parallel
    Architectures", ICS'11, section 4.2 and Figure 4.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> import libtopomap as ltm
    >>> c = ltm.Create_dist_graph_adjacent(MPI.COMM_SELF, [], [], topology=ltm.torus("2"),
    ...                                    placement=[0], seed=1)
    >>> c.Get_dist_neighbors(), report(c).strategy, type(c) is MPI.Distgraphcomm
    (([], [], None), 'identity', True)
    """
    opts = dict(strategies=strategies, objective=objective, seed=seed, time_budget=time_budget,
                iterations=iterations, refine=refine, max_memory=max_memory, total_budget=total_budget,
                routing=routing)

    def check():
        src, dst, sw, dw, codes = _local_lists(comm.Get_size(), sources, destinations, sourceweights, destweights)
        return (src.tolist(), dst.tolist(), sw.tolist() if codes[0] == _W_LIST else sourceweights,
                dw.tolist() if codes[1] == _W_LIST else destweights)
    lists = _agree_options(comm, check, what="checking the arguments of Create_dist_graph_adjacent",
                           reorder=reorder, topology=topology, **opts)
    if not reorder or topology is None:
        return comm.Create_dist_graph_adjacent(*lists, info=info, reorder=reorder)
    report, gathered = _reorder(comm, topology, lists,
                                strategies=strategies, objective=objective, seed=seed,
                                time_budget=time_budget, iterations=iterations, refine=refine,
                                fake_names=fake_names, placement=placement, max_memory=max_memory,
                                total_budget=total_budget, routing=routing)
    return _build(comm, report, gathered, info)


def _own_lists(dcomm):
    """This rank's lists of a distributed-graph communicator, in the form Create_dist_graph_adjacent takes."""
    s, d, w = dcomm.Get_dist_neighbors()
    if w is None:
        return list(s), list(d), None, None
    sw, dw = w
    sw = MPI.WEIGHTS_EMPTY if len(s) == 0 else list(sw)
    dw = MPI.WEIGHTS_EMPTY if len(d) == 0 else list(dw)
    return list(s), list(d), sw, dw


def Create_dist_graph(comm, sources, degrees, destinations, weights=None, info=MPI.INFO_NULL,
                      reorder=True, topology=None, *, strategies=None, objective="congestion",
                      seed=None, time_budget=None, iterations=None, refine=None, fake_names=None,
                      placement=None, max_memory=None, total_budget=None, routing=None):
    """``comm.Create_dist_graph`` that really reorders ranks onto ``topology``.

    The general form (any rank may give any edge) is first built by MPI without reordering; each rank's
    resulting neighbour lists then go through :func:`Create_dist_graph_adjacent`, so new rank ``k``
    sees exactly the lists old rank ``k`` would have seen.  Parameters, return value and errors as in
    :func:`Create_dist_graph_adjacent`; every rank's ``sources``, ``degrees``, ``destinations`` and
    ``weights`` are checked and agreed on before MPI sees them.
    """
    opts = dict(strategies=strategies, objective=objective, seed=seed, time_budget=time_budget,
                iterations=iterations, refine=refine, max_memory=max_memory, total_budget=total_budget,
                routing=routing)

    args = _agree_options(comm, lambda: _general_lists(comm.Get_size(), sources, degrees, destinations, weights),
                          what="checking the arguments of Create_dist_graph", reorder=reorder, topology=topology,
                          **opts)
    if not reorder or topology is None:
        return comm.Create_dist_graph(*args, info=info, reorder=reorder)
    plain = comm.Create_dist_graph(*args, info=info, reorder=False)
    try:
        lists = _own_lists(plain)
    finally:
        plain.Free()
    report, gathered = _reorder(comm, topology, lists, strategies=strategies, objective=objective,
                                seed=seed, time_budget=time_budget, iterations=iterations, refine=refine,
                                fake_names=fake_names, placement=placement, max_memory=max_memory,
                                total_budget=total_budget, routing=routing)
    return _build(comm, report, gathered, info)


def topomap(distgraph_comm, topology, *, strategies=None, objective="congestion", seed=None,
            time_budget=None, iterations=None, refine=None, fake_names=None, placement=None, max_memory=None,
            total_budget=None, routing=None):
    """The new rank of this process for a distributed-graph communicator (like ``TPM_Topomap``).

    Low level: the caller splits (``comm.Split(0, key=newrank)``) and moves the neighbour lists
    itself.  The :class:`TopomapReport` is attached to ``distgraph_comm`` (see :func:`last_report`).

    Parameters
    ----------
    distgraph_comm : mpi4py.MPI.Distgraphcomm
    topology : Topology or path
    strategies, objective, seed, time_budget, iterations, refine, fake_names, placement, max_memory
        As for :func:`Create_dist_graph_adjacent`.
    total_budget, routing
        As for :func:`Create_dist_graph_adjacent`.

    Returns
    -------
    int
        This process's new rank.

    Raises
    ------
    CommError
        On every rank when any rank failed.

    References
    ----------
    T. Hoefler and M. Snir, ICS'11, section 4 (LibTopoMap's ``TPM_Topomap``).
    """
    opts = dict(strategies=strategies, objective=objective, seed=seed, time_budget=time_budget,
                iterations=iterations, refine=refine, max_memory=max_memory, total_budget=total_budget,
                routing=routing)

    def check():
        if not isinstance(distgraph_comm, MPI.Comm) or distgraph_comm == MPI.COMM_NULL:
            raise ArgumentTypeError(f"topomap needs a distributed-graph communicator, got {distgraph_comm!r}")
    if isinstance(distgraph_comm, MPI.Intracomm) and distgraph_comm.Get_topology() != MPI.DIST_GRAPH:
        # the same on every rank (a communicator's topology is collective): no rank is left waiting
        kind = {MPI.CART: "a Cartesian", MPI.GRAPH: "a graph"}.get(distgraph_comm.Get_topology(), "no")
        raise ArgumentTypeError(f"topomap needs a communicator with a distributed-graph topology "
                                f"(from Create_dist_graph[_adjacent]); this one has {kind} topology")
    _agree_options(distgraph_comm, check, what="checking the arguments of topomap", reorder=True,
                   topology=topology, **opts)
    lists = _own_lists(distgraph_comm)
    report, _ = _reorder(distgraph_comm, topology, lists, strategies=strategies, objective=objective,
                         seed=seed, time_budget=time_budget, iterations=iterations, refine=refine,
                         fake_names=fake_names, placement=placement, max_memory=max_memory,
                         total_budget=total_budget, routing=routing)
    _attach(distgraph_comm, report)
    return report.new_rank
