"""The one local-search engine (libtopomap.mappers.local_search): exact running scores from oracle
distances, mapping invariants, early stops and the wall-clock budget."""

import time

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.mappers import map_processes, refine_threshold_accepting, refine_two_opt
from libtopomap.distances import near_slot_vertices
from libtopomap.mappers.local_search import SwapState, local_search
from libtopomap.mappers.threshold_accepting import ta_thresholds
from libtopomap.patterns import random_graph, scrambled_torus, stencil


def _check_state(state, topo, slots):
    # every process on one slot of its vertex, every slot used at most once
    P = state.proc_vertex.size
    assert np.array_equal(state.slot_vertex[state.proc_slot], state.proc_vertex)
    assert np.array_equal(state.occupant[state.proc_slot], np.arange(P))
    assert (state.occupant >= 0).sum() == P
    assert np.all(np.bincount(state.proc_vertex, minlength=topo.n_vertices) <= slots)


@pytest.mark.parametrize("topo", [ltm.concentrate(ltm.torus("3x3"), 2), ltm.fattree(2, 4), ltm.mesh("3x4"),
                                  ltm.torus("3x4x5"), ltm.concentrate(ltm.mesh("2x3x2"), 2)],
                         ids=["ctorus", "fattree", "mesh", "torus3d", "cmesh3d"])
@pytest.mark.parametrize("objective", ["hopbytes", "congestion"])
def test_running_score_matches_metrics_after_random_moves(topo, objective):
    slots = topo.slots.astype(np.int64)
    P = min(14, int(slots.sum()) - 1)  # a free slot: shifts happen too
    g = random_graph(P, 4, seed=2)
    start = map_processes(topo, g, strategy="random", slots=slots, seed=0).vertices
    state = SwapState(topo, g, start, slots, objective)
    rng = np.random.default_rng(0)
    for _ in range(3):
        acc, _, done, _ = state.run(np.full(300, np.inf), rng)  # accept every move: a random walk
        assert 0 < acc <= done == 300  # moves onto the same vertex are skipped
        _check_state(state, topo, slots)
        if objective == "hopbytes":
            assert state.score == pytest.approx(ltm.hop_bytes(topo, g, state.proc_vertex), rel=1e-12)
        else:
            assert np.allclose(state.traffic, ltm.link_traffic(topo, g, state.proc_vertex))
            assert state.current_max() == pytest.approx(ltm.max_congestion(topo, g, state.proc_vertex), rel=1e-9)
            running = state.score
            assert running == pytest.approx(state.recompute(), rel=1e-9)


def test_rejected_moves_leave_the_state_unchanged():
    topo = ltm.torus("4x4")
    g = random_graph(16, 3, seed=1)
    start = np.random.default_rng(3).permutation(16)
    state = SwapState(topo, g, start, topo.slots, "congestion")
    traffic = state.traffic.copy()
    acc, _, done, deltas = state.run(np.full(500, -np.inf), np.random.default_rng(1))
    assert acc == 0 and done == 500 and np.isfinite(deltas).any()
    assert np.array_equal(state.proc_vertex, start)
    assert np.allclose(state.traffic, traffic)


def test_near_slots_are_the_k_nearest_with_ties():
    topo = ltm.torus("6x6")
    ptr, idx = near_slot_vertices(topo, topo.slots, k=4)
    # on a 2-D torus the 4 nearest vertices are exactly the 4 neighbours
    for v in (0, 7, 35):
        assert sorted(idx[ptr[v]:ptr[v + 1]].tolist()) == sorted(set(topo.indices[topo.indptr[v]:topo.indptr[v + 1]]
                                                                     .tolist()))
    ptr, idx = near_slot_vertices(topo, topo.slots, k=5)  # the 5th is at 2 hops: all 8 of them come too
    assert np.all(np.diff(ptr) == 12)


def test_refinement_stops_at_the_lower_bound():
    # greedy already places a scrambled torus optimally: the refinement must not spend its budget
    topo = ltm.torus("6x6x6")
    g = scrambled_torus("6x6x6", 3)
    greedy = map_processes(topo, g, strategy="greedy", seed=0)
    assert ltm.average_dilation(topo, g, greedy) == 1.0
    refine_threshold_accepting(topo, g, greedy, iterations=10)  # compile
    for obj in ("hopbytes", "congestion", "dilation"):
        tic = time.perf_counter()
        m = map_processes(topo, g, strategy="greedy", seed=0, refine="ta", objective=obj, time_budget=5.0)
        assert time.perf_counter() - tic < 2.5
        assert ltm.average_dilation(topo, g, m) == 1.0
    _, stats = local_search(topo, g, greedy.vertices, topo.slots, "hopbytes", thresholds_fn=ta_thresholds,
                            rng=np.random.default_rng(0), time_budget=5.0)
    assert stats["stopped"] == "bound" and stats["iterations"] == 0


def test_two_opt_stops_when_it_stalls():
    topo = ltm.torus("4x4")
    g = stencil("4x4")
    start = map_processes(topo, g, strategy="random", seed=1).vertices
    _, stats = local_search(topo, g, start, topo.slots, "congestion", thresholds_fn=lambda p, s, c: np.zeros(s),
                            rng=np.random.default_rng(0), iterations=10**7, stall_limit=500, calibrate=False)
    assert stats["stopped"] in ("stall", "bound") and stats["iterations"] < 10**7


def test_same_seed_same_result():
    topo = ltm.torus("6x6")
    g = random_graph(36, 4, seed=3)
    for fn in (refine_two_opt, refine_threshold_accepting):
        a = fn(topo, g, objective="hopbytes", iterations=5000, seed=7)
        b = fn(topo, g, objective="hopbytes", iterations=5000, seed=7)
        assert a == b


@pytest.mark.parametrize("objective", ["hopbytes", "congestion"])
def test_time_budget_at_8000_processes(objective):
    # P = 8000 (a scrambled 20^3 torus): setup, walk and final evaluation within the budget, with moves
    topo = ltm.torus("20x20x20")
    g = scrambled_torus("20x20x20", 1)
    start = map_processes(topo, g, strategy="greedy", seed=0).vertices.copy()
    rng = np.random.default_rng(1)
    # a refinement starts from a construction: greedy's placement with 5% of the processes displaced
    moved = rng.choice(8000, 400, replace=False)
    start[moved] = start[rng.permutation(moved)]
    # compile (from a random start: an optimal one stops at the lower bound before any move)
    refine_threshold_accepting(ltm.torus("4x4"), stencil("4x4"), map_processes(ltm.torus("4x4"), stencil("4x4"),
                               strategy="random", seed=0), objective=objective, iterations=50)
    # the budget is a property, not a wall time: on a loaded machine the setup (measured here, then
    # again inside the search) takes longer, so the budget leaves room for moves after it and the
    # margin allows one more setup (the final exact evaluation is skipped when it would not fit) and
    # one overrunning chunk (chunks last about 20 ms; a descheduled one longer)
    tic = time.perf_counter()
    SwapState(topo, g, start, topo.slots, objective)
    setup = time.perf_counter() - tic
    budget = max(1.0, 4 * setup)
    tic = time.perf_counter()
    best, stats = local_search(topo, g, start, topo.slots, objective, thresholds_fn=ta_thresholds,
                               rng=np.random.default_rng(0), time_budget=budget)
    elapsed = time.perf_counter() - tic
    assert stats["setup_seconds"] <= elapsed
    margin = 0.1 * budget + max(setup, stats["setup_seconds"]) + 0.25
    assert elapsed <= budget + margin, (elapsed, budget, setup, stats)
    assert stats["stopped"] in ("budget", "bound"), stats
    assert stats["iterations"] > 0, stats
    assert stats["best_value"] <= stats["start_value"]
    exact = ltm.hop_bytes(topo, g, best) if objective == "hopbytes" else ltm.max_congestion(topo, g, best)
    assert exact == pytest.approx(stats["best_value"], rel=1e-9)
    assert np.bincount(best, minlength=topo.n_vertices).max() == 1


def _at_bound_instance():
    # a 4x4 stencil placed as the 4x4 torus: every edge on one link (hop-bytes at their bound) and
    # every host's four links each carrying one message (congestion at the injection bound)
    topo = ltm.torus("4x4")
    g = stencil("4x4")
    return topo, g, np.arange(16, dtype=np.int64)


@pytest.mark.parametrize("objective", ["congestion", "hopbytes", "dilation"])
def test_a_refinement_that_starts_at_the_bound_makes_no_move(objective, monkeypatch):
    from libtopomap.mappers.threshold_accepting import threshold_accepting
    from libtopomap.mappers.hopbytes_swap import hopbytes_swap
    from libtopomap.mappers.two_opt import two_opt
    from libtopomap.metrics import lower_bounds

    topo, g, start = _at_bound_instance()
    b = lower_bounds(topo, g, topo.slots)
    assert ltm.hop_bytes(topo, g, start) == b["hopbytes"] and ltm.max_congestion(topo, g, start) == b["congestion"]
    moves = []
    real_run = SwapState.run

    def counting_run(self, levels, *a, **k):
        out = real_run(self, levels, *a, **k)
        moves.append(out[2])
        return out
    monkeypatch.setattr(SwapState, "run", counting_run)
    for fn in (threshold_accepting, two_opt, hopbytes_swap):
        moves.clear()
        best, start_value, best_value, stats = fn(topo, g, start, topo.slots.astype(np.int64), objective,
                                                  rng=np.random.default_rng(0), iterations=5000)
        assert sum(moves) == 0, (fn.__name__, moves)
        assert np.array_equal(best, start) and best_value == start_value
    _, stats = local_search(topo, g, start, topo.slots, "hopbytes", thresholds_fn=ta_thresholds,
                            rng=np.random.default_rng(0), iterations=5000)
    assert stats["iterations"] == 0 and stats["stopped"] == "bound"


def test_the_nearest_slot_list_lives_only_as_long_as_its_race(monkeypatch):
    import libtopomap.distances
    from libtopomap.distances import near_slot_cache
    from libtopomap.portfolio import MappingProblem, make_candidates, run_portfolio

    calls = []
    real = libtopomap.distances.k_nearest

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(libtopomap.distances, "k_nearest", counting)
    topo = ltm.torus("6x6")
    g = scrambled_torus("6x6", 1)
    # outside a race nothing is kept on the topology
    near_slot_vertices(topo, topo.slots)
    assert "near_slots" not in topo.cache and len(calls) == 1
    # one refinement: its states (walk, warm-up, clean-up) share one list, dropped at its end
    calls.clear()
    refine_threshold_accepting(topo, g, np.arange(36), seed=0, iterations=300)
    assert len(calls) == 1 and "near_slots" not in topo.cache
    # a race with two refinements: one list for the whole race, dropped when it ends
    calls.clear()
    problem = MappingProblem(topo, g, iterations=300)
    cands = make_candidates(["rcm", "random", "identity"], seed=0, refine="ta")
    result = run_portfolio(problem, cands)
    assert sum(o.candidate.refine is not None and "+ta" in o.label for o in result.outcomes) >= 1
    assert len(calls) == 1 and "near_slots" not in topo.cache
    # nested blocks share the list; it goes with the outermost one
    calls.clear()
    with near_slot_cache(topo):
        with near_slot_cache(topo):
            a = near_slot_vertices(topo, topo.slots)
        b = near_slot_vertices(topo, topo.slots)
        assert a[1] is b[1] and len(calls) == 1
    assert "near_slots" not in topo.cache and "near_slots_depth" not in topo.cache
