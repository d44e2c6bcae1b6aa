"""The iterated local search on hop-bytes (mappers/hopbytes_ils.py, ``hopbytes_ils``) and the
portfolio's polish of its winner (``MappingProblem.polish``): the optimum by brute force over all
permutations at n <= 8, agreement with libtopomap.evaluate, never worse than the input, determinism
with a seed, the move budget, the lower bound, and the race's tie rule left as it was."""

import itertools
import sys

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.mapping import check_mapping
from libtopomap.mappers import map_processes
from libtopomap.mappers.hopbytes_ils import hopbytes_ils, ils_moves
from libtopomap.metrics import lower_bounds
from libtopomap.patterns import scrambled_torus
from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio, selection_key

from _helpers import dense_distances, hop_bytes_of, random_ring_graph


def _optimum(topo, g, hosts):
    """The least hop-bytes over all placements of the ``len(hosts)`` processes on ``hosts``."""
    D = dense_distances(topo)  # 8 hosts, test only
    return min(hop_bytes_of(D, g, np.asarray(perm)) for perm in itertools.permutations(hosts))


SMALL = [ltm.torus("2x4"), ltm.fattree(2, 3), ltm.mesh("2x4"), ltm.dragonfly(2, 2, 2, 1)]


@pytest.mark.parametrize("topo", SMALL, ids=["torus2x4", "fattree2x3", "mesh2x4", "dragonfly2221"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reaches_the_optimum_by_brute_force(topo, seed):
    hosts = np.flatnonzero(topo.slots > 0)
    n = hosts.size
    assert n <= 8
    g = random_ring_graph(n, 10, seed)
    start = np.random.default_rng(seed).permutation(hosts)
    slots = topo.slots.astype(np.int64)
    v, before, after, stats = hopbytes_ils(topo, g, start, slots, rng=np.random.default_rng(seed), moves=1 << 19)
    check_mapping(topo, v, n, slots=slots)
    assert after == pytest.approx(ltm.evaluate(topo, g, v)["hop_bytes"])
    assert before == pytest.approx(ltm.evaluate(topo, g, start)["hop_bytes"])
    assert after == pytest.approx(_optimum(topo, g, hosts))
    assert stats["descent_moves"] <= 128 * n and stats["kicks"] <= (1 << 19) // 1024


def test_never_worse_deterministic_and_within_its_budget():
    t, g = ltm.dragonfly(9, 4, 2, 2), scrambled_torus("8x9", 0)
    slots = t.slots.astype(np.int64)
    start = np.asarray(map_processes(t, g, strategy="multisection", seed=1).vertices, np.int64)
    hb = ltm.evaluate(t, g, start)["hop_bytes"]
    runs = [hopbytes_ils(t, g, start, slots, rng=np.random.default_rng(5), moves=100_000) for _ in range(2)]
    (v, before, after, stats), (v2, _, after2, _) = runs
    assert np.array_equal(v, v2) and after == after2
    assert before == hb and after <= hb
    assert after == ltm.evaluate(t, g, v)["hop_bytes"]
    assert stats["descent_moves"] <= 128 * 72 and 0 < stats["kicks"] <= 100_000 // 1024 + 1
    # a scrambled start: the first descent alone gains, the kicks never lose
    scrambled = np.random.default_rng(0).permutation(start)
    v, before, after, stats = hopbytes_ils(t, g, scrambled, slots, rng=np.random.default_rng(0), moves=100_000)
    assert after <= stats["descent_value"] < before


def test_no_moves_at_the_bound_or_without_budget():
    t, g = ltm.torus("4x4"), scrambled_torus("4x4", 0)
    slots = t.slots.astype(np.int64)
    opt = np.asarray(map_processes(t, g, strategy="greedy", seed=0).vertices, np.int64)
    assert ltm.evaluate(t, g, opt)["avg_dilation"] == 1.0
    v, before, after, stats = hopbytes_ils(t, g, opt, slots, rng=np.random.default_rng(0), moves=10_000)
    assert np.array_equal(v, opt) and before == after and stats["iterations"] == 0 and stats["stopped"] == "bound"
    start = np.random.default_rng(1).permutation(opt)
    v, before, after, stats = hopbytes_ils(t, g, start, slots, rng=np.random.default_rng(0), moves=0, descent=0)
    assert np.array_equal(v, start) and stats["iterations"] == 0 and stats["kicks"] == 0


def test_free_slots_are_used():
    """A partial allocation: shifts to free slots are moves of the descents."""
    t, g = ltm.torus("4x4"), scrambled_torus("2x4", 0)
    slots = t.slots.astype(np.int64)
    start = np.random.default_rng(3).choice(16, 8, replace=False)
    v, before, after, _ = hopbytes_ils(t, g, start, slots, rng=np.random.default_rng(0), moves=20_000)
    check_mapping(t, v, 8, slots=slots)
    # a 2x4 torus embeds in the 4x4 torus with every edge on a link: the bound, 24
    assert after == ltm.evaluate(t, g, v)["hop_bytes"] == lower_bounds(t, g, slots)["hopbytes"] == 24.0
    assert after < before


def test_budget_shrinks_with_the_job():
    assert ils_moves(8) == ils_moves(4096) > ils_moves(8192) == 2 * ils_moves(16384) > ils_moves(262_144) > 0


def _race(t, g, objective, seed=1, refine=None):
    problem = MappingProblem(t, g, objective=objective)
    names = [x for x in STRATEGY_ORDER if x in ltm.mappers.STRATEGIES]
    cands = make_candidates(names, seed=seed, refine=refine, starts=np.flatnonzero(problem.slots))
    return run_portfolio(problem, cands)


def test_the_hopbytes_race_polishes_its_winner_deterministically():
    t, g = ltm.dragonfly(9, 4, 2, 2), scrambled_torus("8x9", 0)
    a, b = _race(t, g, "hopbytes"), _race(t, g, "hopbytes")
    assert np.array_equal(a.winner.payload, b.winner.payload)
    assert a.winner.label.endswith("+ils") and "hop-bytes polish" in a.winner.note
    built = [o for o in a.outcomes if o.candidate.index != a.winner.candidate.index]
    assert all(a.winner.key[0] < o.key[0] for o in built)  # better than every other construction
    assert a.winner.key[0] == ltm.evaluate(t, g, a.winner.payload)["hop_bytes"] <= 874  # Mt-KaHyPar's 874
    assert a.winner in a.outcomes
    # the congestion race has no polish
    c = _race(t, g, "congestion")
    assert not c.winner.label.endswith("+ils")


def test_polish_keeps_the_winner_when_it_cannot_beat_it():
    t, g = ltm.torus("4x4"), scrambled_torus("4x4", 0)
    problem = MappingProblem(t, g, objective="hopbytes")
    c = make_candidates(["greedy"], seed=0)[1]
    built = problem.construct(c)
    assert built.at_bound and problem.polish(built) is built  # at the bound: nothing to do
    # a winner that the search cannot improve (a local optimum for every kick): the same object back,
    # so the tie rule (strategy order, then index) decides as before
    t, g = ltm.fattree(2, 3), random_ring_graph(8, 0, 0)
    problem = MappingProblem(t, g, objective="hopbytes")
    c = make_candidates(["multisection"], seed=0)[1]
    built = problem.construct(c)
    out = problem.polish(built)
    assert out is built or selection_key(out.key, "multisection", 1) < selection_key(built.key, "multisection", 1)
    # the congestion objective: never polished
    problem = MappingProblem(t, g, objective="congestion")
    built = problem.construct(c)
    assert problem.polish(built) is built


def test_polish_replaces_only_a_strictly_better_key(monkeypatch):
    """An ILS result equal to the winner on hop-bytes but not better on the key is not taken."""
    mod = sys.modules["libtopomap.mappers.hopbytes_ils"]
    t, g = ltm.dragonfly(9, 4, 2, 2), scrambled_torus("8x9", 0)
    problem = MappingProblem(t, g, objective="hopbytes")
    built = problem.construct(make_candidates(["scotch"], seed=0)[1])
    monkeypatch.setattr(mod, "hopbytes_ils", lambda *a, **k: (built.payload, built.key[0], built.key[0], {"kicks": 0}))
    assert problem.polish(built) is built
