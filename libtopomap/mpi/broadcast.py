"""A topology-aware broadcast for mpi4py: Dorier et al.'s schedules run with point-to-point messages.

:func:`bcast` builds the schedule of :func:`~libtopomap.collectives.dragonfly_bcast` and runs it on a
duplicate of the communicator, cached with the plans as an MPI attribute.  How it runs and is cached:
docs/mpi.rst, "The topology-aware broadcast".
"""

from __future__ import annotations

import hashlib
import os
import weakref
import zlib
from collections import OrderedDict

import numpy as np
from mpi4py import MPI

from ..errors import CommError
from ..vocabulary import check_choice
from .location import FAKE_NAMES_ENV, locate
from .agreement import collective_call, describe_exception, raise_failures

__all__ = ["bcast"]

_TAG = 7

#: Plans kept per communicator (least recently used dropped first); a plan is a parent and a list of children.
_MAX_PLANS = 64

_keyval = None
_finalizing = False


class _State:
    """What :func:`bcast` keeps on a communicator: its duplicate and the plans by key."""

    __slots__ = ("dup", "plans", "built")

    def __init__(self, dup):
        self.dup = dup
        self.plans = OrderedDict()   # key -> (topology weakref or None, parent, children)
        self.built = 0               # plans built (not found in the cache), for tests


def _mark_finalizing(comm, keyval, value):
    """Delete callback of the ``MPI_COMM_SELF`` attribute: MPI deletes ``MPI_COMM_SELF``'s attributes first
    thing in ``MPI_Finalize`` (MPI-4.0 section 7.7.1), so from here on communicators are not freed."""
    global _finalizing
    _finalizing = True


def _delete_state(comm, keyval, state):
    """Delete callback of :func:`bcast`'s attribute: free the cached duplicate with its communicator.

    ``MPI_Comm_free`` of the user's communicator is collective, so every rank frees its duplicate here
    too.  During ``MPI_Finalize`` (``MPI_COMM_WORLD``'s attributes may be deleted there, after
    ``MPI_COMM_SELF``'s) the duplicate is only dropped: finalization releases it, and freeing a
    communicator while the library shuts down is not safe under every MPI.  Never raises (an error
    in an MPI callback is an MPI error)."""
    dup, state.dup = state.dup, MPI.COMM_NULL
    state.plans.clear()
    if not _finalizing and dup != MPI.COMM_NULL and not MPI.Is_finalized():
        dup.Free()


def _state(comm):
    """The :class:`_State` cached on ``comm`` (made on first use: ``comm.Dup()``, collective)."""
    global _keyval
    if _keyval is None:
        _keyval = MPI.Comm.Create_keyval(delete_fn=_delete_state)
        MPI.COMM_SELF.Set_attr(MPI.Comm.Create_keyval(delete_fn=_mark_finalizing), True)
    state = comm.Get_attr(_keyval)
    if state is None or state.dup == MPI.COMM_NULL:
        state = _State(comm.Dup())
        comm.Set_attr(_keyval, state)
    return state


def _is_buffer(x):
    """Buffer mode for numpy arrays and writable buffer objects (bytearray, array.array, writable memoryview)."""
    if isinstance(x, np.ndarray):
        return True
    try:
        return not memoryview(x).readonly
    except TypeError:
        return False


def _digest(x):
    """A short hash of ``x``'s contents (arrays by their bytes, anything else by ``repr``)."""
    h = hashlib.blake2b(digest_size=12)
    if isinstance(x, np.ndarray):
        h.update(f"{x.dtype.str}{x.shape}".encode())
        h.update(np.ascontiguousarray(x).tobytes())
    else:
        h.update(repr(x).encode())
    return h.hexdigest()


def _plain(x):
    """``x`` with numpy arrays and scalars as Python lists and scalars (so that equal contents digest alike)."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [v.item() if isinstance(v, np.generic) else v for v in x]
    return x


def _schedule_digest(steps):
    return _digest(b"".join(np.int64(len(a)).tobytes() + np.ascontiguousarray(a, np.int64).tobytes() for a in steps))


def _topology_key(topology):
    """``(key part, object to check by weak reference or None)`` of the topology argument."""
    if topology is None:
        return None, None
    if isinstance(topology, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(topology))
        st = os.stat(path) if os.path.isfile(path) else None
        return ("path", path, st and st.st_mtime_ns, st and st.st_size), None
    return ("object", id(topology)), topology


def _mine(steps, rank, root, size):
    """(parent or None, children in order) of ``rank`` in ``steps``; CommError unless a broadcast from ``root``."""
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


def _plan(comm, state, obj_or_buffer, root, algorithm, topology, fake_names, placement, schedule):
    """(root, parent or None, children in order, buffer mode) of this rank; collective (one ``allgather``
    when every rank finds its plan in ``state``), CommError on all ranks."""
    from ..collectives import check_schedule
    from ..collectives.schedules import check_root

    size, rank = comm.Get_size(), comm.Get_rank()

    def check_args():
        from ..errors import ArgumentError

        r = check_root(root, size)
        name = str(algorithm).lower()
        if schedule is None:
            check_choice("bcast-algorithm", name)
        if schedule is None and name != "tree" and topology is None:
            raise ArgumentError(f"algorithm {name!r} needs topology= (a dragonfly Topology or file)")
        mode = _is_buffer(obj_or_buffer)
        if isinstance(obj_or_buffer, np.ndarray) and not obj_or_buffer.flags.c_contiguous:
            raise ArgumentError("the broadcast buffer must be a C-contiguous array")
        if mode and rank != r and memoryview(obj_or_buffer).readonly:
            raise ArgumentError("the broadcast buffer of a receiving rank must be writable")
        nbytes = memoryview(obj_or_buffer).nbytes if mode else -1
        if schedule is not None:   # local work only: a schedule given is checked here, every call
            steps = check_schedule(schedule, size)
            key = ("schedule", r, _schedule_digest(steps))
            return r, key[0], mode, nbytes, key, (None,) + _mine(steps, rank, r, size)
        tkey, tobj = _topology_key(topology if name != "tree" else None)
        key = (name, r, tkey, _digest(_plain(placement)), _digest(_plain(fake_names)),
               os.environ.get(FAKE_NAMES_ENV) if fake_names is None and placement is None else None)
        hit = state.plans.get(key)
        if hit is not None and hit[0] is not None and hit[0]() is not tobj:   # another object at a reused id
            hit = None
        return r, name, mode, nbytes, key, hit

    local_exc = None
    try:
        root, name, mode, nbytes, key, hit = check_args()
        message = None
    except BaseException as e:  # noqa: BLE001 - every failure (even KeyboardInterrupt) must reach the others
        local_exc, message = e, describe_exception(e)
        name = mode = nbytes = key = hit = None
    # what must be equal on every rank: a schedule's digest, or the placement, fake names and topology path
    same = None if key is None else key[2] if name == "schedule" else \
        (key[3], key[4], key[5], key[2] if key[2] is not None and key[2][0] == "path" else None)
    view = (root, name, mode, nbytes, same)
    # One Allreduce(MIN) of (crc, -crc, every rank has its plan, no rank failed); the ranks exchange their
    # views (an allgather) only when a rank failed or two views differ, to say which.
    crc = zlib.crc32(repr(view).encode())
    agreed = np.array([crc, -crc, hit is not None, message is None], np.int64)
    comm.Allreduce(MPI.IN_PLACE, agreed, op=MPI.MIN)
    if agreed[0] == -agreed[1] and agreed[3]:
        return _planned(comm, state, root, name, mode, key, hit, bool(agreed[2]), topology, fake_names, placement)
    views = comm.allgather((message, view))
    failures = [(r, v[0]) for r, v in enumerate(views) if v[0] is not None]
    if failures:
        raise_failures("checking the broadcast arguments", failures, size, local_exc)
    if len({v[1] for v in views}) != 1:
        shown = ", ".join(f"rank {r}: root {v[1][0]}, {v[1][1]}, " + (f"buffer of {v[1][3]} bytes" if v[1][2]
                                                                       else "object")
                          for r, v in enumerate(views[:8])) + (" ..." if size > 8 else "")
        raise CommError(f"the broadcast arguments differ between ranks ({shown}); every rank must pass the same "
                        "root, algorithm, placement or fake names and topology file (or schedule), and buffers of "
                        "the same size (or objects)")
    raise CommError("the broadcast arguments differ between ranks in a way this check cannot show (a hash "
                    "collision of two views?)")


def _planned(comm, state, root, name, mode, key, hit, every_hit, topology, fake_names, placement):
    """:func:`_plan` once the ranks agree on the arguments: the cached plan when every rank has it (or a
    schedule was given), else a plan built together and cached."""
    size, rank = comm.Get_size(), comm.Get_rank()
    if name == "schedule" or every_hit:
        if key in state.plans:
            state.plans.move_to_end(key)
        return root, hit[1], hit[2], mode
    if name == "tree":
        from ..collectives import binomial_bcast

        steps = binomial_bcast(size, root)
        tref = None
    else:
        from ..collectives import dragonfly_bcast

        from ..loading import as_topology

        topo = collective_call(comm, as_topology, topology, what="reading the broadcast topology")
        vertices = locate(comm, topo, fake_names=fake_names, placement=placement)
        steps = collective_call(comm, dragonfly_bcast, topo, vertices, name, root=root,
                                what="building the broadcast schedule")
        tref = weakref.ref(topology) if key[2][0] == "object" else None
    parent, children = collective_call(comm, _mine, steps, rank, root, size, what="checking the broadcast schedule")
    state.built += 1
    state.plans[key] = (tref, parent, children)
    while len(state.plans) > _MAX_PLANS:
        state.plans.popitem(last=False)
    return root, parent, children, mode


def bcast(comm, obj_or_buffer, root=0, *, algorithm="forest", topology=None, fake_names=None, placement=None,
          schedule=None):
    """Broadcast ``obj_or_buffer`` from ``root`` along one of Dorier et al.'s dragonfly schedules.

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
    The messages travel on a duplicate of ``comm``, so they never match the application's own
    receives.  The duplicate is made by the first call on ``comm`` and kept on it as an MPI attribute
    (freed when ``comm`` is freed), with each rank's plan by ``(algorithm, root, topology,
    placement or fake names)``: building a plan costs a few collectives and ``O(size)`` work per rank,
    a repeated call one small ``allgather`` (the ranks check that they pass the same root, algorithm
    and buffer size, and that all of them have the plan) besides its messages.  A topology is known by
    its object (or, for a file, its path, size and modification time), placements and fake names by
    their contents; a fake-names file given by path or ``LIBTOPOMAP_FAKE_NAMES`` is not read again
    once a plan is cached.  With ``schedule=`` the schedule is checked locally on every call (no
    collective besides the ``allgather``, which also checks that every rank passed the same one).

    References
    ----------
    M. Dorier et al., "Evaluation of Topology-Aware Broadcast Algorithms for Dragonfly Networks",
    IEEE Cluster 2016, section III.

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
    state = _state(comm)
    root, parent, children, mode = _plan(comm, state, obj_or_buffer, root, algorithm, topology, fake_names,
                                         placement, schedule)
    dup = state.dup
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
