"""Point-to-point schedules of collective algorithms, as data.

A *schedule* is a list of steps; step ``t`` is an ``int64`` array of shape ``(m, 2)`` whose rows are
the ``(source rank, destination rank)`` messages sent in that step.  The orders follow MPICH's
implementations, so a benchmark that replays a schedule with ``Sendrecv`` reproduces what
``MPI_Bcast``/``MPI_Allreduce``/``MPI_Alltoall``/``MPI_Allgather`` send with those algorithms.
"""

from __future__ import annotations

import numpy as np

from .._limits import check_edge_count
from ..commgraph import CommGraph
from ..errors import CommGraphError
from ..vocabulary import COLLECTIVES, check_choice

__all__ = ["COLLECTIVES", "schedule", "binomial_bcast", "recursive_doubling_allreduce", "bruck_alltoall",
           "ring_allgather", "check_schedule", "check_root", "schedule_graph", "n_messages"]


def _steps(pairs_per_step):
    return [np.asarray(p, dtype=np.int64).reshape(-1, 2) for p in pairs_per_step]


def binomial_bcast(nprocs, root=0):
    """Binomial-tree broadcast, MPICH order (``MPIR_Bcast_intra_binomial``).

    With relative ranks ``r = (rank - root) mod P`` and ``K = ceil(log2 P)`` steps, step ``t`` uses
    ``mask = 2**(K-1-t)``: every ``r`` that is a multiple of ``2 * mask`` sends to ``r + mask`` when
    ``r + mask < P``.  ``P - 1`` messages in all, each non-root rank receives exactly once.

    Examples
    --------
    >>> [s.tolist() for s in binomial_bcast(8)]
    [[[0, 4]], [[0, 2], [4, 6]], [[0, 1], [2, 3], [4, 5], [6, 7]]]
    """
    p = _check_nprocs(nprocs)
    root = check_root(root, p)
    steps = []
    mask = 1
    while mask < p:
        mask <<= 1
    mask >>= 1
    while mask >= 1:
        rel = np.arange(0, p, 2 * mask, dtype=np.int64)
        rel = rel[rel + mask < p]
        steps.append(np.stack([(rel + root) % p, (rel + mask + root) % p], 1))
        mask >>= 1
    return steps


def recursive_doubling_allreduce(nprocs):
    """Recursive-doubling allreduce, MPICH order (``MPIR_Allreduce_intra_recursive_doubling``).

    For ``P`` a power of two: ``log2 P`` steps, in step ``t`` every rank exchanges with
    ``rank XOR 2**t`` (two messages per pair, ``P log2 P`` in all, Cui 2024 Table 4.1).  Otherwise,
    with ``pof2`` the largest power of two below ``P`` and ``rem = P - pof2``: a first step where each
    even rank ``< 2 rem`` sends its data to ``rank + 1`` and drops out, the ``log2 pof2`` exchange
    steps among the remaining ``pof2`` ranks (new rank ``i`` is old rank ``2i + 1`` for ``i < rem`` and
    ``i + rem`` otherwise), and a last step where each odd rank ``< 2 rem`` returns the result to
    ``rank - 1``.

    Examples
    --------
    >>> [s.tolist() for s in recursive_doubling_allreduce(4)]
    [[[0, 1], [1, 0], [2, 3], [3, 2]], [[0, 2], [1, 3], [2, 0], [3, 1]]]
    >>> [len(s) for s in recursive_doubling_allreduce(6)]
    [2, 4, 4, 2]
    """
    p = _check_nprocs(nprocs)
    pof2 = 1 << (p.bit_length() - 1)
    rem = p - pof2
    steps = []
    if rem:
        even = np.arange(0, 2 * rem, 2, dtype=np.int64)
        steps.append(np.stack([even, even + 1], 1))
    new = np.arange(pof2, dtype=np.int64)
    old = np.where(new < rem, 2 * new + 1, new + rem)
    mask = 1
    while mask < pof2:
        steps.append(np.stack([old, old[new ^ mask]], 1))
        mask <<= 1
    if rem:
        even = np.arange(0, 2 * rem, 2, dtype=np.int64)
        steps.append(np.stack([even + 1, even], 1))
    return steps


def bruck_alltoall(nprocs):
    """Bruck's alltoall, communication phase, MPICH order (``MPIR_Alltoall_intra_brucks``).

    ``ceil(log2 P)`` steps; in step ``k`` every rank ``i`` sends one (combined) message to
    ``(i + 2**k) mod P`` and receives from ``(i - 2**k) mod P``: ``P`` messages per step, ``P log2 P``
    in all for ``P`` a power of two (Cui 2024 section 2.3.2 and Table 4.1; the thesis' figure sends to
    ``i - 2**k``, the mirror image, which has the same hop count on an undirected network).

    Examples
    --------
    >>> [s[:, 1].tolist() for s in bruck_alltoall(4)]
    [[1, 2, 3, 0], [2, 3, 0, 1]]
    """
    p = _check_nprocs(nprocs)
    i = np.arange(p, dtype=np.int64)
    steps = []
    d = 1
    while d < p:
        steps.append(np.stack([i, (i + d) % p], 1))
        d <<= 1
    return steps


def ring_allgather(nprocs):
    """Ring allgather (``MPIR_Allgather_intra_ring``): ``P - 1`` steps, rank ``i`` sends to ``i + 1``.

    ``P (P - 1)`` messages in all, checked against the edge limit (``--max-edges``) before allocating.
    """
    p = _check_nprocs(nprocs)
    check_edge_count(p * (p - 1), f"the ring allgather on {p} ranks", error=CommGraphError, unit="messages")
    i = np.arange(p, dtype=np.int64)
    ring = np.stack([i, (i + 1) % p], 1)
    return [ring.copy() for _ in range(p - 1)]


def _rank_pairs(step):
    """One step as an ``(m, 2)`` ``int64`` array, or None when it is not a list of integer pairs
    (ragged, not two columns, not numbers, or floats that are not finite whole numbers)."""
    try:
        a = np.asarray(step)
    except (ValueError, TypeError):  # ragged nesting
        return None
    if a.size == 0:
        return np.zeros((0, 2), np.int64)
    if a.ndim != 2 or a.shape[1] != 2:
        return None
    if a.dtype.kind in "biu":
        return a.astype(np.int64)
    if a.dtype.kind == "f" and np.all(np.isfinite(a) & (a == np.round(a))):
        return a.astype(np.int64)
    return None


def check_schedule(steps, nprocs):
    """Validate a user-given schedule and return it as a list of ``(m, 2)`` ``int64`` arrays.

    Raises
    ------
    CommGraphError
        A step that is not a list of pairs, a rank outside ``0 .. nprocs - 1``, or a message from a
        rank to itself.
    """
    p = _check_nprocs(nprocs)
    if isinstance(steps, (str, bytes)) or not hasattr(steps, "__iter__"):
        raise CommGraphError(f"a schedule is a sequence of steps of (src, dst) pairs, got {type(steps).__name__}")
    out = []
    for t, step in enumerate(steps):
        a = _rank_pairs(step)
        if a is None:
            raise CommGraphError(f"schedule step {t}: expected (src, dst) rank pairs")
        bad = np.flatnonzero(((a < 0) | (a >= p)).any(1))
        if bad.size:
            raise CommGraphError(f"schedule step {t}: message {tuple(a[bad[0]].tolist())} names a rank "
                                 f"outside 0..{p - 1}")
        loop = np.flatnonzero(a[:, 0] == a[:, 1])
        if loop.size:
            raise CommGraphError(f"schedule step {t}: rank {a[loop[0], 0]} sends to itself")
        out.append(a)
    return out


def schedule(collective, nprocs, *, root=0):
    """The per-step messages of a collective on ``nprocs`` ranks.

    Parameters
    ----------
    collective : str or sequence of steps
        ``"bcast"`` (binomial tree), ``"allreduce"`` (recursive doubling), ``"alltoall"`` (Bruck) or
        ``"allgather"`` (ring); or a user-given schedule, a sequence of steps each a sequence of
        ``(src, dst)`` rank pairs (validated by :func:`check_schedule`).
    nprocs : int
        Number of ranks (>= 1).
    root : int
        Root of ``"bcast"``.

    Returns
    -------
    list of numpy.ndarray
        One ``(m, 2)`` ``int64`` array of ``(src, dst)`` ranks per step.

    Raises
    ------
    CommGraphError
        Unknown collective name, bad ``nprocs``/``root``, or an invalid user schedule.

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, section 2.3.2 (binomial tree, recursive doubling, Bruck).
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication Operations in
    MPICH", IJHPCA 19(1), 2005.

    Examples
    --------
    >>> sum(len(s) for s in schedule("allreduce", 8))
    24
    """
    if isinstance(collective, str):
        name = collective.lower()
        if name == "bcast":
            return binomial_bcast(nprocs, root)
        if name == "allreduce":
            return recursive_doubling_allreduce(nprocs)
        if name == "alltoall":
            return bruck_alltoall(nprocs)
        if name == "allgather":
            return ring_allgather(nprocs)
        check_choice("collective", name)
    return check_schedule(collective, nprocs)


def n_messages(steps):
    """Total number of messages in a schedule."""
    return int(sum(len(s) for s in steps))


def schedule_graph(steps, nprocs):
    """The communication graph of a schedule: weight of ``(i, j)`` = messages ``i -> j`` in all steps.

    Returns
    -------
    CommGraph
        Directed, ``nprocs`` vertices, for the generic mapping strategies and metrics.
    """
    steps = check_schedule(steps, nprocs)
    pairs = np.concatenate(steps) if steps else np.zeros((0, 2), np.int64)
    return CommGraph(int(nprocs), pairs[:, 0], pairs[:, 1], np.ones(len(pairs)))


def _check_nprocs(nprocs):
    try:
        p = int(nprocs)
    except (TypeError, ValueError):
        raise CommGraphError(f"nprocs must be an integer, got {nprocs!r}") from None
    if p != nprocs or p < 1:
        raise CommGraphError(f"nprocs must be a positive integer, got {nprocs!r}")
    return p


def check_root(root, p):
    """``root`` as an ``int`` rank of ``0..p-1``, or :class:`~libtopomap.CommGraphError` naming it."""
    try:
        r = int(root)
    except (TypeError, ValueError):
        raise CommGraphError(f"root must be an integer rank, got {root!r}") from None
    if r != root or not 0 <= r < p:
        raise CommGraphError(f"root {root!r} is outside 0..{p - 1}")
    return r
