"""Seed 004 (Camarero et al.): identity, diagonal shift and concentrations of a 2D torus on RT(a)/RTT(a)."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import MappingError, average_dilation, max_dilation, rt, rtt, stencil
from libtopomap.mappers import map_processes
from libtopomap.mappers.twisted_mappings import (arc_classes, diagonal_shift, link_classes, logical_grid, model,
                                                 parse_concentration, table1, twisted_nodes, twisted_union)


def dilations(kind, a, strategy, concentration, c):
    """(average, max) dilation of the logical torus on RT(a)/RTT(a) under the strategy."""
    t = rt(a) if kind == "rt" else rtt(a)
    M, N = logical_grid(a, concentration)
    g = stencil(f"{N}x{M}")  # the paper's R(M, N), x fastest
    m = map_processes(t, g, strategy=strategy, concentration=concentration, slots=np.full(2 * a * a, c))
    return average_dilation(t, g, m), max_dilation(t, g, m)


# (kind, strategy, concentration, c) -> (average, max) dilation as functions of a (sections 3.3-3.4)
CASES = {
    ("rt", "identity", None, 1): lambda a: (1, 1),
    ("rtt", "identity", None, 1): lambda a: (1.5 - 1 / a, a - 1),  # 3.3.2
    ("rtt", "diagonal-shift", None, 1): lambda a: (1.5, 2),  # 3.3.3
    ("rt", "identity", "v", 2): lambda a: (0.75, 1),  # 3.4.1
    ("rtt", "identity", "v", 2): lambda a: (1 - 1 / (2 * a), a - 1),  # 3.4.2
    ("rtt", "diagonal-shift", "v", 2): lambda a: (1, 2),  # 3.4.3
    ("rtt", "identity", "t", 2): lambda a: (1, 1),  # 3.4.4 ("f_2^l")
    # c = 4 (section 5.2.2, Figure 12), derived here: per process one horizontal neighbour on the
    # same node and one a hop away; vertically as the c = 2 case of the second union
    ("rt", "identity", "v+h", 4): lambda a: (0.5, 1),
    ("rtt", "identity", "v+h", 4): lambda a: ((3 - 2 / a) / 4, a - 1),
    ("rtt", "identity", "t+h", 4): lambda a: (0.75, 1),
    ("rt", "identity", "t+h", 4): lambda a: (1.25, a + 1),  # the twist costs a + 1 hops on RT
}


@pytest.mark.parametrize("a", [3, 4, 5, 6])
@pytest.mark.parametrize("case", sorted(CASES, key=str))
def test_average_and_max_dilation_match_the_paper(case, a):
    kind, strategy, concentration, c = case
    avg, mx = dilations(kind, a, strategy, concentration, c)
    want_avg, want_max = CASES[case](a)
    assert avg == pytest.approx(want_avg, rel=1e-12) and mx == want_max


def test_c4_case_16x8_onto_rt4_and_rtt4():
    # 128 tasks as a 16 x 8 torus on the 8 x 4 network (section 5.2.2): f_2^v o f_2^h and f_2^t o f_2^h
    assert logical_grid(4, "v+h") == logical_grid(4, "t+h") == (16, 8)
    assert dilations("rt", 4, "identity", "v+h", 4) == (0.5, 1)
    assert dilations("rtt", 4, "identity", "v+h", 4) == (0.625, 3)
    assert dilations("rtt", 4, "identity", "t+h", 4) == (0.75, 1)
    assert dilations("rt", 4, "identity", "t+h", 4) == (1.25, 5)
    # every node gets exactly 4 processes
    assert np.all(np.bincount(twisted_nodes(4, concentration="t+h"), minlength=32) == 4)


def test_coordinate_functions_brute_force():
    a, m = 4, 8
    nodes = twisted_nodes(a, shift=True, concentration="t")  # f^d o f_2^t on an 8 x 8 grid
    for p in range(64):
        x, y = p % m, p // m
        tx, ty = (x + (y // a) * (m // 2)) % m, y - (y // a) * a  # f_2^t as printed in section 3
        sx, sy = (tx + ty) % m, ty  # f^d
        assert nodes[p] == sy * m + sx
    assert [int(v) for v in diagonal_shift([7, 0], [1, 3], 8)[0]] == [0, 3]
    # f_c^t for c = 2 on R(m, 2n): rows n..2n-1 land half a turn to the right
    x, y = twisted_union([0, 1, 5], [0, 4, 7], 8, 4)
    assert x.tolist() == [0, 5, 1] and y.tolist() == [0, 0, 3]
    with pytest.raises(MappingError, match="even width"):
        twisted_union([0], [0], 7, 3)


def test_parse_concentration():
    assert parse_concentration("t+h") == [("t", 2), ("h", 2)]
    assert parse_concentration("V + h4") == [("v", 2), ("h", 4)]
    assert parse_concentration(None) == parse_concentration("") == []
    assert logical_grid(4, "h4") == (32, 4) and logical_grid(4, "v3") == (8, 12)
    with pytest.raises(MappingError, match="not h, v or t"):
        parse_concentration("x")
    with pytest.raises(MappingError, match="must be >= 2"):
        parse_concentration("v1")


def test_strategies_through_map_processes_and_errors():
    t = rtt(4)
    m = map_processes(t, stencil("4x8"), strategy="diagonal-shift")
    assert m.strategy == "diagonal-shift" and m.vertices.tolist()[:10] == [0, 1, 2, 3, 4, 5, 6, 7, 9, 10]
    m = map_processes(t, stencil("8x8"), strategy="identity", concentration="t", slots=np.full(32, 2))
    assert m.strategy == "identity+t"
    # identity without concentration is unchanged: process p on vertex p
    assert map_processes(t, stencil("4x8"), strategy="identity").vertices.tolist() == list(range(32))
    with pytest.raises(MappingError, match="RT\\(a\\) or RTT\\(a\\)"):
        map_processes(ltm.torus("8x4"), stencil("4x8"), strategy="diagonal-shift")
    with pytest.raises(MappingError, match="8 x 8 process grid"):
        map_processes(t, stencil("4x8"), strategy="identity", concentration="v")
    with pytest.raises(MappingError, match="concentration= applies"):
        map_processes(t, stencil("8x8"), strategy="greedy", concentration="v")
    with pytest.raises(MappingError, match="usable slots"):
        map_processes(t, stencil("8x8"), strategy="identity", concentration="v")  # one slot per node
    assert "diagonal-shift" not in ltm.STRATEGIES  # not offered for arbitrary topologies


def test_concentrated_topology_hosts():
    t = ltm.concentrate(rtt(4), 2)
    g = stencil("8x8")
    m = map_processes(t, g, strategy="identity", concentration="t")
    node = twisted_nodes(4, concentration="t")
    # each router's two processes sit on its two hosts (vertex 32 + 2r + k), in process order
    assert np.all(t.distances.pairs(m.vertices, node) == 1)
    assert sorted(m.vertices.tolist()) == list(range(32, 96))
    # one host per router is too few for c = 2
    with pytest.raises(MappingError):
        map_processes(ltm.concentrate(rtt(4), 1), g, strategy="identity", concentration="t")


def test_link_classes_and_arc_classes_count_the_links():
    for a in (3, 4, 7):
        sizes = link_classes(a)
        assert sum(sizes.values()) == 4 * a * a  # 2N links
        for t in (rt(a), rtt(a)):
            cls = arc_classes(t)
            assert {k: int((cls == k).sum()) // 2 for k in sizes} == sizes
    cls = arc_classes(rtt(4))
    u, v = rtt(4).arc_source, rtt(4).indices
    vp = cls == "vp"
    assert set(zip(u[vp].tolist(), v[vp].tolist())) >= {(0, 28), (4, 24), (28, 0)}  # (x,0)-(x+-a, a-1)


def test_table1_and_model_closed_forms():
    assert table1(4, "rt") == {"k": 6, "kbar": 3, "kbar_x": 2, "kbar_y": 1}
    assert table1(6, "rtt") == {"k": 6, "kbar": 4, "kbar_x": 2, "kbar_y": 2}
    a, al = 4, np.linspace(0, 1, 11)
    rt_id = model(a, "rt", "identity", None, al)
    rtt_id = model(a, "rtt", "identity", None, al)
    assert np.allclose(rt_id["max_th"], 4 / (al + a * (1 - al)))
    assert np.allclose(rtt_id["max_th"], 4 / (2 * al + 2 * a / 3 * (1 - al)))
    assert np.allclose(rtt_id["tau"], (1.5 - 1 / a) * al + (1 - al) * 2 * a / 3)
    assert np.allclose(model(a, "rtt", "diagonal-shift", "v", al)["max_th"], 4 / (1.5 * al + 2 * a / 3 * (1 - al)))
    assert np.allclose(model(a, "rtt", "identity", "t", al)["max_th"], 4 / (al + 2 * a / 3 * (1 - al)))
    assert np.allclose(model(a, "rt", "identity", "v", al)["tau"], 0.75 * al + 0.75 * a * (1 - al))
    # the average dilations of the model are the measured ones
    for (kind, strat, conc, c), f in CASES.items():
        if (kind, strat, conc) in ltm.mappers.twisted_mappings.MODEL_CASES:
            assert model(a, kind, strat, conc, 1.0)["d"] == pytest.approx(f(a)[0])
    # RT and RTT (identity) cross at alpha = a / (a + 3)
    x = a / (a + 3)
    th_rt, th_rtt = (model(a, k, "identity", None, x)["max_th"] for k in ("rt", "rtt"))
    assert th_rt == pytest.approx(th_rtt)
    assert float(model(a, "rt", "identity", None, 0.0)["max_th"]) == pytest.approx(1.0)
    assert float(model(a, "rtt", "identity", None, 0.0)["max_th"]) == pytest.approx(1.5)
    with pytest.raises(MappingError, match="derives no model"):
        model(a, "rt", "diagonal-shift", None, 0.5)


def _th(t, graph, mapping):
    return 1.0 / ltm.link_traffic(t, graph, mapping).max()


def test_link_loads_give_the_models_throughput():
    # one unit per node: uniform (alpha = 0) over all N nodes, or local (alpha = 1) a quarter per neighbour
    a, N = 4, 32
    s, d = np.divmod(np.arange(N * N), N)
    keep = s != d
    uniform = ltm.CommGraph(N, s[keep], d[keep], np.full(int(keep.sum()), 1 / N))
    assert _th(rt(a), uniform, np.arange(N)) == pytest.approx(4 / a)  # 1.000
    # RTT is edge-symmetric: every arc carries N kbar / 2|E| with the exact kbar = (4a^2 - 1)/(6a)
    assert _th(rtt(a), uniform, np.arange(N)) == pytest.approx(4 * 6 * a / (4 * a * a - 1))  # 1.524
    local = ltm.CommGraph(N, stencil("4x8").src, stencil("4x8").indices, np.full(4 * N, 0.25))
    assert _th(rt(a), local, np.arange(N)) == pytest.approx(4.0)
    m = map_processes(rtt(a), local, strategy="identity")
    assert _th(rtt(a), local, m) == pytest.approx(float(model(a, "rtt", "identity", None, 1.0)["max_th"]))  # 2
    g8 = stencil("8x8")
    local2 = ltm.CommGraph(64, g8.src, g8.indices, np.full(4 * 64, 1 / 8))  # c = 2: 1/(4c) per edge
    m = map_processes(rtt(a), local2, strategy="identity", concentration="t", slots=np.full(N, 2))
    assert _th(rtt(a), local2, m) == pytest.approx(4.0)
