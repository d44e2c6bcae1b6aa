"""Communication graphs in and out of SMPI: write a CommGraph as the edge list of the ``replay`` proxy,
and read SMPI's time-independent trace (``smpirun -trace-ti``) back into a CommGraph of bytes.

Why the time-independent trace (and not a PMPI counter): it needs no change to the user's binary
(a PMPI counter must be linked into it), SMPI writes it itself, deterministically, with the peer as a
rank of ``MPI_COMM_WORLD`` and the element count and datatype of every point-to-point message.  Its
limit: a collective is recorded as one call without its communicator, and the messages of SMPI's
collective algorithms are not recorded (``tracing/smpi/internals`` affects only the Paje trace), so
the graph holds the point-to-point traffic; collective calls are counted and reported.  Element counts
become bytes through a table of SMPI's datatype numbers measured once by the ``dtypes`` helper
(:func:`datatype_sizes`), not hard-coded.
"""

from __future__ import annotations

import glob
import os

import numpy as np

from ..errors import ArgumentError, FormatError

__all__ = ["write_edge_list", "read_edge_list", "read_ti_trace", "rank_files", "TraceSummary", "INT_MAX"]

#: The largest message (bytes) the ``replay`` proxy sends as one edge (an MPI ``int`` count).
INT_MAX = 2**31 - 1

_P2P_SEND = {"send", "isend", "ssend", "issend", "bsend", "ibsend", "rsend", "irsend"}
_COLLECTIVES = {"barrier", "bcast", "reduce", "allreduce", "alltoall", "alltoallv", "alltoallw", "gather", "gatherv",
                "scatter", "scatterv", "allgather", "allgatherv", "reducescatter", "reduce_scatter", "scan", "exscan"}


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
    """What a trace held besides the graph: ``messages`` (point-to-point sends), ``bytes``,
    ``collectives`` (call -> count over all ranks, not in the graph) and ``unknown_datatypes``
    (datatype numbers not in the table, counted as 1 byte per element)."""


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


def read_ti_trace(index, nprocs, dtype_sizes=None):
    """SMPI's time-independent trace -> (CommGraph of bytes sent per rank pair, :class:`TraceSummary`).

    Parameters
    ----------
    index : str
        The trace's index file (``--cfg=tracing/filename:FILE``): the per-rank file names, one a line.
    nprocs : int
    dtype_sizes : dict, optional
        SMPI datatype number -> bytes (:func:`libtopomap.smpi.datatype_sizes`); default: counts are bytes.

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
    summary = TraceSummary(messages=0, bytes=0, collectives={}, unknown_datatypes=[])
    unknown = set()

    def nbytes(count, dtype):
        if dtype is None:
            return count
        if dtype in sizes:
            return count * sizes[dtype]
        if sizes:
            unknown.add(dtype)
        return count

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
                        b = nbytes(count, int(p[5]) if len(p) > 5 else None)
                    elif action == "sendRecv":
                        count, peer = int(p[2]), int(p[3])
                        b = nbytes(count, int(p[6]) if len(p) > 6 else None)
                    else:
                        name = action.lower()
                        if name in _COLLECTIVES or (name[:1] == "i" and name[1:] in _COLLECTIVES):
                            summary["collectives"][action] = summary["collectives"].get(action, 0) + 1
                        continue
                except (ValueError, IndexError):
                    raise FormatError(f"not an SMPI time-independent trace line: {line.strip()[:60]!r}",
                                      path=path, line=lineno) from None
                if not (0 <= me < nprocs and 0 <= peer < nprocs):
                    raise FormatError(f"rank {me} -> {peer} outside 0..{nprocs - 1}", path=path, line=lineno)
                acc[me, peer] = acc.get((me, peer), 0) + b
                summary["messages"] += 1
                summary["bytes"] += b
    summary["unknown_datatypes"] = sorted(unknown)
    if acc:
        keys = np.array(list(acc.keys()), dtype=np.int64)
        g = CommGraph(nprocs, keys[:, 0], keys[:, 1], np.array(list(acc.values()), dtype=np.float64))
    else:
        g = CommGraph(nprocs, [], [])
    return g, summary

