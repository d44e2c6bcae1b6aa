"""Reorder a communicator for a collective's schedule (Cui 2024, section 3.3, in parallel).

Every rank searches a rank placement for the collective's point-to-point schedule on the nodes the
job already runs on, with its own optimizer and seed (a portfolio like LibTopoMap's, Hoefler & Snir
ICS'11 section 4.2); the best placement is chosen by ``MINLOC`` and broadcast, the current order
(identity) competing too, and the communicator is rebuilt with ``comm.Split(0, key=new_rank)``.
"""

from __future__ import annotations

import os
import time

import numpy as np

from ..collectives import OBJECTIVES, OPTIMIZERS, evaluate_schedule, optimize_ranks, schedule
from ..errors import MappingError
from .locate import locate
from .race import collective_call, select_best

__all__ = ["reorder_for_collective", "DEFAULT_OPTIMIZERS"]

DEFAULT_OPTIMIZERS = ("anneal", "two-opt")


def _rank_seed(base, rank):
    return int(np.random.SeedSequence([base, rank, 5]).generate_state(1, dtype=np.uint32)[0])


def reorder_for_collective(comm, topology, collective="allreduce", *, objective="hops", optimizers=None,
                           iterations=200_000, seed=None, root=0, fake_names=None, placement=None,
                           report=False):
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
        Portfolio; rank ``r`` runs ``optimizers[r % len]`` (default ``("anneal", "two-opt")``).
    iterations : int
        Swaps per rank.
    seed : int, optional
        Base seed; rank ``r`` derives its own.  Default: drawn on rank 0 and broadcast.
    root : int
        Bcast root (a rank of the *new* communicator).
    fake_names, placement
        How processes find their vertex (see :func:`~libtopomap.mpi.locate.locate`).
    report : bool
        Also return a dict with ``before``/``after`` objectives, the winner and per-rank candidates.

    Returns
    -------
    mpi4py.MPI.Intracomm or (mpi4py.MPI.Intracomm, dict)
        ``comm.Split(0, key=new_rank)``: new rank ``r`` runs on the node chosen for rank ``r``.

    Raises
    ------
    CommError
        On every rank, when any rank fails (bad topology, unknown collective/objective/optimizer, a
        process not found in the topology...), naming the failing rank(s).

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, section 3.3.2 (two-opt rank placement).
    T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for Large-scale Parallel
    Architectures", ICS'11, section 4.2 (parallel portfolio, best by MINLOC).
    """
    t_start = time.perf_counter()
    rank, size = comm.Get_rank(), comm.Get_size()

    def prepare():
        from ..formats import read as load

        topo = load(os.fspath(topology)) if isinstance(topology, (str, os.PathLike)) else topology
        opts = DEFAULT_OPTIMIZERS if optimizers is None else (
            (optimizers,) if isinstance(optimizers, str) else tuple(optimizers))
        if not opts:
            raise MappingError("optimizers is empty")
        bad = [o for o in opts if o not in OPTIMIZERS]
        if bad:
            raise MappingError(f"unknown optimizer {bad[0]!r}; expected some of {', '.join(OPTIMIZERS)}")
        if objective not in OBJECTIVES:
            raise MappingError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}")
        steps = schedule(collective, size, root=root)
        return topo, opts, steps
    topo, opts, steps = collective_call(comm, prepare, what="preparing the collective placement")

    current = locate(comm, topo, fake_names=fake_names, placement=placement).astype(np.int64)

    if seed is None:
        base = comm.bcast(int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0]), root=0)
    else:
        base = int(seed)
    my_opt = opts[rank % len(opts)]
    my_seed = _rank_seed(base, rank)

    def search():
        res = optimize_ranks(topo, current, steps, objective=objective, optimizer=my_opt, iterations=iterations,
                             seed=my_seed)
        hops = evaluate_schedule(topo, steps, current[res.permutation], paths=False)["hops"]
        return res, hops
    res, my_hops = collective_call(comm, search, what=f"collective placement (optimizer {my_opt!r})")

    # MINLOC over (objective, total hops, rank); the current order competes through cost_before.
    best_perm, winner, best_value = select_best(comm, res.cost_after, res.permutation,
                                                tiebreak=0.0 if objective == "hops" else my_hops)
    base_value = res.cost_before  # identical on every rank: same start, same objective
    improved = best_value < base_value
    if not improved:
        best_perm = np.arange(size, dtype=np.int64)
    new_rank_of = np.empty(size, dtype=np.int64)
    new_rank_of[np.asarray(best_perm, dtype=np.int64)] = np.arange(size)
    newcomm = comm.Split(0, key=int(new_rank_of[rank]))
    if not report:
        return newcomm
    infos = comm.allgather((my_opt, my_seed, res.cost_after, res.seconds))
    info = {
        "collective": collective if isinstance(collective, str) else "custom", "objective": objective,
        "improved": bool(improved), "winner_rank": int(winner) if improved else None,
        "optimizer": infos[winner][0] if improved else "identity",
        "before": evaluate_schedule(topo, steps, current),
        "after": evaluate_schedule(topo, steps, current[best_perm]),
        "vertices_before": current, "vertices_after": current[best_perm], "new_rank_of": new_rank_of,
        "old_rank": rank, "new_rank": int(new_rank_of[rank]), "seed": base,
        "candidates": [{"rank": r, "optimizer": o, "seed": s, "value": v, "seconds": sec}
                       for r, (o, s, v, sec) in enumerate(infos)],
        "seconds": time.perf_counter() - t_start,
    }
    return newcomm, info
