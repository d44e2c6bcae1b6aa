"""The collective benchmark under real MPI: explicit schedules are correct, results are checked.

Run by tests/test_mpi_suite.py under ``mpiexec -n 4`` and ``-n 8``; sizes and iterations are tiny
because MPICH busy-polls on an oversubscribed machine.
"""

import json

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
from libtopomap.collectives import schedule
from libtopomap.mpi import bench
from _helpers import COMM, P, RANK, all_same, raised, topology_and_names


def _bad_placement():
    """The worst (congestion, hop-bytes) of 32 random placements of the halo exchange on the torus."""
    rng = np.random.default_rng(5)
    topo, g = ltm.torus(f"{P // 2}x2"), bench.halo_graph(P)
    perms = [rng.permutation(P) for _ in range(32)]
    return [int(v) for v in max(perms, key=lambda v: (ltm.max_congestion(topo, g, v), ltm.hop_bytes(topo, g, v)))]


@pytest.mark.parametrize("sub", [P, P - 1, 3])
@pytest.mark.parametrize("collective", ["bcast", "allreduce", "alltoall"])
def test_explicit_schedules_compute_the_collective(collective, sub):
    # also on non-powers of two (fold-in/fold-out of recursive doubling, Bruck with P - 1 ranks)
    c = COMM.Split(0 if RANK < sub else MPI.UNDEFINED, RANK)
    ok = True
    if c != MPI.COMM_NULL:
        steps = schedule(collective, c.Get_size())
        for nbytes in (8, 1000):
            for explicit in (True, False):
                op = bench._Op(c, collective, explicit, nbytes, steps)
                op.reset()
                op.run()
                ok &= op.result_ok()
        c.Free()
    assert all(COMM.allgather(ok))


def test_graph_lists_round_trip():
    g = ltm.CommGraph(P, [0, 0, 1, 2], [1, 2, 0, 0], [2.0, 3.4, 2.0, 1.0])
    lists = [bench.graph_lists(g, r) for r in range(P)]
    assert lists[0] == ([1, 2], [1, 2], [2, 1], [2, 3])
    assert lists[1] == ([0], [0], [2], [2])
    assert lists[3] == ([], [], [], [])
    assert bench.grid_dims(8) == (4, 2) and bench.parse_size("64K") == 65536 and bench.format_size(1 << 20) == "1M"
    for bad in ("0", "-8", "1X", "", "1.5K"):
        with pytest.raises(ltm.ArgumentError, match="bad message size"):
            bench.parse_size(bad)


def _chain(p):
    """0 -> 1 -> ... -> p-1: rank 0 only sends, rank p-1 only receives (issue 12, item 19)."""
    return ltm.CommGraph(p, list(range(p - 1)), list(range(1, p)), [1.0] * (p - 1))


def test_neighbor_alltoall_with_ranks_that_only_send_or_only_receive():
    # Open MPI failed with MPI_ERR_TRUNCATE here (counts inferred from zero-length buffers), then hung.
    res = bench.run_benchmark(COMM, ltm.torus(f"{P // 2}x2"), graph=_chain(P), collectives=["neighbor_alltoall"],
                              sizes=(8, 1000), iterations=2, placement=_bad_placement(), seed=2)
    rows = res["results"][0]["rows"]
    assert [r["size"] for r in rows] == [8, 1000] and all(r["identical"] for r in rows)
    # also when only the first four ranks talk (the others have no neighbour at all)
    g = ltm.CommGraph(P, [0, 1, 2], [1, 2, 3], [1.0, 1.0, 1.0])
    orig = COMM.Create_dist_graph_adjacent(*bench.graph_lists(g, RANK), reorder=False)
    try:
        op = bench._Op(orig, "neighbor_alltoall", False, 16, None)
        op.run()
        assert all(COMM.allgather(op.result_ok()))
        assert op.buf.shape == ((1 if 1 <= RANK <= 3 else 0), 16)
    finally:
        orig.Free()


def test_a_failing_first_call_fails_on_every_rank(monkeypatch):
    # an MPI error reported on one rank only after the collective (as MPI_ERR_TRUNCATE is, on the
    # receiving side) must not leave the other ranks waiting in the next call
    real = bench._Op.run
    calls = {"n": 0}

    def run(self):
        real(self)
        calls["n"] += 1
        if RANK == P - 1 and calls["n"] == 1:
            raise MPI.Exception(MPI.ERR_TRUNCATE)
    monkeypatch.setattr(bench._Op, "run", run)
    with pytest.raises(ltm.CommError, match=f"(?i)failed on rank {P - 1} of {P}: Exception: .*truncat"):
        bench.compare(COMM, COMM, "allreduce", [8], iterations=1)
    assert COMM.allreduce(1) == P


def test_cli_bench_chain_edge_list(tmp_path_factory, capsys):
    from libtopomap.cli import main
    from libtopomap.mpi import collective_call

    def write():
        if RANK == 0:
            d = tmp_path_factory.mktemp("chain")
            ltm.save(str(d / "t.topo"), ltm.torus(f"{P // 2}x2"))
            (d / "t.names").write_text("".join(f"{r} n{v}\n" for r, v in enumerate(_bad_placement())))
            (d / "chain.txt").write_text("".join(f"{k} {k + 1}\n" for k in range(P - 1)))
            return str(d)
    d = COMM.bcast(collective_call(COMM, write, what="writing files"), root=0)
    rc = main(["bench", "--topology", f"{d}/t.topo", "--fake-hosts", f"{d}/t.names", "--graph", f"{d}/chain.txt",
               "--collectives", "neighbor_alltoall", "--sizes", "8,1K", "--iterations", "2", "--json"])
    out = capsys.readouterr().out
    assert COMM.allgather(rc) == [0] * P
    if RANK == 0:
        res = json.loads(out)
        assert [r["variant"] for r in res["results"]] == ["MPI_Neighbor_alltoall"]
        assert [row["size"] for row in res["results"][0]["rows"]] == [8, 1024]


def test_cli_bench_bad_sizes_is_a_usage_error(capsys):
    from libtopomap.cli import main

    rc = main(["bench", "--topology", "unused.topo", "--sizes", "8,12Q"])
    err = capsys.readouterr().err
    # every rank exits 2 (it was 2 on rank 0 and 1 elsewhere, which MPICH's mpiexec ORed into 3: the fuzzer)
    assert COMM.allgather(rc) == [2] * P
    if RANK == 0:
        assert err.strip() == "libtopomap bench: error: bad message size '12Q': expected a positive integer with " \
                              "optional K/M/G"


def test_run_benchmark_tiny():
    res = bench.run_benchmark(COMM, ltm.torus(f"{P // 2}x2"), sizes=(8, 100), iterations=2,
                              placement=_bad_placement(), seed=3)
    assert res["n_processes"] == P
    got = [(r["collective"], r["variant"]) for r in res["results"]]
    assert got == [(c, v) for c in bench.COLLECTIVES for v, _ in bench.VARIANTS[c]]
    for r in res["results"]:
        assert [row["size"] for row in r["rows"]] == [8, 100]
        assert all(row["identical"] for row in r["rows"])
        assert r["after"]["objective"] <= r["before"]["objective"]
        for row in r["rows"]:
            for side in ("original", "reordered"):
                t = row[side]
                assert 0 < t["min_us"] <= t["avg_us"] <= t["max_us"]
    # the halo exchange under a scrambled placement is improved
    nb = [r for r in res["results"] if r["collective"] == "neighbor_alltoall"][0]

    def key(m):
        return m["max_congestion"], m["avg_dilation"]

    assert key(nb["after"]) < key(nb["before"])
    assert COMM.allgather(json.dumps(res["results"][0]["before"])) == [json.dumps(res["results"][0]["before"])] * P


def test_differing_results_are_detected(monkeypatch):
    # one rank pretends its reordered result differs: every rank must raise
    real = bench._Op.digest
    monkeypatch.setattr(bench._Op, "digest",
                        lambda self: real(self) + (1 if RANK == 1 and ltm.report(self.comm) is not None else 0))
    with pytest.raises(ltm.CommError, match="results differ"):
        bench.run_benchmark(COMM, ltm.torus(f"{P // 2}x2"), collectives=["allreduce"], sizes=(8,), iterations=1,
                            placement=_bad_placement(), seed=1)
    assert COMM.allreduce(1) == P


def test_cli_bench_json(tmp_path_factory, capsys):
    from libtopomap.cli import main

    d = topology_and_names(tmp_path_factory, ltm.torus(f"{P // 2}x2"), _bad_placement(), "bench")
    rc = main(["bench", "--topology", f"{d}/t.topo", "--fake-hosts", f"{d}/t.names", "--collectives",
               "bcast,neighbor_alltoall", "--sizes", "8", "--iterations", "2", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    if RANK == 0:
        res = json.loads(out)
        assert [r["variant"] for r in res["results"]] == ["MPI_Bcast", "binomial", "MPI_Neighbor_alltoall"]
        sim = res["simulated"]
        if sim["error"] is None:
            assert [r["exchange"] for r in sim["results"]] == ["bcast (binomial)", "Neighbor_alltoall"]
            halo = sim["results"][1]
            assert halo["sizes"] == [8] and halo["libtopomap_s"][0] < halo["launcher_s"][0]
            assert halo["speedup"][0] == halo["launcher_s"][0] / halo["libtopomap_s"][0]
    else:
        assert out == ""


def _simulated_rows(out):
    """``{(exchange, size): (launcher us, libtopomap us)}`` of the simulated table (header, then rows)."""
    lines = out.splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith("simulated on the modelled network ("))
    rows = {}
    for ln in lines[k + 2:]:
        if not ln.strip():
            break
        *name, size, before, after, speedup = ln.split()
        rows[" ".join(name), size] = (float(before), float(after))
        assert speedup.endswith("x") and float(speedup[:-1]) == pytest.approx(float(before) / float(after), rel=0.01)
    return lines[k], rows


# The demo's launcher placement (bundled demo_torus_4x2.names) simulated by SMPI (CM02, table routing): exact,
# as in tests/test_cli_simulated.py, printed with 4 digits (us)
SMPI_DEMO_LAUNCHER = {4: {"8": 0.6132, "16K": 5.559}, 8: {"8": 0.6132, "16K": 9.495}}


def test_cli_demo(capsys):
    from libtopomap.cli import main

    rc = main(["demo", "--sizes", "8,16K", "--iterations", "2"])
    out = capsys.readouterr().out
    assert COMM.allgather(rc) == [0] * P
    if RANK == 0:
        assert f"libtopomap demo: {P} ranks" in out and "winner: " in out
        lines = {ln.split()[0] + ln.split()[1]: ln.split()[2:] for ln in out.splitlines()
                 if ln.startswith(("max congestion", "avg dilation"))}
        before, after = map(float, lines["maxcongestion"])
        assert after < before
        assert "Neighbor_alltoall" in out and "orig avg" in out
        if "simulated on the modelled network: not available" in out:
            pytest.skip("no simulator: " + out.split("not available", 1)[1].splitlines()[0])
        header, rows = _simulated_rows(out)
        assert "simulated time, not measured here" in header
        assert sorted(rows) == [("Neighbor_alltoall", "16K"), ("Neighbor_alltoall", "8")]
        assert all(a < b for b, a in rows.values())     # libtopomap's mapping beats the launcher's placement
        if "(SMPI, CM02 model, table routing;" in header:
            assert {s: b for (_, s), (b, _) in rows.items()} == SMPI_DEMO_LAUNCHER[P]
    else:
        assert out == ""


def test_cli_bench_prints_simulated_lines(tmp_path_factory, capsys):
    from libtopomap.cli import main

    d = topology_and_names(tmp_path_factory, ltm.torus(f"{P // 2}x2"), _bad_placement(), "benchsim")
    rc = main(["bench", "--topology", f"{d}/t.topo", "--fake-names", f"{d}/t.names", "--collectives",
               "allreduce,neighbor_alltoall", "--sizes", "8,4K", "--iterations", "1"])
    out = capsys.readouterr().out
    assert COMM.allgather(rc) == [0] * P
    if RANK != 0:
        assert out == ""
        return
    if "simulated on the modelled network: not available" in out:
        pytest.skip("no simulator: " + out.split("not available", 1)[1].splitlines()[0])
    assert out.index("# neighbor_alltoall") < out.index("simulated on the modelled network")   # after the real ones
    header, rows = _simulated_rows(out)
    assert "simulated time, not measured here" in header
    assert sorted(rows) == [("Neighbor_alltoall", "4K"), ("Neighbor_alltoall", "8"),
                            ("allreduce (recursive doubling)", "4K"), ("allreduce (recursive doubling)", "8")]
    assert all(rows["Neighbor_alltoall", s][1] < rows["Neighbor_alltoall", s][0] for s in ("8", "4K"))



def test_run_benchmark_checks_its_arguments_on_every_rank_first():
    # the validation door (check_choice, check_graph) agreed on before any other MPI call, as by the other MPI calls
    topo = ltm.torus(f"{P // 2}x2")
    all_same(raised(lambda: bench.run_benchmark(COMM, topo, graph=5, sizes=(8,), iterations=1)),
             "CommGraphError", "cannot make a communication graph from int")
    all_same(raised(lambda: bench.run_benchmark(COMM, topo, collectives=["gather"], sizes=(8,), iterations=1)),
             "ChoiceError", "unknown collective 'gather'")
    # a graph on one rank only: the same error everywhere, nobody waits in a collective
    graph = ltm.stencil([P + 1]) if RANK == P - 1 else None
    all_same(raised(lambda: bench.run_benchmark(COMM, topo, graph=graph, sizes=(8,), iterations=1)),
             "CommError", f"rank {P - 1}", f"the graph has {P + 1} processes")
    graph = ltm.random_graph(P, 2, seed=1) if RANK == P - 1 else None
    all_same(raised(lambda: bench.run_benchmark(COMM, topo, graph=graph, sizes=(8,), iterations=1)),
             "CommError", "graph", "differ between ranks")
