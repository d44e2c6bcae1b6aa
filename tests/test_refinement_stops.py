"""Every refinement stops at a lower bound (making no move there) or when it stalls (the keep rule
of the portfolio, a refinement that loses to its construction gives it back, is in test_portfolio)."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.commgraph import as_commgraph
from libtopomap.mappers import map_processes
from libtopomap.mappers.hopbytes_swap import hopbytes_swap
from libtopomap.mappers.local_search import local_search
from libtopomap.mappers.threshold_accepting import threshold_accepting
from libtopomap.mappers.two_opt import two_opt
from libtopomap.metrics import lower_bounds
from libtopomap.patterns import scrambled_torus


@pytest.fixture(scope="module")
def optimal_torus():
    """A scrambled 4x4x4 stencil on a 4x4x4 torus and greedy's optimum (dilation 1, congestion 1)."""
    t, g = ltm.torus("4x4x4"), scrambled_torus("4x4x4", 3)
    v = np.asarray(map_processes(t, g, strategy="greedy", seed=0).vertices, np.int64)
    m = ltm.evaluate(t, g, v)
    b = lower_bounds(t, g, t.slots)
    assert m["max_congestion"] == b["congestion"] == 1.0 and m["hop_bytes"] == b["hopbytes"]
    return t, as_commgraph(g), v, np.asarray(t.slots, np.int64)


@pytest.mark.parametrize("objective", ["congestion", "hopbytes", "dilation"])
def test_threshold_accepting_at_the_bound_makes_no_move(optimal_torus, objective):
    t, g, v, slots = optimal_torus
    out, start, best, st = threshold_accepting(t, g, v, slots, objective, rng=np.random.default_rng(0),
                                               iterations=10_000)
    assert st["stopped"] == "bound" and st["iterations"] == 0 and st["accepted"] == 0
    assert np.array_equal(out, v) and best == start
    if objective == "congestion":  # the hop-bytes clean-up sees the bound too and tries nothing
        assert st["cleanup"]["stopped"] == "bound" and st["cleanup"]["priced"] == 0


def test_two_opt_and_hopbytes_swap_at_the_bound_make_no_move(optimal_torus):
    t, g, v, slots = optimal_torus
    for fn, obj in ((two_opt, "congestion"), (two_opt, "hopbytes"), (hopbytes_swap, "hopbytes")):
        out, start, best, st = fn(t, g, v, slots, obj, rng=np.random.default_rng(1), iterations=10_000)
        assert st["stopped"] == "bound" and st["iterations"] == 0, (fn.__name__, obj, st)
        assert np.array_equal(out, v)


def test_congestion_at_the_bound_skips_the_walk_on_a_fat_tree():
    # every mapping of a stencil on a fat tree has max congestion 4 (each host's single link): the
    # walk stops at once, only the capped hop-bytes descent runs, and it never raises the maximum
    t, g = ltm.fattree(4, 3), as_commgraph(scrambled_torus("8x8", 0))
    slots = np.asarray(t.slots, np.int64)
    v = np.asarray(map_processes(t, g, strategy="rcm", seed=0).vertices, np.int64)
    assert ltm.evaluate(t, g, v)["max_congestion"] == lower_bounds(t, g, slots)["congestion"] == 4.0
    out, start, best, st = threshold_accepting(t, g, v, slots, "congestion", rng=np.random.default_rng(0),
                                               iterations=10_000)
    assert st["stopped"] == "bound" and st["iterations"] == 0
    after = ltm.evaluate(t, g, out)
    assert after["max_congestion"] == 4.0
    assert after["hop_bytes"] <= ltm.evaluate(t, g, v)["hop_bytes"]
    assert st["cleanup"]["stopped"] in ("local optimum", "passes")


def test_a_stalled_search_stops_before_its_move_budget():
    t, g = ltm.torus("4x4"), as_commgraph(scrambled_torus("4x4", 0))
    slots = np.asarray(t.slots, np.int64)
    v = np.asarray(map_processes(t, g, strategy="random", seed=0).vertices, np.int64)
    for objective in ("hopbytes", "congestion"):
        # a descent (threshold 0) at a local optimum of a 16-process instance: stalls long before 10^6 moves
        _, st = local_search(t, g, v, slots, objective, thresholds_fn=lambda p, n, s: np.zeros(n),
                             rng=np.random.default_rng(0), iterations=1_000_000, stall_limit=300, calibrate=False)
        assert st["stopped"] in ("stall", "bound") and st["iterations"] < 1_000_000, st
    _, _, _, st = two_opt(t, g, v, slots, "hopbytes", rng=np.random.default_rng(0), iterations=1_000_000, stall=300)
    assert st["stopped"] in ("stall", "bound") and st["iterations"] < 1_000_000
    _, _, _, st = hopbytes_swap(t, g, v, slots, rng=np.random.default_rng(0))
    assert st["stopped"] in ("local optimum", "bound")

