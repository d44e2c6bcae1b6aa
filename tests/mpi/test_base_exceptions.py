"""A BaseException on one rank reaches every rank as the same CommError (issue 29 item 4).

Every public MPI entry point (``libtopomap.mpi.__all__``: the dist-graph calls, ``topomap``,
``Create_cart``, ``reorder_for_collective``, ``reorder``, ``TracedComm.graph``, ``locate``, ``bcast``,
``apply_mapping``, ``race``, ``select_best``, ``collective_call``) gets a ``KeyboardInterrupt``, a
``SystemExit`` or a custom ``BaseException`` subclass on the first, a middle or the last rank, raised by
an input whose attribute access (or conversion) raises on that rank only.  Every rank must raise the
same :class:`~libtopomap.CommError` naming the rank and the exception type -- the interrupted rank
too, with the interruption as ``__cause__`` -- and the communicator must still work afterwards.

Run under real MPI by tests/test_mpi_suite.py (MPICH and Open MPI, ``-n 4`` and ``-n 8``).
"""

import importlib
import os

import pytest

import libtopomap as ltm
import libtopomap.mpi
import libtopomap.portfolio
from _helpers import COMM, P, RANK, shared_dir
from libtopomap.topology import Topology

trace_module = importlib.import_module("libtopomap.mpi.tracing")

WHERE = {"first": 0, "middle": P // 2, "last": P - 1}
pytestmark = pytest.mark.timeout(120)  # a hang detector: each case ends in well under a second


class Halt(BaseException):
    """A custom BaseException (neither an Exception nor an interruption Python knows)."""


KINDS = [KeyboardInterrupt, SystemExit, Halt]
TORUS = ltm.torus(f"{P // 2}x2")
PLACEMENT = list(range(P))[::-1]
OPTS = dict(placement=PLACEMENT, seed=1, strategies=("greedy",))
RING = sorted({(RANK + 1) % P, (RANK - 1) % P})


class ExplodingTopology(Topology):
    """A Topology whose every (non-dunder) attribute access raises ``exc``."""

    def __init__(self, exc):  # noqa: D107 - no Topology state at all
        object.__setattr__(self, "_exc", exc)

    def __getattribute__(self, name):
        if name.startswith("__"):
            return object.__getattribute__(self, name)
        raise object.__getattribute__(self, "_exc")("injected")


class Exploding:
    """Any other input (a problem, a path, a number) that raises ``exc`` when used."""

    def __init__(self, exc):
        self._exc = exc

    def __getattr__(self, name):
        raise object.__getattribute__(self, "_exc")("injected")

    def __fspath__(self):
        raise self._exc("injected")

    def __float__(self):
        raise self._exc("injected")


def _topo(bad, exc):
    return ExplodingTopology(exc) if RANK == bad else TORUS


def _bad(bad, exc, good):
    return Exploding(exc) if RANK == bad else good


@pytest.fixture(scope="module")
def mapping_file(tmp_path_factory):
    path = os.path.join(shared_dir(tmp_path_factory, "baseexc"), "m.json")
    if RANK == 0:
        ltm.Mapping(TORUS, list(range(P)), strategy="test").save(path)
    COMM.Barrier()
    return path


def _distgraph(bad, exc, _):
    return ltm.Create_dist_graph_adjacent(COMM, RING, RING, topology=_topo(bad, exc), **OPTS)


def _general(bad, exc, _):
    return ltm.Create_dist_graph(COMM, [RANK], [len(RING)], RING, topology=_topo(bad, exc), **OPTS)


def _topomap(bad, exc, _):
    dcomm = COMM.Create_dist_graph_adjacent(RING, RING, reorder=False)
    try:
        return ltm.topomap(dcomm, _topo(bad, exc), **OPTS)
    finally:
        dcomm.Free()


def _cart(bad, exc, _):
    return ltm.Create_cart(COMM, [P // 2, 2], [True, True], topology=_topo(bad, exc), **OPTS)


def _collective(bad, exc, _):
    return ltm.reorder_for_collective(COMM, _topo(bad, exc), "allreduce", placement=PLACEMENT, seed=1)


def _reorder(bad, exc, _):
    return ltm.reorder(COMM, ltm.load_graph(f"stencil:{P // 2}x2"), topology=_topo(bad, exc), **OPTS)


def _traced_graph(bad, exc, _):
    with ltm.trace(COMM) as tcomm:
        tcomm.sendrecv(RANK, dest=(RANK + 1) % P, source=(RANK - 1) % P)
    real = trace_module._counts

    def counts(live):
        if RANK == bad:
            raise exc("injected")
        return real(live)
    trace_module._counts = counts
    try:
        return tcomm.graph()
    finally:
        trace_module._counts = real


def _locate(bad, exc, _):
    return ltm.mpi.locate(COMM, _topo(bad, exc), placement=PLACEMENT)


def _bcast(bad, exc, _):
    fly = ltm.dragonfly(9, 4, 2, 2)
    topo = ExplodingTopology(exc) if RANK == bad else fly
    return ltm.bcast(COMM, RANK, root=0, algorithm="forest", topology=topo,
                     placement=[0, 9, 17, 26, 35, 44, 53, 62][:P])


def _apply(bad, exc, path):
    return ltm.apply_mapping(COMM, _bad(bad, exc, path), fake_names=list(TORUS.names[:P]))


def _race(bad, exc, _):
    problem = libtopomap.portfolio.MappingProblem(TORUS, ltm.load_graph(f"stencil:{P // 2}x2"))

    def make(n):
        return libtopomap.portfolio.make_candidates(("greedy",), seed=1, count=n)
    return ltm.mpi.race(COMM, _bad(bad, exc, problem), make)


def _select_best(bad, exc, _):
    return ltm.mpi.select_best(COMM, _bad(bad, exc, float(RANK)), [RANK])


def _collective_call(bad, exc, _):
    def work():
        if RANK == bad:
            raise exc("injected")
        return RANK
    return ltm.mpi.collective_call(COMM, work, what="working")


ENTRY_POINTS = {
    "Create_dist_graph_adjacent": _distgraph, "Create_dist_graph": _general, "topomap": _topomap,
    "Create_cart": _cart, "reorder_for_collective": _collective, "reorder": _reorder,
    "TracedComm.graph": _traced_graph, "locate": _locate, "bcast": _bcast, "apply_mapping": _apply,
    "race": _race, "select_best": _select_best, "collective_call": _collective_call,
}


def test_every_collective_entry_point_is_covered():
    # the names of libtopomap.mpi.__all__ that are not collective calls (classes, constants, local look-ups)
    local = {"TopomapReport", "TopomapDistgraphcomm", "report", "last_report", "DEFAULT_STRATEGIES",
             "CollectiveReport", "TopomapIntracomm", "trace", "TracedComm"}
    covered = {name.split(".")[0] for name in ENTRY_POINTS} | {"TracedComm", "trace"}
    assert set(ltm.mpi.__all__) - local <= covered


@pytest.mark.parametrize("where", list(WHERE))
@pytest.mark.parametrize("exc", KINDS, ids=[k.__name__ for k in KINDS])
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_a_base_exception_on_one_rank_is_the_same_comm_error_everywhere(entry, exc, where, mapping_file):
    bad = WHERE[where]
    try:
        out = ENTRY_POINTS[entry](bad, exc, mapping_file)
    except ltm.CommError as e:
        got = ("CommError", str(e), RANK != bad or (isinstance(e.__cause__, exc) and str(e.__cause__) == "injected"))
    except BaseException as e:  # noqa: BLE001 - the failure this test is about
        got = (type(e).__name__, str(e), False)
    else:
        got = (None, repr(out)[:200], False)
        from mpi4py import MPI
        if isinstance(out, MPI.Comm) and out != MPI.COMM_NULL:
            out.Free()
    every = COMM.allgather(got)
    assert all(g[0] == "CommError" for g in every), every
    assert len({g[1] for g in every}) == 1, every
    message = every[0][1]
    assert f"failed on rank {bad} of {P}" in message and exc.__name__ in message, message
    assert all(g[2] for g in every), every  # the failing rank's CommError is caused by its own exception
    # the communicator still works: nobody is left in a collective
    COMM.Barrier()
    assert COMM.allreduce(1) == P
