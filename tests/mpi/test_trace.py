"""ltm.trace and ltm.reorder under real MPI (run by tests/test_mpi_suite.py at -n 4 and -n 8).

A program with known traffic (every send form, buffer-spec forms, pickled objects, neighbour
collectives) must give exactly that graph; the pickled bytes counted are checked against what the
receiver probes; ``reorder`` on a traced halo exchange over scrambled fake names lowers congestion and
keeps every rank's role; errors are the same on every rank.  Verdicts are ``allgather``-ed so all
ranks fail together.
"""

import gc
import inspect

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
from _helpers import COMM, P, RANK, agree, all_same, fake_names_file, raised, shared_file
from libtopomap.cartesian import cart_graph
from libtopomap.mpi import last_report
from libtopomap.mpi.tracing import BUFFER_SENDS, PICKLED_SENDS, _spec_bytes, _vector_bytes, _w_bytes



def _graph_from(edges):
    """CommGraph of ``(src, dst, weight)`` triples (summed), the expected answer."""
    if not edges:
        return ltm.CommGraph(P, [], [])
    s, d, w = zip(*edges)
    return ltm.CommGraph(P, s, d, w)


def _same(g, expected):
    return (g.n == expected.n and np.array_equal(g.indptr, expected.indptr)
            and np.array_equal(g.indices, expected.indices) and np.array_equal(g.weights, expected.weights))


# ----------------------------------------------------------------------- buffer specs (local)
def test_buffer_spec_bytes():
    a = np.zeros(12)                                   # 96 bytes
    assert _spec_bytes(a) == 96 and _spec_bytes(a, 4) == 24 and _spec_bytes(a, 5) == 16
    assert _spec_bytes([a, MPI.DOUBLE]) == 96 and _spec_bytes([a, "d"]) == 96
    assert _spec_bytes([a, MPI.FLOAT]) == 96           # 24 floats fit in the buffer
    assert _spec_bytes([a, 5, MPI.DOUBLE]) == 40 and _spec_bytes([a, (5, 2), MPI.DOUBLE]) == 40
    assert _spec_bytes([a, 5]) == 40 and _spec_bytes([a, 5, 2, MPI.DOUBLE]) == 40
    assert _spec_bytes(bytearray(7)) == 7 and _spec_bytes([b"abc", MPI.BYTE]) == 3
    assert _spec_bytes([a, MPI.DOUBLE], 4) == 24 and _spec_bytes((a, 3, MPI.INT)) == 12
    copy = MPI.Datatype(MPI.DOUBLE)                    # the same type, another object: the general path
    assert _spec_bytes([a, copy]) == 96 and _spec_bytes([a, 5, copy]) == 40 and _spec_bytes([a, 5, "i"]) == 20
    vec = MPI.DOUBLE.Create_vector(3, 1, 4).Commit()   # 3 doubles over an extent of 9 doubles
    try:
        assert _spec_bytes([np.zeros(18), vec]) == 2 * 24 and _spec_bytes([a, 1, vec]) == 24
    finally:
        vec.Free()
    assert _vector_bytes([a, ([1, 2, 3], [0, 1, 3]), MPI.DOUBLE], 3) == [8, 16, 24]
    assert _vector_bytes([a, [1, 2, 3], MPI.INT], 3) == [4, 8, 12]
    assert _vector_bytes([a, [4, 0], [0, 4], "d"], 2) == [32, 0]
    assert _vector_bytes(a, 3) == [32, 32, 32] and _vector_bytes([a, MPI.DOUBLE], 2) == [48, 48]
    assert _w_bytes([a, [1, 2], [0, 8], [MPI.DOUBLE, MPI.INT]]) == [8, 8]
    assert _w_bytes([a, ([3, 1], [0, 24]), [MPI.BYTE, MPI.DOUBLE]]) == [3, 8]
    with pytest.raises(ltm.ArgumentTypeError, match="cannot count the bytes of a object send buffer"):
        _spec_bytes([object(), MPI.DOUBLE])
    with pytest.raises(ltm.ArgumentTypeError, match="element size of a object send buffer"):
        _spec_bytes([object(), 1])
    with pytest.raises(ltm.ArgumentTypeError, match="cannot read a buffer spec of 5 items"):
        _spec_bytes([a, 1, 2, 3, 4])


# ----------------------------------------------------------------------- the traced communicator
def test_every_traced_send_keeps_mpi4py_signature():
    def params(f):
        return [(p.name, p.default, p.kind) for p in inspect.signature(f).parameters.values()]
    names = BUFFER_SENDS + PICKLED_SENDS + ("sendrecv",)
    assert set(BUFFER_SENDS) >= {"Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Ibsend", "Irsend",
                                 "Sendrecv", "Sendrecv_replace"}
    for name in names:
        mine, theirs = getattr(ltm.mpi.TracedComm, name), getattr(MPI.Comm, name)
        assert mine is not theirs and params(mine) == params(theirs), name
    for name in ("Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall", "Neighbor_alltoallv",
                 "Neighbor_alltoallw", "Ineighbor_allgather", "Ineighbor_allgatherv", "Ineighbor_alltoall",
                 "Ineighbor_alltoallv", "Ineighbor_alltoallw", "neighbor_allgather", "neighbor_alltoall"):
        dg = MPI.COMM_SELF.Create_dist_graph_adjacent([], [])
        with ltm.trace(dg) as t:
            assert getattr(type(t), name) is not getattr(MPI.Topocomm, name), name
            assert params(getattr(type(t), name)) == params(getattr(MPI.Topocomm, name)), name
        dg.Free()


def test_same_handle_same_type_nothing_freed_twice():
    dup = ltm.mpi.TopomapIntracomm(COMM.Dup())  # an mpi4py subclass with instance attributes
    dup.note = "kept"
    with ltm.trace(dup) as t:
        ok = isinstance(t, MPI.Intracomm) and isinstance(t, ltm.mpi.TracedComm)
        ok &= MPI.Comm.Compare(t, dup) == MPI.IDENT and t.py2f() == dup.py2f() and t.note == "kept"
    cart = COMM.Create_cart([P], [True])
    with ltm.trace(cart) as tc:
        ok &= isinstance(tc, MPI.Cartcomm) and tc.coords == cart.coords and tc.Shift(0, 1) == cart.Shift(0, 1)
    dg = COMM.Create_dist_graph_adjacent([(RANK - 1) % P], [(RANK + 1) % P])
    with ltm.trace(dg) as td:
        ok &= isinstance(td, MPI.Distgraphcomm) and td.Get_dist_neighbors() == dg.Get_dist_neighbors()
    del t, tc, td
    gc.collect()
    # the traced objects are gone; the communicators are still alive and are freed once
    ok &= dup.allreduce(1) == cart.allreduce(1) == dg.allreduce(1) == P
    for c in (dup, cart, dg):
        c.Free()
    assert agree(ok)


def test_not_an_intracomm():
    for bad in (MPI.COMM_NULL, "comm"):
        with pytest.raises(ltm.ArgumentTypeError, match="intra-communicator"):
            with ltm.trace(bad):
                pass
    assert issubclass(ltm.ArgumentTypeError, TypeError)


def test_known_point_to_point_traffic_gives_exactly_that_graph():
    """Rank r sends to r+1 and r+2 (mod P) with every blocking, non-blocking and combined form; the
    sizes depend on the sender so that every edge weight is distinct."""
    nxt, nx2 = (RANK + 1) % P, (RANK + 2) % P
    prv, pr2 = (RANK - 1) % P, (RANK - 2) % P
    base = 8 * (RANK + 1)                       # doubles: every rank sends its own sizes
    sizes = {r: 8 * (r + 1) for r in range(P)}
    expected = []
    MPI.Attach_buffer(bytearray(1 << 20))
    with ltm.trace(COMM) as t:
        out = np.arange(base, dtype=np.float64)
        inbox = np.empty(8 * P)

        def recv_from(src, n):
            COMM.Recv([inbox, n, MPI.DOUBLE], source=src)
        t.Send(out, nxt)
        recv_from(prv, sizes[prv])
        req = COMM.Irecv([inbox, 3, MPI.DOUBLE], source=prv)  # posted first: every rank ssends at once
        t.Ssend([out, 3, MPI.DOUBLE], nxt)
        req.Wait()
        t.Bsend([out, MPI.FLOAT], nxt)                    # 2 * base floats: base * 8 bytes
        COMM.Recv([inbox, 2 * sizes[prv], MPI.FLOAT], source=prv)
        req = COMM.Irecv([inbox, 1, MPI.DOUBLE], source=prv, tag=9)
        COMM.Barrier()                                    # the receive is posted before the ready send
        t.Rsend([out, 1, MPI.DOUBLE], nxt, tag=9)
        req.Wait()
        req = COMM.Irecv([inbox, 2, MPI.DOUBLE], source=prv, tag=10)
        COMM.Barrier()
        t.Irsend([out, 2, MPI.DOUBLE], nxt, tag=10).Wait()
        req.Wait()
        reqs = [t.Isend(out[:2], nx2), t.Issend([out, (4, 1), MPI.DOUBLE], nx2),
                t.Ibsend([out, 5, "d"], nx2), t.Irecv([inbox, 2, MPI.DOUBLE], source=pr2)]
        for n in (4, 5):
            recv_from(pr2, n)
        MPI.Request.Waitall(reqs)
        t.Sendrecv(out[:6], dest=nxt, recvbuf=[inbox, 6, MPI.DOUBLE], source=prv)
        buf = np.arange(7.0)
        t.Sendrecv_replace(buf, dest=nx2, source=pr2)
        if hasattr(MPI.Comm, "Isendrecv"):
            t.Isendrecv(out[:3], nxt, recvbuf=[inbox, 3, MPI.DOUBLE], source=prv).Wait()
            t.Isendrecv_replace(buf, nx2, source=pr2).Wait()
        t.Send(out, MPI.PROC_NULL)                         # nothing sent, nothing counted
    MPI.Detach_buffer()
    for r in range(P):
        b = sizes[r] * 8
        expected += [(r, (r + 1) % P, b), (r, (r + 1) % P, 24), (r, (r + 1) % P, b), (r, (r + 1) % P, 8),
                     (r, (r + 1) % P, 16),
                     (r, (r + 2) % P, 16), (r, (r + 2) % P, 32), (r, (r + 2) % P, 40), (r, (r + 1) % P, 48),
                     (r, (r + 2) % P, 56)]
        if hasattr(MPI.Comm, "Isendrecv"):
            expected += [(r, (r + 1) % P, 24), (r, (r + 2) % P, 56)]
    g = t.graph()
    ok = _same(g, _graph_from(expected))
    msgs = t.graph(weights="messages")
    per_pair = {}
    for r in range(P):
        nsr = 2 if hasattr(MPI.Comm, "Isendrecv") else 0
        for dst, k in (((r + 1) % P, 6 + nsr // 2), ((r + 2) % P, 4 + nsr // 2)):
            per_pair[(r, dst)] = per_pair.get((r, dst), 0) + k
    ok &= _same(msgs, _graph_from([(a, b, k) for (a, b), k in per_pair.items()]))
    # after the block: calls work and are not counted
    t.Sendrecv(out[:1], dest=nxt, recvbuf=[inbox, 1, MPI.DOUBLE], source=prv)
    ok &= _same(t.graph(), g)
    assert agree(ok), (g.to_scipy().toarray() if P <= 8 else g)


def test_pickled_bytes_are_what_the_receiver_gets():
    """send/ssend/bsend/isend/issend/ibsend/sendrecv: the bytes counted at the sender equal the sizes the
    receiver probes, and a plain recv gets the object."""
    nxt, prv = (RANK + 1) % P, (RANK - 1) % P
    objs = [{"rank": RANK, "data": list(range(RANK * 5))}, "x" * (100 + RANK), np.arange(RANK + 3),
            (RANK,) * 7, None, b"\0" * 300, [RANK] * 40]
    theirs = COMM.sendrecv(objs, dest=nxt, source=prv)
    MPI.Attach_buffer(bytearray(1 << 20))
    probed, got = 0, []

    def receive(tag):
        st = MPI.Status()
        COMM.probe(prv, tag, st)
        got.append(COMM.recv(source=prv, tag=tag))
        return st.Get_count(MPI.BYTE)
    with ltm.trace(COMM) as t:
        for k, send in enumerate([t.send, t.ssend, t.bsend]):
            if RANK % 2 == 0:   # even ranks send first (an ssend waits for its receive)
                send(objs[k], nxt, tag=k)
            probed += receive(k)
            if RANK % 2 == 1:
                send(objs[k], nxt, tag=k)
        reqs = [f(objs[3 + k], nxt, tag=10 + k) for k, f in enumerate([t.isend, t.issend, t.ibsend])]
        for k in range(3):
            probed += receive(10 + k)
        waited = [r.wait() for r in reqs]
        back = t.sendrecv(objs[6], dest=nxt, sendtag=20, source=prv, recvtag=20)
    MPI.Detach_buffer()
    probed += len(MPI.pickle.dumps(back))
    sent = t.traffic()
    counted_by_prev = COMM.sendrecv(sent[nxt][0], dest=nxt, source=prv)
    ok = counted_by_prev == probed and list(sent) == [nxt] and sent[nxt][1] == 7
    ok &= all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b for a, b in zip(got, theirs[:6]))
    ok &= back == theirs[6] and waited == [None] * 3
    assert agree(ok), (counted_by_prev, probed, sent)


def _dist_graph(weighted=False):
    """A directed distributed graph: rank r sends to r+1, r+2, r+3 (mod P, in that order)."""
    outs = [(RANK + k) % P for k in (1, 2, 3)]
    ins = [(RANK - k) % P for k in (1, 2, 3)]
    return COMM.Create_dist_graph_adjacent(ins, outs), outs


def test_neighbour_collectives():
    dg, outs = _dist_graph()
    n = 4 + RANK
    counts = [1, 2, 3]
    expected = []
    with ltm.trace(dg) as t:
        recv = np.empty(1000)
        # allgatherv: a block of its own size to each out-neighbour; allgather: the same size everywhere
        rc = [4 + s for s in ((RANK - k) % P for k in (1, 2, 3))]
        t.Neighbor_allgatherv(np.ones(n), [recv, rc, MPI.DOUBLE])
        t.Neighbor_allgather(np.ones(2), recv[:6])
        t.Neighbor_alltoall(np.ones(3 * 2), [recv, 2, MPI.DOUBLE])
        t.Neighbor_alltoallv([np.ones(6), counts, [0, 1, 3], MPI.DOUBLE], [recv, [1, 2, 3], [0, 1, 3], MPI.DOUBLE])
        t.Neighbor_alltoallw([np.ones(6), [2, 0, 1], [0, 16, 16], [MPI.DOUBLE, MPI.DOUBLE, MPI.BYTE]],
                             [bytearray(100), [2, 0, 1], [0, 16, 16], [MPI.DOUBLE, MPI.DOUBLE, MPI.BYTE]])
        t.Ineighbor_alltoall(np.ones(3, dtype=np.int32), [recv, 1, MPI.INT]).Wait()
        t.Ineighbor_allgather(np.ones(2, dtype=np.int8), [bytearray(6), 2, MPI.INT8_T]).Wait()
        t.Ineighbor_allgatherv([np.ones(n), n, MPI.DOUBLE], [recv, rc, MPI.DOUBLE]).Wait()
        t.Ineighbor_alltoallv([np.ones(6), [3, 2, 1], [0, 3, 5], MPI.DOUBLE],
                              [recv, [3, 2, 1], [0, 3, 5], MPI.DOUBLE]).Wait()
        t.Ineighbor_alltoallw([np.ones(6), [1, 1, 0], [0, 8, 16], [MPI.DOUBLE, MPI.INT, MPI.BYTE]],
                              [bytearray(100), [1, 1, 0], [0, 8, 16], [MPI.DOUBLE, MPI.INT, MPI.BYTE]]).Wait()
        lists = t.neighbor_alltoall([b"a" * (10 * k) for k in (1, 2, 3)])
        same = t.neighbor_allgather(RANK)
    for r in range(P):
        o = [(r + k) % P for k in (1, 2, 3)]
        for j, d in enumerate(o):
            expected += [(r, d, 8 * (4 + r)), (r, d, 16), (r, d, 16), (r, d, 8 * [1, 2, 3][j]), (r, d, [16, 0, 1][j]),
                         (r, d, 4), (r, d, 2), (r, d, len(MPI.pickle.dumps(b"a" * (10 * (j + 1))))),
                         (r, d, len(MPI.pickle.dumps(r))), (r, d, 8 * (4 + r)), (r, d, 8 * [3, 2, 1][j]),
                         (r, d, [8, 4, 0][j])]
    g = t.graph()
    ok = _same(g, _graph_from(expected))
    ok &= [len(x) for x in lists] == [10, 20, 30] and same == [(RANK - k) % P for k in (1, 2, 3)]
    ok &= all(t.traffic()[d][1] == 12 * outs.count(d) for d in set(outs))
    dg.Free()
    assert agree(ok), t.traffic()


def test_cartesian_halo_with_boundaries():
    """Neighbor_alltoall on a non-periodic Cartesian grid: no message to MPI.PROC_NULL."""
    dims = [P // 2, 2]
    cart = COMM.Create_cart(dims, [False, True])
    n = 5
    with ltm.trace(cart) as t:
        t.Neighbor_alltoall(np.ones(4 * n), np.empty(4 * n))
    g = t.graph()
    expected = [(u, v, 8 * n) for u, v in zip(*cart_graph(dims, [False, True]).to_scipy().nonzero())]
    # a periodic dimension of 2: both directions are the same neighbour, two messages
    ok = _same(g, _graph_from([(u, v, w * (2 if (abs(u - v) == 1 and min(u, v) % 2 == 0) else 1))
                               for u, v, w in expected]))
    cart.Free()
    assert agree(ok), g.to_scipy().toarray()


# ----------------------------------------------------------------------- reorder
def _torus():
    return ltm.torus(f"{P // 2}x2")


def _bad_placement(g, seed=11):
    topo = _torus()
    rng = np.random.default_rng(seed)
    perms = [rng.permutation(P) for _ in range(32)]
    worst = max(perms, key=lambda v: (ltm.max_congestion(topo, g, v), ltm.hop_bytes(topo, g, v)))
    return [int(v) for v in worst]


def _halo_program(comm, n=16):
    """An application that declares no topology: a periodic (P/2) x 2 halo exchange with Sendrecv on
    ranks it computes itself.  Returns a checksum gathered at rank 0 of ``comm``."""
    py, px = P // 2, 2
    k = comm.Get_rank()
    y, x = divmod(k, px)
    u = np.full(n, float(k))
    acc = 0.0
    for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        dst = ((y + dy) % py) * px + (x + dx) % px
        src = ((y - dy) % py) * px + (x - dx) % px
        halo = np.empty(n)
        comm.Sendrecv(u * (1 + abs(dy)), dest=dst, recvbuf=halo, source=src)
        acc += halo.sum() * (dy + 2 * dx + 3)
    return comm.gather(acc, root=0)


def test_reorder_on_scrambled_fake_names_lowers_congestion(tmp_path_factory):
    topo = _torus()
    with ltm.trace(COMM) as t:
        before = _halo_program(t)
    g = t.graph()
    bad = _bad_placement(g)
    names = fake_names_file(tmp_path_factory, [topo.names[v] for v in bad], "scrambled.names", suffix=".cluster")
    new = ltm.reorder(COMM, g, topology=topo, fake_names=names, seed=3)
    rep = last_report(new)
    ok = type(new) is MPI.Intracomm and rep is not None and new.Get_rank() == rep.new_rank
    # the process holding new rank k runs on vertex vertices_after[k]; congestion is lower
    ok &= new.allgather(bad[RANK]) == rep.vertices_after.tolist()
    cong_before = ltm.max_congestion(topo, g, np.asarray(bad))
    cong_after = ltm.max_congestion(topo, g, rep.vertices_after)
    ok &= cong_after < cong_before and abs(cong_after - rep.after["max_congestion"]) < 1e-9
    # new rank k plays vertex k: the same program on the new communicator gives the same graph and result
    with ltm.trace(new) as t2:
        after = _halo_program(t2)
    ok &= _same(t2.graph(), g)
    blocks = COMM.bcast(after, root=COMM.allgather(new.Get_rank()).index(0))
    ok &= COMM.bcast(before, root=0) == blocks
    new.Free()
    assert agree(ok), (cong_before, cong_after)


def test_reorder_reads_a_graph_file(tmp_path_factory):
    g = ltm.stencil([P // 2, 2])
    text = "".join(f"{u} {v} {w:g}\n" for u, v, w in zip(g.src.tolist(), g.dst.tolist(), g.weights.tolist()))
    path = shared_file(tmp_path_factory, text, "halo.edges")
    new = ltm.reorder(COMM, path, topology=_torus(), placement=list(range(P))[::-1], seed=1)
    rep = last_report(new)
    ok = rep.after["objective"] <= rep.before["objective"] and new.Get_size() == P
    new.Free()
    assert agree(ok)


# ----------------------------------------------------------------------- errors
def test_reorder_errors_agree_across_ranks():
    topo = _torus()
    all_same(raised(lambda: ltm.reorder(COMM, ltm.stencil([P + 2]), topology=topo, placement=list(range(P)))),
              "ArgumentError", f"{P + 2} processes", f"{P} ranks")
    # one rank passes another graph
    g = ltm.stencil([P]) if RANK != P - 1 else ltm.random_graph(P, 2, seed=1)
    all_same(raised(lambda: ltm.reorder(COMM, g, topology=topo, placement=list(range(P)))),
              "CommError", "communication graph differs between ranks", f"rank(s) {P - 1}")
    # a graph file missing on one rank
    spec = "stencil:%d" % P if RANK else "/nonexistent/graph.edges"
    all_same(raised(lambda: ltm.reorder(COMM, spec, topology=topo, placement=list(range(P)))),
              "CommError", "rank 0", "graph.edges")
    # a bad strategy everywhere: map_processes' error, raised at the door (libtopomap.validation)
    all_same(raised(lambda: ltm.reorder(COMM, ltm.stencil([P]), topology=topo, placement=list(range(P)),
                                          strategies=["nope"])), "ChoiceError", "unknown strategy 'nope'")
    assert issubclass(ltm.ArgumentError, ValueError)
    # not a graph: the validation door's error (libtopomap.validation.check_graph) on every rank
    all_same(raised(lambda: ltm.reorder(COMM, [(0, 1, -1.0)] * P, topology=topo, placement=list(range(P)))),
              "CommGraphError", "weights must be finite and >= 0")


def test_graph_errors_agree_across_ranks():
    with ltm.trace(COMM) as t:
        pass
    all_same(raised(lambda: t.graph(weights="volume")), "ArgumentError", "weights must be one of")
    w = "bytes" if RANK else "messages"
    all_same(raised(lambda: t.graph(weights=w)), "CommError", "differ between ranks")
    ok = t.graph().n_edges == 0 and t.graph().n == P
    assert agree(ok)


def test_reorder_total_budget_is_agreed_and_honoured():
    """``total_budget=`` as on the distributed-graph calls: checked and agreed on by every rank before any
    collective data, then the portfolio's budget (a tiny one keeps the current placement)."""
    topo, g = _torus(), ltm.stencil([P // 2, 2])
    bad = _bad_placement(g)
    all_same(raised(lambda: ltm.reorder(COMM, g, topology=topo, placement=bad, total_budget=10.0 + (RANK == 1))),
             "CommError", "total_budget differ between ranks")
    all_same(raised(lambda: ltm.reorder(COMM, g, topology=topo, placement=bad, total_budget=0)),
             "ArgumentError", "total_budget must be a number of seconds > 0")
    all_same(raised(lambda: ltm.reorder(COMM, g, topology=topo, placement=bad, total_budget="10")),
             "ArgumentTypeError", "total_budget must be a number of seconds")
    new = ltm.reorder(COMM, g, topology=topo, placement=bad, seed=2, total_budget=1e-6)
    rep = last_report(new)
    ok = rep.strategy == "identity" and not rep.improved and new.Get_rank() == RANK
    ok &= len(rep.skipped) > 0 and all("of the 1e-06 s budget" in x for x in rep.skipped)
    new.Free()
    new = ltm.reorder(COMM, g, topology=topo, placement=bad, seed=2, total_budget=60.0)
    rep = last_report(new)
    ok &= rep.improved and rep.after["max_congestion"] < rep.before["max_congestion"]
    new.Free()
    assert agree(ok), (rep.strategy, rep.skipped)


class _CountsPickling:
    """An object that counts how often it is pickled."""
    calls = 0

    def __reduce__(self):
        type(self).calls += 1
        return (_CountsPickling, ())


def test_pickled_neighbour_collectives_pickle_once_and_give_mpi4py_results():
    """neighbor_allgather / neighbor_alltoall pickle each object once (the bytes counted are the bytes sent),
    and return what mpi4py's own methods return, None for MPI.PROC_NULL neighbours included."""
    cart = COMM.Create_cart([P // 2, 2], [False, True])
    objs = [{"to": k, "from": RANK, "pad": "x" * (7 * k + RANK)} for k in range(4)]
    with ltm.trace(cart) as t:
        _CountsPickling.calls = 0
        got = t.neighbor_allgather(_CountsPickling())
        once = _CountsPickling.calls == 1
        t.neighbor_alltoall([_CountsPickling() for _ in range(4)])
        once &= _CountsPickling.calls == 5
        mine = t.neighbor_alltoall(objs)
        mine_ag = t.neighbor_allgather(("r", RANK))
    after = t.neighbor_allgather(RANK)           # after the block: still mpi4py's answer, not counted
    ref, ref_ag = cart.neighbor_alltoall(objs), cart.neighbor_allgather(("r", RANK))
    ref_after = cart.neighbor_allgather(RANK)
    ok = once and mine == ref and mine_ag == ref_ag and after == ref_after
    ok &= all((x is None) == (s < 0) for x, s in zip(got, cart.inedges))
    ok &= all(isinstance(x, _CountsPickling) for x, s in zip(got, cart.inedges) if s >= 0)
    # per out-neighbour: the pickled bytes of what went to it
    expect = {}
    for k, d in enumerate(cart.outedges):
        if d >= 0:
            b, m = expect.get(d, (0, 0))
            expect[d] = (b + len(MPI.pickle.dumps(_CountsPickling())) * 2 + len(MPI.pickle.dumps(objs[k]))
                         + len(MPI.pickle.dumps(("r", RANK))), m + 4)
    ok &= t.traffic() == dict(sorted(expect.items()))
    with pytest.raises(ValueError, match="4 items, got 2"):   # mpi4py's own check, as untraced
        t.neighbor_alltoall([1, 2])
    cart.Free()
    assert agree(ok), (t.traffic(), expect)
