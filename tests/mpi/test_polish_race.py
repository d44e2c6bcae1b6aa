"""The winner's hop-bytes polish under MPI (``MappingProblem.polish`` in ``libtopomap.mpi.driver.race``):
the winner's rank polishes and broadcasts, every rank gets the same mapping, and it is the offline race's.

Run under real MPI by tests/test_mpi_suite.py (4 and 8 ranks on this machine).
"""

import numpy as np
from mpi4py import MPI

import libtopomap as ltm
from libtopomap.mappers import STRATEGIES
from libtopomap.mpi.driver import race
from libtopomap.patterns import scrambled_torus
from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio

COMM = MPI.COMM_WORLD


def test_the_winners_rank_polishes_it_as_offline():
    t, g = ltm.dragonfly(9, 4, 2, 2), scrambled_torus("8x9", 0)
    strategies = [x for x in STRATEGY_ORDER if x in STRATEGIES and x != "scotch"]

    def make(n):
        return make_candidates(strategies, seed=1, count=n)
    result = race(COMM, MappingProblem(t, g, objective="hopbytes"), make)
    payloads = COMM.allgather(np.asarray(result.winner.payload).tolist())
    labels = COMM.allgather(result.winner.label)
    assert all(p == payloads[0] for p in payloads) and len(set(labels)) == 1
    assert labels[0].endswith("+ils")
    assert result.winner.key[0] == ltm.evaluate(t, g, result.winner.payload)["hop_bytes"]
    # the report lists the polished winner
    assert any(o.label == labels[0] for o in result.outcomes)
    offline = None
    if COMM.Get_rank() == 0:  # one offline race (on every rank at once it would take 8x the time)
        off = run_portfolio(MappingProblem(t, g, objective="hopbytes"), make(len(result.plan["mapping_ranks"])))
        offline = (off.winner.label, np.asarray(off.winner.payload).tolist())
    offline = COMM.bcast(offline, root=0)
    assert offline == (labels[0], payloads[0])
