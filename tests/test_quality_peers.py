"""The race's picks against the peers' figures on the small instances of ``benchmarks/bench_quality.py``.

Issue 29's targets: the hop-bytes pick (``map --strategy all --objective hopbytes``) has no more
hop-bytes than the best peer, the congestion pick (``map --strategy all --refine ta``) no more
maximum congestion.  The peers' figures are numbers recorded from the benchmark
(``benchmarks/results/quality_s11.json``: KaHIP 3.25, SharedMap, Mt-KaHyPar 1.7, Scotch through
scotchpy64 with the race's seed), not live runs.  The races run without a budget, so the picks are
properties of the code, not of the machine's load (a loaded run's budget cuts refinements short).
"""

from __future__ import annotations

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.patterns import scrambled_torus
from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio

#: key -> (topology, stencil dims), as ``bench_quality.instances`` builds them (labels scrambled, seed 0)
INSTANCES = {
    "torus-16x16-vs-4x64": (lambda: ltm.torus("16x16"), "4x64"),
    "fattree-4-3": (lambda: ltm.fattree(4, 3), "8x8"),
    "dragonfly-9-4-2-2": (lambda: ltm.dragonfly(9, 4, 2, 2), "8x9"),
}

#: key -> (best peer's hop-bytes, best peer's max congestion) with the peer that had it
PEERS = {
    "torus-16x16-vs-4x64": ((1676, "Mt-KaHyPar"), (4.714285714, "Mt-KaHyPar")),
    "fattree-4-3": ((896, "KaHIP fast"), (4.0, "scotch")),
    "dragonfly-9-4-2-2": ((874, "Mt-KaHyPar"), (5.0, "Mt-KaHyPar")),
}


def _race(key, objective, refine):
    make, dims = INSTANCES[key]
    t, g = make(), scrambled_torus(dims, 0)
    problem = MappingProblem(t, g, objective=objective, total_budget=float("inf"))
    names = [x for x in STRATEGY_ORDER if x in ltm.STRATEGIES]
    cands = make_candidates(names, seed=1, refine=refine, starts=np.flatnonzero(problem.slots))
    win = run_portfolio(problem, cands).winner
    return ltm.evaluate(t, g, win.payload), win.label


@pytest.mark.parametrize("key", sorted(PEERS))
def test_hopbytes_pick_is_no_worse_than_the_best_peer(key):
    (peer_hb, peer), _ = PEERS[key]
    m, label = _race(key, "hopbytes", None)
    assert m["hop_bytes"] <= peer_hb, f"{label}: {m['hop_bytes']} > {peer} {peer_hb}"


@pytest.mark.parametrize("key", sorted(PEERS))
def test_congestion_pick_is_no_worse_than_the_best_peer(key):
    _, (peer_c, peer) = PEERS[key]
    m, label = _race(key, "congestion", "ta")
    assert m["max_congestion"] <= peer_c * (1 + 1e-9), f"{label}: {m['max_congestion']} > {peer} {peer_c}"
