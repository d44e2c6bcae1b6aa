"""The point-to-point messages of SMPI's collectives, as its time-independent trace records the calls.

SMPI's trace writes one line per collective call and rank (counts, root, datatype numbers) and not
the messages of the algorithm SMPI runs for it.  :func:`collective_sends` gives the messages a rank
sends in one such call under the algorithm SimGrid 3.32 runs: its default selector
(``smpi/coll-selector:default``, ``src/smpi/colls/smpi_default_selector.cpp``) unless the run names
another with ``--cfg=smpi/<collective>:<algorithm>`` (:func:`algorithms_of`).  Per collective, the
default is:

==================  ===============================================================================
bcast               binomial tree from the root (``bcast__binomial_tree``, MPICH's order:
                    :func:`libtopomap.collectives.binomial_bcast`)
reduce              every rank sends its vector to the root (``ireduce``, linear)
allreduce           reduce to rank 0 (linear) then binomial bcast from rank 0
alltoall            Open MPI's decision (``alltoall__ompi``): Bruck's algorithm
                    (:func:`libtopomap.collectives.bruck_alltoall`, step ``k`` carrying the blocks
                    whose index has bit ``k``) for small blocks on 16 ranks or more, else one block
                    to every other rank (linear, pairwise and linear-sync send the same)
alltoallv           linear: ``sendcounts[j]`` to every rank ``j``
allgather(v)        linear: the rank's block to every other rank
gather(v)           linear: every rank's block to the root
scatter(v)          linear: the root's block for ``j`` to every ``j``
reducescatter       equal counts: reduce to rank 0 (linear) then scatterv from rank 0; unequal counts
                    run MPICH's algorithm, not modelled (counted in ``not_expanded``)
scan, exscan        linear: every rank's vector to every higher rank
barrier             0-byte messages: nothing
``i...`` variants   SMPI's non-blocking versions (``smpi_nbc_impl.cpp``), all linear: ``ibcast``
                    from the root to every rank, ``ialltoall`` a block to every rank,
                    ``iallreduce`` every vector to every other rank, ``ireducescatter`` block ``j``
                    to every rank ``j``
==================  ===============================================================================

Named algorithms modelled besides: ``bcast`` ``flattree``; ``reduce`` ``flat_tree`` and
``binomial`` (the binomial tree reversed); ``allreduce`` ``rdb`` and ``redbcast`` (recursive
doubling, :func:`libtopomap.collectives.recursive_doubling_allreduce`, or reduce + bcast, both of
the whole vector); ``alltoall`` ``bruck``, ``basic_linear``, ``pair``, ``ring``; ``allgather`` ``ring`` (SimGrid's
``allgather__ring`` sends the rank's block to ``rank + i`` at step ``i``: every other rank, unlike
MPICH's ring of :func:`libtopomap.collectives.ring_allgather`).  Any
other named algorithm or selector is refused (:class:`~libtopomap.errors.ArgumentError`) rather
than guessed.

The trace names no communicator (SimGrid 3.32's ``CollTIData`` has no field for it, and SMPI's own
replay takes every collective over ``MPI_COMM_WORLD``), so a collective is taken over all ranks, its
root a rank of ``MPI_COMM_WORLD``.  A vector collective whose count list is shorter than the world
ran on a smaller communicator whose ranks the trace does not give: it is left out and counted.  A
collective on a sub-communicator with fixed counts (the row and column ``MPI_Alltoall`` of a pencil
FFT) cannot be told from one on ``MPI_COMM_WORLD``: it is expanded over all ranks.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import ArgumentError

__all__ = ["COLLECTIVE_CALLS", "MODELLED", "collective_sends", "algorithms_of"]

#: The collective calls of SMPI's trace (lower case), non-blocking ``i`` variants included.
COLLECTIVE_CALLS = frozenset({
    "barrier", "bcast", "reduce", "allreduce", "alltoall", "alltoallv", "alltoallw", "gather", "gatherv",
    "scatter", "scatterv", "allgather", "allgatherv", "reducescatter", "scan", "exscan",
    "ibarrier", "ibcast", "ireduce", "iallreduce", "ialltoall", "ialltoallv", "igather", "igatherv", "iscatter",
    "iscatterv", "iallgather", "iallgatherv", "ireducescatter", "iscan", "iexscan"})

#: ``smpi/<collective>`` option -> the algorithm names modelled (``default`` is the default selector's).
MODELLED = {
    "bcast": ("default", "binomial_tree", "flattree"),
    "reduce": ("default", "flat_tree", "binomial"),
    "allreduce": ("default", "rdb", "redbcast"),
    "alltoall": ("default", "ompi", "bruck", "basic_linear", "pair", "ring"),
    "allgather": ("default", "ring"),
}


def algorithms_of(config):
    """``{collective: algorithm}`` of smpirun options such as ``--cfg=smpi/bcast:flattree``.

    Raises
    ------
    ArgumentError
        A collective selector other than ``default``, or an algorithm that is not modelled (see the
        module documentation): the traced graph would not be what SMPI ran.
    """
    out = {}
    for opt in config:
        opt = str(opt)
        if not opt.startswith("--cfg=smpi/") or ":" not in opt:
            continue
        key, value = opt[len("--cfg=smpi/"):].split(":", 1)
        if key == "coll-selector" and value != "default":
            raise ArgumentError(f"--cfg=smpi/coll-selector:{value}: only SMPI's default selector is modelled in the "
                                "traced graph; name the algorithms (--cfg=smpi/<collective>:<algorithm>) "
                                "or give --graph")
        if key in MODELLED:
            if value not in MODELLED[key]:
                raise ArgumentError(f"--cfg=smpi/{key}:{value}: this {key} algorithm is not modelled in the traced "
                                    f"graph; modelled: {', '.join(MODELLED[key])} (or give --graph)")
            out[key] = value
        elif (key in ("gather", "allgatherv", "alltoallv", "scatter", "reduce_scatter", "barrier")
              and value != "default"):
            raise ArgumentError(f"--cfg=smpi/{key}:{value}: only SMPI's default {key} is modelled in the traced graph")
    return out


# ---------------------------------------------------------------- the algorithms, per sending rank
@functools.lru_cache(maxsize=256)
def _binomial_children(p, root):
    """{rank: its children} of the binomial broadcast from ``root`` (the schedule of
    :func:`libtopomap.collectives.binomial_bcast`, whose messages SMPI's ``bcast__binomial_tree`` sends)."""
    from ..collectives.schedules import binomial_bcast

    pairs = np.concatenate(binomial_bcast(p, root)) if p > 1 else np.zeros((0, 2), np.int64)
    out = {}
    for s, d in pairs.tolist():
        out.setdefault(s, []).append(d)
    return out


@functools.lru_cache(maxsize=256)
def _binomial_parent(p, root):
    return {d: s for s, ds in _binomial_children(p, root).items() for d in ds}


@functools.lru_cache(maxsize=64)
def _recursive_doubling(p):
    """{rank: [peers it sends the vector to]} of :func:`libtopomap.collectives.recursive_doubling_allreduce`."""
    from ..collectives.schedules import recursive_doubling_allreduce

    out = {}
    for step in recursive_doubling_allreduce(p):
        for s, d in step.tolist():
            out.setdefault(s, []).append(d)
    return out


@functools.lru_cache(maxsize=64)
def _bruck_blocks(p):
    """(step offsets, blocks sent per step) of Bruck's alltoall on ``p`` ranks: step ``k`` of
    :func:`libtopomap.collectives.bruck_alltoall` sends to ``rank + 2**k`` the blocks ``1..p-1`` whose
    index has bit ``k`` (SimGrid's ``alltoall__bruck`` packs them into one message)."""
    from ..collectives.schedules import bruck_alltoall

    steps = bruck_alltoall(p)
    offsets = [int(s[0, 1] - s[0, 0]) % p for s in steps]
    blocks = np.arange(1, p)
    return offsets, [int(np.count_nonzero(blocks & (1 << k))) for k in range(len(steps))]


def _ompi_alltoall_is_bruck(p, nbytes):
    """Whether ``alltoall__ompi`` (SimGrid 3.32, after Open MPI's tuned decision) picks Bruck's algorithm
    for ``p`` ranks and ``nbytes`` per block; its other choices (linear, pairwise, linear-sync) send one
    block to every other rank."""
    if p < 16:
        return False
    if p < 32:
        return 4 <= nbytes < 512
    limit = 512 if p < 64 else 1024 if p < 512 else 512 if p < 2048 else 1024 if p < 4096 else 2048
    return nbytes < limit


def _others(p, me, nbytes):
    peers = [j for j in range(p) if j != me]
    return peers, [nbytes] * len(peers)


def _ints(fields):
    return [int(x) for x in fields]


def collective_sends(call, fields, me, nprocs, size_of, algorithms=None):
    """The messages rank ``me`` sends in one traced collective call.

    Parameters
    ----------
    call : str
        The trace's action, lower case (``bcast``, ``ialltoall``...).
    fields : sequence of str
        The line's fields after the action, as SMPI 3.32 writes them (``bcast COUNT ROOT TYPE``,
        ``alltoallv SEND_SIZE COUNTS... RECV_SIZE COUNTS... STYPE RTYPE``...).
    me, nprocs : int
        The rank and the number of ranks (the communicator is taken as ``MPI_COMM_WORLD``).
    size_of : callable
        SMPI datatype number (int, or None when the line has none) -> bytes per element.
    algorithms : dict, optional
        :func:`algorithms_of` of the run.

    Returns
    -------
    (list of int, list of int) or None
        Destination ranks and bytes; None when the call ran on a smaller communicator (a vector
        collective with fewer counts than ranks), which the trace does not name.

    Raises
    ------
    ValueError, IndexError
        Fields that do not parse (the caller names the file and line).
    """
    p = int(nprocs)
    f = list(fields)
    name, alg = call, algorithms or {}
    if call.startswith("i") and call[1:] in COLLECTIVE_CALLS:
        # SMPI's non-blocking collectives are all linear, whatever the blocking ones run
        name, alg = call[1:], {"bcast": "flattree", "alltoall": "basic_linear"}
        if name == "allreduce":  # every rank sends its vector to every other
            return _others(p, me, int(f[0]) * size_of(int(f[2]) if len(f) > 2 else None))
        if name == "reducescatter":  # every rank sends block j of its vector to rank j
            c = len(f) - 2
            if c != p:
                return None
            counts, b = _ints(f[:c]), size_of(int(f[-1]))
            dst = [j for j in range(p) if j != me and counts[j]]
            return dst, [counts[j] * b for j in dst]
    if name == "barrier" or p == 1:
        return [], []
    if name == "bcast":
        count, root = int(f[0]), int(f[1]) if len(f) > 1 else 0
        b = count * size_of(int(f[2]) if len(f) > 2 else None)
        if alg.get("bcast") == "flattree":
            return _others(p, me, b) if me == root else ([], [])
        kids = _binomial_children(p, root).get(me, [])
        return list(kids), [b] * len(kids)
    if name == "reduce":
        count, root = int(f[0]), int(f[2]) if len(f) > 2 else 0
        b = count * size_of(int(f[3]) if len(f) > 3 else None)
        if alg.get("reduce") == "binomial":
            parent = _binomial_parent(p, root).get(me)
            return ([parent], [b]) if parent is not None else ([], [])
        return ([root], [b]) if me != root else ([], [])
    if name == "allreduce":
        b = int(f[0]) * size_of(int(f[2]) if len(f) > 2 else None)
        if alg.get("allreduce") == "rdb":
            peers = _recursive_doubling(p).get(me, [])
            return list(peers), [b] * len(peers)
        dst = [0] if me != 0 else []
        kids = _binomial_children(p, 0).get(me, [])
        return dst + list(kids), [b] * (len(dst) + len(kids))
    if name in ("alltoall", "allgather"):
        b = int(f[0]) * size_of(int(f[2]) if len(f) > 2 else None)
        choice = alg.get(name, "default")
        bruck = choice == "bruck" or (choice in ("default", "ompi") and _ompi_alltoall_is_bruck(p, b))
        if name == "alltoall" and bruck:
            offsets, blocks = _bruck_blocks(p)
            return [(me + d) % p for d in offsets], [k * b for k in blocks]
        return _others(p, me, b)
    if name == "alltoallv":
        c = (len(f) - 4) // 2
        if c != p:
            return None
        counts = _ints(f[1:1 + c])
        b = size_of(int(f[-2]) if len(f) == 2 * c + 4 else None)
        dst = [j for j in range(p) if j != me and counts[j]]
        return dst, [counts[j] * b for j in dst]
    if name == "allgatherv":
        c = len(f) - 3
        if c != p:
            return None
        return _others(p, me, int(f[0]) * size_of(int(f[-2])))
    if name == "gather":
        root = int(f[2])
        return ([root], [int(f[0]) * size_of(int(f[3]))]) if me != root else ([], [])
    if name == "gatherv":
        c = len(f) - 4
        if c != p:
            return None
        root = int(f[1 + c])
        return ([root], [int(f[0]) * size_of(int(f[-2]))]) if me != root else ([], [])
    if name == "scatter":
        root = int(f[2])
        return _others(p, me, int(f[0]) * size_of(int(f[3]))) if me == root else ([], [])
    if name == "scatterv":
        c = len(f) - 4
        if c != p:
            return None
        root = int(f[1 + c])
        if me != root:
            return [], []
        counts, b = _ints(f[:c]), size_of(int(f[-2]))
        dst = [j for j in range(p) if j != me and counts[j]]
        return dst, [counts[j] * b for j in dst]
    if name == "reducescatter":
        c = len(f) - 2
        counts = _ints(f[:c])
        if c != p or len(set(counts)) != 1:
            return None
        b = size_of(int(f[-1]))
        if me != 0:
            return [0], [sum(counts) * b]
        return _others(p, me, counts[0] * b)
    if name in ("scan", "exscan"):
        b = int(f[0]) * size_of(int(f[2]) if len(f) > 2 else None)
        return list(range(me + 1, p)), [b] * (p - me - 1)
    return None
