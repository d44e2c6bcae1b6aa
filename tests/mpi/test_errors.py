"""Failures during reordering raise CommError on every rank, naming the rank and cause, never a hang.

Run under real MPI by tests/test_mpi_suite.py.  Each test checks that every rank raised, that the
messages agree, and that the communicator is still usable afterwards (nobody is stuck in a collective).
"""

import os

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
import libtopomap.mappers
from libtopomap.mpi import collective_call, select_best
from _helpers import COMM, P, RANK, all_same, raised, shared_file


def _torus():
    return ltm.torus(f"{P // 2}x2")


def _ring(rank):
    nb = [(rank + 1) % P, (rank - 1) % P]
    return nb, nb


def test_collective_call_names_failing_rank():
    bad = P - 2

    def work(x):
        if RANK == bad:
            raise ValueError(f"no good at {x}")
        return x + RANK
    msg = raised(lambda: collective_call(COMM, work, 5, what="test step"))
    all_same(msg, "CommError", f"test step failed on rank {bad} of {P}", "ValueError: no good at 5")
    assert collective_call(COMM, lambda: RANK) == RANK


def test_select_best_minloc_and_ties():
    # values 3, 1, 1, 2, 3, 1, ...: minimum 1 reached on ranks 1, 2, 5, ...; the tie-break prefers rank 2
    value = [3.0, 1.0, 1.0, 2.0][RANK % 4]
    tb = {1: 5.0, 2: 4.0}.get(RANK % 4, 0.0)
    best, winner, val = select_best(COMM, value, [RANK] * 3, tiebreak=tb)
    assert (winner, val, best.tolist()) == (2, 1.0, [2, 2, 2])
    # a NaN candidate never wins; equal keys go to the lowest rank
    best, winner, val = select_best(COMM, float("nan") if RANK == 0 else 7.0, [RANK])
    assert (winner, val, best.tolist()) == (1, 7.0, [1])


def test_lists_whose_ends_do_not_match_are_accepted_as_mpi_does():
    # rank 0 lists 0 -> 1 among its destinations, rank 1 drops 2 -> 1 from its sources: MPI builds it,
    # mpi4py's own tests do it (Create_dist_graph_adjacent(sources, None)), so the mapping does too
    s, d = _ring(RANK)
    if RANK == 1:
        s = [0]
    passed = COMM.allgather((s, d))
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, topology=_torus(), placement=list(range(P))[::-1], seed=1)
    k = dc.Get_rank()
    ok = dc.Get_dist_neighbors()[:2] == passed[k]
    dc.Free()
    assert all(COMM.allgather(ok))


def test_bad_neighbor_on_one_rank():
    s, d = _ring(RANK)
    if RANK == 2:
        d = d + [P + 5]
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=_torus(), placement=list(range(P)), seed=1))
    all_same(msg, "CommError", f"failed on rank 2 of {P}", f"destinations[2] = {P + 5}")


def test_strategy_error_on_one_rank(monkeypatch):
    original = libtopomap.mappers.map_processes.trusted  # the race calls the checked path

    def flaky(*args, **kw):
        if RANK == 1:
            raise RuntimeError("strategy blew up")
        return original(*args, **kw)
    monkeypatch.setattr(libtopomap.mappers.map_processes, "trusted", flaky)
    # the ring with its chords of length 2: no mapping reaches the lower bounds, so greedy (rank 0)
    # does not end the race before rank 1 runs rcm
    s = d = sorted({(RANK + k) % P for k in (1, -1, 2, -2)} - {RANK})
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=_torus(), placement=list(np.arange(P)[::-1]), seed=1,
        strategies=("greedy", "rcm")))
    all_same(msg, "CommError", f"failed on rank 1 of {P}", "strategy 'rcm'", "RuntimeError: strategy blew up")


def test_unknown_strategy_and_objective():
    s, d = _ring(RANK)
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=_torus(), placement=list(range(P)), strategies=("greedy", "nonesuch")))
    # checked at the door with the other arguments (libtopomap.validation): the same class as map_processes
    all_same(msg, "ChoiceError", "unknown strategy 'nonesuch'")
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=_torus(), placement=list(range(P)), objective="speed"))
    all_same(msg, "ChoiceError", "unknown objective 'speed'")


def test_bad_topology_file(tmp_path_factory):
    path = shared_file(tmp_path_factory, "num: 2\n0 a\n1 b\n0 1\n1 7\n", "broken.topo")
    s, d = _ring(RANK)
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=path, placement=list(range(P))))
    all_same(msg, "CommError", "preparing the topology failed", "broken.topo")


def test_host_missing_from_topology():
    names = {r: f"n{r}" for r in range(P)}
    names[P - 1] = "ghost.example.org"
    s, d = _ring(RANK)
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=_torus(), fake_names=names))
    all_same(msg, "CommError", f"rank {P - 1}: host 'ghost'", "not in the topology")


def test_real_hostname_not_in_topology():
    # without fake names the processor name of this machine is not a torus host: every rank says so
    s, d = _ring(RANK)
    env = os.environ.pop("LIBTOPOMAP_FAKE_NAMES", None)
    try:
        msg = raised(lambda: ltm.Create_dist_graph_adjacent(COMM, s, d, topology=_torus()))
    finally:
        if env is not None:
            os.environ["LIBTOPOMAP_FAKE_NAMES"] = env
    host = MPI.Get_processor_name().split(".")[0]
    all_same(msg, "CommError", f"host {host!r} (MPI processor name) is not in the topology")


def test_more_processes_than_slots_on_a_host():
    names = {r: f"n{r}" for r in range(P)}
    names[0] = names[1] = names[2] = "n3"
    s, d = _ring(RANK)
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=_torus(), fake_names=names))
    all_same(msg, "CommError", "host 'n3'", "runs 4 processes (ranks 0, 1, 2, 3)", "1 slot")


@pytest.mark.parametrize("text,needle", [
    ("0 n0\n1 n1 extra\n", "bad.names:2: expected '<rank> <hostname>'"),
    ("0 n0\nx n1\n", "bad.names:2: rank 'x' is not an integer"),
    ("# header\n0 n0\n1 n1\n\n0 n2\n", "bad.names:5: rank 0 listed twice (first on line 2)"),
    ("0 n0\n", "bad.names: no line for world rank(s) 1"),
])
def test_bad_fake_names_file(tmp_path_factory, text, needle):
    path = shared_file(tmp_path_factory, text, "bad.names")
    s, d = _ring(RANK)
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(COMM, s, d, topology=_torus(), fake_names=path))
    all_same(msg, "CommError", f"reading fake names failed on rank 0 of {P}", "FormatError", needle)


def test_fake_names_from_environment(tmp_path_factory, monkeypatch):
    # reversed layout via LIBTOPOMAP_FAKE_NAMES; a file for a larger job is fine
    lines = "".join(f"{r} n{(P - 1 - r) % P}.cluster\n" for r in range(P)) + f"{P} n0\n"
    path = shared_file(tmp_path_factory, lines, "env.names")
    monkeypatch.setenv("LIBTOPOMAP_FAKE_NAMES", path)
    s, d = _ring(RANK)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, topology=_torus(), seed=1)
    before = ltm.report(dc).vertices_before.tolist()
    dc.Free()
    assert COMM.allgather(before == [(P - 1 - r) % P for r in range(P)]) == [True] * P


def test_inputs_that_differ_between_ranks():
    s, d = _ring(RANK)
    topo = ltm.torus(f"{P // 2}x2") if RANK != 1 else ltm.torus(str(P))
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=topo, placement=list(range(P)), seed=1))
    all_same(msg, "CommError", "the topology differs between ranks: rank(s) 1 disagree with rank 0")
    placement = list(range(P)) if RANK != 2 else list(range(P))[::-1]
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=_torus(), placement=placement, seed=1))
    all_same(msg, "CommError", "the process placement differs between ranks: rank(s) 2 disagree")
    msg = raised(lambda: ltm.Create_dist_graph_adjacent(
        COMM, s, d, topology=_torus(), placement=list(range(P)), seed=RANK))
    all_same(msg, "CommError", "the argument(s) seed differ between ranks", "rank(s) 1, 2")


@pytest.mark.parametrize("odd", [0, P // 2, P - 1])  # first, middle, last
@pytest.mark.parametrize("what", ["memory", "affinity"])
def test_a_node_layout_failure_on_one_rank_reaches_every_rank(monkeypatch, odd, what):
    import libtopomap.mpi.driver as driver

    def broken(*args):
        raise OSError(f"cannot read the {what} here")
    if RANK == odd:
        monkeypatch.setattr(driver, "default_max_memory" if what == "memory" else "_affinity", broken)
    msg = all_same(raised(lambda: driver.node_layout(COMM)), "CommError",
                 f"finding the node layout failed on rank {odd} of {P}", f"cannot read the {what} here")
    assert "OSError" in msg
    monkeypatch.undo()
    leaders, cores, memory = driver.node_layout(COMM)  # and it works again
    assert all(COMM.allgather(leaders.size == P and cores.min() >= 1 and memory.min() > 0))
