"""Create_dist_graph(_adjacent) with reordering, under real MPI (run by tests/test_mpi_suite.py).

Every rank runs these tests; assertions are made on ``allgather``-ed values so all ranks agree.
"""

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
from libtopomap.mpi import collective_call, last_report
from _helpers import COMM, P, RANK


def _torus():
    """A P-host torus (P = 4 or 8): 2x2 or 4x2."""
    return ltm.torus(f"{P // 2}x2")


def _ring_graph(weighted=False, zero=None):
    """The CommGraph of :func:`_ring_lists` (edge r -> d weighted as rank r declares it)."""
    src, dst, w = [], [], []
    for r in range(P):
        _, d, _, dw = _ring_lists(r, weighted, zero)
        src += [r] * len(d)
        dst += d
        w += list(dw) if isinstance(dw, list) else [1] * len(d)
    return ltm.CommGraph(P, src, dst, w)


def _bad_placement(seed=7, weighted=False, zero=None):
    """A bad rank -> vertex placement for the ring, the same on every rank: the worst (max congestion,
    then hop-bytes) of 32 random permutations."""
    rng = np.random.default_rng(seed)
    topo = _torus()
    g = _ring_graph(weighted, zero)
    perms = [rng.permutation(P) for _ in range(32)]
    worst = max(perms, key=lambda v: (ltm.max_congestion(topo, g, v), ltm.hop_bytes(topo, g, v)))
    return [int(v) for v in worst]


def _ring_lists(rank, weighted, zero=None):
    """Ring neighbour lists (a deliberately irregular order), weights depending on the edge; the rank
    ``zero`` has no edges at all."""
    nbrs = [x for x in ((rank + 1) % P, (rank - 1) % P) if x != zero and x != rank]
    if rank == zero:
        nbrs = []
    sources = nbrs[::-1]
    destinations = nbrs
    if not weighted:
        return sources, destinations, None, None
    if not nbrs:
        return sources, destinations, MPI.WEIGHTS_EMPTY, MPI.WEIGHTS_EMPTY

    def w(a, b):  # symmetric, distinct per edge
        return 1 + 3 * min(a, b) + max(a, b)

    return sources, destinations, [w(s, rank) for s in sources], [w(rank, d) for d in destinations]


def _plain(x):
    if x is MPI.WEIGHTS_EMPTY:
        return "EMPTY"
    if x is MPI.UNWEIGHTED:
        return "UNWEIGHTED"
    return None if x is None else [int(v) for v in x]


def _agree(ok):
    """All ranks' verdicts, so every rank fails together."""
    return all(COMM.allgather(bool(ok)))


@pytest.mark.parametrize("weighted", [True, False])
def test_neighbor_lists_after_reorder(weighted):
    zero = P - 1  # a zero-degree rank
    s, d, sw, dw = _ring_lists(RANK, weighted, zero=zero)
    passed = COMM.allgather((s, d, _plain(sw), _plain(dw)))
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=_torus(),
                                        placement=_bad_placement(weighted=weighted, zero=zero), seed=11)
    try:
        assert type(dc) is MPI.Distgraphcomm
        k = dc.Get_rank()
        rep = ltm.report(dc)
        assert last_report(dc) is rep
        gs, gd, gw = dc.Get_dist_neighbors()
        ps, pd, psw, pdw = passed[k]
        assert gs == ps and gd == pd
        if weighted:
            assert gw is not None
            if k != zero:
                assert list(gw[0]) == psw and list(gw[1]) == pdw
            else:
                assert list(gw[0]) == [] and list(gw[1]) == []
        else:
            assert gw is None
        # the new rank is the one the report promised, the same on every rank
        assert k == rep.new_rank == rep.new_rank_of[RANK]
        ks = COMM.allgather(k)
        assert sorted(ks) == list(range(P))
        assert ks == rep.new_rank_of.tolist()
        # the scrambled ring on a torus can be improved, and the result is never worse
        assert rep.improved and rep.strategy != "identity" and rep.winner_rank is not None
        assert rep.after["objective"] < rep.before["objective"]
        assert set(rep.timings) >= {"locate", "gather", "kernels", "strategies", "selection", "build", "total"}
    finally:
        dc.Free()


def test_process_sits_on_chosen_vertex():
    placement = _bad_placement(3)
    s, d, sw, dw = _ring_lists(RANK, False)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=_torus(), placement=placement, seed=5)
    rep = ltm.report(dc)
    # new rank k is held by a process whose vertex is vertices_after[k]
    where = dc.allgather(placement[RANK])
    ok = where == rep.vertices_after.tolist() and rep.vertices_before.tolist() == placement
    # the model numbers in the report are those of the placements it names
    g = _ring_graph()
    ok = ok and abs(ltm.max_congestion(_torus(), g, rep.vertices_after) - rep.after["max_congestion"]) < 1e-9
    dc.Free()
    assert _agree(ok)


def test_collectives_on_new_comm():
    s, d, sw, dw = _ring_lists(RANK, False)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=_torus(), placement=_bad_placement(), seed=1)
    k = dc.Get_rank()
    buf = np.arange(5, dtype=np.int64) + 100 if k == 0 else np.zeros(5, np.int64)
    dc.Bcast(buf, root=0)
    ok = buf.tolist() == list(range(100, 105))
    tot = np.zeros(3, np.int64)
    dc.Allreduce(np.array([k, 1, k * k], np.int64), tot, op=MPI.SUM)
    ok &= tot.tolist() == [P * (P - 1) // 2, P, sum(i * i for i in range(P))]
    send = np.array([1000 * k + j for j in range(P)], np.int64)
    recv = np.empty(P, np.int64)
    dc.Alltoall(send, recv)
    ok &= recv.tolist() == [1000 * i + k for i in range(P)]
    # neighbour alltoall over the logical ring: block to destination j is 10*k + j
    srcs, dsts, _ = dc.Get_dist_neighbors()
    nsend = np.array([10 * k + j for j in dsts], np.int64)
    nrecv = np.empty(len(srcs), np.int64)
    dc.Neighbor_alltoall(nsend, nrecv)
    ok &= nrecv.tolist() == [10 * i + k for i in srcs]
    dc.Free()
    assert _agree(ok)


def test_same_seed_same_mapping():
    s, d, sw, dw = _ring_lists(RANK, True)
    kw = dict(topology=_torus(), placement=_bad_placement(9, weighted=True), seed=1234,
              strategies=("random", "greedy", "rcm"), refine="ta", iterations=200)
    a = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, **kw)
    b = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, **kw)
    ra, rb = ltm.report(a), ltm.report(b)
    ok = (ra.new_rank_of.tolist() == rb.new_rank_of.tolist() and ra.strategy == rb.strategy
          and ra.winner_rank == rb.winner_rank and ra.seed == rb.seed == 1234
          and [c["value"] for c in ra.candidates] == [c["value"] for c in rb.candidates])
    # each rank ran strategy r mod S with its own seed
    ok &= [c["strategy"].split("+")[0] for c in ra.candidates] == [("random", "greedy", "rcm")[r % 3] for r in range(P)]
    ok &= len({c["seed"] for c in ra.candidates}) == P
    a.Free(), b.Free()
    assert _agree(ok)


def test_identity_kept_when_already_optimal():
    # ring on a ring topology, identity placement: nothing beats it
    topo = ltm.torus(str(P))
    s, d, sw, dw = _ring_lists(RANK, False)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, placement=list(range(P)), seed=2)
    rep = ltm.report(dc)
    ok = (rep.strategy == "identity" and rep.winner_rank is None and not rep.improved
          and dc.Get_rank() == RANK and rep.after == rep.before)
    dc.Free()
    assert _agree(ok)


def test_without_reorder_is_plain_mpi4py():
    s, d, sw, dw = _ring_lists(RANK, True, zero=0)
    for dc in (ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, reorder=False, topology=_torus()),
               ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw)):
        ok = type(dc) is MPI.Distgraphcomm and dc.Get_rank() == RANK and last_report(dc) is None
        ref = COMM.Create_dist_graph_adjacent(s, d, sw, dw, reorder=False)
        ok &= dc.Get_dist_neighbors() == ref.Get_dist_neighbors()
        ref.Free(), dc.Free()
        assert _agree(ok)


def test_create_dist_graph_general_form():
    # rank 0 declares every edge of the ring (weights = 1 + edge id); the others declare none
    if RANK == 0:
        sources = list(range(P))
        degrees = [2] * P
        destinations = [x for r in range(P) for x in ((r + 1) % P, (r - 1) % P)]
        weights = [1 + (r + x) % 5 for r in range(P) for x in ((r + 1) % P, (r - 1) % P)]
    else:
        sources, degrees, destinations, weights = [], [], [], []
    ref = COMM.Create_dist_graph(sources, degrees, destinations, weights, reorder=False)
    expected = COMM.allgather(ref.Get_dist_neighbors())
    ref.Free()
    dc = ltm.Create_dist_graph(COMM, sources, degrees, destinations, weights, topology=_torus(),
                               placement=_bad_placement(4), seed=3)
    got = dc.Get_dist_neighbors()
    k = dc.Get_rank()
    ok = (got[0] == expected[k][0] and got[1] == expected[k][1]
          and [list(x) for x in got[2]] == [list(x) for x in expected[k][2]])
    ok &= ltm.report(dc).improved
    dc.Free()
    assert _agree(ok)


def test_topomap_low_level():
    s, d, sw, dw = _ring_lists(RANK, False)
    plain = COMM.Create_dist_graph_adjacent(s, d, sw, dw, reorder=False)
    newrank = ltm.topomap(plain, _torus(), placement=_bad_placement(), seed=11)
    rep = last_report(plain)
    ok = rep is not None and newrank == rep.new_rank and sorted(COMM.allgather(newrank)) == list(range(P))
    # the same seed through the high-level call gives the same ranks
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=_torus(), placement=_bad_placement(), seed=11)
    ok &= dc.Get_rank() == newrank
    plain.Free(), dc.Free()
    assert _agree(ok)


def test_several_processes_per_host():
    # P/2 hosts with 2 slots each; the job fills them with a bad layout given as fake names
    t = ltm.torus(str(P // 2))
    topo = ltm.Topology(t.names, np.stack([t.link_u, t.link_v], 1), slots=np.full(t.n_vertices, 2))
    # ranks r and r + P/2 share host n<r>: ring neighbours are always on other hosts
    names = {r: f"n{r % (P // 2)}" for r in range(P)}
    s, d, sw, dw = _ring_lists(RANK, False)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=topo, fake_names=names, seed=6)
    rep = ltm.report(dc)
    counts = np.bincount(rep.vertices_after, minlength=topo.n_vertices)
    ok = counts.tolist() == [2] * (P // 2)
    ok &= rep.after["objective"] < rep.before["objective"]
    # process holding new rank k is on host vertices_after[k]
    ok &= dc.allgather(topo.index(names[RANK])) == rep.vertices_after.tolist()
    ok &= dc.Get_dist_neighbors()[:2] == tuple(COMM.allgather((s, d))[dc.Get_rank()])
    dc.Free()
    assert _agree(ok)


def test_topology_from_path(tmp_path_factory):
    def write():  # on rank 0; collective_call keeps the others from waiting forever if it fails
        if RANK == 0:
            path = str(tmp_path_factory.mktemp("topo") / "t.topo")
            ltm.save(path, _torus())
            return path
    path = COMM.bcast(collective_call(COMM, write, what="writing the topology"), root=0)
    s, d, sw, dw = _ring_lists(RANK, False)
    dc = ltm.Create_dist_graph_adjacent(COMM, s, d, sw, dw, topology=path, placement=_bad_placement(), seed=1)
    ok = ltm.report(dc).improved
    dc.Free()
    assert _agree(ok)
