"""Routing models (issue 14 item 1): loads against brute-force path enumeration, hop counts against
their definitions, RT/RTT routing records against breadth-first search."""

import json

import networkx as nx
import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import metrics
from libtopomap.collectives.dragonfly import dragonfly_queries
from libtopomap.errors import ArgumentError, TopologyError
from libtopomap.routing import (ROUTING_MODELS, Routing, get_routing, native_routing, route_hops, route_traffic,
                                rt_routing_record, rtt_routing_record)


def arc_index(t, u, v):
    lo, hi = t.indptr[u], t.indptr[u + 1]
    k = lo + int(np.flatnonzero(t.indices[lo:hi] == v)[0])
    return k


def loads_of(t, weighted_paths):
    """Per-arc load of ``(path, weight)`` pairs, paths as vertex lists."""
    out = np.zeros(t.n_arcs)
    for p, w in weighted_paths:
        for u, v in zip(p, p[1:]):
            out[arc_index(t, u, v)] += w
    return out


def dist_to(nxg, t):
    return nx.single_source_shortest_path_length(nxg, t)


def brute_paths(model, topo, s, t):
    """Every path of a demand with its probability, by enumeration (networkx) or explicit construction."""
    nxg = topo.to_networkx()
    if s == t:
        return []
    if model == "ecmp":
        paths = list(nx.all_shortest_paths(nxg, s, t))
        return [(p, 1 / len(paths)) for p in paths]
    if model == "oblivious":
        d = dist_to(nxg, t)
        out = []
        for p in nx.all_shortest_paths(nxg, s, t):
            prob = 1.0
            for u in p[:-1]:
                prob /= sum(1 for v in nxg[u] if d[v] == d[u] - 1)
            out.append((p, prob))
        return out
    if model == "table":
        d = dist_to(nxg, t)
        p = [s]
        while p[-1] != t:
            u = p[-1]
            p.append(min(v for v in nxg[u] if d[v] == d[u] - 1))
        return [(p, 1.0)]
    raise AssertionError(model)


def dimension_order_path(dims, wrap, order, s, t):
    """Coordinates corrected one dimension at a time (explicit list), up on a half-way tie."""
    cs, ct = list(np.unravel_index(s, dims)), list(np.unravel_index(t, dims))
    path = [s]
    for j in order:
        k = dims[j]
        d = ct[j] - cs[j]
        if wrap[j]:
            d %= k
            if 2 * d > k:
                d -= k
        for _ in range(abs(d)):
            cs[j] = (cs[j] + (1 if d > 0 else -1)) % k
            path.append(int(np.ravel_multi_index(cs, dims)))
    return path


def record_path(a, twisted, s, t):
    """Walk of a routing record in Z^2, reduced to the node of RT(a) / RTT(a) after each step."""
    W = 2 * a
    x, y = s % W, s // W
    rec = (rtt_routing_record if twisted else rt_routing_record)(t % W - x, t // W - y, a)
    path = [s]
    for dim, r in enumerate(rec):
        for _ in range(abs(r)):
            if dim == 0:
                x += 1 if r > 0 else -1
            else:
                y += 1 if r > 0 else -1
            if twisted:
                while y < 0:
                    x, y = x + a, y + a
                while y >= a:
                    x, y = x - a, y - a
            path.append(int((y % a) * W + x % W))
    return path


def demands(topo, n, seed):
    rng = np.random.default_rng(seed)
    hosts = np.flatnonzero(topo.slots > 0)
    return rng.choice(hosts, n), rng.choice(hosts, n), rng.uniform(0.5, 2.0, n)


GENERAL = [ltm.torus("4x3"), ltm.mesh("3x3"), ltm.fattree(4, 2), ltm.dragonfly(5, 2, 1, 2), ltm.hypercube(3),
           ltm.concentrate(ltm.torus("3x4"), 2), ltm.circulant(11, [1, 3]), ltm.rtt(3)]


@pytest.mark.parametrize("model", ["ecmp", "table", "oblivious"])
@pytest.mark.parametrize("topo", GENERAL, ids=lambda t: t.name)
def test_general_models_match_path_enumeration(model, topo):
    s, t, w = demands(topo, 30, 5)
    want = loads_of(topo, [(p, x * q) for a, b, x in zip(s, t, w) for p, q in brute_paths(model, topo, int(a), int(b))])
    np.testing.assert_allclose(route_traffic(topo, s, t, w, routing=model), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(route_hops(topo, s, t, routing=model), topo.distances.pairs(s, t))


def test_ecmp_is_todays_link_traffic_bit_for_bit():
    for topo in GENERAL + [ltm.torus("6x6")]:
        s, t, w = demands(topo, 40, 1)
        hosts = np.flatnonzero(topo.slots > 0)
        pos = np.full(topo.n_vertices, -1)
        pos[hosts] = np.arange(hosts.size)
        g = ltm.CommGraph(hosts.size, pos[s], pos[t], w)
        base = metrics.link_traffic(topo, g, hosts)
        np.testing.assert_array_equal(metrics.link_traffic(topo, g, hosts, routing="ecmp"), base)
        # vertex demands in another order than the graph's CSR edges: equal up to summation order
        np.testing.assert_allclose(route_traffic(topo, s, t, w, routing="ecmp"), base, rtol=1e-13, atol=1e-13)
        assert metrics.evaluate(topo, g, hosts) == metrics.evaluate(topo, g, hosts, routing="ecmp")


def test_ecmp_numbers_pinned():
    # diagonal neighbours on a 4x4 torus: every pair 2 hops, two shortest paths each
    topo = ltm.torus("4x4")
    r, c = np.divmod(np.arange(16), 4)
    comm = ltm.CommGraph(16, np.arange(16), (r + 1) % 4 * 4 + (c + 1) % 4)
    e = metrics.evaluate(topo, comm, np.arange(16), routing="ecmp")
    assert e == {"max_congestion": 1.0, "avg_congestion": 0.5, "avg_dilation": 2.0, "max_dilation": 2,
                 "hop_bytes": 32.0}
    # dimension order puts both hops of a pair on one path: first down a column (dim 0) then along a row
    d = metrics.evaluate(topo, comm, np.arange(16), routing="dimension-order")
    assert d["max_congestion"] == 1.0 and d["hop_bytes"] == 32.0


def test_oblivious_differs_from_path_uniform_ecmp():
    topo = ltm.mesh("3x3")  # corner 0 = (0,0) to corner 8 = (2,2): 6 shortest paths
    ecmp = route_traffic(topo, [0], [8], routing="ecmp")
    obl = route_traffic(topo, [0], [8], routing="oblivious")
    a = arc_index(topo, 1, 2)  # (0,1) -> (0,2): 1 of 6 paths; oblivious: 1/2 * 1/2
    assert ecmp[a] == pytest.approx(1 / 6) and obl[a] == pytest.approx(1 / 4)
    tab = route_traffic(topo, [0], [8], routing="table")
    assert [topo.indices[k] for k in np.flatnonzero(tab)] == [1, 2, 5, 8]  # lowest index next hop each time


DIMENSION_ORDER = [("torus", "4x4"), ("torus", "5x3"), ("torus", "4x2x3"), ("torus", "2"), ("mesh", "3x4"),
                   ("mesh", "2x3x2"), ("torus", "6")]


@pytest.mark.parametrize("kind,dims", DIMENSION_ORDER)
def test_dimension_order_on_grids_is_the_explicit_path(kind, dims):
    topo = getattr(ltm, kind)(dims)
    shape = ltm.generators.grid.parse_dims(dims)
    wrap = [kind == "torus"] * len(shape)
    n = topo.n_vertices
    s, t = np.divmod(np.arange(n * n), n)
    w = np.random.default_rng(0).uniform(0.5, 2, n * n)
    paths = [dimension_order_path(shape, wrap, range(len(shape)), int(a), int(b)) for a, b in zip(s, t)]
    nxg = topo.to_networkx()
    for p in paths[:: max(1, len(paths) // 60)]:
        if len(p) > 1:
            assert p in list(nx.all_shortest_paths(nxg, p[0], p[-1]))
    np.testing.assert_allclose(route_traffic(topo, s, t, w, routing="dimension-order"),
                               loads_of(topo, [(p, x) for p, x in zip(paths, w)]), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(route_hops(topo, s, t, routing="dimension-order"), [len(p) - 1 for p in paths])


def test_dimension_order_tie_goes_up_and_hypercube_is_ecube():
    ring = ltm.torus("4")
    tr = route_traffic(ring, [0], [2], routing="dimension-order")
    assert [(ring.arc_source[k], ring.indices[k]) for k in np.flatnonzero(tr)] == [(0, 1), (1, 2)]
    cube = ltm.hypercube(3)
    tr = route_traffic(cube, [0], [7], routing="dimension-order")  # e-cube: bit 0, then 1, then 2
    used = sorted((int(cube.arc_source[k]), int(cube.indices[k])) for k in np.flatnonzero(tr))
    assert used == [(0, 1), (1, 3), (3, 7)]
    s, t, w = demands(cube, 30, 2)
    paths = [dimension_order_path((2, 2, 2), [False] * 3, [2, 1, 0], int(a), int(b)) for a, b in zip(s, t)]
    np.testing.assert_allclose(route_traffic(cube, s, t, w, routing="dimension-order"),
                               loads_of(cube, [(p, x) for p, x in zip(paths, w)]))


def test_dimension_order_on_a_concentrated_torus():
    topo = ltm.concentrate(ltm.torus("3x4"), 2)
    s, t, w = demands(topo, 40, 3)
    att = {int(h): int(topo.neighbors(h)[0]) for h in np.flatnonzero(topo.slots > 0)}
    ps = []
    for a, b, x in zip(s.tolist(), t.tolist(), w.tolist()):
        if a == b:
            continue
        core = dimension_order_path((3, 4), [True, True], [0, 1], att[a], att[b])
        ps.append(([a] + core + [b], x))
    np.testing.assert_allclose(route_traffic(topo, s, t, w, routing="dimension-order"), loads_of(topo, ps))


@pytest.mark.parametrize("a", range(2, 17))
@pytest.mark.parametrize("twisted", [False, True])
def test_routing_records_are_shortest_for_every_pair(a, twisted):
    topo = (ltm.rtt if twisted else ltm.rt)(a)
    W, n = 2 * a, 2 * a * a
    dist = topo.hop_distances(np.arange(n))  # BFS on the generated graph
    s, t = np.divmod(np.arange(n * n), n)
    dx, dy = t % W - s % W, t // W - s // W
    rx, ry = (rtt_routing_record if twisted else rt_routing_record)(dx, dy, a)
    np.testing.assert_array_equal(np.abs(rx) + np.abs(ry), dist[s, t])
    # the record reaches the destination: it differs from (dx, dy) by a lattice vector
    ex, ey = rx - dx, ry - dy
    if twisted:  # lattice spanned by (a, a) and (a, -a)
        assert np.all((ex % a == 0) & (ey % a == 0) & (((ex + ey) // a) % 2 == 0))
    else:  # (2a, 0) and (0, a)
        assert np.all((ex % W == 0) & (ey % a == 0))
    # differences outside R - R (any integers) give the same records modulo the lattice
    sx, sy = (5 * a, a) if twisted else (3 * W, -5 * a)  # 3(a, a) + 2(a, -a), or 3(2a, 0) - 5(0, a)
    rx2, ry2 = (rtt_routing_record if twisted else rt_routing_record)(dx + sx, dy + sy, a)
    np.testing.assert_array_equal(np.abs(rx2) + np.abs(ry2), dist[s, t])
    assert (rtt_routing_record if twisted else rt_routing_record)(int(dx[5]), int(dy[5]), a) == (int(rx[5]), int(ry[5]))


@pytest.mark.parametrize("a", [2, 3, 4, 5])
@pytest.mark.parametrize("model", ["rt", "rtt"])
def test_rt_rtt_loads_follow_the_record_x_first(a, model):
    topo = getattr(ltm, model)(a)
    assert native_routing(topo) == model and topo.routing == model
    n = topo.n_vertices
    s, t = np.divmod(np.arange(n * n), n)
    w = np.random.default_rng(a).uniform(0.5, 2, n * n)
    paths = [record_path(a, model == "rtt", int(x), int(y)) for x, y in zip(s, t)]
    nxg = topo.to_networkx()
    for p in paths[:: max(1, len(paths) // 40)]:
        if len(p) > 1:
            assert p in list(nx.all_shortest_paths(nxg, p[0], p[-1]))
    np.testing.assert_allclose(route_traffic(topo, s, t, w, routing=model),
                               loads_of(topo, [(p, x) for p, x in zip(paths, w)]), rtol=1e-12, atol=1e-12)


def test_rt_rtt_on_a_concentrated_network():
    topo = ltm.concentrate(ltm.rtt(3), 2)
    s, t, w = demands(topo, 40, 4)
    att = {int(h): int(topo.neighbors(h)[0]) for h in np.flatnonzero(topo.slots > 0)}
    ps = [([a] + record_path(3, True, att[a], att[b]) + [b], x)
          for a, b, x in zip(s.tolist(), t.tolist(), w.tolist()) if a != b]
    np.testing.assert_allclose(route_traffic(topo, s, t, w, routing="rtt"), loads_of(topo, ps))


def _groups_of_path(q, p):
    rid = q.router_index(p)
    return rid // q.routers


def _link_kinds(q, p):
    """(terminal, local, global) links of a vertex path."""
    term = loc = glob = 0
    routers = set(q.router_vertices.tolist())
    for u, v in zip(p, p[1:]):
        if u not in routers or v not in routers:
            term += 1
        elif q.group_of(u) == q.group_of(v):
            loc += 1
        else:
            glob += 1
    return term, loc, glob


@pytest.mark.parametrize("topo", [ltm.dragonfly(9, 4, 2, 2), ltm.dragonfly(3, 2, 1, 2), ltm.dragonfly(5, 2, 0, 2)],
                         ids=lambda t: t.name)
def test_minimal_dragonfly_routes_are_the_query_routes(topo):
    q = dragonfly_queries(topo)
    n = topo.n_vertices
    hosts = np.flatnonzero(topo.slots > 0)
    s, t = (x.ravel() for x in np.meshgrid(hosts, hosts))
    w = np.random.default_rng(1).uniform(0.5, 2, s.size)
    paths = [q.route(int(a), int(b)) for a, b in zip(s, t)]
    np.testing.assert_allclose(route_traffic(topo, s, t, w, routing="minimal"),
                               loads_of(topo, [(p, x) for p, x in zip(paths, w)]), rtol=1e-12, atol=1e-12)
    hops = route_hops(topo, s, t, routing="minimal")
    np.testing.assert_array_equal(hops, [len(p) - 1 for p in paths])
    for p, a, b in zip(paths, s, t):
        term, loc, glob = _link_kinds(q, p)
        if q.group_of(a) != q.group_of(b):
            assert glob == 1 and loc <= 2  # exactly one global link between groups
        else:
            assert glob == 0 and loc <= 1
    assert n > 0 and np.all(hops >= topo.distances.pairs(s, t))


def _valiant_paths(q, a, b):
    """Explicit Valiant routes (one link per pair of groups): via each intermediate group, equally likely."""
    ra, rb = int(q.router_of(a)), int(q.router_of(b))
    A, B = int(q.group_of(a)), int(q.group_of(b))
    if A == B or q.groups <= 2:
        return [(q.route(a, b), 1.0)]
    out = []
    mids = [i for i in range(q.groups) if i not in (A, B)]
    for i in mids:
        routers = [ra, q.gate(A, i), q.gate(i, A), q.gate(i, B), q.gate(B, i), rb]
        p = [a] if q.terminals else []
        for r in routers:
            if not p or p[-1] != r:
                p.append(r)
        if q.terminals:
            p.append(b)
        out.append((p, 1 / len(mids)))
    return out


def test_valiant_expected_loads_and_two_global_links():
    topo = ltm.dragonfly(9, 4, 2, 2)  # one global link per pair of groups
    q = dragonfly_queries(topo)
    assert q.links_per_pair == 1
    s, t, w = demands(topo, 60, 7)
    wp, hops = [], []
    for a, b, x in zip(s.tolist(), t.tolist(), w.tolist()):
        if a == b:
            hops.append(0.0)
            continue
        ps = _valiant_paths(q, a, b)
        hops.append(sum(pr * (len(p) - 1) for p, pr in ps))
        wp += [(p, x * pr) for p, pr in ps]
        if q.group_of(a) != q.group_of(b):
            assert all(_link_kinds(q, p)[2] == 2 for p, _ in ps)  # exactly two global links
    np.testing.assert_allclose(route_traffic(topo, s, t, w, routing="valiant"), loads_of(topo, wp), rtol=1e-12)
    np.testing.assert_allclose(route_hops(topo, s, t, routing="valiant"), hops, rtol=1e-12)


def test_models_are_checked_against_the_topology():
    with pytest.raises(TopologyError, match="dimension-order"):
        route_traffic(ltm.fattree(4, 2), [0], [1], routing="dimension-order")
    with pytest.raises(TopologyError, match="rtt routing needs"):
        route_traffic(ltm.torus("4x8"), [0], [1], routing="rtt")
    with pytest.raises(TopologyError, match="not a dragonfly"):
        metrics.hop_bytes(ltm.torus("4x4"), ltm.CommGraph(16, [0], [1]), np.arange(16), routing="minimal")
    with pytest.raises(ArgumentError, match="routing must be one of"):
        get_routing("shortest")
    with pytest.raises(ValueError):
        metrics.evaluate(ltm.torus("4x4"), ltm.CommGraph(16, [0], [1]), np.arange(16), routing="bogus")
    assert get_routing(None) == Routing("ecmp") and set(ROUTING_MODELS) >= {"table", "valiant"}


def test_native_routing_defaults():
    assert native_routing(ltm.torus("4x4")) == "ecmp" and native_routing(ltm.fattree(4, 2)) == "ecmp"
    assert ltm.properties(ltm.rtt(3))["routing"] == "rtt" and ltm.properties(ltm.torus("3x3"))["routing"] == "ecmp"
    assert native_routing(ltm.dragonfly(9, 4, 2, 2)) == "minimal"
    assert native_routing(ltm.concentrate(ltm.rtt(3), 2)) == "rtt"
    t = ltm.Topology(["a", "b"], [(0, 1)], attrs={"routing": "table"})
    assert t.routing == "table" and get_routing("native", t) == Routing("table")
    with pytest.raises(TopologyError, match="declares routing"):
        native_routing(ltm.Topology(["a", "b"], [(0, 1)], attrs={"routing": "magic"}))


def test_metrics_follow_the_routing():
    topo = ltm.dragonfly(9, 4, 2, 2)
    n = int(topo.slots.sum())
    g = ltm.random_graph(n, 4, seed=1)
    m = np.flatnonzero(topo.slots > 0)
    e = metrics.evaluate(topo, g, m)
    mi = metrics.evaluate(topo, g, m, routing="minimal")
    nat = metrics.evaluate(topo, g, m, routing="native")
    va = metrics.evaluate(topo, g, m, routing="valiant")
    assert mi == nat
    assert mi["hop_bytes"] >= e["hop_bytes"] and va["hop_bytes"] > mi["hop_bytes"]
    src, dst = m[g.src], m[g.dst]
    assert mi["hop_bytes"] == float(np.dot(g.weights, dragonfly_queries(topo).hops(src, dst)))
    assert metrics.hop_bytes(topo, g, m, routing="minimal") == mi["hop_bytes"]
    assert metrics.max_dilation(topo, g, m, routing="minimal") == mi["max_dilation"]
    assert isinstance(metrics.max_dilation(topo, g, m, routing="valiant"), float)
    c = metrics.congestion(topo, g, m, routing="table")
    assert c.sum() == pytest.approx(metrics.congestion(topo, g, m).sum())  # same hops, other links
    assert metrics.max_congestion(topo, g, m, routing="oblivious") == pytest.approx(
        route_traffic(topo, src, dst, g.weights, routing="oblivious").max())


def _cli_json(argv, capsys):
    from libtopomap.cli import main

    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_map_and_collective_take_routing(tmp_path, capsys):
    from libtopomap.cli import main

    topo = tmp_path / "df.json"
    assert main(["generate", "dragonfly", "--groups", "9", "--routers", "4", "--terminals", "2", "--global", "2",
                 "-o", str(topo)]) == 0
    capsys.readouterr()
    t = ltm.load(str(topo))
    assert t.routing == "minimal"  # the generator's attributes survive the file
    base = ["map", "--topology", str(topo), "--graph", "random:72:4:1", "--strategy", "identity", "--json"]
    e = _cli_json(base, capsys)
    m = _cli_json(base + ["--routing", "minimal"], capsys)
    n = _cli_json(base + ["--routing", "native"], capsys)
    g = ltm.load_graph("random:72:4:1")
    rows = [r for r in m if r.get("strategy") == "identity"]
    ident = np.flatnonzero(t.slots > 0)
    assert rows[0]["hopbytes"] == metrics.hop_bytes(t, g, ident, routing="minimal")
    assert [r.get("hopbytes") for r in m] == [r.get("hopbytes") for r in n]
    assert [r.get("hopbytes") for r in e][0] == metrics.hop_bytes(t, g, ident)
    coll = ["collective", "--topology", str(topo), "--collective", "allreduce", "--procs", "16", "--optimizer",
            "none", "--no-paths", "--json"]
    c0 = _cli_json(coll, capsys)
    cv = _cli_json(coll + ["--routing", "valiant"], capsys)
    assert c0["routing"] == "ecmp" and cv["routing"] == "valiant" and cv["hops_before"] > c0["hops_before"]
    with pytest.raises(SystemExit) as ex:
        main(base + ["--routing", "shortest"])
    assert ex.value.code == 2
    capsys.readouterr()
    assert main(["collective", "--topology", str(topo), "--procs", "8", "--routing", "table"]
                + ["--collective", "bcast", "--algorithm", "tree"]) == 2


def test_collective_total_hops_under_routing():
    from libtopomap.collectives.objectives import evaluate_schedule, total_hops
    from libtopomap.collectives.schedules import schedule

    t = ltm.dragonfly(9, 4, 2, 2)
    q = dragonfly_queries(t)
    steps = schedule("allreduce", 16)
    v = np.flatnonzero(t.slots > 0)[::4][:16]
    src = np.concatenate([s[:, 0] for s in steps])
    dst = np.concatenate([s[:, 1] for s in steps])
    assert total_hops(t, steps, v, routing="minimal") == int(q.hops(v[src], v[dst]).sum())
    assert total_hops(t, steps, v) == int(t.distances.pairs(v[src], v[dst]).sum())
    assert evaluate_schedule(t, steps, v, paths=False, routing="valiant")["hops"] == pytest.approx(
        float(route_hops(t, v[src], v[dst], routing="valiant").sum()))


def test_simulate_static_loads_under_routing():
    from libtopomap.simulate import _static_loads

    t = ltm.torus("4x4")
    unit = [np.array([[0, 10, 1], [3, 9, 2]])]
    v = np.arange(16)
    e, avg = _static_loads(t, unit, v)
    d, avg2 = _static_loads(t, unit, v, "dimension-order")
    np.testing.assert_allclose(d, route_traffic(t, [0, 3], [10, 9], [1, 2], routing="dimension-order"))
    assert avg == avg2 and e.sum() == pytest.approx(d.sum())


def test_valiant_parallel_chunks_equal_the_serial_walk():
    topo = ltm.dragonfly(4, 2, 1, 3)  # two global links per pair of groups: the walk, not the sums
    assert dragonfly_queries(topo).links_per_pair == 2
    s, t, w = demands(topo, 4000, 9)  # > 1024 demands per thread: chunked when numba has 2+ threads
    whole = route_traffic(topo, s, t, w, routing="valiant")
    parts = sum(route_traffic(topo, s[i:i + 500], t[i:i + 500], w[i:i + 500], routing="valiant")
                for i in range(0, 4000, 500))
    np.testing.assert_allclose(whole, parts, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("topo", [ltm.dragonfly(9, 4, 2, 2), ltm.dragonfly(5, 2, 1, 2), ltm.dragonfly(17, 4, 1, 4),
                                  ltm.dragonfly(5, 2, 0, 2), ltm.dragonfly(4, 2, 1, 3)], ids=lambda t: t.name)
def test_valiant_sums_equal_the_walk_of_every_intermediate_group(topo):
    from libtopomap.routing._common import strip_leaves
    from libtopomap.routing.dragonfly import dragonfly_walk, valiant_sums

    q = dragonfly_queries(topo)
    s, t, w = demands(topo, 3000, 11)
    walk = np.zeros(topo.n_arcs)
    s2, t2, w2 = strip_leaves(topo, s, t, w, walk)
    sums = walk.copy()
    hw, hs = np.zeros(s2.size), np.zeros(s2.size)
    args = (topo.indptr, topo.indices, q.router_ids, q.router_vertices, q.gate_router, q.landing_router, q.routers,
            q.groups)
    dragonfly_walk(*args, True, s2, t2, w2, walk, hw)  # g - 2 routes per demand
    np.testing.assert_allclose(route_traffic(topo, s, t, w, routing="valiant"), walk, rtol=1e-12,
                               atol=1e-12 * walk.max())
    assert (q.links_per_pair == 1) == (topo.name != "dragonfly-g4-a2-p1-h3")  # that one keeps the walk
    if q.links_per_pair == 1:
        valiant_sums(*args, s2, t2, w2, sums, hs)
        np.testing.assert_allclose(sums, walk, rtol=1e-12, atol=1e-12 * walk.max())
        np.testing.assert_array_equal(hs, hw)  # integer counts over g - 2, as the walk: bit-identical
