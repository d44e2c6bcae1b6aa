"""Communication-graph sources: files (edge lists, Matrix Market) and generated patterns.

:func:`load_graph` takes one spec string:

* ``stencil:16x16x16`` -- periodic 3D 7-point stencil (``stencil:64x64``: 2D 5-point; any number of
  dimensions), every process exchanging one unit with each neighbour in both directions;
* ``torus-scrambled:8x8:SEED`` -- the same pattern with process labels shuffled (the mapping has to
  find the torus again);
* ``random:P:DEGREE:SEED`` -- a random graph with ``P`` processes and about ``DEGREE`` neighbours each;
* a path to an edge-list file (``src dst [weight]`` per line, 0-based, ``#`` comments);
* a path to a Matrix Market file (``.mtx``): the nonzero pattern of a sparse matrix as the
  communication of a row-distributed SpMV, one process per row (``A[i, j] != 0``: ``j`` sends to ``i``);
* the prefix or directory of Open MPI monitoring files (``PREFIX.<rank>.prof``), the bytes each
  rank sent (:func:`~libtopomap.graphfiles.read_ompi_monitoring`);
* ``matrix:FILE``, or a file whose first row has more than three entries or whose name ends in
  ``.mat``: a dense ``N x N`` communication matrix as TreeMatch and TopoMatch read it
  (:func:`~libtopomap.graphfiles.read_comm_matrix`).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .commgraph import CommGraph
from .errors import CommGraphError, FormatError
from .generators.grid import grid_links, parse_dims

__all__ = ["load_graph", "stencil", "stencil_dims", "scrambled_torus", "random_graph", "read_edge_list",
           "read_matrix_market"]


def stencil(dims, periodic=True):
    """Nearest-neighbour stencil over a process grid (2D 5-point, 3D 7-point, ...).

    Parameters
    ----------
    dims : str or sequence of int
        Grid size, e.g. ``"16x16x16"``; process ``i`` sits at ``np.unravel_index(i, dims)``.
    periodic : bool
        Wrap around in every dimension (a dimension of size 2 has one neighbour, not two).

    Returns
    -------
    CommGraph
        Unit weight in both directions of every neighbour pair.

    Examples
    --------
    >>> stencil("4x4").n_edges
    64
    """
    try:
        dims = parse_dims(dims)
    except Exception as e:
        raise CommGraphError(str(e)) from None
    n, p = grid_links(dims, wrap=periodic)
    return CommGraph(n, np.concatenate([p[:, 0], p[:, 1]]), np.concatenate([p[:, 1], p[:, 0]]))


def stencil_dims(P, ndim=3):
    """The most nearly cubic process grid with exactly ``P`` points in ``ndim`` dimensions.

    For a stencil on a machine that is not a grid (a fat tree, a dragonfly), where the job size is
    known but not its shape.  Like ``MPI_Dims_create`` with no fixed dimension, but exact: among
    all factorisations ``P = d_1 x ... x d_ndim`` it returns the one with the smallest largest
    dimension, then the smallest second one, and so on (so the fewest boundary points).

    Parameters
    ----------
    P : int
        Number of processes, ``P >= 1``.
    ndim : int
        Number of grid dimensions, ``ndim >= 1``.

    Returns
    -------
    tuple of int
        ``ndim`` sizes in non-increasing order whose product is ``P`` (a prime ``P`` gives
        ``(P, 1, ..., 1)``).

    Raises
    ------
    CommGraphError
        ``P < 1`` or ``ndim < 1``.

    Examples
    --------
    >>> stencil_dims(32768)
    (32, 32, 32)
    >>> stencil_dims(65536)
    (64, 32, 32)
    >>> "x".join(map(str, stencil_dims(24, 2)))
    '6x4'
    """
    P, ndim = int(P), int(ndim)
    if P < 1 or ndim < 1:
        raise CommGraphError(f"stencil_dims needs P >= 1 and ndim >= 1, got P={P}, ndim={ndim}")
    small = [d for d in range(1, int(P ** 0.5) + 1) if P % d == 0]
    divisors = sorted(set(small + [P // d for d in small]))
    best = None

    def search(rest, k, upper, acc):
        # dims in non-increasing order, each <= upper; the last one takes what is left
        nonlocal best
        if k == 1:
            if rest <= upper:
                cand = tuple(acc + [rest])
                if best is None or cand < best:
                    best = cand
            return
        for d in divisors:
            if d ** k < rest or rest % d:  # the largest of k factors is at least rest ** (1/k)
                continue
            if d > upper or (best is not None and d > best[len(acc)]):
                break
            search(rest // d, k - 1, d, acc + [d])

    search(P, ndim, P, [])
    return best


def scrambled_torus(dims, seed=None):
    """A periodic stencil whose process labels are a random permutation (``seed``).

    Mapped onto a torus of the same ``dims``, the optimum puts every pair on neighbouring vertices:
    total hops (each undirected pair once) = number of torus links.
    """
    g = stencil(dims, periodic=True)
    perm = np.random.default_rng(seed).permutation(g.n)
    return CommGraph(g.n, perm[g.src], perm[g.dst], g.weights)


def random_graph(P, degree, seed=None):
    """A random symmetric communication graph: every process picks ``ceil(degree / 2)`` random
    partners (no self-edges), unit volume both ways, so the mean degree is about ``degree``."""
    P, degree = int(P), int(degree)
    if P < 1:
        raise CommGraphError(f"random graph needs P >= 1, got {P}")
    if degree < 0:
        raise CommGraphError(f"random graph needs degree >= 0, got {degree}")
    rng = np.random.default_rng(seed)
    if P == 1 or degree == 0:
        return CommGraph(P, [], [])
    k = (degree + 1) // 2
    src = np.repeat(np.arange(P), k)
    dst = (src + rng.integers(1, P, size=src.size)) % P
    return CommGraph(P, np.concatenate([src, dst]), np.concatenate([dst, src]))


def read_edge_list(path):
    """Read ``src dst [weight]`` lines (0-based; blank lines and ``#`` comments skipped).

    Raises
    ------
    FormatError
        ``file:line:`` and what is wrong (too few/many fields, non-integer id, bad weight).

    Notes
    -----
    A file without comments whose lines all have two fields, or all three, is parsed by numpy in
    bulk (a 1.5-million-edge file in about a second); anything else, and any file with an error,
    goes through the line-by-line reader, which finds and reports the first bad line.
    """
    fast = _read_edge_list_fast(path)
    if fast is not None:
        return fast
    src, dst, w = [], [], []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) not in (2, 3):
                raise FormatError(f"expected 'src dst [weight]', got {len(parts)} fields", path=path, line=lineno)
            try:
                u, v = int(parts[0]), int(parts[1])
            except ValueError:
                raise FormatError(f"process ids must be integers, got {parts[0]!r} {parts[1]!r}",
                                  path=path, line=lineno) from None
            if u < 0 or v < 0:
                raise FormatError(f"process ids are 0-based and non-negative, got {u} {v}", path=path, line=lineno)
            x = 1.0
            if len(parts) == 3:
                try:
                    x = float(parts[2])
                except ValueError:
                    raise FormatError(f"weight must be a number, got {parts[2]!r}", path=path, line=lineno) from None
                if not np.isfinite(x) or x < 0:
                    raise FormatError(f"weight must be finite and >= 0, got {parts[2]!r}", path=path, line=lineno)
            src.append(u), dst.append(v), w.append(x)
    if not src:
        raise FormatError("no edges in the file", path=path)
    n = max(max(src), max(dst)) + 1
    return CommGraph(n, np.array(src, np.int64), np.array(dst, np.int64), np.array(w))


def _read_edge_list_fast(path):
    """Bulk parse of a well-formed edge list; ``None`` when the line-by-line reader must decide."""
    with open(path, "rb") as f:
        data = f.read()
    if b"#" in data or not data.strip():
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ids = np.loadtxt(path, ndmin=2, dtype=np.int64, usecols=(0, 1))
            fields = len(data.split())
            if fields == 2 * ids.shape[0]:
                w = np.ones(ids.shape[0])
            elif fields == 3 * ids.shape[0]:  # and every line has a third field: exactly three each
                w = np.loadtxt(path, ndmin=1, dtype=np.float64, usecols=(2,))
            else:
                return None
    except (ValueError, IndexError):
        return None
    if ids.shape[0] == 0 or w.shape != (ids.shape[0],) or ids.min() < 0 or not np.all(np.isfinite(w) & (w >= 0)):
        return None
    return CommGraph(int(ids.max()) + 1, ids[:, 0], ids[:, 1], w)


def read_matrix_market(path):
    """The SpMV pattern of a Matrix Market matrix: ``A[i, j] != 0`` (i != j) means process ``j`` sends
    one unit (its vector entry) to process ``i``.

    Raises
    ------
    FormatError
        Not a readable square Matrix Market file.
    """
    import scipy.io
    import scipy.sparse as sp

    try:
        a = scipy.io.mmread(path)
    except (ValueError, IndexError, TypeError) as e:
        raise FormatError(f"not a Matrix Market file: {e}", path=path) from None
    a = sp.coo_matrix(a)
    if a.shape[0] != a.shape[1]:
        raise FormatError(f"SpMV pattern needs a square matrix, got {a.shape[0]}x{a.shape[1]}", path=path)
    keep = (a.row != a.col) & (a.data != 0)
    return CommGraph(a.shape[0], a.col[keep], a.row[keep])


def _int(text, what, spec):
    try:
        return int(text)
    except ValueError:
        raise CommGraphError(f"graph spec {spec!r}: {what} must be an integer, got {text!r}") from None


def load_graph(spec, *, messages="external"):
    """A communication graph from a spec string (see the module docstring) or a file path.

    Parameters
    ----------
    spec : str or os.PathLike
    messages : {"external", "internal", "all"}
        For Open MPI monitoring files: the program's own messages (``E`` lines), the library's
        internal ones (``I`` lines), or both.

    Returns
    -------
    CommGraph

    Raises
    ------
    CommGraphError
        A malformed generated-pattern spec.
    FormatError
        A bad file (the message starts with ``file:line:``).
    FileNotFoundError
        Neither a pattern nor an existing file.

    Examples
    --------
    >>> load_graph("stencil:4x4x4").n
    64
    """
    s = os.fspath(spec)
    head, _, rest = s.partition(":")
    if not os.path.exists(s) and head in ("stencil", "torus-scrambled", "random"):
        fields = rest.split(":") if rest else []
        if head == "stencil":
            if len(fields) != 1:
                raise CommGraphError(f"graph spec {s!r}: expected stencil:DIMS, e.g. stencil:16x16x16")
            return stencil(fields[0], periodic=True)
        if head == "torus-scrambled":
            if len(fields) not in (1, 2):
                raise CommGraphError(f"graph spec {s!r}: expected torus-scrambled:DIMS[:SEED]")
            seed = _int(fields[1], "SEED", s) if len(fields) == 2 else 0
            return scrambled_torus(fields[0], seed)
        if len(fields) not in (2, 3):
            raise CommGraphError(f"graph spec {s!r}: expected random:P:DEGREE[:SEED]")
        seed = _int(fields[2], "SEED", s) if len(fields) == 3 else 0
        return random_graph(_int(fields[0], "P", s), _int(fields[1], "DEGREE", s), seed)
    from . import graphfiles

    if head == "matrix" and rest and not os.path.exists(s):
        if not os.path.isfile(rest):
            raise FileNotFoundError(2, "no such matrix file", rest)
        return graphfiles.read_comm_matrix(rest)
    if os.path.isdir(s) or not os.path.exists(s):
        if graphfiles.monitoring_files(s):
            return graphfiles.read_ompi_monitoring(s, messages=messages)
        what = "directory without monitoring files" if os.path.isdir(s) else "no such file"
        raise FileNotFoundError(2, f"{what} (and not a pattern such as stencil:8x8x8, nor the prefix of "
                                   "Open MPI monitoring files PREFIX.<rank>.prof)", s)
    with open(s, "rb") as f:
        first = f.read(14)
    if first.startswith(b"%%MatrixMarket") or s.endswith(".mtx"):
        return read_matrix_market(s)
    if s.endswith(".mat") or _first_row_fields(s) > 3:
        return graphfiles.read_comm_matrix(s)
    return read_edge_list(s)


def _first_row_fields(path):
    """Number of fields on the first non-blank, non-comment line (0 for none), reading at most 1 MiB."""
    with open(path, encoding="utf-8", errors="replace") as f:
        while True:
            line = f.readline(1 << 20)
            if not line:
                return 0
            fields = line.split("#", 1)[0].split()
            if fields:
                return len(fields)
