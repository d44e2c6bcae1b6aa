"""Seed 001 (Mehta 2005): the Moore bound (equation 4.1) and the LDR generator (section 4.3, Table 4.1)."""

import importlib
import json

import networkx as nx
import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import TopologyError, hypercube, ldr, properties
from libtopomap.cli import main
from libtopomap.generators.ldr import ldr_graph_edges, moore_bound

ldr_mod = importlib.import_module("libtopomap.generators.ldr")


@pytest.mark.parametrize("nodes, degree, diameter", [(10, 3, 2), (50, 7, 2), (3250, 57, 2)])
def test_moore_bound_matches_the_three_moore_graphs_of_section_41(nodes, degree, diameter):
    # (nodes, degree, diameter): Petersen, Hoffman-Singleton, and the open (3250, 57, 2) case
    assert moore_bound(degree, diameter) == nodes


def test_moore_bound_counts_a_tree_of_fanout_d_minus_1():
    for d in range(3, 9):
        for k in range(0, 6):
            assert moore_bound(d, k) == 1 + sum(d * (d - 1) ** i for i in range(k))
    assert [moore_bound(2, k) for k in range(4)] == [1, 3, 5, 7]  # polygons
    assert moore_bound(1, 1) == 2 and moore_bound(0, 3) == 1
    with pytest.raises(TopologyError, match="degree >= 0"):
        moore_bound(-1, 2)


def _info(tmp_path, capsys, topo, *extra):
    p = tmp_path / "t.ltm"
    ltm.save(p, topo)
    capsys.readouterr()
    assert main(["info", str(p), *extra]) == 0
    return capsys.readouterr().out


def test_info_reports_the_moore_bound_of_regular_graphs(tmp_path, capsys):
    petersen = ltm.Topology.from_networkx(nx.petersen_graph())
    info = json.loads(_info(tmp_path, capsys, petersen, "--json"))
    assert (info["vertices"], info["degree_max"], info["diameter"], info["moore_bound"]) == (10, 3, 2, 10)
    hs = ltm.Topology.from_networkx(nx.hoffman_singleton_graph())
    info = json.loads(_info(tmp_path, capsys, hs, "--json"))
    assert (info["vertices"], info["degree_max"], info["diameter"], info["moore_bound"]) == (50, 7, 2, 50)
    # hypercube Q_4: degree 4, diameter 4 -> (4 * 3**4 - 2) / 2 = 161
    assert json.loads(_info(tmp_path, capsys, hypercube(4), "--json"))["moore_bound"] == 161
    text = _info(tmp_path, capsys, petersen)
    assert any(line.split() == ["moore_bound", "10"] for line in text.splitlines())
    # not regular, or with switches: no bound
    assert "moore_bound" not in json.loads(_info(tmp_path, capsys, ltm.mesh((3, 3)), "--json"))
    assert "moore_bound" not in json.loads(_info(tmp_path, capsys, ltm.fattree(4, 2), "--json"))


def _brute_total(n, edges):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(map(tuple, edges))
    if not nx.is_connected(g):
        return -1, -1
    total = sum(sum(nx.single_source_shortest_path_length(g, s).values()) for s in range(n))
    return total, nx.diameter(g)


@pytest.mark.parametrize("n, p, seed", [(2, 1.0, 0), (10, 0.4, 1), (63, 0.1, 2), (64, 0.08, 3), (65, 0.08, 4),
                                        (150, 0.03, 5), (200, 0.01, 6)])
def test_distance_total_equals_breadth_first_search(n, p, seed):
    g = nx.gnp_random_graph(n, p, seed=seed)
    edges = np.array(g.edges(), dtype=np.int64).reshape(-1, 2)
    assert ldr_mod.distance_total(n, edges) == _brute_total(n, edges)


def test_distance_total_of_the_hypercube_and_a_cycle():
    q = hypercube(7)
    e = np.stack([q.link_u, q.link_v], 1)
    assert ldr_mod.distance_total(128, e) == (128 * 7 * 64, 7)  # each node: sum_k k C(7, k) = 7 * 2**6
    c = np.array([(i, (i + 1) % 101) for i in range(101)])
    assert ldr_mod.distance_total(101, c) == (101 * 2 * sum(range(1, 51)), 50)


@pytest.mark.parametrize("n, d, seed", [(8, 3, 0), (10, 3, 1), (32, 5, 2), (100, 5, 3), (257, 4, 4), (300, 7, 5)])
def test_each_draw_is_a_simple_regular_graph(n, d, seed):
    rng = np.random.default_rng(seed)
    for _ in range(5):
        e = ldr_graph_edges(n, d, rng)
        if e is None:
            continue
        assert e.shape == (n * d // 2, 2) and np.all(e[:, 0] < e[:, 1])  # no loops
        assert len({tuple(x) for x in e.tolist()}) == len(e)  # no multi-edges
        assert np.all(np.bincount(e.ravel(), minlength=n) == d)


def test_ldr_keeps_the_smallest_aspl_then_the_smaller_diameter(monkeypatch):
    # scripted draws: (total, diameter) of each trial; the third ties the second on ASPL with a
    # smaller diameter and must win; the fourth is disconnected
    script = [(500, 3), (480, 4), (480, 3), (-1, -1), (480, 3), (490, 2)]
    draws = iter(range(len(script)))
    real = ldr_mod.ldr_graph_edges
    monkeypatch.setattr(ldr_mod, "ldr_graph_edges", lambda n, d, rng: (real(n, d, rng), next(draws))[0])
    seen = []

    def fake_total(n, e):
        seen.append(e)
        return script[len(seen) - 1]

    monkeypatch.setattr(ldr_mod, "distance_total", fake_total)
    t = ldr_mod.ldr(10, 3, seed=0, trials=len(script))
    assert t.attrs["best_trial"] == 2 and t.attrs["diameter"] == 3 and t.attrs["aspl"] == 480 / 90
    assert t == ltm.Topology([f"n{i}" for i in range(10)], seen[2])


# Mehta 2005, Table 4.1: nodes -> (degree, LDR diameter, LDR avg. internode distance over n**2 pairs)
TABLE_41 = {8: (3, 2, 1.375), 16: (4, 3, 1.77), 32: (5, 3, 2.11), 64: (6, 4, 2.45), 128: (7, 4, 2.65),
            256: (8, 4, 2.87)}


@pytest.mark.parametrize("n", sorted(TABLE_41))
@pytest.mark.parametrize("seed", [0, 1])
def test_table_41_rows(n, seed):
    d, diameter, ind = TABLE_41[n]
    t = ldr(n, d, seed=seed)
    p = properties(t)
    assert np.all(t.degree == d) and p["diameter"] == t.attrs["diameter"] == diameter
    assert p["aspl"] == pytest.approx(t.attrs["aspl"], rel=1e-12)
    assert p["aspl"] * (n - 1) / n <= ind + 0.005  # the table rounds to 2 decimals
    if n == 8:
        assert p["aspl"] * 7 * 8 == 88  # 1.375 = 88 / 64 exactly (diameter 2: 3 at 1 hop, 4 at 2)
    q = properties(hypercube(d))
    assert q["diameter"] == d and q["aspl"] * (n - 1) / n == pytest.approx(d / 2)  # the HC columns


def test_ldr_is_deterministic_and_checks_its_arguments():
    assert ldr(50, 4, seed=3) == ldr(50, 4, seed=3)
    assert ldr(50, 4, seed=3) != ldr(50, 4, seed=4)
    with pytest.raises(TopologyError, match="trials must be >= 1"):
        ldr(10, 3, trials=0)
