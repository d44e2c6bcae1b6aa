"""The communication graph G of a job: processes and weighted, directed message volumes.

Every input (edge lists, networkx graphs, scipy sparse matrices) is validated and normalised once
by :func:`as_commgraph` to CSR arrays with fixed dtypes (``int64`` indptr, ``int32`` indices,
``float64`` weights), like ``scipy.sparse.csgraph._validation``.
"""

from __future__ import annotations

import sys
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from .errors import CommGraphError

__all__ = ["CommGraph", "as_commgraph", "SymGraph", "sym_graph"]


class CommGraph:
    """A weighted directed communication graph over processes ``0..n-1``.

    The weight ``w(u, v)`` is the volume process ``u`` sends to ``v``.  Duplicate edges are summed;
    zero-weight edges are kept out (they carry no traffic).  Self-edges are kept (they cost nothing).

    Parameters
    ----------
    n : int
        Number of processes.
    src, dst : array_like of int
        Edge endpoints, ``0 <= src, dst < n``.
    weights : array_like of float, optional
        Non-negative, finite; default 1 per edge.

    Raises
    ------
    CommGraphError
        An endpoint out of range, a negative, NaN or infinite weight, or lengths that differ.

    Examples
    --------
    >>> g = CommGraph(3, [0, 1], [1, 2], [2.0, 5.0])
    >>> g.n, g.n_edges, float(g.weights.sum())
    (3, 2, 7.0)
    """

    def __init__(self, n, src, dst, weights=None):
        n = int(n)
        if n < 0:
            raise CommGraphError(f"number of processes must be >= 0, got {n}")
        src = np.asarray(src).reshape(-1)
        dst = np.asarray(dst).reshape(-1)
        if src.shape != dst.shape:
            raise CommGraphError(f"{src.size} sources but {dst.size} destinations")
        for arr, what in ((src, "source"), (dst, "destination")):
            if arr.size and not np.issubdtype(arr.dtype, np.integer):
                if not np.all(np.asarray(arr, dtype=np.float64) == np.round(np.asarray(arr, dtype=np.float64))):
                    raise CommGraphError(f"edge {what}s must be integers")
        src = src.astype(np.int64)
        dst = dst.astype(np.int64)
        if weights is None:
            w = np.ones(src.size, dtype=np.float64)
        else:
            w = np.asarray(weights, dtype=np.float64).reshape(-1)
            if w.shape != src.shape:
                raise CommGraphError(f"{w.size} weights for {src.size} edges")
        bad = np.flatnonzero((src < 0) | (src >= n) | (dst < 0) | (dst >= n))
        if bad.size:
            k = bad[0]
            raise CommGraphError(f"edge {k} ({src[k]} -> {dst[k]}) names a process outside 0..{n - 1}")
        badw = np.flatnonzero(~np.isfinite(w) | (w < 0))
        if badw.size:
            k = badw[0]
            raise CommGraphError(f"edge {k} ({src[k]} -> {dst[k]}) has weight {w[k]!r}; "
                                 "weights must be finite and >= 0")
        keep = w > 0
        m = sp.csr_matrix((w[keep], (src[keep], dst[keep])), shape=(n, n))
        m.sum_duplicates()
        m.sort_indices()
        self.n = n
        self.indptr = m.indptr.astype(np.int64)
        self.indices = m.indices.astype(np.int32)
        self.weights = m.data.astype(np.float64)
        for a in (self.indptr, self.indices, self.weights):
            a.setflags(write=False)

    @property
    def n_edges(self):
        return int(self.indices.size)

    def __getstate__(self):
        # the symmetric view cached by sym_graph is rebuilt where needed, not sent to other ranks
        return {k: v for k, v in self.__dict__.items() if k != "_sym_graph"}

    @cached_property
    def src(self):
        """Source process of each edge (CSR order)."""
        s = np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.indptr))
        s.setflags(write=False)
        return s

    @property
    def dst(self):
        return self.indices

    def to_scipy(self):
        """CSR matrix ``W`` with ``W[u, v] = w(u, v)``."""
        return sp.csr_matrix((self.weights, self.indices, self.indptr), shape=(self.n, self.n))

    def symmetric(self):
        """Undirected view ``W + W^T`` without self-edges (CSR), what partitioners and RCM need."""
        w = self.to_scipy()
        s = (w + w.T).tocsr()
        s.setdiag(0)
        s.eliminate_zeros()
        s.sort_indices()
        return s

    def to_networkx(self):
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(range(self.n))
        g.add_weighted_edges_from(zip(self.src.tolist(), self.indices.tolist(), self.weights.tolist()))
        return g

    @classmethod
    def from_edges(cls, edges, n=None):
        """From ``(src, dst)`` or ``(src, dst, weight)`` tuples; ``n`` defaults to max id + 1."""
        rows = [tuple(e) for e in edges]
        for k, e in enumerate(rows):
            if len(e) not in (2, 3):
                raise CommGraphError(f"edge {k}: expected (src, dst) or (src, dst, weight), got {e!r}")
        for k, e in enumerate(rows):
            for x in e[:2]:
                if isinstance(x, (bool, np.bool_)) or not (
                        isinstance(x, (int, np.integer))
                        or (isinstance(x, (float, np.floating)) and float(x).is_integer())):
                    raise CommGraphError(f"edge {k}: process ids must be integers, got {e[:2]!r}")
        src = [int(e[0]) for e in rows]
        dst = [int(e[1]) for e in rows]
        w = [e[2] if len(e) == 3 else 1.0 for e in rows]
        if n is None:
            n = max(max(src, default=-1), max(dst, default=-1)) + 1
        from ._limits import check_vertex_count

        check_vertex_count(n, "the edge list", error=CommGraphError, unit="processes")
        return cls(n, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), np.array(w, dtype=np.float64))

    @classmethod
    def from_networkx(cls, graph, *, weight="weight"):
        """From a networkx graph whose nodes are ``0..n-1``; an undirected edge sends both ways."""
        n = graph.number_of_nodes()
        nodes = set(graph.nodes)
        if nodes != set(range(n)):
            raise CommGraphError("networkx communication graph nodes must be the integers 0..n-1")
        src, dst, w = [], [], []
        for u, v, d in graph.edges(data=True):
            x = d.get(weight, 1.0)
            src.append(u), dst.append(v), w.append(x)
            if not graph.is_directed() and u != v:
                src.append(v), dst.append(u), w.append(x)
        return cls(n, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), np.array(w, dtype=np.float64))

    @classmethod
    def from_scipy(cls, matrix):
        """From a square sparse matrix; nonzero ``A[u, v]`` is the volume from ``u`` to ``v``."""
        a = sp.coo_matrix(matrix)
        if a.shape[0] != a.shape[1]:
            raise CommGraphError(f"communication matrix must be square, got shape {a.shape}")
        return cls(a.shape[0], a.row, a.col, a.data)

    def __repr__(self):
        return f"<CommGraph: {self.n} processes, {self.n_edges} edges, volume {self.weights.sum():g}>"

    def __eq__(self, other):
        if not isinstance(other, CommGraph):
            return NotImplemented
        return (self.n == other.n and np.array_equal(self.indptr, other.indptr)
                and np.array_equal(self.indices, other.indices) and np.allclose(self.weights, other.weights))

    __hash__ = object.__hash__


def as_commgraph(graph, n=None):
    """Validate and normalise any supported communication-graph input to a :class:`CommGraph`.

    Parameters
    ----------
    graph : CommGraph, scipy sparse matrix, numpy 2-D array, networkx graph, or iterable of edges
    n : int, optional
        Number of processes for edge lists (default: max id + 1).

    Returns
    -------
    CommGraph

    Raises
    ------
    CommGraphError
        If the input is of an unsupported type or invalid.
    """
    if isinstance(graph, CommGraph):
        return graph
    if sp.issparse(graph):
        return CommGraph.from_scipy(graph)
    if isinstance(graph, np.ndarray) and graph.ndim == 2 and graph.shape[0] == graph.shape[1]:
        # a square array is a matrix, even 2x2 or 3x3 (pass edges as a list of tuples)
        return CommGraph.from_scipy(sp.coo_matrix(graph))
    nx = sys.modules.get("networkx")  # a networkx graph means networkx is imported already
    if nx is not None and isinstance(graph, nx.Graph):
        return CommGraph.from_networkx(graph)
    try:
        return CommGraph.from_edges(graph, n=n)
    except TypeError:
        raise CommGraphError(f"cannot make a communication graph from {type(graph).__name__}") from None


def warn_self_loops(path, line, process, count):
    """Issue a :class:`~libtopomap.LibTopoMapWarning` for ``count`` self loops read from a graph file:
    accepted (they cost nothing on the network) but usually a mistake.  ``line`` is the first one's."""
    import warnings

    from .errors import FormatError, LibTopoMapWarning

    more = f" ({count} in all)" if count > 1 else ""
    warnings.warn(str(FormatError(f"process {process} sends to itself: a self loop{more}, which costs nothing on "
                                  "the network", path=path, line=line)), LibTopoMapWarning, stacklevel=3)


class SymGraph:
    """Undirected CSR view of a communication graph keeping both directed weights per neighbour.

    ``wout[k]`` is the volume from ``u`` to ``indices[k]``, ``win[k]`` the volume back; self-edges
    are dropped (they never load a link).  ``wsum = wout + win``.
    """

    def __init__(self, graph):
        g = as_commgraph(graph)
        n = g.n
        off = g.src != g.dst
        s_, d_, w_ = g.src[off].astype(np.int64), g.dst[off].astype(np.int64), g.weights[off]
        # both orientations of every edge; the first half carries u->x volume, the second x->u
        rows = np.concatenate([s_, d_])
        cols = np.concatenate([d_, s_])
        key = rows * max(n, 1) + cols
        uniq, inv = np.unique(key, return_inverse=True)
        wout = np.zeros(uniq.size)
        win = np.zeros(uniq.size)
        m = s_.size
        np.add.at(wout, inv[:m], w_)
        np.add.at(win, inv[m:], w_)
        r = uniq // max(n, 1)
        self.n = n
        self.indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(r, minlength=n), out=self.indptr[1:])
        self.indices = (uniq % max(n, 1)).astype(np.int64)
        self.wout = wout
        self.win = win
        self.wsum = self.wout + self.win
        # CSR entry of the same edge seen from its other end
        self.rev = np.searchsorted(uniq, (uniq % max(n, 1)) * max(n, 1) + r).astype(np.int64)
        self.total = float(g.weights.sum())
        self.graph = g


def sym_graph(graph):
    """The :class:`SymGraph` of ``graph``, built once per :class:`CommGraph` (kept on it: a
    communication graph's arrays are read-only, so its symmetric view never goes stale).

    Every construction and search of a race needs this view; on a dense graph building it is the
    sort of all edges (0.1-0.2 s CPU at 1,000 processes of mean degree 355), which the race paid
    once per strategy and per search state.

    Examples
    --------
    >>> g = CommGraph(3, [0, 1], [1, 2], [2.0, 5.0])
    >>> sym_graph(g) is sym_graph(g), sym_graph(g).n
    (True, 3)
    """
    if isinstance(graph, SymGraph):
        return graph
    g = as_commgraph(graph)
    sym = g.__dict__.get("_sym_graph")
    if sym is None:
        sym = SymGraph(g)
        g.__dict__["_sym_graph"] = sym
    return sym
