"""Two-level mapping: the network first, then the inside of each node.

A topology with node levels (``attrs["node_levels"]``: packages, NUMA domains, L3 groups and cores
below every host, from :func:`libtopomap.autotopo.with_nodes` or ``load("auto")``) is mapped in two
steps with the same strategy: the processes onto the network, each host offering the slots of its
cores, then each host's processes onto that host's tree.  The network sees only the traffic between
nodes, and heavy pairs inside a node end up on cores that share a package or a cache (treematch's
idea, Jeannot, Mercier and Tessier, IEEE TPDS 25(4), 2014, on top of the network mapping).

Mapping the whole two-level topology at once lets the flat strategies trade network congestion for
traffic inside the nodes (benchmarks/bench_two_level.py: 44 -> 45 and 48 -> 62 on a dragonfly);
two steps keep the network mapping and still cut the traffic across sockets.
"""

from __future__ import annotations

import numpy as np

from ..commgraph import CommGraph

__all__ = ["split_node_levels", "map_two_level"]


def split_node_levels(topology):
    """The network of a topology with node levels, and the inside of each host.

    Parameters
    ----------
    topology : Topology

    Returns
    -------
    tuple or None
        ``(outside, host_of)``: ``outside`` the vertices of the network (hosts and switches, in
        index order), ``host_of[v]`` the host whose node vertex ``v`` is inside (``-1`` for network
        vertices); None when the topology has no node levels, or when an inside vertex hangs under
        no host or under two.
    """
    levels = (topology.attrs or {}).get("node_levels") or []
    if not levels:
        return None
    kinds = np.asarray(topology.kinds, dtype=object)
    inside = np.isin(kinds, list(levels))
    if not inside.any():
        return None
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    u, v = np.asarray(topology.link_u, np.int64), np.asarray(topology.link_v, np.int64)
    keep = inside[u] | inside[v]  # the node's own links, and the one from its host down
    n = topology.n_vertices
    adj = coo_matrix((np.ones(int(keep.sum())), (u[keep], v[keep])), shape=(n, n))
    _, label = connected_components(adj, directed=False)
    outside = np.flatnonzero(~inside)
    owner = np.full(n, -1, np.int64)
    np.maximum.at(owner, label[outside], outside)
    twice = np.zeros(n, np.int64)
    np.add.at(twice, label[outside], 1)
    host_of = np.where(inside, owner[label], -1)
    if (inside & (host_of < 0)).any() or (twice[label[inside]] > 1).any():
        return None
    return outside, host_of


def _sub_topology(topology, vertices, links, capacities, slots):
    """The topology on ``vertices`` with ``links`` (pairs of positions in ``vertices``)."""
    from ..topology import Topology

    names, kinds = topology.names, topology.kinds
    return Topology([names[i] for i in vertices.tolist()], links, capacities=capacities, slots=slots,
                    kinds=[kinds[i] for i in vertices.tolist()], name=topology.name, attrs={})


def _network(topology, outside, slots, attrs):
    """The topology on the network vertices ``outside`` (the links between them, in link order)."""
    from ..topology import Topology

    pos = np.full(topology.n_vertices, -1, np.int64)
    pos[outside] = np.arange(outside.size)
    u, v = np.asarray(topology.link_u, np.int64), np.asarray(topology.link_v, np.int64)
    keep = (pos[u] >= 0) & (pos[v] >= 0)
    names, kinds = topology.names, topology.kinds
    return Topology([names[i] for i in outside.tolist()], np.stack([pos[u[keep]], pos[v[keep]]], 1),
                    capacities=np.asarray(topology.capacity)[keep], slots=slots,
                    kinds=[kinds[i] for i in outside.tolist()], name=topology.name, attrs=attrs)


def map_two_level(topology, graph, construct, *, slots, split=None):
    """Map onto the network, then inside every host (see the module's docstring).

    Parameters
    ----------
    topology : Topology
        With node levels (:func:`split_node_levels` is not None).
    graph : CommGraph
    construct : callable
        ``construct(topology, graph, slots) -> vertices``: the strategy, called once for the network
        and once per host that runs two processes or more.
    slots : numpy.ndarray
        Usable slots per vertex of ``topology`` (the cores'), already checked.
    split : tuple, optional
        :func:`split_node_levels`'s result, if the caller has it.

    Returns
    -------
    numpy.ndarray
        The vertex (a core) of every process.
    """
    outside, host_of = split_node_levels(topology) if split is None else split
    slots = np.asarray(slots, np.int64)
    n = topology.n_vertices
    per_host = slots.copy()
    inner = host_of >= 0
    np.add.at(per_host, host_of[inner], slots[inner])
    # the network keeps its vertex numbers (and so a generator's closed forms) when it comes first
    same = bool(np.array_equal(outside, np.arange(outside.size)))
    attrs = {k: x for k, x in (topology.attrs or {}).items() if k != "node_levels"} if same else {}
    net = _network(topology, outside, per_host[outside], attrs)
    hosts = outside[np.asarray(construct(net, graph, per_host[outside]), np.int64)]

    out = np.empty(graph.n, np.int64)
    src, dst, w = np.asarray(graph.src, np.int64), np.asarray(graph.dst, np.int64), np.asarray(graph.weights)
    local = hosts[src] == hosts[dst]
    order = np.argsort(hosts, kind="stable")
    bounds = np.flatnonzero(np.r_[True, hosts[order][1:] != hosts[order][:-1], True])
    e_order = np.flatnonzero(local)
    e_order = e_order[np.argsort(hosts[src[e_order]], kind="stable")]
    e_host = hosts[src[e_order]]
    inside_of = np.argsort(host_of, kind="stable")  # the inside vertices grouped by host
    inside_of = inside_of[host_of[inside_of] >= 0]
    ptr = np.searchsorted(host_of[inside_of], np.arange(n + 1))
    # every host's own links once, grouped by host (in link order), with the endpoints numbered as in
    # the host's sub-topology: the host 0, then its inside vertices in index order
    pos = np.zeros(n, np.int64)
    pos[inside_of] = np.arange(inside_of.size) - ptr[host_of[inside_of]] + 1
    lu, lv = np.asarray(topology.link_u, np.int64), np.asarray(topology.link_v, np.int64)
    link_host = np.maximum(host_of[lu], host_of[lv])
    links = np.flatnonzero(link_host >= 0)
    links = links[np.argsort(link_host[links], kind="stable")]
    lptr = np.searchsorted(link_host[links], np.arange(n + 1))
    capacity, kinds = np.asarray(topology.capacity), topology.kinds
    # hosts of the same shape share one sub-topology (and its distance data), and hosts of the same
    # shape whose processes talk alike share one mapping: the strategy is deterministic given its
    # inputs, so the result is the one each host would get on its own
    shapes, done = {}, {}
    rank_in = np.empty(graph.n, np.int64)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        members = order[a:b]
        h = int(hosts[members[0]])
        verts = np.r_[h, inside_of[ptr[h]:ptr[h + 1]]]
        sub_slots = slots[verts]
        lo, hi = np.searchsorted(e_host, [h, h + 1])
        e = e_order[lo:hi]
        if members.size == 1 or e.size == 0 or ptr[h] == ptr[h + 1]:
            # nothing to arrange: the host's slots in vertex order (the host itself first)
            out[members] = np.repeat(verts, sub_slots)[:members.size]
            continue
        rank_in[members] = np.arange(members.size)
        mine = links[lptr[h]:lptr[h + 1]]
        sub_links = np.stack([pos[lu[mine]], pos[lv[mine]]], 1)
        shape = (sub_links.tobytes(), capacity[mine].tobytes(), sub_slots.tobytes(),
                 tuple(kinds[i] for i in verts.tolist()))
        sub = shapes.get(shape)
        if sub is None:
            sub = shapes[shape] = _sub_topology(topology, verts, sub_links, capacity[mine], sub_slots)
        es, ed, ew = rank_in[src[e]], rank_in[dst[e]], w[e]
        talk = (shape, members.size, es.tobytes(), ed.tobytes(), ew.tobytes())
        where = done.get(talk)
        if where is None:
            where = done[talk] = np.asarray(construct(sub, CommGraph(members.size, es, ed, ew), sub_slots), np.int64)
        out[members] = verts[where]
    return out
