"""The local-search engine under a routing model (issue 14 item 1): after random moves the engine's
incremental loads equal :func:`libtopomap.routing.route_traffic` of the same mapping under the same
model, and threshold accepting reports the congestion that ``evaluate`` computes."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import metrics
from libtopomap.distances import DistanceOracle
from libtopomap.errors import TopologyError
from libtopomap.mappers._deltas import full_traffic
from libtopomap.mappers.local_search import SwapState, local_search
from libtopomap.mappers.threshold_accepting import threshold_accepting
from libtopomap.mappers.two_opt import two_opt

from _helpers import swap_instance


def _searching(topo):
    """The topology with a distance oracle that answers no vertex without a search (the unpruned path)."""
    topo.__dict__["distances"] = DistanceOracle(topo, table_limit=1)
    assert not topo.distances.covers_all
    return topo


CASES = [
    ("table", lambda: ltm.torus("4x4")),
    ("table", lambda: ltm.fattree(4, 2)),
    ("table", lambda: _searching(ltm.concentrate(ltm.circulant(11, [1, 3]), 2))),
    ("oblivious", lambda: ltm.mesh("3x4")),
    ("oblivious", lambda: ltm.concentrate(ltm.torus("3x4"), 2)),
    ("oblivious", lambda: _searching(ltm.circulant(13, [1, 5]))),
    ("dimension-order", lambda: ltm.torus("4x3")),
    ("dimension-order", lambda: ltm.hypercube(4)),
    ("dimension-order", lambda: ltm.concentrate(ltm.torus("3x4"), 2)),
    ("rt", lambda: ltm.rt(3)),
    ("rtt", lambda: ltm.rtt(3)),
    ("rtt", lambda: ltm.concentrate(ltm.rtt(2), 2)),
    ("minimal", lambda: ltm.dragonfly(5, 2, 1, 2)),
    ("minimal", lambda: ltm.dragonfly(9, 4, 2, 2)),
    ("minimal", lambda: ltm.dragonfly(5, 2, 0, 2)),
    ("valiant", lambda: ltm.dragonfly(5, 2, 1, 2)),
    ("valiant", lambda: ltm.dragonfly(9, 4, 2, 2)),
    ("hybrid", lambda: ltm.hybrid(32, 8, arity=2)),
    ("hybrid", lambda: ltm.hybrid(64, 16, component="ldr", seed=1, trials=3)),
    ("hybrid", lambda: _searching(ltm.hybrid(64, 16, component="ldr", seed=2, trials=3))),
    ("ecmp", lambda: ltm.dragonfly(9, 4, 2, 2)),
]


@pytest.mark.parametrize("model, make", CASES, ids=lambda x: x if isinstance(x, str) else "")
def test_incremental_loads_equal_the_model_after_random_moves(model, make):
    topo = make()
    g, slots, start = swap_instance(topo, 3, 4)
    st = SwapState(topo, g, start, slots, "congestion", routing=model)
    want = metrics.link_traffic(topo, g, st.proc_vertex, routing=model)
    np.testing.assert_allclose(st.traffic, want, rtol=1e-12, atol=1e-12)
    rng = np.random.default_rng(1)
    # all accepted, then a descent (accepts and undone rejections), then a walk with thresholds
    for levels in (np.full(150, np.inf), np.zeros(300), np.full(300, 0.5)):
        acc, _, done, _ = st.run(levels, rng)
        assert done == levels.size
        want = metrics.link_traffic(topo, g, st.proc_vertex, routing=model)
        np.testing.assert_allclose(st.traffic, want, rtol=1e-9, atol=1e-9)
        c = want / topo.arc_capacity
        assert st.current_max() == pytest.approx(c.max(), rel=1e-9)
    assert not np.array_equal(st.proc_vertex, start)
    np.testing.assert_allclose(full_traffic(topo, st.sym, st.proc_vertex, routing=model),
                               metrics.link_traffic(topo, g, st.proc_vertex, routing=model), rtol=1e-12, atol=1e-12)


def test_ecmp_engine_is_bit_identical_with_and_without_the_keyword():
    topo = ltm.torus("4x4x2")
    g, slots, start = swap_instance(topo, 2, 7)
    states = [SwapState(topo, g, start, slots, "congestion", **kw) for kw in ({}, {"routing": "ecmp"})]
    for st in states:
        st.run(np.full(400, 0.3), np.random.default_rng(3))
    np.testing.assert_array_equal(states[0].traffic, states[1].traffic)
    np.testing.assert_array_equal(states[0].proc_vertex, states[1].proc_vertex)
    assert states[0].scal.tolist() == states[1].scal.tolist()


def test_minimal_routing_changes_what_the_engine_sees():
    topo = ltm.dragonfly(9, 4, 2, 2)
    g, slots, start = swap_instance(topo, 0, 2)
    e = SwapState(topo, g, start, slots, "congestion")
    m = SwapState(topo, g, start, slots, "congestion", routing="minimal")
    assert not np.allclose(e.traffic, m.traffic)
    assert m.current_max() == pytest.approx(metrics.max_congestion(topo, g, start, routing="minimal"))


@pytest.mark.parametrize("seed, model, budget", [(0, "minimal", None), (1, "minimal", None), (2, "minimal", 1.0),
                                                (3, "valiant", None)])
def test_ta_under_minimal_routing_reports_what_evaluate_says(seed, model, budget):
    topo = ltm.dragonfly(9, 4, 2, 2)
    g, slots, start = swap_instance(topo, 4, seed)
    best, start_value, best_value, stats = threshold_accepting(
        topo, g, start, slots, "congestion", rng=np.random.default_rng(seed),
        iterations=None if budget else 3000, time_budget=budget, routing=model)
    assert start_value == pytest.approx(metrics.max_congestion(topo, g, start, routing=model), rel=1e-12)
    e = metrics.evaluate(topo, g, best, routing=model)
    assert best_value == pytest.approx(e["max_congestion"], rel=1e-9)
    assert best_value <= start_value
    ltm.check_mapping(topo, best, g.n, slots=slots)


def test_two_opt_and_local_search_take_the_routing():
    topo = ltm.torus("4x4")
    g, slots, start = swap_instance(topo, 0, 5)
    best, s0, b0, _ = two_opt(topo, g, start, slots, "congestion", rng=np.random.default_rng(0), iterations=500,
                              routing="dimension-order")
    assert s0 == pytest.approx(metrics.max_congestion(topo, g, start, routing="dimension-order"))
    assert b0 == pytest.approx(metrics.max_congestion(topo, g, best, routing="dimension-order"))
    with pytest.raises(TopologyError, match="not a dragonfly"):
        local_search(topo, g, start, slots, "congestion", thresholds_fn=None, rng=np.random.default_rng(0),
                     iterations=10, routing="minimal")


def test_refine_threshold_accepting_takes_routing_native():
    topo = ltm.rtt(3)
    g = ltm.random_graph(18, 3, seed=2)
    m = ltm.refine_threshold_accepting(topo, g, np.arange(18), seed=1, iterations=800, routing="native")
    before = metrics.max_congestion(topo, g, np.arange(18), routing="rtt")
    assert metrics.max_congestion(topo, g, m.vertices, routing="rtt") <= before


def test_mapping_problem_scores_and_refines_under_its_routing():
    from libtopomap.portfolio import MappingProblem, make_candidates

    topo = ltm.dragonfly(9, 4, 2, 2)
    g, slots, start = swap_instance(topo, 0, 3)
    p = MappingProblem(topo, g, placement=start, routing="native", iterations=1500)
    assert p.routing == "minimal"
    cand = make_candidates(["random"], seed=0, refine="ta")[1]
    out = p.evaluate(cand)
    e = metrics.evaluate(topo, g, out.payload, routing="minimal")
    assert out.metrics["max_congestion"] == e["max_congestion"] and out.metrics["hop_bytes"] == e["hop_bytes"]
    assert MappingProblem(topo, g).routing == "ecmp"
    with pytest.raises(TopologyError, match="not a dragonfly"):
        MappingProblem(ltm.torus("4x4"), ltm.random_graph(16, 3, seed=1), routing="minimal")


def test_cli_map_refines_under_routing(tmp_path, capsys):
    import json

    from libtopomap.cli import main

    topo = tmp_path / "df.json"
    assert main(["generate", "dragonfly", "--groups", "9", "--routers", "4", "--terminals", "2", "--global", "2",
                 "-o", str(topo)]) == 0
    capsys.readouterr()
    t = ltm.load(str(topo))
    g = ltm.load_graph("random:72:4:1")
    assert main(["map", "--topology", str(topo), "--graph", "random:72:4:1", "--strategy", "random", "--refine", "ta",
                 "--iterations", "2000", "--routing", "native", "--json", "-o", str(tmp_path / "m.txt")]) == 0
    rows = json.loads(capsys.readouterr().out)
    won = [r for r in rows if r["chosen"]][0]
    assert won["strategy"] in ("random+ta", "random+ta+capped")  # the winner's clean-up may polish it
    index = {nm: i for i, nm in enumerate(t.names)}
    v = np.empty(g.n, np.int64)
    for line in (tmp_path / "m.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            p, name = line.split()
            v[int(p)] = index[name]
    e = metrics.evaluate(t, g, v, routing="minimal")
    assert won["congestion"] == pytest.approx(e["max_congestion"]) and won["hopbytes"] == e["hop_bytes"]
