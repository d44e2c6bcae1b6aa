"""Topology model: validation, construction from edges/networkx/scipy, CSR invariants, distances."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import libtopomap as ltm
from libtopomap import Topology, TopologyError, fattree, torus
from libtopomap.topology import HOST, SWITCH


def test_basic_counts_and_csr_invariants():
    t = Topology(["a", "b", "s"], [(0, 2), (1, 2), (2, 0)], capacities=[1, 2, 3], slots=[1, 2, 0])
    assert (t.n_vertices, t.n_links, t.n_arcs, t.total_slots) == (3, 2, 4, 3)
    # parallel links a-s merge: capacity 1 + 3
    assert t.capacity.tolist() == [4.0, 2.0]
    assert t.kinds == (HOST, HOST, SWITCH)
    assert t.hosts.tolist() == [0, 1]
    assert t.host_position.tolist() == [0, 1, -1]
    for a in range(t.n_arcs):
        r = t.arc_reverse[a]
        assert t.arc_source[r] == t.indices[a] and t.indices[r] == t.arc_source[a]
        assert t.arc_link[r] == t.arc_link[a]
        assert t.arc_capacity[a] == t.capacity[t.arc_link[a]]
    assert t.degree.tolist() == [1, 1, 2]
    assert t.index("s") == 2 and "b" in t and "zz" not in t


@pytest.mark.parametrize("kwargs, match", [
    (dict(names=["a", "b"], links=[(0, 2)]), "unknown vertex"),
    (dict(names=["a", "b"], links=[(1, 1)]), "self-link at vertex 'b'"),
    (dict(names=["a", "b"], links=[(0, 1)], capacities=[0]), "capacity"),
    (dict(names=["a", "b"], links=[(0, 1)], capacities=[-2.0]), "capacity"),
    (dict(names=["a", "b"], links=[(0, 1)], capacities=[float("nan")]), "capacity"),
    (dict(names=["a", "b"], links=[(0, 1)], slots=[1, -1]), "'b' has negative slots"),
    (dict(names=["a", "a"], links=[(0, 1)]), "duplicate vertex name 'a'"),
    (dict(names=["a", "b", "c"], links=[(0, 1)]), "not all connected.*'c'"),
    (dict(names=["a", "b"], links=[(0, 1)], slots=[0, 0]), "no vertex has a slot"),
    (dict(names=["a", "b c"], links=[(0, 1)]), "whitespace"),
    (dict(names=["a", "b"], links=[(0, 1)], capacities=[1, 1]), "2 capacities given for 1 links"),
    (dict(names=["a", "b"], links=[(0, 1.5)]), "integer"),
])
def test_validation_errors_name_the_offender(kwargs, match):
    names = kwargs.pop("names")
    links = kwargs.pop("links")
    with pytest.raises(TopologyError, match=match):
        Topology(names, links, **kwargs)


def test_disconnected_switch_only_part_is_allowed():
    # a stray switch with no slot does not make slot vertices disconnected
    t = Topology(["a", "b", "sw0"], [(0, 1)], slots=[1, 1, 0])
    assert t.hosts.tolist() == [0, 1]


def test_from_edges_names_and_indices():
    t = Topology.from_edges([("a", "sw", 2.0), ("b", "sw")], slots={"sw": 0})
    assert t.names == ("a", "sw", "b")
    assert t.slots.tolist() == [1, 0, 1]
    assert sorted(t.capacity.tolist()) == [1.0, 2.0]
    with pytest.raises(TopologyError, match="unknown vertex index 5"):
        Topology.from_edges([(0, 5)], names=["x", "y"])


def test_networkx_round_trip():
    t = fattree(2, 3)
    t2 = Topology.from_networkx(t.to_networkx())
    assert t2 == t and t2.name == t.name and t2.attrs == t.attrs
    g = t.to_networkx()
    assert g.nodes[0]["slots"] == 1 and g.nodes[t.n_vertices - 1]["kind"] == SWITCH
    assert all(d["capacity"] == 1.0 for _, _, d in g.edges(data=True))


def test_from_networkx_attributes_and_multigraph():
    g = nx.MultiGraph()
    g.add_node("s", kind="switch")
    g.add_node("h1", slots=4)
    g.add_edge("h1", "s", capacity=2.0)
    g.add_edge("h1", "s", capacity=3.0)
    g.add_edge("h2", "s")
    t = Topology.from_networkx(g)
    assert t.slots.tolist() == [0, 4, 1]
    assert t.capacity[t.arc_link[t.indptr[1]]] == 5.0
    with pytest.raises(TopologyError, match="undirected"):
        Topology.from_networkx(nx.DiGraph([(0, 1)]))


def test_from_scipy_and_back():
    t = torus("3x4")
    t2 = Topology.from_scipy(t.to_scipy(), names=t.names)
    assert t2 == t
    a = sp.csr_matrix(np.array([[0, 1], [0, 0]]))
    with pytest.raises(TopologyError, match="not symmetric"):
        Topology.from_scipy(a)
    with pytest.raises(TopologyError, match="self-link"):
        Topology.from_scipy(sp.csr_matrix(np.array([[1, 1], [1, 0]])))


def test_host_distances_match_networkx_and_are_small_ints():
    t = fattree(3, 2)
    d = t.host_distances
    assert d.dtype == np.uint8 and not d.flags.writeable
    ref = dict(nx.all_pairs_shortest_path_length(t.to_networkx()))
    h = t.hosts.tolist()
    assert all(d[i, j] == ref[u][v] for i, u in enumerate(h) for j, v in enumerate(h))
    assert t.distance(h[0], h[-1]) == 4


def test_hop_distances_all_vertices_and_unreachable():
    t = Topology(["a", "b", "sw"], [(0, 1)], slots=[1, 1, 0])
    d = t.hop_distances([0, 2])
    assert d.dtype == np.int32
    assert d.tolist() == [[0, 1, -1], [-1, -1, 0]]
    with pytest.raises(TopologyError, match="unknown vertex index 3"):
        t.hop_distances([3])


def test_host_distances_switch_to_uint16_beyond_255_hops():
    t = torus("600")  # ring of 600: diameter 300
    d = t.host_distances
    assert d.dtype == np.uint16 and int(d.max()) == 300


# ------------------------------------------------------------------------------------------------ slot counts
@pytest.mark.parametrize("slots, needle", [([2**31, 1], "2147483648 slots, more than 2147483647"),
                                           ([2**32 + 1, 1], "4294967297 slots"),
                                           ([10**30, 1], "slots, more than"),
                                           (["x", 1], "slots must be integers")])
def test_slot_counts_do_not_wrap_at_int32(slots, needle):
    with pytest.raises(ltm.TopologyError, match=needle):
        ltm.Topology(["a", "b"], np.array([[0, 1]]), slots=slots)
    assert ltm.Topology(["a", "b"], np.array([[0, 1]]), slots=[2**31 - 1, 0]).slots.tolist() == [2**31 - 1, 0]
