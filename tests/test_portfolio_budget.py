"""The portfolio's total budget, the congestion winner's hop-bytes clean-up, pruned ECMP traffic, and
multicore's two-level partition."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.distances import DistanceOracle
from libtopomap.commgraph import SymGraph
from libtopomap.mappers._deltas import full_traffic
from libtopomap.patterns import scrambled_torus


@pytest.mark.parametrize("topo", [ltm.dragonfly(9, 4, 2, 2), ltm.fattree(4, 3)], ids=["dragonfly", "fattree"])
def test_table_over_attachment_vertices_covers_hosts(topo):
    """A table over the hosts' switches answers every host through its switch: the pruned ECMP
    traffic (covers_all) equals the unpruned one (per-source searches) exactly."""
    g = scrambled_torus((4, 4, 2), seed=3)
    verts = np.random.default_rng(0).permutation(np.flatnonzero(np.asarray(topo.slots) > 0))[:g.n]
    switches = int(np.unique(topo.indices[topo.indptr[topo.hosts]]).size)
    table = DistanceOracle(topo, table_limit=switches)  # the table holds the switches with hosts
    search = DistanceOracle(topo, table_limit=0)
    assert table.kind == "table" and search.kind == "search" and not search.covers_all
    sym = SymGraph(g)
    slow = full_traffic(topo, sym, verts, search)
    fast = full_traffic(topo, sym, verts, table)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)
    # every vertex's attachment is in the table exactly when covers_all says so
    assert table.covers_all == bool(topo.n_vertices == switches + topo.hosts.size)


@pytest.mark.parametrize("name, topo, dims, spare", [
    ("dragonfly", ltm.dragonfly(9, 4, 4, 2), (8, 6, 3), 0),
    ("fattree", ltm.fattree(4, 3), (4, 4, 3), 16),          # free slots: shifts as well as swaps
    ("torus", ltm.torus("6x6"), (6, 6), 0),
])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_capped_hopbytes_descent_never_raises_max_congestion(name, topo, dims, spare, seed):
    """The clean-up after a congestion walk: hop-bytes never rise, the exact maximum ECMP
    congestion never rises, the result is a placement into the slots, and from a random start it
    finds something (hop-bytes strictly lower)."""
    from libtopomap.mapping import check_mapping
    from libtopomap.mappers.threshold_accepting import capped_hopbytes_descent

    g = scrambled_torus(dims, seed=seed)
    slots = np.asarray(topo.slots)
    start = ltm.map_processes(topo, g, strategy="random", seed=seed).vertices
    v, st = capped_hopbytes_descent(topo, g, start, slots, rng=np.random.default_rng(seed))
    check_mapping(topo, v, g.n, slots=slots)
    e0, e1 = ltm.evaluate(topo, g, start), ltm.evaluate(topo, g, v)
    assert e1["max_congestion"] <= e0["max_congestion"] * (1 + 1e-12)
    assert e1["hop_bytes"] < e0["hop_bytes"]
    assert st["hopbytes"] == pytest.approx(e1["hop_bytes"]) and not st["reverted"]
    assert st["max"] == pytest.approx(e1["max_congestion"])


def test_threshold_accepting_cleanup_keeps_the_maximum_and_lowers_hopbytes():
    """threshold accepting on congestion with the clean-up: the same maximum as without it or lower,
    hop-bytes no higher (same seed, same walk: the clean-up only runs after it)."""
    topo = ltm.dragonfly(9, 4, 4, 2)
    g = scrambled_torus((8, 6, 3), seed=5)
    start = ltm.map_processes(topo, g, strategy="random", seed=5)
    off = ltm.refine_threshold_accepting(topo, g, start, seed=3, iterations=3000, cleanup=0)
    on = ltm.refine_threshold_accepting(topo, g, start, seed=3, iterations=3000)
    e_off, e_on = ltm.evaluate(topo, g, off.vertices), ltm.evaluate(topo, g, on.vertices)
    assert e_on["max_congestion"] <= e_off["max_congestion"] * (1 + 1e-12)
    assert e_on["hop_bytes"] < e_off["hop_bytes"]


def _race(total_budget, strategies=("random", "rcm", "greedy"), iterations=10**7):
    from libtopomap.portfolio import MappingProblem, make_candidates

    topo = ltm.dragonfly(9, 4, 8, 2)
    g = scrambled_torus((8, 6, 6), seed=2)
    problem = MappingProblem(topo, g, objective="congestion", iterations=iterations, total_budget=total_budget)
    return problem, make_candidates(list(strategies), seed=0, refine="ta")


def test_portfolio_keeps_within_its_total_budget():
    """Refinements with (practically) unbounded moves stop at the race's budget: the whole race
    returns within the budget plus a generous slack (monotonic clock), having refined something."""
    import time

    from libtopomap.portfolio import run_portfolio

    from libtopomap.mappers import compile_kernels

    compile_kernels(["random", "rcm", "greedy"], refine="ta")  # loading numba's cache is not the race's
    problem, cands = _race(1.5)
    t0 = time.monotonic()
    res = run_portfolio(problem, cands)
    took = time.monotonic() - t0
    assert took < 1.5 + 8.0  # generous: the 2-core test machines are often loaded
    assert any(o.label.endswith("+ta") or "ta skipped" in o.note for o in res.outcomes)
    from libtopomap.mapping import check_mapping

    check_mapping(problem.topology, res.winner.payload, problem.graph.n, slots=problem.slots)


def test_portfolio_skips_constructions_out_of_budget_with_a_reason():
    from libtopomap.portfolio import run_portfolio

    problem, cands = _race(1e-4)
    res = run_portfolio(problem, cands)
    assert [o.label for o in res.outcomes] == ["current"] and res.winner.candidate.baseline
    assert len(res.skipped) == len(cands) - 1
    assert all("s left of the constructions' share of the" in s.reason for s in res.skipped)


@pytest.mark.parametrize("bad", [0, -1.0, "x"])
def test_total_budget_must_be_positive(bad):
    # a bad option value is an ArgumentError (a wrong type an ArgumentTypeError), as at every door
    # (libtopomap.validation); it was a MappingError here before
    from libtopomap.errors import ArgumentError, ArgumentTypeError

    with pytest.raises(ArgumentTypeError if isinstance(bad, str) else ArgumentError, match="total_budget"):
        _race(bad)


def test_default_budget_leaves_small_races_reproducible():
    """The overall budget only stops a refinement when it binds: two default races agree."""
    from libtopomap.portfolio import run_portfolio

    a = run_portfolio(*_race(None, iterations=None))
    b = run_portfolio(*_race(None, iterations=None))
    assert a.winner.label == b.winner.label
    np.testing.assert_array_equal(a.winner.payload, b.winner.payload)


@pytest.mark.parametrize("p", [2, 3, 4])
def test_partition_exact_two_levels_exact_sizes_and_cut(p):
    """Beyond GROUPS_PER_BLOCK groups the partition runs in two levels (METIS blocks, heavy-edge
    growth inside): every group has exactly p processes, and on a stencil the cut stays within 10%
    of one METIS k-way call plus fix-up (measured: +2.6% at P = 8,192, p = 2)."""
    import scipy.sparse as sp

    from libtopomap.mappers import multicore as mc
    from libtopomap.commgraph import SymGraph
    from libtopomap.mappers.recursive import balance_parts, metis_parts

    g = scrambled_torus((24, 12, 12), seed=1)
    sym = SymGraph(g)
    adj = sp.csr_matrix((sym.wsum, sym.indices, sym.indptr), shape=(g.n, g.n))
    k = g.n // p
    assert k > mc.GROUPS_PER_BLOCK
    parts = mc.partition_exact(adj, k, p, seed=1)
    assert np.array_equal(np.bincount(parts, minlength=k), np.full(k, p))
    row = np.repeat(np.arange(g.n), np.diff(sym.indptr))

    def cut(q):
        return sym.wsum[q[row] != q[sym.indices]].sum() / 2

    direct = balance_parts(adj, metis_parts(adj, k, seed=1), np.full(k, p))
    assert cut(parts) <= 1.10 * cut(direct)


def test_grow_groups_prefers_heavy_edges():
    """Four vertices, heavy edges 0-2 and 1-3: the groups of two are {0, 2} and {1, 3}."""
    from libtopomap.mappers.multicore import _grow_groups

    ptr = np.array([0, 2, 4, 6, 8])
    idx = np.array([1, 2, 0, 3, 0, 3, 1, 2])
    w = np.array([1.0, 9.0, 1.0, 9.0, 9.0, 1.0, 9.0, 1.0])
    grp = _grow_groups(ptr, idx, w, 2)
    assert grp[0] == grp[2] != grp[1] == grp[3]


def test_capped_hopbytes_descent_checks_the_clock_between_chunks(monkeypatch):
    """The clean-up's deadline is checked before every chunk of congestion moves, not once per batch:
    with a clock that advances only when a chunk is played, no chunk starts after the deadline."""
    import importlib

    # the module, not the function of the same name that libtopomap.mappers exports
    ta = importlib.import_module("libtopomap.mappers.threshold_accepting")

    class Clock:  # the module's ``time``: perf_counter is the number of chunks played so far
        now = 0.0

        def perf_counter(self):
            return self.now

    clock = Clock()
    late = []
    run = ta.SwapState.run

    def counting_run(self, levels, rng, *args, **kwargs):
        if self.objective == "congestion" and kwargs.get("moves") is not None:
            if clock.now >= 3.0:
                late.append(clock.now)
            clock.now += 1.0
        return run(self, levels, rng, *args, **kwargs)

    monkeypatch.setattr(ta, "time", clock)
    monkeypatch.setattr(ta.SwapState, "run", counting_run)
    topo = ltm.torus("32x32")   # its first batch holds 7 chunks of moves (97 moves)
    g = scrambled_torus((32, 32), seed=4)
    start = ltm.map_processes(topo, g, strategy="random", seed=4).vertices
    _, st = ta.capped_hopbytes_descent(topo, g, start, np.asarray(topo.slots), rng=np.random.default_rng(4),
                                       deadline=3.0)
    assert clock.now == 3.0 and not late   # exactly three chunks, then the budget stop
    assert st["stopped"] == "budget"


def test_scoring_the_current_placement_is_not_charged_to_the_constructions(monkeypatch):
    """A slow scoring of the current placement (a large scrambled torus on a loaded machine) must not
    use up the constructions' share: with 2 s of scoring in a 3 s budget, greedy still runs (before,
    1.5 s share - 2 s = nothing left skipped it), and no construction may run past the whole budget."""
    import time

    import libtopomap.metrics as metrics
    from libtopomap.portfolio import MappingProblem, budget_skip, make_candidates

    real = metrics.evaluate
    p = MappingProblem(ltm.torus("8x8"), scrambled_torus((8, 8), seed=1), total_budget=3.0)
    baseline, greedy = make_candidates(["greedy"], seed=0)[:2]

    def slow(*args, **kwargs):
        time.sleep(2.0)
        return real(*args, **kwargs)

    p.start_clock()
    monkeypatch.setattr(metrics, "evaluate", slow)
    p.construct(baseline)
    monkeypatch.setattr(metrics, "evaluate", real)
    left = p.construction_time_left()
    assert 0 < left <= 1.0   # what is left of the whole budget, not the 1.5 s share
    assert budget_skip(p, greedy) is None
