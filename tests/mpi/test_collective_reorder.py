"""reorder_for_collective under real MPI (run by tests/test_mpi_suite.py with 4 and 8 ranks).

Every rank runs these tests; assertions are made on ``allgather``-ed values so all ranks agree.
"""

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
from libtopomap.collectives import schedule, total_hops
from libtopomap.errors import ChoiceError, CommError
from libtopomap.mpi import reorder_for_collective
from _helpers import COMM, P, RANK

LOG2P = P.bit_length() - 1


def _machine():
    """8 ranks: G(32, 5), on every 4th node the ranks form G(8, 3) (Cui 2024, Alg. 4.1).  4 ranks: on
    G(16, 4) every 4th node would be a clique (nothing to improve), so a 16-node ring instead."""
    return ltm.circulant(4 * P) if P >= 8 else ltm.circulant(4 * P, [1])


def _nodes():
    return (1 + 4 * np.arange(P)) if P >= 8 else np.arange(3, 3 + P)


def _optimal(collective):
    """(fewest total hops, an order reaching it) on the test nodes; brute force for 4 ranks."""
    if P >= 8:
        return (P - 1 if collective == "bcast" else P * LOG2P), _nodes().tolist()
    import itertools

    topo, steps = _machine(), schedule(collective, P)
    return min((total_hops(topo, steps, list(p)), list(p)) for p in itertools.permutations(_nodes().tolist()))


def _minimum(collective):
    return _optimal(collective)[0]


def _scrambled(seed=3, collective="allreduce"):
    """The test nodes in a bad rank order, the same on every rank."""
    nodes = _nodes()
    rng = np.random.default_rng(seed)
    topo, steps = _machine(), schedule(collective, P)
    perms = [rng.permutation(nodes) for _ in range(16)]
    return max(perms, key=lambda v: total_hops(topo, steps, v)).tolist()


def _new_placement(newcomm, placement):
    """Vertex of each new rank, as seen by every process."""
    return newcomm.allgather(placement[RANK])


@pytest.mark.parametrize("optimizers", [None, ("two-opt",)])
def test_reorder_reaches_minimum_hops(optimizers):
    topo = _machine()
    placement = _scrambled()
    steps = schedule("allreduce", P)
    before = total_hops(topo, steps, placement)
    newcomm = reorder_for_collective(COMM, topo, "allreduce", optimizers=optimizers, iterations=3000, seed=5,
                                     placement=placement)
    assert isinstance(newcomm, MPI.Intracomm)
    info = newcomm.report.as_dict()
    new = _new_placement(newcomm, placement)
    after = total_hops(topo, steps, new)
    views = COMM.allgather((after, new, info["after"]["hops"], info["improved"]))
    assert all(v == views[0] for v in views)
    best = _minimum("allreduce")
    assert before > best
    assert after == best == info["after"]["hops"]  # 8 ranks: P log2 P, every message one hop (Table 4.1)
    assert info["improved"] and info["before"]["hops"] == before
    assert sorted(new) == sorted(placement) and newcomm.Get_size() == P
    # The reordered communicator works: a real Allreduce on it.
    assert newcomm.allreduce(newcomm.Get_rank()) == P * (P - 1) // 2
    newcomm.Free()


def test_identity_kept_when_optimal():
    topo = _machine()
    placement = _optimal("alltoall")[1]  # already optimal: no candidate is strictly better
    newcomm = reorder_for_collective(COMM, topo, "alltoall", iterations=2000, seed=1, placement=placement)
    info = newcomm.report.as_dict()
    ranks = COMM.allgather(newcomm.Get_rank())
    assert ranks == list(range(P))
    assert not info["improved"] and info["optimizer"] == "identity"
    assert info["after"]["hops"] == _minimum("alltoall")
    newcomm.Free()


def test_bcast_with_root_and_contention_objective():
    topo = _machine()
    placement = _scrambled(seed=11, collective="bcast")
    steps = schedule("bcast", P, root=1)
    newcomm = reorder_for_collective(COMM, topo, "bcast", root=1, objective="contention", iterations=2000,
                                     seed=2, placement=placement)
    info = newcomm.report.as_dict()
    new = _new_placement(newcomm, placement)
    cont = ltm.collectives.contention(topo, steps, new)
    views = COMM.allgather((cont, info["after"]["contention"], info["before"]["contention"]))
    assert all(v == views[0] for v in views)
    assert cont == info["after"]["contention"] <= info["before"]["contention"]
    assert newcomm.bcast(newcomm.Get_rank(), root=1) == 1
    newcomm.Free()


def test_errors_are_raised_on_every_rank():
    topo = _machine()
    placement = _nodes().tolist()
    # unknown names are checked at the door, before any other MPI call (libtopomap.validation)
    with pytest.raises(ChoiceError, match="unknown optimizer 'bogus'"):
        reorder_for_collective(COMM, topo, optimizers=("two-opt", "bogus"), iterations=10, placement=placement)
    with pytest.raises(ChoiceError, match="unknown collective"):
        reorder_for_collective(COMM, topo, "scatter", iterations=10, placement=placement)
    bad = placement[:-1]
    with pytest.raises(CommError):
        reorder_for_collective(COMM, topo, iterations=10, placement=bad)
    COMM.Barrier()


def test_return_type_does_not_depend_on_report_flag():
    topo = _machine()
    placement = _scrambled()
    a = reorder_for_collective(COMM, topo, "allreduce", iterations=500, seed=4, placement=placement)
    with pytest.warns(DeprecationWarning, match="report"):
        b, info = reorder_for_collective(COMM, topo, "allreduce", iterations=500, seed=4, placement=placement,
                                         report=True)
    with pytest.warns(DeprecationWarning):
        c = reorder_for_collective(COMM, topo, "allreduce", iterations=500, seed=4, placement=placement, report=False)
    ok = (type(a) is type(b) is type(c) and isinstance(a, MPI.Intracomm) and isinstance(info, dict)
          and info["new_rank_of"].tolist() == a.report.new_rank_of.tolist() == c.report.new_rank_of.tolist()
          and a.Get_rank() == b.Get_rank() == c.Get_rank() == a.report.new_rank)
    # who ran which optimizer: candidate k on rank k (every rank maps), optimizers alternate
    ok &= [(d["rank"], d["optimizer"]) for d in a.report.candidates] == [
        (r, ("anneal", "two-opt")[r % 2]) for r in range(P)]
    ok &= a.report.skipped == []
    a.Free(), b.Free(), c.Free()
    assert all(COMM.allgather(bool(ok)))
