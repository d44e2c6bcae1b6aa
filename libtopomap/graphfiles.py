"""Communication graphs measured or written by other tools: Open MPI's ``pml/monitoring`` output
(:func:`read_ompi_monitoring`) and the ``N x N`` matrices of TreeMatch and TopoMatch
(:func:`read_comm_matrix`); both raise :class:`~libtopomap.FormatError` naming the file and line.
The file layouts: docs/formats.rst, "Communication graphs: specs and files of other tools".
"""

from __future__ import annotations

import os
import re

import numpy as np

from ._limits import MAX_VERTICES, check_vertex_count
from .commgraph import CommGraph, warn_self_loops
from .errors import ArgumentError, FormatError

__all__ = ["read_ompi_monitoring", "monitoring_files", "read_comm_matrix", "MONITORING_MESSAGES",
           "MAX_PROCESSES"]

#: Default largest number of processes a file may describe (checked before anything of that size is
#: allocated): the library's one vertex limit (``--max-vertices``, ``$LIBTOPOMAP_MAX_VERTICES``).
MAX_PROCESSES = MAX_VERTICES
#: ``messages=`` choices of :func:`read_ompi_monitoring` and the line kinds each one reads.
MONITORING_MESSAGES = {"external": ("E",), "internal": ("I",), "all": ("E", "I")}

_PROF = re.compile(r"^(?P<prefix>.*)\.(?P<rank>0|[1-9][0-9]*)\.prof$")
_INT = re.compile(r"^(0|[1-9][0-9]*)$")


def monitoring_files(spec):
    """The ``PREFIX.<rank>.prof`` files of one monitored run, in rank order.

    Parameters
    ----------
    spec : str or os.PathLike
        The prefix given to ``pml_monitoring_filename`` (``out/run`` for ``out/run.0.prof``...), or a
        directory holding the files of exactly one prefix.

    Returns
    -------
    list of str
        ``files[r]`` is rank ``r``'s file; an empty list when ``spec`` names no such file.

    Raises
    ------
    FormatError
        A directory with files of several prefixes, or ranks missing (``0..N-1`` must all be there).
    """
    spec = os.fspath(spec)
    if os.path.isdir(spec):
        folder, base = spec, None
    else:
        folder, base = os.path.dirname(spec) or ".", os.path.basename(spec)
        if not os.path.isdir(folder):
            return []
    found = {}
    for entry in os.listdir(folder):
        m = _PROF.match(entry)
        if m is None or (base is not None and m.group("prefix") != base):
            continue
        found.setdefault(m.group("prefix"), {})[int(m.group("rank"))] = os.path.join(folder, entry)
    if not found:
        return []
    if len(found) > 1:
        names = ", ".join(sorted(found)[:5])
        raise FormatError(f"files of {len(found)} monitored runs here ({names}); give the prefix of one",
                          path=spec)
    (prefix, ranks), = found.items()
    n = len(ranks)
    check_vertex_count(n, "the monitored run", path=spec, unit="processes")
    missing = sorted(set(range(n)) - set(ranks))
    if missing:  # n files but not ranks 0..n-1: some rank below max(ranks) is absent
        raise FormatError(f"no file for rank {missing[0]} ({prefix}.{missing[0]}.prof) although "
                          f"{max(ranks)} is there; the ranks must be 0..N-1", path=spec)
    return [ranks[r] for r in range(n)]


def read_ompi_monitoring(spec, *, messages="external"):
    """The communication graph measured by Open MPI's ``pml/monitoring`` component.

    Parameters
    ----------
    spec : str or os.PathLike
        The monitoring prefix or the directory of the ``PREFIX.<rank>.prof`` files (see
        :func:`monitoring_files`).
    messages : {"external", "internal", "all"}
        ``"external"`` reads the ``E`` lines (what the program sent), ``"internal"`` the ``I``
        lines (what the library sent inside collectives...), ``"all"`` both, summed.

    Returns
    -------
    CommGraph
        ``N`` processes (one per file), ``w(src, dst)`` = bytes sent from ``src`` to ``dst``.

    Raises
    ------
    FormatError
        ``file:line:`` and what is wrong: a point-to-point line that does not read
        ``E|I src dst <bytes> bytes <count> msgs sent ...``, a source that is not the file's
        rank, a destination outside ``0..N-1``, a negative or non-integer count; or no file at all.
    ArgumentError
        An unknown ``messages``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "run.0.prof").write_text("# POINT TO POINT\\nE\\t0\\t1\\t800 bytes\\t2 msgs sent\\t0,2\\n")
    >>> _ = (d / "run.1.prof").write_text("# POINT TO POINT\\nE\\t1\\t0\\t80 bytes\\t1 msgs sent\\n")
    >>> g = read_ompi_monitoring(d / "run")
    >>> g.n, g.to_scipy().toarray().tolist()
    (2, [[0.0, 800.0], [80.0, 0.0]])
    """
    if messages not in MONITORING_MESSAGES:
        raise ArgumentError(f"messages must be one of {', '.join(MONITORING_MESSAGES)}, got {messages!r}")
    kinds = MONITORING_MESSAGES[messages]
    files = monitoring_files(spec)
    if not files:
        raise FormatError("no Open MPI monitoring files (PREFIX.<rank>.prof) for this prefix or directory",
                          path=os.fspath(spec))
    n = len(files)
    src, dst, vol = [], [], []
    for rank, path in enumerate(files):
        if not os.path.isfile(path):  # a FIFO named run.0.prof would block, a device never ends
            raise FormatError("not a regular file", path=path)
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                kind = line[:2].rstrip()
                if kind not in ("E", "I"):
                    continue  # comments, headers and the one-sided / collective sections
                u, v, b = _monitoring_line(line, path, lineno, rank, n)
                if u == v:
                    warn_self_loops(path, lineno, u, 1)
                if kind in kinds:
                    src.append(u), dst.append(v), vol.append(b)
    return CommGraph(n, np.array(src, np.int64), np.array(dst, np.int64), np.array(vol, np.float64))


def _monitoring_line(line, path, lineno, rank, n):
    f = line.split()
    if len(f) < 8 or f[4] != "bytes" or f[6] != "msgs" or f[7] != "sent":
        raise FormatError(f"expected '{f[0]} <src> <dst> <bytes> bytes <count> msgs sent', got {line.strip()[:60]!r}",
                          path=path, line=lineno)
    for k, what in ((1, "source"), (2, "destination"), (3, "byte count"), (5, "message count")):
        if not _INT.match(f[k]):
            raise FormatError(f"{what} must be a non-negative integer, got {f[k]!r}", path=path, line=lineno)
    u, v, b = int(f[1]), int(f[2]), int(f[3])
    if u != rank:
        raise FormatError(f"source {u} in the file of rank {rank}", path=path, line=lineno)
    if v >= n:
        raise FormatError(f"destination {v} outside 0..{n - 1} ({n} monitoring files)", path=path, line=lineno)
    return u, v, b


def read_comm_matrix(path):
    """A dense ``N x N`` communication matrix file (TreeMatch / TopoMatch input), kept sparse.

    Parameters
    ----------
    path : str or os.PathLike
        ``N`` lines of ``N`` blank-separated numbers; entry ``(i, j)`` is the volume process ``i``
        sends to ``j``.  Blank lines and ``#`` comments are skipped.

    Returns
    -------
    CommGraph
        The nonzero entries (the diagonal too: it costs nothing).

    Raises
    ------
    FormatError
        ``file:line:`` and what is wrong: a row with other than ``N`` entries (``N`` is the length
        of the first row), a value that is not a finite number ``>= 0``, more or fewer than ``N``
        rows, ``N`` above the vertex limit (``--max-vertices``), or a file too short to hold ``N`` rows.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "comm.mat")
    >>> _ = open(p, "w").write("0 5 0\\n5 0 1\\n0 1 0\\n")
    >>> g = read_comm_matrix(p)
    >>> g.n, g.n_edges, float(g.weights.sum())
    (3, 4, 12.0)
    """
    path = os.fspath(path)
    if not os.path.isfile(path):  # a device or a FIFO: no size to check, maybe no end (/dev/zero)
        raise FormatError("not a regular file", path=path)
    size = os.path.getsize(path)
    n = None
    rows, cols, vals = [], [], []
    loops = []  # (line, process) of the non-zero diagonal entries
    row = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            text = line.split("#", 1)[0]
            tokens = text.split()
            if not tokens:
                continue
            if n is None:
                n = len(tokens)
                check_vertex_count(n, "the matrix", path=path, line=lineno,
                                   unit="processes")
                # N rows of N entries of at least one character each (checked before reading them)
                if size < n * n:
                    raise FormatError(f"a {n} x {n} matrix needs at least {n * n} bytes, the file has {size}",
                                      path=path, line=lineno)
            if row >= n:
                raise FormatError(f"more than {n} rows (the first row has {n} entries)", path=path, line=lineno)
            if len(tokens) != n:
                raise FormatError(f"row {row} has {len(tokens)} entries, expected {n}", path=path, line=lineno)
            try:
                values = np.array(tokens, dtype=np.float64)
            except ValueError:
                bad = next(t for t in tokens if not _is_float(t))
                raise FormatError(f"entry {tokens.index(bad)} is not a number: {bad[:30]!r}",
                                  path=path, line=lineno) from None
            wrong = np.flatnonzero(~np.isfinite(values) | (values < 0))
            if wrong.size:
                k = int(wrong[0])
                raise FormatError(f"entry {k} is {tokens[k][:30]!r}; volumes must be finite and >= 0",
                                  path=path, line=lineno)
            nz = np.flatnonzero(values)
            rows.append(np.full(nz.size, row, np.int64)), cols.append(nz), vals.append(values[nz])
            if values[row] != 0:
                loops.append((lineno, row))
            row += 1
    if n is None:
        raise FormatError("empty matrix file", path=path)
    if row != n:
        raise FormatError(f"{row} rows, expected {n} (the first row has {n} entries)", path=path)
    if loops:
        warn_self_loops(path, loops[0][0], loops[0][1], len(loops))
    return CommGraph(n, np.concatenate(rows), np.concatenate(cols), np.concatenate(vals))


def _is_float(text):
    try:
        float(text)
    except ValueError:
        return False
    return True
