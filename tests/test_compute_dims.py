"""Compute_dims (MPI_Dims_create without MPI, topology-aware) and the Cartesian stencil graph."""

import itertools
import math

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.cartesian import Compute_dims, cart_graph, cart_neighbors, check_cart_args


def _brute(n, k):
    """MPICH's choice by brute force over all k-tuples: smallest max - min, then largest min, then
    lexicographically smallest non-increasing tuple."""
    best = None
    for t in itertools.product(range(1, n + 1), repeat=k):
        if math.prod(t) != n or list(t) != sorted(t, reverse=True):
            continue
        key = (t[0] - t[-1], -t[-1], t)
        best = key if best is None or key < best else best
    return list(best[2])


@pytest.mark.parametrize("k", [1, 2, 3, pytest.param(4, marks=pytest.mark.slow)])
def test_matches_brute_force(k):
    for n in range(1, 73 if k < 4 else 49):
        assert Compute_dims(n, k) == _brute(n, k), (n, k)


# Values returned by MPICH 5.0.2's MPI.Compute_dims (the cases where the balance ties); the MPI test
# tests/mpi/test_cart.py compares against the running MPI for every n <= 1000 as well.
@pytest.mark.parametrize("n, k, expected", [
    (360, 3, [10, 6, 6]), (3696, 3, [22, 14, 12]), (2160, 4, [10, 6, 6, 6]), (2520, 4, [10, 7, 6, 6]),
    (20, 4, [5, 2, 2, 1]), (42, 4, [7, 3, 2, 1]), (7, 3, [7, 1, 1]), (6, 2, [3, 2]), (1, 3, [1, 1, 1]),
    (262144, 3, [64, 64, 64]), (2 ** 31 - 1, 2, [2 ** 31 - 1, 1]), (5, 0, []),
])
def test_known_mpich_values(n, k, expected):
    assert Compute_dims(n, k) == expected


def test_fixed_dimensions_stay():
    assert Compute_dims(12, [2, 0, 0]) == [2, 3, 2]
    assert Compute_dims(12, [0, 3, 0]) == [2, 3, 2]
    assert Compute_dims(8, [2, 0, 2]) == [2, 2, 2]
    assert Compute_dims(8, [2, 2, 2]) == [2, 2, 2]
    assert Compute_dims(6.0, 2) == [3, 2]  # mpi4py accepts integral floats


@pytest.mark.parametrize("args, err, needle", [
    ((0, 2), ltm.ArgumentError, "nnodes = 0"),
    ((-1, 2), ltm.ArgumentError, "nnodes = -1"),
    ((6, [4, 0]), ltm.ArgumentError, "do not divide"),
    ((6, [-1, 0]), ltm.ArgumentError, "dims[0] = -1"),
    ((6, -1), ltm.ArgumentError, "negative"),
    ((6, "a"), ltm.ArgumentTypeError, "sequence of integers"),
    ((6, [0, "x"]), ltm.ArgumentTypeError, "dims[1]"),
    ((6.5, 2), ltm.ArgumentTypeError, "nnodes"),
])
def test_errors(args, err, needle):
    with pytest.raises(err, match=None) as e:
        Compute_dims(*args)
    assert needle in str(e.value)
    assert isinstance(e.value, ValueError if err is ltm.ArgumentError else TypeError)


def _with_slots(t, s):
    return ltm.Topology(t.names, np.stack([t.link_u, t.link_v], 1), slots=np.full(t.n_vertices, s),
                        name=t.name, attrs=t.attrs)


def test_topology_torus_shape_wins_over_balance():
    assert Compute_dims(16, 2) == [4, 4]
    assert Compute_dims(16, 2, topology=ltm.torus("8x2")) == [8, 2]
    assert Compute_dims(16, 2, topology=ltm.mesh("8x2")) == [8, 2]
    assert Compute_dims(64, 3, topology=ltm.torus("16x4")) == [16, 4, 1]
    assert Compute_dims(32, 2, topology=ltm.hypercube(5)) == [8, 4]  # no 2-D grid matches: balance
    assert Compute_dims(8, 3, topology=ltm.hypercube(3)) == [2, 2, 2]
    # 2 ranks per host on a 8x2 torus: the host grid 8x2 of boxes 2x1 or 1x2
    # 16x2 and 8x4 both embed; the balance decides
    assert Compute_dims(32, 2, topology=_with_slots(ltm.torus("8x2"), 2)) == [8, 4]
    # the job does not fill the torus: no shape to match, same as MPI
    assert Compute_dims(12, 2, topology=ltm.torus("8x2")) == [4, 3]


def test_topology_ranks_per_host():
    # 3 ranks per host, no grid shape: 9x4 puts 3x1 boxes on a 3x4 host grid (7 host faces)
    # where MPI's 6x6 gives a 2x6 host grid (8)
    topo = _with_slots(ltm.torus("12"), 3)
    topo.attrs.clear()  # hide the shape: only the ranks per host count
    assert Compute_dims(36, 2) == [6, 6]
    assert Compute_dims(36, 2, topology=topo) == [9, 4]
    # 1 rank per host and no shape: exactly MPI
    flat = ltm.torus("12")
    flat.attrs.clear()
    for n, k in [(12, 2), (36, 3), (360, 3)]:
        assert Compute_dims(n, k, topology=flat if n == 12 else _one_slot(n)) == Compute_dims(n, k)


def _one_slot(n):
    t = ltm.torus(str(n))
    t.attrs.clear()
    return t


@pytest.mark.parametrize("dims", ["4x4", "3x5", "4x3x5"])
def test_cart_graph_is_the_periodic_stencil(dims):
    d = [int(x) for x in dims.split("x")]
    g, s = cart_graph(d, True), ltm.stencil(dims)
    assert g.n == s.n
    a = sorted(zip(g.src.tolist(), g.dst.tolist(), g.weights.tolist()))
    b = sorted(zip(s.src.tolist(), s.dst.tolist(), s.weights.tolist()))
    assert a == b


def test_cart_graph_small_and_weighted():
    # 2 x 3, periodic in the second dimension only, weights 5 (first) and 2 (second)
    g = cart_graph([2, 3], [False, True], [5, 2])
    edges = {(int(u), int(v)): float(w) for u, v, w in zip(g.src, g.dst, g.weights)}
    # rank 0 = (0,0): (1,0) = rank 3 across dim 0; (0,1) = 1 and (0,2) = 2 across dim 1
    assert {k: v for k, v in edges.items() if k[0] == 0} == {(0, 3): 5.0, (0, 1): 2.0, (0, 2): 2.0}
    assert len(edges) == 6 * 3
    # a periodic dimension of size 2: the neighbour twice, weights added; size 1: no self-loop
    assert cart_neighbors(0, [2, 1], [True, True], [3, 7]) == ([1], [6])
    g = cart_graph([2, 1], True, [3, 7])
    assert g.n_edges == 2 and g.weights.tolist() == [6.0, 6.0]
    # every rank's neighbours in cart_graph are cart_neighbors
    d, p = [3, 2, 4], [True, False, True]
    g = cart_graph(d, p, [1, 2, 3])
    for r in range(24):
        m = g.src == r
        nb = sorted(zip(g.dst[m].tolist(), g.weights[m].astype(int).tolist()))
        assert nb == list(zip(*cart_neighbors(r, d, p, [1, 2, 3])))


@pytest.mark.parametrize("args, err, needle", [
    ((4, [0, 2]), ltm.ArgumentError, "dims[0] = 0"),
    ((4, [3, 2]), ltm.ArgumentError, "need 6 processes"),
    ((4, [2, 2], [True]), ltm.ArgumentError, "periods has 1"),
    ((4, [2, 2], None, [1, -1]), ltm.ArgumentError, "weights[1] = -1"),
    ((4, [2, 2], None, [1]), ltm.ArgumentError, "weights has 1"),
    ((4, "22"), ltm.ArgumentTypeError, "dims"),
    ((4, [2, 2.5]), ltm.ArgumentTypeError, "dims[1]"),
])
def test_cart_args(args, err, needle):
    with pytest.raises(err) as e:
        check_cart_args(*args)
    assert needle in str(e.value)
    assert check_cart_args(4, [2, 2], True) == ([2, 2], [True, True], [1, 1])
