"""The portfolio race under MPI: per-node memory bound, who maps, same winner as offline, ``map`` under mpiexec.

Run under real MPI by tests/test_mpi_suite.py (4 and 8 ranks, all on this machine: one node).
Assertions are made on ``allgather``-ed values so all ranks agree.
"""

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
from libtopomap.cli import main
from libtopomap.mpi import collective_call
from libtopomap.mpi.bench import graph_lists
from libtopomap.mpi.driver import node_layout
from libtopomap.portfolio import estimate_memory, format_bytes

COMM = MPI.COMM_WORLD
RANK = COMM.Get_rank()
P = COMM.Get_size()
STRATS = ("greedy", "rcm", "random", "recursive")


def _torus():
    return ltm.torus(f"{P // 2}x2")


def _graph(seed=3):
    """A weighted random graph on P processes (the same on every rank), symmetric, integer weights."""
    rng = np.random.default_rng(seed)
    pairs = {(a, b) for a in range(P) for b in range(a + 1, P) if rng.random() < 0.6}
    pairs |= {(r, (r + 1) % P) if r < (r + 1) % P else ((r + 1) % P, r) for r in range(P)}
    src, dst, w = [], [], []
    for a, b in sorted(pairs):
        x = int(rng.integers(1, 9))
        src += [a, b]
        dst += [b, a]
        w += [x, x]
    return ltm.CommGraph(P, src, dst, w)


def _bad_placement(g, seed=5):
    rng = np.random.default_rng(seed)
    topo = _torus()
    perms = [rng.permutation(P) for _ in range(16)]
    return [int(v) for v in max(perms, key=lambda v: (ltm.max_congestion(topo, g, v), ltm.hop_bytes(topo, g, v)))]


def _r(x):
    """Scores as the selection compares them (12 significant digits: sums in another order, e.g. with
    another number of numba threads, tie)."""
    return float(f"{x:.12g}")


def _agree(ok):
    return all(COMM.allgather(bool(ok)))


def _valid(rep):
    """A bijection of ranks and of the job's slots, never worse than the current placement."""
    return (sorted(rep.new_rank_of.tolist()) == list(range(P))
            and sorted(rep.vertices_after.tolist()) == sorted(rep.vertices_before.tolist())
            and (rep.after["objective"], rep.after["avg_congestion"], rep.after["hop_bytes"])
            <= (rep.before["objective"], rep.before["avg_congestion"], rep.before["hop_bytes"]))


def test_all_ranks_of_mpiexec_on_this_machine_are_one_node():
    leaders, cores, memory = node_layout(COMM)
    assert leaders.tolist() == [0] * P
    assert cores.min() == cores.max() >= 1 and memory.min() == memory.max() > 0


def test_tiny_max_memory_only_one_rank_per_node_maps():
    g = _graph()
    topo = _torus()
    peak = max(estimate_memory(s, topo, g, refine="ta") for s in STRATS + ("identity",))
    s, d, sw, dw = graph_lists(g, RANK)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=_bad_placement(g), seed=3,
                                        strategies=STRATS, refine="ta", max_memory=peak + peak // 2)
    rep = ltm.report(dc)
    ok = rep.plan["mapping_ranks"] == [0] and set(rep.plan["assignment"]) == {0}
    # one rank maps, so the portfolio has one candidate per strategy, all run on rank 0, with every core
    ok &= [c["rank"] for c in rep.candidates] == [0] * len(STRATS)
    ok &= [c["strategy"].split("+")[0] for c in rep.candidates] == list(STRATS)
    ok &= rep.plan["threads"] == {0: len(os.sched_getaffinity(0)) if RANK == 0 else rep.plan["threads"][0]}
    ok &= rep.skipped == [] and _valid(rep) and rep.improved
    ok &= COMM.allgather(rep.new_rank_of.tolist()) == [rep.new_rank_of.tolist()] * P
    dc.Free()
    assert _agree(ok)


def test_strategies_over_the_bound_are_skipped_with_a_reason():
    g = _graph(4)
    topo = _torus()
    budget = estimate_memory("rcm", topo, g)
    assert estimate_memory("recursive", topo, g) > budget >= estimate_memory("greedy", topo, g)
    s, d, sw, dw = graph_lists(g, RANK)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=_bad_placement(g), seed=1,
                                        strategies=STRATS, max_memory=budget)
    rep = ltm.report(dc)
    est = format_bytes(estimate_memory("recursive", topo, g))
    reason = f"recursive skipped: estimated {est} > max_memory {format_bytes(budget)} per node"
    # the bound fits one rcm at a time: one rank maps, so one candidate per strategy
    ok = rep.skipped == [reason] and rep.plan["mapping_ranks"] == [0]
    ok &= "recursive" not in {c["strategy"] for c in rep.candidates} and _valid(rep)
    ok &= reason in rep.summary()
    dc.Free()
    # nothing fits: the current placement is kept, every strategy skipped
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=_bad_placement(g), seed=1,
                                        strategies=STRATS, max_memory=1)
    rep = ltm.report(dc)
    ok &= rep.strategy == "identity" and not rep.improved and rep.candidates == [] and dc.Get_rank() == RANK
    ok &= len(rep.skipped) == len(STRATS) and all(x.endswith("> max_memory 1 B per node") for x in rep.skipped)
    dc.Free()
    assert _agree(ok)


def test_constructions_out_of_the_budget_are_skipped_with_the_reason(monkeypatch):
    import libtopomap.portfolio

    g = _graph(5)
    topo = _torus()
    s, d, sw, dw = graph_lists(g, RANK)
    # recursive estimated far beyond the constructions' share of 10 s, the others well within it
    monkeypatch.setitem(libtopomap.portfolio.budget._SECONDS_PER_UNIT["default"], "recursive", 1e3)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=_bad_placement(g), seed=2,
                                        strategies=STRATS, total_budget=10.0)
    rep = ltm.report(dc)
    ran = {c["strategy"] for c in rep.candidates}
    ok = "recursive" not in ran and {"greedy", "rcm", "random"} <= ran and _valid(rep)
    ok &= len(rep.skipped) == sum(1 for k in range(max(P, len(STRATS))) if STRATS[k % len(STRATS)] == "recursive")
    # the serial driver's reason, and the rank that skipped it
    ok &= all(x.startswith("recursive skipped: estimated ") and "s left of the constructions' share of the 10 s "
              "budget (rank " in x for x in rep.skipped)
    dc.Free()
    # nothing fits in the budget: the current placement is kept, every construction skipped
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=_bad_placement(g), seed=2,
                                        strategies=STRATS, total_budget=1e-6)
    rep = ltm.report(dc)
    ok &= rep.strategy == "identity" and not rep.improved and rep.candidates == [] and dc.Get_rank() == RANK
    ok &= len(rep.skipped) == max(P, len(STRATS)) and all("of the 1e-06 s budget" in x for x in rep.skipped)
    dc.Free()
    assert _agree(ok), (rep.skipped, rep.candidates)


def test_the_budget_is_agreed_like_every_option():
    g = _graph(5)
    s, d, sw, dw = graph_lists(g, RANK)
    with pytest.raises(ltm.CommError, match="total_budget differ between ranks"):
        ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=_torus(), placement=list(range(P)), seed=2,
                                       strategies=STRATS, total_budget=10.0 + (RANK == 1))
    # a bad budget everywhere: the same ArgumentError on every rank, before any collective data
    with pytest.raises(ltm.ArgumentError, match="total_budget must be a number of seconds > 0"):
        ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=_torus(), placement=list(range(P)), seed=2,
                                       total_budget=0)


def test_the_race_agrees_on_the_problems_budget():
    # the driver itself (what `libtopomap map` under mpiexec calls) refuses problems with different budgets
    from libtopomap.mpi.driver import race
    from libtopomap.portfolio import MappingProblem, make_candidates

    topo, g = _torus(), _graph(5)
    problem = MappingProblem(topo, g, total_budget=5.0 if RANK else 6.0)
    with pytest.raises(ltm.CommError, match="total_budget differ between ranks"):
        race(COMM, problem, lambda n: make_candidates(["rcm"], seed=0, count=n))


def _constructions_per_rank(problem, strategies):
    """(winner label, skipped reasons, constructions each rank started) of one race of ``problem``."""
    from libtopomap.mpi.driver import race
    from libtopomap.portfolio import make_candidates

    started = []

    def progress(phase, cand, outcome):
        if phase == "construct" and outcome is None:
            started.append(cand.index)
    result = race(COMM, problem, lambda n: make_candidates(strategies, seed=0, count=n), progress=progress)
    return result.winner.label, [x.reason for x in result.skipped], COMM.allgather(len(started))


def test_a_probe_at_the_lower_bound_ends_the_race_before_the_other_ranks_construct():
    # a scrambled 2-D torus stencil on its own torus: greedy (candidate 1, on rank 0 with the current
    # placement) reaches the lower bounds; with more ranks than cores nobody else constructs anything
    from libtopomap.mpi.driver import node_layout
    from libtopomap.patterns import scrambled_torus
    from libtopomap.portfolio import MappingProblem

    dims = (P // 2, 4)
    topo, g = ltm.torus(f"{dims[0]}x{dims[1]}"), scrambled_torus(dims, 3)
    label, skipped, started = _constructions_per_rank(MappingProblem(topo, g), ("greedy", "rcm", "random"))
    _, cores, _ = node_layout(COMM)
    oversubscribed = P > int(cores[0])  # every rank of mpiexec on this machine is one node
    ok = label == "greedy" and all(x.endswith("skipped: greedy (candidate 1) reached the lower bound")
                                   for x in skipped) and len(skipped) == max(P, 3) - 1
    if oversubscribed:
        ok &= started == [2] + [0] * (P - 1)
    else:  # a core per rank: every rank runs its candidates at once, the later ones are dropped
        ok &= started[0] == 2 and sum(started) == max(P, 3) + 1
    # no bound within reach (two slots per vertex): no probe, every rank constructs its candidate
    two = ltm.Topology(topo.names, np.stack([topo.link_u, topo.link_v], 1), slots=np.full(topo.n_vertices, 2))
    label, skipped, started = _constructions_per_rank(MappingProblem(two, g), ("greedy", "rcm", "random"))
    ok &= skipped == [] and sum(started) == max(P, 3) + 1 and all(n >= 1 for n in started)
    assert _agree(ok), (label, skipped, started)


def _shared_dir(tmp_path_factory):
    def make():
        if RANK == 0:
            return str(tmp_path_factory.mktemp("portfolio"))
    return COMM.bcast(collective_call(COMM, make, what="making a directory"), root=0)


@pytest.mark.parametrize("refine", [None, "ta"])
def test_offline_map_and_mpi_layer_pick_the_same(tmp_path_factory, refine):
    g = _graph(7)
    topo = _torus()
    where = _shared_dir(tmp_path_factory)
    # JSON keeps what the torus is (its grid shape, which dual-bisection cuts along); ltm text would not
    tfile, gfile, mfile = (os.path.join(where, x) for x in ("t.json", "g.txt", "m.txt"))
    strategies = tuple(x for x in ltm.portfolio.STRATEGY_ORDER if x in ltm.STRATEGIES)  # as map --strategy all

    def offline():
        if RANK != 0:
            return None
        ltm.save(tfile, topo)
        with open(gfile, "w") as f:
            f.writelines(f"{a} {b} {int(w)}\n" for a, b, w in zip(g.src.tolist(), g.dst.tolist(), g.weights.tolist()))
        # a plain process: no MPI launcher in its environment, so the command runs serially
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PMI_", "OMPI_", "PMIX_", "MPI_LOCAL", "HYDRA", "MPIR_"))}
        cmd = [sys.executable, "-c", "import sys; from libtopomap.cli import main; sys.exit(main())", "map",
               "--topology", tfile, "--graph", gfile, "--strategy", "all", "--seed", "7", "--json", "--output", mfile]
        cmd += ["--refine", refine] if refine else []
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=200)
        assert out.returncode == 0, out.stderr[-3000:]
        recs = json.loads(out.stdout)
        with open(mfile) as f:
            names = [line.split()[1] for line in f]
        return recs, names
    recs, names = COMM.bcast(collective_call(COMM, offline, what="running the offline map"), root=0)
    # the MPI layer, on the same instance: the job fills the torus's slots in vertex order
    s, d, sw, dw = graph_lists(g, RANK)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=list(range(P)), seed=7,
                                        strategies=strategies, refine=refine)
    rep = ltm.report(dc)
    chosen = next(r for r in recs if r["chosen"])
    mpi_label = "current" if rep.winner_rank is None else rep.strategy
    # at -n 4 both race the same candidates (one per strategy): the same winner and every score
    if P <= len(strategies):
        ok = mpi_label == chosen["strategy"]
        ok &= [topo.names[v] for v in rep.vertices_after.tolist()] == names
        offline_scores = [(r["strategy"], _r(r["objective"]), _r(r["hopbytes"])) for r in recs[1:]
                          if "skipped" not in r]
        mpi_scores = [(c["strategy"], _r(c["value"]), _r(c["tiebreak"])) for c in rep.candidates]
        ok &= offline_scores == mpi_scores
    else:
        # more ranks race more candidates: the offline ones (same seeds) and more; the best
        # constructions of the offline list are among the ones refined here, so never worse
        after = (_r(rep.after["objective"]), _r(rep.after["avg_congestion"]), _r(rep.after["hop_bytes"]))
        ok = after <= (_r(chosen["objective"]), _r(chosen["avg_congestion"]), _r(chosen["hopbytes"]))
    dc.Free()
    assert _agree(ok), (mpi_label, chosen, rep.candidates, recs)


def _run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def test_map_command_races_over_ranks(tmp_path_factory):
    where = _shared_dir(tmp_path_factory)
    tfile = os.path.join(where, "t44.ltm")
    collective_call(COMM, lambda: ltm.save(tfile, ltm.torus("4x4")) if RANK == 0 else None, what="writing")
    COMM.Barrier()
    argv = ["map", "--topology", tfile, "--graph", "torus-scrambled:4x4:2", "--strategy", "all", "--json",
            "--refine", "two-opt", "--seed", "3"]
    rc, out, err = _run_cli(argv)
    rcs = COMM.allgather(rc)
    outs = COMM.allgather(out)
    ok = rcs == [0] * P and all(o == "" for o in outs[1:]) and err == ""
    recs = json.loads(outs[0])
    ran = [r for r in recs if "skipped" not in r]
    # every candidate up to the first at the lower bound (greedy reaches it here) ran once, spread over
    # the ranks (candidate k on rank k mod P, current on rank 0); the later ones are skipped
    ok &= [r["rank"] for r in ran] == [0] + [k % P for k in range(len(ran) - 1)]
    ok &= ran[-1]["strategy"] == "greedy" and len(ran) + len(recs[len(ran):]) == 1 + len(ltm.STRATEGIES)
    ok &= all(r["skipped"].endswith("reached the lower bound") for r in recs[len(ran):])
    # the same table as the serial command
    from libtopomap.cli import _map
    from libtopomap.portfolio import run_portfolio

    import argparse
    ns = argparse.Namespace(topology=tfile, graph="torus-scrambled:4x4:2", strategy="all", refine="two-opt",
                            objective="congestion", seed=3, time_budget=None, iterations=None, max_memory=None)
    _, problem, cands, budget = _map._prepare(ns)
    serial = run_portfolio(problem, cands, max_memory=budget)
    same = [(r["strategy"], _r(r["objective"])) for r in ran]
    ref = [(o.label, _r(o.metrics["objective"])) for o in serial.outcomes]
    chosen = next(r["strategy"] for r in ran if r["chosen"])
    checks = [ok, same == ref, chosen == serial.winner.label]
    assert _agree(all(checks)), (checks, [(r["strategy"], r["objective"]) for r in ran],
                                 [(o.label, o.metrics["objective"]) for o in serial.outcomes])


def test_map_command_failure_reaches_every_rank(tmp_path_factory):
    where = _shared_dir(tmp_path_factory)
    tfile = os.path.join(where, "t44b.ltm")
    collective_call(COMM, lambda: ltm.save(tfile, ltm.torus("4x4")) if RANK == 0 else None, what="writing")
    COMM.Barrier()
    # a graph that only rank 1 cannot read: one clear error, printed once, exit 1 everywhere
    graph = "stencil:4x4" if RANK != 1 else os.path.join(where, "missing.txt")
    rc, out, err = _run_cli(["map", "--topology", tfile, "--graph", graph])
    rcs, outs, errs = COMM.allgather(rc), COMM.allgather(out), COMM.allgather(err)
    assert rcs == [1] * P and outs == [""] * P
    assert errs[0].startswith(f"libtopomap map: error: reading the inputs failed on rank 1 of {P}")
    assert "missing.txt" in errs[0] and errs[1:] == [""] * (P - 1)
