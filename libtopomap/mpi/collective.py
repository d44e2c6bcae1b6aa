"""Reorder a communicator for a collective's schedule (Cui 2024, section 3.3, in parallel).

The same portfolio driver as the dist-graph calls (:mod:`libtopomap.portfolio`, raced over the ranks
by :func:`libtopomap.mpi.driver.race`): each candidate is a rank-placement optimizer with its own seed
for the collective's point-to-point schedule on the nodes the job already runs on; candidates are
scored by ``(objective, total hops)``, the current order (identity) competing too, and the
communicator is rebuilt with ``comm.Split(0, key=new_rank)``.
"""

from __future__ import annotations

import time
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

from ..loading import as_topology
from ..validation import check_bytes, check_choice, check_choices, check_count, check_seed
from ._report import attach_report
from .pipeline import check_agreement, topology_fingerprint
from .driver import race
from .auto import resolve as resolve_auto
from .location import locate
from .agreement import agree_arguments, collective_call

__all__ = ["reorder_for_collective", "DEFAULT_OPTIMIZERS", "CollectiveReport", "TopomapIntracomm"]

DEFAULT_OPTIMIZERS = ("anneal", "two-opt")
# Mixed into the candidates' seeds (the collective race has its own seed stream).
_SALT = 5
_UNSET = object()


@dataclass
class CollectiveReport:
    """What :func:`reorder_for_collective` did; the same on every rank except ``old_rank``, ``new_rank``.

    Attributes
    ----------
    collective, objective : str
    improved : bool
        Whether the new order is strictly better on ``(objective, total hops)``.
    winner_rank : int or None
        Rank whose candidate won; None when the current order was kept.
    optimizer : str
        The winning optimizer, ``"identity"`` when the current order was kept.
    before, after : dict
        ``{"hops", "contention", "step"}`` of the current and the new order.
    vertices_before, vertices_after : numpy.ndarray
        Vertex of each old rank, and of each new rank.
    new_rank_of : numpy.ndarray
        New rank of each old rank.
    old_rank, new_rank : int
    seed : int
    candidates : list of dict
        Per candidate that ran: ``index, rank, optimizer, seed, value, hops, seconds``.
    skipped : list of str
        Candidates not run and why (memory bound).
    plan : dict
        As :attr:`libtopomap.TopomapReport.plan`.
    seconds : float
    """

    collective: str
    objective: str
    improved: bool
    winner_rank: int | None
    optimizer: str
    before: dict
    after: dict
    vertices_before: np.ndarray
    vertices_after: np.ndarray
    new_rank_of: np.ndarray
    old_rank: int
    new_rank: int
    seed: int
    candidates: list
    skipped: list = field(default_factory=list)
    plan: dict = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self):
        """The dict that ``report=True`` returned before 0.3 (same keys, plus ``skipped`` and ``plan``)."""
        return {"collective": self.collective, "objective": self.objective, "improved": self.improved,
                "winner_rank": self.winner_rank, "optimizer": self.optimizer, "before": self.before,
                "after": self.after, "vertices_before": self.vertices_before, "vertices_after": self.vertices_after,
                "new_rank_of": self.new_rank_of, "old_rank": self.old_rank, "new_rank": self.new_rank,
                "seed": self.seed, "candidates": self.candidates, "skipped": self.skipped, "plan": self.plan,
                "seconds": self.seconds}


class TopomapIntracomm(MPI.Intracomm):
    """A real :class:`mpi4py.MPI.Intracomm` that also carries a :class:`CollectiveReport` as ``report``."""

    report: CollectiveReport


def _schedule_fingerprint(steps):
    """CRC-32 of a schedule (its steps' pairs), so that ranks can agree on it without sending it."""
    h = 0
    for step in steps:
        a = np.ascontiguousarray(step, dtype=np.int64)
        h = zlib.crc32(np.array(a.shape, dtype=np.int64).tobytes(), h)
        h = zlib.crc32(a.tobytes(), h)
    return h


def reorder_for_collective(comm, topology, collective="allreduce", *, objective="hops", optimizers=None,
                           iterations=200_000, seed=None, root=0, fake_names=None, placement=None,
                           max_memory=None, report=_UNSET):
    """A communicator whose rank order makes ``collective``'s messages travel few hops.

    Collective: every process of ``comm`` must call it with the same arguments.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    topology : Topology or path
        The machine (a path is read by every rank).
    collective : str or sequence of steps
        ``"bcast"``, ``"allreduce"``, ``"alltoall"``, ``"allgather"`` or a user schedule over
        ``comm.Get_size()`` ranks.
    objective : {"hops", "contention", "step"}
    optimizers : sequence of str, optional
        Portfolio: ``max(len(optimizers), R)`` candidates over the ``R`` mapping ranks, candidate
        ``k`` running ``optimizers[k % len]`` (default ``("anneal", "two-opt")``).
    iterations : int
        Swaps per candidate.
    seed : int, optional
        Base seed; candidate ``k`` derives its own.  Default: drawn on rank 0 and broadcast.
    root : int
        Bcast root (a rank of the *new* communicator).
    fake_names, placement
        How processes find their vertex (see :func:`~libtopomap.mpi.location.locate`).
    max_memory : int, optional
        Bytes per node for the searches running at once (see
        :func:`libtopomap.Create_dist_graph_adjacent`).
    report : bool, optional
        Deprecated: ``report=True`` returns ``(communicator, report.as_dict())`` as before 0.3, with a
        :class:`DeprecationWarning`; use the ``report`` attribute of the returned communicator.

    Returns
    -------
    TopomapIntracomm
        ``comm.Split(0, key=new_rank)``: new rank ``r`` runs on the node chosen for rank ``r``; its
        ``report`` attribute is a :class:`CollectiveReport`.

    Raises
    ------
    ChoiceError, ArgumentError, ArgumentTypeError
        On every rank, when every rank passed the same bad argument (an unknown collective, objective or
        optimizer; a bad ``seed``, ``iterations`` or ``max_memory``), checked before any other MPI call.
    CommError
        On every rank, when any rank fails otherwise (bad topology, a process not found in the
        topology, arguments that differ between ranks...), naming the failing rank(s).

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, section 3.3.2 (two-opt rank placement).
    T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for Large-scale Parallel
    Architectures", ICS'11, section 4.2 (parallel portfolio).
    """
    if report is not _UNSET:
        warnings.warn("reorder_for_collective(report=...) is deprecated and will be removed in the next release; "
                      "the returned communicator always carries .report", DeprecationWarning, stacklevel=2)
    t_start = time.perf_counter()
    rank, size = comm.Get_rank(), comm.Get_size()

    def check():  # the door (libtopomap.validation): the same error on every rank, before any other MPI call
        if isinstance(collective, str):
            check_choice("collective", collective)
        check_choice("collective-objective", objective)
        check_seed(seed)
        check_count(iterations, name="iterations")
        if max_memory is not None:
            check_bytes(max_memory, name="max_memory")
        return check_choices("collective-order", optimizers, default=DEFAULT_OPTIMIZERS)
    opts = agree_arguments(comm, check, what="checking the arguments of reorder_for_collective")
    topology, fake_names, placement = resolve_auto(comm, topology, fake_names, placement)

    def prepare():
        from ..collectives import schedule

        topo = as_topology(topology)
        steps = schedule(collective, size, root=root)
        return topo, steps, topology_fingerprint(topo), repr(
            (_schedule_fingerprint(steps), objective, opts, iterations, seed, root, max_memory)).encode()
    topo, steps, topo_print, options_print = collective_call(comm, prepare, what="preparing the collective placement")
    # Inputs that must be equal on every rank, agreed before they can send the ranks down different paths.
    check_agreement(comm, "topology", topo_print)
    check_agreement(comm, "options (collective, objective, optimizers, iterations, seed, root, max_memory)",
                    options_print)

    current = locate(comm, topo, fake_names=fake_names, placement=placement).astype(np.int64)
    check_agreement(comm, "process placement", current.tobytes())

    def make_problem():
        from ..portfolio import CollectiveProblem

        drawn = int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0]) \
            if seed is None and rank == 0 else None
        return CollectiveProblem(topo, current, steps, objective=objective, iterations=iterations), drawn
    problem, drawn = collective_call(comm, make_problem, what="preparing the collective placement")
    base = comm.bcast(drawn, root=0) if seed is None else int(seed)

    def make(n):
        from ..portfolio import make_candidates

        return make_candidates(opts, seed=base, count=n, salt=_SALT)
    result = race(comm, problem, make, max_memory=max_memory, what="collective placement")
    win = result.winner
    improved = not win.candidate.baseline

    def full_metrics():
        from ..collectives import evaluate_schedule

        perm = np.asarray(win.payload, dtype=np.int64) if improved else np.arange(size, dtype=np.int64)
        new_rank_of = np.empty(size, dtype=np.int64)
        new_rank_of[perm] = np.arange(size)
        return (perm, new_rank_of, evaluate_schedule(topo, steps, current),
                evaluate_schedule(topo, steps, current[perm]))
    perm, new_rank_of, before, after = collective_call(comm, full_metrics, what="evaluating the collective placement")
    newcomm = TopomapIntracomm(comm.Split(0, key=int(new_rank_of[rank])))
    rep = CollectiveReport(
        collective=collective if isinstance(collective, str) else "custom", objective=objective,
        improved=bool(improved), winner_rank=win.rank if improved else None,
        optimizer=win.label if improved else "identity", before=before, after=after,
        vertices_before=current, vertices_after=current[perm], new_rank_of=new_rank_of, old_rank=rank,
        new_rank=int(new_rank_of[rank]), seed=base,
        candidates=[{"index": o.candidate.index, "rank": o.rank, "optimizer": o.label, "seed": o.candidate.seed,
                     "value": o.key[0], "hops": o.key[1], "seconds": o.seconds}
                    for o in result.outcomes if not o.candidate.baseline],
        skipped=[s.reason for s in result.skipped], plan=result.plan, seconds=time.perf_counter() - t_start)
    newcomm.report = rep
    attach_report(newcomm, rep)
    if report is not _UNSET and report:
        return newcomm, rep.as_dict()
    return newcomm
