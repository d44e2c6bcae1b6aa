"""Scale work on the portfolio (issue 11) and the congestion winner's traffic (issue 19)."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.distances import DistanceOracle
from libtopomap.mappers.local_search import SymGraph, full_traffic
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
