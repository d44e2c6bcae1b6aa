"""Collective helpers for the parallel mapping portfolio (Hoefler & Snir, ICS'11, section 4.2, Figure 4).

Two building blocks that every rank calls together:

* :class:`agreed` (a context manager) and :func:`collective_call` (the same for a callable) run a
  local phase on every rank and agree on failure with one ``Allgather``, so an exception on one
  rank becomes a :class:`~libtopomap.CommError` on *all* ranks (naming the failing ranks and their
  messages) instead of a hang in the next collective.  Every local phase of every MPI entry point
  between two collectives runs inside one of them.
* :func:`select_best` picks the best candidate over all ranks by ``MINLOC`` on ``(value, tiebreak,
  rank)`` with ``Allreduce`` and lets the winner broadcast its mapping.
"""

from __future__ import annotations

import time
import zlib

import numpy as np
from mpi4py import MPI

from ..errors import CommError, LibTopoMapError

__all__ = ["agreed", "collective_call", "agree_arguments", "select_best", "format_failures", "raise_failures",
           "wait_quietly", "lexmin", "bcast_array"]

# Seconds between two tests of a pending barrier while waiting without spinning.
_POLL = 0.002

# Longest per-rank message kept in a CommError (the full text stays on the failing rank's __cause__).
_MAX_MESSAGE = 2000
# Ranks listed by name in a CommError before abbreviating.
_MAX_RANKS = 10


def format_failures(what, failures, size):
    """One message for the failures ``[(rank, message), ...]`` of a collective step.

    Examples
    --------
    >>> format_failures("mapping", [(3, "ValueError: bad")], 8)
    'mapping failed on rank 3 of 8: ValueError: bad'
    """
    ranks = [r for r, _ in failures]
    if len(ranks) == 1:
        head = f"{what} failed on rank {ranks[0]} of {size}"
    elif len(ranks) == size:
        head = f"{what} failed on all {size} ranks"
    else:
        shown = ", ".join(map(str, ranks[:_MAX_RANKS]))
        more = f" and {len(ranks) - _MAX_RANKS} more" if len(ranks) > _MAX_RANKS else ""
        head = f"{what} failed on ranks {shown}{more} of {size}"
    msgs = {}
    for r, m in failures:
        msgs.setdefault(m, []).append(r)
    if len(msgs) == 1:
        return f"{head}: {failures[0][1]}"
    parts = [f"rank {rs[0]}: {m}" if len(rs) == 1 else f"ranks {','.join(map(str, rs[:_MAX_RANKS]))}: {m}"
             for m, rs in list(msgs.items())[:_MAX_RANKS]]
    return f"{head}; " + "; ".join(parts)


def wait_quietly(comm):
    """A barrier that does not spin: ``Ibarrier`` tested every 2 ms with sleeps in between.

    MPICH busy-polls inside blocking collectives, so ranks that are only waiting for others (the
    ranks that do not map, or the ranks done early) would take the cores of the ranks still
    working when ranks share cores.

    An interruption while waiting (``KeyboardInterrupt``, ``SystemExit``: any ``BaseException``
    that is not an ``Exception``) does not leave the barrier: the wait goes on until every rank has
    arrived, then the first interruption is re-raised, so that the caller can pass it on through its
    next agreement (as :func:`collective_call` does) instead of leaving the others in a collective.
    """
    req = comm.Ibarrier()
    interrupt = None
    while True:
        try:
            if req.Test():
                break
            time.sleep(_POLL)
        except Exception:
            raise
        except BaseException as e:  # noqa: BLE001 - finish the barrier first, re-raise after it
            if interrupt is None:
                interrupt = e
    if interrupt is not None:
        raise interrupt


def bcast_array(comm, arr, root):
    """Broadcast a 1-D ``int64`` array of any length from ``root`` (``arr`` is ignored elsewhere).

    Examples
    --------
    >>> from mpi4py import MPI
    >>> bcast_array(MPI.COMM_SELF, [3, 1], 0).tolist()
    [3, 1]
    """
    if comm.Get_rank() == root:
        buf = np.ascontiguousarray(arr, dtype=np.int64).reshape(-1)
        n = np.array([buf.size], dtype=np.int64)
    else:
        n = np.zeros(1, dtype=np.int64)
    comm.Bcast(n, root=root)
    if comm.Get_rank() != root:
        buf = np.empty(int(n[0]), dtype=np.int64)
    comm.Bcast(buf, root=root)
    return buf


def lexmin(comm, key):
    """Lexicographic minimum over ranks of a tuple of floats, and the lowest rank holding it.

    One ``Allreduce(MIN)`` per component over the ranks still tied, then one for the rank.  A rank
    without a key passes ``None``.  NaN counts as ``+inf``.

    Returns
    -------
    best : tuple of float
    owner : int
        The lowest rank whose key equals ``best`` (``-1`` if no rank had a key).
    """
    length = comm.allreduce(0 if key is None else len(key), op=MPI.MAX)
    mine = [np.inf] * length if key is None else [float(x) if np.isfinite(x) else np.inf for x in key]
    tied = key is not None
    best = []
    buf = np.empty(1, dtype=np.float64)
    for x in mine:
        buf[0] = x if tied else np.inf
        comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.MIN)
        tied = tied and x == buf[0]
        best.append(float(buf[0]))
    size = comm.Get_size()
    owner = comm.allreduce(comm.Get_rank() if tied else size, op=MPI.MIN)
    return tuple(best), (-1 if owner == size else int(owner))


class agreed:
    """Context manager: run the local phase in the ``with`` body, then agree with the other ranks.

    On leaving the block every rank takes part in one ``allgather`` of a small failure message
    (``None`` when its body ran through).  If the body raised on any rank -- any ``BaseException``:
    an ``Exception``, ``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``, a custom subclass --
    every rank raises the same :class:`~libtopomap.CommError` naming the failing rank(s) and the
    exception type and message (:func:`raise_failures`); on a failing rank its ``__cause__`` is the
    original exception.  No rank is left waiting in a later collective and nothing aborts.

    This is the one place where the MPI layer turns a local failure into an agreed one:
    :func:`collective_call` is this block around a call, :func:`agree_arguments` the same for the
    argument checks at the entry of every collective call.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        All its processes must enter and leave the block.
    what : str
        What is being done, for the error message (``"<what> failed on rank r of n: Type: message"``).
    quiet : bool, optional
        Wait for the other ranks with :func:`wait_quietly` before agreeing (for long, unequal local
        work: waiting ranks then leave the cores to the others).

    Notes
    -----
    An interruption (``KeyboardInterrupt``...) does not escape as itself, not even on the rank that
    was interrupted: that rank raises the agreed :class:`~libtopomap.CommError` too, with the
    interruption as its ``__cause__`` (``isinstance(err.__cause__, KeyboardInterrupt)`` tells an
    application that wants to stop on Ctrl-C).  The rule of the MPI layer is that every rank raises
    the same error and nobody hangs; an interruption re-raised on one rank only would send that
    rank down another path than the others (which raise :class:`~libtopomap.CommError`), e.g. past
    an ``except CommError`` that the others take.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> with agreed(MPI.COMM_SELF, "adding"):
    ...     total = 1 + 2
    >>> total
    3
    >>> try:
    ...     with agreed(MPI.COMM_SELF, "stopping"):
    ...         raise KeyboardInterrupt
    ... except CommError as e:
    ...     print(e, type(e.__cause__).__name__)
    stopping failed on rank 0 of 1: KeyboardInterrupt KeyboardInterrupt
    """

    __slots__ = ("comm", "what", "quiet")

    def __init__(self, comm, what, *, quiet=False):
        self.comm, self.what, self.quiet = comm, what, quiet

    def __enter__(self):
        return self

    def __exit__(self, etype, exc, tb):
        agree_failure(self.comm, self.what, exc, quiet=self.quiet)
        return False


def agree_failure(comm, what, local_exc, *, quiet=False):
    """The agreement of :class:`agreed`: ``local_exc`` is this rank's failure (None if none); every rank
    raises the same :class:`~libtopomap.CommError` when any rank failed, else returns None (collective)."""
    message = None if local_exc is None else describe_exception(local_exc)
    if quiet:
        try:
            wait_quietly(comm)
        except BaseException as e:  # noqa: BLE001 - an interruption while waiting is this rank's failure
            if local_exc is None:
                local_exc, message = e, describe_exception(e)
    messages = comm.allgather(message)
    failures = [(r, m) for r, m in enumerate(messages) if m is not None]
    if failures:
        raise_failures(what, failures, comm.Get_size(), local_exc)


def collective_call(comm, fn, *args, what="mapping", quiet=False, **kw):
    """Run ``fn(*args, **kw)`` on every rank and agree on failure before anyone proceeds.

    Every rank calls ``fn`` locally, then all ranks exchange one small error flag/message with
    ``Allgather`` (:class:`agreed`).  If any rank raised, every rank raises the same
    :class:`~libtopomap.CommError` naming the failing rank(s) and their messages, so no rank is
    left waiting in a later collective.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        All its processes must call this function.
    fn : callable
        Local computation; it must not itself call collectives that could deadlock when another rank
        raised before reaching them.
    *args, **kw
        Passed to ``fn``.
    what : str, optional
        What is being done, used in the error message (default ``"mapping"``).
    quiet : bool, optional
        Wait for the other ranks with :func:`wait_quietly` before agreeing (for long, unequal
        local work such as running strategies: waiting ranks then leave the cores to the others).

    Returns
    -------
    object
        ``fn``'s result on this rank.

    Raises
    ------
    CommError
        On all ranks if ``fn`` raised on any rank -- any ``BaseException``, ``KeyboardInterrupt``
        and ``SystemExit`` included (see :class:`agreed`).  The error has ``failures``, a list of
        ``(rank, message)``; on a failing rank its ``__cause__`` is the original exception.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> collective_call(MPI.COMM_SELF, sum, [1, 2, 3])
    6
    """
    with agreed(comm, what, quiet=quiet):
        return fn(*args, **kw)


def raise_failures(what, failures, size, local_exc):
    """Raise the failures the ranks agreed on: the same :class:`~libtopomap.CommError` on every rank
    (with ``failures``), its cause this rank's own exception ``local_exc`` if any -- an interruption
    (``KeyboardInterrupt``, ``SystemExit``...) included, see :class:`agreed`."""
    err = CommError(format_failures(what, failures, size))
    err.failures = failures
    raise err from local_exc


def agree_arguments(comm, fn, *args, what, options=None, **kw):
    """Check this rank's arguments with ``fn(*args, **kw)`` and agree on the outcome and on ``options``
    in one ``allgather``, before any other collective (the entry of every collective call).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
    fn : callable
        Local argument check; returns the normalized arguments.
    what : str
        What is being checked, for the error message.
    options : dict or callable, optional
        ``{name: value}`` of the arguments that must be equal on every rank (compared by the CRC-32
        of their ``repr``), or a callable returning it (called in the checked phase, so a failure
        there is agreed on like one in ``fn``).

    Returns
    -------
    object
        The normalized arguments, ``fn``'s result on this rank.

    Raises
    ------
    ArgumentError, ArgumentTypeError, ...
        When every rank raised the same library error that is a ``ValueError`` or ``TypeError`` (the
        same bad arguments everywhere): that error, on every rank, as mpi4py raises it.
    CommError
        When only some ranks failed, or failed differently (naming the ranks and messages), or when
        the ranks passed different ``options`` (naming the options and the odd ranks).
    CommError
        Also for an interruption (any ``BaseException``) in ``fn`` on any rank (see :class:`agreed`).

    Examples
    --------
    >>> from mpi4py import MPI
    >>> agree_arguments(MPI.COMM_SELF, int, "7", what="parsing", options={"seed": 1})
    7
    """
    err = result = None
    names, crcs = [], []
    try:
        result = fn(*args, **kw)
        opts = (options() if callable(options) else options) or {}
        names = sorted(opts)
        crcs = [zlib.crc32(repr(opts[k]).encode()) for k in names]
        msg = None
    except BaseException as e:  # noqa: BLE001 - every failure must reach the others before any collective
        err = e
        same = isinstance(e, LibTopoMapError) and isinstance(e, (ValueError, TypeError))
        msg = (type(e).__name__, str(e) if same else describe_exception(e))
    every = comm.allgather((msg, crcs))
    msgs = [m for m, _ in every]
    if any(m is not None for m in msgs):
        if all(m == msgs[0] for m in msgs) and not _is_interrupt(err) and isinstance(err, LibTopoMapError) \
                and isinstance(err, (ValueError, TypeError)):
            raise err
        failures = [(r, m[1] if m[1].startswith(m[0]) else f"{m[0]}: {m[1]}") for r, m in enumerate(msgs)
                    if m is not None]
        raise_failures(what, failures, comm.Get_size(), err)
    table = np.array([c for _, c in every], dtype=np.int64).reshape(len(every), len(names))
    differ = [k for j, k in enumerate(names) if np.unique(table[:, j]).size > 1]
    if differ:
        rows = [tuple(row) for row in table.tolist()]
        counts = {}
        for row in rows:
            counts[row] = counts.get(row, 0) + 1
        ref_row = max(counts, key=lambda row: (counts[row], -rows.index(row)))
        ref = rows.index(ref_row)
        odd = [r for r, row in enumerate(rows) if row != ref_row]
        shown = ", ".join(map(str, odd[:_MAX_RANKS])) + (" ..." if len(odd) > _MAX_RANKS else "")
        raise CommError(f"{what}: the argument(s) {', '.join(differ)} differ between ranks: rank(s) {shown} "
                        f"disagree with rank {ref}; every rank must pass the same")
    return result


def _is_interrupt(exc):
    """Whether ``exc`` is an interruption (``KeyboardInterrupt``, ``SystemExit``...), not an error."""
    return exc is not None and not isinstance(exc, Exception)


def describe_exception(exc):
    """``"Type: message"`` of ``exc`` (``"Type"`` without a message), cut to ``_MAX_MESSAGE``."""
    return (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)[:_MAX_MESSAGE]


def select_best(comm, value, vertices, *, tiebreak=0.0):
    """Choose the best candidate over all ranks and broadcast its mapping.

    The order is lexicographic on ``(value, tiebreak, rank)``: first ``Allreduce(MIN)`` on the value,
    then ``Allreduce(MINLOC)`` on the tie-break of the ranks that reached the minimum (``MINLOC``
    returns the lowest rank among equal keys).  The winner broadcasts its ``vertices``.  NaN counts
    as ``+inf``; a rank without a candidate passes ``value=inf`` (its ``vertices`` are ignored unless
    every rank does so, when rank 0 wins).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    value : float
        Objective of this rank's candidate (lower is better).
    vertices : array_like of int
        This rank's candidate mapping (logical vertex -> topology vertex).
    tiebreak : float, optional
        Secondary objective (e.g. hop-bytes) for candidates with equal ``value``.

    Returns
    -------
    best_vertices : numpy.ndarray of int64
    winner_rank : int
    best_value : float

    Raises
    ------
    CommError
        On every rank when ``value``, ``tiebreak`` or ``vertices`` cannot be read on any rank (any
        ``BaseException`` there, see :class:`agreed`).

    Notes
    -----
    This is the selection step of LibTopoMap's flow (Hoefler & Snir, ICS'11, section 4.2 and
    Figure 4: "the permutation with the lowest congestion is chosen at the end").

    Examples
    --------
    >>> from mpi4py import MPI
    >>> v, rank, val = select_best(MPI.COMM_SELF, 2.5, [1, 0])
    >>> v.tolist(), rank, val
    ([1, 0], 0, 2.5)
    """
    rank = comm.Get_rank()

    def inputs():  # local, agreed on before the first collective
        v, t = float(value), float(tiebreak)
        v = v if np.isfinite(v) else np.inf
        t = t if np.isfinite(t) else np.inf
        # the array that this rank broadcasts if it wins
        arr = None if vertices is None else np.ascontiguousarray(vertices, dtype=np.int64).reshape(-1)
        return v, t, arr
    with agreed(comm, "selecting the best candidate"):
        value, tiebreak, vertices = inputs()
    vmin = np.array([value], dtype=np.float64)
    comm.Allreduce(MPI.IN_PLACE, vmin, op=MPI.MIN)
    best_value = float(vmin[0])
    pair = np.zeros(1, dtype=np.dtype([("key", np.float64), ("rank", np.int32)], align=True))
    pair["key"] = tiebreak if value == best_value else np.inf
    pair["rank"] = rank
    out = np.empty_like(pair)
    comm.Allreduce([pair, 1, MPI.DOUBLE_INT], [out, 1, MPI.DOUBLE_INT], op=MPI.MINLOC)
    winner = int(out["rank"][0])
    buf = bcast_array(comm, vertices, winner)
    return buf, winner, best_value
