"""The physical network: vertices (compute nodes and switches), links with capacities, slots.

A :class:`Topology` is immutable once built.  Its links are stored once each (undirected, ``u < v``);
the adjacency is kept as CSR arrays of *arcs* (one per link direction) so that per-arc and per-link
loads are plain numpy arrays indexed by arc or link id.  Derived data (hop distances between slot
vertices) is computed lazily and cached.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .errors import TopologyError
from .vocabulary import DEFAULT_ROUTING, ROUTING_MODELS, SOURCES

__all__ = ["Topology", "HOST", "SWITCH", "native_routing", "source_of"]

HOST = "host"
SWITCH = "switch"

def _small_uint(maxval):
    for dt in (np.uint8, np.uint16, np.uint32):
        if maxval < np.iinfo(dt).max:
            return dt
    return np.int64


class Topology:
    """An undirected network with link capacities and per-vertex process slots.

    Parameters
    ----------
    names : sequence of str
        Unique vertex names (hostnames for compute nodes).  Vertex ``i`` is ``names[i]``.
    links : array_like of shape (m, 2)
        Vertex index pairs.  Parallel links are merged; their capacities add up.
    capacities : array_like of shape (m,), optional
        Link capacities (bandwidth), positive and finite.  Default 1 per link.
    slots : array_like of shape (n,), optional
        Processes each vertex can host, ``C(v)`` in Hoefler & Snir; 0 for switches.  Default 1 for
        every vertex whose kind is not ``"switch"``.
    kinds : sequence of str, optional
        ``"host"`` or ``"switch"`` (or any other label) per vertex.  Default: ``"host"`` where
        ``slots > 0`` else ``"switch"``.
    name : str, optional
        A label for the whole topology (shown by ``libtopomap info``).
    attrs : dict, optional
        Free-form JSON-serialisable metadata (generator parameters, source file...).

    Attributes
    ----------
    cache : dict
        Structures derived from the topology by other modules (dragonfly queries, nearest slot
        vertices), each under its module's key; not part of equality, not saved.

    Raises
    ------
    TopologyError
        Duplicate or empty names, a link naming an unknown vertex, a self-link, a non-positive or
        non-finite capacity, negative slots, no slot at all, or slot vertices that are not all
        connected to each other.

    Examples
    --------
    >>> t = Topology(["a", "b", "s"], [(0, 2), (1, 2)], slots=[1, 1, 0])
    >>> t.n_vertices, t.n_links, t.total_slots
    (3, 2, 2)
    """

    def __init__(self, names, links, *, capacities=None, slots=None, kinds=None, name=None, attrs=None):
        names = [str(x) for x in names]
        n = len(names)
        if n == 0:
            raise TopologyError("a topology needs at least one vertex")
        index = {}
        for i, nm in enumerate(names):
            if not nm or any(c.isspace() for c in nm):
                raise TopologyError(f"vertex {i}: name {nm!r} is empty or contains whitespace")
            if nm in index:
                raise TopologyError(f"duplicate vertex name {nm!r} (vertices {index[nm]} and {i})")
            index[nm] = i

        links = np.asarray(links) if len(links) else np.zeros((0, 2), np.int64)
        if links.size and not np.issubdtype(links.dtype, np.integer):
            as_float = np.asarray(links, dtype=np.float64)
            if not np.all(as_float == np.round(as_float)):
                raise TopologyError("link endpoints must be integer vertex indices")
        if links.size % 2:
            raise TopologyError(f"links must be pairs of vertex indices, got shape {links.shape}")
        links = links.astype(np.int64).reshape(-1, 2)
        m = links.shape[0]
        if capacities is None:
            cap = np.ones(m, dtype=np.float64)
        else:
            cap = np.asarray(capacities, dtype=np.float64).reshape(-1)
            if cap.shape[0] != m:
                raise TopologyError(f"{cap.shape[0]} capacities given for {m} links")
        if m:
            bad = np.flatnonzero((links < 0) | (links >= n))
            if bad.size:
                k = bad[0] // 2
                raise TopologyError(f"link {k} ({links[k, 0]}, {links[k, 1]}) names an unknown vertex (n = {n})")
            loops = np.flatnonzero(links[:, 0] == links[:, 1])
            if loops.size:
                k = loops[0]
                raise TopologyError(f"link {k} is a self-link at vertex {names[links[k, 0]]!r}")
            badc = np.flatnonzero(~np.isfinite(cap) | (cap <= 0))
            if badc.size:
                k = badc[0]
                u, v = links[k]
                raise TopologyError(f"link {names[u]!r}-{names[v]!r} has capacity {cap[k]!r}; "
                                    "capacities must be positive")

        if kinds is not None:
            kinds = [str(k) for k in kinds]
            if len(kinds) != n:
                raise TopologyError(f"{len(kinds)} kinds given for {n} vertices")
        if slots is None:
            sl = np.ones(n, dtype=np.int32) if kinds is None else np.array([k != SWITCH for k in kinds], np.int32)
        else:
            sl = np.asarray(slots)
            if sl.shape != (n,):
                raise TopologyError(f"slots must have one entry per vertex ({n}), got shape {sl.shape}")
            try:
                slf = sl.astype(np.float64)
            except (TypeError, ValueError, OverflowError):
                raise TopologyError("slots must be integers") from None
            if not np.all(np.isfinite(slf)) or np.any(slf != np.round(slf)):
                raise TopologyError("slots must be integers")
            neg = np.flatnonzero(slf < 0)
            if neg.size:
                raise TopologyError(f"vertex {names[neg[0]]!r} has negative slots {sl[neg[0]]}")
            big = np.flatnonzero(slf > np.iinfo(np.int32).max)  # stored as int32: no wrap-around
            if big.size:
                raise TopologyError(f"vertex {names[big[0]]!r} has {sl[big[0]]} slots, more than "
                                    f"{np.iinfo(np.int32).max}")
            sl = slf.astype(np.int32)
        if kinds is None:
            kinds = [HOST if s > 0 else SWITCH for s in sl]
        if sl.sum() == 0:
            raise TopologyError("no vertex has a slot: nothing can be mapped onto this topology")

        # Canonical, merged link list (u < v, sorted); parallel links add capacity.
        lo = np.minimum(links[:, 0], links[:, 1])
        hi = np.maximum(links[:, 0], links[:, 1])
        key = lo * n + hi
        uniq, inv = np.unique(key, return_inverse=True)
        merged_cap = np.zeros(uniq.size, dtype=np.float64)
        np.add.at(merged_cap, inv, cap)
        self._names = names
        self._index = index
        self._kinds = kinds
        self._slots = sl
        self._slots.setflags(write=False)
        self.link_u = (uniq // n).astype(np.int32)
        self.link_v = (uniq % n).astype(np.int32)
        self.capacity = merged_cap
        for a in (self.link_u, self.link_v, self.capacity):
            a.setflags(write=False)
        self.name = name
        self.attrs = dict(attrs or {})
        # derived structures other modules build once per topology (it is immutable), by their own keys
        self.cache = {}
        self._build_csr()
        self._check_connected()

    # ------------------------------------------------------------------ construction helpers
    def _build_csr(self):
        n, m = self.n_vertices, self.n_links
        # Arc 2l goes u->v, arc 2l+1 goes v->u for link l.
        src = np.empty(2 * m, dtype=np.int64)
        dst = np.empty(2 * m, dtype=np.int64)
        src[0::2], dst[0::2] = self.link_u, self.link_v
        src[1::2], dst[1::2] = self.link_v, self.link_u
        order = np.lexsort((dst, src))
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=self.indptr[1:])
        self.indices = dst[order].astype(np.int32)
        arc_id = order  # original arc number (2l or 2l+1) of each CSR position
        self.arc_link = (arc_id // 2).astype(np.int32)
        self.arc_capacity = self.capacity[self.arc_link]
        # reverse[a] = CSR position of the opposite arc
        pos = np.empty(2 * m, dtype=np.int64)
        pos[arc_id] = np.arange(2 * m)
        self.arc_reverse = pos[arc_id ^ 1].astype(np.int64)
        self.arc_source = np.repeat(np.arange(n, dtype=np.int32), np.diff(self.indptr))
        for a in (self.indptr, self.indices, self.arc_link, self.arc_capacity, self.arc_reverse, self.arc_source):
            a.setflags(write=False)

    def _check_connected(self):
        hosts = self.hosts
        if hosts.size <= 1:
            return
        ncomp, labels = csgraph.connected_components(self.adjacency, directed=False)
        # several components are fine as long as every slot vertex is in the same one
        if ncomp > 1 and np.unique(labels[hosts]).size > 1:
            comp_hosts = labels[hosts]
            main = np.bincount(comp_hosts).argmax()
            stray = hosts[comp_hosts != main]
            raise TopologyError(
                f"slot vertices are not all connected: {stray.size} of {hosts.size} "
                f"(e.g. {self._names[stray[0]]!r}) cannot reach {self._names[hosts[comp_hosts == main][0]]!r}"
            )

    @classmethod
    def from_edges(cls, edges, *, capacities=None, names=None, slots=None, kinds=None, name=None, attrs=None):
        """Build from an edge list of vertex names or indices.

        Parameters
        ----------
        edges : iterable of (u, v) or (u, v, capacity)
            Vertex names (str) or indices (int).  Names not in ``names`` are appended in order of
            first appearance.
        capacities : array_like, optional
            Capacities when ``edges`` are pairs.
        names : sequence of str, optional
            Vertex names in index order; required when ``edges`` use indices.
        slots, kinds, name, attrs
            As for :class:`Topology`; ``slots``/``kinds`` may also be dicts keyed by name.

        Returns
        -------
        Topology
        """
        names = list(names) if names is not None else []
        index = {nm: i for i, nm in enumerate(names)}
        pairs, caps = [], []
        for k, e in enumerate(edges):
            e = tuple(e)
            if len(e) not in (2, 3):
                raise TopologyError(f"edge {k}: expected (u, v) or (u, v, capacity), got {e!r}")
            ends = []
            for x in e[:2]:
                if isinstance(x, (int, np.integer)):
                    if not 0 <= x < len(names):
                        raise TopologyError(f"edge {k}: unknown vertex index {x}")
                    ends.append(int(x))
                else:
                    x = str(x)
                    if x not in index:
                        index[x] = len(names)
                        names.append(x)
                    ends.append(index[x])
            pairs.append(ends)
            caps.append(e[2] if len(e) == 3 else 1.0)
        if capacities is not None:
            caps = capacities
        if isinstance(slots, dict):
            slots = [slots.get(nm, 1) for nm in names]
        if isinstance(kinds, dict):
            kinds = [kinds.get(nm, HOST) for nm in names]
        return cls(names, np.array(pairs, dtype=np.int64).reshape(-1, 2), capacities=caps, slots=slots,
                   kinds=kinds, name=name, attrs=attrs)

    @classmethod
    def from_networkx(cls, graph, *, default_slots=1, name=None):
        """Build from an undirected networkx graph.

        Node attributes ``slots`` (default ``default_slots``, or 0 when ``kind == "switch"``), ``name``
        (default ``str(node)``) and ``kind``; edge attribute ``capacity`` (default 1).  Multigraph
        parallel edges add capacity.
        """
        if graph.is_directed():
            raise TopologyError("a topology is undirected: pass graph.to_undirected() instead of a directed graph")
        nodes = list(graph.nodes)
        pos = {v: i for i, v in enumerate(nodes)}
        names, slots, kinds = [], [], []
        for v in nodes:
            d = graph.nodes[v]
            kind = d.get("kind")
            names.append(str(d.get("name", v)))
            slots.append(d.get("slots", 0 if kind == SWITCH else default_slots))
            kinds.append(kind if kind is not None else (HOST if slots[-1] > 0 else SWITCH))
        links, caps = [], []
        for u, v, d in graph.edges(data=True):
            links.append((pos[u], pos[v]))
            caps.append(d.get("capacity", 1.0))
        return cls(names, np.array(links, dtype=np.int64).reshape(-1, 2), capacities=caps, slots=slots, kinds=kinds,
                   name=name if name is not None else graph.graph.get("name"), attrs=graph.graph.get("attrs"))

    @classmethod
    def from_scipy(cls, matrix, *, names=None, slots=None, kinds=None, name=None):
        """Build from a symmetric sparse matrix whose nonzeros are link capacities.

        Only the upper triangle is read; a nonzero diagonal is a self-link and is rejected.
        """
        a = sp.coo_matrix(matrix)
        if a.shape[0] != a.shape[1]:
            raise TopologyError(f"adjacency matrix must be square, got shape {a.shape}")
        if (a != a.T).nnz:
            raise TopologyError("adjacency matrix is not symmetric: every link must be listed in both directions")
        keep = a.row <= a.col
        n = a.shape[0]
        names = names if names is not None else [str(i) for i in range(n)]
        return cls(names, np.stack([a.row[keep], a.col[keep]], axis=1), capacities=a.data[keep],
                   slots=slots, kinds=kinds, name=name)

    def to_networkx(self):
        """An undirected :class:`networkx.Graph` with node attributes ``name, slots, kind`` and edge
        attribute ``capacity``; nodes are vertex indices."""
        import networkx as nx

        g = nx.Graph(name=self.name, attrs=dict(self.attrs))
        for i in range(self.n_vertices):
            g.add_node(i, name=self._names[i], slots=int(self._slots[i]), kind=self._kinds[i])
        g.add_weighted_edges_from(zip(self.link_u.tolist(), self.link_v.tolist(), self.capacity.tolist()),
                                  weight="capacity")
        return g

    def to_scipy(self):
        """Symmetric CSR matrix of capacities (``float64``)."""
        return sp.csr_matrix((self.arc_capacity, self.indices, self.indptr), shape=(self.n_vertices,) * 2)

    # ------------------------------------------------------------------ basic properties
    @property
    def n_vertices(self):
        return len(self._names)

    @property
    def n_links(self):
        return int(self.link_u.shape[0])

    @property
    def n_arcs(self):
        return 2 * self.n_links

    @property
    def names(self):
        """Vertex names, index order (a tuple)."""
        return tuple(self._names)

    @property
    def kinds(self):
        return tuple(self._kinds)

    @property
    def slots(self):
        """Slots per vertex (read-only ``int32`` array)."""
        return self._slots

    @cached_property
    def hosts(self):
        """Indices of the vertices with at least one slot (``int32``)."""
        h = np.flatnonzero(self._slots > 0).astype(np.int32)
        h.setflags(write=False)
        return h

    @cached_property
    def host_position(self):
        """``host_position[v]`` = position of vertex v in :attr:`hosts`, or -1."""
        p = np.full(self.n_vertices, -1, dtype=np.int64)
        p[self.hosts] = np.arange(self.hosts.size)
        p.setflags(write=False)
        return p

    @property
    def total_slots(self):
        return int(self._slots.sum())

    @cached_property
    def degree(self):
        """Number of distinct neighbours of each vertex."""
        return np.diff(self.indptr).astype(np.int32)

    @cached_property
    def adjacency(self):
        """Unweighted symmetric CSR adjacency (``int8`` ones)."""
        return sp.csr_matrix((np.ones(self.n_arcs, np.int8), self.indices, self.indptr),
                             shape=(self.n_vertices,) * 2)

    def index(self, name):
        """Vertex index of ``name``; raises :class:`TopologyError` naming the unknown vertex."""
        try:
            return self._index[name]
        except KeyError:
            raise TopologyError(f"unknown vertex {name!r}") from None

    def __contains__(self, name):
        return name in self._index

    def neighbors(self, v):
        return self.indices[self.indptr[v]:self.indptr[v + 1]]

    def __repr__(self):
        label = f" {self.name!r}" if self.name else ""
        return (f"<Topology{label}: {self.n_vertices} vertices, {self.hosts.size} hosts, "
                f"{self.total_slots} slots, {self.n_links} links>")

    def __eq__(self, other):
        if not isinstance(other, Topology):
            return NotImplemented
        return (self._names == other._names and self._kinds == other._kinds
                and np.array_equal(self._slots, other._slots)
                and np.array_equal(self.link_u, other.link_u) and np.array_equal(self.link_v, other.link_v)
                and np.allclose(self.capacity, other.capacity))

    def __hash__(self):
        # consistent with __eq__ (capacities compare with a tolerance, so they are left out)
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = hash((tuple(self._names), self.link_u.tobytes(), self.link_v.tobytes()))
        return h

    # ------------------------------------------------------------------ distances
    def hop_distances(self, sources):
        """Hop distances from ``sources`` (vertex indices) to every vertex, shape ``(len(sources), n)``.

        Unweighted BFS (compiled, parallel over sources), returned as ``int32`` with ``-1`` for
        unreachable vertices: ``len(sources) x n`` entries, for a few sources.  For pairs of vertices use
        :attr:`distances` (closed forms, a bounded table or searches; no all-pairs matrix).

        Raises
        ------
        TopologyError
            A source outside ``0..n-1``.
        """
        from ._kernels.bfs import bfs_distance_rows

        sources = np.atleast_1d(np.asarray(sources, dtype=np.int64)).reshape(-1)
        if sources.size and (sources.min() < 0 or sources.max() >= self.n_vertices):
            bad = sources[(sources < 0) | (sources >= self.n_vertices)][0]
            raise TopologyError(f"unknown vertex index {bad} (n = {self.n_vertices})")
        out = np.full((sources.size, self.n_vertices), -1, dtype=np.int32)
        if sources.size:
            column = np.arange(self.n_vertices, dtype=np.int64)
            bfs_distance_rows(self.indptr, self.indices, self.n_vertices, sources, column, out)
        return out

    @property
    def routing(self):
        """Name of the routing this network uses (:func:`native_routing`):
        ``attrs["routing"]`` when set, ``rt``/``rtt``/``minimal`` for the RT, RTT and dragonfly
        generators, else ``ecmp``.  Metrics use it with ``routing="native"``; their default stays
        ``"ecmp"``."""
        return native_routing(self)

    @cached_property
    def distances(self):
        """The :class:`~libtopomap.distances.DistanceOracle` of this topology (built on first use).

        Hop distances between any two vertices from closed forms (generated tori, meshes,
        hypercubes), a table bounded to 64 MiB, or breadth-first searches; never an all-pairs
        matrix.  ``topology.distances.pairs(a, b)`` answers a batch of pairs.
        """
        from .distances import DistanceOracle

        return DistanceOracle(self)

    @cached_property
    def host_distances(self):
        """Hop distances between slot vertices, shape ``(H, H)`` in :attr:`hosts` order (read-only).

        .. deprecated:: 0.2
            A dense ``H x H`` matrix does not scale (1 GiB at 32,768 hosts); use
            :attr:`distances` (``topology.distances.pairs(a, b)``).  Refused above 16,384 hosts.
        """
        import warnings

        warnings.warn("Topology.host_distances is deprecated (H x H memory); use topology.distances.pairs(a, b)",
                      DeprecationWarning, stacklevel=2)
        h = self.hosts.size
        if h > 16384:
            raise TopologyError(f"a dense host distance matrix of {h} x {h} would need {h * h / 2**30:.1f} GiB; "
                                "use topology.distances.pairs(a, b)")
        from ._kernels.bfs import bfs_distance_rows

        hosts = self.hosts.astype(np.int64)
        ecc = int(self.hop_distances(hosts[:1]).max())
        out = np.empty((h, h), dtype=_small_uint(2 * ecc))
        bfs_distance_rows(self.indptr, self.indices, self.n_vertices, hosts, self.host_position, out)
        out.setflags(write=False)
        return out

    def distance(self, u, v):
        """Hop distance between two vertices (vertex indices)."""
        return int(self.distances.pairs([u], [v])[0])


def native_routing(topology):
    """The routing a topology's network uses (``Topology.routing``; ``routing="native"`` of the metrics).

    Returns
    -------
    str
        ``attrs["routing"]`` when set, else ``"rt"``, ``"rtt"`` or ``"minimal"`` for the generators
        ``rt``, ``rtt`` and ``dragonfly``, ``"hybrid"`` for ``hybrid``, else ``"ecmp"``.
    """
    attrs = getattr(topology, "attrs", None) or {}
    declared = attrs.get("routing")
    if declared is not None:
        if declared not in ROUTING_MODELS:
            label = f" {topology.name!r}" if getattr(topology, "name", None) else ""
            raise TopologyError(f"topology{label} declares routing {declared!r}; known: {', '.join(ROUTING_MODELS)}")
        return declared
    return {"rt": "rt", "rtt": "rtt", "dragonfly": "minimal", "hybrid": "hybrid"}.get(attrs.get("generator"),
                                                                                   DEFAULT_ROUTING)


def source_of(topology):
    """How ``topology`` was found: its ``attrs["source"]`` when it is one of :data:`~libtopomap.vocabulary.SOURCES`,
    else ``"file"``."""
    s = topology.attrs.get("source")
    return s if s in SOURCES else "file"
