"""mpi4py's own dist-graph tests with ``Create_dist_graph(_adjacent)`` routed through libtopomap.

The measure of the drop-in promise (issue 12, item 18): ``BaseTestTopo.testDistgraphcommAdjacent`` and
``BaseTestTopo.testDistgraphcomm`` of mpi4py's ``test/test_comm_topo.py`` on ``COMM_SELF``,
``COMM_WORLD`` and their duplicates, with the communicator's methods replaced by libtopomap's with
``reorder=True`` and a one-host topology (so the result must equal mpi4py's), and once more
with ``reorder=False``.  Source: https://github.com/mpi4py/mpi4py, test/test_comm_topo.py, Copyright (c)
2019, Lisandro Dalcin, BSD 2-Clause License ("Redistribution and use in source and binary forms, with
or without modification, are permitted provided that ... redistributions of source code retain the
above copyright notice, this list of conditions and the following disclaimer"; THE SOFTWARE IS
PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND).  The assertions are rewritten for pytest and for every
rank to agree before failing; ``checkFortran`` is kept (``MPI.Comm.f2py(c.py2f())`` must have the type
of ``c``).

Run under real MPI by tests/test_mpi_suite.py.
"""

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
from _helpers import COMM

KINDS = ["self", "world", "selfdup", "worlddup"]


def _comm(kind):
    return {"self": MPI.COMM_SELF, "world": COMM, "selfdup": MPI.COMM_SELF.Dup(),
            "worlddup": COMM.Dup()}[kind]


class Routed:
    """A communicator whose ``Create_dist_graph(_adjacent)`` are libtopomap's (the rest is mpi4py's)."""

    def __init__(self, comm, reorder):
        self.comm = comm
        size = comm.Get_size()
        self.kw = dict(reorder=reorder, topology=ltm.Topology(["node"], np.zeros((0, 2), dtype=np.int64),
                                                              slots=[size]),
                       placement=[0] * size, seed=1)

    def __getattr__(self, name):
        return getattr(self.comm, name)

    def Create_dist_graph_adjacent(self, sources, destinations, sourceweights=None, destweights=None):
        return ltm.Create_dist_graph_adjacent(self.comm, sources, destinations, sourceweights, destweights,
                                              **self.kw)

    def Create_dist_graph(self, sources, degrees, destinations, weights=None):
        return ltm.Create_dist_graph(self.comm, sources, degrees, destinations, weights, **self.kw)


class Checks:
    """unittest's assertions, recorded instead of raised so that every rank reaches every collective."""

    def __init__(self):
        self.fails = []

    def assertEqual(self, a, b):
        if a != b:
            self.fails.append(f"{a!r} != {b!r}")

    def assertTrue(self, x, *_):
        if not x:
            self.fails.append(f"{x!r} is not true")

    def checkFortran(self, oldcomm):
        fint = oldcomm.py2f()
        newcomm = MPI.Comm.f2py(fint)
        self.assertEqual(newcomm, oldcomm)
        self.assertEqual(type(newcomm), type(oldcomm))


# ------------------------------------------------------------------- ported from mpi4py (BSD-2, see above)
def testDistgraphcommAdjacent(self, comm):
    size = comm.Get_size()
    rank = comm.Get_rank()
    topo = comm.Create_dist_graph_adjacent(None, None)
    topo.Free()
    #
    sources = [(rank-2) % size, (rank-1) % size]
    destinations = [(rank+1) % size, (rank+2) % size]
    topo = comm.Create_dist_graph_adjacent(sources, destinations)
    self.assertTrue(topo.is_topo)
    self.assertTrue(topo.topology, MPI.DIST_GRAPH)
    self.checkFortran(topo)
    self.assertEqual(topo.Get_dist_neighbors_count(), (2, 2, False))
    self.assertEqual(topo.Get_dist_neighbors(), (sources, destinations, None))
    self.assertEqual(topo.indegree, len(sources))
    self.assertEqual(topo.outdegree, len(destinations))
    self.assertEqual(topo.inedges, sources)
    self.assertEqual(topo.outedges, destinations)
    inedges, outedges = topo.inoutedges
    self.assertEqual(inedges, sources)
    self.assertEqual(outedges, destinations)
    topo.Free()
    #
    sourceweights = [1, 2]
    destweights = [3, 4]
    weights = (sourceweights, destweights)
    topo = comm.Create_dist_graph_adjacent(sources, destinations,
                                           sourceweights, destweights)
    self.assertEqual(topo.Get_dist_neighbors_count(), (2, 2, True))
    self.assertEqual(topo.Get_dist_neighbors(), (sources, destinations, weights))
    topo.Free()
    #
    topo = comm.Create_dist_graph_adjacent(sources, None, MPI.UNWEIGHTED, None)
    self.assertEqual(topo.Get_dist_neighbors_count(), (2, 0, False))
    self.assertEqual(topo.Get_dist_neighbors(), (sources, [], None))
    topo.Free()
    topo = comm.Create_dist_graph_adjacent(None, destinations, None, MPI.UNWEIGHTED)
    self.assertEqual(topo.Get_dist_neighbors_count(), (0, 2, False))
    self.assertEqual(topo.Get_dist_neighbors(), ([], destinations, None))
    topo.Free()
    if MPI.VERSION < 3:
        return
    topo = comm.Create_dist_graph_adjacent([], [], MPI.WEIGHTS_EMPTY, MPI.WEIGHTS_EMPTY)
    self.assertEqual(topo.Get_dist_neighbors_count(), (0, 0, True))
    self.assertEqual(topo.Get_dist_neighbors(), ([], [], ([], [])))
    topo.Free()


def testDistgraphcomm(self, comm):
    size = comm.Get_size()
    rank = comm.Get_rank()
    #
    topo = comm.Create_dist_graph([], [], [], MPI.UNWEIGHTED)
    topo.Free()
    #
    sources = [rank]
    degrees = [3]
    destinations = [(rank-1) % size, rank, (rank+1) % size]
    topo = comm.Create_dist_graph(sources, degrees, destinations, MPI.UNWEIGHTED)
    self.assertTrue(topo.is_topo)
    self.assertTrue(topo.topology, MPI.DIST_GRAPH)
    self.checkFortran(topo)
    self.assertEqual(topo.Get_dist_neighbors_count(), (3, 3, False))
    topo.Free()
    weights = list(range(1, 4))
    topo = comm.Create_dist_graph(sources, degrees, destinations, weights)
    self.assertEqual(topo.Get_dist_neighbors_count(), (3, 3, True))
    topo.Free()
# ------------------------------------------------------------------- end of the ported code


def _run(test, kind, reorder):
    comm = _comm(kind)
    checks = Checks()
    try:
        test(checks, Routed(comm, reorder))
    finally:
        if kind.endswith("dup"):
            comm.Free()
    fails = COMM.allgather(checks.fails)
    assert not any(fails), fails


@pytest.mark.parametrize("reorder", [True, False], ids=["reorder", "plain"])
@pytest.mark.parametrize("kind", KINDS)
def test_distgraphcomm_adjacent(kind, reorder):
    _run(testDistgraphcommAdjacent, kind, reorder)


@pytest.mark.parametrize("reorder", [True, False], ids=["reorder", "plain"])
@pytest.mark.parametrize("kind", KINDS)
def test_distgraphcomm(kind, reorder):
    _run(testDistgraphcomm, kind, reorder)


def test_the_routed_calls_equal_mpi4py_on_one_host():
    # with one host the reordered communicator is mpi4py's: same ranks, same lists, same type
    rank, size = COMM.Get_rank(), COMM.Get_size()
    s, d = [(rank - 1) % size], [(rank + 1) % size]
    plain = COMM.Create_dist_graph_adjacent(s, d, [2], [2])
    ours = Routed(COMM, True).Create_dist_graph_adjacent(s, d, [2], [2])
    ok = (type(ours) is type(plain) and ours.Get_rank() == plain.Get_rank()
          and ours.Get_dist_neighbors() == plain.Get_dist_neighbors()
          and ours.Compare(plain) == MPI.CONGRUENT and ltm.report(plain) is None
          and ltm.report(ours).strategy == "identity")
    plain.Free()
    ours.Free()
    assert all(COMM.allgather(ok))


testDistgraphcommAdjacent.__test__ = testDistgraphcomm.__test__ = False  # run through _run, not by pytest
