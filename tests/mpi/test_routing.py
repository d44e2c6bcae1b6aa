"""``routing=`` on the MPI layer (issue 14 item 1): agreed across ranks like every option, and the
race's scores and refinements under that model.

Run under real MPI by tests/test_mpi_suite.py (4 and 8 ranks on this machine).
"""

import numpy as np

import libtopomap as ltm
from libtopomap.mpi.bench import graph_lists

from _helpers import COMM, P, RANK, agree, all_same, raised


def _torus():
    return ltm.torus(f"{P // 2}x2")


def _graph(seed=3):
    rng = np.random.default_rng(seed)
    src = np.arange(P).repeat(3)
    dst = rng.integers(0, P, src.size)
    keep = src != dst
    return ltm.CommGraph(P, src[keep], dst[keep], rng.integers(1, 9, int(keep.sum())).astype(float))


def test_routing_is_agreed_and_checked_on_every_rank():
    g = _graph()
    s, d, sw, dw = graph_lists(g, RANK)
    topo = _torus()
    got = raised(lambda: ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=list(range(P)),
                                                        seed=1, routing="dimension-order" if RANK else "ecmp"))
    all_same(got, "CommError", "routing")
    got = raised(lambda: ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=list(range(P)),
                                                        seed=1, routing="shortest"))
    all_same(got, "ArgumentError", "routing must be one of")
    # a model the topology cannot route: one error on every rank
    got = raised(lambda: ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=list(range(P)),
                                                        seed=1, routing="minimal"))
    all_same(got, "CommError", "not a dragonfly")


def test_the_race_scores_and_refines_under_the_routing():
    g = _graph(5)
    s, d, sw, dw = graph_lists(g, RANK)
    topo = _torus()
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=list(range(P)), seed=2,
                                        strategies=("greedy", "rcm"), refine="ta", iterations=300,
                                        routing="dimension-order")
    rep = ltm.report(dc)
    ok = True
    for got, where in ((rep.before, rep.vertices_before), (rep.after, rep.vertices_after)):
        want = ltm.evaluate(topo, g, np.asarray(where), routing="dimension-order")
        ok &= abs(got["max_congestion"] - want["max_congestion"]) <= 1e-9 * want["max_congestion"]
        ok &= abs(got["hop_bytes"] - want["hop_bytes"]) <= 1e-9 * want["hop_bytes"]
    ok &= rep.after["max_congestion"] <= rep.before["max_congestion"]
    dc.Free()
    assert agree(ok), (rep.before, rep.after)


def test_bench_reports_and_maps_under_the_routing(tmp_path_factory, capsys):
    import json

    from libtopomap.cli import main
    from libtopomap.mpi import bench, collective_call

    topo = _torus()
    res = bench.run_benchmark(COMM, topo, collectives=["neighbor_alltoall"], sizes=(8,), iterations=1,
                              placement=list(range(P))[::-1], seed=3, routing="dimension-order")
    r = res["results"][0]
    ok = res["routing"] == "dimension-order"
    g = bench.halo_graph(P)
    want = ltm.evaluate(topo, g, np.arange(P)[::-1], routing="dimension-order")
    ok &= abs(r["before"]["max_congestion"] - want["max_congestion"]) <= 1e-9 * want["max_congestion"]

    def write():
        if RANK == 0:
            d = tmp_path_factory.mktemp("bench_routing")
            ltm.save(str(d / "t.json"), topo)  # JSON keeps the generator: dimension-order can route on it
            (d / "t.names").write_text("".join(f"{r} n{v}\n" for r, v in enumerate(range(P))))
            return str(d)
    d = COMM.bcast(collective_call(COMM, write, what="writing files"), root=0)
    capsys.readouterr()
    rc = main(["bench", "--topology", f"{d}/t.json", "--fake-names", f"{d}/t.names", "--collectives",
               "neighbor_alltoall", "--sizes", "8", "--iterations", "1", "--routing", "dimension-order", "--json"])
    out = capsys.readouterr().out
    ok &= rc == 0
    if RANK == 0:
        ok &= json.loads(out)["routing"] == "dimension-order"
    assert agree(ok)
