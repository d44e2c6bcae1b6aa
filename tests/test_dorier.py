"""Dragonfly queries, minimal routes and Dorier et al.'s broadcasts (CLUSTER 2016, sections II-A, III, IV-B)."""

import itertools
import json
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.cli import main
from libtopomap.collectives import (BCAST_ALGORITHMS, Dragonfly, bcast_links, bcast_makespan, dragonfly_bcast,
                                    dragonfly_link_use, dragonfly_queries, evaluate_bcast)
from libtopomap.errors import ArgumentError, CommGraphError, MappingError, TopologyError

# (g, a, p, h): Dorier et al.'s one-link-per-pair shape, several links per pair (m = 2), routers as hosts, p = 1
SHAPES = [(3, 2, 2, 1), (9, 4, 2, 2), (5, 4, 2, 2), (7, 2, 1, 3), (5, 2, 0, 2)]


def _kind(q, u, v):
    """'terminal', 'local' or 'global' for a link between topology vertices u and v."""
    ru, rv = q.router_ids[u], q.router_ids[v]
    is_router = np.zeros(q.topology.n_vertices, bool)
    is_router[q.router_vertices] = True
    if not (is_router[u] and is_router[v]):
        return "terminal"
    return "local" if ru // q.routers == rv // q.routers else "global"


def _brute_force_minimal(q):
    """{(s, d): (terminal, local, global)} over all ordered host pairs: the fewest links among all simple
    paths between their routers that cross at most one global link (enumerated with networkx), plus the
    two terminal links."""
    t = q.topology
    G = nx.Graph()
    G.add_edges_from(zip(t.link_u.tolist(), t.link_v.tolist()))
    G.remove_nodes_from([v for v in range(t.n_vertices) if v not in set(q.router_vertices.tolist())])
    best = {}
    for r1, r2 in itertools.product(q.router_vertices.tolist(), repeat=2):
        if r1 == r2:
            best[r1, r2] = (0, 0)
            continue
        for path in nx.all_simple_paths(G, r1, r2, cutoff=4):
            kinds = [_kind(q, u, v) for u, v in zip(path, path[1:])]
            c = (kinds.count("local"), kinds.count("global"))
            if c[1] <= 1 and ((r1, r2) not in best or sum(c) < sum(best[r1, r2])):
                best[r1, r2] = c
    router = {}
    for v in t.hosts.tolist():
        router[v] = v if q.terminals == 0 else next(iter(G_nb for G_nb in t.indices[t.indptr[v]:t.indptr[v + 1]]))
    out = {}
    for s, d in itertools.product(t.hosts.tolist(), repeat=2):
        lo, gl = best[int(router[s]), int(router[d])]
        out[s, d] = (0 if s == d or q.terminals == 0 else 2, lo, gl)
    return out


@pytest.mark.parametrize("shape", SHAPES[:4] + SHAPES[4:], ids=lambda s: "g{}a{}p{}h{}".format(*s))
def test_minimal_route_counts_match_brute_force(shape):
    t = ltm.dragonfly(*shape)
    q = Dragonfly(t)
    truth = _brute_force_minimal(q)
    hosts = t.hosts
    S, D = np.meshgrid(hosts, hosts, indexing="ij")
    term, loc, glob = q.link_counts(S, D)
    for i, s in enumerate(hosts.tolist()):
        for j, d in enumerate(hosts.tolist()):
            assert (term[i, j], loc[i, j], glob[i, j]) == truth[s, d], (s, d)
            path = q.route(s, d)
            assert path[0] == s and path[-1] == d
            kinds = [_kind(q, u, v) for u, v in zip(path, path[1:])]
            assert all(t.distances.pairs([u], [v])[0] == 1 for u, v in zip(path, path[1:]))  # real links
            assert (kinds.count("terminal"), kinds.count("local"), kinds.count("global")) == truth[s, d]
            assert kinds.count("global") == (q.group_of(s) != q.group_of(d))


def test_minimal_routing_is_not_shortest_path_routing():
    # two global hops through a third group can beat local-global-local: minimal routing never takes them
    t = ltm.dragonfly(9, 4, 2, 2)
    q = Dragonfly(t)
    h = t.hosts
    S, D = np.repeat(h, h.size), np.tile(h, h.size)
    assert np.all(q.hops(S, D) >= t.distances.pairs(S, D))
    assert np.any(q.hops(S, D) > t.distances.pairs(S, D))


def test_queries_follow_the_generator_numbering():
    g, a, p, h = 9, 4, 2, 2
    t = ltm.dragonfly(g, a, p, h)
    q = dragonfly_queries(t)
    assert dragonfly_queries(t) is q  # cached on the topology
    assert (q.groups, q.routers, q.terminals, q.links_per_pair) == (g, a, p, 1)
    term = np.arange(g * a * p)
    assert np.array_equal(q.router_of(term), g * a * p + term // p)  # vertex (G*a + r)*p + t
    assert np.array_equal(q.group_of(term), term // (a * p))
    assert [t.names[v] for v in q.router_vertices[:2]] == ["sw-g0-r0", "sw-g0-r1"]
    for A, B in itertools.permutations(range(g), 2):
        u, v = q.gate(A, B), q.gate(B, A)
        assert q.group_of(u) == A and q.group_of(v) == B
        assert t.distances.pairs([u], [v])[0] == 1  # the global link between the two gates
    # every router holds exactly h gates; with g = a*h + 1, one per remote group
    owners = [q.gate(A, B) for A in range(g) for B in range(g) if A != B]
    assert np.all(np.bincount(owners, minlength=t.n_vertices)[q.router_vertices] == h)
    assert q.gates(3, 3).size == 0
    with pytest.raises(TopologyError, match="same group"):
        q.gate(3, 3)
    with pytest.raises(TopologyError, match="outside"):
        q.gates(0, 9)


def test_several_links_per_pair_of_groups():
    q = Dragonfly(ltm.dragonfly(5, 4, 2, 2))  # a*h = 8 ports, g - 1 = 4: two links per pair
    assert q.links_per_pair == 2
    for A, B in itertools.permutations(range(5), 2):
        assert q.gates(A, B).size == 2


def test_queries_from_a_file_without_attributes(tmp_path):
    t = ltm.dragonfly(9, 4, 2, 2)
    path = tmp_path / "df.ltm"
    ltm.save(path, t)
    # a .ltm file as LibTopoMap writes it: without libtopomap's trailing attributes line
    path.write_text("".join(x for x in path.read_text().splitlines(keepends=True) if not x.startswith("# libtopomap:")))
    back = ltm.load(path)
    assert back.attrs.get("generator") != "dragonfly"
    q0, q1 = Dragonfly(t), Dragonfly(back)
    h = t.hosts
    S, D = np.repeat(h, h.size), np.tile(h, h.size)
    names = np.array(t.names)
    S1 = np.array([back.index(x) for x in names[S]])
    D1 = np.array([back.index(x) for x in names[D]])
    for x, y in zip(q0.link_counts(S, D), q1.link_counts(S1, D1)):
        assert np.array_equal(x, y)


def test_not_a_dragonfly_is_a_clear_error():
    with pytest.raises(TopologyError, match="not a dragonfly"):
        Dragonfly(ltm.torus("4x4"))
    with pytest.raises(TopologyError, match="not a dragonfly"):
        dragonfly_bcast(ltm.fattree(4, 2), [0, 1, 2], "glf")
    t = ltm.dragonfly(9, 4, 2, 2)
    links = np.stack([t.link_u, t.link_v], 1)
    u, v = t.index("sw-g0-r0"), t.index("sw-g0-r1")
    keep = ~((links[:, 0] == min(u, v)) & (links[:, 1] == max(u, v)))
    bad = ltm.Topology(t.names, links[keep], slots=t.slots, attrs=t.attrs)
    with pytest.raises(TopologyError, match="clique"):
        Dragonfly(bad)
    bad = ltm.Topology(t.names, np.r_[links, [[0, 1]]], slots=t.slots, attrs=t.attrs)
    with pytest.raises(TopologyError, match="'n0' is not a terminal attached to exactly one router"):
        Dragonfly(bad)


# ---------------------------------------------------------------------------------------------- III-E

def test_link_use_exact_numbers_of_the_paper():
    u = dragonfly_link_use(129, 16, 8, 8, 10240)
    assert round(u["global"], 2) == 10160.24
    assert u["terminal"] == 20478 == u["bound_terminal"]
    assert round(u["local"], 2) == 19124.87  # derived from the paper's own probabilities
    assert round(u["local_paper"]) == 19122  # the printed formula (sign slip), the paper's number
    assert (u["bound_global"], u["bound_local"]) == (128, 2191)
    v = dragonfly_link_use(73, 12, 6, 6, 1000)
    assert (v["bound_global"], v["bound_local"]) == (72, 947)
    assert sum(u["p_local"]) == pytest.approx(1.0)


@pytest.mark.parametrize("shape", [(9, 4, 2, 2), (13, 4, 3, 3), (7, 3, 2, 2)])
def test_link_use_probabilities_equal_exhaustive_counts(shape):
    # over all ordered pairs of distinct terminals, the fractions of minimal routes with 1 global link and
    # with 0/1/2 local links are exactly the paper's P(1 global), P0, P1, P2
    g, a, p, h = shape
    q = Dragonfly(ltm.dragonfly(g, a, p, h))
    T = g * a * p
    hosts = q.topology.hosts
    S, D = np.repeat(hosts, T), np.tile(hosts, T)
    keep = S != D
    _, loc, glob = q.link_counts(S[keep], D[keep])
    pairs = T * (T - 1)
    assert Fraction(int(glob.sum()), pairs) == 1 - Fraction(a * p - 1, T - 1)
    assert Fraction(int(np.sum(loc == 0)), pairs) == Fraction(p - 1 + h * p, T - 1)
    assert Fraction(int(np.sum(loc == 1)), pairs) == Fraction((2 * h + 1) * (a - 1) * p, T - 1)
    # TREE's messages join distinct uniform terminals, so the expectations are (n - 1) times the pair means
    n = T // 2
    u = dragonfly_link_use(g, a, p, h, n)
    assert u["local"] == pytest.approx((n - 1) * loc.sum() / pairs, rel=1e-12)
    assert u["global"] == pytest.approx((n - 1) * glob.sum() / pairs, rel=1e-12)
    assert u["local_paper"] < u["local"]


def test_link_use_rejects_shapes_outside_the_analysis():
    with pytest.raises(ArgumentError, match="a\\*h \\+ 1"):
        dragonfly_link_use(5, 4, 2, 2, 10)
    with pytest.raises(ArgumentError, match="do not fit"):
        dragonfly_link_use(9, 4, 2, 2, 73)
    with pytest.raises(ArgumentError, match="positive"):
        dragonfly_link_use(9, 4, 0, 2, 1)


def test_tree_monte_carlo_agrees_with_the_expectation():
    t = ltm.dragonfly(9, 4, 2, 2)
    n, runs = 40, 300
    rng = np.random.default_rng(0)
    tot = np.zeros(3)
    for _ in range(runs):
        v = rng.choice(t.hosts, n, replace=False)
        c = bcast_links(t, dragonfly_bcast(t, v, "tree"), v)
        tot += [c["terminal"], c["local"], c["global"]]
    u = dragonfly_link_use(9, 4, 2, 2, n)
    mean = tot / runs
    assert mean[0] == u["terminal"]
    # standard error of a mean of 300 runs of <= 39 messages is well under 0.5 links
    assert abs(mean[1] - u["local"]) < 1.5 and abs(mean[2] - u["global"]) < 1.0


# ---------------------------------------------------------------------------------------------- schedules

def _check_delivery(steps, n, root):
    have = np.zeros(n, bool)
    have[root] = True
    got = np.zeros(n, int)
    for st in steps:
        st = np.asarray(st)
        assert np.unique(st[:, 0]).size == st.shape[0]  # one send per sender per step
        assert have[st[:, 0]].all()  # senders already hold the data
        np.add.at(got, st[:, 1], 1)
        have[st[:, 1]] = True
    expect = np.ones(n, int)
    expect[root] = 0
    assert np.array_equal(got, expect)


def _cases():
    for shape, n, seed in [((9, 4, 2, 2), 1, 0), ((9, 4, 2, 2), 2, 1), ((9, 4, 2, 2), 13, 2), ((9, 4, 2, 2), 72, 3),
                           ((5, 4, 2, 2), 20, 4), ((3, 2, 2, 1), 12, 5), ((5, 2, 0, 2), 7, 6), ((13, 4, 3, 3), 100, 7)]:
        yield shape, n, seed


@pytest.mark.parametrize("algorithm", BCAST_ALGORITHMS)
@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: f"g{c[0][0]}a{c[0][1]}p{c[0][2]}-n{c[1]}")
def test_every_schedule_delivers_exactly_once(algorithm, case):
    shape, n, seed = case
    t = ltm.dragonfly(*shape)
    q = Dragonfly(t)
    rng = np.random.default_rng(seed)
    v = rng.choice(t.hosts, n, replace=False)
    groups = np.unique(q.group_of(v)).size
    for root in sorted({0, n - 1, int(rng.integers(n))}):
        steps = dragonfly_bcast(t, v, algorithm, root=root)
        _check_delivery(steps, n, root)
        links = bcast_links(t, steps, v)
        assert links["terminal"] == (2 * (n - 1) if shape[2] else 0)
        if algorithm != "tree":
            g, a = shape[0], shape[1]
            assert links["global"] == groups - 1  # one global message per remote group
            assert links["local"] <= 2 * (groups - 1) + groups * (a - 1) <= 2 * (g - 1) + g * (a - 1)


def _global_messages(q, steps, v):
    pairs = np.concatenate(steps)
    gs, gd = q.group_of(v[pairs[:, 0]]), q.group_of(v[pairs[:, 1]])
    return pairs[gs != gd]


@pytest.mark.parametrize("algorithm", ["llf", "glf", "forest"])
def test_choices_where_the_paper_is_silent(algorithm):
    t = ltm.dragonfly(13, 4, 3, 3)
    q = Dragonfly(t)
    for seed in range(6):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(20, 120))
        v = rng.choice(t.hosts, n, replace=False)
        root = int(rng.integers(n))
        steps = dragonfly_bcast(t, v, algorithm, root=root)
        router = q.router_of(v)
        rank_on = {}
        for r in range(n):
            rank_on.setdefault(int(router[r]), []).append(r)
        reps = {R: min(rs) for R, rs in rank_on.items()}
        reps[int(router[root])] = root
        G0 = int(q.group_of(v[root]))
        for s, d in _global_messages(q, steps, v).tolist():
            A, B = int(q.group_of(v[s])), int(q.group_of(v[d]))
            # the receiver sits on the gate router toward the sender's group when the job has a process there
            gates = [int(x) for x in q.gates(B, A) if int(x) in rank_on]
            if gates:
                assert int(router[d]) == gates[0] and d == reps[gates[0]]
            else:
                assert d == min(r for r in range(n) if q.group_of(v[r]) == B)
            if algorithm == "llf":
                assert A == G0
                held = [int(x) for x in q.gates(G0, B) if int(x) in rank_on]
                if held:  # a holder on the gate router serves that group
                    assert int(router[s]) == held[0] and s == reps[held[0]]
        # inside a router, only its representative receives from outside it
        pairs = np.concatenate(steps)
        for s, d in pairs.tolist():
            if router[s] != router[d]:
                assert d == reps[int(router[d])]


def test_llf_root_alone_in_its_group_sends_to_every_group_serially():
    t = ltm.dragonfly(9, 4, 2, 2)
    q = Dragonfly(t)
    v = np.r_[0, 8 + 8 * np.arange(8)]  # the root in group 0, one process in each other group
    steps = dragonfly_bcast(t, v, "llf")
    assert [s.tolist() for s in steps] == [[[0, k]] for k in range(1, 9)]  # groups in ascending id
    links = q.link_counts(v[0], v[1:])
    assert bcast_makespan(t, steps, v) == int(sum(links[0] + links[1] + links[2]))
    forest = dragonfly_bcast(t, v, "forest")
    assert len(forest) == 4 and bcast_makespan(t, forest, v) < bcast_makespan(t, steps, v)


def test_makespan_by_hand():
    # dragonfly(3, 2, 2, 1): router g0r0 links to g1r1; rank 0 on n0 (g0r0), rank 1 on n6 (g1r1), rank 2 on
    # n4 (g1r0).  GLF: 0 -> 1 through the gates (3 links, arrives at 3), 1 -> 2 in group 1 (3 links): 6.
    # TREE: 0 -> 2 first (n0-g0r0-g1r1-g1r0-n4, 4 links), then 0 -> 1 (3 links, from 4 to 7): 7.
    t = ltm.dragonfly(3, 2, 2, 1)
    v = [0, 6, 4]
    glf = dragonfly_bcast(t, v, "glf")
    assert [s.tolist() for s in glf] == [[[0, 1]], [[1, 2]]]
    assert bcast_makespan(t, glf, v) == 6
    tree = dragonfly_bcast(t, v, "tree")
    assert [s.tolist() for s in tree] == [[[0, 2]], [[0, 1]]]
    assert bcast_makespan(t, tree, v) == 7
    assert bcast_makespan(t, [], [5]) == 0
    # on a non-dragonfly the durations are hop distances
    assert bcast_makespan(ltm.torus("8"), [[(0, 1)], [(1, 2)]], [0, 4, 5]) == 5


def test_makespan_rejects_schedules_that_are_not_broadcasts():
    t = ltm.dragonfly(3, 2, 2, 1)
    with pytest.raises(CommGraphError, match="before it received"):
        bcast_makespan(t, [[(1, 2)], [(0, 1)]], [0, 1, 2])
    with pytest.raises(CommGraphError, match="twice in one step"):
        bcast_makespan(t, [[(0, 1), (0, 2)]], [0, 1, 2])
    with pytest.raises(CommGraphError, match="one root"):
        bcast_makespan(t, [[(0, 1)]], [0, 1, 2])


def test_bad_arguments():
    t = ltm.dragonfly(3, 2, 2, 1)
    with pytest.raises(ArgumentError, match="unknown broadcast algorithm"):
        dragonfly_bcast(t, [0, 1], "binary")
    with pytest.raises(MappingError, match="not a slot vertex"):
        dragonfly_bcast(t, [0, 12], "glf")  # vertex 12 is a router
    with pytest.raises(CommGraphError, match="outside"):
        dragonfly_bcast(t, [0, 1], "glf", root=2)


def test_topology_aware_broadcasts_beat_tree_on_a_large_allocation():
    # g=129, a=16, p=8, h=8 at n = 10,240 (Dorier et al., Fig. 2-3): bounded links, shorter makespans than TREE
    t = ltm.dragonfly(129, 16, 8, 8)
    v = np.random.default_rng(0).choice(t.hosts, 10240, replace=False)
    res = {alg: evaluate_bcast(t, v, alg) for alg in BCAST_ALGORITHMS}
    for alg in ("llf", "glf", "forest"):
        assert res[alg]["links"]["global"] == 128 and res[alg]["links"]["local"] <= 2191
        assert res[alg]["makespan"] < res["tree"]["makespan"]
    assert res["forest"]["makespan"] < res["llf"]["makespan"]
    assert res["tree"]["links"]["global"] > 10000


# ---------------------------------------------------------------------------------------------- CLI

def test_cli_algorithm_json(tmp_path, capsys):
    path = tmp_path / "df.json"
    ltm.save(path, ltm.dragonfly(9, 4, 2, 2))
    nodes = ltm.collectives.allocate(ltm.load(path), 30, "random", seed=4)
    for alg in BCAST_ALGORITHMS:
        assert main(["collective", "--topology", str(path), "--collective", "bcast", "--algorithm", alg,
                     "--procs", "30", "--allocation", "random", "--seed", "4", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        want = evaluate_bcast(ltm.load(path), nodes, alg)
        assert out["links"] == want["links"] and set(out["links"]) == {"terminal", "local", "global"}
        assert out["groups"] == want["groups"] == np.unique(nodes // 8).size
        assert out["makespan"] == want["makespan"] and out["algorithm"] == alg
    assert main(["collective", "--topology", str(path), "--collective", "bcast", "--algorithm", "forest",
                 "--procs", "30"]) == 0
    assert "makespan" in capsys.readouterr().out


def test_cli_algorithm_errors(tmp_path, capsys):
    path = tmp_path / "df.json"
    ltm.save(path, ltm.dragonfly(9, 4, 2, 2))
    assert main(["collective", "--topology", str(path), "--algorithm", "glf", "--procs", "8"]) == 2
    assert "--collective bcast" in capsys.readouterr().err
    torus = tmp_path / "t.json"
    ltm.save(torus, ltm.torus("4x4"))
    assert main(["collective", "--topology", str(torus), "--collective", "bcast", "--algorithm", "glf",
                 "--procs", "8"]) == 1
    assert "not a dragonfly" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- SimGrid
def _needs_simgrid():
    from libtopomap.simulate import simgrid_available

    if not simgrid_available():
        pytest.skip("SimGrid's Python bindings are not installed (apt-get install python3-simgrid; see "
                    "libtopomap.simulate.INSTALL_HINT)")


def _longer_than_shortest(t):
    """A host pair whose minimal route is longer than its shortest path."""
    q = Dragonfly(t)
    h = t.hosts
    S, D = np.repeat(h, h.size), np.tile(h, h.size)
    i = int(np.flatnonzero(q.hops(S, D) > t.distances.pairs(S, D))[0])
    return q, int(S[i]), int(D[i])


def test_minimal_platform_job_keeps_only_the_routes():
    # no SimGrid needed: the job of routing="minimal" holds the placement's terminals, the links of the
    # minimal route and their ends, with link numbers that map back to the topology's links
    from libtopomap.simulate import build_platform, message_steps

    t = ltm.dragonfly(9, 4, 2, 2)
    q, s, d = _longer_than_shortest(t)
    job = build_platform(t, routing="minimal").job([s, d], message_steps([np.array([[0, 1]])], 2, 1024))
    path = q.route(s, d)
    assert job["routing"] == "Full" and job["n_vertices"] == len(path) and len(job["links"]) == len(path) - 1
    (rs, rd, links), = job["routes"]
    kept = np.asarray(job["link_ids"])
    walked = [int(kept[abs(k) - 1]) for k in links]
    want = [int(np.flatnonzero(((t.link_u == u) & (t.link_v == v)) | ((t.link_u == v) & (t.link_v == u)))[0])
            for u, v in zip(path[:-1], path[1:])]
    assert walked == want
    assert [job["placement"][0], job["placement"][1]] == [rs, rd]
    # explicit (BFS) routes take the shorter path: fewer links
    job2 = build_platform(t, routing="explicit").job([s, d], message_steps([np.array([[0, 1]])], 2, 1024))
    assert len(job2["routes"][0][2]) == t.distances.pairs([s], [d])[0] < len(links)
    with pytest.raises(TopologyError):
        build_platform(ltm.torus("4x4"), routing="minimal")


def test_simgrid_minimal_routes_are_the_dragonfly_routes():
    _needs_simgrid()
    from libtopomap.simulate import simulate

    t = ltm.dragonfly(9, 4, 2, 2)
    q, s, d = _longer_than_shortest(t)
    size, bw, lat = 1 << 20, 1e9, 1e-7
    r = simulate(t, [np.array([[0, 1]])], [s, d], sizes=[size], bandwidth=bw, latency=lat, routing="minimal",
                 load_routing="minimal")
    hops = len(q.route(s, d)) - 1
    assert r.times[0] == pytest.approx(hops * lat + size / bw, rel=1e-9)
    np.testing.assert_allclose(r.link_load, r.ecmp_load)   # one path, so SimGrid's loads are minimal routing's
    e = simulate(t, [np.array([[0, 1]])], [s, d], sizes=[size], bandwidth=bw, latency=lat, routing="explicit")
    assert e.times[0] == pytest.approx(t.distances.pairs([s], [d])[0] * lat + size / bw, rel=1e-9)


def _bench_dorier():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_dorier.py"
    spec = importlib.util.spec_from_file_location("bench_dorier", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_bench_simgrid_path_on_a_tiny_dragonfly():
    _needs_simgrid()
    bench = _bench_dorier()
    res = bench.run_simgrid(ltm.dragonfly(9, 4, 2, 2), [12], 2, progress=False)
    assert res["routing"] == "minimal" and res["message_sizes"] == [1024, 1 << 20]
    (row,) = res["rows"]
    assert row["n"] == 12 and set(row["algorithms"]) == set(BCAST_ALGORITHMS)
    for alg, d in row["algorithms"].items():
        times = np.asarray(d["times"])
        assert times.shape == (2, 2) and np.all(times > 0), alg
        assert np.all(times[:, 1] > times[:, 0]), alg   # 1 MiB takes longer than 1 KiB
    assert row["algorithms"]["tree"]["ratio_to_tree"] == [1.0, 1.0]
    assert "| 12 | 2 |" in bench.simgrid_table(res)
    res.update(seconds=1.0, jobs=1, host="here")
    text = bench.simgrid_markdown(res)
    assert "minimal" in text and text.count("slower than TREE at:") == 3


@pytest.mark.slow
def test_bench_simgrid_budget_stops_starting_allocations():
    """``budget``: no new allocation starts once a size has used it (at least one runs), ``runs`` is what
    was done, and the results are handed out after every allocation."""
    _needs_simgrid()
    bench = _bench_dorier()
    seen = []
    res = bench.run_simgrid(ltm.dragonfly(9, 4, 2, 2), [8, 12], 3, progress=False, budget=0.0,
                            algorithms=("tree", "forest"), message_sizes=(1024,),
                            on_row=lambda rows: seen.append([r["n"] for r in rows]))
    assert [r["runs"] for r in res["rows"]] == [1, 1] and seen == [[8], [8, 12]]
    for row in res["rows"]:
        assert all(len(d["times"]) == 1 for d in row["algorithms"].values())
        assert len(row["load"]) == 2
    full = bench.run_simgrid(ltm.dragonfly(9, 4, 2, 2), [8], 2, progress=False, algorithms=("tree",),
                             message_sizes=(1024,))
    assert full["rows"][0]["runs"] == 2
    res.update(seconds=1.0, jobs=1, host="here")
    assert "| 8 | 1 |" in bench.simgrid_markdown(res)


@pytest.mark.slow
def test_bench_simgrid_resume_continues_at_the_next_seed():
    """``previous=`` (``--simgrid-resume``): a size found there continues at its next seed and ends with
    the times of an uninterrupted run; other sizes are kept; a size already complete is not rerun."""
    _needs_simgrid()
    bench = _bench_dorier()
    t = ltm.dragonfly(9, 4, 2, 2)
    kw = dict(progress=False, algorithms=("tree", "forest"), message_sizes=(1024,))
    full = bench.run_simgrid(t, [8], 3, **kw)
    part = bench.run_simgrid(t, [8, 12], 1, **kw)
    seen = []
    res = bench.run_simgrid(t, [8], 3, previous=part["rows"], on_row=lambda rows: seen.append(rows[0]["runs"]),
                            **kw)
    assert [r["n"] for r in res["rows"]] == [8, 12] and res["rows"][1] == part["rows"][1]
    row, ref = res["rows"][0], full["rows"][0]
    assert row["runs"] == 3 and seen == [2, 3]
    assert [p["seeds"] for p in row["parts"]] == [[0, 1], [1, 3]]
    for alg in ("tree", "forest"):
        assert row["algorithms"][alg]["times"] == ref["algorithms"][alg]["times"]
        assert row["algorithms"][alg]["mean"] == pytest.approx(ref["algorithms"][alg]["mean"])
    again = bench.run_simgrid(t, [8], 3, previous=res["rows"], on_row=seen.append, **kw)
    assert again["rows"] == res["rows"] and seen == [2, 3]
    again.update(seconds=1.0, jobs=1, host="here")
    assert "| 8 | 3 |" in bench.simgrid_markdown(again)


@pytest.mark.slow
def test_bench_mpi_times_ltm_bcast_against_comm_bcast(tmp_path):
    """``bench_dorier.py --mpi`` under ``mpiexec -n 2``: every variant and size has a row, and each call's
    buffer was checked (a wrong one exits non-zero)."""
    import json
    import os
    import pathlib
    import subprocess
    import sys

    mpiexec = pathlib.Path(sys.executable).parent / "mpiexec"
    if not mpiexec.exists():
        pytest.skip("no mpiexec next to this Python")
    bench = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_dorier.py"
    out = tmp_path / "mpi.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "PMIX_"))}
    proc = subprocess.run([str(mpiexec), "-n", "2", sys.executable, str(bench), "--mpi", "--mpi-iterations", "2",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(out.read_text())
    assert res["ranks"] == 2 and res["iterations"] == 2
    got = {(r["bytes"], r["variant"]) for r in res["rows"]}
    assert got == {(b, v) for b in (1024, 1 << 20) for v in ("MPI_Bcast",) + BCAST_ALGORITHMS}
    assert all(r["seconds"] > 0 for r in res["rows"])
    assert "ltm.bcast" in (tmp_path / "mpi.md").read_text()
