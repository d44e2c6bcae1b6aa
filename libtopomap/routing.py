"""Routing models: which links a message from one vertex to another crosses, and with what share.

Every metric of a mapping (congestion, dilation, hop-bytes) depends on how the network routes.  A
routing model is named by a string (or a :class:`Routing`) and gives, for a batch of demands
``(source vertex, destination vertex, weight)``, the load on every arc (:meth:`Routing.traffic`) and
the hops of each demand (:meth:`Routing.hops`).

Models
------
``ecmp``
    Path-uniform equal-cost multipath: a demand is split evenly over *all* shortest paths (Hoefler &
    Snir, ICS'11, section 2.5).  Computed by :func:`libtopomap.metrics.link_traffic` exactly as
    before this module existed (bit-identical).
``table``
    A fixed next-hop table: at every vertex the next hop towards ``t`` is the lowest-index neighbour
    one hop closer to ``t`` (a BFS tree per destination).  One path per pair.
``oblivious``
    At every vertex the message picks uniformly among the neighbours one hop closer to ``t``.  The
    expected loads differ from ``ecmp``: a vertex with two minimal next hops sends half its flow to
    each, whatever the number of shortest paths behind them.
``dimension-order``
    Tori and meshes (generated, verified by :attr:`~libtopomap.Topology.distances`): correct the
    coordinates one dimension at a time, dimension 0 first (the first number of ``"8x4x2"``), the
    shorter way round a ring; when both ways are equally long (displacement ``k/2`` on a ring of even
    length ``k``) the message goes *up* (increasing coordinate, wrapping).  On hypercubes this is
    e-cube routing: lowest differing bit first (bit 0 is the last grid dimension).
``rt`` / ``rtt``
    Rectangular (twisted) tori of seed 004: the routing record ``(x', y')`` of Algorithm 1 (RT) or
    Algorithm 2 (RTT), :func:`rt_routing_record` / :func:`rtt_routing_record`, walked horizontally
    first (``|x'|`` hops along ``x``), then vertically (``|y'|`` hops along ``y``; a vertical step
    off the edge of RTT(a) takes the twisted wrap link).
``minimal``
    Dragonfly minimal routing (seed 002, section II-A.2): terminal link, at most one local hop to the
    gate router, one global link, at most one local hop, terminal link (the gate choice of
    :meth:`libtopomap.collectives.Dragonfly.route`).  Not shortest-path routing: its hops can exceed
    the hop distance.
``valiant``
    Dragonfly Valiant routing: across groups, through an intermediate group ``I`` drawn uniformly
    among the ``g - 2`` groups other than the source and destination group; leg 1 leaves through the
    lowest gate of the source group towards ``I`` needing the fewest local hops, leg 2 is the minimal
    route from where it lands to the destination, so every inter-group message crosses exactly two
    global links.  Loads and hops are *expected values* over ``I``.  Inside a group, and when
    ``g = 2`` (no third group), messages route minimally.
``hybrid``
    Hybrid networks of seed 001 (:func:`~libtopomap.hybrid`, Mehta 2005, section 5.3): inside the
    source's component to the destination's position (e-cube on hypercube components, the
    lowest-index next hop of ``table`` on LDR components), then up-down through the fat tree of that
    position (:func:`~libtopomap.generators.hybrid.hybrid_route`).  Shortest paths, one per pair.

Defaults
--------
Every metric keeps ``routing="ecmp"`` as its default, so every number computed before this module
existed stays the same.  A topology still carries its *native* routing,
:func:`native_routing` (``Topology.routing``): ``rt``/``rtt`` for the generators :func:`~libtopomap.rt`
and :func:`~libtopomap.rtt`, ``minimal`` for :func:`~libtopomap.dragonfly` (concentrated or not),
``hybrid`` for :func:`~libtopomap.hybrid`, ``attrs["routing"]`` when a topology file declares one, else
``ecmp`` (tori, meshes, fat trees, files).
Pass ``routing="native"`` to use it.

Cost and memory
---------------
Hosts on a single link (terminals, concentrated hosts) cross that link whatever the model; they are
charged directly and their demands are handed to the attachment vertex.  ``table`` and ``oblivious``
run one breadth-first search per distinct destination, stopped at the farthest source, then push the
flow back to the destination: ``O(n)`` memory per search, no table; destinations run in parallel
chunks, one load array per thread.  The other models walk each
demand's path: ``O(hops)`` work per demand, nothing beyond the per-arc load array.  ``valiant`` sums
the volumes per router and per pair of groups when every pair of groups has one global link (seed
002's ``g = a h + 1``): ``O(demands + g^3)`` work; otherwise it walks ``g - 2`` routes per inter-group
demand (``O(g x hops)``), in parallel chunks of demands with one load array per thread.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from . import _kernels
from . import _numba_cache  # noqa: F401  (an unreadable cache file is a miss, not an error)
from .errors import ArgumentError, TopologyError
from .vocabulary import ROUTING_MODELS as _MODELS

__all__ = ["ROUTING_MODELS", "DEFAULT_ROUTING", "Routing", "get_routing", "native_routing", "route_traffic",
           "route_hops", "rt_routing_record", "rtt_routing_record", "pair_context", "pair_flows",
           "pair_hops", "pair_hops_batch"]

#: Names of the routing models (defined in :mod:`libtopomap.vocabulary` for the command line).
ROUTING_MODELS = _MODELS

#: The routing of every metric unless told otherwise.
DEFAULT_ROUTING = "ecmp"

_SHORTEST = frozenset(("ecmp", "table", "oblivious", "dimension-order", "rt", "rtt", "hybrid"))


# ----------------------------------------------------------------------------- routing records (seed 004)
def rt_routing_record(dx, dy, a):
    """Routing record of RT(a) (seed 004, Algorithm 1).

    Parameters
    ----------
    dx, dy : int or array_like of int
        Destination minus source, any integers (coordinates are taken modulo the torus).
    a : int
        ``a >= 2``; RT(a) is the ``2a x a`` torus.

    Returns
    -------
    (x', y') : ints or int64 arrays
        ``x' = rem(x + a, 2a) - a`` in ``[-a, a)`` and ``y' = rem(y + floor(a/2), a) - floor(a/2)``;
        ``|x'| + |y'|`` is the hop distance.

    References
    ----------
    C. Camarero, C. Martinez, R. Beivide, "Task Mapping in Rectangular Twisted Tori", Algorithm 1.

    Examples
    --------
    >>> rt_routing_record(5, -1, 4)
    (-3, -1)
    """
    a = _check_a(a)
    x, y = np.asarray(dx, dtype=np.int64), np.asarray(dy, dtype=np.int64)
    h = a // 2
    xr = np.mod(x + a, 2 * a) - a
    yr = np.mod(y + h, a) - h
    return _out(xr, yr, dx, dy)


def rtt_routing_record(dx, dy, a):
    """Routing record of RTT(a) (seed 004, Algorithm 2).

    Parameters
    ----------
    dx, dy : int or array_like of int
        Destination minus source, any integers.
    a : int
        ``a >= 2``.

    Returns
    -------
    (x', y') : ints or int64 arrays
        With ``p = rem(x + y + a, 2a)`` and ``q = rem(y - x + a, 2a)``: ``x' = (p - q)/2``,
        ``y' = (p + q - 2a)/2``; ``(x', y') - (x, y)`` lies in the lattice spanned by ``(a, a)`` and
        ``(a, -a)`` and ``|x'| + |y'|`` is the hop distance.

    References
    ----------
    C. Camarero, C. Martinez, R. Beivide, "Task Mapping in Rectangular Twisted Tori", Algorithm 2.

    Examples
    --------
    >>> rtt_routing_record(5, -1, 4)
    (-3, -1)
    """
    a = _check_a(a)
    x, y = np.asarray(dx, dtype=np.int64), np.asarray(dy, dtype=np.int64)
    p = np.mod(x + y + a, 2 * a)
    q = np.mod(y - x + a, 2 * a)
    return _out((p - q) // 2, (p + q - 2 * a) // 2, dx, dy)


def _check_a(a):
    if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or int(a) < 2:
        raise ArgumentError(f"a must be an integer >= 2, got {a!r}")
    return int(a)


def _out(xr, yr, dx, dy):
    if np.ndim(dx) == 0 and np.ndim(dy) == 0:
        return int(xr), int(yr)
    return xr, yr


# ----------------------------------------------------------------------------- model objects
class Routing:
    """A routing model (see the module docstring for the models).

    Parameters
    ----------
    name : str
        One of :data:`ROUTING_MODELS`.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t = ltm.torus("4x4")
    >>> r = Routing("dimension-order")
    >>> r.hops(t, [0], [5]).tolist()
    [2]
    """

    __slots__ = ("name",)

    def __init__(self, name):
        if name not in ROUTING_MODELS:
            raise ArgumentError(f"routing must be one of {', '.join(ROUTING_MODELS)} (or 'native'), got {name!r}")
        self.name = name

    def __repr__(self):
        return f"Routing({self.name!r})"

    def __eq__(self, other):
        return isinstance(other, Routing) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    @property
    def shortest(self):
        """Whether every route is a shortest path (hops equal the hop distance)."""
        return self.name in _SHORTEST

    def check(self, topology):
        """Raise :class:`~libtopomap.errors.TopologyError` when this model cannot route on ``topology``."""
        _context(self.name, topology)

    def traffic(self, topology, src, dst, weights=None):
        """Per-arc load (CSR arc order) of demands ``src[i] -> dst[i]`` of ``weights[i]`` (default 1)."""
        return route_traffic(topology, src, dst, weights, routing=self)

    def hops(self, topology, src, dst):
        """Links crossed by each demand: ``int64``, or expected ``float64`` for ``valiant``."""
        return route_hops(topology, src, dst, routing=self)


def native_routing(topology):
    """The routing a topology's network uses (see *Defaults* in the module docstring).

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


def get_routing(routing=None, topology=None):
    """A :class:`Routing` from a name, ``"native"`` (needs ``topology``), a Routing, or None (the default).

    Raises
    ------
    ArgumentError
        An unknown name.
    """
    if isinstance(routing, Routing):
        return routing
    if routing is None:
        return Routing(DEFAULT_ROUTING)
    if routing == "native":
        if topology is None:
            raise ArgumentError("routing='native' needs a topology")
        return Routing(native_routing(topology))
    if not isinstance(routing, str):
        raise ArgumentError(f"routing must be a name ({', '.join(ROUTING_MODELS)}, native), got {routing!r}")
    return Routing(routing)


def _label(topology):
    return f" {topology.name!r}" if getattr(topology, "name", None) else ""


def _context(name, topology):
    """What a model needs of the topology (checked once per call)."""
    if name == "dimension-order":
        shape = topology.distances.grid_shape
        if shape is None:
            raise TopologyError(f"topology{_label(topology)}: dimension-order routing needs a generated torus, "
                                "mesh or hypercube")
        dims, wrap = shape
        dims = np.asarray(dims, np.int64)
        order = np.arange(dims.size, dtype=np.int64)
        if topology.distances.kind == "hypercube":
            order = order[::-1].copy()  # e-cube: bit 0 (the last grid dimension) first
        return dims, np.asarray(wrap, np.bool_), order
    if name in ("rt", "rtt"):
        attrs = topology.attrs
        if attrs.get("generator") != name or "a" not in attrs:
            raise TopologyError(f"topology{_label(topology)}: {name} routing needs a topology from "
                                f"libtopomap.{name}() (generator {attrs.get('generator')!r})")
        return int(attrs["a"])
    if name in ("minimal", "valiant"):
        from .collectives.dragonfly import dragonfly_queries

        return dragonfly_queries(topology)
    if name == "hybrid":
        from .generators.hybrid import hybrid_layout

        if topology.attrs.get("generator") != "hybrid":
            raise TopologyError(f"topology{_label(topology)}: hybrid routing needs a topology from "
                                f"libtopomap.hybrid() (generator {topology.attrs.get('generator')!r})")
        return hybrid_layout(topology) + (int(topology.attrs["component"] == "hypercube"),)
    return None


def _demand_arrays(topology, src, dst, weights):
    s = np.asarray(src, dtype=np.int64).reshape(-1)
    t = np.asarray(dst, dtype=np.int64).reshape(-1)
    if s.shape != t.shape:
        raise ArgumentError(f"{s.size} sources but {t.size} destinations")
    w = np.ones(s.size) if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.shape != s.shape:
        raise ArgumentError(f"{w.size} weights for {s.size} demands")
    n = topology.n_vertices
    bad = (s < 0) | (s >= n) | (t < 0) | (t >= n)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise TopologyError(f"demand {i} ({s[i]} -> {t[i]}) names a vertex outside 0..{n - 1}")
    return s, t, w


def _leaves(topology):
    """``(att, off)``: a vertex on a single link to a vertex of higher degree is a leaf (``off = 1``)
    reached through that neighbour ``att``; every other vertex is its own attachment (``off = 0``)."""
    deg = np.diff(topology.indptr)
    n = topology.n_vertices
    att = np.arange(n, dtype=np.int64)
    if topology.indices.size == 0:
        return att, np.zeros(n, np.int64)
    first = topology.indices[np.minimum(topology.indptr[:-1], topology.indices.size - 1)].astype(np.int64)
    leaf = (deg == 1) & (deg[first] > 1)
    att[leaf] = first[leaf]
    return att, leaf.astype(np.int64)


def _strip_leaves(topology, s, t, w, traffic):
    """Charge the single link of leaf hosts and hand their demands to the attachment vertex."""
    att, off = _leaves(topology)
    keep = s != t
    s, t, w = s[keep], t[keep], w[keep]
    ls = off[s] == 1
    if ls.any():
        traffic += np.bincount(topology.indptr[s[ls]], weights=w[ls], minlength=traffic.size)
        s = np.where(ls, att[s], s)
    lt = off[t] == 1
    if lt.any():
        traffic += np.bincount(topology.arc_reverse[topology.indptr[t[lt]]], weights=w[lt], minlength=traffic.size)
        t = np.where(lt, att[t], t)
    keep = s != t
    return s[keep], t[keep], w[keep]


def route_traffic(topology, src, dst, weights=None, *, routing=None):
    """Per-arc load of vertex demands under a routing model.

    Parameters
    ----------
    topology : Topology
    src, dst : array_like of int
        Source and destination vertex of each demand (equal ones carry nothing).
    weights : array_like of float, optional
        Volume of each demand (default 1).
    routing : str or Routing, optional
        A model of :data:`ROUTING_MODELS`, ``"native"``, or None for :data:`DEFAULT_ROUTING`.

    Returns
    -------
    numpy.ndarray of float64, one entry per arc (CSR order of ``topology.indices``).

    Raises
    ------
    TopologyError
        The model cannot route on this topology, a vertex index is out of range, or a demand's
        vertices are not connected.
    """
    r = get_routing(routing, topology)
    ctx = _context(r.name, topology)
    s, t, w = _demand_arrays(topology, src, dst, weights)
    if r.name == "ecmp":
        from .metrics import ecmp_vertex_traffic

        return ecmp_vertex_traffic(topology, s, t, w)
    traffic = np.zeros(topology.n_arcs)
    s, t, w = _strip_leaves(topology, s, t, w, traffic)
    if s.size == 0:
        return traffic
    hops = np.zeros(s.size)
    if r.name in ("table", "oblivious"):
        order = np.lexsort((s, t))
        s, t, w = s[order], t[order], w[order]
        dests, start = np.unique(t, return_index=True)
        ptr = np.append(start, t.size).astype(np.int64)
        ok = _toward_parallel(topology.indptr, topology.indices, topology.n_vertices, dests.astype(np.int64), ptr,
                              s, w, r.name == "oblivious", traffic)
        if not ok:
            raise TopologyError("a communicating pair of vertices is not connected")
    elif r.name == "dimension-order":
        dims, wrap, dorder = ctx
        _dimension_order_walk(topology.distances.grid_arcs(), topology.indices, dims, wrap, dorder, s, t, w,
                              traffic, hops)
    elif r.name in ("rt", "rtt"):
        ok = _twisted_walk(topology.indptr, topology.indices, ctx, r.name == "rtt", s, t, w, traffic, hops)
        if not ok:
            raise TopologyError(f"topology{_label(topology)} lacks a link of {r.name.upper()}({ctx})")
    elif r.name == "hybrid":
        meta, packed, table = topology.distances.fast_arrays
        ok = _routes_batch(pair_context(topology, r), s, t, w, topology.indptr, topology.indices, topology.arc_reverse,
                           meta, packed, table, bool(topology.distances.covers_all), traffic)
        if not ok:
            raise TopologyError(f"topology{_label(topology)} lacks a link of its hybrid routes")
    else:
        _dragonfly_call(topology, ctx, r.name == "valiant", s, t, w, traffic, hops)
    return traffic


def route_hops(topology, src, dst, *, routing=None):
    """Links crossed by each demand ``src[i] -> dst[i]`` under a routing model.

    Returns
    -------
    numpy.ndarray
        ``int64`` hop counts; for ``valiant`` the expected hops over the intermediate group
        (``float64``).  Shortest-path models (all but ``minimal`` and ``valiant``) answer from
        ``topology.distances``.
    """
    r = get_routing(routing, topology)
    ctx = _context(r.name, topology)
    s, t, _ = _demand_arrays(topology, src, dst, None)
    if r.shortest:
        return topology.distances.pairs(s, t)
    att, off = _leaves(topology)
    out = np.where(s != t, off[s] + off[t], 0).astype(np.float64)
    cs, ct = att[s].astype(np.int64), att[t].astype(np.int64)
    core = cs != ct
    hops = np.zeros(int(core.sum()))
    scratch = np.zeros(topology.n_arcs)
    _dragonfly_call(topology, ctx, r.name == "valiant", cs[core], ct[core], np.zeros(hops.size), scratch, hops)
    out[core] += hops
    if r.name == "valiant":
        return out
    return np.rint(out).astype(np.int64)


# ----------------------------------------------------------------------------- kernels
# Every kernel adds a load through _put, which also logs the change when the log has room (the
# local-search engine undoes a rejected move from the log); the batch walks pass an empty log.

@njit(cache=True, inline="always")
def _put(traffic, a, f, log_arc, log_val, log_n):
    traffic[a] += f
    k = log_n[0]
    if k < log_arc.size:
        log_arc[k] = a
        log_val[k] = f
        log_n[0] = k + 1
    else:
        log_n[1] = 1


@njit(cache=True, inline="always")
def _no_log():
    return np.empty(0, np.int64), np.empty(0), np.zeros(2, np.int64)


@njit(cache=True)
def _toward_destinations(indptr, indices, n, dests, ptr, srcs, ws, oblivious, traffic):
    """``table`` / ``oblivious`` loads: per destination a BFS from it (stopped at the farthest
    source; search ``i`` marks what it visits with ``stamp == i``), then the flow pushed from the
    far sources towards it, each vertex handing its flow to its lowest-index minimal next hop
    (table) or evenly to all of them (oblivious).  False when a source is not reached."""
    stamp, level, queue = _kernels._bfs_scratch(n)
    is_src = np.full(n, -1, np.int64)
    flow = np.zeros(n)
    for i in range(dests.size):
        t = dests[i]
        need = _kernels._bfs_targets(srcs, ptr[i], ptr[i + 1], i, is_src, t)
        for j in range(ptr[i], ptr[i + 1]):
            flow[srcs[j]] += ws[j]
        head, tail = _kernels._bfs_start(t, i, stamp, level, queue)
        while head < tail and need > 0:
            tail, hits = _kernels._bfs_visit(indptr, indices, queue[head], i, stamp, level, queue, tail, is_src)
            need -= hits
            head += 1
        if need > 0:
            return False
        for k in range(tail - 1, 0, -1):
            u = queue[k]
            f = flow[u]
            if f != 0.0:
                du = level[u] - 1
                if oblivious:
                    c = 0
                    for a in range(indptr[u], indptr[u + 1]):
                        v = indices[a]
                        if stamp[v] == i and level[v] == du:
                            c += 1
                    share = f / c
                    for a in range(indptr[u], indptr[u + 1]):
                        v = indices[a]
                        if stamp[v] == i and level[v] == du:
                            traffic[a] += share
                            flow[v] += share
                else:
                    for a in range(indptr[u], indptr[u + 1]):  # neighbours in increasing index
                        v = indices[a]
                        if stamp[v] == i and level[v] == du:
                            traffic[a] += f
                            flow[v] += f
                            break
            flow[u] = 0.0
        flow[t] = 0.0
    return True


@njit(cache=True, parallel=True)
def _toward_chunks(indptr, indices, n, dests, ptr, srcs, ws, oblivious, parts, oks):
    nchunks = parts.shape[0]
    for c in prange(nchunks):
        lo = c * dests.size // nchunks
        hi = (c + 1) * dests.size // nchunks
        oks[c] = _toward_destinations(indptr, indices, n, dests[lo:hi], ptr[lo:hi + 1], srcs, ws, oblivious,
                                      parts[c])


def _toward_parallel(indptr, indices, n, dests, ptr, srcs, ws, oblivious, traffic):
    """:func:`_toward_destinations` over chunks of destinations in parallel, one load array per thread
    (``O(threads x (n + arcs))`` memory)."""
    nchunks = min(numba.get_num_threads(), dests.size)
    if nchunks <= 1:
        return _toward_destinations(indptr, indices, n, dests, ptr, srcs, ws, oblivious, traffic)
    parts = np.zeros((nchunks, traffic.size))
    oks = np.zeros(nchunks, np.bool_)
    _toward_chunks(indptr, indices, n, dests, ptr, srcs, ws, oblivious, parts, oks)
    traffic += parts.sum(axis=0)
    return bool(oks.all())


@njit(cache=True)
def _table_leg(indptr, indices, s, t, w, oblivious, meta, packed, table, prune, no_targets, traffic, dist, sigma,
               flow, order, log_arc, log_val, log_n):
    """One ``table`` / ``oblivious`` demand ``s -> t`` of volume ``w``: a search from ``t`` (pruned to
    the shortest ``s``-``t`` paths by oracle distances with ``prune``, else stopped after the level
    holding ``s``) gives the distances to ``t``; the route takes the lowest-index neighbour one hop
    closer (table), or the flow is split evenly over those neighbours (oblivious).  ``dist`` must be
    -1 and ``sigma, flow`` 0 on entry (reset on return).  False when ``s`` is not reached."""
    grid3, k0, k1, k2, w0, w1, w2 = _kernels.grid3_dims(meta)
    g3 = (grid3 and prune, k0, k1, k2, w0, w1, w2)
    dst = _kernels.hop_distance(meta, packed, table, t, s) if prune else 0
    tg = _kernels.grid3_target(packed, s, g3[0])
    tail, missed = _kernels._sigma_search(indptr, indices, t, order, dist, sigma, no_targets, 1, prune,
                                          (meta, packed, table), s, dst, g3, tg)
    if missed == 0:
        if oblivious:
            flow[s] = w
            for j in range(tail - 1, 0, -1):
                u = order[j]
                f = flow[u]
                if f == 0.0:
                    continue
                du = dist[u] - 1
                c = 0
                for a in range(indptr[u], indptr[u + 1]):
                    if dist[indices[a]] == du:
                        c += 1
                share = f / c
                for a in range(indptr[u], indptr[u + 1]):
                    v = indices[a]
                    if dist[v] == du:
                        _put(traffic, a, share, log_arc, log_val, log_n)
                        flow[v] += share
        else:
            u = s
            while u != t:
                du = dist[u] - 1
                for a in range(indptr[u], indptr[u + 1]):  # neighbours in increasing index
                    v = indices[a]
                    if dist[v] == du:
                        _put(traffic, a, w, log_arc, log_val, log_n)
                        u = v
                        break
    _kernels._sigma_reset(order, tail, dist, sigma, flow)
    return missed == 0


@njit(cache=True)
def _dimension_order_route(arcs, indices, dims, wrap, dorder, strides, s, t, w, traffic, log_arc, log_val, log_n):
    """One demand dimension by dimension (``dorder``), the shorter way round (up on a tie); its hops."""
    v = s
    h = 0
    for jj in range(dims.size):
        j = dorder[jj]
        k = dims[j]
        cs = (v // strides[j]) % k
        ct = (t // strides[j]) % k
        d = ct - cs
        if wrap[j]:
            d = d % k
            if 2 * d > k:
                d -= k
        col = 2 * j if d > 0 else 2 * j + 1
        for _ in range(abs(d)):
            a = arcs[v, col]
            _put(traffic, a, w, log_arc, log_val, log_n)
            v = indices[a]
            h += 1
    return h


@njit(cache=True)
def _dimension_order_walk(arcs, indices, dims, wrap, dorder, s, t, w, traffic, hops):
    """:func:`_dimension_order_route` of every demand."""
    nd = dims.size
    strides = np.ones(nd, np.int64)
    for j in range(nd - 2, -1, -1):
        strides[j] = strides[j + 1] * dims[j + 1]
    log_arc, log_val, log_n = _no_log()
    for i in range(s.size):
        hops[i] = _dimension_order_route(arcs, indices, dims, wrap, dorder, strides, s[i], t[i], w[i], traffic,
                                         log_arc, log_val, log_n)


@njit(cache=True, inline="always")
def _find_arc(indptr, indices, u, v):
    lo, hi = indptr[u], indptr[u + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[u + 1] and indices[lo] == v:
        return lo
    return -1


@njit(cache=True)
def _twisted_route(indptr, indices, a, twisted, s, t, w, traffic, log_arc, log_val, log_n):
    """One demand along its routing record (Alg. 1 or 2 of seed 004): x first, then y.  Its hops, or
    -1 when the topology lacks a link of the record."""
    W = 2 * a
    hh = a // 2
    x, y = s % W, s // W
    dx, dy = t % W - x, t // W - y
    if twisted:
        p = (dx + dy + a) % W
        q = (dy - dx + a) % W
        rx, ry = (p - q) // 2, (p + q - W) // 2
    else:
        rx = (dx + a) % W - a
        ry = (dy + hh) % a - hh
    u = s
    for _ in range(abs(rx)):
        x = (x + (1 if rx > 0 else -1)) % W
        v = y * W + x
        arc = _find_arc(indptr, indices, u, v)
        if arc < 0:
            return -1
        _put(traffic, arc, w, log_arc, log_val, log_n)
        u = v
    for _ in range(abs(ry)):
        y2 = y + (1 if ry > 0 else -1)
        if y2 < 0 or y2 >= a:
            if twisted:  # (x, -1) = (x + a, a - 1) and (x, a) = (x - a, 0) modulo the lattice
                x = (x + a) % W
            y2 = y2 % a
        y = y2
        v = y * W + x
        arc = _find_arc(indptr, indices, u, v)
        if arc < 0:
            return -1
        _put(traffic, arc, w, log_arc, log_val, log_n)
        u = v
    return abs(rx) + abs(ry)


@njit(cache=True)
def _twisted_walk(indptr, indices, a, twisted, s, t, w, traffic, hops):
    """:func:`_twisted_route` of every demand; False when a link is missing."""
    log_arc, log_val, log_n = _no_log()
    for i in range(s.size):
        h = _twisted_route(indptr, indices, a, twisted, s[i], t[i], w[i], traffic, log_arc, log_val, log_n)
        if h < 0:
            return False
        hops[i] = h
    return True


@njit(cache=True, inline="always")
def _gate(near, far, gs, gd, rs, rd):
    """Global link of the minimal route from router ``rs`` (group ``gs``) to router ``rd`` (group
    ``gd``; ``rd = -1``: only the local hop at the source counts): fewest local hops, first link on
    ties (the links are sorted by near then far router)."""
    best, bu, bv = 4, -1, -1
    for k in range(near.shape[2]):
        u = near[gs, gd, k]
        if u < 0:
            break
        v = far[gs, gd, k]
        c = (1 if u != rs else 0) + (1 if (rd >= 0 and v != rd) else 0)
        if c < best:
            best, bu, bv = c, u, v
    return bu, bv


@njit(cache=True, inline="always")
def _charge(indptr, indices, rv, ru, rw, f, traffic, log_arc, log_val, log_n):
    """Charge ``f`` on the link between router ids ``ru`` and ``rw``; returns 1 (a hop) or 0 when equal."""
    if ru == rw:
        return 0
    a = _find_arc(indptr, indices, rv[ru], rv[rw])
    _put(traffic, a, f, log_arc, log_val, log_n)
    return 1


@njit(cache=True)
def _dragonfly_route(indptr, indices, rv, near, far, a, g, valiant, rs, rd, w, traffic, log_arc, log_val, log_n):
    """Minimal or (expected) Valiant route between router ids ``rs`` and ``rd``; its (expected) hops."""
    gs, gd = rs // a, rd // a
    if gs == gd:
        return float(_charge(indptr, indices, rv, rs, rd, w, traffic, log_arc, log_val, log_n))
    if not valiant or g <= 2:
        u, v = _gate(near, far, gs, gd, rs, rd)
        h = _charge(indptr, indices, rv, rs, u, w, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, u, v, w, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, v, rd, w, traffic, log_arc, log_val, log_n)
        return float(h)
    f = w / (g - 2)
    total = 0
    for gi in range(g):
        if gi == gs or gi == gd:
            continue
        u, v = _gate(near, far, gs, gi, rs, -1)
        h = _charge(indptr, indices, rv, rs, u, f, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, u, v, f, traffic, log_arc, log_val, log_n)
        u2, v2 = _gate(near, far, gi, gd, v, rd)
        h += _charge(indptr, indices, rv, v, u2, f, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, u2, v2, f, traffic, log_arc, log_val, log_n)
        h += _charge(indptr, indices, rv, v2, rd, f, traffic, log_arc, log_val, log_n)
        total += h
    return total / (g - 2)


@njit(cache=True)
def _dragonfly_walk(indptr, indices, rid, rv, near, far, a, g, valiant, s, t, w, traffic, hops):
    """Minimal or (expected) Valiant routes between routers (terminal links already charged)."""
    log_arc, log_val, log_n = _no_log()
    for i in range(s.size):
        hops[i] = _dragonfly_route(indptr, indices, rv, near, far, a, g, valiant, rid[s[i]], rid[t[i]], w[i], traffic,
                                   log_arc, log_val, log_n)


@njit(cache=True, parallel=True)
def _dragonfly_chunks(indptr, indices, rid, rv, near, far, a, g, valiant, s, t, w, parts, hops):
    nchunks = parts.shape[0]
    for c in prange(nchunks):
        lo = c * s.size // nchunks
        hi = (c + 1) * s.size // nchunks
        _dragonfly_walk(indptr, indices, rid, rv, near, far, a, g, valiant, s[lo:hi], t[lo:hi], w[lo:hi], parts[c],
                        hops[lo:hi])


@njit(cache=True)
def _valiant_sums(indptr, indices, rid, rv, near, far, a, g, s, t, w, traffic, hops):
    """Expected Valiant loads and hops of every demand with one global link per pair of groups
    (``near[G, H, 0]``, ``far[G, H, 0]``), from sums instead of ``g - 2`` routes per demand.

    With ``N = near``, ``F = far`` and ``G[gs, gd]`` the volume between groups, every route via ``I``
    is ``rs -> N[gs,I] -> F[gs,I] -> N[I,gd] -> F[I,gd] -> rd``; each of its five links depends on
    fewer indices than the route, so the load of a link is a sum over those only (``c`` counts the
    groups whose gate is a given router; the demands' own group ``I = gd`` / ``I = gs`` is taken off
    per demand):

    * local ``rs -> x``: ``(out[rs] c[gs, x] - S[rs, x]) / (g - 2)``, ``S[rs, x]`` the volume of the
      demands from ``rs`` whose gate towards their destination group is ``x``;
    * global ``gs -> I``: ``(sum_H G[gs, H] - G[gs, I]) / (g - 2)``, and ``I -> gd`` alike;
    * local ``F[gs,I] -> N[I,gd]`` inside ``I``: ``sum G[gs, gd] / (g - 2)`` over the pairs of groups
      landing on ``F[gs,I]`` and leaving from ``N[I,gd]`` (``O(g^3)`` additions, ``O(a^2)`` memory);
    * local ``x -> rd``: as the first, mirrored.

    Work ``O(demands + g^3 + g a^2)``, memory ``O(g a^2 + g^2)`` (the walk: ``O(demands x g)``).  Hops:
    integer counts of the same sums, divided by ``g - 2`` as the walk does (bit-identical)."""
    R = g * a
    log_arc, log_val, log_n = _no_log()
    wout = np.zeros(R)
    win = np.zeros(R)
    sx = np.zeros((R, a))
    sy = np.zeros((R, a))
    G = np.zeros((g, g))
    for i in range(s.size):
        rs, rd = rid[s[i]], rid[t[i]]
        gs, gd = rs // a, rd // a
        if gs == gd:
            hops[i] = _charge(indptr, indices, rv, rs, rd, w[i], traffic, log_arc, log_val, log_n)
            continue
        wout[rs] += w[i]
        win[rd] += w[i]
        sx[rs, near[gs, gd, 0] - gs * a] += w[i]
        sy[rd, far[gs, gd, 0] - gd * a] += w[i]
        G[gs, gd] += w[i]
    cn, cf, mid = _valiant_tables(near, far, a, g)
    d = g - 2
    for r in range(R):  # first and last local hops
        gr = r // a
        for x in range(a):
            u = gr * a + x
            if u == r:
                continue
            if wout[r] != 0.0:
                _charge(indptr, indices, rv, r, u, (wout[r] * cn[gr, x] - sx[r, x]) / d, traffic, log_arc, log_val,
                        log_n)
            if win[r] != 0.0:
                _charge(indptr, indices, rv, u, r, (win[r] * cf[gr, x] - sy[r, x]) / d, traffic, log_arc, log_val,
                        log_n)
    gout = np.zeros(g)
    gin = np.zeros(g)
    for g1 in range(g):
        for g2 in range(g):
            gout[g1] += G[g1, g2]
            gin[g2] += G[g1, g2]
    for g1 in range(g):  # global links g1 -> g2: first leg (from g1 via g2) and second leg (via g1 to g2)
        for g2 in range(g):
            if g1 != g2:
                f = (gout[g1] - G[g1, g2]) / d + (gin[g2] - G[g1, g2]) / d
                if f != 0.0:
                    _charge(indptr, indices, rv, near[g1, g2, 0], far[g1, g2, 0], f, traffic, log_arc, log_val,
                            log_n)
    m = np.zeros((a, a))
    for I in range(g):  # local hop inside the intermediate group
        m[:, :] = 0.0
        for gs in range(g):
            if gs == I or gout[gs] == 0.0:
                continue
            x = far[gs, I, 0] - I * a
            for gd in range(g):
                if gd != I and gd != gs:
                    m[x, near[I, gd, 0] - I * a] += G[gs, gd]
        for x in range(a):
            for y in range(a):
                if x != y and m[x, y] != 0.0:
                    _charge(indptr, indices, rv, I * a + x, I * a + y, m[x, y] / d, traffic, log_arc, log_val, log_n)
    for i in range(s.size):  # hops: 2 global links + the local ones, summed over I as integers
        rs, rd = rid[s[i]], rid[t[i]]
        gs, gd = rs // a, rd // a
        if gs == gd:
            continue
        hops[i] = _valiant_total(near, far, a, g, cn, cf, mid, rs, rd) / d


@njit(cache=True)
def _valiant_tables(near, far, a, g):
    """``(cn, cf, mid)`` of Valiant routing with one global link per pair of groups: ``cn[G, x]`` the
    groups ``I != G`` whose gate from ``G`` is router ``x`` of ``G``, ``cf[H, x]`` the groups ``I !=
    H`` whose link into ``H`` lands on router ``x`` of ``H``, ``mid[gs, gd]`` the intermediate groups
    ``I`` whose route from ``gs`` to ``gd`` takes a local hop inside ``I``.  ``O(g^3)`` work,
    ``O(g^2 + g a)`` memory."""
    cn = np.zeros((g, a), np.int64)
    cf = np.zeros((g, a), np.int64)
    for g1 in range(g):
        for g2 in range(g):
            if g1 != g2:
                cn[g1, near[g1, g2, 0] - g1 * a] += 1
                cf[g2, far[g1, g2, 0] - g2 * a] += 1
    mid = np.zeros((g, g), np.int64)
    for gs in range(g):
        for I in range(g):
            if I != gs:
                x = far[gs, I, 0]
                for gd in range(g):
                    if gd != I and gd != gs and x != near[I, gd, 0]:
                        mid[gs, gd] += 1
    return cn, cf, mid


@njit(cache=True, inline="always")
def _valiant_total(near, far, a, g, cn, cf, mid, rs, rd):
    """Links of the Valiant routes from router ``rs`` to ``rd`` (different groups, one global link per
    pair of groups) summed over the ``g - 2`` intermediate groups, from :func:`_valiant_tables`:
    2 global links each, the local hops inside the intermediate groups (``mid``), and a first (last)
    local hop for every ``I`` whose gate (landing router) is not ``rs`` (``rd``)."""
    gs, gd = rs // a, rd // a
    total = 2 * (g - 2) + mid[gs, gd]
    total += (g - 1) - cn[gs, rs - gs * a] - (1 if near[gs, gd, 0] != rs else 0)
    total += (g - 1) - cf[gd, rd - gd * a] - (1 if far[gs, gd, 0] != rd else 0)
    return total


def _dragonfly_call(topology, q, valiant, s, t, w, traffic, hops):
    """Minimal or Valiant walks; Valiant (``O(g)`` routes per demand) from sums (:func:`_valiant_sums`)
    with one global link per pair of groups, else in parallel chunks of demands, one load array per
    thread."""
    if valiant and q.groups > 2 and q.links_per_pair == 1:
        _valiant_sums(topology.indptr, topology.indices, q._rid, q.router_vertices, q._near, q._far, q.routers,
                      q.groups, s, t, w, traffic, hops)
        return
    args = (topology.indptr, topology.indices, q._rid, q.router_vertices, q._near, q._far, q.routers, q.groups,
            valiant, s, t, w)
    nchunks = min(numba.get_num_threads(), s.size // 1024) if valiant and q.groups > 2 else 1
    if nchunks <= 1:
        _dragonfly_walk(*args, traffic, hops)
        return
    parts = np.zeros((nchunks, traffic.size))
    _dragonfly_chunks(*args, parts, hops)
    traffic += parts.sum(axis=0)


@njit(cache=True)
def _fat_tree_route(indptr, indices, T, D, k, n, j, cs, ct, w, traffic, log_arc, log_val, log_n):
    """Up-down route in fat tree ``j`` of a hybrid from component ``cs`` to ``ct`` (as
    :func:`libtopomap.generators.hybrid.fat_tree_path`); its hops, or -1 when a link is missing."""
    if cs == ct:
        return 0
    words = k ** (n - 1)
    base = T + j * n * words
    i = 0
    p = words
    while (cs // p) % k == (ct // p) % k:  # first base-k digit (most significant first) that differs
        i += 1
        p //= k
    u = cs * D + j
    wd = cs // k
    h = 0
    for lv in range(n - 1, i - 1, -1):  # up to level i without changing the word
        v = base + lv * words + wd
        arc = _find_arc(indptr, indices, u, v)
        if arc < 0:
            return -1
        _put(traffic, arc, w, log_arc, log_val, log_n)
        u = v
        h += 1
    for lv in range(i, n - 1):  # going down from lv to lv + 1 sets digit lv
        place = k ** (n - 2 - lv)
        wd = wd - ((wd // place) % k) * place + ((ct // k ** (n - 1 - lv)) % k) * place
        v = base + (lv + 1) * words + wd
        arc = _find_arc(indptr, indices, u, v)
        if arc < 0:
            return -1
        _put(traffic, arc, w, log_arc, log_val, log_n)
        u = v
        h += 1
    arc = _find_arc(indptr, indices, u, ct * D + j)
    if arc < 0:
        return -1
    _put(traffic, arc, w, log_arc, log_val, log_n)
    return h + 1


# model codes of the compiled kernels (first entry of pair_context()[0])
_ECMP, _TABLE, _OBLIVIOUS, _DIMORDER, _RT, _RTT, _MINIMAL, _VALIANT, _HYBRID = range(9)
_CODES = {"ecmp": _ECMP, "table": _TABLE, "oblivious": _OBLIVIOUS, "dimension-order": _DIMORDER, "rt": _RT,
          "rtt": _RTT, "minimal": _MINIMAL, "valiant": _VALIANT, "hybrid": _HYBRID}


@njit(cache=True)
def _route_one(rctx, s, t, w, indptr, indices, arc_reverse, meta, packed, table, prune, no_targets, traffic, dist,
               sigma, flow, order, log_arc, log_val, log_n):
    """Route one demand ``s -> t`` (``s != t``) of volume ``w`` under the model of ``rctx``
    (:func:`pair_context`; not ``ecmp``): leaf hosts' links first, then the model's route.  Returns
    False when a link is missing or a vertex unreachable."""
    ip, att, off, arcs, dims, wrap, dorder, strides, rid, rv, near, far, _, _, _ = rctx
    kind = ip[0]
    if off[s] == 1:
        _put(traffic, indptr[s], w, log_arc, log_val, log_n)
        s = att[s]
    if off[t] == 1:
        _put(traffic, arc_reverse[indptr[t]], w, log_arc, log_val, log_n)
        t = att[t]
    if s == t:
        return True
    if kind == _TABLE or kind == _OBLIVIOUS:
        return _table_leg(indptr, indices, s, t, w, kind == _OBLIVIOUS, meta, packed, table, prune, no_targets,
                          traffic, dist, sigma, flow, order, log_arc, log_val, log_n)
    if kind == _DIMORDER:
        _dimension_order_route(arcs, indices, dims, wrap, dorder, strides, s, t, w, traffic, log_arc, log_val, log_n)
        return True
    if kind == _RT or kind == _RTT:
        return _twisted_route(indptr, indices, ip[1], kind == _RTT, s, t, w, traffic, log_arc, log_val, log_n) >= 0
    if kind == _MINIMAL or kind == _VALIANT:
        _dragonfly_route(indptr, indices, rv, near, far, ip[2], ip[3], kind == _VALIANT, rid[s], rid[t], w, traffic,
                         log_arc, log_val, log_n)
        return True
    # hybrid: inside the source's component to the destination's position, then its fat tree
    T, D, k, n = ip[4], ip[5], ip[6], ip[7]
    cs, js = s // D, s % D
    ct, jt = t // D, t % D
    if js != jt:
        if ip[8] == 1:  # hypercube components: e-cube, lowest differing bit first
            x = js
            diff = js ^ jt
            while diff:
                low = diff & -diff
                u = cs * D + x
                x ^= low
                diff ^= low
                arc = _find_arc(indptr, indices, u, cs * D + x)
                if arc < 0:
                    return False
                _put(traffic, arc, w, log_arc, log_val, log_n)
        elif not _table_leg(indptr, indices, s, cs * D + jt, w, False, meta, packed, table, prune, no_targets,
                            traffic, dist, sigma, flow, order, log_arc, log_val, log_n):
            return False
    return _fat_tree_route(indptr, indices, T, D, k, n, jt, cs, ct, w, traffic, log_arc, log_val, log_n) >= 0


@njit(cache=True)
def pair_flows(rctx, cnt, es, et, ewf, ewr, sign, indptr, indices, arc_reverse, meta, packed, table, prune, traffic,
               dist, sigma, flow, order, log_arc, log_val, log_n):
    """:func:`libtopomap._kernels.ecmp_pair_flows` under the routing model of ``rctx``
    (:func:`pair_context`): add ``sign * ewf[i]`` from vertex ``es[i]`` to ``et[i]`` and ``sign *
    ewr[i]`` back for ``i < cnt``, logging every change (same arguments and contract).  ``ecmp``
    calls ``ecmp_pair_flows`` itself (bit-identical); the other models route each direction on its
    own (their routes back are not the reverse of the routes there).  False if a pair cannot be
    routed."""
    if rctx[0][0] == _ECMP:
        return _kernels.ecmp_pair_flows(cnt, es, et, ewf, ewr, sign, indptr, indices, arc_reverse, meta, packed,
                                        table, prune, traffic, dist, sigma, flow, order, log_arc, log_val, log_n)
    no_targets = np.zeros(0, np.bool_)
    ok = True
    for i in range(cnt):
        s = es[i]
        t = et[i]
        if s == t:
            continue
        wf = sign * ewf[i]
        if wf != 0.0 and not _route_one(rctx, s, t, wf, indptr, indices, arc_reverse, meta, packed, table, prune,
                                        no_targets, traffic, dist, sigma, flow, order, log_arc, log_val, log_n):
            ok = False
        wr = sign * ewr[i]
        if wr != 0.0 and not _route_one(rctx, t, s, wr, indptr, indices, arc_reverse, meta, packed, table, prune,
                                        no_targets, traffic, dist, sigma, flow, order, log_arc, log_val, log_n):
            ok = False
    return ok


@njit(cache=True)
def _routes_batch(rctx, s, t, w, indptr, indices, arc_reverse, meta, packed, table, prune, traffic):
    """:func:`_route_one` of every demand (serial, ``O(n)`` scratch); False when one cannot be routed."""
    n = indptr.size - 1
    dist = np.full(n, -1, np.int64)
    sigma = np.zeros(n)
    flow = np.zeros(n)
    order = np.empty(n, np.int64)
    no_targets = np.zeros(0, np.bool_)
    log_arc, log_val, log_n = _no_log()
    ok = True
    for i in range(s.size):
        if s[i] != t[i] and not _route_one(rctx, s[i], t[i], w[i], indptr, indices, arc_reverse, meta, packed, table,
                                           prune, no_targets, traffic, dist, sigma, flow, order, log_arc, log_val,
                                           log_n):
            ok = False
    return ok


@njit(cache=True, inline="always")
def pair_hops(rctx, s, t):
    """Links crossed from vertex ``s`` to ``t`` under dragonfly ``minimal`` or ``valiant`` routing
    (the model of ``rctx``, :func:`pair_context`), as :func:`route_hops` counts them, in ``O(1)``
    and without walking the route: the engine's hop objectives under those models.

    The terminal links of leaf hosts (one each), then between routers ``rs`` and ``rd``: none on one
    router, one local link in one group; across groups ``minimal`` takes ``[rs != gate] + 1 + [gate'
    != rd]`` over the global link that minimises it (seed 002, section II-A.2; :func:`_gate`), and
    ``valiant`` the expected links over the ``g - 2`` intermediate groups, summed as integers and
    divided by ``g - 2`` (from the counts of :func:`_valiant_tables` with one global link per pair of
    groups, else ``O(g m)`` gate choices).  Shortest-path models are not handled here: their hops are
    the hop distance (:attr:`Topology.distances <libtopomap.Topology.distances>`).  Returns float64."""
    ip, att, off, _, _, _, _, _, rid, _, near, far, cn, cf, mid = rctx
    if s == t:
        return 0.0
    h = off[s] + off[t]
    s = att[s]
    t = att[t]
    if s == t:
        return np.float64(h)
    a, g = ip[2], ip[3]
    rs, rd = rid[s], rid[t]
    gs, gd = rs // a, rd // a
    if gs == gd:
        return np.float64(h + (1 if rs != rd else 0))
    if ip[0] == _MINIMAL or g <= 2:
        u, v = _gate(near, far, gs, gd, rs, rd)
        return np.float64(h + (1 if u != rs else 0) + 1 + (1 if v != rd else 0))
    if cn.shape[0] > 0:
        total = _valiant_total(near, far, a, g, cn, cf, mid, rs, rd)
    else:
        total = 0
        for gi in range(g):
            if gi == gs or gi == gd:
                continue
            u, v = _gate(near, far, gs, gi, rs, -1)
            u2, v2 = _gate(near, far, gi, gd, v, rd)
            total += (1 if u != rs else 0) + 1 + (1 if u2 != v else 0) + 1 + (1 if v2 != rd else 0)
    return np.float64(h) + total / (g - 2)


@njit(cache=True)
def pair_hops_batch(rctx, s, t, out):
    """``out[i] = pair_hops(rctx, s[i], t[i])``; returns ``out``."""
    for i in range(s.size):
        out[i] = pair_hops(rctx, s[i], t[i])
    return out


def pair_context(topology, routing=None):
    """The arrays the compiled per-pair kernels (:func:`pair_flows`) need for a model on ``topology``.

    One tuple type for every model (unused entries are empty arrays), so the engine compiles once.
    ``O(n)`` memory (leaf attachments; router ids on dragonflies; the grid's arc table on tori),
    plus ``g x g x m`` global links on a dragonfly and, for Valiant with one link per pair of groups,
    the ``g x g`` and ``g x a`` counts of :func:`_valiant_tables`; no per-pair table.  ``ip[9]`` is 1
    when :func:`pair_hops` is the same both ways (all models but Valiant with several global links
    between two groups, whose first leg leaves by the gate nearest the source only).

    Raises
    ------
    TopologyError
        The model cannot route on ``topology``.
    """
    r = get_routing(routing, topology)
    ctx = _context(r.name, topology)
    z1 = np.zeros(0, np.int64)
    z2 = np.zeros((0, 0), np.int64)
    cn = cf = mid = z2
    ip = np.zeros(10, np.int64)
    ip[0] = _CODES[r.name]
    ip[9] = 1  # hops the same both ways (all but Valiant with several links per pair of groups)
    att, off = _leaves(topology) if r.name != "ecmp" else (z1, z1)
    arcs, dims, wrap, dorder, strides = np.zeros((0, 0), np.int64), z1, np.zeros(0, np.bool_), z1, z1
    rid = rv = z1
    near = far = np.zeros((0, 0, 0), np.int64)
    if r.name == "dimension-order":
        dims, wrap, dorder = ctx
        arcs = np.array(topology.distances.grid_arcs(), dtype=np.int64, order="C")
        strides = np.ones(dims.size, np.int64)
        for j in range(dims.size - 2, -1, -1):
            strides[j] = strides[j + 1] * dims[j + 1]
    elif r.name in ("rt", "rtt"):
        ip[1] = ctx
    elif r.name in ("minimal", "valiant"):
        q = ctx
        ip[2], ip[3] = q.routers, q.groups
        rid = np.array(q._rid, dtype=np.int64)
        rv = np.array(q.router_vertices, dtype=np.int64)
        near = np.array(q._near, dtype=np.int64, order="C")
        far = np.array(q._far, dtype=np.int64, order="C")
        if r.name == "valiant" and q.groups > 2:
            if q.links_per_pair == 1:
                cn, cf, mid = _valiant_tables(near, far, q.routers, q.groups)
            else:
                ip[9] = 0
    elif r.name == "hybrid":
        ip[4:9] = ctx
    return (ip, np.array(att, np.int64), np.array(off, np.int64), arcs, np.array(dims, np.int64),
            np.array(wrap, np.bool_), np.array(dorder, np.int64), strides, rid, rv, near, far, cn, cf, mid)
