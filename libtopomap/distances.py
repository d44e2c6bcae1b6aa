"""Hop distances without an all-pairs matrix: closed forms, a bounded table, or searches.

A :class:`DistanceOracle` (``topology.distances``) answers every hop distance exactly as a breadth-first
search would, through a host's attachment vertex, then closed forms (verified tori, meshes, hypercubes),
a table over at most :data:`TABLE_LIMIT` attachment vertices, or searches; compiled kernels ask it
through :func:`hop_distance` and :func:`next_arc`.  The order and its costs: docs/internals.rst, "Hop
distances without an all-pairs matrix".
"""

from __future__ import annotations

import contextlib

import numpy as np

from ._kernels.bfs import (bfs_distance_rows, grouped_pair_search, k_nearest, leafless_csr, multi_source_levels,
                           source_sums)
from ._kernels.fattree_ecmp import fattree_up_arcs
from ._kernels.grid_ecmp import grid_arc_table
from ._kernels.oracle import NEEDS_SEARCH, hop_distance as oracle_hop_distance, hop_distance_search, new_search_scratch
from .errors import TopologyError
from ._jit import njit

__all__ = ["DistanceOracle", "TABLE_LIMIT", "hop_distance", "next_arc", "NEAR_SLOTS", "near_slot_vertices",
           "near_slot_cache"]

#: Largest number of attachment vertices kept in a distance table (64 MiB as uint8).
TABLE_LIMIT = 8192

_KINDS = {"search": 0, "grid": 1, "hypercube": 2, "table": 3}


def _grid_link_count(dims, wrap):
    n = int(np.prod(dims))
    total = 0
    for k in dims:
        if k == 1:
            continue
        total += n if (wrap and k > 2) else n // k * (k - 1)
    return total


class DistanceOracle:
    """Hop distances between the vertices of a topology, from closed forms, a table or searches.

    Parameters
    ----------
    topology : Topology
    table_limit : int, optional
        Largest number of attachment vertices kept in a table (default :data:`TABLE_LIMIT`).

    Attributes
    ----------
    kind : {"grid", "hypercube", "table", "search"}
        How distances between attachment vertices are found.
    covers_all : bool
        Whether the fast path (closed form or table) answers for every vertex, switches included;
        otherwise some pairs of switches need a search.
    nbytes : int
        Memory held by the oracle.

    Examples
    --------
    >>> from libtopomap import torus
    >>> o = torus("64x64x64").distances
    >>> o.kind, o.pairs([0], [64 * 64 * 32 + 32 * 64 + 32]).tolist()
    ('grid', [96])
    """

    def __init__(self, topology, *, table_limit=TABLE_LIMIT):
        t = topology
        n = t.n_vertices
        self._indptr = t.indptr
        self._indices = t.indices
        self.n = n
        deg = np.diff(t.indptr)
        first = (t.indices[t.indptr[:-1].clip(max=max(t.indices.size - 1, 0))] if t.indices.size
                 else np.zeros(n, np.int32))
        leaf = (deg == 1)
        leaf &= deg[first] > 1 if n else leaf
        att = np.arange(n, dtype=np.int32)
        att[leaf] = first[leaf]
        off = leaf.astype(np.int8)
        self._dims = np.zeros(0, np.int64)
        self._wrap = np.zeros(0, np.bool_)
        self._coords = np.zeros((1, 1), np.int32)
        self._table = np.zeros((1, 1), np.uint8)
        self._tpos = np.full(n, -1, np.int32)
        self._fattree = None  # (k, n, arcs): arcs False until fattree_arcs() checked the CSR
        if t.attrs.get("generator") == "fattree":
            try:
                self._fattree = (int(t.attrs["k"]), int(t.attrs["n"]), False)
            except (KeyError, TypeError, ValueError):
                self._fattree = None
        kind = self._closed_form(t, att, off)
        if kind is None:
            if n <= table_limit:
                # small network: a table over every vertex but the leaves (they are answered through
                # their attachment vertex), so the switches are covered too.  On the 4,224-host
                # dragonfly that is its 528 routers instead of 4,752 vertices: 0.18 s -> 0.01 s to
                # build, and a 0.3 MB table that stays in cache instead of 22 MB
                core = np.flatnonzero(off == 0).astype(np.int64)
                kind = "table"
            else:
                core = np.unique(att[t.slots > 0]).astype(np.int64)
                kind = "table" if core.size <= table_limit else "search"
            if kind == "table":
                # attachment vertices only (no leaf among them) when leaves are marked: search without them
                self._build_table(core, off == 1 if off.any() else None)
        self.kind = kind
        self._att = att
        self._off = off
        # a host on a single link is answered through its attachment vertex: the table must hold the
        # attachment vertex of every vertex
        self.covers_all = kind in ("grid", "hypercube") or (kind == "table" and self._tpos.size == n
                                                            and bool(np.all(self._tpos[att] >= 0)))
        # per vertex: its offset, then what the compiled distance needs of its attachment vertex
        if kind == "grid":
            vc = self._coords[att]
        elif kind == "table":
            vc = np.stack([self._tpos[att], att], axis=1)
        else:
            vc = att.reshape(-1, 1)
        self._packed = np.ascontiguousarray(np.concatenate([off.reshape(-1, 1), vc], axis=1), dtype=np.int32)
        nd = self._dims.size
        meta = np.zeros(2 + 2 * nd, np.int64)
        meta[0], meta[1] = _KINDS[kind], nd
        meta[2:2 + nd] = self._dims
        meta[2 + nd:] = self._wrap
        self._meta = meta
        self._grid_arcs = None
        for arr in (self._meta, self._packed, self._table, self._att, self._off):
            arr.setflags(write=False)

    # ------------------------------------------------------------------ construction
    def _closed_form(self, t, att, off):
        gen = t.attrs.get("generator")
        if gen in ("torus", "mesh") and "dims" in t.attrs:
            try:
                dims = tuple(int(k) for k in t.attrs["dims"])
            except (TypeError, ValueError):
                return None
            wrap = gen == "torus"
            m = int(np.prod(dims)) if dims else 0
            if not dims or min(dims) < 1 or m > t.n_vertices:
                return None
            coords = np.stack(np.unravel_index(np.arange(m), dims), axis=1).astype(np.int32)
            dv = np.asarray(dims, np.int64)
            wv = np.full(len(dims), wrap, np.bool_)

            def dist(x, y):
                dx = np.abs(coords[x].astype(np.int64) - coords[y])
                if wrap:
                    dx = np.minimum(dx, dv - dx)
                return dx.sum(axis=1)

            if not self._verify_core(t, att, off, m, dist, _grid_link_count(dims, wrap)):
                return None
            self._dims, self._wrap, self._coords = dv, wv, coords
            return "grid"
        if gen == "hypercube" and "dim" in t.attrs:
            dim = int(t.attrs["dim"])
            m = 1 << dim
            if dim < 1 or m > t.n_vertices:
                return None

            def dist(x, y):
                return np.array([bin(int(a) ^ int(b)).count("1") for a, b in zip(x, y)], np.int64)

            if not self._verify_core(t, att, off, m, dist, dim * (m // 2)):
                return None
            self._cube_dim = dim
            return "hypercube"
        return None

    @staticmethod
    def _verify_core(t, att, off, m, dist, n_core_links):
        """The formula holds when vertices ``0..m-1`` are the formula's graph (every link among them
        at formula distance 1, as many links as the formula's graph has) and every other vertex is a
        leaf attached to one of them."""
        u, v = t.link_u.astype(np.int64), t.link_v.astype(np.int64)
        inner = (u < m) & (v < m)
        if int(inner.sum()) != n_core_links:
            return False
        if n_core_links and not np.all(dist(u[inner], v[inner]) == 1):
            return False
        rest = np.arange(m, t.n_vertices)
        return bool(np.all(off[rest] == 1) and np.all(att[rest] < m))

    def _fattree_table(self, core):
        """The table over ``core`` of a verified k-ary n-tree (:meth:`fattree_arcs`) whose core
        vertices are all leaf switches, by formula: leaves whose words agree except in their lowest
        ``m`` digits are ``2 m`` hops apart (up ``m`` levels to a common ancestor and down).  None
        otherwise (then one search per core vertex builds it)."""
        ft = self.fattree_arcs()
        if ft is None:
            return None
        k, levels, _ = ft
        S = k ** (levels - 1)
        word = core - (k ** levels + (levels - 1) * S)
        if word.size == 0 or word.min() < 0 or word.max() >= S:
            return None
        table = np.zeros((core.size, core.size), np.uint8)
        differ = np.empty(table.shape, np.bool_)
        for j in range(levels - 1):  # words still differ after dropping their j lowest digits
            prefix = word // k ** j
            np.not_equal(prefix[:, None], prefix[None, :], out=differ)
            table += differ
        table *= 2
        return table

    def _build_table(self, core, leaves=None):
        """The table over ``core``; with ``leaves`` (a mask of vertices on a single link, none of them
        in ``core``) the searches run on the network without them: no shortest path between two
        other vertices goes through a leaf (4096 routers of the 65,536-host dragonfly: 17x fewer
        vertices to visit)."""
        table = self._fattree_table(core)
        if table is not None:
            tpos = np.full(self.n, -1, np.int64)
            tpos[core] = np.arange(core.size)
            self._table = table
            self._tpos = tpos.astype(np.int32)
            return
        dmax = 0
        if core.size:
            ecc = multi_source_levels(self._indptr, self._indices, self.n, core[:1]).max()
            dmax = 2 * int(ecc)
        dtype = np.uint8 if dmax < 255 else (np.uint16 if dmax < 65535 else np.uint32)
        table = np.zeros((core.size, core.size), dtype=dtype)
        tpos = np.full(self.n, -1, np.int64)
        if core.size:
            tpos[core] = np.arange(core.size)
            if leaves is None:
                bfs_distance_rows(self._indptr, self._indices, self.n, core, tpos, table)
            else:
                indptr, indices, new, _ = leafless_csr(self._indptr, self._indices, ~leaves)
                column = np.full(indptr.size - 1, -1, np.int64)
                column[new[core]] = np.arange(core.size)
                bfs_distance_rows(indptr, indices, indptr.size - 1, new[core], column, table)
        self._table = table
        self._tpos = tpos.astype(np.int32)

    # ------------------------------------------------------------------ queries
    @property
    def nbytes(self):
        held = (self._att, self._off, self._coords, self._table, self._tpos, self._packed)
        if self._grid_arcs is not None:
            held += (self._grid_arcs,)
        if self._fattree is not None and self._fattree[2]:
            held += tuple(self._fattree[2])
        return int(sum(a.nbytes for a in held))

    @property
    def fast_arrays(self):
        """``(meta, packed, table)`` for :func:`libtopomap._kernels.oracle.hop_distance` in compiled code;
        when it returns ``NEEDS_SEARCH``, call :func:`libtopomap._kernels.oracle.hop_distance_search` with
        ``(meta, packed, indptr, indices, scratch)``.  Never needed when :attr:`covers_all`."""
        return self._meta, self._packed, self._table

    @property
    def kernel_args(self):
        """``(meta, packed, table, indptr, indices)`` as one tuple for
        :func:`libtopomap._kernels.oracle.vertex_distance` (for code outside hot loops)."""
        return self._meta, self._packed, self._table, self._indptr, self._indices

    def new_scratch(self):
        """Scratch for :func:`libtopomap._kernels.oracle.hop_distance_search` (one per thread)."""
        return new_search_scratch(self.n if self.kind in ("search", "table") else 1)

    @property
    def n_arcs(self):
        return int(self._indices.size)

    @property
    def grid_shape(self):
        """``(dims, wrap)`` of the verified grid that vertices ``0..prod(dims)-1`` form, or None.

        Tori and meshes give their dimensions and whether each wraps; a hypercube of dimension ``d``
        is the mesh ``2 x ... x 2`` (``d`` times; vertex id = coordinates as bits, most significant
        first).  Every other vertex is a host on a single link to one of these (see
        :meth:`attachments`).  None when the oracle's kind is neither ``"grid"`` nor ``"hypercube"``.
        """
        if self.kind == "grid":
            return tuple(self._dims.tolist()), tuple(self._wrap.tolist())
        if self.kind == "hypercube":
            return (2,) * self._cube_dim, (False,) * self._cube_dim
        return None

    def grid_arcs(self):
        """CSR arc per grid step, ``(prod(dims), 2 * len(dims))`` int64, built on first use and kept:
        ``[v, 2j]`` one step up dimension ``j`` from core vertex ``v``, ``[v, 2j + 1]`` one step
        down, -1 where there is none (:func:`libtopomap._kernels.grid_ecmp.grid_arc_table`).  Requires
        :attr:`grid_shape`."""
        shape = self.grid_shape
        if shape is None:
            raise TopologyError(f"grid steps need a verified grid or hypercube, this oracle is {self.kind!r}")
        if self._grid_arcs is None:
            dims = np.asarray(shape[0], np.int64)
            strides = np.ones(dims.size, np.int64)
            for j in range(dims.size - 2, -1, -1):
                strides[j] = strides[j + 1] * dims[j + 1]
            arcs = grid_arc_table(self._indptr, self._indices, int(np.prod(dims)), dims, strides)
            arcs.setflags(write=False)
            self._grid_arcs = arcs
        return self._grid_arcs

    def fattree_arcs(self):
        """``(k, n, (up, host_up))`` of a k-ary n-tree from :func:`libtopomap.fattree` whose CSR has
        exactly that structure (:func:`libtopomap._kernels.fattree_ecmp.fattree_up_arcs`, checked on first use
        and kept), else None.  Hosts are vertices ``0..k**n - 1``."""
        if self._fattree is None:
            return None
        k, n, arcs = self._fattree
        if arcs is False:
            arcs = fattree_up_arcs(self._indptr, self._indices, k, n) if k >= 1 and n >= 1 else None
            if arcs is not None:
                for a in arcs:
                    a.setflags(write=False)
            self._fattree = (k, n, arcs)
        return None if arcs is None else (k, n, arcs)

    def attachments(self):
        """``(att, off)`` arrays over all vertices (read-only views)."""
        att, off = self._att.view(), self._off.view()
        att.setflags(write=False)
        off.setflags(write=False)
        return att, off

    def first_arc(self, v):
        """CSR arc index of the first link of each vertex in ``v`` (the only one of a leaf)."""
        return self._indptr[np.asarray(v, dtype=np.int64)]

    def attachment(self, v):
        """``(att, off)`` of vertex ``v``: the vertex through which it reaches the rest, and how far."""
        return int(self._att[v]), int(self._off[v])

    def pairs(self, a, b):
        """Hop distances ``d(a[i], b[i])`` as ``int64``.

        Raises
        ------
        TopologyError
            A vertex index outside ``0..n-1``, arrays of different shapes, or an unreachable pair.
        """
        a = np.asarray(a, dtype=np.int64).reshape(-1)
        b = np.asarray(b, dtype=np.int64).reshape(-1)
        if a.shape != b.shape:
            raise TopologyError(f"distance queries need arrays of one length, got {a.size} and {b.size}")
        for arr in (a, b):
            if arr.size and (arr.min() < 0 or arr.max() >= self.n):
                bad = arr[(arr < 0) | (arr >= self.n)][0]
                raise TopologyError(f"unknown vertex index {bad} (n = {self.n})")
        out = self._off[a].astype(np.int64) + self._off[b]
        x, y = self._att[a].astype(np.int64), self._att[b].astype(np.int64)
        todo = x != y
        if self.kind == "grid":
            dx = np.abs(self._coords[x[todo]].astype(np.int64) - self._coords[y[todo]])
            if self._wrap.any():
                dx = np.where(self._wrap, np.minimum(dx, self._dims - dx), dx)
            out[todo] += dx.sum(axis=1)
        elif self.kind == "hypercube":
            out[todo] += np.bitwise_count(x[todo] ^ y[todo]).astype(np.int64)
        else:
            px, py = self._tpos[x], self._tpos[y]
            fast = todo & (px >= 0) & (py >= 0)
            out[fast] += self._table[px[fast], py[fast]]
            slow = np.flatnonzero(todo & ~fast)
            if slow.size:
                out[slow] += self._search(x[slow], y[slow])
        out[a == b] = 0
        return out

    def _search(self, x, y):
        """Distances between attachment vertices by searches grouped by source."""
        order = np.argsort(x, kind="stable")
        xs = x[order]
        src, start = np.unique(xs, return_index=True)
        ptr = np.append(start, xs.size).astype(np.int64)
        res = np.empty(xs.size, np.int64)
        grouped_pair_search(self._indptr, self._indices, self.n, ptr, src, y[order], res)
        if res.size and res.min() < 0:
            raise TopologyError("a pair of vertices is not connected")
        out = np.empty_like(res)
        out[order] = res
        return out

    def host_sums(self, slots):
        """Sum and maximum of the hop distances over ordered pairs of distinct vertices with slots.

        Parameters
        ----------
        slots : array_like of int
            Slots per vertex; every vertex with ``slots > 0`` counts once.

        Returns
        -------
        total : int
            ``sum over u != v`` of ``d(u, v)``.
        diameter : int
            ``max`` of ``d(u, v)``; 0 with fewer than two such vertices.

        Notes
        -----
        Closed forms on grids and hypercubes where every attachment vertex carries the same number of
        slot vertices; otherwise one breadth-first search per attachment vertex of a slot vertex, so
        the work is ``O(#attachment vertices x arcs)``.
        """
        hosts = np.flatnonzero(np.asarray(slots) > 0)
        h = hosts.size
        if h < 2:
            return 0, 0
        att = self._att[hosts].astype(np.int64)
        off = self._off[hosts].astype(np.int64)
        mult = np.bincount(att, minlength=self.n)
        core = np.flatnonzero(mult)
        uniform = np.unique(mult[core]).size == 1 and np.unique(off).size == 1
        if self.kind in ("grid", "hypercube") and uniform:
            m = int(mult[core[0]])
            o = int(off[0])
            ncore = int(np.prod(self._dims)) if self.kind == "grid" else 1 << self._cube_dim
            if core.size == ncore:
                if self.kind == "grid":
                    pair_sum, dmax = 0, 0
                    for j, k in enumerate(self._dims.tolist()):
                        if self._wrap[j]:
                            r = np.arange(k, dtype=np.int64)
                            line_sum, line_max = k * int(np.minimum(r, k - r).sum()), k // 2
                        else:
                            line_sum, line_max = (k ** 3 - k) // 3, k - 1
                        # ordered pairs of core vertices: the pair sum along dimension j times every
                        # combination of the other coordinates
                        pair_sum += line_sum * (ncore // k) ** 2
                        dmax += line_max
                else:
                    dim = self._cube_dim
                    pair_sum = ncore * ncore * dim // 2
                    dmax = dim
                total = m * m * pair_sum + 2 * o * h * (h - 1)
                diameter = dmax + 2 * o if ncore > 1 else (2 * o if m > 1 else 0)
                return int(total), int(diameter)
        # one search per attachment vertex: S_a = sum over slot vertices v of d(a, v)
        weight = np.zeros(self.n, np.float64)
        weight[hosts] = 1.0
        sums, ecc, cnt, reach = source_sums(self._indptr, self._indices, self.n, core, weight)
        if np.any(reach < h):
            raise TopologyError("slot vertices are not all connected")
        pos = np.full(self.n, -1, np.int64)
        pos[core] = np.arange(core.size)
        ca = pos[att]
        # d(u, v) = off_u + d(att_u, v) for v != u, and d(att_u, u) = off_u
        total = int(np.sum(off * (h - 1) + sums[ca].astype(np.int64) - off))
        e = ecc[ca]
        # u itself is at distance off_u <= 1 from att_u: it is the only farthest vertex only when
        # ecc == off_u and it is alone at that distance
        alone = (e == off) & (cnt[ca] == 1)
        far = np.where(alone, e - 1, e)  # then the farthest other vertex is nearer (here: ecc 1 -> a at 0)
        diameter = int(np.max(off + far))
        return total, diameter


# ----------------------------------------------------------------------------- inside compiled kernels
@njit(cache=True, inline="always")
def hop_distance(oracle, u, v, scratch):
    """Hop distance from the oracle's kernel tuple (as :func:`libtopomap._kernels.oracle.vertex_distance`):
    the inlined closed form / table first, a bidirectional search between the attachment vertices
    only when that cannot answer.  ~10x cheaper per call in hot loops than ``vertex_distance``."""
    meta, packed, table, indptr, indices = oracle
    d = oracle_hop_distance(meta, packed, table, u, v)
    if d != NEEDS_SEARCH:
        return d
    return hop_distance_search(meta, packed, indptr, indices, scratch, u, v)


@njit(cache=True)
def next_arc(oracle, scratch, indptr, indices, v, tv, dv):
    """The CSR arc leaving ``v`` on the deterministic route to ``tv`` (``dv = d(v, tv) > 0``): the
    first arc whose head is one hop closer (lowest-index neighbour), from oracle distances."""
    for a in range(indptr[v], indptr[v + 1]):
        if hop_distance(oracle, indices[a], tv, scratch) == dv - 1:
            return a
    return -1


# ----------------------------------------------------------------------------- nearest slot vertices
#: How many nearest slot vertices count as "next to" a vertex (the local moves of the local-search engine).
NEAR_SLOTS = 12


def near_slot_vertices(topology, slots, k=NEAR_SLOTS):
    """For every vertex with usable slots, the ``k`` nearest other vertices with usable slots (ties at
    the ``k``-th distance included, sorted by index) as CSR ``(ptr, idx)`` over all vertices.

    One bounded breadth-first search per slot vertex (:func:`libtopomap._kernels.bfs.k_nearest`):
    ``O(H x ball)`` work and ``O(H x k)`` memory, no distance matrix.  Inside a
    :func:`near_slot_cache` block of the topology the last result is kept (one entry: the
    refinements of a portfolio share it) and dropped when the outermost block ends; callers must not
    write to it.
    """
    n = topology.n_vertices
    slots = np.asarray(slots)
    usable = np.flatnonzero(slots > 0).astype(np.int64)
    if usable.size < 2:
        return np.zeros(n + 1, np.int64), np.zeros(0, np.int64)
    key = (int(k), n, topology.n_arcs, hash(usable.tobytes()))
    cached = topology.cache.get("near_slots")
    if cached is not None and cached[0] == key and np.array_equal(cached[1], usable):
        return cached[2]
    ptr_u, idx = k_nearest(topology.indptr, topology.indices, n, usable, slots > 0, int(k))
    counts = np.zeros(n, np.int64)
    counts[usable] = np.diff(ptr_u)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    # rows are contiguous and in the order of `usable`, which is the vertex order: sort within rows
    row = np.repeat(np.arange(usable.size), np.diff(ptr_u))
    idx = idx[np.lexsort((idx, row))]
    if topology.cache.get("near_slots_depth", 0) > 0:
        topology.cache["near_slots"] = (key, usable, (ptr, idx))
    return ptr, idx


@contextlib.contextmanager
def near_slot_cache(topology):
    """Keep the result of :func:`near_slot_vertices` on ``topology`` while the block runs.

    The searches of one refinement, and the refinements of one portfolio race
    (:func:`libtopomap.portfolio.run_portfolio`, :func:`libtopomap.mpi.driver.race`), share one
    list of nearest slot vertices (about ``8 k`` bytes per slot vertex: 100 MB at 262,144 hosts);
    blocks nest, and the list is dropped from the topology when the outermost block ends, so
    nothing of a race stays on a topology the caller keeps.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t = ltm.torus("4x4")
    >>> with near_slot_cache(t):
    ...     a = near_slot_vertices(t, t.slots)
    ...     near_slot_vertices(t, t.slots)[1] is a[1]
    True
    >>> "near_slots" in t.cache
    False
    """
    depth = topology.cache.get("near_slots_depth", 0)
    topology.cache["near_slots_depth"] = depth + 1
    try:
        yield topology
    finally:
        if depth == 0:
            del topology.cache["near_slots_depth"]
            topology.cache.pop("near_slots", None)
        else:
            topology.cache["near_slots_depth"] = depth
