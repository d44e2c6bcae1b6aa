"""Costs that follow the graph (issue 29, part 1): search budgets in edge work, deadlines inside the
constructions' searches, and the portfolio's budget as a promise on dense communication graphs."""

import math
import pathlib
import sys
import time

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.mappers.hopbytes_swap import hopbytes_swap, nc_cap
from libtopomap.mappers.local_search import WORK_DEGREE, current_deadline, deadline_scope, work_moves
from libtopomap.mappers.multisection import map_multisection
from libtopomap.commgraph import SymGraph
from libtopomap.patterns import scrambled_torus
from libtopomap.portfolio import MappingProblem, budget_skip, make_candidates, run_portfolio

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
from dense_shapes import amg_graph, power_law_graph  # noqa: E402 (the benchmark's graph recipes)

# Dense graphs of real shape at a small size (bench_dense.py --suite runs them at 1,000 and 4,096): an
# algebraic-multigrid-like graph (6x6x6 ranks, mean degree 109, rank 0 talks to all), a power-law graph
# (mean degree 42, 4 ranks talk to all), a uniform random graph; onto a dragonfly, a fat tree, a torus.
SHAPES = {"amg": lambda: amg_graph((6, 6, 6), radii=(2, 3, 4)), "powerlaw": lambda: power_law_graph(300, 60),
          "random": lambda: ltm.load_graph("random:300:200:1")}
NETWORKS = {"dragonfly": lambda: ltm.dragonfly(9, 8, 8, 2), "fattree": lambda: ltm.fattree(7, 3),
            "torus": lambda: ltm.torus((7, 7, 7))}


def test_work_moves_leave_sparse_budgets_alone():
    assert work_moves(12345, float(WORK_DEGREE)) == 12345
    assert work_moves(12345, SymGraph(scrambled_torus((8, 8), seed=0))) == 12345
    assert work_moves(1600, 10.0 * WORK_DEGREE) == 160
    assert work_moves(1, 1e6) == 1 and work_moves(0, 1e6) == 0
    dense = SymGraph(ltm.load_graph("random:200:150:1"))
    assert nc_cap(dense) < 4096


def test_deadline_scope_nests():
    assert current_deadline() is None
    with deadline_scope(5.0):
        assert current_deadline() == 5.0
        with deadline_scope(None):
            assert current_deadline() is None
        assert current_deadline() == 5.0
    assert current_deadline() is None


def test_a_deadline_that_does_not_bind_changes_nothing():
    t, g = ltm.dragonfly(9, 4, 2, 2), scrambled_torus((8, 9), seed=0)
    a = map_multisection(t, g, seed=3)
    b = map_multisection(t, g, seed=3, deadline=time.perf_counter() + 3600)
    np.testing.assert_array_equal(a.vertices, b.vertices)


def test_dense_swap_search_stops_at_its_deadline():
    t, g = ltm.dragonfly(9, 8, 8, 2), ltm.load_graph("random:400:300:1")
    start = np.flatnonzero(np.asarray(t.slots) > 0)[:g.n]
    hopbytes_swap(t, g, start, t.slots, rng=np.random.default_rng(0), depth=4, iterations=100)  # compiled
    t0 = time.perf_counter()
    v, before, after, stats = hopbytes_swap(t, g, start, t.slots, rng=np.random.default_rng(0), depth=4,
                                            deadline=t0 + 0.5)
    assert time.perf_counter() - t0 < 0.5 + 2.0  # state set-up plus one chunk, even loaded
    assert after <= before


@pytest.mark.slow
@pytest.mark.parametrize("shape,network,budget", [("random", "dragonfly", 3.0), ("random", "dragonfly", 5.0),
                                                  ("amg", "dragonfly", 3.0), ("powerlaw", "fattree", 3.0),
                                                  ("amg", "torus", 3.0), ("random", "torus", 3.0)])
def test_portfolio_on_a_dense_graph_keeps_its_budget(shape, network, budget):
    """``map --strategy all --budget B`` on a dense graph (300 processes of mean degree 146, or the
    shapes of :data:`SHAPES`) keeps its budget; before the edge-work budgets, multisection's swap search
    alone ran for minutes.

    What may run past the budget is a phase's last step that no deadline interrupts (a chunk of moves,
    a search state, a scoring): 0.5 s of CPU, which takes ``slowdown`` times longer on a loaded
    machine.  The slowdown is the run's own (its wall over its CPU seconds: 10-20 at load 20-40 on
    2 cores, where the former fixed 3 s margin failed), so a search that ignores its deadline still
    fails the check at any load: its overrun is its CPU seconds times the same slowdown."""
    t, g = NETWORKS[network](), SHAPES[shape]()
    # no recursive: on a dense graph it would stand for multisection (MappingProblem.dominated_by),
    # whose swap search is the one to keep in the budget
    cands = make_candidates(["multisection", "greedy"], seed=1, refine="ta")
    # compile the kernels outside the measured run (a fresh cache would charge them to the first race)
    run_portfolio(MappingProblem(t, g, objective="congestion", total_budget=budget), cands)
    cpu, t0 = time.process_time(), time.perf_counter()
    res = run_portfolio(MappingProblem(t, g, objective="congestion", total_budget=budget), cands)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu
    # multisection runs, unless a loaded machine made its estimate too long for the budget
    assert any(o.label.startswith("multisection") for o in res.outcomes) or any(
        "budget" in s.reason for s in res.skipped), [s.reason for s in res.skipped]
    slowdown = max(1.0, wall / max(cpu, 1e-3))
    assert wall <= 1.1 * budget + 1.0 + 0.5 * slowdown, (wall, cpu, slowdown)


def test_sym_graph_is_built_once_per_graph_and_not_pickled():
    import pickle

    from libtopomap.commgraph import sym_graph

    g = ltm.load_graph("random:50:20:3")
    s = sym_graph(g)
    assert sym_graph(g) is s and sym_graph(s) is s
    fresh = SymGraph(g)
    for name in ("indptr", "indices", "wout", "win", "rev"):
        np.testing.assert_array_equal(getattr(s, name), getattr(fresh, name))
    back = pickle.loads(pickle.dumps(g))
    assert "_sym_graph" not in back.__dict__
    np.testing.assert_array_equal(sym_graph(back).indices, s.indices)


def test_multisection_tries_follow_the_edges():
    from libtopomap.mappers.multisection import TRY_EDGES, _tries

    assert _tries(5, 1) == 5 and _tries(5, TRY_EDGES // 5) == 5
    assert _tries(5, TRY_EDGES // 2) == 2 and _tries(5, TRY_EDGES + 1) == 1 and _tries(1, 10) == 1


def test_near_partner_moves_cap_the_partners_of_dense_processes_only():
    from libtopomap.mappers.local_search import SwapState
    from libtopomap.mappers.threshold_accepting import near_partner_moves, partner_cap

    t = ltm.dragonfly(9, 4, 2, 2)
    slots = np.asarray(t.slots, np.int64)
    sparse = scrambled_torus((8, 9), seed=0)
    start = np.flatnonzero(slots > 0)[:sparse.n]
    st = SwapState(t, sparse, start, slots, "hopbytes")
    assert partner_cap(st.sym) is None
    procs = np.arange(sparse.n)
    a1, b1 = near_partner_moves(st, procs, np.random.default_rng(4))
    a2, b2 = near_partner_moves(st, procs, np.random.default_rng(4), cap=10**6)
    np.testing.assert_array_equal(a1, a2)  # no cap below the degree: the same moves, the same draws
    np.testing.assert_array_equal(b1, b2)
    dense = ltm.load_graph("random:72:60:1")
    sd = SwapState(t, dense, np.flatnonzero(slots > 0)[:dense.n], slots, "hopbytes")
    cap = partner_cap(sd.sym)
    assert cap is not None and cap < np.diff(sd.sym.indptr).min()
    a, b = near_partner_moves(sd, np.arange(dense.n), np.random.default_rng(0), per=3)
    assert np.bincount(a, minlength=dense.n).max() <= 4 * cap
    assert a.size > 0 and np.all(a != b)


def test_a_dense_race_runs_one_partitioning_construction():
    """On a dense graph only the cheapest partitioning construction of the race runs (recursive),
    the others are skipped with the reason; a sparse race runs them all, and a race without
    recursive keeps its cheapest one."""
    from libtopomap.portfolio import PARTITIONING

    t = ltm.dragonfly(9, 4, 2, 2)
    dense, sparse = ltm.load_graph("random:72:60:1"), scrambled_torus((8, 9), seed=0)
    names = ["greedy", *PARTITIONING, "rcm"]
    cands = make_candidates(names, seed=0)
    p = MappingProblem(t, dense, total_budget=math.inf)
    by = {c.strategy: p.dominated_by(c, names) for c in cands[1:]}
    assert by == {"greedy": None, "recursive": None, "multisection": "recursive", "dual-bisection": "recursive",
                  "scotch": "recursive", "rcm": None}
    assert p.dominated_by(cands[3], ["multisection", "scotch"]) is None  # multisection, the cheapest there
    assert p.dominated_by(cands[0], names) is None  # the current placement
    reason = budget_skip(p, cands[3], cands).reason
    assert reason.startswith("multisection skipped: a dense graph") and "recursive" in reason
    q = MappingProblem(t, sparse, total_budget=math.inf)
    assert all(q.dominated_by(c, names) is None for c in cands)
    assert budget_skip(q, cands[3], cands) is None


def test_dense_traffic_by_source_searches_matches_the_pair_searches():
    """full_traffic on a dense graph takes one search per source switch; the loads are those of
    the per-edge pruned searches (the engine's own), up to float rounding."""
    from libtopomap._kernels.ecmp import ecmp_pair_flows  # noqa: F401 (compiled by the engine's import)
    from libtopomap.commgraph import sym_graph
    from libtopomap.mappers import _deltas

    t = ltm.dragonfly(9, 8, 8, 2)
    g = sym_graph(ltm.load_graph("random:400:300:1"))
    v = np.random.default_rng(0).permutation(np.flatnonzero(np.asarray(t.slots) > 0))[:g.n]
    assert _deltas._per_source_cheaper(t.distances, g, v)
    fast = _deltas.full_traffic(t, g, v)
    nchunks = 2
    parts = np.zeros((nchunks, t.n_arcs))
    meta, packed, table = t.distances.fast_arrays
    _deltas._edge_traffic_pruned(t.indptr, t.indices, t.arc_reverse, meta, packed, table, g.indptr, g.indices,
                                 g.wout, g.win, v, parts, nchunks)
    np.testing.assert_allclose(fast, parts.sum(axis=0), rtol=1e-12, atol=1e-9)
    sparse = sym_graph(scrambled_torus((8, 8), seed=0))
    assert not _deltas._per_source_cheaper(t.distances, sparse, v[:64])


def test_the_capped_descent_is_not_run_where_moves_cannot_be_independent():
    from libtopomap.commgraph import sym_graph
    from libtopomap.mappers.threshold_accepting import capped_hopbytes_descent, few_independent

    t = ltm.dragonfly(9, 4, 2, 2)
    slots = np.asarray(t.slots, np.int64)
    g = ltm.load_graph("random:72:60:1")
    assert few_independent(sym_graph(g)) and not few_independent(sym_graph(scrambled_torus((8, 9), seed=0)))
    start = np.flatnonzero(slots > 0)[:g.n]
    v, stats = capped_hopbytes_descent(t, g, start, slots, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(v, start)
    assert stats["stopped"] == "dense" and stats["accepted"] == 0


@pytest.mark.slow
def test_a_greedy_that_would_not_fit_is_cut_short_within_the_budget():
    """Greedy on a dense graph on a large torus (each placed process routes its ~100 edges by
    searches over most of the torus: about 6 s of CPU uncut, several times its estimate) is cut at
    the constructions' deadline with its best so far, says so, and the race keeps its budget (the
    margin as in :func:`test_portfolio_on_a_dense_graph_keeps_its_budget`)."""
    t, g = ltm.torus((16, 16, 16)), ltm.load_graph("random:4096:100:1")
    budget = 4.0
    cands = make_candidates(["greedy"], seed=1, refine="ta")
    cpu, t0 = time.process_time(), time.perf_counter()
    res = run_portfolio(MappingProblem(t, g, objective="congestion", total_budget=budget), cands)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu
    greedy = [o for o in res.outcomes if o.label.startswith("greedy")]
    assert greedy and greedy[0].note.startswith("cut short at the constructions' deadline"), \
        [(o.label, o.note) for o in res.outcomes]
    v = np.asarray(greedy[0].payload)
    assert v.size == g.n and np.unique(v).size == g.n  # one process per host
    slowdown = max(1.0, wall / max(cpu, 1e-3))
    assert wall <= 1.1 * budget + 1.0 + 0.5 * slowdown, (wall, cpu, slowdown)
