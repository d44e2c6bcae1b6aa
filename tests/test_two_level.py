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
        pytest.skip("pyscotch is not installed (the scotch extra)")
    t = ltm.Topology(["h"], np.zeros((0, 2), np.int64), slots=[8])
    assert ltm.map_processes(t, scrambled_torus((2, 4), seed=1), strategy="scotch").vertices.tolist() == [0] * 8
