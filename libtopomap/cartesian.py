"""Cartesian process grids without MPI: ``Compute_dims`` and the Cartesian stencil graph.

:func:`Compute_dims` is ``MPI_Dims_create`` (mpi4py's ``MPI.Compute_dims``) as a pure function that,
given a topology, prefers a factorisation that embeds well on it.  :func:`cart_graph` is the
communication graph of a Cartesian communicator (face neighbours, wrap-around where periodic,
optional per-dimension weights) in MPI's row-major rank order, and :func:`cart_neighbors` one rank's
part of it; :func:`libtopomap.Create_cart` maps that graph.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator

import numpy as np

from .errors import ArgumentError, ArgumentTypeError

__all__ = ["Compute_dims", "cart_graph", "cart_neighbors", "check_cart_args"]


# ----------------------------------------------------------------------------------- argument checks
def _as_int(x, what):
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real) and float(x).is_integer():  # mpi4py accepts 6.0
        return int(x)
    try:
        return operator.index(x)
    except TypeError:
        raise ArgumentTypeError(f"{what} must be an integer, got {type(x).__name__} {x!r}") from None


def _int_list(seq, what):
    if isinstance(seq, (str, bytes)):
        raise ArgumentTypeError(f"{what} must be a sequence of integers, got {type(seq).__name__}")
    try:
        items = list(seq)
    except TypeError:
        raise ArgumentTypeError(f"{what} must be a sequence of integers, got {type(seq).__name__}") from None
    return [_as_int(x, f"{what}[{i}]") for i, x in enumerate(items)]


def check_cart_args(size, dims, periods=None, weights=None):
    """Validate ``Create_cart`` arguments for a communicator of ``size`` processes.

    Parameters
    ----------
    size : int
        Processes in the communicator.
    dims : sequence of int
        Processes per dimension, each >= 1 (``MPI_Cart_create`` rejects 0 and negative sizes), with
        a product of at most ``size``.
    periods : sequence of bool or bool, optional
        Wrap-around per dimension; one bool applies to every dimension (mpi4py's convention);
        default all False.
    weights : sequence of int, optional
        Message volume per dimension (each >= 0); default 1.

    Returns
    -------
    dims, periods, weights : tuple of lists
        ``list[int]``, ``list[bool]``, ``list[int]`` of the same length.

    Raises
    ------
    ArgumentTypeError
        A non-integer size or weight, a non-sequence.
    ArgumentError
        A size < 1, more grid points than processes, lists of different lengths, a negative weight.
    """
    d = _int_list(dims, "dims")
    for i, x in enumerate(d):
        if x < 1:
            raise ArgumentError(f"dims[{i}] = {x}: every dimension of a Cartesian grid needs at least 1 process")
    n = math.prod(d)
    if n > size:
        raise ArgumentError(f"dims {'x'.join(map(str, d))} need {n} processes but the communicator has {size}")
    if periods is None:
        p = [False] * len(d)
    elif isinstance(periods, (bool, np.bool_)):
        p = [bool(periods)] * len(d)
    else:
        p = [bool(x) for x in _int_list(periods, "periods")]
        if len(p) != len(d):
            raise ArgumentError(f"periods has {len(p)} entries for {len(d)} dimensions")
    if weights is None:
        w = [1] * len(d)
    else:
        w = _int_list(weights, "weights")
        if len(w) != len(d):
            raise ArgumentError(f"weights has {len(w)} entries for {len(d)} dimensions")
        for i, x in enumerate(w):
            if x < 0:
                raise ArgumentError(f"weights[{i}] = {x} is negative (a message volume per dimension)")
    return d, p, w


# ----------------------------------------------------------------------------------- the stencil
def cart_neighbors(rank, dims, periods, weights=None):
    """Face neighbours of ``rank`` in a Cartesian grid, as ``(neighbours, weights)``.

    Rank ``r`` has the row-major coordinates ``np.unravel_index(r, dims)`` (MPI's order: the last
    dimension varies fastest).  Its neighbours are the ranks at distance 1 in one dimension,
    wrapping around where ``periods`` says so; a rank is not its own neighbour (a periodic
    dimension of size 1), and a neighbour reached in two directions (a periodic dimension of size
    2) or in several dimensions appears once with the weights added.

    Parameters
    ----------
    rank : int
    dims : sequence of int
    periods : sequence of bool
    weights : sequence of int, optional
        Volume per message in each dimension (default 1).

    Returns
    -------
    neighbours, weights : list of int
        Sorted by neighbour rank.

    Examples
    --------
    >>> cart_neighbors(0, [2, 3], [False, True])
    ([1, 2, 3], [1, 1, 1])
    >>> cart_neighbors(0, [2], [True], [5])
    ([1], [10])
    """
    w = [1] * len(dims) if weights is None else list(weights)
    out = {}
    stride = 1
    for i in range(len(dims) - 1, -1, -1):
        d = dims[i]
        c = (rank // stride) % d
        for step in (-1, 1):
            x = c + step
            if not 0 <= x < d:
                if not periods[i]:
                    continue
                x %= d
            if x == c:
                continue
            nb = rank + (x - c) * stride
            out[nb] = out.get(nb, 0) + int(w[i])
        stride *= d
    keys = sorted(out)
    return keys, [out[k] for k in keys]


def cart_graph(dims, periods=None, weights=None):
    """The communication graph of a Cartesian communicator: :func:`cart_neighbors` of every rank.

    Parameters
    ----------
    dims : sequence of int
    periods : sequence of bool or bool, optional
        Default all False.
    weights : sequence of int, optional
        Volume per message in each dimension (default 1).

    Returns
    -------
    CommGraph
        ``prod(dims)`` processes; edge ``r -> s`` for every face neighbour ``s`` of ``r``, both
        directions, with its dimension's weight (added when ``s`` is a neighbour twice).

    Examples
    --------
    >>> g = cart_graph([4, 4], True)
    >>> g.n, g.n_edges
    (16, 64)
    """
    from .commgraph import CommGraph

    d, p, w = check_cart_args(math.prod(_int_list(dims, "dims")), dims, periods, weights)
    n = math.prod(d)
    ranks = np.arange(n, dtype=np.int64)
    src, dst, wt = [], [], []
    stride = 1
    for i in range(len(d) - 1, -1, -1):
        c = (ranks // stride) % d[i]
        for step in (-1, 1):
            x = c + step
            ok = (x >= 0) & (x < d[i])
            if p[i]:
                x = x % d[i]
                ok = x != c
            src.append(ranks[ok])
            dst.append(ranks[ok] + (x[ok] - c[ok]) * stride)
            wt.append(np.full(int(ok.sum()), w[i], dtype=np.float64))
        stride *= d[i]

    def cat(parts, dt):
        return np.concatenate(parts) if parts else np.zeros(0, dt)

    return CommGraph(n, cat(src, np.int64), cat(dst, np.int64), cat(wt, np.float64))


# ----------------------------------------------------------------------------------- Compute_dims
@functools.lru_cache(maxsize=1024)
def _divisors(n):
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


def _factorisations(n, k):
    """Every ``k``-tuple of positive integers in non-increasing order whose product is ``n``."""
    divs = _divisors(n)
    out = []

    def rec(rest, k, upper, acc):
        if k == 1:
            if rest <= upper:
                out.append(tuple(acc + [rest]))
            return
        for d in divs:
            if d > upper or d > rest:
                break
            if rest % d or d ** k < rest:  # the largest of k factors is at least rest ** (1/k)
                continue
            rec(rest // d, k - 1, d, acc + [d])
    rec(n, k, n, [])
    return out


def _balance_key(t):
    """MPICH's choice (Traeff & Luebbe, EuroMPI'15): the smallest largest-minus-smallest; among
    ties, the largest smallest value, then the lexicographically smallest tuple."""
    return (t[0] - t[-1], -t[-1], t)


def _grid_of(topology):
    """(host-grid shape or None, processes per grid point or None) of a topology."""
    attrs = getattr(topology, "attrs", {}) or {}
    gen = attrs.get("generator")
    shape = None
    if gen in ("torus", "mesh") and "dims" in attrs:
        shape = [int(x) for x in attrs["dims"]]
    elif gen == "hypercube" and "dim" in attrs:
        shape = [2] * int(attrs["dim"])
    slots = np.asarray(topology.slots)
    host_slots = slots[slots > 0]
    if host_slots.size == 0:
        return shape, 1
    vals, counts = np.unique(host_slots, return_counts=True)
    per_host = int(vals[np.argmax(counts)])  # the usual ranks per host
    per_point = per_host * int(attrs.get("concentration", 1))
    return shape, per_point


def _boxes(dims, r):
    """Every per-dimension box ``b`` (``b[i]`` divides ``dims[i]``, product ``r``)."""
    out = []

    def rec(i, rest, acc):
        if i == len(dims):
            if rest == 1:
                out.append(tuple(acc))
            return
        for b in _divisors(math.gcd(dims[i], rest)):
            rec(i + 1, rest // b, acc + [b])
    rec(0, r, [])
    return out


def _embedding_key(full, free_vals, shape, per_point, nnodes):
    """(torus shape mismatch, inter-host volume, MPICH balance) of the full dims ``full``.

    Each host (grid point) gets a box of ``per_point`` processes; of a cubic domain cut into
    ``full`` blocks, the volume a host exchanges with other hosts is proportional to the sum of the
    host-grid sizes ``full[i] / box[i]`` over the dimensions cut between hosts.  The grid matches a
    torus or mesh when its non-trivial host-grid sizes are the topology's.
    """
    target = None
    if shape is not None and nnodes == per_point * math.prod(shape):
        target = sorted(x for x in shape if x > 1)
    if target is None and per_point == 1:
        return (0, 0, _balance_key(free_vals))
    best = (int(target is not None), math.inf)  # when no box of per_point processes fits
    for b in _boxes(full, per_point):
        host_grid = [f // x for f, x in zip(full, b)]
        miss = 0 if target is None else int(sorted(h for h in host_grid if h > 1) != target)
        vol = sum(h for h in host_grid if h > 1) if per_point > 1 else 0
        best = min(best, (miss, vol))
    return best + (_balance_key(free_vals),)


def Compute_dims(nnodes, ndims, *, topology=None):
    """A balanced Cartesian grid of ``nnodes`` processes (``MPI_Dims_create``), topology-aware.

    Parameters
    ----------
    nnodes : int
        Processes in the grid, >= 1.
    ndims : int or sequence of int
        Number of dimensions, or the dimensions with ``0`` for the ones to choose and positive
        values kept as given (like mpi4py's ``MPI.Compute_dims``).
    topology : Topology, optional
        Without it the result is MPICH's ``MPI_Dims_create``: among the factorisations of the free
        dimensions, the smallest largest-minus-smallest, then the largest smallest value, then the
        lexicographically smallest (checked against MPICH in the tests).  With it, among all
        factorisations, first one whose grid of hosts matches the shape of a torus, mesh or
        hypercube the job fills (``topology.attrs`` ``dims``/``dim``, with ``concentration``), then
        the least traffic between hosts when each host holds a box of its ranks (the usual slots
        per host; a cubic domain), then the balance above.

    Returns
    -------
    list of int
        ``len(dims)`` sizes with product ``nnodes``; the chosen ones in non-increasing order, the
        given ones unchanged.

    Raises
    ------
    ArgumentTypeError
        Non-integer arguments.
    ArgumentError
        ``nnodes < 1``, a negative dimension, or given dimensions whose product does not divide
        ``nnodes``.

    References
    ----------
    J. L. Traeff and F. D. Luebbe, "Specification Guideline Violations by MPI_Dims_create",
    EuroMPI'15 (the balance criterion MPICH implements).

    Examples
    --------
    >>> Compute_dims(360, 3)
    [10, 6, 6]
    >>> Compute_dims(12, [2, 0, 0])
    [2, 3, 2]
    >>> from libtopomap import torus
    >>> Compute_dims(16, 2), Compute_dims(16, 2, topology=torus("8x2"))
    ([4, 4], [8, 2])
    """
    nnodes = _as_int(nnodes, "nnodes")
    if isinstance(ndims, numbers.Real) and not isinstance(ndims, bool):
        k = _as_int(ndims, "ndims")
        if k < 0:
            raise ArgumentError(f"ndims = {k} is negative")
        dims = [0] * k
    else:
        dims = _int_list(ndims, "dims")
    if nnodes < 1:
        raise ArgumentError(f"nnodes = {nnodes}: a grid needs at least 1 process")
    for i, x in enumerate(dims):
        if x < 0:
            raise ArgumentError(f"dims[{i}] = {x} is negative (0 means: choose this dimension)")
    free = [i for i, x in enumerate(dims) if x == 0]
    fixed = math.prod(x for x in dims if x > 0)
    if nnodes % fixed:
        raise ArgumentError(f"the given dimensions (product {fixed}) do not divide nnodes = {nnodes}")
    if not free:
        return dims
    cands = _factorisations(nnodes // fixed, len(free))

    def full(t):
        out = list(dims)
        for i, x in zip(free, t):
            out[i] = x
        return out
    if topology is None:
        best = min(cands, key=_balance_key)
    else:
        shape, per_point = _grid_of(topology)
        best = min(cands, key=lambda t: _embedding_key(full(t), t, shape, per_point, nnodes))
    return full(best)
