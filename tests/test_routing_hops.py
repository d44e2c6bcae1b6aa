"""The hop objectives under a routing model (issue 14 item 1): the engine's hop-bytes under dragonfly
``minimal`` and ``valiant`` routing are the model's own hops (:func:`libtopomap.routing.pair_hops`),
equal to :func:`libtopomap.metrics.hop_bytes` with the same model after random moves; shortest-path
models keep the hop distance, bit-identical to ``ecmp``."""

import json

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import metrics
from libtopomap.collectives.dragonfly import dragonfly_queries
from libtopomap.distances import DistanceOracle
from libtopomap.mappers import map_processes
from libtopomap.mappers.hopbytes_swap import hopbytes_swap, refine_hopbytes_swap
from libtopomap.mappers.local_search import SwapState
from libtopomap.mappers.threshold_accepting import capped_hopbytes_descent, threshold_accepting
from libtopomap.routing import pair_context, pair_hops_batch, route_hops

from _helpers import swap_instance

DRAGONFLIES = [(5, 2, 1, 2), (9, 4, 2, 2), (5, 2, 0, 2), (3, 2, 2, 1), (2, 3, 1, 1), (6, 4, 1, 3), (4, 4, 1, 2)]


def _all_pairs(topo):
    n = topo.n_vertices
    s, d = np.divmod(np.arange(n * n, dtype=np.int64), n)
    return s, d


@pytest.mark.parametrize("model", ["minimal", "valiant"])
@pytest.mark.parametrize("shape", DRAGONFLIES, ids=str)
def test_pair_hops_equal_route_hops_on_every_pair(model, shape):
    topo = ltm.dragonfly(*shape)
    s, d = _all_pairs(topo)
    got = pair_hops_batch(pair_context(topo, model), s, d, np.zeros(s.size))
    np.testing.assert_array_equal(got, route_hops(topo, s, d, routing=model))


def test_minimal_hops_follow_the_closed_form():
    """Terminal links + [source router != gate] + 1 global + [landing router != destination router],
    with the gate minimising it (one link per pair of groups here: the gate is the only link)."""
    topo = ltm.dragonfly(9, 4, 2, 2)
    q = dragonfly_queries(topo)
    ctx = pair_context(topo, "minimal")
    hosts = np.flatnonzero(topo.slots > 0)
    s, d = np.meshgrid(hosts, hosts, indexing="ij")
    s, d = s.ravel(), d.ravel()
    rs, rd = q.router_index(s), q.router_index(d)
    gs, gd = rs // q.routers, rd // q.routers
    gate, land = q.gate_router[gs, gd, 0], q.landing_router[gs, gd, 0]
    want = np.where(s == d, 0, 2 + np.where(gs == gd, (rs != rd).astype(int),
                                            (rs != gate).astype(int) + 1 + (land != rd)))
    np.testing.assert_array_equal(pair_hops_batch(ctx, s, d, np.zeros(s.size)), want)
    # the engine must not use the hop distance here: minimal routes are longer for some pairs
    assert np.any(want > topo.distances.pairs(s, d))


def test_valiant_hops_are_the_mean_over_intermediate_groups():
    """Brute force: the expected hops are the mean over the g - 2 intermediate groups of the links of
    the route through each (leg 1 to the lowest gate nearest the source, leg 2 minimal)."""
    for shape in [(9, 4, 2, 2), (6, 4, 1, 3)]:
        topo = ltm.dragonfly(*shape)
        q = dragonfly_queries(topo)
        ctx = pair_context(topo, "valiant")
        routers = np.asarray(q.router_vertices)
        a, g = q.routers, q.groups

        def gate(G, H, rs, rd):
            best = None
            for k in range(q.gate_router.shape[2]):
                u, v = int(q.gate_router[G, H, k]), int(q.landing_router[G, H, k])
                if u < 0:
                    break
                c = int(u != rs) + int(rd >= 0 and v != rd)
                if best is None or c < best[0]:
                    best = (c, u, v)
            return best[1], best[2]

        for rs in range(0, g * a, 3):
            for rd in range(1, g * a, 5):
                if rs // a == rd // a:
                    continue
                total = 0
                for I in range(g):  # noqa: E741 (intermediate group I)
                    if I in (rs // a, rd // a):
                        continue
                    u, v = gate(rs // a, I, rs, -1)
                    u2, v2 = gate(I, rd // a, v, rd)
                    total += int(u != rs) + 1 + int(u2 != v) + 1 + int(v2 != rd)
                got = pair_hops_batch(ctx, routers[[rs]], routers[[rd]], np.zeros(1))[0]
                assert got == pytest.approx(total / (g - 2), rel=1e-15)


def _searching(topo):
    topo.__dict__["distances"] = DistanceOracle(topo, table_limit=1)
    return topo


CASES = [
    ("minimal", lambda: ltm.dragonfly(9, 4, 2, 2)),
    ("minimal", lambda: ltm.dragonfly(9, 4, 0, 2)),
    ("minimal", lambda: ltm.dragonfly(6, 4, 1, 3)),
    ("minimal", lambda: _searching(ltm.dragonfly(9, 4, 1, 2))),
    ("valiant", lambda: ltm.dragonfly(9, 4, 2, 2)),
    ("valiant", lambda: ltm.dragonfly(6, 4, 1, 3)),   # two links per pair of groups: hops differ by direction
    ("valiant", lambda: ltm.dragonfly(2, 3, 1, 1)),   # g = 2: no third group, minimal routes
    ("table", lambda: ltm.torus("4x4")),
    ("dimension-order", lambda: ltm.torus("4x3")),
    ("rt", lambda: ltm.rt(3)),
    ("hybrid", lambda: ltm.hybrid(32, 8, arity=2)),
    ("ecmp", lambda: ltm.dragonfly(9, 4, 2, 2)),
]


@pytest.mark.parametrize("objective", ["hopbytes", "dilation"])
@pytest.mark.parametrize("model, make", CASES, ids=lambda x: x if isinstance(x, str) else "")
def test_incremental_hopbytes_equal_the_model_after_random_moves(model, make, objective):
    topo = make()
    g, slots, start = swap_instance(topo, 3, 4)
    st = SwapState(topo, g, start, slots, objective, routing=model)
    assert st.score == pytest.approx(metrics.hop_bytes(topo, g, st.proc_vertex, routing=model), rel=1e-12)
    rng = np.random.default_rng(1)
    # all accepted (shifts to the spare slots and swaps), then a descent, then a threshold walk
    for levels in (np.full(200, np.inf), np.zeros(300), np.full(300, 0.5)):
        _, _, done, deltas = st.run(levels, rng)
        assert done == levels.size
        want = metrics.hop_bytes(topo, g, st.proc_vertex, routing=model)
        assert st.score == pytest.approx(want, rel=1e-10)
    assert not np.array_equal(st.proc_vertex, start)
    before = st.score
    assert st.recompute() == pytest.approx(before, rel=1e-10)


@pytest.mark.parametrize("model, make", [CASES[i] for i in (0, 1, 3, 4, 5)],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_the_model_matters_on_these_instances(model, make):
    """Five of the cases above fail if the engine used the hop distance: the model's hop-bytes of the
    start differ from the distance's (on dragonfly(6, 4, 1, 3) under minimal and on g = 2 they agree)."""
    topo = make()
    g, slots, start = swap_instance(topo, 3, 4)
    assert metrics.hop_bytes(topo, g, start, routing=model) != pytest.approx(metrics.hop_bytes(topo, g, start))


@pytest.mark.parametrize("model, make", [("dimension-order", lambda: ltm.torus("6x4")),
                                         ("table", lambda: _searching(ltm.circulant(40, [1, 7]))),
                                         ("hybrid", lambda: ltm.hybrid(32, 8, arity=2))])
def test_shortest_path_models_are_bit_identical_to_ecmp(model, make):
    topo = make()
    g, slots, start = swap_instance(topo, 2, 7)
    a = hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(3), iterations=2000)
    b = hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(3), iterations=2000, routing=model)
    assert np.array_equal(a[0], b[0]) and a[1:3] == b[1:3]
    a = threshold_accepting(topo, g, start, slots, "hopbytes", rng=np.random.default_rng(3), iterations=2000)
    b = threshold_accepting(topo, g, start, slots, "hopbytes", rng=np.random.default_rng(3), iterations=2000,
                            routing=model)
    assert np.array_equal(a[0], b[0]) and a[1:3] == b[1:3]


@pytest.mark.parametrize("model", ["minimal", "valiant"])
@pytest.mark.parametrize("seed", [0, 1])
def test_hopbytes_refinement_reports_what_evaluate_computes(model, seed):
    topo = ltm.dragonfly(9, 4, 2, 2)
    g, slots, start = swap_instance(topo, 0, seed)
    out, v0, v1, stats = hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(seed), routing=model)
    assert v0 == pytest.approx(metrics.hop_bytes(topo, g, start, routing=model), rel=1e-12)
    assert v1 == pytest.approx(ltm.evaluate(topo, g, out, routing=model)["hop_bytes"], rel=1e-9)
    assert v1 < v0
    out2, w0, w1, _ = threshold_accepting(topo, g, start, slots, "hopbytes", rng=np.random.default_rng(seed),
                                          iterations=3000, routing=model)
    assert w1 == pytest.approx(ltm.evaluate(topo, g, out2, routing=model)["hop_bytes"], rel=1e-9)
    assert w1 <= w0
    m = refine_hopbytes_swap(topo, g, start, seed=seed, routing=model)
    assert metrics.hop_bytes(topo, g, m, routing=model) <= v0 + 1e-9


def test_hopbytes_search_under_minimal_optimises_minimal_hops():
    """hb-swap under minimal ends at a local optimum of the minimal hop-bytes: no single swap of its
    neighbourhood lowers them (checked by brute force over all swaps), which the search under
    shortest-path distances does not guarantee."""
    topo = ltm.dragonfly(9, 4, 1, 2)
    g, slots, start = swap_instance(topo, 0, 2)
    out, _, v1, stats = hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(0), routing="minimal",
                                      depth=64)
    assert stats["stopped"] == "local optimum"
    base = metrics.hop_bytes(topo, g, out, routing="minimal")
    assert base == pytest.approx(v1, rel=1e-9)
    P = out.size
    for a in range(P):
        for b in range(a + 1, P):
            m = out.copy()
            m[a], m[b] = m[b], m[a]
            assert metrics.hop_bytes(topo, g, m, routing="minimal") >= base - 1e-9 * base


def test_capped_descent_counts_the_model_hops():
    topo = ltm.dragonfly(9, 4, 2, 2)
    g, slots, start = swap_instance(topo, 4, 5)
    out, stats = capped_hopbytes_descent(topo, g, start, slots, rng=np.random.default_rng(0), routing="minimal")
    assert stats["start_hopbytes"] == pytest.approx(metrics.hop_bytes(topo, g, start, routing="minimal"), rel=1e-12)
    assert stats["hopbytes"] == pytest.approx(metrics.hop_bytes(topo, g, out, routing="minimal"), rel=1e-9)
    assert stats["hopbytes"] <= stats["start_hopbytes"]
    assert metrics.max_congestion(topo, g, out, routing="minimal") <= stats["start_max"] * (1 + 1e-9)


@pytest.mark.parametrize("refine", ["ta", "two-opt", "hb-swap"])
def test_map_processes_hopbytes_under_minimal_never_worse(refine):
    topo = ltm.dragonfly(9, 4, 2, 2)
    g = ltm.random_graph(72, 4, seed=3)
    built = map_processes(topo, g, strategy="random", seed=3)
    m = map_processes(topo, g, strategy="random", seed=3, refine=refine, objective="hopbytes", iterations=2000,
                      routing="minimal")
    assert metrics.hop_bytes(topo, g, m, routing="minimal") <= metrics.hop_bytes(topo, g, built, routing="minimal")


def test_cli_map_hopbytes_under_minimal(tmp_path, capsys):
    from libtopomap.cli import main

    topo = tmp_path / "df.json"
    assert main(["generate", "dragonfly", "--groups", "9", "--routers", "4", "--terminals", "2", "--global", "2",
                 "-o", str(topo)]) == 0
    capsys.readouterr()
    t = ltm.load(str(topo))
    g = ltm.load_graph("random:72:4:1")
    argv = ["map", "--topology", str(topo), "--graph", "random:72:4:1", "--strategy", "random", "--refine",
            "hb-swap", "--objective", "hopbytes", "--routing", "minimal", "--seed", "1", "--json"]
    assert main(argv) == 0
    rows = [r for r in json.loads(capsys.readouterr().out) if "skipped" not in r]
    built = map_processes(t, g, strategy="random", seed=1)
    chosen = [r for r in rows if r["chosen"]][0]
    assert chosen["hopbytes"] <= metrics.hop_bytes(t, g, built, routing="minimal") + 1e-9
