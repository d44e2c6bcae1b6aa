"""Distributed-graph communicators that really reorder ranks onto the physical network.

:func:`Create_dist_graph_adjacent` and :func:`Create_dist_graph` are drop-in replacements for mpi4py's
methods (MPICH ignores ``reorder`` for distributed graphs, Open MPI's treematch keeps the old numbering):
locate the processes, gather the graph, race the portfolio (Hoefler & Snir, ICS'11, section 4.2 and
Figure 4), build the communicator so that rank ``k`` plays vertex ``k``; errors reach every rank as a
:class:`~libtopomap.CommError`.  The steps: docs/mpi.rst, "How the dist-graph calls reorder".
"""

from __future__ import annotations

import time

from mpi4py import MPI

from ..errors import ArgumentTypeError, MappingError
from ._report import TopomapDistgraphcomm, TopomapReport, attach_report, last_report, report
from .pipeline import DEFAULT_STRATEGIES, adjacent_lists, agree_options, general_lists, reorder_ranks
from .agreement import agreed, collective_call

__all__ = ["Create_dist_graph_adjacent", "Create_dist_graph", "topomap", "TopomapReport",
           "TopomapDistgraphcomm", "report", "last_report", "DEFAULT_STRATEGIES"]


def _build(comm, report, gathered, info):
    """Step 5: Split by new rank, then each process passes the lists of the logical vertex it now plays."""
    t = time.perf_counter()
    split = comm.Split(0, key=report.new_rank)
    try:
        with agreed(split, "building the communicator"):
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
    attach_report(dcomm, report)
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
        Where the processes are (see :func:`libtopomap.mpi.location.locate`); default: hostnames, or
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
    ChoiceError, ArgumentError, ArgumentTypeError
        On every rank, when every rank passed the same bad argument (a ``ValueError`` /
        ``TypeError``, as mpi4py raises; :mod:`libtopomap.validation`): an unknown strategy, objective or
        refinement, a rank out of range, a weight that does not fit an MPI ``int``, lists of different
        lengths, ``MPI.WEIGHTS_EMPTY`` with neighbours, a negative or non-integer ``seed``, a
        ``time_budget`` that is not finite and > 0...
    CommError
        On every rank, before any other collective, when only some ranks passed bad arguments, or
        the ranks passed different ``reorder``, ``topology`` (given or not), ``strategies``,
        ``objective``, ``seed``, ``time_budget``, ``iterations``, ``refine``, ``max_memory``,
        ``total_budget`` or ``routing``.
    CommError
        On every rank when any rank failed while mapping (bad topology, strategy error, inconsistent
        graph, host missing from the topology...), naming the rank(s) and cause.  An interruption on
        one rank (``KeyboardInterrupt``, ``SystemExit``: any ``BaseException``) is such a failure:
        every rank raises the same :class:`~libtopomap.CommError` naming the rank and the exception
        type, the interrupted rank included (its ``__cause__`` is the interruption); nobody hangs.

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
        return adjacent_lists(comm.Get_size(), sources, destinations, sourceweights, destweights)
    lists = agree_options(comm, check, what="checking the arguments of Create_dist_graph_adjacent",
                          reorder=reorder, topology=topology, **opts)
    if not reorder or topology is None:
        return comm.Create_dist_graph_adjacent(*lists, info=info, reorder=reorder)
    report, gathered = reorder_ranks(comm, topology, lists,
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

    args = agree_options(comm, lambda: general_lists(comm.Get_size(), sources, degrees, destinations, weights),
                         what="checking the arguments of Create_dist_graph", reorder=reorder, topology=topology,
                         **opts)
    if not reorder or topology is None:
        return comm.Create_dist_graph(*args, info=info, reorder=reorder)
    plain = comm.Create_dist_graph(*args, info=info, reorder=False)
    try:
        lists = collective_call(comm, _own_lists, plain, what="reading the neighbour lists")
    finally:
        plain.Free()
    report, gathered = reorder_ranks(comm, topology, lists, strategies=strategies, objective=objective,
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
    agree_options(distgraph_comm, check, what="checking the arguments of topomap", reorder=True,
                  topology=topology, **opts)
    lists = collective_call(distgraph_comm, _own_lists, distgraph_comm, what="reading the neighbour lists")
    report, _ = reorder_ranks(distgraph_comm, topology, lists, strategies=strategies, objective=objective,
                              seed=seed, time_budget=time_budget, iterations=iterations, refine=refine,
                              fake_names=fake_names, placement=placement, max_memory=max_memory,
                              total_budget=total_budget, routing=routing)
    attach_report(distgraph_comm, report)
    return report.new_rank
