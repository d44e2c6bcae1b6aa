"""Collective-aware rank placement (Cui 2024): schedules, objectives, allocations, optimizers.

The point-to-point messages of binomial-tree Bcast, recursive-doubling Allreduce and Bruck Alltoall
follow fixed rank-to-rank patterns, so which rank runs on which allocated node decides how many hops
they travel.  :func:`collective_placement` allocates (or takes) the job's nodes, starts from the
ascending-order placement and improves it with two-opt or a stronger optimizer.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import ArgumentTypeError, MappingError
from ..mapping import Mapping
from .allocation import ALLOCATIONS, allocate
from .objectives import OBJECTIVES, contention, evaluate_schedule, step_model, total_hops
from .rank_placement import OPTIMIZERS, RankSearch, ascending_order, optimize_ranks
from .dorier import (BCAST_ALGORITHMS, bcast_links, bcast_makespan, dragonfly_bcast, dragonfly_link_use,
                     evaluate_bcast)
from .dragonfly import Dragonfly, dragonfly_queries
from .multicast import MulticastTree, cco_order, enclosing_subcube, hybrid_tree, hypercube_tree, ldr_tree
from .schedules import (COLLECTIVES, binomial_bcast, bruck_alltoall, check_schedule, recursive_doubling_allreduce,
                        ring_allgather, schedule, schedule_graph)

__all__ = ["COLLECTIVES", "OBJECTIVES", "OPTIMIZERS", "ALLOCATIONS", "CollectivePlacement", "collective_placement",
           "schedule", "schedule_graph", "check_schedule", "binomial_bcast", "recursive_doubling_allreduce",
           "bruck_alltoall", "ring_allgather", "allocate", "total_hops", "contention", "step_model",
           "evaluate_schedule", "optimize_ranks", "ascending_order", "RankSearch", "BCAST_ALGORITHMS",
           "Dragonfly", "dragonfly_queries", "dragonfly_bcast", "bcast_links", "bcast_makespan", "evaluate_bcast",
           "dragonfly_link_use", "MulticastTree", "enclosing_subcube", "hypercube_tree", "ldr_tree", "hybrid_tree",
           "cco_order"]


@dataclass
class CollectivePlacement:
    """Result of :func:`collective_placement`.

    Attributes
    ----------
    vertices : numpy.ndarray of int64
        ``vertices[r]`` is the topology vertex that runs rank ``r`` (the optimized placement).
    nodes : numpy.ndarray of int64
        The allocated nodes in allocation order (rank ``i`` on ``nodes[i]`` is the ascending order).
    permutation : numpy.ndarray of int64
        ``vertices = nodes[permutation]``.
    before, after : dict
        ``{"hops", "contention", "step"}`` for the ascending order and for the result (path-based
        values are ``None`` when ``evaluate_paths`` was false).
    """

    topology: object = field(repr=False)
    collective: str
    objective: str
    optimizer: str
    nodes: np.ndarray = field(repr=False)
    permutation: np.ndarray = field(repr=False)
    vertices: np.ndarray = field(repr=False)
    before: dict
    after: dict
    iterations: int
    accepted: int
    seconds: float
    seed: object = None

    @property
    def order(self):
        """Alias of :attr:`vertices`: the rank order as topology vertices."""
        return self.vertices

    @property
    def mapping(self):
        """The result as a :class:`~libtopomap.Mapping`."""
        return Mapping(self.topology, self.vertices, strategy=f"collective-{self.optimizer}")

    def as_dict(self):
        """JSON-ready summary (keys ``hops_before, hops_after, contention_before, ...``)."""
        out = {"collective": self.collective, "objective": self.objective, "optimizer": self.optimizer,
               "procs": int(self.vertices.size)}
        for k in ("hops", "contention", "step"):
            out[f"{k}_before"] = self.before[k]
            out[f"{k}_after"] = self.after[k]
        out.update(seconds=self.seconds, iterations=self.iterations, accepted=self.accepted)
        return out


def _allocation_argument(allocation, search):
    """``allocation``, or the value of its deprecated keyword name ``nodes=`` (taken out of ``search``)."""
    if "nodes" in search:
        warnings.warn("collective_placement(nodes=...) is deprecated; use allocation=", DeprecationWarning,
                      stacklevel=3)
        if allocation is not None:
            raise ArgumentTypeError("collective_placement() got both allocation and nodes (its old name)")
        allocation = search.pop("nodes")
    if allocation is None:
        raise ArgumentTypeError("collective_placement() needs an allocation: host vertices or a method of "
                                + ", ".join(ALLOCATIONS))
    return allocation


def collective_placement(topology, allocation=None, collective="allreduce", *, objective="hops", optimizer="two-opt",
                         iterations=200_000, seed=None, root=0, nprocs=None, initial=None, evaluate_paths=True,
                         **search):
    """Place the ranks of a collective on a job's hosts so its messages travel few hops.

    Parameters
    ----------
    topology : Topology
    allocation : array_like or str
        The job's hosts in allocation order: vertex indices or names (a vertex may repeat up to its
        slots); or an allocation method of :data:`ALLOCATIONS` (``"ascending"``, ``"random"``,
        ``"tree"``, ``"ring"``, ``"circulant"``; then ``nprocs`` hosts are allocated with ``seed``).
        The keyword ``nodes=`` is its deprecated name.
    collective : str or sequence of steps
        ``"bcast"``, ``"allreduce"``, ``"alltoall"``, ``"allgather"`` or a user schedule.
    objective : {"hops", "contention", "step"}
    optimizer : {"none", "two-opt", "greedy", "anneal"}
    iterations : int
        Swaps tried by two-opt / annealing.
    seed : int, optional
    root : int
        Bcast root.
    nprocs : int, optional
        Number of processes when ``nodes`` is an allocation method.
    initial : array_like, optional
        Starting permutation (default ascending order).
    evaluate_paths : bool
        Also report contention and step model (routes every message; ``False`` saves time).
    **search
        ``guide``, ``temperatures`` for annealing (see :func:`optimize_ranks`).

    Returns
    -------
    CollectivePlacement

    Raises
    ------
    MappingError
        Unknown allocation method, objective or optimizer, invalid hosts, or too few slots.
    ArgumentTypeError
        No allocation, or both ``allocation`` and ``nodes=``.
    CommGraphError
        Unknown collective or an invalid user schedule.

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, sections 3.2-3.3 and 4.4.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t = ltm.circulant(64)
    >>> r = ltm.collective_placement(t, "circulant", "allreduce", nprocs=16, optimizer="none", seed=0)
    >>> r.after["hops"]  # 16 * log2(16): every message one hop (Table 4.1)
    64
    """
    nodes = _allocation_argument(allocation, search)
    if isinstance(nodes, str):
        if nprocs is None:
            raise MappingError(f"allocation {nodes!r} needs nprocs")
        nodes = allocate(topology, nprocs, nodes, seed=seed)
    else:
        raw = list(nodes) if not hasattr(nodes, "__array__") else np.asarray(nodes).tolist()
        nodes = np.array([topology.index(x) if isinstance(x, str) else x for x in raw], dtype=np.int64)
        if nodes.ndim != 1 or nodes.size == 0:
            raise MappingError("nodes must be a non-empty list of vertices")
        Mapping(topology, nodes)  # slots and range check
        if nprocs is not None and int(nprocs) != nodes.size:
            raise MappingError(f"{nodes.size} nodes given for nprocs = {nprocs}")
    P = nodes.size
    name = collective if isinstance(collective, str) else "custom"
    steps = schedule(collective, P, root=root)
    res = optimize_ranks(topology, nodes, steps, objective=objective, optimizer=optimizer, iterations=iterations,
                         seed=seed, initial=initial, **search)
    vertices = nodes[res.permutation]
    start = nodes if initial is None else nodes[np.asarray(initial, dtype=np.int64)]
    before = evaluate_schedule(topology, steps, start, paths=evaluate_paths)
    after = evaluate_schedule(topology, steps, vertices, paths=evaluate_paths)
    return CollectivePlacement(topology, name, objective, optimizer, nodes, res.permutation, vertices, before, after,
                               res.iterations, res.accepted, res.seconds, seed)
