"""Cartesian communicators that really reorder ranks onto the physical network.

No MPI implementation maps ``MPI_Cart_create(..., reorder=1)`` onto the network (MPICH's
``MPIR_Cart_map`` keeps the ranks; Open MPI's treematch needs a distributed graph).
:func:`Create_cart` is a drop-in replacement for mpi4py's ``comm.Create_cart`` that, given a
topology, maps the Cartesian stencil (:func:`libtopomap.cartesian.cart_neighbors`: face
neighbours, wrap-around where periodic, per-dimension weights) with the portfolio of the
distributed-graph calls (:func:`libtopomap.mpi.pipeline.reorder_ranks`: locate, gather, race,
select), then builds ``comm.Split(color, key=new_rank).Create_cart(dims, periods, reorder=False)``.
The result is the plain :class:`mpi4py.MPI.Cartcomm`: new rank ``k`` holds the coordinates of
Cartesian rank ``k`` and runs where the mapping put that rank.
"""

from __future__ import annotations

import math
import time

import numpy as np
from mpi4py import MPI

from ..cartesian import cart_neighbors, check_cart_args
from ..loading import as_topology
from .auto import resolve as resolve_auto
from ._report import attach_report
from .pipeline import agree_options, check_agreement, reorder_ranks
from .location import locate
from .agreement import agree_arguments, collective_call

__all__ = ["Create_cart"]


def check_everywhere(comm, fn, *args, what):
    """Run the local argument check ``fn(*args)`` on every rank and agree on the outcome
    (:func:`libtopomap.mpi.agreement.agree_arguments` without options)."""
    return agree_arguments(comm, fn, *args, what=what)


def Create_cart(comm, dims, periods=None, reorder=True, *, topology=None, weights=None, strategies=None,
                objective="congestion", seed=None, time_budget=None, iterations=None, refine=None,
                fake_names=None, placement=None, max_memory=None, total_budget=None):
    """``comm.Create_cart`` that really reorders ranks onto ``topology``.

    A one-line change in an mpi4py stencil code: replace ``comm.Create_cart(dims, periods,
    reorder=True)`` by ``ltm.Create_cart(comm, dims, periods, topology=topo)``.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        Collective over all its processes.
    dims : sequence of int
        Processes per dimension (e.g. from :func:`libtopomap.Compute_dims`); their product may be
        smaller than the communicator, the processes left over get ``MPI.COMM_NULL``.
    periods : sequence of bool or bool, optional
        Wrap-around per dimension (default none).
    reorder : bool
        With ``False``, or without a topology, or when every process runs on one host, this is
        exactly ``comm.Create_cart(dims, periods, reorder)``.
    topology : Topology or path, optional
        The physical network (a path is loaded on every rank).
    weights : sequence of int, optional
        Message volume per dimension (default 1 each), e.g. the halo sizes of an anisotropic grid.
    strategies, objective, seed, time_budget, iterations, refine, fake_names, placement, max_memory, total_budget
        As for :func:`libtopomap.Create_dist_graph_adjacent` (checked and agreed between ranks by the same
        code): with ``total_budget``, constructions estimated not to fit are skipped with the reason in
        the report, and a budget too small for any of them keeps the current placement.

    Returns
    -------
    mpi4py.MPI.Cartcomm
        The plain mpi4py type: ``Get_coords``, ``Get_cart_rank``, ``Shift``, ``Sub`` behave as
        mpi4py's; rank ``k`` has the coordinates of Cartesian rank ``k`` (row-major) and sits on
        the vertex the mapping chose for it.  :func:`libtopomap.mpi.last_report` returns the
        :class:`~libtopomap.mpi.TopomapReport` of a reordered one.  ``MPI.COMM_NULL`` on the
        processes beyond ``prod(dims)``.

    Raises
    ------
    ArgumentError, ArgumentTypeError
        On every rank, when every rank passed the same bad ``dims``, ``periods`` or ``weights``
        (a size < 1, more grid points than processes, lists of different lengths...).
    CommError
        On every rank when the ranks passed different arguments (``total_budget`` included), or any rank
        failed while mapping
        (bad topology, a host missing from it...), naming the rank(s) and cause.

    Notes
    -----
    Old rank ``r`` declares the neighbour lists of Cartesian rank ``r``; the portfolio of
    :func:`libtopomap.Create_dist_graph_adjacent` maps that graph (the current placement always
    competes and wins ties, so the result is never worse on the objective); then
    ``Split(0, key=new_rank)`` and ``Create_cart(dims, periods, reorder=False)``.

    References
    ----------
    T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for Large-scale Parallel
    Architectures", ICS'11, section 4.2 and Figure 4 (the parallel portfolio).

    Examples
    --------
    >>> from mpi4py import MPI
    >>> import libtopomap as ltm
    >>> c = ltm.Create_cart(MPI.COMM_SELF, [1], [True], topology=ltm.torus("2"), placement=[0])
    >>> c.Get_coords(0), type(c) is MPI.Cartcomm
    ([0], True)
    """
    t_start = time.perf_counter()
    rank, size = comm.Get_rank(), comm.Get_size()
    opts = dict(strategies=strategies, objective=objective, seed=seed, time_budget=time_budget,
                iterations=iterations, refine=refine, max_memory=max_memory, total_budget=total_budget)
    # as in Create_dist_graph: check and agree first (reorder and the options included), so that no rank
    # enters MPI's Create_cart while another waits in the race
    d, p, w = agree_options(comm, lambda: check_cart_args(size, dims, periods, weights),
                            what="checking the Cartesian arguments", reorder=reorder, topology=topology, **opts)
    if not reorder or topology is None:
        return comm.Create_cart(dims, periods, reorder=reorder)
    check_agreement(comm, "options dims, periods and weights", repr((d, p, w)).encode())
    if not d:  # a 0-dimensional grid: nothing to map
        return comm.Create_cart(d, p, reorder=False)

    topology, fake_names, placement = resolve_auto(comm, topology, fake_names, placement)

    topo = collective_call(comm, as_topology, topology, what="preparing the topology")
    current = locate(comm, topo, fake_names=fake_names, placement=placement).astype(np.int64)
    if np.unique(current).size == 1:  # one host: every placement is the same
        return comm.Create_cart(d, p, reorder=False)

    n = math.prod(d)
    nbrs, wts = collective_call(comm, lambda: cart_neighbors(rank, d, p, w) if rank < n else ([], []),
                                what="building the Cartesian stencil")
    ws = wts if nbrs else MPI.WEIGHTS_EMPTY
    report, _ = reorder_ranks(comm, topo, (nbrs, nbrs, ws, ws), fake_names=None, placement=current.tolist(), **opts)
    t = time.perf_counter()
    split = comm.Split(0 if report.new_rank < n else MPI.UNDEFINED, key=report.new_rank)
    if split == MPI.COMM_NULL:
        cart = MPI.Cartcomm()
    else:
        try:
            cart = split.Create_cart(d, p, reorder=False)
        finally:
            split.Free()
    report.timings["build"] = time.perf_counter() - t
    report.timings["total"] = time.perf_counter() - t_start
    if cart != MPI.COMM_NULL:
        attach_report(cart, report)
    return cart
