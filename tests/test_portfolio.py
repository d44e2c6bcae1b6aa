"""The MPI-free portfolio driver: candidates, selection order, lower bounds, memory plan, serial race."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.errors import MappingError
from libtopomap.metrics import lower_bounds
from libtopomap.portfolio import (REFINE_BEST, REFINE_GAIN, Candidate, MappingProblem, Outcome, STRATEGY_ORDER,
                                  assign_candidates, candidate_seed, default_iterations, estimate_memory, format_bytes,
                                  make_candidates, numba_threads, plan_ranks, refinement_choice, run_portfolio, select,
                                  selection_key)
from libtopomap.portfolio.selection import rounded_key


def test_candidates_are_positional_and_deterministic():
    a = make_candidates(["greedy", "rcm", "random"], seed=7, refine="ta", count=5, starts=[3, 9])
    b = make_candidates(["greedy", "rcm", "random"], seed=7, refine="ta", count=5, starts=[3, 9])
    assert a == b
    assert a[0] == Candidate(0, "identity") and a[0].label == "current"
    assert [c.strategy for c in a[1:]] == ["greedy", "rcm", "random", "greedy", "rcm"]
    assert [c.start for c in a[1:]] == [3, 3, 3, 9, 9]
    assert [c.seed for c in a[1:]] == [candidate_seed(7, k) for k in range(5)]
    assert len({c.seed for c in a[1:]}) == 5 and all(c.refine == "ta" for c in a[1:])
    # count never drops a strategy; the old per-rank seeds are candidate_seed(base, rank)
    assert len(make_candidates(["greedy", "rcm"], seed=0, count=1)) == 3
    assert candidate_seed(5, 2) == int(np.random.SeedSequence([5, 2]).generate_state(1, dtype=np.uint32)[0])
    with pytest.raises(MappingError):
        make_candidates([], seed=0)


def _outcome(index, strategy, key):
    return Outcome(Candidate(index, strategy), strategy, key, {})


def test_selection_order():
    cur = _outcome(0, "identity", (2.0, 1.0, 10.0))
    # lower objective first, whatever the rest
    assert select([cur, _outcome(1, "random", (1.0, 9.0, 99.0))]).candidate.index == 1
    # objective tie: the tie-break (average congestion or phase time), then hop-bytes decide (not the list order)
    a, b = _outcome(1, "random", (2.0, 1.0, 12.0)), _outcome(2, "greedy", (2.0, 1.0, 11.0))
    assert select([a, b]).candidate.strategy == "greedy"
    # a full tie keeps the current placement, then follows the fixed strategy order
    tied = [_outcome(3, "random", (2.0, 1.0, 10.0)), _outcome(2, "rcm", (2.0, 1.0, 10.0)),
            _outcome(1, "identity", (2.0, 1.0, 10.0))]
    assert select(tied + [cur]) is cur
    # a tie of the objective and the tie-break keeps the current placement too: hop-bytes orders the others only
    fewer_hops = _outcome(2, "greedy", (2.0, 1.0, 9.0))
    assert select([fewer_hops, cur]) is cur and select([fewer_hops, a]) is fewer_hops
    assert select([_outcome(1, "greedy", (2.0, 0.9, 99.0)), cur]).candidate.index == 1
    assert [o.candidate.strategy for o in sorted(tied, key=lambda o: selection_key(
        o.key, o.candidate.strategy, o.candidate.index))] == ["rcm", "random", "identity"]
    assert STRATEGY_ORDER.index("greedy") < STRATEGY_ORDER.index("random")
    # values equal up to summation order tie; NaN loses
    assert selection_key((0.1 + 0.2, 1.0), "rcm", 1)[:2] == selection_key((0.3, 1.0), "rcm", 1)[:2]
    assert select([_outcome(1, "greedy", (float("nan"), 0.0, 0.0)), cur]) is cur


def test_lower_bounds_hold_and_are_reached():
    topo = ltm.torus("6x6")
    g = ltm.load_graph("torus-scrambled:6x6:3")
    b = lower_bounds(topo, g, topo.slots)
    assert b == {"congestion": 1.0, "dilation": 1.0, "hopbytes": float(g.weights.sum())}
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.permutation(36)
        q = ltm.evaluate(topo, g, v)
        assert q["max_congestion"] >= b["congestion"] - 1e-12 and q["hop_bytes"] >= b["hopbytes"]
    # two processes per host: no bound is known
    t2 = ltm.Topology(topo.names, np.stack([topo.link_u, topo.link_v], 1), slots=np.full(36, 2))
    assert lower_bounds(t2, g, t2.slots) == {"congestion": 0.0, "dilation": 0.0, "hopbytes": 0.0}


def test_refinement_skipped_at_lower_bound():
    topo = ltm.torus("6x6")
    g = ltm.load_graph("torus-scrambled:6x6:3")
    prob = MappingProblem(topo, g, objective="congestion")
    cands = make_candidates(["greedy", "random"], seed=1, refine="ta")
    res = run_portfolio(prob, cands)
    greedy = next(o for o in res.outcomes if o.candidate.strategy == "greedy")
    assert greedy.label == "greedy" and greedy.note == "ta skipped: at the lower bound"
    assert greedy.metrics["max_congestion"] == 1.0 and res.winner is greedy
    # greedy (candidate 1) reached the bound: random (candidate 2) is not run
    assert [o.candidate.index for o in res.outcomes] == [0, 1]
    assert [s.reason for s in res.skipped] == ["random+ta skipped: greedy (candidate 1) reached the lower bound"]
    # random first: built, then left unrefined for the same reason
    res = run_portfolio(prob, make_candidates(["random", "greedy"], seed=1, refine="ta"))
    assert [o.label for o in res.outcomes] == ["current", "random", "greedy"] and res.skipped == []
    assert res.outcomes[1].note == "ta skipped: greedy (candidate 2) reached the lower bound"
    assert res.winner is res.outcomes[2]


def test_only_the_best_constructions_are_refined():
    topo = ltm.torus("4x4x2")
    g = ltm.load_graph("random:32:3:5")
    prob = MappingProblem(topo, g, objective="congestion", iterations=200)
    cands = make_candidates(["random", "rcm", "recursive"], seed=2, refine="ta")
    res = run_portfolio(prob, cands)
    built = {c.index: prob.construct(c) for c in cands}
    assert not any(o.at_bound for o in built.values())
    best = sorted(built.values(), key=lambda o: selection_key(o.key, o.candidate.strategy, o.candidate.index)
                  if o.candidate.index else (np.inf,))[:REFINE_BEST]
    assert refinement_choice(built.values(), cands) == {o.candidate.index for o in best}
    # the race also drops those that cannot win (test_constructions_that_cannot_win_are_not_refined)
    chosen = refinement_choice(built.values(), cands, reach=prob.refine_reach)
    assert chosen <= {o.candidate.index for o in best}
    for o in res.outcomes[1:]:
        if o.candidate.index in chosen:
            assert o.label.endswith("+ta") or o.note == "ta kept the construction"
            assert o.key <= built[o.candidate.index].key
        else:  # left as built, with the reason
            assert o.label == built[o.candidate.index].label
            assert o.note == "ta skipped: not among the best constructions"
            assert np.array_equal(o.payload, built[o.candidate.index].payload)
    # two rounds of candidates (the MPI layer with more ranks): twice as many refinements
    more = make_candidates(["random", "rcm", "recursive"], seed=2, refine="ta", count=6)
    assert len(refinement_choice([prob.construct(c) for c in more], more)) == 2 * REFINE_BEST


def test_constructions_that_cannot_win_are_not_refined():
    # bench_quality's 4-ary 3-tree with a scrambled 8x8 stencil: every construction at the bound of maximum
    # congestion (4, the injection links), multisection's average congestion 2.333, greedy's 2.615: even
    # divided by greedy's largest measured gain it stays above, so greedy is not refined, and refining it
    # anyway does not change the winner
    topo = ltm.fattree(4, 3)
    g = ltm.load_graph("torus-scrambled:8x8:0")
    prob = MappingProblem(topo, g, objective="congestion")
    cands = make_candidates(["greedy", "multisection"], seed=1, refine="ta")
    built = {c.index: prob.construct(c) for c in cands}
    assert not any(o.at_bound for o in built.values())
    gre, ms = built[1], built[2]
    assert gre.key[0] == ms.key[0] == prob.bounds["congestion"]
    assert gre.key[1] / REFINE_GAIN["greedy"][1] > ms.key[1]
    assert rounded_key(prob.refine_reach(gre)) > rounded_key(ms.key)
    assert refinement_choice(built.values(), cands) == {1, 2}  # both among the REFINE_BEST best
    assert refinement_choice(built.values(), cands, reach=prob.refine_reach) == {2}
    every = [built[0]] + [prob.refine(c, built[c.index]) for c in cands[1:]]
    res = run_portfolio(prob, cands)
    assert res.outcomes[1].note == "ta skipped: not among the best constructions"
    assert rounded_key(every[1].key) > rounded_key(every[2].key)  # refined anyway, greedy still loses
    assert select(every).candidate.index == res.winner.candidate.index == 2
    # a reach that ties the best construction keeps the candidate (ties go to the strategy order)
    assert refinement_choice(built.values(), cands, reach=lambda o: ms.key) == {1, 2}
    # a refinement budget in seconds may walk further than measured, as may an unmeasured strategy: no cut
    timed = MappingProblem(topo, g, objective="congestion", time_budget=0.1)
    assert refinement_choice(built.values(), cands, reach=timed.refine_reach) == {1, 2}
    assert all(x == 0.0 for x in prob.refine_reach(Outcome(Candidate(5, "diagonal-shift"), "", gre.key, {})))


def test_serial_race_is_deterministic_and_never_worse():
    topo = ltm.torus("4x4x2")
    g = ltm.load_graph("random:32:3:5")
    prob = MappingProblem(topo, g, objective="congestion", iterations=300)
    cands = make_candidates(["random", "greedy", "rcm", "recursive"], seed=11, refine="two-opt")
    r1, r2 = run_portfolio(prob, cands), run_portfolio(prob, cands)
    assert r1.winner.candidate == r2.winner.candidate
    assert np.array_equal(r1.winner.payload, r2.winner.payload)
    assert [o.key for o in r1.outcomes] == [o.key for o in r2.outcomes]
    assert r1.winner.key <= r1.baseline.key
    # a bijection into the slots
    assert sorted(r1.winner.payload.tolist()) == list(range(32))
    assert r1.winner is select(r1.outcomes)


def test_estimate_memory_formulas():
    topo, g = ltm.torus("8x8"), ltm.load_graph("stencil:8x8")
    P, E, n, A, H = g.n, g.n_edges, topo.n_vertices, topo.n_arcs, topo.hosts.size
    score = n * n + 48 * A + 64 * E + 32 * P + 64 * n
    assert estimate_memory("identity", topo, g) == score + 16 * P
    assert estimate_memory("rcm", topo, g) == score + 96 * (E + A) + 64 * (P + n)
    assert estimate_memory("greedy", topo, g) == score + 2 * H * H + 64 * (P + n + A) + 48 * E
    refine = 384 * H + 48 * n + 8 * (3 * A + 6 * P + 12 * E + 2 * topo.slots.sum()) + 16 * 2**20 + 128 * A
    assert estimate_memory("rcm", topo, g, refine="ta") == estimate_memory("rcm", topo, g) + refine
    # the linear strategies stay linear beyond the dense thresholds: 262,144 processes on a 64^3 torus
    mid, mg = ltm.torus("32x32x32"), ltm.load_graph("stencil:32x32x32")
    big, bg = ltm.torus("64x64x64"), ltm.load_graph("stencil:64x64x64")
    for s in ("identity", "random", "rcm", "recursive", "scotch", "greedy"):
        assert estimate_memory(s, big, bg) <= 8 * estimate_memory(s, mid, mg)
    assert estimate_memory("recursive", big, bg) < 1.5 * 2**30
    for obj in ("congestion", "hopbytes"):  # so do the refinements (no distance matrix in the engine)
        assert estimate_memory("identity", big, bg, refine="ta", objective=obj) <= 8 * estimate_memory(
            "identity", mid, mg, refine="ta", objective=obj)
    with pytest.raises(MappingError):
        estimate_memory("magic", topo, g)
    assert format_bytes(3.2e9) == "3.2 GB"


def test_plan_ranks_and_assignment():
    nodes = [0, 0, 0, 0, 4, 4, 4, 4]
    # everything fits 4 times: every rank maps, round robin over the nodes
    ranks, fits = plan_ranks(nodes, [10, 20], 100)
    assert ranks == [0, 4, 1, 5, 2, 6, 3, 7] and fits == [True, True]
    # room for one at a time per node; the 30-byte strategy does not fit at all
    ranks, fits = plan_ranks(nodes, [10, 20, 30], 25)
    assert ranks == [0, 4] and fits == [True, True, False]
    # nothing fits: one rank scores the current placement
    assert plan_ranks(nodes, [10], 5)[0] == [0, 4]
    assert assign_candidates([0, 1, 2, 3, 4], [0, 4]) == {0: [0, 1, 3], 4: [2, 4]}
    assert numba_threads(2, 6) == 1 and numba_threads(64, 4) == 16


def test_default_iterations():
    assert default_iterations(1) == 2000 and default_iterations(1728) == 6912 and default_iterations(10**6) == 20000
    prob = MappingProblem(ltm.torus("4x4"), ltm.load_graph("stencil:4x4"))
    assert prob.iterations == 2000
    assert MappingProblem(ltm.torus("4x4"), ltm.load_graph("stencil:4x4"), time_budget=1.0).iterations is None


def test_portfolio_does_not_import_mpi4py():
    import subprocess
    import sys

    code = ("import sys, libtopomap.portfolio as p, libtopomap as ltm; "
            "p.run_portfolio(p.MappingProblem(ltm.torus('4x4'), ltm.load_graph('stencil:4x4')), "
            "p.make_candidates(['greedy'], seed=0)); assert 'mpi4py' not in sys.modules")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]


def test_placement_keyword_and_its_old_name():
    from libtopomap.errors import ArgumentTypeError

    t, g = ltm.torus("4x4"), ltm.load_graph("stencil:4x4")
    start = np.arange(16)[::-1].copy()
    prob = MappingProblem(t, g, placement=start)
    assert prob.placement.tolist() == start.tolist()
    with pytest.warns(DeprecationWarning, match=r"MappingProblem\(current=...\) is deprecated; use placement="):
        old = MappingProblem(t, g, current=start)
    assert old.placement.tolist() == start.tolist()
    with pytest.warns(DeprecationWarning, match="MappingProblem.current is deprecated"):
        assert old.current.tolist() == start.tolist()
    with pytest.raises(ArgumentTypeError, match="got both placement and current"), pytest.warns(DeprecationWarning):
        MappingProblem(t, g, current=start, placement=start)
    # candidate 0 is that placement
    out = prob.construct(make_candidates(["greedy"], seed=0)[0])
    assert out.payload.tolist() == start.tolist()


def test_a_refinement_that_adds_traffic_gives_its_construction_back(monkeypatch):
    """Same maximum congestion, more hop-bytes: the race's score is worse, so the construction stays."""
    import libtopomap.mappers

    t, g = ltm.fattree(4, 3), ltm.load_graph("torus-scrambled:8x8:0")
    p = MappingProblem(t, g, objective="congestion", iterations=100)
    c = make_candidates(["multisection"], seed=0, refine="ta")[1]
    built = p.construct(c)
    worse = np.random.default_rng(0).permutation(t.hosts)[:g.n].astype(np.int64)
    assert ltm.evaluate(t, g, worse)["max_congestion"] == built.key[0]  # 4: a tie on the objective
    assert ltm.evaluate(t, g, worse)["hop_bytes"] > built.key[2]

    def fake(topology, g, start, slots, objective, **kw):
        return worse, 4.0, 4.0, {"stopped": "moves"}

    # the race refines with map_processes' one chain (libtopomap.mappers.apply_refinement): replace its "ta"
    monkeypatch.setitem(libtopomap.mappers._SEARCH, "ta", fake)
    out = p.refine(c, built)
    assert out.note == "ta kept the construction"
    assert np.array_equal(out.payload, built.payload) and out.key == built.key
