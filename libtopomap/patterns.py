"""Communication-graph sources: files (edge lists, Matrix Market) and generated patterns.

:func:`load_graph` takes one spec string: ``stencil:16x16x16``, ``torus-scrambled:8x8:SEED``,
``random:P:DEGREE:SEED``, the traffic patterns of Mehta 2005 (section 3.5.4) and Camarero et al.
(section 5.1), or a file (edge list, ``.mtx``, Open MPI monitoring, ``matrix:FILE``).  Every spec:
docs/formats.rst, "Communication graphs: specs and files of other tools".
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

from ._limits import MAX_VERTICES, check_edge_count, check_vertex_count, max_vertices
from ._textio import content_lines, read_text
from .commgraph import CommGraph, warn_self_loops
from .errors import CommGraphError, FormatError
from .generators.grid import grid_links, parse_dims
from .validation import check_seed

#: Default largest number of processes a graph file may define (ids are 0-based, so the largest id
#: plus one): the library's one vertex limit (``--max-vertices``, ``$LIBTOPOMAP_MAX_VERTICES``).
MAX_PROCESSES = MAX_VERTICES


def max_processes():
    """The process limit of the graph readers: :func:`libtopomap._limits.max_vertices`."""
    return max_vertices()


def _check_size(n, path, line=None):
    """Raise FormatError before allocating for ``n`` processes beyond :func:`max_processes`."""
    check_vertex_count(n, "the graph", path=path, line=line, unit="processes")


def _check_messages(n, messages, what, unit="messages"):
    """Raise CommGraphError before allocating ``n`` processes with ``messages`` messages (or edges) each
    beyond the vertex or the edge limit (:mod:`libtopomap._limits`)."""
    check_vertex_count(n, what, error=CommGraphError, unit="processes")
    check_edge_count(n * messages, f"{what} with {messages} {unit} per process", error=CommGraphError, unit=unit)

__all__ = ["load_graph", "stencil", "stencil_dims", "scrambled_torus", "random_graph", "read_edge_list",
           "read_matrix_market", "shift_traffic", "ring_traffic", "bit_transpose_traffic", "bit_reversal_traffic",
           "bit_complement_traffic", "uniform_traffic", "local_global_traffic"]


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
    perm = np.random.default_rng(check_seed(seed)).permutation(g.n)
    return CommGraph(g.n, perm[g.src], perm[g.dst], g.weights)


def random_graph(P, degree, seed=None):
    """A random symmetric communication graph: every process picks ``ceil(degree / 2)`` random
    partners (no self-edges), unit volume both ways, so the mean degree is about ``degree``."""
    P, degree = int(P), int(degree)
    if P < 1:
        raise CommGraphError(f"random graph needs P >= 1, got {P}")
    if degree < 0 or degree > 2 * P:
        raise CommGraphError(f"random graph needs 0 <= degree <= 2P, got {degree} for P = {P}")
    _check_messages(P, 2 * ((degree + 1) // 2), f"random graph({P}, {degree})", unit="edges")
    rng = np.random.default_rng(check_seed(seed))
    if P == 1 or degree == 0:
        return CommGraph(P, [], [])
    k = (degree + 1) // 2
    src = np.repeat(np.arange(P), k)
    dst = (src + rng.integers(1, P, size=src.size)) % P
    return CommGraph(P, np.concatenate([src, dst]), np.concatenate([dst, src]))


# ----------------------------------------------------------------- synthetic traffic (Mehta 2005; Camarero et al.)
# Each function returns the messages one round of the pattern sends: unit weight per message.  The
# permutations of Mehta 2005, section 3.5.4 are deterministic; the random patterns are sampled with
# ``seed`` (``messages`` draws per process) rather than given as expected weights, because the
# expected graph of a uniform pattern is complete: P**2 edges, 6.9e10 for 262,144 processes.


def _power_of_two(n, what):
    n = int(n)
    if n < 2 or n & (n - 1):
        raise CommGraphError(f"{what} traffic needs a power of two >= 2 processes, got {n}")
    return n, n.bit_length() - 1


def _permutation_graph(n, dst):
    src = np.arange(n, dtype=np.int64)
    keep = dst != src  # a process that would send to itself sends nothing over the network
    return CommGraph(n, src[keep], dst[keep])


def shift_traffic(n, k=1):
    """The *k-shift* pattern: process ``i`` sends one message to ``(i + k) mod n`` (Mehta 2005, section 3.5.4).

    Parameters
    ----------
    n : int
        Processes, ``n >= 1``.
    k : int
        Shift; any integer (``k = 1`` is the *ring* pattern; a multiple of ``n`` sends nothing).

    Returns
    -------
    CommGraph
        ``n`` unit edges (none when ``k mod n == 0``).

    Examples
    --------
    >>> g = shift_traffic(5, 2)
    >>> g.src.tolist(), g.indices.tolist()
    ([0, 1, 2, 3, 4], [2, 3, 4, 0, 1])
    """
    n, k = int(n), int(k)
    if n < 1:
        raise CommGraphError(f"shift traffic needs n >= 1 processes, got {n}")
    return _permutation_graph(n, (np.arange(n, dtype=np.int64) + k) % n)


def ring_traffic(n):
    """The *ring* pattern of Mehta 2005, section 3.5.4: the 1-shift, ``i -> (i + 1) mod n``."""
    return shift_traffic(n, 1)


def bit_transpose_traffic(n):
    """The *bit transpose* pattern: the destination's address is the source's with its two halves swapped.

    With ``b = log2(n)`` address bits, destination bit ``i`` is source bit ``(i + b/2) mod b``.
    Mehta 2005 (section 3.5.4) prints ``mod N``; rotating bit indices only makes sense ``mod b``,
    which is what is implemented.  ``b`` must be even (the thesis does not say what an odd ``b``
    means); addresses whose halves are equal send to themselves and are left out.

    Parameters
    ----------
    n : int
        Processes: ``4**j`` for some ``j >= 1``.

    Returns
    -------
    CommGraph

    Examples
    --------
    >>> g = bit_transpose_traffic(16)  # 0b0111 -> 0b1101
    >>> int(g.indices[g.indptr[7]])
    13
    """
    n, b = _power_of_two(n, "bit transpose")
    if b % 2:
        raise CommGraphError(f"bit transpose traffic needs an even number of address bits (n = 4**j), got n = {n}")
    i = np.arange(n, dtype=np.int64)
    h = b // 2
    low = (1 << h) - 1
    return _permutation_graph(n, ((i & low) << h) | (i >> h))


def bit_reversal_traffic(n):
    """The *bit reversal* pattern: destination bit ``i`` is source bit ``b - i - 1`` (``b = log2(n)``).

    Palindromic addresses send to themselves and are left out (Mehta 2005, section 3.5.4).

    Examples
    --------
    >>> g = bit_reversal_traffic(8)
    >>> [(int(s), int(d)) for s, d in zip(g.src, g.indices)]
    [(1, 4), (3, 6), (4, 1), (6, 3)]
    """
    n, b = _power_of_two(n, "bit reversal")
    i = np.arange(n, dtype=np.int64)
    dst = np.zeros(n, dtype=np.int64)
    for j in range(b):
        dst |= ((i >> j) & 1) << (b - 1 - j)
    return _permutation_graph(n, dst)


def bit_complement_traffic(n):
    """The *bit complement* pattern: process ``i`` sends to ``~i`` on ``log2(n)`` bits, i.e. ``n - 1 - i``
    (Mehta 2005, section 3.5.4)."""
    n, _ = _power_of_two(n, "bit complement")
    return _permutation_graph(n, (n - 1) - np.arange(n, dtype=np.int64))


def uniform_traffic(n, messages=1, *, seed=None):
    """*Uniform distribution* traffic: every process sends ``messages`` messages, each to a uniformly
    random *other* process (Mehta 2005, section 3.5.4), sampled with ``seed``.

    Parameters
    ----------
    n : int
        Processes, ``n >= 2``.
    messages : int
        Messages per process (``>= 0``); weights count repeated destinations.
    seed : int, optional

    Returns
    -------
    CommGraph
        Total weight ``n * messages``, no self edges.
    """
    n, messages = int(n), int(messages)
    if n < 2:
        raise CommGraphError(f"uniform traffic needs n >= 2 processes, got {n}")
    if messages < 0:
        raise CommGraphError(f"messages must be >= 0, got {messages}")
    _check_messages(n, messages, f"uniform traffic({n})")
    rng = np.random.default_rng(check_seed(seed))
    src = np.repeat(np.arange(n, dtype=np.int64), messages)
    return CommGraph(n, src, (src + rng.integers(1, n, size=src.size)) % n)


def local_global_traffic(dims, alpha, messages=1, *, seed=None):
    """Local/global synthetic traffic of Camarero et al. (section 5.1), sampled with ``seed``.

    Every process of the periodic process grid ``dims`` sends ``messages`` messages.  Each is
    *local* with probability ``alpha``, to one of its grid neighbours (``2 * len(dims)`` directions
    ``+-1`` per dimension, uniformly; the 4 logical neighbours of a 2D grid), and otherwise *global*,
    to a uniformly random process of the whole job, itself included ("distributed evenly along the
    whole network", section 4.1: the model of section 3.2 averages global distances over all ``N``
    destinations, Table 1, so a self draw is kept as a zero-hop self edge).

    Parameters
    ----------
    dims : str or sequence of int
        Process grid, e.g. ``"8x16"``: process ``i`` at ``np.unravel_index(i, dims)`` (the paper's
        logical ``R(m, n)`` torus, ``x`` fastest, is ``f"{n}x{m}"``).  Dimensions of size 1 have no
        neighbours and are skipped; on one of size 2 both directions reach the same process.
    alpha : float
        Proportion of local messages, ``0 <= alpha <= 1``.
    messages : int
        Messages per process (``>= 0``).
    seed : int, optional

    Returns
    -------
    CommGraph
        Weights count messages; total ``P * messages``.

    Notes
    -----
    The expected weights (``alpha / (2 ndim)`` per neighbour plus ``(1 - alpha) / P`` to every
    process) form a complete graph, so they are not offered as a source; they follow by linearity
    from :func:`stencil` and the all-pairs pattern where ``P`` is small (``benchmarks/bench_twisted.py``).

    Examples
    --------
    >>> g = local_global_traffic("8x16", 1.0, messages=4, seed=0)  # alpha = 1: neighbours only
    >>> float(g.weights.sum()), bool(set(g.indices[g.indptr[0]:g.indptr[1]].tolist()) <= {1, 15, 16, 112})
    (512.0, True)
    """
    try:
        dims = parse_dims(dims)
    except Exception as e:
        raise CommGraphError(str(e)) from None
    alpha, messages = float(alpha), int(messages)
    if not 0.0 <= alpha <= 1.0:
        raise CommGraphError(f"alpha must be in [0, 1], got {alpha}")
    if messages < 0:
        raise CommGraphError(f"messages must be >= 0, got {messages}")
    n = math.prod(dims)
    _check_messages(n, messages, f"local-global traffic({'x'.join(map(str, dims))})")
    rng = np.random.default_rng(check_seed(seed))
    src = np.repeat(np.arange(n, dtype=np.int64), messages)
    dst = rng.integers(0, n, size=src.size)  # global draws
    axes = [ax for ax, k in enumerate(dims) if k > 1]
    local = rng.random(src.size) < alpha
    if axes and local.any():
        s = src[local]
        direction = rng.integers(0, 2 * len(axes), size=s.size)
        coords = list(np.unravel_index(s, dims))
        for j, ax in enumerate(axes):
            for sign in (1, -1):
                sel = direction == 2 * j + (sign < 0)
                coords[ax][sel] = (coords[ax][sel] + sign) % dims[ax]
        dst[local] = np.ravel_multi_index(coords, dims)
    return CommGraph(n, src, dst)


#: Traffic patterns ``load_graph`` accepts: name -> (spec syntax, function, its integer fields).
_TRAFFIC = {
    "k-shift": ("k-shift:N:K", lambda f: shift_traffic(f[0], f[1]), 2, 2),
    "ring": ("ring:N", lambda f: ring_traffic(f[0]), 1, 1),
    "bit-transpose": ("bit-transpose:N", lambda f: bit_transpose_traffic(f[0]), 1, 1),
    "bit-reversal": ("bit-reversal:N", lambda f: bit_reversal_traffic(f[0]), 1, 1),
    "bit-complement": ("bit-complement:N", lambda f: bit_complement_traffic(f[0]), 1, 1),
    "uniform": ("uniform:N[:MESSAGES[:SEED]]", lambda f: uniform_traffic(*f[:2], seed=f[2] if len(f) > 2 else 0),
                1, 3),
}


def _traffic_spec(head, rest, spec):
    """A traffic pattern from its spec (``bit-reversal:1024``, ``local-global:8x16:0.5:4:1``, ...)."""
    fields = rest.split(":") if rest else []
    if head == "local-global":
        if not 2 <= len(fields) <= 4:
            raise CommGraphError(f"graph spec {spec!r}: expected local-global:DIMS:ALPHA[:MESSAGES[:SEED]]")
        try:
            alpha = float(fields[1])
        except ValueError:
            raise CommGraphError(f"graph spec {spec!r}: ALPHA must be a number, got {fields[1]!r}") from None
        ints = [_int(x, what, spec) for x, what in zip(fields[2:], ("MESSAGES", "SEED"))]
        return local_global_traffic(fields[0], alpha, ints[0] if ints else 1, seed=ints[1] if len(ints) > 1 else 0)
    syntax, make, lo, hi = _TRAFFIC[head]
    if not lo <= len(fields) <= hi:
        raise CommGraphError(f"graph spec {spec!r}: expected {syntax}")
    ints = [_int(x, what, spec) for x, what in zip(fields, ("N", "K" if head == "k-shift" else "MESSAGES", "SEED"))]
    check_vertex_count(ints[0], f"graph spec {spec[:40]!r}", error=CommGraphError, unit="processes")
    return make(ints)


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
    loops = []  # (line, process) of the self loops: a warning
    limit = max_processes()
    text = read_text(path)
    for lineno, line in content_lines(text):
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
        if max(u, v) >= limit:
            _check_size(max(u, v) + 1, path, lineno)
        x = 1.0
        if len(parts) == 3:
            try:
                x = float(parts[2])
            except ValueError:
                raise FormatError(f"weight must be a number, got {parts[2]!r}", path=path, line=lineno) from None
            if not np.isfinite(x) or x < 0:
                raise FormatError(f"weight must be finite and >= 0, got {parts[2]!r}", path=path, line=lineno)
        src.append(u), dst.append(v), w.append(x)
        if u == v:
            loops.append((lineno, u))
    if not src:
        raise FormatError("no edges in the file", path=path)
    if loops:
        warn_self_loops(path, loops[0][0], loops[0][1], len(loops))
    n = max(max(src), max(dst)) + 1
    return CommGraph(n, np.array(src, np.int64), np.array(dst, np.int64), np.array(w))


def _read_edge_list_fast(path):
    """Bulk parse of a well-formed edge list; ``None`` when the line-by-line reader must decide."""
    if not os.path.isfile(path):
        raise FormatError("not a regular file", path=path)
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
    if ids.max() >= max_processes() or np.any(ids[:, 0] == ids[:, 1]):
        return None  # the line reader names the line (of an error, or of the self loop it warns about)
    return CommGraph(int(ids.max()) + 1, ids[:, 0], ids[:, 1], w)


def read_matrix_market(path):
    """The SpMV pattern of a Matrix Market matrix: ``A[i, j] != 0`` (i != j) means process ``j`` sends
    one unit (its vector entry) to process ``i``.

    Raises
    ------
    FormatError
        Not a readable square Matrix Market file.
    """
    rows, cols, vals, n = _read_mtx(path)
    keep = (rows != cols) & (vals != 0)
    return CommGraph(n, cols[keep], rows[keep])


_MTX_FIELDS = ("real", "integer", "complex", "pattern", "double")
_MTX_SYMMETRY = ("general", "symmetric", "skew-symmetric", "hermitian")


def _read_mtx(path):
    """``(rows, cols, values, n)`` (0-based, ``int64`` / ``float64``) of a square Matrix Market file.

    A reader of its own in numpy, not scipy's native one, which crashes the interpreter on some
    malformed input (a file ending with a lone CR).  Line ends may be LF, CRLF or CR; symmetric
    matrices are expanded; complex values count by their real and imaginary parts.
    """
    if not os.path.isfile(path):
        raise FormatError("not a regular file", path=path)
    lines = read_text(path, hint=": not a Matrix Market file").splitlines()  # LF, CRLF and CR line ends
    if not lines or not lines[0].lower().startswith("%%matrixmarket"):
        raise FormatError("not a Matrix Market file: the first line must be '%%MatrixMarket matrix ...'",
                          path=path, line=1)
    head = lines[0].lower().split()
    if len(head) != 5 or head[1] != "matrix" or head[2] not in ("coordinate", "array") \
            or head[3] not in _MTX_FIELDS or head[4] not in _MTX_SYMMETRY:
        raise FormatError(f"unsupported Matrix Market header {lines[0][:80]!r} (expected '%%MatrixMarket matrix "
                          "coordinate|array real|integer|complex|pattern general|symmetric|...')", path=path, line=1)
    _, _, layout, field, symmetry = head
    body = [(i, ln) for i, ln in enumerate(lines[1:], 2) if ln.strip() and not ln.lstrip().startswith("%")]
    if not body:
        raise FormatError("not a Matrix Market file: no size line", path=path)
    size_line, size_text = body[0]
    want = 3 if layout == "coordinate" else 2
    try:
        dims = [int(x) for x in size_text.split()]
    except ValueError:
        dims = []
    if len(dims) != want or min(dims) < 0:
        raise FormatError(f"expected {want} non-negative integers on the size line, got {size_text[:80]!r}",
                          path=path, line=size_line)
    m, n = dims[0], dims[1]
    if m != n:
        raise FormatError(f"SpMV pattern needs a square matrix, got {m}x{n}", path=path, line=size_line)
    _check_size(n, path, size_line)
    entries = body[1:]
    per = {"pattern": 0, "complex": 2}.get(field, 1)
    if layout == "coordinate":
        nnz = dims[2]
        if len(entries) != nnz:
            raise FormatError(f"the size line announces {nnz} entries, the file has {len(entries)}", path=path,
                              line=size_line)
        rows = np.empty(nnz, np.int64)
        cols = np.empty(nnz, np.int64)
        vals = np.ones(nnz)
        for k, (lineno, text) in enumerate(entries):
            parts = text.split()
            if len(parts) != 2 + per:
                raise FormatError(f"expected {2 + per} fields, got {len(parts)}", path=path, line=lineno)
            try:
                i, j = int(parts[0]), int(parts[1])
                x = [float(p) for p in parts[2:]]
            except ValueError:
                raise FormatError(f"bad entry {text[:80]!r}", path=path, line=lineno) from None
            if not (1 <= i <= n and 1 <= j <= n):
                raise FormatError(f"index ({i}, {j}) outside 1..{n}", path=path, line=lineno)
            if not all(np.isfinite(x)):
                raise FormatError(f"value must be finite, got {text[:80]!r}", path=path, line=lineno)
            rows[k], cols[k] = i - 1, j - 1
            vals[k] = 1.0 if not x else float(np.hypot(*x) if len(x) == 2 else x[0])
    else:
        count = n * n if symmetry == "general" else n * (n + 1) // 2 - (n if symmetry == "skew-symmetric" else 0)
        values = [text.split() for _, text in entries]
        if len(values) != count or any(len(v) != max(per, 1) for v in values):
            raise FormatError(f"expected {count} values of {max(per, 1)} field(s) for a {n}x{n} {symmetry} array",
                              path=path, line=size_line)
        try:
            flat = np.array([float(np.hypot(*map(float, v))) if per == 2 else float(v[0]) for v in values])
        except ValueError:
            raise FormatError("bad value in the array", path=path) from None
        if symmetry == "general":
            cols, rows = np.divmod(np.arange(n * n, dtype=np.int64), n)  # column-major
        else:
            jj, ii = np.triu_indices(n, 1 if symmetry == "skew-symmetric" else 0)
            order = np.lexsort((jj, ii))  # column-major lower triangle: by column, then row
            cols, rows = ii[order], jj[order]
        vals = flat
    if symmetry != "general":
        off = rows != cols
        rows, cols, vals = (np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]]),
                            np.concatenate([vals, vals[off]]))
    return rows, cols, vals, n


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
        Edge weights as the generator or the file gives them.

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

    if (head in _TRAFFIC or head == "local-global") and not os.path.exists(s):
        return _traffic_spec(head, rest, s)
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
    if not os.path.isfile(s):  # a FIFO would block here, a device never ends
        raise FormatError("not a regular file", path=s)
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
