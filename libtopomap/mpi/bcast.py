"""A topology-aware broadcast for mpi4py: seed 002's schedules run with point-to-point messages.

:func:`bcast` locates the ranks on a dragonfly (hostnames, fake names or an explicit placement, as
:func:`~libtopomap.mpi.locate`), builds the schedule of
:func:`~libtopomap.collectives.dragonfly_bcast` (TREE, LLF, GLF or FOREST, the same on every rank)
and runs it on a duplicate of the communicator: every rank but the root receives once from its
parent, then sends to its children in schedule order (seed 002's "sends serially in tree order").
"""

from __future__ import annotations

import os

import numpy as np
from mpi4py import MPI

from ..errors import CommError
from .locate import locate
from .race import collective_call

__all__ = ["bcast"]

_TAG = 7


def _is_buffer(x):
    """Buffer mode for numpy arrays and writable buffer objects (bytearray, array.array, writable memoryview)."""
    if isinstance(x, np.ndarray):
        return True
    try:
        return not memoryview(x).readonly
    except TypeError:
        return False


def _plan(comm, obj_or_buffer, root, algorithm, topology, fake_names, placement, schedule):
    """(parent or None, children in order, buffer mode) of this rank; collective, CommError on all ranks."""
    from ..collectives import binomial_bcast, check_schedule, dragonfly_bcast
    from ..collectives.schedules import _check_root
    from ..vocabulary import BCAST_ALGORITHMS

    size, rank = comm.Get_size(), comm.Get_rank()

    def check_args():
        from ..errors import ArgumentError

        r = _check_root(root, size)
        name = str(algorithm).lower()
        if schedule is None and name not in BCAST_ALGORITHMS:
            raise ArgumentError(f"unknown broadcast algorithm {algorithm!r}; expected one of "
                                f"{', '.join(BCAST_ALGORITHMS)}")
        if schedule is None and name != "tree" and topology is None:
            raise ArgumentError(f"algorithm {name!r} needs topology= (a dragonfly Topology or file)")
        topo = topology
        if isinstance(topo, (str, os.PathLike)):
            from ..formats import read

            topo = read(os.fspath(topo))
        mode = _is_buffer(obj_or_buffer)
        if isinstance(obj_or_buffer, np.ndarray) and not obj_or_buffer.flags.c_contiguous:
            raise ArgumentError("the broadcast buffer must be a C-contiguous array")
        if mode and rank != r and memoryview(obj_or_buffer).readonly:
            raise ArgumentError("the broadcast buffer of a receiving rank must be writable")
        return r, name, topo, mode, (memoryview(obj_or_buffer).nbytes if mode else -1)

    root, name, topo, mode, nbytes = collective_call(comm, check_args, what="checking the broadcast arguments")
    views = comm.allgather((root, name if schedule is None else "schedule", mode, nbytes))
    if len(set(views)) != 1:
        shown = ", ".join(f"rank {r}: root {v[0]}, {v[1]}, " + (f"buffer of {v[3]} bytes" if v[2] else "object")
                          for r, v in enumerate(views[:8])) + (" ..." if size > 8 else "")
        raise CommError(f"the broadcast arguments differ between ranks ({shown}); every rank must pass the same "
                        "root and algorithm, and buffers of the same size (or objects)")
    if schedule is not None:
        steps = collective_call(comm, check_schedule, schedule, size, what="checking the broadcast schedule")
    elif name == "tree":
        steps = binomial_bcast(size, root)
    else:
        vertices = locate(comm, topo, fake_names=fake_names, placement=placement)
        steps = collective_call(comm, dragonfly_bcast, topo, vertices, name, root=root,
                                what="building the broadcast schedule")

    def mine():
        pairs = np.concatenate([np.asarray(s, np.int64).reshape(-1, 2) for s in steps]) if steps else \
            np.zeros((0, 2), np.int64)
        got = np.bincount(pairs[:, 1], minlength=size)
        want = np.ones(size, np.int64)
        want[root] = 0
        if not np.array_equal(got, want):
            bad = int(np.flatnonzero(got != want)[0])
            raise CommError(f"the schedule is not a broadcast from rank {root}: rank {bad} receives {got[bad]} "
                            f"time(s)")
        parent = pairs[pairs[:, 1] == rank, 0]
        return (int(parent[0]) if parent.size else None), pairs[pairs[:, 0] == rank, 1].tolist()

    parent, children = collective_call(comm, mine, what="checking the broadcast schedule")
    return root, parent, children, mode


def bcast(comm, obj_or_buffer, root=0, *, algorithm="forest", topology=None, fake_names=None, placement=None,
          schedule=None):
    """Broadcast ``obj_or_buffer`` from ``root`` along one of seed 002's dragonfly schedules.

    Collective: every rank of ``comm`` calls it with the same ``root``, ``algorithm`` and topology.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    obj_or_buffer : numpy.ndarray, writable buffer, or any picklable object
        A numpy array or writable buffer (``bytearray``, ``array.array``...) of the same size on every
        rank is filled in place, like ``comm.Bcast``; anything else is pickled, like ``comm.bcast``
        (non-root values are ignored).
    root : int
        Rank holding the data.
    algorithm : {"forest", "llf", "glf", "tree"}
        See :mod:`libtopomap.collectives.dorier`; ``"tree"`` (MPICH's binomial tree) needs no topology.
    topology : Topology or path, optional
        The dragonfly the ranks run on (a path is read by every rank).
    fake_names, placement : optional
        Where the ranks are, as for :func:`~libtopomap.mpi.locate` (default: processor names, or the
        file named by ``LIBTOPOMAP_FAKE_NAMES``).
    schedule : list of (m, 2) arrays, optional
        A precomputed schedule (e.g. :func:`~libtopomap.collectives.dragonfly_bcast` built once for
        many broadcasts); then ``algorithm``, ``topology`` and the location are not used.

    Returns
    -------
    numpy.ndarray, buffer or object
        The buffer (filled in place) or the root's object, on every rank.

    Raises
    ------
    CommError
        On every rank when any rank fails before the messages start: bad root or algorithm, a
        topology that is not a dragonfly, a rank not found in it, buffers of different sizes or a
        buffer on some ranks and an object on others, a schedule that is not a broadcast from
        ``root``.

    Notes
    -----
    The messages travel on a duplicate of ``comm`` (``comm.Dup()``, freed on return), so they never
    match the application's own receives.  Building the schedule costs a few collectives and
    ``O(size)`` work per rank; pass ``schedule=`` to repeat a broadcast without it.

    References
    ----------
    M. Dorier et al., "Evaluation of Topology-Aware Broadcast Algorithms for Dragonfly Networks",
    IEEE Cluster 2016, section III (seed 002).

    Examples
    --------
    Under ``mpiexec -n 8`` with the ranks placed on a small dragonfly::

        import numpy as np, libtopomap as ltm
        from mpi4py import MPI
        t = ltm.dragonfly(9, 4, 2, 2)
        buf = np.arange(4.0) if MPI.COMM_WORLD.rank == 0 else np.empty(4)
        ltm.bcast(MPI.COMM_WORLD, buf, root=0, algorithm="forest", topology=t,
                  placement=[0, 9, 17, 26, 35, 44, 53, 62])
    """
    root, parent, children, mode = _plan(comm, obj_or_buffer, root, algorithm, topology, fake_names, placement,
                                         schedule)
    dup = comm.Dup()
    try:
        if mode:
            buf = obj_or_buffer
            if parent is not None:
                dup.Recv(buf, source=parent, tag=_TAG)
            for c in children:
                dup.Send(buf, dest=c, tag=_TAG)
            return obj_or_buffer
        obj = obj_or_buffer
        if parent is not None:
            obj = dup.recv(source=parent, tag=_TAG)
        for c in children:
            dup.send(obj, dest=c, tag=_TAG)
        return obj
    finally:
        dup.Free()
