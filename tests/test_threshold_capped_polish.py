"""The congestion winner's polish (``MappingProblem.polish`` under ``objective="congestion"``): the capped
hop-bytes descent of threshold accepting (``capped_hopbytes_descent``) continued on the race winner with
a move budget (``moves=``, ``capped_moves``): never a higher maximum congestion, never more hop-bytes,
deterministic with a seed, within its budget, and only on a winner refined by threshold accepting."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.mappers import STRATEGIES
from libtopomap.mappers.threshold_accepting import CAPPED_MOVES, capped_hopbytes_descent, capped_moves
from libtopomap.patterns import scrambled_torus
from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio, selection_key


@pytest.fixture(scope="module")
def instance():
    t, g = ltm.dragonfly(9, 4, 2, 2), scrambled_torus("8x9", 0)
    start = np.random.default_rng(0).permutation(np.flatnonzero(t.slots > 0))
    return t, g, start


def test_budget_determinism_and_the_cap(instance):
    t, g, start = instance
    slots = t.slots.astype(np.int64)
    m0 = ltm.evaluate(t, g, start)
    runs = [capped_hopbytes_descent(t, g, start, slots, rng=np.random.default_rng(4), passes=50, moves=m)
            for m in (2_000, 2_000, 20_000, None)]
    (a, sa), (b, sb), (c, sc), (d, sd) = runs
    assert np.array_equal(a, b) and sa["hopbytes"] == sb["hopbytes"]
    # the budget is checked per batch of processes: one batch (72 processes here) past it at the most
    assert sa["stopped"] == "moves" and sa["priced"] + sa["played"] < 2_000 + 72 * 16
    assert sd["stopped"] == "local optimum"
    for v, st in runs:
        m = ltm.evaluate(t, g, v)
        assert m["max_congestion"] <= m0["max_congestion"] * (1 + 1e-9)
        assert m["hop_bytes"] == st["hopbytes"] <= m0["hop_bytes"]
    # more budget, never more hop-bytes (the same moves, continued)
    assert sd["hopbytes"] <= sc["hopbytes"] <= sa["hopbytes"] < m0["hop_bytes"]


def test_capped_moves_scale_with_the_job():
    assert capped_moves(4096) == 4096 * CAPPED_MOVES == 4 * capped_moves(1024)


def test_the_congestion_winner_refined_by_ta_is_polished():
    t, g = ltm.torus("16x16"), scrambled_torus("4x64", 0)
    problem = MappingProblem(t, g, objective="congestion")
    c = make_candidates(["greedy"], seed=3, refine="ta")[1]
    problem.start_clock()
    refined = problem.refine(c, problem.construct(c))
    out, again = problem.polish(refined), problem.polish(refined)
    assert np.array_equal(out.payload, again.payload) and out.label == refined.label + "+capped"
    m = ltm.evaluate(t, g, out.payload)
    assert out.key[0] == pytest.approx(m["max_congestion"]) and out.key[2] == m["hop_bytes"]
    assert out.key[0] <= refined.key[0] * (1 + 1e-9) and out.key[2] < refined.key[2]
    assert selection_key(out.key, "greedy", c.index) < selection_key(refined.key, "greedy", c.index)
    assert out.candidate is refined.candidate and "capped hop-bytes descent" in out.note
    # a winner the descent cannot improve comes back as the same object (the tie rule as before)
    assert problem.polish(out) is out or problem.polish(out).key[2] < out.key[2]


def test_no_polish_without_threshold_accepting(instance):
    t, g, _ = instance
    problem = MappingProblem(t, g, objective="congestion")
    for refine in (None, "two-opt"):
        c = make_candidates(["scotch"], seed=3, refine=refine)[1]
        problem.start_clock()
        built = problem.construct(c)
        built = problem.refine(c, built) if refine else built
        assert problem.polish(built) is built


def test_the_race_never_returns_a_worse_winner(instance):
    t, g, _ = instance
    problem = MappingProblem(t, g, objective="congestion")
    names = [x for x in STRATEGY_ORDER if x in STRATEGIES]
    res = run_portfolio(problem, make_candidates(names, seed=1, refine="ta", starts=np.flatnonzero(problem.slots)))
    m = ltm.evaluate(t, g, res.winner.payload)
    assert res.winner.key[0] == pytest.approx(m["max_congestion"]) and res.winner.key[2] == m["hop_bytes"]
    others = [o for o in res.outcomes if o.candidate.index != res.winner.candidate.index]
    best_other = min(o.sort_key() for o in others)
    assert res.winner.sort_key() <= best_other
