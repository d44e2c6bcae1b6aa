"""Communication graphs in and out of SMPI: write a CommGraph as the edge list of the ``replay`` proxy,
and read SMPI's traces back into a CommGraph of bytes: the Paje trace (:func:`read_paje_trace`, what
``smpi run`` reads by default) and the time-independent trace (:func:`read_ti_trace`).

Why a trace (and not a PMPI counter): it needs no change to the user's binary (a PMPI counter must be
linked into it), SMPI writes it itself, deterministically, with peers as ranks of ``MPI_COMM_WORLD``.
The Paje trace (``tracing/smpi/internals``) has every message SMPI sent, with its size, so the
collectives' messages are there on whatever communicator and under whatever algorithm they ran.  The
time-independent trace is 6-30 times smaller but records a collective as one call per rank, without its
communicator, and not the messages of SMPI's collective algorithms: :func:`read_ti_trace` turns every
call into the messages of the algorithm SMPI runs for it (:mod:`libtopomap.smpi.collectives`, which says
which algorithm per collective and why), taken over ``MPI_COMM_WORLD``.  Its element counts become bytes
through a table of SMPI's datatype numbers measured once by the ``dtypes`` helper
(:func:`libtopomap.smpi.datatype_sizes`), not hard-coded.  The costs of both, measured:
docs/simulation.rst, "Which trace".
"""

from __future__ import annotations

import glob
import os

import numpy as np

from ..errors import ArgumentError, FormatError
from .collectives import COLLECTIVE_CALLS, collective_sends

__all__ = ["write_edge_list", "read_edge_list", "read_ti_trace", "read_paje_trace", "rank_files", "TraceSummary",
           "INT_MAX"]

#: The largest message (bytes) the ``replay`` proxy sends as one edge (an MPI ``int`` count).
INT_MAX = 2**31 - 1

# the send actions of the time-independent trace, lower case (SimGrid 3.32 writes "Ssend", "ISsend", "Start")
_P2P_SEND = {"send", "isend", "ssend", "issend", "bsend", "ibsend", "rsend", "irsend", "start"}


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
    graph: on a communicator smaller than the world, an algorithm not modelled, or ``startall``, whose
    requests the time-independent trace does not describe) and
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
                    if action.lower() in _P2P_SEND:
                        peer, count = int(p[2]), int(p[4])
                        b = count * size_of(int(p[5]) if len(p) > 5 else None)
                    elif action == "sendRecv":
                        count, peer = int(p[2]), int(p[3])
                        b = count * size_of(int(p[6]) if len(p) > 6 else None)
                    elif action == "Startall":  # the trace has no peer, count nor size of its requests
                        summary["not_expanded"]["startall"] = summary["not_expanded"].get("startall", 0) + 1
                        continue
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


#: MPI calls that send one point-to-point message: SimGrid 3.32 draws two links for some (``Ssend``, the
#: ``I*send`` calls, ``Sendrecv`` and ``Sendrecv_replace`` log the message at the call and again when its
#: request starts), so at most one link counts inside the state of each.
_ONE_SEND = frozenset(f"PMPI_{c}" for c in ("Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Irsend", "Ibsend",
                                            "Sendrecv", "Sendrecv_replace", "Start"))


def read_paje_trace(path, nprocs, *, point_to_point=True):
    """SMPI's Paje trace -> (CommGraph of bytes sent per rank pair, :class:`TraceSummary`): every message
    SMPI sent, the collectives' included, on any communicator.

    The trace of ``smpirun -trace --cfg=tracing/smpi/internals:yes --cfg=tracing/smpi/display-sizes:yes``
    (:func:`libtopomap.smpi.run_once` with ``paje=``): one ``PajeStartLink`` per message, keyed
    ``SRC_DST_TAG_N`` with SMPI's process ids (rank + 1 in ``MPI_COMM_WORLD``), with its size in bytes,
    inside the state (``PajePushState`` ... ``PajePopState``) of the MPI call that sent it.  The
    collectives' messages carry SMPI's internal tags (negative, ``COLL_TAG_*``): all count, whatever the
    communicator and the algorithm, so no model of the collectives is needed
    (:mod:`libtopomap.smpi.collectives` is the time-independent trace's).  A program's own messages
    (tags >= 0) count once per call of :data:`_ONE_SEND` (SimGrid 3.32 logs some twice, see there) and
    every time otherwise (``MPI_Startall``).  ``tests/test_smpi_traces.py`` checks both parts against
    :func:`read_ti_trace`, pair by pair and byte for byte.  The file is read line by line: memory follows
    the graph's edges, not the trace's size (a line per MPI call and per message, 6-30 times the
    time-independent trace: docs/simulation.rst, "Which trace").

    Parameters
    ----------
    path : str
    nprocs : int
    point_to_point : bool
        False: the collectives' messages only.

    Returns
    -------
    (CommGraph, TraceSummary)
        ``collectives`` counts the collective calls of every rank (``alltoall``...), ``messages`` and
        ``bytes`` the point-to-point ones; ``not_expanded`` and ``unknown_datatypes`` are empty.

    Raises
    ------
    FormatError
        No ``PajeStartLink`` with ``Key`` and ``Size`` fields (not a Paje trace of SMPI with
        ``display-sizes``), a key that is not ``SRC_DST_TAG_N``, or a rank outside ``0 .. nprocs - 1``.
    """
    from ..commgraph import CommGraph

    acc = {}
    summary = TraceSummary(messages=0, bytes=0, collectives={}, collective_bytes=0, not_expanded={},
                           unknown_datatypes=[])

    def add(link, lineno):
        src, dst, tag, size = link
        if not (0 <= src < nprocs and 0 <= dst < nprocs):
            raise FormatError(f"rank {src} -> {dst} outside 0..{nprocs - 1}", path=path, line=lineno)
        if src == dst or size <= 0 or (tag >= 0 and not point_to_point):
            return
        if tag < 0:
            summary["collective_bytes"] += size
        else:
            summary["messages"] += 1
            summary["bytes"] += size
        acc[src, dst] = acc.get((src, dst), 0) + size

    defs, current = {}, None  # event name -> (id, [fields]) from the header
    kind_of, col = {}, {}  # event id -> "link" / "push" / "pop" / "value"; (kind, field) -> position
    names = {}  # entity value alias -> MPI call name (the states' values)
    # container -> [[MPI call, its last link or None, that line], ...]: the calls in progress.  In a call of
    # _ONE_SEND the last link counts: the request's (SimGrid 3.32 logs MPI_Sendrecv's message first with the
    # peer's rank as its process id)
    stack = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("%"):
                p = line[1:].split()
                if p and p[0] == "EventDef" and len(p) > 2:
                    current = p[1]
                    defs[current] = (p[2], [])
                elif p and p[0] == "EndEventDef":
                    current = None
                elif p and current is not None:
                    defs[current][1].append(p[0])
                continue
            if line.startswith("#"):  # SimGrid's comment lines at the top
                continue
            if not kind_of:
                if "PajeStartLink" not in defs:
                    raise FormatError("no PajeStartLink event definition: not a Paje trace of SMPI", path=path)
                fields = defs["PajeStartLink"][1]
                if "Key" not in fields or "Size" not in fields:
                    raise FormatError("PajeStartLink has no Key and Size fields (run with "
                                      "--cfg=tracing/smpi/display-sizes:yes)", path=path, line=lineno)
                for kind, event, need in (("link", "PajeStartLink", ("StartContainer", "Key", "Size")),
                                          ("push", "PajePushState", ("Container", "Value")),
                                          ("pop", "PajePopState", ("Container",)),
                                          ("value", "PajeDefineEntityValue", ("Alias", "Name"))):
                    if event in defs and all(x in defs[event][1] for x in need):
                        kind_of[defs[event][0]] = kind
                        for x in need:
                            col[kind, x] = 1 + defs[event][1].index(x)
                wanted = tuple(f"{k} " for k in kind_of)
            if not line.startswith(wanted):  # ends of links, variables...: not split
                continue
            p = line.split()
            kind = kind_of.get(p[0]) if p else None
            if kind is None:
                continue
            link = None
            try:
                if kind == "push":
                    stack.setdefault(p[col["push", "Container"]], []).append(
                        [names.get(p[col["push", "Value"]]), None, 0])
                elif kind == "pop":
                    calls = stack.get(p[col["pop", "Container"]])
                    if calls:
                        call, link, at = calls.pop()
                        name = call[5:].lower().replace("_", "") if call else None
                        if name in COLLECTIVE_CALLS:
                            summary["collectives"][name] = summary["collectives"].get(name, 0) + 1
                elif kind == "value":
                    names[p[col["value", "Alias"]]] = p[col["value", "Name"]].strip('"')
                else:
                    key, size = p[col["link", "Key"]], int(p[col["link", "Size"]])
                    src, dst, tag = (int(x) for x in key.split("_")[:3])
                    link, at = (src - 1, dst - 1, tag, size), lineno
                    calls = stack.get(p[col["link", "StartContainer"]])
                    if tag >= 0 and calls and calls[-1][0] in _ONE_SEND:
                        calls[-1][1:] = link, lineno  # counted when the call ends
                        link = None
            except (ValueError, IndexError):
                raise FormatError(f"not an SMPI Paje trace line: {line.strip()[:60]!r}", path=path,
                                  line=lineno) from None
            if link is not None:
                add(link, at)
    if not kind_of:
        raise FormatError("no PajeStartLink event definition: not a Paje trace of SMPI", path=path)
    if not acc:
        return CommGraph(nprocs, [], []), summary
    keys = np.array(list(acc.keys()), dtype=np.int64)
    return CommGraph(nprocs, keys[:, 0], keys[:, 1], np.array(list(acc.values()), dtype=np.float64)), summary
