"""Two-level mapping (issue 16 item 2): on a topology with node levels, the network first, then
each host's processes onto its node's tree (libtopomap.mappers.two_level)."""

import itertools

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.autotopo import with_nodes
from libtopomap.mapping import check_mapping
from libtopomap.mappers.two_level import split_node_levels
from libtopomap.nodeinside import NodeInside
from libtopomap.patterns import scrambled_torus

# 2 packages x 2 cores per node
NODE = NodeInside((0, 1, 2, 3), {"package": (0, 0, 1, 1), "core": (0, 1, 2, 3)})


def _two_hosts():
    net = ltm.Topology(["s", "a", "b"], [[0, 1], [0, 2]], slots=[0, 1, 1], kinds=["switch", "host", "host"])
    return net, with_nodes(net, NODE)


def _package(topo, v):
    host, _, core = topo.names[v].rpartition(":core-")
    return host, int(core) // 2


def test_split_finds_every_inside_vertex_under_its_host():
    net, topo = _two_hosts()
    outside, host_of = split_node_levels(topo)
    assert outside.tolist() == [0, 1, 2]
    for v in range(topo.n_vertices):
        if v < 3:
            assert host_of[v] == -1
        else:
            assert topo.names[host_of[v]] == topo.names[v].split(":")[0]
    assert split_node_levels(net) is None and split_node_levels(ltm.torus("4x4")) is None


@pytest.mark.parametrize("strategy", ["greedy", "rcm", "recursive", "multisection"])
def test_heavy_pairs_share_a_package_exactly(strategy):
    """Four processes on one host: 0-2 and 1-3 heavy, 0-1 light.  The brute-force minimum of the
    weight across packages over all 4! placements is 1 (the light edge); the two-level mapping
    reaches it, and the flat mapping (multicore=False) is a valid placement too."""
    net = ltm.Topology(["s", "a"], [[0, 1]], slots=[0, 1], kinds=["switch", "host"])
    topo = with_nodes(net, NODE)
    g = ltm.CommGraph(4, [0, 1, 0], [2, 3, 1], [10.0, 10.0, 1.0])
    cores = np.flatnonzero(np.asarray(topo.slots) > 0)

    def across(v):
        return sum(w for s, d, w in zip(g.src, g.dst, g.weights) if _package(topo, v[s]) != _package(topo, v[d]))

    best = min(across(np.array(p)) for p in itertools.permutations(cores.tolist()))
    assert best == 1
    m = ltm.map_processes(topo, g, strategy=strategy, seed=0)
    check_mapping(topo, m.vertices, 4, slots=np.asarray(topo.slots))
    assert across(np.asarray(m.vertices)) == best
    flat = ltm.map_processes(topo, g, strategy=strategy, seed=0, multicore=False)
    check_mapping(topo, flat.vertices, 4, slots=np.asarray(topo.slots))


@pytest.mark.parametrize("strategy", ["greedy", "recursive", "multisection"])
def test_network_step_decides_the_hosts(strategy):
    """Every process runs on the host the network-only mapping chose (same strategy and seed, each
    host with its cores' slots), so the network carries exactly the network-only traffic."""
    net = ltm.fattree(4, 2)
    topo = with_nodes(net, NODE)
    g = scrambled_torus((8, 4, 2), seed=2)
    m = ltm.map_processes(topo, g, strategy=strategy, seed=3)
    check_mapping(topo, m.vertices, g.n, slots=np.asarray(topo.slots))
    _, host_of = split_node_levels(topo)
    slots = np.where(np.asarray(net.slots) > 0, 4, 0)
    flat = ltm.Topology(net.names, np.stack([net.link_u, net.link_v], 1), capacities=net.capacity, slots=slots,
                        kinds=net.kinds, name=net.name, attrs=net.attrs)
    hosts = ltm.map_processes(flat, g, strategy=strategy, seed=3).vertices
    np.testing.assert_array_equal(host_of[np.asarray(m.vertices)], hosts)


def test_identity_and_random_ignore_the_levels():
    _, topo = _two_hosts()
    g = scrambled_torus((2, 4), seed=1)
    assert ltm.map_processes(topo, g, strategy="identity").vertices.tolist() == \
        np.flatnonzero(np.asarray(topo.slots) > 0).tolist()
    r = ltm.map_processes(topo, g, strategy="random", seed=5)
    check_mapping(topo, r.vertices, g.n, slots=np.asarray(topo.slots))


def test_scotch_on_a_single_host_network():
    """A one-host network has no link: scotch places in slot order instead of failing."""
    from libtopomap.mappers.scotch import HAVE_SCOTCH

    if not HAVE_SCOTCH:
        pytest.skip("scotchpy is not installed (the scotch extra)")
    t = ltm.Topology(["h"], np.zeros((0, 2), np.int64), slots=[8])
    assert ltm.map_processes(t, scrambled_torus((2, 4), seed=1), strategy="scotch").vertices.tolist() == [0] * 8


def _one_host_at_a_time(topology, graph, construct, slots):
    """map_two_level as it was before hosts shared their sub-topology and mapping (issue 11): one
    sub-topology cut from the whole link list and one ``construct`` call per host."""
    from libtopomap.commgraph import CommGraph

    outside, host_of = split_node_levels(topology)
    slots = np.asarray(slots, np.int64)
    n = topology.n_vertices
    per_host = slots.copy()
    inner = host_of >= 0
    np.add.at(per_host, host_of[inner], slots[inner])

    def cut(vertices, s, attrs):
        pos = np.full(n, -1, np.int64)
        pos[vertices] = np.arange(vertices.size)
        u, v = np.asarray(topology.link_u, np.int64), np.asarray(topology.link_v, np.int64)
        keep = (pos[u] >= 0) & (pos[v] >= 0)
        return ltm.Topology([topology.names[i] for i in vertices.tolist()], np.stack([pos[u[keep]], pos[v[keep]]], 1),
                            capacities=np.asarray(topology.capacity)[keep], slots=s,
                            kinds=[topology.kinds[i] for i in vertices.tolist()], name=topology.name, attrs=attrs)

    attrs = {k: x for k, x in topology.attrs.items() if k != "node_levels"}
    hosts = outside[np.asarray(construct(cut(outside, per_host[outside], attrs), graph, per_host[outside]))]
    out = np.empty(graph.n, np.int64)
    for h in np.unique(hosts).tolist():
        members = np.flatnonzero(hosts == h)
        verts = np.r_[h, np.flatnonzero(host_of == h)]
        rank_in = np.full(graph.n, -1)
        rank_in[members] = np.arange(members.size)
        e = (rank_in[graph.src] >= 0) & (rank_in[graph.dst] >= 0)
        if members.size == 1 or not e.any():
            out[members] = np.repeat(verts, slots[verts])[:members.size]
            continue
        sub = CommGraph(members.size, rank_in[graph.src[e]], rank_in[graph.dst[e]], graph.weights[e])
        out[members] = verts[np.asarray(construct(cut(verts, slots[verts], {}), sub, slots[verts]))]
    return out


@pytest.mark.parametrize("strategy", ["greedy", "rcm", "recursive"])
@pytest.mark.parametrize("pattern", ["stencil", "scrambled"])
def test_shared_host_shapes_give_the_same_mapping(strategy, pattern):
    """Hosts of one shape share a sub-topology, and hosts whose processes talk alike share a mapping:
    the result is exactly that of one sub-topology and one mapping per host.  Three shapes: full nodes,
    nodes with one core off, and a node with two cores off; a plain stencil makes many hosts talk alike."""
    from libtopomap.mappers import two_level
    from libtopomap.patterns import stencil

    topo = with_nodes(ltm.torus("4x4"), NODE)
    slots = np.asarray(topo.slots).copy()
    cores = np.flatnonzero(slots > 0)
    slots[cores[[1, 6, 11]]] = 0
    slots[cores[[20, 21]]] = 0
    g = stencil((7, 8)) if pattern == "stencil" else scrambled_torus((7, 8), seed=4)
    calls = []

    def construct(t, sub, s):
        calls.append(t.n_vertices)
        return ltm.map_processes(t, sub, strategy=strategy, slots=s, seed=1).vertices

    got = two_level.map_two_level(topo, g, construct, slots=slots)
    shared = len(calls)
    calls.clear()
    want = _one_host_at_a_time(topo, g, construct, slots)
    np.testing.assert_array_equal(got, want)
    check_mapping(topo, got, g.n, slots=slots)
    assert shared <= len(calls)
    if pattern == "stencil":
        assert shared < len(calls)   # some hosts reused a mapping
