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

Defaults
--------
Every metric keeps ``routing="ecmp"`` as its default, so every number computed before this module
existed stays the same.  A topology still carries its *native* routing,
:func:`native_routing` (``Topology.routing``): ``rt``/``rtt`` for the generators :func:`~libtopomap.rt`
and :func:`~libtopomap.rtt`, ``minimal`` for :func:`~libtopomap.dragonfly` (concentrated or not),
``attrs["routing"]`` when a topology file declares one, else ``ecmp`` (tori, meshes, fat trees, files).
Pass ``routing="native"`` to use it.

Cost and memory
---------------
Hosts on a single link (terminals, concentrated hosts) cross that link whatever the model; they are
charged directly and their demands are handed to the attachment vertex.  ``table`` and ``oblivious``
run one breadth-first search per distinct destination, stopped at the farthest source, then push the
flow back to the destination: ``O(n)`` memory per search, no table; destinations run in parallel
chunks, one load array per thread.  The other models walk each
demand's path: ``O(hops)`` work per demand, nothing beyond the per-arc load array; ``valiant`` walks
``g - 2`` routes per inter-group demand (``O(g x hops)``), in parallel chunks of demands with one load
array per thread.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from . import _numba_cache  # noqa: F401  (an unreadable cache file is a miss, not an error)
from .errors import ArgumentError, TopologyError
from .vocabulary import ROUTING_MODELS as _MODELS

__all__ = ["ROUTING_MODELS", "DEFAULT_ROUTING", "Routing", "get_routing", "native_routing", "route_traffic",
           "route_hops", "rt_routing_record", "rtt_routing_record"]

#: Names of the routing models (defined in :mod:`libtopomap.vocabulary` for the command line).
ROUTING_MODELS = _MODELS

#: The routing of every metric unless told otherwise.
DEFAULT_ROUTING = "ecmp"

_SHORTEST = frozenset(("ecmp", "table", "oblivious", "dimension-order", "rt", "rtt"))


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
        ``rt``, ``rtt`` and ``dragonfly``, else ``"ecmp"``.
    """
    attrs = getattr(topology, "attrs", None) or {}
    declared = attrs.get("routing")
    if declared is not None:
        if declared not in ROUTING_MODELS:
            label = f" {topology.name!r}" if getattr(topology, "name", None) else ""
            raise TopologyError(f"topology{label} declares routing {declared!r}; known: {', '.join(ROUTING_MODELS)}")
        return declared
    return {"rt": "rt", "rtt": "rtt", "dragonfly": "minimal"}.get(attrs.get("generator"), DEFAULT_ROUTING)


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
@njit(cache=True)
def _toward_destinations(indptr, indices, n, dests, ptr, srcs, ws, oblivious, traffic):
    """``table`` / ``oblivious`` loads: per destination a BFS from it (stopped at the farthest
    source), then the flow pushed from the far sources towards it, each vertex handing its flow to
    its lowest-index minimal next hop (table) or evenly to all of them (oblivious).  False when a
    source is not reached."""
    dist = np.full(n, -1, np.int64)
    flow = np.zeros(n)
    is_src = np.zeros(n, np.bool_)
    order = np.empty(n, np.int64)
    for i in range(dests.size):
        t = dests[i]
        need = 0
        for j in range(ptr[i], ptr[i + 1]):
            s = srcs[j]
            if not is_src[s]:
                is_src[s] = True
                need += 1
            flow[s] += ws[j]
        dist[t] = 0
        order[0] = t
        head, tail = 0, 1
        while head < tail and need > 0:
            u = order[head]
            head += 1
            for a in range(indptr[u], indptr[u + 1]):
                v = indices[a]
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    order[tail] = v
                    tail += 1
                    if is_src[v]:
                        need -= 1
        if need > 0:
            return False
        for k in range(tail - 1, 0, -1):
            u = order[k]
            f = flow[u]
            if f != 0.0:
                du = dist[u] - 1
                if oblivious:
                    c = 0
                    for a in range(indptr[u], indptr[u + 1]):
                        if dist[indices[a]] == du:
                            c += 1
                    share = f / c
                    for a in range(indptr[u], indptr[u + 1]):
                        v = indices[a]
                        if dist[v] == du:
                            traffic[a] += share
                            flow[v] += share
                else:
                    for a in range(indptr[u], indptr[u + 1]):  # neighbours in increasing index
                        v = indices[a]
                        if dist[v] == du:
                            traffic[a] += f
                            flow[v] += f
                            break
            flow[u] = 0.0
        for k in range(tail):
            u = order[k]
            dist[u] = -1
            flow[u] = 0.0
            is_src[u] = False
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
def _dimension_order_walk(arcs, indices, dims, wrap, dorder, s, t, w, traffic, hops):
    """Walk each demand dimension by dimension (``dorder``), the shorter way round (up on a tie)."""
    nd = dims.size
    strides = np.ones(nd, np.int64)
    for j in range(nd - 2, -1, -1):
        strides[j] = strides[j + 1] * dims[j + 1]
    for i in range(s.size):
        v = s[i]
        h = 0
        for jj in range(nd):
            j = dorder[jj]
            k = dims[j]
            cs = (v // strides[j]) % k
            ct = (t[i] // strides[j]) % k
            d = ct - cs
            if wrap[j]:
                d = d % k
                if 2 * d > k:
                    d -= k
            col = 2 * j if d > 0 else 2 * j + 1
            for _ in range(abs(d)):
                a = arcs[v, col]
                traffic[a] += w[i]
                v = indices[a]
                h += 1
        hops[i] = h


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
def _twisted_walk(indptr, indices, a, twisted, s, t, w, traffic, hops):
    """Walk the routing record (Alg. 1 or 2 of seed 004) of each demand: x first, then y."""
    W = 2 * a
    hh = a // 2
    for i in range(s.size):
        x, y = s[i] % W, s[i] // W
        dx, dy = t[i] % W - x, t[i] // W - y
        if twisted:
            p = (dx + dy + a) % W
            q = (dy - dx + a) % W
            rx, ry = (p - q) // 2, (p + q - W) // 2
        else:
            rx = (dx + a) % W - a
            ry = (dy + hh) % a - hh
        u = s[i]
        for _ in range(abs(rx)):
            x = (x + (1 if rx > 0 else -1)) % W
            v = y * W + x
            arc = _find_arc(indptr, indices, u, v)
            if arc < 0:
                return False
            traffic[arc] += w[i]
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
                return False
            traffic[arc] += w[i]
            u = v
        hops[i] = abs(rx) + abs(ry)
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
def _charge(indptr, indices, rv, ru, rw, f, traffic):
    """Charge ``f`` on the link between router ids ``ru`` and ``rw``; returns 1 (a hop) or 0 when equal."""
    if ru == rw:
        return 0
    a = _find_arc(indptr, indices, rv[ru], rv[rw])
    traffic[a] += f
    return 1


@njit(cache=True)
def _dragonfly_walk(indptr, indices, rid, rv, near, far, a, g, valiant, s, t, w, traffic, hops):
    """Minimal or (expected) Valiant routes between routers (terminal links already charged)."""
    for i in range(s.size):
        rs, rd = rid[s[i]], rid[t[i]]
        gs, gd = rs // a, rd // a
        if gs == gd:
            hops[i] = _charge(indptr, indices, rv, rs, rd, w[i], traffic)
            continue
        if not valiant or g <= 2:
            u, v = _gate(near, far, gs, gd, rs, rd)
            h = _charge(indptr, indices, rv, rs, u, w[i], traffic)
            h += _charge(indptr, indices, rv, u, v, w[i], traffic)
            h += _charge(indptr, indices, rv, v, rd, w[i], traffic)
            hops[i] = h
            continue
        f = w[i] / (g - 2)
        total = 0
        for gi in range(g):
            if gi == gs or gi == gd:
                continue
            u, v = _gate(near, far, gs, gi, rs, -1)
            h = _charge(indptr, indices, rv, rs, u, f, traffic)
            h += _charge(indptr, indices, rv, u, v, f, traffic)
            u2, v2 = _gate(near, far, gi, gd, v, rd)
            h += _charge(indptr, indices, rv, v, u2, f, traffic)
            h += _charge(indptr, indices, rv, u2, v2, f, traffic)
            h += _charge(indptr, indices, rv, v2, rd, f, traffic)
            total += h
        hops[i] = total / (g - 2)


@njit(cache=True, parallel=True)
def _dragonfly_chunks(indptr, indices, rid, rv, near, far, a, g, valiant, s, t, w, parts, hops):
    nchunks = parts.shape[0]
    for c in prange(nchunks):
        lo = c * s.size // nchunks
        hi = (c + 1) * s.size // nchunks
        _dragonfly_walk(indptr, indices, rid, rv, near, far, a, g, valiant, s[lo:hi], t[lo:hi], w[lo:hi], parts[c],
                        hops[lo:hi])


def _dragonfly_call(topology, q, valiant, s, t, w, traffic, hops):
    """Minimal or Valiant walks; Valiant (``O(g)`` routes per demand) in parallel chunks of demands, one load
    array per thread."""
    args = (topology.indptr, topology.indices, q._rid, q.router_vertices, q._near, q._far, q.routers, q.groups,
            valiant, s, t, w)
    nchunks = min(numba.get_num_threads(), s.size // 1024) if valiant and q.groups > 2 else 1
    if nchunks <= 1:
        _dragonfly_walk(*args, traffic, hops)
        return
    parts = np.zeros((nchunks, traffic.size))
    _dragonfly_chunks(*args, parts, hops)
    traffic += parts.sum(axis=0)
