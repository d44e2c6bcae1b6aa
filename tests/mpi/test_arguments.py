"""The arguments of the MPI calls under real MPI (run by tests/test_mpi_suite.py at -n 4 and -n 8, MPICH and
Open MPI): a bad argument on one rank (first, middle, last) ends with the same error on every rank, before
MPI sees the arguments; the same bad argument everywhere is mpi4py's ValueError or TypeError.

Each test failed (a hang, an MPICH abort or a raw error on some ranks) before its fix (issue 12).
"""

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
from libtopomap.mpi import collective_call
from _helpers import COMM, P, RANK, all_same, raised

ODD = [0, P // 2, P - 1]  # the rank with the bad argument: first, middle, last


def _one_host(n):
    return ltm.Topology(["node"], np.zeros((0, 2), dtype=np.int64), slots=[n])


def _ring():
    return [(RANK - 1) % P], [(RANK + 1) % P]


def _adjacent(sources, destinations, sw=None, dw=None, **kw):
    kw.setdefault("topology", _one_host(P))
    kw.setdefault("placement", [0] * P)
    kw.setdefault("seed", 1)
    return lambda: ltm.Create_dist_graph_adjacent(COMM, sources, destinations, sw, dw, **kw)


# ----------------------------------------------------------------------------- ranges of ranks and weights
@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("reorder", [True, False])
def test_a_weight_beyond_mpi_int_on_one_edge_fails_on_every_rank(odd, reorder):
    # edge odd -> odd+1 weighs 2**31 at both ends (a consistent graph): mpi4py's OverflowError came
    # only on those two ranks, while building the communicator, and the others hung
    s, d = _ring()
    big = 2**31
    sw = [big] if RANK == (odd + 1) % P else [1]
    dw = [big] if RANK == odd else [1]
    msg = all_same(raised(_adjacent(s, d, sw, dw, reorder=reorder)), "CommError",
                 "2147483648 is out of range 0..2147483647", f"rank {odd}")
    assert "checking the arguments of Create_dist_graph_adjacent" in msg


@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("bad", [2**31, 2**32 + 1, 2**64 + 3, -1])
def test_a_rank_id_out_of_range_on_one_rank_fails_on_every_rank(odd, bad):
    s, d = _ring()
    if RANK == odd:
        d = [bad]
    all_same(raised(_adjacent(s, d)), "CommError", f"destinations[0] = {bad} is out of range",
           f"rank {odd} of {P}")


def test_the_same_bad_weight_everywhere_is_a_value_error_as_in_mpi4py():
    s, d = _ring()
    msg = all_same(raised(_adjacent(s, d, [2**40], [2**40])), "ArgumentError", "out of range")
    assert "sourceweights[0]" in msg


# ----------------------------------------------------------------------------- Create_dist_graph (the general form)
@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("case", ["degrees", "destination", "weights", "weight-range", "degree-count"])
@pytest.mark.parametrize("reorder", [True, False])
def test_create_dist_graph_bad_argument_on_one_rank_is_agreed_before_mpi(odd, case, reorder):
    # before: mpi4py's ValueError on one rank (the others hung) or an MPICH assertion (the job aborted)
    sources, degrees, dests, weights = [RANK], [1], [(RANK + 1) % P], [5]
    if RANK == odd:
        if case == "degrees":
            degrees = [3]
        elif case == "destination":
            dests = [P + 7]
        elif case == "weights":
            weights = [1, 2]
        elif case == "weight-range":
            weights = [2**31]
        else:
            degrees = [1, 0]
    fn = lambda: ltm.Create_dist_graph(COMM, sources, degrees, dests, weights, reorder=reorder,  # noqa: E731
                                       topology=_one_host(P), placement=[0] * P, seed=1)
    msg = all_same(raised(fn), "CommError", f"rank {odd} of {P}")
    assert "checking the arguments of Create_dist_graph" in msg


def test_create_dist_graph_still_builds_the_graph():
    w = list(range(1, 4))
    dests = [(RANK - 1) % P, RANK, (RANK + 1) % P]
    dc = ltm.Create_dist_graph(COMM, [RANK], [3], dests, w, topology=_one_host(P), placement=[0] * P, seed=1)
    ok = dc.Get_dist_neighbors_count() == (3, 3, True) and ltm.report(dc).strategy == "identity"
    dc.Free()
    assert all(COMM.allgather(ok))


# ----------------------------------------------------------------------------- options agreed across ranks
@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("option, good, bad", [
    ("reorder", True, False),
    ("time_budget", None, 5.0),
    ("seed", 1, 2),
    ("objective", "congestion", "dilation"),
    ("strategies", ("greedy",), ("rcm",)),
    ("refine", None, "ta"),
    ("iterations", None, 10),
])
def test_per_rank_options_are_agreed_at_entry(odd, option, good, bad):
    s, d = _ring()
    kw = {option: bad if RANK == odd else good}
    all_same(raised(_adjacent(s, d, **kw)), "CommError", f"argument(s) {option} differ",
           f"rank(s) {odd} disagree")


@pytest.mark.parametrize("odd", ODD)
def test_a_topology_given_on_some_ranks_only_is_refused_everywhere(odd):
    s, d = _ring()
    all_same(raised(_adjacent(s, d, topology=None if RANK == odd else _one_host(P))),
           "CommError", "topology given differ", f"rank(s) {odd} disagree")


@pytest.mark.parametrize("budget", [float("nan"), float("inf"), -1.0, 0.0])
def test_a_budget_that_never_stops_is_rejected(budget):
    s, d = _ring()
    all_same(raised(_adjacent(s, d, time_budget=budget)), "ArgumentError", "time_budget")


@pytest.mark.parametrize("odd", ODD)
def test_a_nan_budget_on_one_rank_fails_on_every_rank(odd):
    s, d = _ring()
    all_same(raised(_adjacent(s, d, time_budget=float("nan") if RANK == odd else 1.0)),
           "CommError", f"rank {odd} of {P}", "time_budget")


# ----------------------------------------------------------------------------- seeds
@pytest.mark.parametrize("seed, kind", [(-1, "ArgumentError"), (2**63, "ArgumentError"), (1.5, "ArgumentTypeError"),
                                        ("7", "ArgumentTypeError"), (True, "ArgumentTypeError")])
def test_bad_seeds_are_clear_errors(seed, kind):
    s, d = _ring()
    all_same(raised(_adjacent(s, d, seed=seed)), kind, "seed")


def test_a_bad_seed_in_create_cart_is_an_argument_error():
    all_same(raised(lambda: ltm.Create_cart(COMM, [P], topology=_one_host(P), placement=[0] * P,
                                            seed=-3)), "ArgumentError", "seed")


# ----------------------------------------------------------------------------- fake names
def test_the_fake_names_file_is_indexed_by_world_rank(tmp_path_factory):
    # host h<r> for world rank r; a COMM_SELF call on world rank r must find h<r>, not line 0
    def write():
        if RANK == 0:
            p = tmp_path_factory.mktemp("names") / "fake.txt"
            p.write_text("".join(f"{r} h{r}\n" for r in reversed(range(P))))
            return str(p)
    path = COMM.bcast(collective_call(COMM, write, what="writing a test file"), root=0)
    topo = ltm.Topology([f"h{r}" for r in range(P)] + ["sw"], np.array([[r, P] for r in range(P)]),
                        slots=[1] * P + [0])
    dc = ltm.Create_dist_graph_adjacent(MPI.COMM_SELF, [], [], topology=topo, fake_names=path, seed=1)
    got = ltm.report(dc).vertices_before.tolist()
    dc.Free()
    # a Split communicator in reversed order: its rank k is world rank P-1-k
    sub = COMM.Split(0, key=P - 1 - RANK)
    dc = ltm.Create_dist_graph_adjacent(sub, [], [], topology=topo, fake_names=path, seed=1)
    split_got = ltm.report(dc).vertices_before.tolist()
    dc.Free()
    sub.Free()
    assert all(COMM.allgather(got == [RANK] and split_got == [P - 1 - k for k in range(P)])), (got, split_got)


def test_a_world_rank_missing_from_the_fake_names_file_is_named(tmp_path_factory):
    def write():
        if RANK == 0:
            p = tmp_path_factory.mktemp("names") / "fake.txt"
            p.write_text("".join(f"{r} h{r}\n" for r in range(P - 1)))
            return str(p)
    path = COMM.bcast(collective_call(COMM, write, what="writing a test file"), root=0)
    topo = ltm.Topology([f"h{r}" for r in range(P)] + ["sw"], np.array([[r, P] for r in range(P)]),
                        slots=[1] * P + [0])
    sub = COMM.Split(0 if RANK >= P // 2 else 1, key=RANK)
    out = raised(lambda: ltm.Create_dist_graph_adjacent(sub, [], [], topology=topo, fake_names=path, seed=1))
    sub.Free()
    got = COMM.allgather(out)
    assert all(g is None for g in got[:P // 2]), got  # their lines are there
    assert all(g is not None and g[0] == "CommError" and f"no line for world rank(s) {P - 1}" in g[1]
               for g in got[P // 2:]), got
    assert COMM.allreduce(1) == P


# ----------------------------------------------------------------------------- topomap's communicator
def test_topomap_without_a_graph_topology_is_a_type_error():
    all_same(raised(lambda: ltm.topomap(COMM, _one_host(P), placement=[0] * P)), "ArgumentTypeError",
           "distributed-graph topology", "no topology")
    cart = COMM.Create_cart([P])
    all_same(raised(lambda: ltm.topomap(cart, _one_host(P), placement=[0] * P)), "ArgumentTypeError",
           "a Cartesian topology")
    cart.Free()


# ----------------------------------------------------------------------------- None lists
@pytest.mark.parametrize("reorder", [True, False])
def test_none_lists_are_empty_as_in_mpi4py(reorder):
    dc = ltm.Create_dist_graph_adjacent(COMM, None, None, reorder=reorder, topology=_one_host(P),
                                        placement=[0] * P, seed=1)
    ok = dc.Get_dist_neighbors() == ([], [], None)
    dc.Free()
    dc = ltm.Create_dist_graph(COMM, None, None, None, reorder=reorder, topology=_one_host(P),
                               placement=[0] * P, seed=1)
    ok &= dc.Get_dist_neighbors_count() == (0, 0, False)
    dc.Free()
    assert all(COMM.allgather(ok))


# ----------------------------------------------------------------------------- the returned communicator
def test_a_plain_distgraphcomm_with_the_report_as_an_attribute():
    s, d = _ring()
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, topology=_one_host(P), placement=[0] * P, seed=1)
    again = MPI.Comm.f2py(dc.py2f())
    ok = type(dc) is MPI.Distgraphcomm and type(again) is type(dc)
    ok &= ltm.report(dc) is ltm.report(again) and ltm.report(dc).strategy == "identity"
    ok &= ltm.report(COMM) is None
    dc.Free()
    assert all(COMM.allgather(ok))


def test_the_same_bad_arguments_everywhere_raise_value_and_type_errors():
    s, d = _ring()
    for fn, exc in ((_adjacent(s, d, MPI.WEIGHTS_EMPTY, MPI.WEIGHTS_EMPTY), ValueError),
                    (_adjacent(s, d, [1, 2], [1]), ValueError),
                    (_adjacent([0.5], d), TypeError),
                    (_adjacent(3, d), TypeError)):
        with pytest.raises(exc):
            fn()
    assert COMM.allreduce(1) == P
