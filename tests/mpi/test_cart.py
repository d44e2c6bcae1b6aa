"""ltm.Create_cart and ltm.Compute_dims under real MPI (run by tests/test_mpi_suite.py).

The Cartesian cases of mpi4py's own ``test/test_comm_topo.py`` (``BaseTestTopo.testCartcomm`` on
``COMM_SELF``, ``COMM_WORLD`` and their duplicates) are ported here with ``comm.Create_cart`` routed
through ``ltm.Create_cart``: once really reordered on a multi-host torus from a bad placement, once on
a one-host topology, once with ``reorder=False``.  Source: https://github.com/mpi4py/mpi4py,
test/test_comm_topo.py, Copyright (c) 2019, Lisandro Dalcin, BSD 2-Clause License (the assertions are
rewritten for pytest and for every rank to agree before failing).

Every rank runs these tests; verdicts are ``allgather``-ed so all ranks fail together.
"""

import math

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
from _helpers import COMM, P, RANK, agree, fake_names_file, raised, shared_dir
from libtopomap.cartesian import cart_graph
from libtopomap.mpi import collective_call, last_report


def _torus():
    return ltm.torus(f"{P // 2}x2")


def _one_host(n):
    return ltm.Topology(["node"], np.zeros((0, 2), dtype=np.int64), slots=[n])


def _bad_placement(dims, periods, seed=3):
    """The worst (max congestion, hop-bytes) of 32 random placements of the Cartesian grid."""
    topo, g = _torus(), cart_graph(dims, periods)
    rng = np.random.default_rng(seed)
    perms = [rng.permutation(P) for _ in range(32)]
    worst = max(perms, key=lambda v: (ltm.max_congestion(topo, g, v[:g.n]), ltm.hop_bytes(topo, g, v[:g.n])))
    return [int(v) for v in worst]


def _comm(kind):
    return {"self": MPI.COMM_SELF, "world": COMM, "selfdup": MPI.COMM_SELF.Dup(),
            "worlddup": COMM.Dup()}[kind]


def _routes(comm, how):
    """ltm.Create_cart with the keyword arguments of one routing."""
    size = comm.Get_size()
    if how == "plain":
        return lambda dims, periods=None: ltm.Create_cart(comm, dims, periods, reorder=False)
    if how == "onehost":
        return lambda dims, periods=None: ltm.Create_cart(comm, dims, periods, topology=_one_host(size),
                                                          placement=[0] * size, seed=1)
    topo = _torus() if size == P else ltm.torus("2")

    def reordered(dims, periods=None):
        if size == P:
            placement = _bad_placement(dims, periods)
        else:
            placement = [0] * size
        return ltm.Create_cart(comm, dims, periods, topology=topo, placement=placement, seed=2)
    return reordered


# ----------------------------------------------------------------------- mpi4py's testCartcomm, ported
def _test_cartcomm(comm, create):
    """mpi4py BaseTestTopo.testCartcomm with Create_cart = ``create``; returns a list of failures."""
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)
    size = comm.Get_size()
    for ndim in (1, 2, 3, 4, 5):
        dims = MPI.Compute_dims(size, [0] * ndim)
        periods = [True] * len(dims)
        topo = create(dims, periods=periods)
        check(type(topo) is MPI.Cartcomm, f"type {type(topo)}")
        check(topo.dim == len(dims) and topo.ndim == len(dims), "dim")
        coordinates = topo.coords
        check(coordinates == topo.Get_coords(topo.rank), "coords")
        neighbors = []
        for i in range(ndim):
            for d in (-1, +1):
                coord = list(coordinates)
                coord[i] = (coord[i] + d) % dims[i]
                neigh = topo.Get_cart_rank(coord)
                check(coord == topo.Get_coords(neigh), f"Get_coords(Get_cart_rank({coord}))")
                source, dest = topo.Shift(i, d)
                check(neigh == dest, f"Shift({i}, {d})")
                neighbors.append(neigh)
        inedges, outedges = topo.inoutedges
        check(inedges == neighbors and outedges == neighbors, "inoutedges")
        if ndim == 1:
            topo.Free()
            continue
        for i in range(ndim):
            rem_dims = [1] * ndim
            rem_dims[i] = 0
            sub = topo.Sub(rem_dims)
            if sub != MPI.COMM_NULL:
                check(sub.dim == ndim - 1, "Sub dim")
                dims = topo.dims
                del dims[i]
                check(sub.dims == dims, "Sub dims")
                sub.Free()
        topo.Free()
    if size > 1:
        return fails
    topo = create([])
    check(topo.dim == 0 and topo.dims == [] and topo.periods == [] and topo.coords == [], "0-d")
    check(topo.Get_cart_rank([]) == 0, "0-d rank")
    check(topo.inoutedges == ([], []), "0-d inoutedges")
    topo.Free()
    return fails


@pytest.mark.parametrize("how", ["reordered", "onehost", "plain"])
@pytest.mark.parametrize("kind", ["self", "world", "selfdup", "worlddup"])
def test_mpi4py_cartcomm(kind, how):
    comm = _comm(kind)
    try:
        fails = _test_cartcomm(comm, _routes(comm, how))
    finally:
        if kind.endswith("dup"):
            comm.Free()
    assert agree(not fails), fails


# ----------------------------------------------------------------------- reordering
def test_reordered_rank_holds_its_coordinates_and_sits_where_mapped():
    dims, periods = [P // 2, 2], [True, False]
    placement = _bad_placement(dims, periods)
    cart = ltm.Create_cart(COMM, dims, periods, topology=_torus(), placement=placement, seed=5)
    rep = last_report(cart)
    k = cart.Get_rank()
    ok = type(cart) is MPI.Cartcomm and rep is not None and rep.new_rank == k
    ok &= cart.Get_coords(k) == list(np.unravel_index(k, dims))
    ok &= cart.dims == dims and cart.periods == periods
    # the process holding new rank k runs on vertex vertices_after[k]
    ok &= cart.allgather(placement[RANK]) == rep.vertices_after.tolist()
    g = cart_graph(dims, periods)
    after = ltm.max_congestion(_torus(), g, rep.vertices_after)
    before = ltm.max_congestion(_torus(), g, np.asarray(placement))
    ok &= after < before and abs(after - rep.after["max_congestion"]) < 1e-9
    cart.Free()
    assert agree(ok)


def test_same_as_mpi4py_without_reorder_and_on_one_host():
    dims = MPI.Compute_dims(P, 2)
    ref = COMM.Create_cart(dims, [True, False])
    a = ltm.Create_cart(COMM, dims, [True, False], reorder=False, topology=_torus())
    b = ltm.Create_cart(COMM, dims, [True, False], topology=_one_host(P), placement=[0] * P)
    ok = all(type(c) is MPI.Cartcomm for c in (a, b))
    ok &= ref.rank == a.rank == b.rank and ref.coords == a.coords == b.coords
    ok &= MPI.Comm.Compare(ref, a) == MPI.Comm.Compare(ref, b) == MPI.CONGRUENT
    for c in (ref, a, b):
        c.Free()
    assert agree(ok)


def test_fewer_grid_points_than_processes():
    dims = [P // 2]
    cart = ltm.Create_cart(COMM, dims, [True], topology=_torus(), placement=list(range(P))[::-1], seed=1)
    inside = cart != MPI.COMM_NULL
    ok = sum(COMM.allgather(int(inside))) == P // 2
    if inside:
        ok &= cart.Get_size() == P // 2 and cart.coords == [cart.Get_rank()]
        cart.Free()
    assert agree(ok)


def test_weights_and_topology_path(tmp_path_factory):
    path = shared_dir(tmp_path_factory, "topo") + "/t.topo"
    collective_call(COMM, lambda: RANK == 0 and ltm.save(path, _torus()), what="writing the topology")
    dims = [P // 2, 2]
    cart = ltm.Create_cart(COMM, dims, True, topology=path, weights=[1, 9],
                           placement=_bad_placement(dims, [True, True]), seed=4)
    rep = last_report(cart)
    g = cart_graph(dims, True, [1, 9])
    ok = abs(ltm.max_congestion(_torus(), g, rep.vertices_after) - rep.after["max_congestion"]) < 1e-9
    ok &= rep.after["objective"] <= rep.before["objective"]
    cart.Free()
    assert agree(ok)


# ----------------------------------------------------------------------- total_budget
def test_a_tiny_budget_keeps_the_current_placement():
    dims, periods = [P // 2, 2], [True, True]
    placement = _bad_placement(dims, periods)
    cart = ltm.Create_cart(COMM, dims, periods, topology=_torus(), placement=placement, seed=5, total_budget=1e-6)
    rep = last_report(cart)
    # nothing fits in 1 microsecond: every construction is skipped with the reason, no rank moves
    ok = rep.strategy == "identity" and not rep.improved and rep.candidates == []
    ok &= cart.Get_rank() == RANK and rep.vertices_after.tolist() == placement
    ok &= len(rep.skipped) > 0 and all("of the 1e-06 s budget" in x for x in rep.skipped)
    cart.Free()
    # a budget large enough for everything maps as without one
    cart = ltm.Create_cart(COMM, dims, periods, topology=_torus(), placement=placement, seed=5, total_budget=1e3)
    rep = last_report(cart)
    ok &= rep.improved and not any("budget" in x for x in rep.skipped)
    ok &= rep.after["objective"] < rep.before["objective"]
    cart.Free()
    assert agree(ok), rep.skipped


def test_budgets_that_differ_between_ranks_raise_the_same_comm_error_everywhere():
    dims, periods = [P // 2, 2], [True, True]
    got = raised(lambda: ltm.Create_cart(COMM, dims, periods, topology=_torus(), placement=list(range(P)),
                                          seed=1, total_budget=10.0 + (RANK == 1)))
    msgs = COMM.allgather(got)
    assert all(m is not None and m == msgs[0] for m in msgs), msgs
    assert msgs[0][0] == "CommError" and "total_budget differ between ranks" in msgs[0][1], msgs[0]
    # the same bad budget everywhere: the same ArgumentError on every rank
    got = raised(lambda: ltm.Create_cart(COMM, dims, periods, topology=_torus(), placement=list(range(P)),
                                          total_budget=0))
    msgs = COMM.allgather(got)
    assert all(m is not None and m == msgs[0] for m in msgs), msgs
    assert msgs[0][0] == "ArgumentError" and "total_budget must be a number of seconds > 0" in msgs[0][1]
    assert COMM.allreduce(1) == P


def test_reorder_that_differs_between_ranks_raises_instead_of_hanging():
    dims = [P // 2, 2]
    got = raised(lambda: ltm.Create_cart(COMM, dims, True, reorder=RANK != 0, topology=_torus(),
                                          placement=list(range(P))))
    msgs = COMM.allgather(got)
    assert all(m is not None and m == msgs[0] and m[0] == "CommError" for m in msgs), msgs
    assert "reorder differ between ranks" in msgs[0][1], msgs[0]
    assert COMM.allreduce(1) == P


# ----------------------------------------------------------------------- halo exchange, fake names
def _halo_checksum(cart, n=8, steps=3):
    """Jacobi-like halo exchange with Sendrecv along Shift in every dimension; a global checksum."""
    coords = cart.coords
    dims = cart.dims
    gy = (coords[0] * n + np.arange(n))[:, None] / (dims[0] * n)
    gx = (coords[1] * n + np.arange(n))[None, :] / (dims[1] * n)
    u = np.sin(2 * np.pi * gx) * np.cos(2 * np.pi * gy) + gx * gy
    for _ in range(steps):
        up, down = cart.Shift(0, 1)
        left, right = cart.Shift(1, 1)
        halo = {}
        for (src, dst), send, key in (((up, down), u[-1].copy(), "n"), ((down, up), u[0].copy(), "s"),
                                      ((left, right), u[:, -1].copy(), "w"), ((right, left), u[:, 0].copy(), "e")):
            recv = np.empty(n)
            cart.Sendrecv(send, dest=dst, recvbuf=recv, source=src)
            halo[key] = recv
        nb = np.zeros_like(u)
        nb[1:] += u[:-1]
        nb[0] += halo["n"]
        nb[:-1] += u[1:]
        nb[-1] += halo["s"]
        nb[:, 1:] += u[:, :-1]
        nb[:, 0] += halo["w"]
        nb[:, :-1] += u[:, 1:]
        nb[:, -1] += halo["e"]
        u = 0.25 * nb
    # order-independent exact reduction: every block at its Cartesian rank
    return cart.gather(u.round(12).tobytes(), root=0)


def test_halo_exchange_on_scrambled_fake_names(tmp_path_factory):
    topo = _torus()
    dims, periods = [P // 2, 2], [True, True]
    bad = _bad_placement(dims, periods, seed=11)
    names = fake_names_file(tmp_path_factory, [topo.names[v] for v in bad], "scrambled.names", suffix=".cluster")
    plain = COMM.Create_cart(dims, periods)
    cart = ltm.Create_cart(COMM, dims, periods, topology=topo, fake_names=names, seed=3)
    g = cart_graph(dims, periods)
    where_plain = plain.allgather(bad[RANK])
    where_cart = cart.allgather(bad[RANK])
    cong_plain = ltm.max_congestion(topo, g, np.asarray(where_plain))
    cong_cart = ltm.max_congestion(topo, g, np.asarray(where_cart))
    a, b = _halo_checksum(plain), _halo_checksum(cart)
    ok = cong_cart < cong_plain
    # the two roots (Cartesian rank 0) are different processes in general: broadcast both gathers
    blocks_plain = COMM.bcast(a, root=COMM.allgather(plain.Get_rank()).index(0))
    blocks_cart = COMM.bcast(b, root=COMM.allgather(cart.Get_rank()).index(0))
    ok &= blocks_plain == blocks_cart and len(blocks_plain) == P
    plain.Free(), cart.Free()
    assert agree(ok)


# ----------------------------------------------------------------------- errors


@pytest.mark.parametrize("dims, periods, weights, err, base", [
    ([0, 2], None, None, "ArgumentError", ValueError),
    ([P, 2], None, None, "ArgumentError", ValueError),
    ([2], [True, True], None, "ArgumentError", ValueError),
    ([2], None, [-1], "ArgumentError", ValueError),
    (["a"], None, None, "ArgumentTypeError", TypeError),
])
def test_bad_arguments_raise_the_same_error_everywhere(dims, periods, weights, err, base):
    got = raised(lambda: ltm.Create_cart(COMM, dims, periods, topology=_torus(), weights=weights,
                                          placement=list(range(P))))
    msgs = COMM.allgather(got)
    assert all(m is not None and m == msgs[0] for m in msgs), msgs
    assert msgs[0][0] == err
    assert issubclass(getattr(ltm, err), base)
    assert COMM.allreduce(1) == P


def test_disagreeing_arguments():
    dims = [P] if RANK else [P // 2, 2]
    got = raised(lambda: ltm.Create_cart(COMM, dims, True, topology=_torus(), placement=list(range(P))))
    msgs = COMM.allgather(got)
    assert all(m is not None and m == msgs[0] and m[0] == "CommError" for m in msgs), msgs
    assert "differ between ranks" in msgs[0][1]
    bad = [0, 2] if RANK == 0 else [P]
    got = raised(lambda: ltm.Create_cart(COMM, bad, True, topology=_torus(), placement=list(range(P))))
    msgs = COMM.allgather(got)
    assert all(m is not None and m == msgs[0] and m[0] == "CommError" for m in msgs), msgs
    assert "rank 0" in msgs[0][1] and "dims[0] = 0" in msgs[0][1]
    assert COMM.allreduce(1) == P


# ----------------------------------------------------------------------- Compute_dims
def test_compute_dims_is_the_running_mpi():
    mpich = "MPICH" in MPI.Get_library_version()
    bad = []
    for k in (1, 2, 3, 4):
        for n in range(1 + RANK, 1001, P):  # shared out between ranks
            mine, theirs = ltm.Compute_dims(n, k), MPI.Compute_dims(n, k)
            if math.prod(mine) != n or (mpich and mine != theirs) or (
                    not mpich and mine[0] - mine[-1] > theirs[0] - theirs[-1]):
                bad.append((n, k, mine, theirs))
    assert agree(not bad), bad[:5]
    fixed = [0, 2] if P % 2 == 0 else [0, 1]
    assert ltm.Compute_dims(P, fixed) == MPI.Compute_dims(P, fixed)
