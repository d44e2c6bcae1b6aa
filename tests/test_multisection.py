"""Hierarchical multisection: the hierarchy read off the topology, exact cases, slots, determinism."""

import itertools
import json

import numpy as np
import pytest
import scipy.sparse as sp

import libtopomap as ltm
from libtopomap import CommGraph, Topology
from libtopomap.mappers import map_processes
from libtopomap.mappers.multisection import map_multisection, refine_parts, topology_hierarchy
from libtopomap.patterns import random_graph, scrambled_torus, stencil


def two_leaf_tree(hosts_per_leaf=4, slots=1):
    """Root switch r, leaf switches l0 and l1, ``hosts_per_leaf`` hosts under each."""
    names = [f"h{i}" for i in range(2 * hosts_per_leaf)] + ["l0", "l1", "r"]
    H = 2 * hosts_per_leaf
    links = [(i, H + i // hosts_per_leaf) for i in range(H)] + [(H, H + 2), (H + 1, H + 2)]
    return Topology(names, links, slots=[slots] * H + [0, 0, 0])


def two_cliques():
    """Two disconnected 4-cliques with interleaved labels: {0, 2, 5, 7} and {1, 3, 4, 6}."""
    edges = []
    for clique in ([0, 2, 5, 7], [1, 3, 4, 6]):
        edges += [(u, v) for u in clique for v in clique if u != v]
    return CommGraph.from_edges(edges, n=8)


def brute_force_hopbytes(topology, graph):
    """Smallest hop-bytes over every placement of the processes on distinct hosts."""
    hosts = topology.hosts.astype(np.int64)
    d = np.array([[topology.distance(a, b) for b in hosts] for a in hosts])
    best = np.inf
    for perm in itertools.permutations(range(hosts.size), graph.n):
        p = np.asarray(perm)
        best = min(best, float(np.dot(graph.weights, d[p[graph.src], p[graph.indices]])))
    return best


def test_two_level_tree_two_cliques_exact():
    t, g = two_leaf_tree(), two_cliques()
    m = map_multisection(t, g, seed=0)
    leaf = np.asarray(m.vertices) // 4
    assert np.unique(leaf[[0, 2, 5, 7]]).size == 1 and np.unique(leaf[[1, 3, 4, 6]]).size == 1
    assert leaf[0] != leaf[1]
    hb = ltm.evaluate(t, g, m)["hop_bytes"]
    assert hb == 2 * 2 * 12  # every directed clique edge: host - leaf - host
    assert hb == brute_force_hopbytes(t, g)


def test_two_level_tree_weighted_pairs_exact():
    # 8 processes in a ring with heavy pairs (0,5), (1,6), (2,7), (3,4): the optimum keeps each heavy
    # pair under one leaf and cuts as little of the light ring as possible
    edges = [(i, (i + 1) % 8, 1.0) for i in range(8)] + [(0, 5, 10.0), (1, 6, 10.0), (2, 7, 10.0), (3, 4, 10.0)]
    g = CommGraph.from_edges(edges + [(v, u, w) for u, v, w in edges], n=8)
    t = two_leaf_tree()
    m = map_multisection(t, g, seed=3)
    assert ltm.evaluate(t, g, m)["hop_bytes"] == brute_force_hopbytes(t, g)


def test_hierarchy_of_fat_trees():
    h = topology_hierarchy(ltm.fattree(4, 3))
    assert h.arities() == [4, 4, 4]
    assert bool(h.flat.all())
    h = topology_hierarchy(ltm.fattree(2, 3))
    assert h.arities() == [2, 2, 2] and h.n_nodes == 8 + 4 + 2 + 1
    # every leaf-switch subtree holds the hosts of one leaf switch
    t = ltm.fattree(4, 2)
    h = topology_hierarchy(t)
    for x in range(h.n_nodes):
        kids = h.children(x)
        if kids.size and np.all(h.vertex[kids] >= 0):
            assert np.unique(np.asarray(h.vertex[kids]) // 4).size == 1


def test_hierarchy_of_dragonfly_has_groups():
    t = ltm.dragonfly(9, 4, 2, 2)
    h = topology_hierarchy(t)
    per_group = 4 * 2
    # the lowest common subtree of two terminals of one group contains only that group
    found = 0
    for x in range(h.n_nodes):
        kids = h.children(x)
        if kids.size == 4 and np.all(h.vertex[kids] < 0):
            hosts = np.concatenate([h.vertex[h.children(k)] for k in kids])
            assert hosts.size == per_group and np.unique(hosts // per_group).size == 1
            found += 1
    assert found == 9


def test_torus_falls_back_to_bisection():
    t = ltm.torus("4x4")
    h = topology_hierarchy(t)
    assert max(np.diff(h.child_ptr)) == 2  # binary: the hosts of a torus are not equidistant
    g = stencil("4x4")
    m = map_multisection(t, g, seed=0)
    assert sorted(np.asarray(m.vertices).tolist()) == list(range(16))
    assert ltm.evaluate(t, g, m)["avg_dilation"] <= 2.0


def test_several_slots_per_host_and_partial_allocation():
    t = ltm.fattree(4, 2)  # 16 hosts, leaf switches of 4
    slots = np.zeros(t.n_vertices, np.int64)
    slots[:16] = 3
    slots[[1, 6, 7, 12]] = 0  # hosts not in this allocation
    slots[[2, 9]] = 1
    g = random_graph(27, 4, seed=2)
    m = map_multisection(t, g, slots=slots, seed=1)
    v = np.asarray(m.vertices)
    assert v.size == 27
    assert np.all(np.bincount(v, minlength=t.n_vertices) <= slots)
    assert np.all(slots[v] > 0)


def test_small_job_fills_few_subtrees():
    t = ltm.fattree(4, 3)  # 64 hosts; subtrees of 16 under each second-level switch group
    g = scrambled_torus("4x4", seed=5)
    m = map_multisection(t, g, seed=0)
    v = np.asarray(m.vertices)
    assert np.unique(v // 16).size == 1  # all 16 processes in one 16-host subtree
    assert np.unique(v).size == 16


def test_multiple_slots_keep_clique_on_one_host():
    t = two_leaf_tree(hosts_per_leaf=2, slots=4)
    g = two_cliques()
    m = map_multisection(t, g, seed=0)
    v = np.asarray(m.vertices)
    assert np.unique(v[[0, 2, 5, 7]]).size == 1 and np.unique(v[[1, 3, 4, 6]]).size == 1
    assert ltm.evaluate(t, g, m)["hop_bytes"] == 0.0


def test_deterministic_with_seed():
    t = ltm.fattree(4, 3)
    g = scrambled_torus("8x8", seed=1)
    a = map_processes(t, g, strategy="multisection", seed=7)
    b = map_processes(t, g, strategy="multisection", seed=7)
    assert a == b and a.strategy == "multisection"


def test_beats_recursive_on_fat_tree_stencil():
    t = ltm.fattree(4, 3)
    g = scrambled_torus("8x8", seed=3)
    ms = ltm.evaluate(t, g, map_multisection(t, g, seed=0))["hop_bytes"]
    # lower bound: 64 processes on 64 hosts, every directed edge at least 2 hops; 8x8 torus cut into
    # 4 parts of 16 (4x4 blocks) cuts at least 32 edges, into 16 parts of 4 (2x2) at least 64
    assert ms >= 2 * 256 + 4 * (32 + 64)
    assert ms <= ltm.evaluate(t, g, map_processes(t, g, strategy="recursive", seed=0))["hop_bytes"]


def test_refine_parts_keeps_sizes_and_never_cuts_more():
    rng = np.random.default_rng(0)
    g = random_graph(60, 5, seed=4).symmetric()
    for trial in range(5):
        parts = rng.permutation(np.repeat(np.arange(4), 15))
        r = refine_parts(g, parts)
        assert np.array_equal(np.bincount(r, minlength=4), np.bincount(parts, minlength=4))
        rows = np.repeat(np.arange(60), np.diff(g.indptr))
        cut = lambda p: g.data[p[rows] != p[g.indices]].sum()  # noqa: E731
        assert cut(r) <= cut(parts)


def test_cli_map_strategy_multisection(tmp_path, capsys):
    from libtopomap.cli import main

    path = tmp_path / "ft.json"
    ltm.save(str(path), ltm.fattree(4, 2))
    assert main(["map", "--topology", str(path), "--graph", "torus-scrambled:4x4:1", "--strategy", "multisection",
                 "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert any(r.get("strategy") == "multisection" for r in recs)


def star_of_leaves(leaves, hosts_per_leaf):
    """One root switch over ``leaves`` leaf switches with ``hosts_per_leaf`` hosts each."""
    H = leaves * hosts_per_leaf
    names = [f"h{i}" for i in range(H)] + [f"l{j}" for j in range(leaves)] + ["r"]
    links = [(i, H + i // hosts_per_leaf) for i in range(H)] + [(H + j, H + leaves) for j in range(leaves)]
    return Topology(names, links, slots=[1] * H + [0] * (leaves + 1))


def test_sixteen_leaves_heavy_pairs_exact_and_deterministic():
    # a root split into 16 parts (recursive bisection, more parts than pymetis's k-way threshold):
    # 32 processes, heavy pairs (i, i + 16) of weight 10 on a light ring.  Hosts under one leaf are
    # 2 hops apart, others 4, so hop-bytes = 2 W + 2 (weight cut between leaves); the pairing that
    # keeps most weight inside the leaves is the heavy one, which cuts exactly the ring.
    ring = [(i, (i + 1) % 32, 1.0) for i in range(32)]
    heavy = [(i, i + 16, 10.0) for i in range(16)]
    edges = ring + heavy
    g = CommGraph.from_edges(edges + [(v, u, w) for u, v, w in edges], n=32)
    t = star_of_leaves(16, 2)
    assert topology_hierarchy(t).arities() == [2, 16]
    m = map_multisection(t, g, seed=5)
    leaf = np.asarray(m.vertices) // 2
    assert np.array_equal(leaf[:16], leaf[16:])
    W = 2 * (32 * 1.0 + 16 * 10.0)
    assert ltm.evaluate(t, g, m)["hop_bytes"] == 2 * W + 2 * (2 * 32 * 1.0)
    assert map_multisection(t, g, seed=5) == m


def test_splits_above_effort_max_get_one_metis_run(monkeypatch):
    import libtopomap.mappers.multisection as ms
    import libtopomap.mappers.partition as part

    calls = []
    real = part.metis_csr

    def counting(*a, **kw):
        calls.append(a[0].size - 1)
        return real(*a, **kw)

    monkeypatch.setattr(part, "metis_csr", counting)
    monkeypatch.setattr(ms, "HOPBYTES_STARTS", 1)  # one descent: its METIS runs are counted
    t, g = ltm.fattree(4, 3), scrambled_torus("8x8", seed=2)
    base = map_multisection(t, g, seed=1, tries=3, swap_depth=0)
    full = len(calls)
    calls.clear()
    monkeypatch.setattr(ms, "EFFORT_MAX", 16)
    monkeypatch.setattr(part, "EFFORT_MAX", 16)
    capped = map_multisection(t, g, seed=1, tries=3, swap_depth=0)
    # the root (64 processes) and its 4 children (16 each, not above the cap: 3 tries) are split;
    # the root gets one run instead of 3 and no pairwise re-bisection (too small for it anyway)
    assert full == 3 * 5 and len(calls) == 1 + 3 * 4
    assert sorted(np.asarray(capped.vertices)) == sorted(np.asarray(base.vertices))


# ----------------------------------------------------------------------- pairs on hosts of two slots
def _pairings(items):
    """Every split of ``items`` (even length) into unordered pairs."""
    if not items:
        yield []
        return
    a = items[0]
    for i in range(1, len(items)):
        rest = items[1:i] + items[i + 1:]
        for p in _pairings(rest):
            yield [(a, items[i])] + p


def _csr(n, edges):
    rows = [u for u, v, w in edges] + [v for u, v, w in edges]
    cols = [v for u, v, w in edges] + [u for u, v, w in edges]
    vals = [w for u, v, w in edges] * 2
    a = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    a.sum_duplicates()
    a.sort_indices()
    return a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data.astype(np.float64)


@pytest.mark.parametrize("seed", range(6))
def test_pair_parts_is_the_smallest_cut_over_all_pairings(seed):
    from libtopomap.mappers.partition import _cut, _pair_parts

    rng = np.random.default_rng(seed)
    n = 8 if seed % 2 else 6
    edges = [(u, v, float(rng.integers(1, 9))) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.45]
    ptr, idx, val = _csr(n, edges)
    parts = _pair_parts(ptr, idx, val)
    assert np.array_equal(np.bincount(parts), np.full(n // 2, 2))
    best = np.inf
    for pairing in _pairings(list(range(n))):
        lab = np.empty(n, np.int64)
        for k, (a, b) in enumerate(pairing):
            lab[[a, b]] = k
        best = min(best, _cut(ptr, idx, val, lab))
    assert _cut(ptr, idx, val, parts) == best


def test_split_onto_hosts_of_two_slots_repairs_a_lonely_pair(monkeypatch):
    import libtopomap.mappers.partition as part

    # a 6-cycle split into pairs; the METIS split is replaced by one that leaves a pair with no
    # edge inside: the exact pairing takes over (cut 2 edges, both ways) on hosts only
    n = 6
    ptr, idx, val = _csr(n, [(i, (i + 1) % n, 1.0) for i in range(n)])
    bad = np.array([0, 1, 2, 0, 1, 2])  # pairs {0,3}, {1,4}, {2,5}: nothing inside
    monkeypatch.setattr(part, "metis_csr", lambda *a, **k: bad.copy())
    monkeypatch.setattr(part, "_swap_refine", lambda *a, **k: 0.0)
    monkeypatch.setattr(part, "PAIR_MIN_SIZE", 10**9)
    targets = np.full(3, 2, np.int64)
    assert part._cut(ptr, idx, val, part.split(ptr, idx, val, targets, 0, 1, hosts=False)) == 12
    assert part._cut(ptr, idx, val, part.split(ptr, idx, val, targets, 0, 1, hosts=True)) == 6


def test_two_slots_per_host_exact_by_brute_force():
    # 4 hosts of two slots under two leaf switches; a weighted graph whose heavy edges are not the
    # ones a ring order would pair
    t = two_leaf_tree(hosts_per_leaf=2, slots=2)
    rng = np.random.default_rng(5)
    edges = [(u, v, float(rng.integers(1, 6))) for u in range(8) for v in range(u + 1, 8) if rng.random() < 0.5]
    g = CommGraph.from_edges(edges + [(v, u, w) for u, v, w in edges], n=8)
    m = map_multisection(t, g, seed=0)
    got = ltm.evaluate(t, g, m)["hop_bytes"]
    hosts = t.hosts.astype(np.int64)
    slot_host = np.repeat(hosts, 2)
    d = np.array([[t.distance(a, b) for b in hosts] for a in hosts])
    hi = {int(h): i for i, h in enumerate(hosts)}
    best = np.inf
    for perm in itertools.permutations(range(8)):
        v = slot_host[list(perm)]
        hv = np.array([hi[int(x)] for x in v])
        best = min(best, float(np.dot(g.weights, d[hv[g.src], hv[g.indices]])))
    assert got == best
    assert np.array_equal(map_multisection(t, g, seed=0).vertices, m.vertices)


def test_two_slots_per_host_every_host_gets_a_communicating_pair():
    # 16 processes of a 4x4 stencil on a 2-ary 2-tree of hosts with two slots: 8 hosts under 4
    # leaves; every 4-process part of a 4x4 grid split by METIS has a perfect matching here
    names = [f"h{i}" for i in range(8)] + [f"l{i}" for i in range(4)] + ["r0", "r1"]
    links = [(i, 8 + i // 2) for i in range(8)] + [(8 + j, 12 + k) for j in range(4) for k in range(2)]
    t = Topology(names, links, slots=[2] * 8 + [0] * 6)
    g = stencil("4x4")
    m = map_multisection(t, g, seed=1)
    v = np.asarray(m.vertices)
    s = g.symmetric()
    for h in np.unique(v):
        a, b = np.flatnonzero(v == h)
        assert s[a, b] > 0


def test_grid_hierarchy_is_coordinate_bisection():
    t = ltm.torus("4x8")
    h = topology_hierarchy(t)
    assert h.grid and h.n_nodes == 2 * 32 - 1
    coords = np.stack(np.unravel_index(np.arange(32), (4, 8)), axis=1)
    for x in range(h.n_nodes):
        kids = h.children(x)
        if kids.size == 0:
            continue
        assert kids.size == 2
        leaves = h.vertex[np.asarray(_leaves(h, x))]
        box = coords[leaves]
        ext = box.max(axis=0) - box.min(axis=0) + 1
        assert np.prod(ext) == leaves.size  # a box of the grid
        assert h.rep[x] in leaves  # its representative lies inside
    # the root cuts across the longest side: two 4x4 halves
    halves = [coords[h.vertex[np.asarray(_leaves(h, k))]] for k in h.children(h.root)]
    assert sorted(int(np.ptp(b[:, 1])) for b in halves) == [3, 3]
    # non-grid networks keep the switch hierarchy
    assert not topology_hierarchy(ltm.fattree(4, 2)).grid


def _leaves(h, x):
    out, stack = [], [x]
    while stack:
        y = stack.pop()
        if h.vertex[y] >= 0:
            out.append(y)
        else:
            stack.extend(h.children(y).tolist())
    return out


def test_torus_with_a_mismatched_stencil():
    # the instance: 1,896 hop-bytes with a METIS bisection of the torus graph as hierarchy
    t, g = ltm.torus("16x16"), scrambled_torus("4x64", 0)
    hb = ltm.evaluate(t, g, map_multisection(t, g, seed=1))["hop_bytes"]
    assert hb <= 1800


def test_dragonfly_parts_go_to_the_routers_with_their_global_links():
    # the routers of a group are even among themselves but not to other groups: ordering the parts
    # of a group by their traffic to the outside took seed 0 from 9,950 to 9,706 hop-bytes
    t, g = ltm.dragonfly(17, 8, 4, 2), scrambled_torus("8x8x8", 0)
    assert ltm.evaluate(t, g, map_multisection(t, g, seed=0))["hop_bytes"] <= 9800


@pytest.mark.parametrize("dims,graph", [("2x4", lambda: scrambled_torus("2x4", 0)),
                                        ("2x4", lambda: scrambled_torus("8", 1)),
                                        ("2x2x2", lambda: scrambled_torus("2x4", 2)),
                                        ("2x4", lambda: random_graph(8, 3, 0))])
def test_grid_multisection_is_optimal_on_eight_hosts(dims, graph):
    """Brute force over all 8! placements on tori of 8 hosts."""
    t, g = ltm.torus(dims), graph()
    d = np.array([[t.distance(a, b) for b in range(8)] for a in range(8)])
    best = min(float((g.weights * d[np.array(p)[g.src], np.array(p)[g.dst]]).sum())
               for p in itertools.permutations(range(8)))
    assert ltm.evaluate(t, g, map_multisection(t, g, seed=0))["hop_bytes"] == best


def test_grid_multisection_is_deterministic():
    t, g = ltm.torus("8x8"), scrambled_torus("4x16", 3)
    a = np.asarray(map_multisection(t, g, seed=7).vertices)
    assert np.array_equal(a, np.asarray(map_multisection(t, g, seed=7).vertices))


def _without_attrs(t, slots=None):
    return Topology(t.names, np.stack([t.link_u, t.link_v], 1), capacities=t.capacity,
                    slots=t.slots if slots is None else slots, kinds=t.kinds, name="links-only", attrs={})


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dragonfly_groups_never_worse_than_the_links_alone(seed):
    # issue 16's finding: with the generator's group attributes multisection gave max congestion
    # 64 on this allreduce (seed 1), 48 from the links alone; both hierarchies now run and the
    # better (max congestion, hop-bytes) is kept
    from libtopomap.collectives.schedules import recursive_doubling_allreduce, schedule_graph

    net = ltm.dragonfly(5, 4, 2, 1)
    slots = np.where(net.slots > 0, 8, 0)
    t = Topology(net.names, np.stack([net.link_u, net.link_v], 1), capacities=net.capacity, slots=slots,
                 kinds=net.kinds, name="df", attrs=net.attrs)
    perm = np.random.default_rng(1).permutation(320)
    a = schedule_graph(recursive_doubling_allreduce(320), 320)
    g = CommGraph(320, perm[a.src], perm[a.dst], a.weights)
    with_groups = ltm.evaluate(t, g, map_multisection(t, g, seed=seed))
    links = _without_attrs(t)
    alone = ltm.evaluate(links, g, map_multisection(links, g, seed=seed))
    key = lambda m: (round(m["max_congestion"], 9), m["hop_bytes"])  # noqa: E731
    assert key(with_groups) <= key(alone)
    if seed == 1:
        assert with_groups["max_congestion"] <= 48


def test_hierarchy_without_generator_groups_reads_the_links():
    t = ltm.dragonfly(9, 4, 2, 2)
    assert topology_hierarchy(t, generator_groups=False).n_nodes == topology_hierarchy(_without_attrs(t)).n_nodes


def test_iterated_local_search_leaves_the_descent_optimum(monkeypatch):
    # the 16x16 torus / 4x64 stencil: 1,756 hop-bytes at the descent's local optimum (seed 1),
    # 1,672 after the threshold rounds (Mt-KaHyPar: 1,676); without them (KICK_ROUNDS = 0) 1,756
    import libtopomap.mappers.multisection as ms

    t, g = ltm.torus("16x16"), scrambled_torus("4x64", 0)
    hb = ltm.evaluate(t, g, map_multisection(t, g, seed=1))["hop_bytes"]
    assert hb <= 1676
    monkeypatch.setattr(ms, "KICK_ROUNDS", 0)
    assert ltm.evaluate(t, g, map_multisection(t, g, seed=1))["hop_bytes"] > hb


def _lonely_hosts(g, v):
    s = g.symmetric()
    out = 0
    for x in np.unique(v):
        ps = np.flatnonzero(v == x)
        if ps.size == 2 and s[ps[0], ps[1]] <= 0:
            out += 1
    return out


@pytest.mark.parametrize("seed", range(5))
def test_repair_lonely_pairs_on_an_even_ring(seed):
    # an even cycle has a perfect matching, and it is bipartite: alternating paths find one from
    # any pairing, and every vertex keeps two processes
    from libtopomap.mappers.multisection import _repair_lonely_pairs
    from libtopomap.commgraph import SymGraph

    n = 16
    g = stencil(str(n))
    v = np.random.default_rng(seed).permutation(np.repeat(np.arange(n // 2), 2))
    fixed, repairs = _repair_lonely_pairs(SymGraph(g), v)
    assert _lonely_hosts(g, fixed) == 0
    assert repairs >= 1 or _lonely_hosts(g, v) == 0
    assert np.array_equal(np.bincount(fixed, minlength=n // 2), np.full(n // 2, 2))


def test_two_slots_per_host_no_lonely_host_on_the_fat_tree_stencil():
    # the bench's 2-slot 8-ary 3-tree with a 32x32 stencil: 4 lonely hosts and max congestion 8
    # before the repair, none and 6 (every host link at 3 + 3 messages) after
    t = ltm.fattree(8, 3)
    t = Topology(t.names, np.stack([t.link_u, t.link_v], 1), capacities=t.capacity,
                 slots=np.where(t.slots > 0, 2, 0), kinds=t.kinds, name="x2", attrs=t.attrs)
    g = scrambled_torus("32x32", 0)
    v = np.asarray(map_multisection(t, g, seed=1, objective="congestion").vertices)
    assert _lonely_hosts(g, v) == 0
    assert ltm.evaluate(t, g, v)["max_congestion"] == 6
    assert np.array_equal(map_processes(t, g, strategy="multisection", seed=1).vertices, v)  # its default objective
    assert _lonely_hosts(g, np.asarray(map_multisection(t, g, seed=1).vertices)) > 0  # hop-bytes alone: no repair
