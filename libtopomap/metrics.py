"""Quality of a mapping: dilation, hop-bytes and congestion; properties of a topology.

All functions are pure: they take a :class:`~libtopomap.Topology`, a communication graph (anything
:func:`~libtopomap.as_commgraph` accepts) and a mapping (a :class:`~libtopomap.Mapping` or an array
``process -> vertex index``) and return numbers or numpy arrays.

Model (Hoefler & Snir, ICS'11, section 2): links are full duplex, so each direction of a link (an
*arc*) carries its own traffic with the link's capacity.  Under the restricted routing of section
2.5 (``routing="ecmp"``, the default), traffic from ``u`` to ``v`` is split evenly over all shortest
paths; the congestion of an arc is its traffic divided by its capacity.  Every function taking
``routing=`` accepts the models of :mod:`libtopomap.routing` (``"native"``: the topology's own).
"""

from __future__ import annotations

import numpy as np

from ._kernels.alg3 import alg3_levels
from .commgraph import as_commgraph
from .errors import ArgumentError, MappingError, TopologyError
from .mapping import Mapping, check_mapping
from .routing import ecmp_vertex_traffic, get_routing, route_hops, route_traffic
from .topology import source_of

__all__ = [
    "dilation",
    "average_dilation",
    "max_dilation",
    "hop_bytes",
    "link_traffic",
    "congestion",
    "max_congestion",
    "congestion_estimate",
    "evaluate",
    "lower_bounds",
    "hops_lower_bound",
    "congestion_lower_bound",
    "properties",
    "pair_distances",
]

def _prepare(topology, graph, mapping):
    g = as_commgraph(graph)
    if isinstance(mapping, Mapping):
        if mapping.topology is not topology and mapping.topology != topology:
            raise MappingError("the mapping was made for a different topology")
        vert = mapping.vertices
    else:
        vert = check_mapping(topology, mapping)
    if vert.size != g.n:
        raise MappingError(f"mapping covers {vert.size} processes but the communication graph has {g.n}")
    return g, vert


def pair_distances(topology, a, b):
    """Hop distances between vertex arrays ``a[i]`` and ``b[i]``, as ``int64``.

    Answered by ``topology.distances`` (closed forms, a bounded table or grouped searches); no
    all-pairs matrix is formed.
    """
    return topology.distances.pairs(a, b)


def _hops(topology, g, vert, routing):
    """Hops of each edge: hop distances for shortest-path routings, else the model's own count."""
    r = get_routing(routing, topology)
    if r.shortest:
        r.check(topology)
        return pair_distances(topology, vert[g.src], vert[g.dst])
    return route_hops(topology, vert[g.src], vert[g.dst], routing=r)


def dilation(topology, graph, mapping, *, routing="ecmp"):
    """Hops of each communication edge under the mapping (CSR edge order of the graph).

    Parameters
    ----------
    routing : str or Routing, optional
        A model of :mod:`libtopomap.routing`.  Shortest-path models give the hop distance; dragonfly
        ``minimal`` its route's hops; ``valiant`` the expected hops.

    Returns
    -------
    numpy.ndarray of int64 (float64 for ``valiant``), one entry per edge of ``as_commgraph(graph)``.
    """
    g, vert = _prepare(topology, graph, mapping)
    return _hops(topology, g, vert, routing)


def average_dilation(topology, graph, mapping, *, routing="ecmp"):
    """Weighted average dilation ``sum(w * hops) / sum(w)`` (0 for an empty graph)."""
    g, vert = _prepare(topology, graph, mapping)
    if g.n_edges == 0:
        get_routing(routing, topology).check(topology)
        return 0.0
    h = _hops(topology, g, vert, routing)
    return float(np.dot(g.weights, h) / g.weights.sum())


def max_dilation(topology, graph, mapping, *, routing="ecmp"):
    """Largest number of hops any communication edge travels (a float for ``valiant``: expected hops)."""
    d = dilation(topology, graph, mapping, routing=routing)
    if not d.size:
        return 0
    return int(d.max()) if d.dtype.kind == "i" else float(d.max())


def hop_bytes(topology, graph, mapping, *, routing="ecmp"):
    """Sum over edges of ``weight x hops`` (volume times distance) under ``routing``."""
    g, vert = _prepare(topology, graph, mapping)
    return float(np.dot(g.weights, _hops(topology, g, vert, routing)))


def link_traffic(topology, graph, mapping, *, routing="ecmp"):
    """Traffic on each arc under ECMP routing (equal split over all shortest paths) or another model.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`as_commgraph` accepts
    mapping : Mapping or array_like of int
    routing : str or Routing, optional
        ``"ecmp"`` (default; computed as described below), or any model of :mod:`libtopomap.routing`
        (:func:`libtopomap.routing.route_traffic`).

    Returns
    -------
    numpy.ndarray of float64, one entry per arc (CSR order of ``topology.indices``).  The arc from
    ``topology.arc_source[a]`` to ``topology.indices[a]`` belongs to link ``topology.arc_link[a]``.

    Notes
    -----
    On generated tori, meshes and hypercubes whose structure the distance oracle verified
    (``topology.distances.grid_shape``; concentrated or not), loads come from the structure of
    their shortest paths: those of a demand are the monotone lattice paths in the box spanned by
    its per-dimension shortest displacements (both ways round a ring of even length ``k`` when the
    displacement is ``k/2``, each way carrying half), and the flow on the arc ``u -> u + e_i`` is
    ``w * paths(s->u) * paths(u+e_i->t) / paths(s->t)``, a product of binomials per dimension
    (:func:`libtopomap._kernels.grid_ecmp.grid_ecmp_traffic`, ``O(box volume x dimensions)`` per demand,
    ``O(1)`` for a demand one hop long; the demands ``s -> t`` and ``t -> s`` share one pass).
    Hosts on a single link put their whole demand on that link.

    On a fat tree from :func:`libtopomap.fattree` with every process on a host, in closed form
    (:func:`libtopomap._kernels.fattree_ecmp.fattree_ecmp_traffic`, work proportional to the arcs of each demand's
    paths).

    Elsewhere, one breadth-first search per source vertex counts shortest paths and stops at the
    farthest target; flow is then accumulated backwards as in Brandes' betweenness algorithm, so no
    path is ever enumerated.  A host on a single link hands its traffic to its switch and takes
    what it receives from it (one search per switch instead of one per host, over the network
    without its leaves: 7x faster on the 65,536-host dragonfly).  Sources run in parallel chunks; memory is
    ``O(n + arcs)`` per thread.  (Pruning each search to the vertices between a source and its
    targets with oracle distances was measured 6x slower on a 16^3 torus: the distance checks cost
    more than the visits they save.)  Work is ``O(sources x reached arcs)`` instead of the
    ``O(|V|^2 |E|)`` of the path-counting recurrence in section 2.5, with the same result.

    References
    ----------
    T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for Large-scale Parallel
    Architectures", ICS'11, section 2.5.
    U. Brandes, "A faster algorithm for betweenness centrality", J. Math. Sociol. 25(2), 2001.
    """
    g, vert = _prepare(topology, graph, mapping)
    r = get_routing(routing, topology)
    if r.name != "ecmp":
        return route_traffic(topology, vert[g.src], vert[g.dst], g.weights, routing=r)
    return ecmp_vertex_traffic(topology, vert[g.src].astype(np.int64), vert[g.dst].astype(np.int64), g.weights)


def congestion(topology, graph, mapping, *, routing="ecmp"):
    """Per-arc congestion ``traffic / capacity`` under ``routing`` (default ECMP; see :func:`link_traffic`)."""
    return link_traffic(topology, graph, mapping, routing=routing) / topology.arc_capacity


def max_congestion(topology, graph, mapping, *, routing="ecmp"):
    """Worst-case congestion: ``max_e traffic(e) / c(e)`` (0 when nothing crosses a link)."""
    c = congestion(topology, graph, mapping, routing=routing)
    return float(c.max()) if c.size else 0.0


def congestion_estimate(topology, graph, mapping):
    """Per-arc congestion by LibTopoMap's fast heuristic (Hoefler & Snir, Algorithm 3).

    Communication edges are routed one after another (CSR order of the communication graph), each
    on a single path.  In the seed, Dijkstra runs on arc weights ``rho`` that start at
    ``omega_hat = max(w) * |V_H|**2`` (so a path with fewer hops always wins) and grow by ``w / c``
    along every routed path, so later edges avoid loaded arcs among the shortest paths.  Here the
    same choice -- the shortest path (in hops) of least accumulated load -- is computed exactly by a
    level-synchronous BFS that keeps the least-loaded predecessor of each vertex, without a heap
    and without adding loads to the huge ``omega_hat`` (ties may be broken differently).

    Returns
    -------
    numpy.ndarray of float64 per arc (CSR order): the accumulated ``w / c``, i.e. congestion.

    Raises
    ------
    TopologyError
        If a communicating pair of vertices is not connected.

    References
    ----------
    T. Hoefler and M. Snir, ICS'11, section 5.1, Algorithm 3 ("Determine Congestion") and Theorem 5.
    """
    g, vert = _prepare(topology, graph, mapping)
    if g.n_edges == 0:
        return np.zeros(topology.n_arcs)
    esrc = vert[g.src].astype(np.int64)
    edst = vert[g.dst].astype(np.int64)
    load = alg3_levels(topology.indptr, topology.indices, topology.arc_source.astype(np.int64),
                                topology.arc_capacity, topology.n_vertices, esrc, edst, g.weights)
    if load.size and np.isnan(load[0]):
        raise TopologyError("a communicating pair of vertices is not connected")
    return load


def evaluate(topology, graph, mapping, *, routing="ecmp"):
    """All quality numbers of a mapping in one dict.

    Parameters
    ----------
    routing : str or Routing
        ``"ecmp"`` equal split (section 2.5), ``"alg3"`` LibTopoMap's estimate (Algorithm 3; hops are
        hop distances), ``"native"`` (the topology's own) or any model of :mod:`libtopomap.routing`:
        congestion and hops both follow it.

    Returns
    -------
    dict with keys ``max_congestion, avg_congestion`` (mean over all arcs), ``avg_dilation``
    (weighted), ``max_dilation, hop_bytes``.
    """
    g, vert = _prepare(topology, graph, mapping)
    # a Mapping was checked against its own slots (a partial allocation's), not the topology's
    checked = mapping if isinstance(mapping, Mapping) else vert
    if routing == "alg3":
        c = congestion_estimate(topology, g, checked)
        h = pair_distances(topology, vert[g.src], vert[g.dst])
    else:
        if not isinstance(routing, str) and routing is not None and not hasattr(routing, "name"):
            raise ArgumentError(f"routing must be 'alg3' or a routing model, got {routing!r}")
        c = congestion(topology, g, checked, routing=routing)
        h = _hops(topology, g, vert, routing)
    total = g.weights.sum()
    return {
        "max_congestion": float(c.max()) if c.size else 0.0,
        "avg_congestion": float(c.mean()) if c.size else 0.0,
        "avg_dilation": float(np.dot(g.weights, h) / total) if total > 0 else 0.0,
        "max_dilation": (int(h.max()) if h.dtype.kind == "i" else float(h.max())) if h.size else 0,
        "hop_bytes": float(np.dot(g.weights, h)),
    }


def properties(topology):
    """Size and distance properties of a topology.

    Returns
    -------
    dict with keys ``vertices, hosts, slots, switches, links, degree_min, degree_max`` (distinct
    neighbours over all vertices), ``diameter`` and ``aspl`` (max and mean hop distance over
    distinct pairs of slot vertices; 0 with a single slot vertex), from closed forms or one
    breadth-first search per attachment vertex (see :mod:`libtopomap.distances`); ``source`` (how
    the topology was found: ``file``, ``slurm``, ``xname``, ``ibnetdiscover``, ``single-switch``) and
    ``node_levels`` (the levels below a host, e.g. ``["package", "numa", "l3", "core"]``, empty when
    unknown; then ``hosts`` counts the compute nodes, not the slot vertices, which are cores): see
    :mod:`libtopomap.autotopo`; ``routing``, the topology's native routing model
    (:func:`libtopomap.topology.native_routing`; metrics default to ``ecmp`` whatever it is).
    """
    h = int(topology.hosts.size)
    levels = list(topology.attrs.get("node_levels") or [])
    total, diameter = topology.distances.host_sums(topology.slots)
    aspl = total / (h * (h - 1)) if h > 1 else 0.0
    deg = topology.degree
    return {
        "name": topology.name,
        "vertices": topology.n_vertices,
        "hosts": sum(k == "host" for k in topology.kinds) if levels else h,
        "slots": topology.total_slots,
        "switches": int(sum(1 for k in topology.kinds if k == "switch")),
        "links": topology.n_links,
        "degree_min": int(deg.min()),
        "degree_max": int(deg.max()),
        "diameter": diameter,
        "aspl": float(aspl),
        "source": source_of(topology),
        "node_levels": levels,
        "routing": topology.routing,
    }


def lower_bounds(topology, graph, slots):
    """Cheap lower bounds of the mapping objectives, or 0 where none is known.

    With at most one process per host (``max(slots) <= 1``) every edge between two processes
    crosses at least one link, so

    * hop-bytes >= the weight of the edges between distinct processes, and average dilation >=
      that weight over the total weight;
    * max congestion >= every process's outgoing (incoming) weight over the largest total
      outgoing (incoming) link capacity of a usable host: all of it leaves through the host's
      links, and the most loaded of them carries at least the capacity-weighted average; and
      >= the total cross weight over the total arc capacity (every such edge loads at least one arc).

    Parameters
    ----------
    topology : Topology
    graph : CommGraph
    slots : array_like of int
        Usable slots per vertex.

    Returns
    -------
    dict
        ``{"congestion", "dilation", "hopbytes"}``.
    """
    zero = {"congestion": 0.0, "dilation": 0.0, "hopbytes": 0.0}
    slots = np.asarray(slots)
    if graph.n_edges == 0 or slots.size == 0 or int(slots.max()) > 1:
        return zero
    src, dst, w = graph.src, graph.dst, np.asarray(graph.weights, dtype=np.float64)
    cross = src != dst
    total = float(w.sum())
    wx = float(w[cross].sum())
    if wx <= 0:
        return zero
    n = graph.n
    outw = np.bincount(src[cross], weights=w[cross], minlength=n)
    inw = np.bincount(dst[cross], weights=w[cross], minlength=n)
    usable = np.flatnonzero(slots > 0)
    cap = np.asarray(topology.arc_capacity, dtype=np.float64)
    outcap = np.bincount(topology.arc_source, weights=cap, minlength=topology.n_vertices)[usable].max()
    incap = np.bincount(topology.indices, weights=cap, minlength=topology.n_vertices)[usable].max()
    cong = max(outw.max() / outcap, inw.max() / incap, wx / cap.sum())
    return {"congestion": float(cong), "dilation": wx / total, "hopbytes": wx}


def hops_lower_bound(sym, slots):
    """``sum w`` of the edges between distinct processes when no two processes can share a vertex
    (every such edge has dilation >= 1), else 0: :func:`lower_bounds`."""
    if np.asarray(slots).max(initial=0) > 1:
        return 0.0
    return float(sym.wsum.sum() / 2.0)


def congestion_lower_bound(topology, sym, slots):
    """A lower bound of the maximum ECMP congestion of any mapping, or 0: the ``"congestion"`` entry of
    :func:`lower_bounds` (one slot per vertex: every byte a process sends leaves its vertex over the
    vertex's arcs, and every edge loads at least one arc)."""
    return float(lower_bounds(topology, sym.graph, slots)["congestion"])
