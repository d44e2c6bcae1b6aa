"""The reorder pipeline shared by the dist-graph calls, :func:`~libtopomap.Create_cart`,
:func:`~libtopomap.mpi.tracing.reorder` and :func:`~libtopomap.reorder_for_collective`.

The checks of the arguments and options and their agreement between ranks, the gathered process
graph, and :func:`reorder_ranks`: steps 1-4 of :mod:`libtopomap.mpi.distgraph` (locate, gather,
portfolio, selection).  Errors on any rank raise :class:`~libtopomap.CommError` on all ranks.
"""

from __future__ import annotations

import contextlib
import time
import zlib

import numpy as np
from mpi4py import MPI

from ..commgraph import CommGraph
from ..errors import ArgumentError, ArgumentTypeError, CommError
from ..loading import as_topology
from ..validation import check_bytes, check_choice, check_choices, check_moves, check_seconds, check_seed
from ..mapping import assign_new_ranks
from ._report import TopomapReport
from .auto import resolve as resolve_auto
from .driver import race
from .location import locate
from .agreement import agree_arguments, agreed, collective_call

__all__ = ["DEFAULT_STRATEGIES", "INT_MAX", "adjacent_lists", "general_lists", "check_options", "options_to_agree",
           "agree_options", "check_agreement", "topology_fingerprint", "reorder_ranks"]

# The strategies raced by default, in rank order (those installed); the current placement (identity) is
# always a candidate on top, so it needs no rank of its own.
DEFAULT_STRATEGIES = ("greedy", "recursive", "multisection", "dual-bisection", "scotch", "rcm", "random")


def _default_strategies():
    from ..mappers import STRATEGIES

    return tuple(s for s in DEFAULT_STRATEGIES if s in STRATEGIES)


# How a rank passed its weights, so its new owner passes them the same way.
_W_NONE, _W_UNWEIGHTED, _W_EMPTY, _W_LIST = 0, 1, 2, 3


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


def adjacent_lists(size, sources, destinations, sourceweights, destweights):
    """Validate this rank's lists of ``Create_dist_graph_adjacent`` (:func:`_local_lists`); return them
    as lists ready for MPI (weights keep ``None`` / ``MPI.UNWEIGHTED`` / ``MPI.WEIGHTS_EMPTY``)."""
    src, dst, sw, dw, codes = _local_lists(size, sources, destinations, sourceweights, destweights)
    return (src.tolist(), dst.tolist(), sw.tolist() if codes[0] == _W_LIST else sourceweights,
            dw.tolist() if codes[1] == _W_LIST else destweights)


def general_lists(size, sources, degrees, destinations, weights):
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


def check_options(*, strategies, objective, seed, time_budget, iterations, refine, max_memory, total_budget=None,
                  routing=None):
    """Local checks of the options that must be equal on every rank (their agreement is separate), with
    :mod:`libtopomap.validation`: the MPI calls' one door, before any MPI call."""
    from ..mappers import STRATEGIES

    check_choices("strategy", strategies, default=_default_strategies(), choices=STRATEGIES)
    check_choice("objective", objective)
    if refine is not None:
        check_choice("refinement", refine)
    check_seed(seed)
    check_seconds(time_budget, name="time_budget")
    check_seconds(total_budget, name="total_budget", finite=False)  # math.inf: no budget
    check_moves(iterations)
    if max_memory is not None:
        check_bytes(max_memory, name="max_memory")
    if routing is not None:
        from ..routing import get_routing

        get_routing("ecmp" if routing == "native" else routing)  # the name; the topology is checked later


def options_to_agree(reorder, topology, **options):
    """The per-rank arguments that must be equal on every rank, for :func:`agree_arguments`."""
    return {"reorder": bool(reorder), "topology given": topology is not None, **options}


def agree_options(comm, check, *, what, reorder, topology, **options):
    """Entry of every reordering call: check the portfolio ``options`` (:func:`check_options`) and this
    rank's own arguments (``check()``, which returns them normalized), and agree in one ``allgather``
    (:func:`~libtopomap.mpi.agreement.agree_arguments`) on the outcome and on ``reorder``, whether a topology
    was given, and every option (``total_budget`` included).

    Returns ``check()``'s result; raises the same error on every rank, or :class:`CommError` on every
    rank when some ranks failed or the options differ between ranks."""
    def run():
        check_options(**options)
        return check()
    return agree_arguments(comm, run, what=what, options=lambda: options_to_agree(reorder, topology, **options))


class _GatheredGraph:
    """Every rank's adjacency lists, gathered with one Allgather of counts and one Allgatherv."""

    def __init__(self, comm, lists):
        size = comm.Get_size()
        with agreed(comm, "gathering the process graph"):
            src, dst, sw, dw, codes = lists
            head = np.array([src.size, dst.size, sw.size, dw.size, codes[0], codes[1]], dtype=np.int64)
            heads = np.empty((size, 6), dtype=np.int64)
            payload = np.concatenate([src, dst, sw, dw])
        comm.Allgather(head, heads)
        with agreed(comm, "gathering the process graph"):
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
def topology_fingerprint(topo):
    h = zlib.crc32("\n".join(topo.names).encode())
    for arr in (topo.link_u, topo.link_v, topo.capacity, topo.slots):
        h = zlib.crc32(np.ascontiguousarray(arr).tobytes(), h)
    return h.to_bytes(4, "little")


def check_agreement(comm, what, data):
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
    ``Exception``) is: it becomes the same :class:`CommError` on every rank (:class:`~.race.agreed`).
    Returns rank 0's error message, or None."""
    from ..mappers import compile_kernels

    error = None
    with agreed(comm, "compiling the kernels", quiet=True):
        if comm.Get_rank() == 0:
            try:
                compile_kernels(strategies, objective=objective, refine=refine)
            except Exception as e:  # reported by the portfolio step, which runs the same kernels
                error = f"{type(e).__name__}: {e}"
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


def reorder_ranks(comm, topology, lists, **options):
    """Steps 1-4 (locate, gather, portfolio, selection).  Returns (report, gathered graph).

    ``lists`` is this rank's ``(sources, destinations, sourceweights, destweights)``, or a
    :class:`~libtopomap.CommGraph` over ``comm``'s ranks that every rank already holds (then nothing
    is gathered and the gathered graph returned is ``None``)."""
    with contextlib.ExitStack() as kernels:
        return _reorder_ranks(comm, topology, lists, kernels=kernels, **options)


def _reorder_ranks(comm, topology, lists, *, kernels, strategies, objective, seed, time_budget, iterations, refine,
                   fake_names, placement, max_memory=None, total_budget=None, routing=None):
    """:func:`reorder_ranks`; ``kernels`` (an ExitStack) holds the plain-Python mode of a small job."""
    from .._jit import python_kernels, small_enough_for_python
    from ..portfolio import MappingProblem, make_candidates

    t_start = time.perf_counter()
    rank, size = comm.Get_rank(), comm.Get_size()
    timings = {}
    topology, fake_names, placement = resolve_auto(comm, topology, fake_names, placement)

    # 0. Inputs (same on all ranks): the topology, and the options checked at entry (check_options) and
    # agreed on before any collective data.
    def prepare():
        topo = as_topology(topology)
        strats = _default_strategies() if strategies is None else (
            (strategies,) if isinstance(strategies, str) else tuple(strategies))
        return topo, strats, topology_fingerprint(topo), repr(
            (strats, objective, seed, refine, iterations, time_budget, max_memory, total_budget, routing)).encode()
    topo, strats, topo_print, options_print = collective_call(comm, prepare, what="preparing the topology")
    check_agreement(comm, "topology", topo_print)
    check_agreement(comm, "options (strategies, objective, seed, refine, iterations)", options_print)

    # 1. Where is every process?
    t = time.perf_counter()
    current = locate(comm, topo, fake_names=fake_names, placement=placement).astype(np.int64)
    check_agreement(comm, "process placement", current.tobytes())
    timings["locate"] = time.perf_counter() - t

    # 2. The whole process graph on every rank (Allgatherv of edge lists), unless the caller already holds
    # it on every rank (a CommGraph, agreed on: libtopomap.mpi.tracing.reorder).
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
    # the numba kernels so the other ranks load them from the cache instead of all compiling at once,
    # unless the kernels run as plain Python (a small job, where compiling would take far longer
    # than the work: on a fresh install, a minute for an 8-process mapping of milliseconds).
    # On one host every placement is the same one: the current placement is kept without a race.
    with agreed(comm, "preparing the mapping"):
        job_slots = np.bincount(current, minlength=topo.n_vertices).astype(np.int64)
        job_hosts = np.flatnonzero(job_slots)
        one_host = job_hosts.size == 1
        interpreted = small_enough_for_python(size, topo.n_vertices)
        warm = bool(graph.n_edges) and not one_host and not interpreted
        drawn = int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0]) \
            if seed is None and rank == 0 else None
    kernels.enter_context(python_kernels(interpreted))
    t = time.perf_counter()
    warm_error = _compile_on_rank0(comm, strats, objective, refine) if warm else None
    timings["kernels"] = time.perf_counter() - t
    t = time.perf_counter()
    base = comm.bcast(drawn, root=0) if seed is None else int(seed)
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
    # Local from here on: checked and reported inside one agreed phase, so that a failure on one rank
    # (an invalid winner, an interruption) reaches every rank before the communicator is built.
    with agreed(comm, "checking the chosen mapping"):
        t = time.perf_counter()
        win = None if one_host else result.winner
        if win is not None and not win.candidate.baseline:
            chosen = np.asarray(win.payload, dtype=np.int64)
            problem.validate(chosen)
            new_rank_of = assign_new_ranks(current, chosen)
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

