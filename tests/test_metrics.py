"""Metrics against brute force (networkx path enumeration) and closed forms."""

import itertools

import networkx as nx
import numpy as np
import pytest

from libtopomap import (CommGraph, Mapping, MappingError, Topology, average_dilation, congestion,
                        congestion_estimate, dilation, evaluate, fattree, hop_bytes, hypercube, link_traffic,
                        max_congestion, max_dilation, mesh, properties, rt, rtt, torus)


def arc_index(topo, u, v):
    lo, hi = topo.indptr[u], topo.indptr[u + 1]
    return lo + int(np.flatnonzero(topo.indices[lo:hi] == v)[0])


def brute_force_ecmp(topo, g, vert):
    """Traffic per arc by enumerating every shortest path with networkx."""
    nxg = topo.to_networkx()
    traffic = np.zeros(topo.n_arcs)
    for s, t, w in zip(g.src.tolist(), g.dst.tolist(), g.weights.tolist()):
        u, v = int(vert[s]), int(vert[t])
        if u == v:
            continue
        paths = list(nx.all_shortest_paths(nxg, u, v))
        for p in paths:
            for x, y in zip(p, p[1:]):
                traffic[arc_index(topo, x, y)] += w / len(paths)
    return traffic


def random_case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 14))
    while True:
        g = nx.gnp_random_graph(n, 0.3, seed=int(rng.integers(1 << 30)))
        if nx.is_connected(g):
            break
    for u, v in g.edges:
        g.edges[u, v]["capacity"] = float(rng.choice([1.0, 2.0, 0.5]))
    for v in g.nodes:
        g.nodes[v]["slots"] = int(rng.integers(0, 3)) if v else 2
    topo = Topology.from_networkx(g)
    slots = np.repeat(np.arange(n), topo.slots)
    p = int(rng.integers(2, slots.size + 1))
    vert = rng.permutation(slots)[:p]
    m = int(rng.integers(1, 3 * p))
    comm = CommGraph(p, rng.integers(0, p, m), rng.integers(0, p, m), rng.uniform(0.5, 3.0, m))
    return topo, comm, vert


@pytest.mark.parametrize("seed", range(12))
def test_ecmp_matches_path_enumeration(seed):
    topo, comm, vert = random_case(seed)
    got = link_traffic(topo, comm, vert)
    want = brute_force_ecmp(topo, comm, vert)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(congestion(topo, comm, vert), want / topo.arc_capacity, rtol=1e-12, atol=1e-12)
    assert max_congestion(topo, comm, vert) == pytest.approx((want / topo.arc_capacity).max())


@pytest.mark.parametrize("seed", range(6))
def test_dilation_and_hop_bytes_match_networkx(seed):
    topo, comm, vert = random_case(seed)
    nxg = topo.to_networkx()
    hops = np.array([nx.shortest_path_length(nxg, int(vert[s]), int(vert[t]))
                     for s, t in zip(comm.src.tolist(), comm.dst.tolist())])
    assert dilation(topo, comm, vert).tolist() == hops.tolist()
    assert hop_bytes(topo, comm, vert) == pytest.approx(float(np.dot(hops, comm.weights)))
    assert average_dilation(topo, comm, vert) == pytest.approx(float(np.dot(hops, comm.weights) / comm.weights.sum()))
    assert max_dilation(topo, comm, vert) == hops.max()


@pytest.mark.parametrize("seed", range(8))
def test_alg3_routes_every_edge_on_one_shortest_path(seed):
    topo, comm, vert = random_case(seed)
    load = congestion_estimate(topo, comm, vert) * topo.arc_capacity  # traffic per arc
    hops = dilation(topo, comm, vert)
    # one shortest path per edge: total traffic = sum of weight x hops, as for ECMP
    assert load.sum() == pytest.approx(float(np.dot(hops, comm.weights)))
    assert link_traffic(topo, comm, vert).sum() == pytest.approx(load.sum())
    # every loaded arc lies on some shortest path of a communicating pair
    nxg = topo.to_networkx()
    d = dict(nx.all_pairs_shortest_path_length(nxg))
    pairs = {(int(vert[s]), int(vert[t])) for s, t in zip(comm.src.tolist(), comm.dst.tolist())}
    for a in np.flatnonzero(load > 0):
        x, y = int(topo.arc_source[a]), int(topo.indices[a])
        assert any(d[u][x] + 1 + d[y][v] == d[u][v] for u, v in pairs if u != v)


def test_alg3_equals_ecmp_when_paths_are_unique():
    topo = mesh("7")  # a path graph: unique shortest paths
    rng = np.random.default_rng(1)
    comm = CommGraph(7, rng.integers(0, 7, 30), rng.integers(0, 7, 30), rng.uniform(1, 2, 30))
    vert = rng.permutation(7)
    np.testing.assert_allclose(congestion_estimate(topo, comm, vert), congestion(topo, comm, vert))


def test_alg3_balances_equal_length_paths():
    # 4-cycle a-b-c-d: two messages a->c have two shortest paths; Alg. 3 uses both, one each
    topo = torus("4")
    comm = CommGraph(4, [0, 1], [2, 3], [1.0, 1.0])
    vert = np.array([0, 0, 2, 2])
    with pytest.raises(MappingError):
        Mapping(topo, vert)  # one slot per vertex
    topo2 = Topology(topo.names, np.stack([topo.link_u, topo.link_v], 1), slots=[2, 1, 2, 1])
    est = congestion_estimate(topo2, comm, vert)
    assert est.max() == 1.0 and np.count_nonzero(est) == 4
    ecmp = congestion(topo2, comm, vert)
    assert ecmp.max() == 1.0 and np.count_nonzero(ecmp) == 4
    # heavier first message: the second one still avoids the loaded path
    est = congestion_estimate(topo2, CommGraph(4, [0, 1], [2, 3], [5.0, 1.0]), vert)
    assert sorted(est[est > 0].tolist()) == [1.0, 1.0, 5.0, 5.0]


def test_alg3_prefers_fewer_hops_over_lower_load():
    # triangle with a heavy direct edge: the second message still takes the 1-hop path
    topo = Topology(["a", "b", "c"], [(0, 1), (1, 2), (0, 2)], slots=[2, 1, 1])
    comm = CommGraph(3, [0, 1], [2, 2], [100.0, 1.0])
    vert = np.array([0, 0, 2])
    est = congestion_estimate(topo, comm, vert)
    assert est[arc_index(topo, 0, 2)] == 101.0 and est.sum() == 101.0


def test_evaluate_keys_and_routing_choice():
    topo = torus("4x4")
    r, c = np.divmod(np.arange(16), 4)
    comm = CommGraph(16, np.arange(16), (r + 1) % 4 * 4 + (c + 1) % 4)  # diagonal neighbour: 2 hops
    m = Mapping(topo, np.arange(16))
    for routing in ("ecmp", "alg3"):
        r = evaluate(topo, comm, m, routing=routing)
        assert set(r) == {"max_congestion", "avg_congestion", "avg_dilation", "max_dilation", "hop_bytes"}
        assert r["hop_bytes"] == 16 * 2 and r["max_dilation"] == 2
    with pytest.raises(ValueError):
        evaluate(topo, comm, m, routing="bogus")
    with pytest.raises(MappingError, match="covers 15 processes"):
        evaluate(topo, comm, np.arange(15))


def test_mapping_validation():
    topo = fattree(2, 2)
    with pytest.raises(MappingError, match="outside"):
        Mapping(topo, [0, 99])
    with pytest.raises(MappingError, match="'sw-l0-0' hosts 1 processes"):
        Mapping(topo, [0, 4])
    with pytest.raises(MappingError, match="'n0' hosts 2 processes"):
        Mapping(topo, [0, 0])


# ---------------------------------------------------------------- closed forms
def ring_sum(k):
    """Sum of hop distances from one node of a k-ring to all others."""
    return k * k // 4 if k % 2 == 0 else (k * k - 1) // 4


@pytest.mark.parametrize("dims", [(8,), (5,), (4, 4), (3, 5), (2, 6), (4, 4, 4), (3, 4, 5)])
def test_torus_diameter_and_aspl(dims):
    n = int(np.prod(dims))
    p = properties(torus(dims))
    per_source = sum(ring_sum(k) * n // k for k in dims)
    assert p["diameter"] == sum(k // 2 for k in dims)
    assert p["aspl"] == pytest.approx(per_source / (n - 1), rel=1e-12)
    assert p["links"] == sum(n // k * (k if k > 2 else k - 1) for k in dims)


@pytest.mark.parametrize("dims", [(6,), (3, 4), (2, 3, 4)])
def test_mesh_diameter_and_aspl(dims):
    n = int(np.prod(dims))
    total = sum((k ** 3 - k) / 3 * (n // k) ** 2 for k in dims)  # ordered pairs
    p = properties(mesh(dims))
    assert p["diameter"] == sum(k - 1 for k in dims)
    assert p["aspl"] == pytest.approx(total / (n * (n - 1)), rel=1e-12)


@pytest.mark.parametrize("d", [1, 2, 3, 6, 8])
def test_hypercube_diameter_and_aspl(d):
    p = properties(hypercube(d))
    assert p["diameter"] == d
    assert p["aspl"] == pytest.approx(d / 2 * 2 ** d / (2 ** d - 1), rel=1e-12)
    assert p["links"] == d * 2 ** (d - 1) and p["degree_min"] == p["degree_max"] == d


@pytest.mark.parametrize("a", [2, 3, 4, 5, 6, 8, 12])
def test_rt_and_rtt_distance_properties_seed004_table1(a):
    n = 2 * a * a
    p_rt, p_rtt = properties(rt(a)), properties(rtt(a))
    # brute force: breadth-first search (networkx) from every vertex; hist[d] = number of (source,
    # destination) pairs at d hops
    def brute(t):
        g = t.to_networkx()
        hist = {}
        for s in range(n):
            for dist in nx.single_source_shortest_path_length(g, s).values():
                hist[dist] = hist.get(dist, 0) + 1
        return hist

    h_rt, h_rtt = brute(rt(a)), brute(rtt(a))
    assert sum(h_rt.values()) == sum(h_rtt.values()) == n * n  # connected
    # RT(a) = 2a x a torus: per source, the distance histogram is the convolution of the two rings'
    ring = lambda k: {d: (1 if d == 0 or 2 * d == k else 2) for d in range(k // 2 + 1)}  # noqa: E731
    conv = {}
    for (d1, c1), (d2, c2) in itertools.product(ring(2 * a).items(), ring(a).items()):
        conv[d1 + d2] = conv.get(d1 + d2, 0) + c1 * c2
    assert h_rt == {d: n * c for d, c in conv.items()}
    rt_sum = sum(d * c for d, c in h_rt.items()) / n  # per source
    assert rt_sum == a * ring_sum(2 * a) + 2 * a * ring_sum(a)
    assert p_rt["diameter"] == max(h_rt) == a + a // 2
    assert p_rt["aspl"] == pytest.approx(rt_sum / (n - 1), rel=1e-12)
    if a % 2 == 0:
        assert p_rt["diameter"] == 3 * a // 2  # Table 1: k = 3a/2
        assert rt_sum / n == pytest.approx(3 * a / 4, rel=1e-12)  # Table 1: kbar = 3a/4, exact for even a
    # RTT(a), from every source: 4d nodes at distance d < a and 2a-1 at distance a (diamond-shaped
    # Voronoi cell), counted by the search, not assumed
    assert h_rtt == {0: n, **{d: n * 4 * d for d in range(1, a)}, a: n * (2 * a - 1)}
    rtt_sum = sum(d * c for d, c in h_rtt.items()) / n
    assert 3 * rtt_sum == a * (4 * a * a - 1)
    assert p_rtt["diameter"] == max(h_rtt) == a  # Table 1: k = a
    assert p_rtt["aspl"] == pytest.approx(rtt_sum / (n - 1), rel=1e-12)
    # Table 1 approximates kbar = 2a/3 (averaging over all n destinations, self included)
    assert abs(rtt_sum / n - 2 * a / 3) <= 1 / (6 * a) + 1e-12
    assert p_rtt["aspl"] < p_rt["aspl"]
    assert p_rtt["degree_min"] == p_rtt["degree_max"] == 4 and p_rtt["links"] == 2 * n


def test_rtt_distances_follow_algorithm2_routing_records():
    # hop distance = |x'| + |y'| of Camarero et al.'s Algorithm 2 routing record
    a = 5
    t = rtt(a)
    d = t.host_distances
    for s, v in itertools.product(range(0, 2 * a * a, 7), range(2 * a * a)):
        (ys, xs), (yv, xv) = divmod(s, 2 * a), divmod(v, 2 * a)
        x, y = xv - xs, yv - ys
        p = (x + y + a) % (2 * a)
        q = (y - x + a) % (2 * a)
        rx, ry = (p - q) // 2, (p + q - 2 * a) // 2
        assert d[s, v] == abs(rx) + abs(ry)


def test_properties_keys_and_fattree_aspl():
    k, n = 4, 3
    p = properties(fattree(k, n))
    assert {"vertices", "hosts", "slots", "switches", "links", "degree_min", "degree_max", "diameter",
            "aspl"} <= set(p)
    assert (p["hosts"], p["switches"], p["vertices"]) == (k ** n, n * k ** (n - 1), k ** n + n * k ** (n - 1))
    total = sum((k - 1) * k ** (n - 1 - i) * 2 * (n - i) for i in range(n))
    assert p["diameter"] == 2 * n and p["aspl"] == pytest.approx(total / (k ** n - 1))


@pytest.mark.parametrize("seed", range(6))
def test_alg3_each_edge_takes_a_least_loaded_shortest_path(seed):
    """Algorithm 3's rule, checked edge by edge against all shortest paths enumerated by networkx."""
    from libtopomap._kernels.alg3 import alg3_levels

    topo, comm, vert = random_case(seed)
    es = np.asarray(vert)[comm.src].astype(np.int64)
    ed = np.asarray(vert)[comm.dst].astype(np.int64)
    nxg = topo.to_networkx()
    args = (topo.indptr, topo.indices, topo.arc_source.astype(np.int64), topo.arc_capacity, topo.n_vertices)
    before = np.zeros(topo.n_arcs)
    for k in range(es.size):
        after = alg3_levels(*args, es[:k + 1], ed[:k + 1], comm.weights[:k + 1])
        if es[k] == ed[k]:
            np.testing.assert_allclose(after, before)
            continue
        used = np.flatnonzero(~np.isclose(after, before))
        paths = list(nx.all_shortest_paths(nxg, int(es[k]), int(ed[k])))
        costs = [sum(before[arc_index(topo, x, y)] for x, y in zip(p, p[1:])) for p in paths]
        assert used.size == len(paths[0]) - 1  # one shortest path
        assert before[used].sum() == pytest.approx(min(costs), abs=1e-9)
        np.testing.assert_allclose(after[used] - before[used], comm.weights[k] / topo.arc_capacity[used])
        before = after


@pytest.mark.slow
def test_alg3_matches_seed_dijkstra_formulation_on_unique_tie_free_case():
    from libtopomap._kernels.alg3 import alg3_levels, alg3_traffic

    topo = torus("5x5")
    rng = np.random.default_rng(3)
    es = rng.integers(0, 25, 40).astype(np.int64)
    ed = rng.integers(0, 25, 40).astype(np.int64)
    w = rng.uniform(1, 2, 40)  # distinct weights: load ties are unlikely
    args = (topo.indptr, topo.indices, topo.arc_source.astype(np.int64), topo.arc_capacity, topo.n_vertices)
    ours = alg3_levels(*args, es, ed, w)
    seed_version = alg3_traffic(*args, es, ed, w, float(w.max()) * 25 ** 2)
    assert ours.sum() == pytest.approx(seed_version.sum())
    assert ours.max() == pytest.approx(seed_version.max(), rel=0.35)


@pytest.mark.parametrize("routing", ["ecmp", "alg3"])
def test_evaluate_a_mapping_into_its_own_slots(routing):
    # a partial allocation with 3 slots on host 0: valid for the Mapping's slots, not the topology's 1
    from libtopomap import evaluate, fattree

    t = fattree(4, 2)
    slots = np.zeros(t.n_vertices, np.int64)
    slots[[0, 5]] = 3
    g = CommGraph(6, [0, 1, 2, 3, 4], [1, 2, 3, 4, 5], [1.0, 2.0, 3.0, 4.0, 5.0])
    v = np.array([0, 0, 0, 5, 5, 5])
    with pytest.raises(MappingError, match="slots"):
        evaluate(t, g, v, routing=routing)
    m = evaluate(t, g, Mapping(t, v, slots=slots), routing=routing)
    assert m["hop_bytes"] == 3.0 * t.distances.pairs(np.array([0]), np.array([5]))[0]
    assert m["max_congestion"] > 0
