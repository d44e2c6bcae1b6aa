"""Communication graphs in and out of SMPI: write a CommGraph as the edge list of the ``replay`` proxy,
and read SMPI's time-independent trace (``smpirun -trace-ti``) back into a CommGraph of bytes.

Why the time-independent trace (and not a PMPI counter): it needs no change to the user's binary
(a PMPI counter must be linked into it), SMPI writes it itself, deterministically, with the peer as a
rank of ``MPI_COMM_WORLD`` and the element count and datatype of every point-to-point message.  Its
limit: a collective is recorded as one call per rank, without its communicator, and the messages of
SMPI's collective algorithms are not recorded (``tracing/smpi/internals`` affects only the Paje
trace).  So every collective call becomes the messages of the algorithm SMPI runs for it
(:mod:`libtopomap.smpi.collectives`, which says which algorithm per collective and why), taken over
``MPI_COMM_WORLD``.  Element counts become bytes through a table of SMPI's datatype numbers measured
once by the ``dtypes`` helper (:func:`datatype_sizes`), not hard-coded.
"""

from __future__ import annotations

import glob
import os

import numpy as np

from ..errors import ArgumentError, FormatError
from .collectives import COLLECTIVE_CALLS, collective_sends

__all__ = ["write_edge_list", "read_edge_list", "read_ti_trace", "read_paje_collectives", "rank_files", "TraceSummary",
           "INT_MAX"]

#: The largest message (bytes) the ``replay`` proxy sends as one edge (an MPI ``int`` count).
INT_MAX = 2**31 - 1

_P2P_SEND = {"send", "isend", "ssend", "issend", "bsend", "ibsend", "rsend", "irsend"}


def write_edge_list(graph, path, *, scale=1.0):
    """Write ``graph`` as ``src dst bytes`` lines, the input of the ``replay`` and ``cg`` proxies.

    Parameters
    ----------
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
        Weights are bytes (as :func:`libtopomap.trace` records them), multiplied by ``scale`` and
        rounded; edges that round to 0 bytes and self edges are left out.
    path : str
    scale : float

    Returns
    -------
    int
        Edges written.

    Raises
    ------
    ArgumentError
        An edge over :data:`INT_MAX` bytes (one MPI message of the proxy), or a bad ``scale``.
    """
    from ..commgraph import as_commgraph

    g = as_commgraph(graph)
    scale = float(scale)
    if not np.isfinite(scale) or scale <= 0:
        raise ArgumentError(f"scale must be a positive number, got {scale!r}")
    b = np.rint(g.weights * scale)
    if b.size and b.max() > INT_MAX:
        k = int(np.argmax(b))
        raise ArgumentError(f"edge {int(g.src[k])} -> {int(g.dst[k])} has {b[k]:.0f} bytes; the replay proxy sends "
                            f"at most {INT_MAX} per edge (lower scale=)")
    keep = (b > 0) & (np.asarray(g.src) != np.asarray(g.dst))
    with open(path, "w") as f:
        f.write(f"# src dst bytes: {g.n} processes (libtopomap.smpi.write_edge_list)\n")
        for s, d, w in zip(np.asarray(g.src)[keep].tolist(), g.dst[keep].tolist(), b[keep].astype(np.int64).tolist()):
            f.write(f"{s} {d} {w}\n")
    return int(keep.sum())


def read_edge_list(path, n=None):
    """An edge list ``src dst bytes`` (as :func:`write_edge_list` writes) -> CommGraph; ``n`` default
    the largest rank + 1."""
    from ..commgraph import CommGraph

    src, dst, w = [], [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split("#", 1)[0].split()
            if not parts:
                continue
            if len(parts) != 3:
                raise FormatError("expected 'src dst bytes'", path=path, line=lineno)
            try:
                src.append(int(parts[0]))
                dst.append(int(parts[1]))
                w.append(float(parts[2]))
            except ValueError:
                raise FormatError("expected 'src dst bytes'", path=path, line=lineno) from None
    if n is None:
        n = max(max(src, default=-1), max(dst, default=-1)) + 1
    return CommGraph(n, src, dst, w)


class TraceSummary(dict):
    """What a trace held besides the graph: ``messages`` (point-to-point sends), ``bytes`` (theirs),
    ``collectives`` (call -> count over all ranks), ``collective_bytes`` (the bytes of their
    algorithms' messages, in the graph), ``not_expanded`` (call -> count of the calls not in the
    graph: on a communicator smaller than the world, or an algorithm not modelled) and
    ``unknown_datatypes`` (datatype numbers not in the table, counted as 1 byte per element)."""


def rank_files(index):
    """The per-rank trace files listed in a time-independent trace's index file, as paths."""
    with open(index, encoding="utf-8", errors="replace") as f:
        files = [x.strip() for x in f if x.strip()]
    base = os.path.dirname(os.path.abspath(index))
    out = []
    for p in files:
        out.append(p if os.path.isabs(p) else os.path.join(base, p) if os.path.exists(os.path.join(base, p)) else p)
    if not out:  # fall back on the per-rank folder
        out = sorted(glob.glob(index + "_files/*_rank-*.txt"))
    return out


def read_ti_trace(index, nprocs, dtype_sizes=None, *, collectives=True, algorithms=None):
    """SMPI's time-independent trace -> (CommGraph of bytes sent per rank pair, :class:`TraceSummary`).

    Parameters
    ----------
    index : str
        The trace's index file (``--cfg=tracing/filename:FILE``): the per-rank file names, one a line.
    nprocs : int
    dtype_sizes : dict, optional
        SMPI datatype number -> bytes (:func:`libtopomap.smpi.datatype_sizes`); default: counts are bytes.
    collectives : bool
        Add the messages of every collective call (:func:`libtopomap.smpi.collectives.collective_sends`);
        False: the point-to-point messages only, the collective calls counted.
    algorithms : dict, optional
        ``{collective: algorithm}`` the run named
        (:func:`libtopomap.smpi.collectives.algorithms_of`); default SMPI's default selector.

    Returns
    -------
    (CommGraph, TraceSummary)

    Raises
    ------
    FormatError
        A line that is not SMPI's trace syntax, or a peer outside ``0 .. nprocs - 1``.
    """
    from ..commgraph import CommGraph

    sizes = dtype_sizes or {}
    acc = {}
    calls = {}  # (rank, call, fields) -> [times, path, line]: each distinct call expanded once
    summary = TraceSummary(messages=0, bytes=0, collectives={}, collective_bytes=0, not_expanded={},
                           unknown_datatypes=[])
    unknown = set()

    def size_of(dtype):
        if dtype is None:
            return 1
        if dtype in sizes:
            return sizes[dtype]
        if sizes:
            unknown.add(dtype)
        return 1

    for path in rank_files(index):
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                p = line.split()
                if len(p) < 2:
                    continue
                try:
                    me, action = int(p[0]), p[1]
                    if action in _P2P_SEND:
                        peer, count = int(p[2]), int(p[4])
                        b = count * size_of(int(p[5]) if len(p) > 5 else None)
                    elif action == "sendRecv":
                        count, peer = int(p[2]), int(p[3])
                        b = count * size_of(int(p[6]) if len(p) > 6 else None)
                    else:
                        name = action.lower()
                        if name in COLLECTIVE_CALLS:
                            summary["collectives"][action] = summary["collectives"].get(action, 0) + 1
                            if collectives:
                                key = (me, name, tuple(p[2:]))
                                got = calls.get(key)
                                if got is None:
                                    calls[key] = [1, path, lineno]
                                else:
                                    got[0] += 1
                        continue
                except (ValueError, IndexError):
                    raise FormatError(f"not an SMPI time-independent trace line: {line.strip()[:60]!r}",
                                      path=path, line=lineno) from None
                if not (0 <= me < nprocs and 0 <= peer < nprocs):
                    raise FormatError(f"rank {me} -> {peer} outside 0..{nprocs - 1}", path=path, line=lineno)
                acc[me, peer] = acc.get((me, peer), 0) + b
                summary["messages"] += 1
                summary["bytes"] += b
    src, dst, w = [], [], []
    for (me, name, fields), (times, path, lineno) in calls.items():
        if not 0 <= me < nprocs:
            raise FormatError(f"rank {me} outside 0..{nprocs - 1}", path=path, line=lineno)
        try:
            sends = collective_sends(name, fields, me, nprocs, size_of, algorithms)
        except (ValueError, IndexError):
            raise FormatError(f"not an SMPI time-independent trace line: {' '.join((str(me), name) + fields)[:60]!r}",
                              path=path, line=lineno) from None
        if sends is None:
            summary["not_expanded"][name] = summary["not_expanded"].get(name, 0) + times
            continue
        peers, nbytes = sends
        if any(not 0 <= d < nprocs for d in peers):
            raise FormatError(f"a root outside 0..{nprocs - 1} in a {name} of rank {me}", path=path, line=lineno)
        src += [me] * len(peers)
        dst += peers
        w += [b * times for b in nbytes]
    summary["collective_bytes"] = int(sum(w))
    summary["unknown_datatypes"] = sorted(unknown)
    if acc:
        keys = np.array(list(acc.keys()), dtype=np.int64)
        src += keys[:, 0].tolist()
        dst += keys[:, 1].tolist()
        w += list(acc.values())
    if w:
        g = CommGraph(nprocs, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                      np.array(w, dtype=np.float64))
    else:
        g = CommGraph(nprocs, [], [])
    return g, summary


def read_paje_collectives(path, nprocs):
    """The messages SMPI's collective algorithms sent, from its Paje trace -> CommGraph of bytes per rank pair.

    The trace of ``smpirun -trace --cfg=tracing/smpi/internals:yes
    --cfg=tracing/smpi/display-sizes:yes``: one ``PajeStartLink`` event per message, keyed
    ``SRC_DST_TAG_N`` with SMPI's process ids (rank + 1), with its size in bytes.  The collectives'
    messages carry SMPI's internal tags (negative, ``COLL_TAG_*``); they are kept.  The program's own
    messages (tags >= 0) are left out: with ``internals`` SimGrid 3.32 logs a non-blocking send twice,
    at the MPI call (``smpi_pmpi_request.cpp``) and when its request starts (``smpi_request.cpp``), and
    :func:`read_ti_trace` has them exactly (``collectives=False``).  Unlike the time-independent trace,
    this needs no model of the collectives and names no communicator: the messages of collectives on
    sub-communicators are where they were sent (``tests/test_smpi_traces.py`` checks
    :func:`read_ti_trace`'s expansion against it).  It is larger: a line per message, not per call.

    Raises
    ------
    FormatError
        No ``PajeStartLink`` with ``Key`` and ``Size`` fields (not a Paje trace of SMPI with
        ``display-sizes``), a key that is not ``SRC_DST_TAG_N``, or a rank outside ``0 .. nprocs - 1``.
    """
    from ..commgraph import CommGraph

    acc = {}
    link_id, fields, current = None, [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("%"):
                p = line[1:].split()
                if p and p[0] == "EventDef":
                    current = p[1] if len(p) > 2 else None
                    if current == "PajeStartLink":
                        link_id, fields = p[2], []
                elif p and p[0] == "EndEventDef":
                    current = None
                elif p and current == "PajeStartLink":
                    fields.append(p[0])
                continue
            p = line.split()
            if not p or p[0] != link_id:
                continue
            if "Key" not in fields or "Size" not in fields:
                raise FormatError("PajeStartLink has no Key and Size fields (run with "
                                  "--cfg=tracing/smpi/display-sizes:yes)", path=path, line=lineno)
            try:
                key, size = p[1 + fields.index("Key")], int(p[1 + fields.index("Size")])
                src, dst, tag = (int(x) for x in key.split("_")[:3])
                src, dst = src - 1, dst - 1
            except (ValueError, IndexError):
                raise FormatError(f"not an SMPI message link: {line.strip()[:60]!r}", path=path, line=lineno) from None
            if not (0 <= src < nprocs and 0 <= dst < nprocs):
                raise FormatError(f"rank {src} -> {dst} outside 0..{nprocs - 1}", path=path, line=lineno)
            if tag < 0 and src != dst and size > 0:
                acc[src, dst] = acc.get((src, dst), 0) + size
    if link_id is None:
        raise FormatError("no PajeStartLink event definition: not a Paje trace of SMPI", path=path)
    if not acc:
        return CommGraph(nprocs, [], [])
    keys = np.array(list(acc.keys()), dtype=np.int64)
    return CommGraph(nprocs, keys[:, 0], keys[:, 1], np.array(list(acc.values()), dtype=np.float64))
