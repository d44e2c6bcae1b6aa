"""ltm.bcast under real MPI (run by tests/test_mpi_suite.py with 4 and 8 ranks).

The ranks are placed on a small dragonfly with fake host names; every rank runs these tests and the
assertions are made on ``allgather``-ed values so all ranks agree.
"""

import importlib

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.collectives import BCAST_ALGORITHMS, dragonfly_bcast
from libtopomap.errors import CommError
from _helpers import COMM, P, RANK

TOPO = ltm.dragonfly(9, 4, 2, 2)  # 72 terminals, 9 groups


def _hosts(seed):
    """Fake host names: P random terminals, some sharing a router and a group, the same on every rank."""
    rng = np.random.default_rng(seed)
    return [TOPO.names[v] for v in rng.choice(TOPO.hosts[:24], P, replace=False)]  # groups 0-2


def _agree(value):
    views = COMM.allgather(value)
    assert all(v == views[0] for v in views), views
    return views[0]


@pytest.mark.parametrize("algorithm", BCAST_ALGORITHMS)
def test_buffer_from_every_root(algorithm):
    names = _hosts(1)
    for root in range(P):
        buf = np.arange(5, dtype=np.float64) * (root + 1) if RANK == root else np.zeros(5)
        out = ltm.bcast(COMM, buf, root=root, algorithm=algorithm, topology=TOPO, fake_names=names)
        assert out is buf
        _agree(buf.tolist())
        assert np.array_equal(buf, np.arange(5) * (root + 1))


@pytest.mark.parametrize("algorithm", ["forest", "llf", "glf"])
def test_object_from_every_root_and_placement(algorithm):
    rng = np.random.default_rng(2)
    placement = rng.choice(TOPO.hosts, P, replace=False).tolist()  # spread over the whole machine
    for root in range(P):
        obj = {"root": root, "data": list(range(root + 3))} if RANK == root else None
        got = ltm.bcast(COMM, obj, root, algorithm=algorithm, topology=TOPO, placement=placement)
        assert _agree(got) == {"root": root, "data": list(range(root + 3))}


def test_bytearray_and_precomputed_schedule():
    placement = list(range(0, 8 * P, 8))  # one rank per group-router pair, groups 0..P-1
    steps = dragonfly_bcast(TOPO, placement, "glf", root=P - 1)
    buf = bytearray(b"dragonfly" if RANK == P - 1 else b"\0" * 9)
    ltm.bcast(COMM, buf, P - 1, schedule=steps)
    assert _agree(bytes(buf)) == b"dragonfly"
    # tree needs no topology
    arr = np.full(3, RANK, dtype=np.int32)
    ltm.bcast(COMM, arr, 1 % P, algorithm="tree")
    assert _agree(arr.tolist()) == [1 % P] * 3


def test_topology_from_a_file(tmp_path_factory):
    path = COMM.bcast(str(tmp_path_factory.mktemp("df") / "df.json") if RANK == 0 else None)
    if RANK == 0:
        ltm.save(path, TOPO)
    COMM.Barrier()
    got = ltm.bcast(COMM, "hello" if RANK == 0 else None, topology=path, fake_names=_hosts(3))
    assert _agree(got) == "hello"


def test_errors_are_raised_on_every_rank():
    with pytest.raises(CommError, match="not a dragonfly"):
        ltm.bcast(COMM, np.zeros(2), topology=ltm.torus("8x8"), placement=list(range(P)))
    with pytest.raises(CommError, match="needs topology"):
        ltm.bcast(COMM, np.zeros(2), algorithm="glf")
    with pytest.raises(CommError, match="outside"):
        ltm.bcast(COMM, np.zeros(2), root=P, topology=TOPO, placement=list(range(P)))
    with pytest.raises(CommError, match="unknown broadcast algorithm"):
        ltm.bcast(COMM, np.zeros(2), algorithm="ring", topology=TOPO)
    with pytest.raises(CommError, match="differ between ranks"):
        ltm.bcast(COMM, np.zeros(2 + (RANK == 1)), algorithm="tree")
    with pytest.raises(CommError, match="differ between ranks"):
        ltm.bcast(COMM, np.zeros(2) if RANK else [0, 0], algorithm="tree")
    ro = np.zeros(2)
    ro.flags.writeable = False
    with pytest.raises(CommError, match="must be writable"):
        ltm.bcast(COMM, ro, algorithm="tree")
    with pytest.raises(CommError, match="C-contiguous"):
        ltm.bcast(COMM, np.zeros((2, 2))[:, 0], algorithm="tree")
    with pytest.raises(CommError, match="is not in the topology"):
        ltm.bcast(COMM, np.zeros(2), topology=TOPO, fake_names=["nowhere"] * P)
    with pytest.raises(CommError, match="not a broadcast from rank 0"):
        ltm.bcast(COMM, np.zeros(2), schedule=[[(0, 1)]] if P > 2 else [])
    # the communicator still works afterwards
    assert COMM.allreduce(1) == P


def test_the_duplicate_and_plans_are_cached_and_freed_with_the_communicator():
    """A repeated broadcast reuses the duplicate communicator and the plan (no new Dup, no rebuild); a new
    root, algorithm or placement builds a plan; freeing the communicator frees the duplicate (the
    attribute's delete callback), and a later communicator starts afresh."""
    from mpi4py import MPI

    mod = importlib.import_module("libtopomap.mpi.broadcast")

    comm = COMM.Dup()
    placement = list(range(0, 8 * P, 8))
    for it in range(3):
        buf = np.full(4, 7.0) if RANK == 0 else np.zeros(4)
        ltm.bcast(comm, buf, topology=TOPO, placement=placement)
        assert _agree(buf.tolist()) == [7.0] * 4
        state = comm.Get_attr(mod._keyval)
        if it == 0:
            first, dup = state, state.dup
        assert state is first and state.dup == dup and state.built == 1
    got = ltm.bcast(comm, "x" if RANK == 1 else None, 1, topology=TOPO, placement=placement)
    assert _agree(got) == "x" and state.built == 2
    ltm.bcast(comm, np.zeros(2), algorithm="glf", topology=TOPO, placement=placement)
    ltm.bcast(comm, np.zeros(2), topology=TOPO, placement=placement[::-1])
    assert state.built == 4 and len(state.plans) == 4
    ltm.bcast(comm, np.zeros(2), topology=TOPO, placement=placement)   # still cached
    assert state.built == 4
    # a schedule given is checked on every call and needs no plan
    steps = dragonfly_bcast(TOPO, placement, "llf", root=0)
    for _ in range(2):
        buf = bytearray(b"ab" if RANK == 0 else b"\0\0")
        ltm.bcast(comm, buf, schedule=steps)
        assert _agree(bytes(buf)) == b"ab"
    assert state.built == 4
    # ranks that disagree on the cache (one rank passed another placement) rebuild together
    other = placement if RANK else placement[::-1]
    with pytest.raises(CommError, match="differ between ranks"):
        ltm.bcast(comm, np.zeros(2), topology=TOPO, placement=other)
    comm.Free()
    assert state.dup == MPI.COMM_NULL and not state.plans
    comm = COMM.Dup()
    ltm.bcast(comm, np.zeros(2), algorithm="tree")
    assert comm.Get_attr(mod._keyval) is not state
    comm.Free()
    assert COMM.allreduce(1) == P


def test_the_cache_survives_errors_and_world_keeps_its_duplicate():
    """An error in a call does not spoil the cache; COMM_WORLD keeps its duplicate until MPI_Finalize (the
    suite's processes exit cleanly under MPICH and Open MPI, which exercises the callback there)."""
    mod = importlib.import_module("libtopomap.mpi.broadcast")

    buf = np.arange(3.0) if RANK == 0 else np.zeros(3)
    ltm.bcast(COMM, buf, algorithm="tree")
    state = COMM.Get_attr(mod._keyval)
    with pytest.raises(CommError, match="outside"):
        ltm.bcast(COMM, np.zeros(3), root=P, algorithm="tree")
    buf = np.arange(3.0) if RANK == 0 else np.zeros(3)
    ltm.bcast(COMM, buf, algorithm="tree")
    assert _agree(buf.tolist()) == [0.0, 1.0, 2.0]
    assert COMM.Get_attr(mod._keyval) is state
