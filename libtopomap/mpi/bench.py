"""An OSU-style benchmark of collectives on the original and the reordered communicator.

For each collective the communication graph that is mapped is the one that really runs: the explicit
point-to-point schedule (binomial-tree Bcast, recursive-doubling Allreduce, Bruck Alltoall; Cui 2024
section 2.3.2, MPICH's orders from :mod:`libtopomap.collectives.schedules`) or, for
``neighbor_alltoall``, the application graph.  The communicator is reordered for that graph with
:func:`~libtopomap.mpi.Create_dist_graph_adjacent`; then each variant (the MPI library's own collective
and the explicit schedule replayed with ``Isend``/``Irecv``) runs on numpy buffers on both
communicators.  Latency per call is averaged over the iterations on each rank, then min / average /
max over the ranks are reported, with the model's congestion and dilation of the graph before and
after; the results on both communicators are checked to be identical (and correct).
"""

from __future__ import annotations

import re
import time
import zlib

import numpy as np
from mpi4py import MPI

from ..errors import ArgumentError, CommError, CommGraphError
from ..validation import check_choice, check_graph
from ._report import report as ltm_report
from .distgraph import Create_dist_graph_adjacent
from .agreement import agree_arguments, collective_call

__all__ = ["COLLECTIVES", "VARIANTS", "parse_size", "format_size", "graph_lists", "grid_dims", "halo_graph",
           "application_graph", "compare", "run_benchmark", "format_table", "format_rows"]

COLLECTIVES = ("bcast", "allreduce", "alltoall", "neighbor_alltoall")
# (variant label, explicit schedule?) per collective
VARIANTS = {
    "bcast": (("MPI_Bcast", False), ("binomial", True)),
    "allreduce": (("MPI_Allreduce", False), ("recursive-doubling", True)),
    "alltoall": (("MPI_Alltoall", False), ("bruck", True)),
    "neighbor_alltoall": (("MPI_Neighbor_alltoall", False),),
}

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    """Bytes from ``"8"``, ``"1K"``, ``"64k"``, ``"1M"`` (binary units).

    Raises
    ------
    ArgumentError
        When ``text`` is not a positive integer with an optional K/M/G suffix.

    Examples
    --------
    >>> [parse_size(s) for s in ("8", "1K", "64k", "1M")]
    [8, 1024, 65536, 1048576]
    """
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)(?:i?[bB])?\s*", str(text))
    if not m or int(m.group(1)) <= 0:
        raise ArgumentError(f"bad message size {text!r}: expected a positive integer with optional K/M/G")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


#: Default largest buffer memory one rank of :func:`run_benchmark` allocates; ``$LIBTOPOMAP_BENCH_MAX_BYTES``
#: raises it.
MAX_BUFFER_BYTES = 1 << 30


def _check_buffers(sizes, collectives, p, graph, *, comm=None):
    """Raise ArgumentError before any buffer is allocated when the largest size needs more than the
    per-rank limit: alltoall holds four ``p x size`` arrays, neighbor_alltoall three ``degree x size``
    arrays.  With ``comm``, the need is the largest over its ranks, so every rank raises or none does."""
    import os

    text = os.environ.get("LIBTOPOMAP_BENCH_MAX_BYTES", "").strip()
    limit = parse_size(text) if text else MAX_BUFFER_BYTES
    degree = int(max(np.bincount(graph.src, minlength=p).max(initial=0),
                     np.bincount(graph.dst, minlength=p).max(initial=0))) if graph.src.size else 0
    blocks = {"bcast": 3, "allreduce": 4, "alltoall": 4 * p, "neighbor_alltoall": 3 * max(degree, 1)}
    need = max(sizes, default=0) * max((blocks[c] for c in collectives), default=0)
    if comm is not None:
        need = comm.allreduce(need, op=MPI.MAX)
    if need > limit:
        raise ArgumentError(f"--sizes {format_size(max(sizes))} needs about {format_size(need)} bytes of buffers per "
                            f"rank ({', '.join(collectives)} on {p} ranks), above the limit of {format_size(limit)} "
                            "(set LIBTOPOMAP_BENCH_MAX_BYTES to raise it)")


def format_size(n):
    """``1048576 -> "1M"``, ``65536 -> "64K"``, ``100 -> "100"``."""
    for unit in ("G", "M", "K"):
        if n % _UNITS[unit] == 0:
            return f"{n // _UNITS[unit]}{unit}"
    return str(n)


def grid_dims(p):
    """Near-square 2-D process grid for ``p`` ranks, as ``MPI.Compute_dims`` gives (``8 -> (4, 2)``)."""
    return tuple(int(x) for x in MPI.Compute_dims(int(p), 2))


def halo_graph(p):
    """The halo exchange of a periodic 2-D grid of ``p`` processes (5-point stencil)."""
    from ..patterns import stencil

    return stencil(grid_dims(p))


def application_graph(graph, p):
    """The graph of ``neighbor_alltoall`` in :func:`run_benchmark`: ``graph`` (a spec or file string read by
    :func:`libtopomap.patterns.load_graph`, or anything :func:`~libtopomap.as_commgraph` takes), by default the
    periodic halo exchange of ``p`` processes.

    Raises
    ------
    CommGraphError
        When the graph is not one (:func:`libtopomap.validation.check_graph`) or does not have ``p`` processes.
    """
    if graph is None:
        graph = halo_graph(p)
    elif isinstance(graph, str):
        from ..patterns import load_graph

        graph = load_graph(graph)
    graph = check_graph(graph)
    if graph.n != p:
        raise CommGraphError(f"the graph has {graph.n} processes but the job has {p} ranks")
    return graph


def graph_lists(graph, rank):
    """Arguments of ``Create_dist_graph_adjacent`` for ``rank`` in ``graph``: sources, destinations and
    their integer weights (message volumes rounded, at least 1).

    Returns
    -------
    sources, destinations, sourceweights, destweights : list of int
    """
    g = check_graph(graph)
    w = np.maximum(np.rint(g.weights), 1).astype(np.int64)
    lo, hi = g.indptr[rank], g.indptr[rank + 1]
    destinations = g.indices[lo:hi].tolist()
    destweights = w[lo:hi].tolist()
    into = np.flatnonzero(g.indices == rank)
    sources = g.src[into].tolist()
    sourceweights = w[into].tolist()
    return sources, destinations, sourceweights, destweights


# ---------------------------------------------------------------------------------------- operations
def _payload(n, salt):
    return ((np.arange(n, dtype=np.int64) * 7 + salt * 31 + 3) % 251).astype(np.uint8)


class _Op:
    """One collective variant on one communicator with its buffers; ``run()`` does one call."""

    def __init__(self, comm, collective, explicit, nbytes, steps):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.collective = collective
        self.explicit = explicit
        p, r = self.size, self.rank
        if collective == "bcast":
            self.buf = np.zeros(nbytes, np.uint8)
            self.expected = _payload(nbytes, 0)
        elif collective == "allreduce":
            n = max(nbytes // 8, 1)
            self.input = (np.arange(n, dtype=np.int64) % 1009 + 1) * (r + 1)
            self.buf = np.empty(n, np.int64)
            self.expected = (np.arange(n, dtype=np.int64) % 1009 + 1) * (p * (p + 1) // 2)
        elif collective == "alltoall":
            self.send = np.stack([_payload(nbytes, 17 * r + j) for j in range(p)])
            self.buf = np.empty_like(self.send)
            self.expected = np.stack([_payload(nbytes, 17 * i + r) for i in range(p)])
        else:
            # One block of nbytes per neighbour, with the count passed explicitly: mpi4py would infer it
            # from the buffer size divided by the degree, which goes wrong on a rank that only sends or only
            # receives (a zero-length buffer), and Open MPI then fails with MPI_ERR_TRUNCATE.
            srcs, dsts, _ = comm.Get_dist_neighbors()
            self.send = np.zeros((len(dsts), nbytes), np.uint8)
            for k, j in enumerate(dsts):
                self.send[k] = _payload(nbytes, 17 * r + j)
            self.buf = np.empty((len(srcs), nbytes), np.uint8)
            self.expected = np.empty_like(self.buf)
            for k, i in enumerate(srcs):
                self.expected[k] = _payload(nbytes, 17 * i + r)
            self.nbytes = nbytes
        if explicit:
            self._plan(steps)

    def _plan(self, steps):
        """This rank's (sends to, receives from) per step of the schedule."""
        r = self.rank
        self.plan = [(s[s[:, 0] == r, 1].tolist(), s[s[:, 1] == r, 0].tolist()) for s in steps]
        if self.collective == "alltoall":
            self.rot = (r + np.arange(self.size)) % self.size
            self.unrot = (r - np.arange(self.size)) % self.size
            self.tmp = np.empty_like(self.send)
            self.sel = []
            d = 1
            for _ in steps:
                self.sel.append(np.flatnonzero(np.arange(self.size) & d))
                d <<= 1
        if self.collective == "allreduce":
            self.recvbuf = np.empty_like(self.buf)

    def reset(self):
        if self.collective == "bcast":
            self.buf[:] = self.expected if self.rank == 0 else 0

    def run(self):
        c = self.comm
        if not self.explicit:
            if self.collective == "bcast":
                c.Bcast(self.buf, root=0)
            elif self.collective == "allreduce":
                c.Allreduce(self.input, self.buf, op=MPI.SUM)
            elif self.collective == "alltoall":
                c.Alltoall(self.send, self.buf)
            else:
                c.Neighbor_alltoall([self.send, self.nbytes, MPI.BYTE], [self.buf, self.nbytes, MPI.BYTE])
            return
        getattr(self, "_" + self.collective)()

    def _bcast(self):  # binomial tree: receive once, then forward
        for sends, recvs in self.plan:
            for src in recvs:
                self.comm.Recv(self.buf, source=src, tag=11)
            if sends:
                MPI.Request.Waitall([self.comm.Isend(self.buf, dest=d, tag=11) for d in sends])

    def _allreduce(self):  # recursive doubling with MPICH's fold-in / fold-out for non powers of two
        self.buf[:] = self.input
        dropped = False
        for sends, recvs in self.plan:
            reqs = [self.comm.Isend(self.buf, dest=d, tag=12) for d in sends]
            for src in recvs:
                self.comm.Recv(self.recvbuf, source=src, tag=12)
            MPI.Request.Waitall(reqs)
            if recvs:
                if dropped:          # fold-out: the partner returns the finished sum
                    self.buf[:] = self.recvbuf
                else:
                    self.buf += self.recvbuf
            elif sends:              # fold-in: this rank gave its data away and waits for the result
                dropped = True

    def _alltoall(self):  # Bruck: rotate, log2(P) combined exchanges, inverse rotation
        self.tmp[:] = self.send[self.rot]
        for (sends, recvs), sel in zip(self.plan, self.sel):
            packed = np.ascontiguousarray(self.tmp[sel])
            incoming = np.empty_like(packed)
            self.comm.Sendrecv(packed, dest=sends[0], sendtag=13, recvbuf=incoming, source=recvs[0], recvtag=13)
            self.tmp[sel] = incoming
        self.buf[:] = self.tmp[self.unrot]

    def result_ok(self):
        return bool(np.array_equal(self.buf, self.expected))

    def digest(self):
        return zlib.crc32(np.ascontiguousarray(self.buf).view(np.uint8).tobytes())


def _time(op, iterations, warmup, what):
    # The first call is untimed and agreed on: an MPI error on some ranks (a truncated message, a bad
    # buffer) becomes the same CommError on every rank instead of leaving the others in the next call.
    op.reset()
    collective_call(op.comm, op.run, what=what)
    op.reset()
    for _ in range(max(int(warmup) - 1, 0)):
        op.run()
        op.reset()
    op.comm.Barrier()
    total = 0.0
    for _ in range(iterations):
        op.reset()
        t = MPI.Wtime()
        op.run()
        total += MPI.Wtime() - t
    return total / iterations


def _stats(comm, seconds):
    us = np.array([seconds * 1e6], dtype=np.float64)
    lo, hi, tot = np.empty(1), np.empty(1), np.empty(1)
    comm.Allreduce(us, lo, op=MPI.MIN)
    comm.Allreduce(us, hi, op=MPI.MAX)
    comm.Allreduce(us, tot, op=MPI.SUM)
    return {"avg_us": float(tot[0] / comm.Get_size()), "min_us": float(lo[0]), "max_us": float(hi[0])}


def _graph_for(collective, p, graph):
    from ..collectives import schedule, schedule_graph

    if collective == "neighbor_alltoall":
        return None, graph
    steps = schedule(collective, p)
    return steps, schedule_graph(steps, p)


def compare(original, reordered, collective, sizes, *, explicit=False, steps=None, iterations=10, warmup=1,
            label=None):
    """Time one collective variant on two communicators over the same processes and check the results.

    Parameters
    ----------
    original, reordered : mpi4py.MPI.Intracomm
        Rank ``k`` of both plays logical vertex ``k`` (for ``neighbor_alltoall`` both must be
        distributed-graph communicators with the same neighbour lists per rank).
    collective : str
        One of :data:`COLLECTIVES`.
    sizes : sequence of int
        Bytes per call (per block for alltoall and neighbor_alltoall).
    explicit : bool
        Replay the point-to-point schedule ``steps`` instead of calling the MPI collective.
    steps : list of numpy.ndarray, optional
        The schedule (from :func:`libtopomap.collectives.schedule`), needed when ``explicit``.

    Returns
    -------
    list of dict
        Per size: ``size, original, reordered`` (``avg_us, min_us, max_us`` over ranks), ``identical``.

    Raises
    ------
    CommError
        On every rank if a result differs between the communicators or from the expected value, or
        if the first (untimed) call failed on any rank.
    """
    if explicit and steps is None:
        from ..collectives import schedule

        steps = schedule(collective, original.Get_size())
    rows = []
    for nbytes in sizes:
        times, digests, ok = {}, {}, True
        for name, c in (("original", original), ("reordered", reordered)):
            what = f"{collective} ({label or ('explicit' if explicit else 'MPI')}, {format_size(nbytes)}, {name})"
            op = collective_call(c, _Op, c, collective, explicit, int(nbytes), steps, what=f"setting up {what}")
            times[name] = _stats(c, _time(op, iterations, warmup, what))
            ok &= op.result_ok()
            digests[name] = c.allgather(op.digest())  # in rank (= logical vertex) order
        identical = digests["original"] == digests["reordered"]
        if not original.allreduce(int(ok and identical), op=MPI.MIN):
            raise CommError(f"{collective} ({label or ('explicit' if explicit else 'MPI')}, {format_size(nbytes)}): "
                            "results differ between the original and the reordered communicator or from the "
                            "expected values")
        rows.append({"size": int(nbytes), "original": times["original"], "reordered": times["reordered"],
                     "identical": True})
    return rows


def run_benchmark(comm, topology, *, graph=None, collectives=COLLECTIVES, sizes=(8, 1024, 65536, 1 << 20),
                  iterations=10, warmup=1, fake_names=None, placement=None, seed=0, strategies=None,
                  objective="congestion", refine=None, time_budget=None, routing=None):
    """Benchmark collectives on ``comm`` and on the communicator reordered for each of them.

    Collective over ``comm``; every rank returns the same result.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    topology : Topology or path
    graph : CommGraph, spec string or anything :func:`~libtopomap.as_commgraph` takes, optional
        The application graph for ``neighbor_alltoall`` (default: the periodic 2-D halo exchange of
        :func:`halo_graph`).  A string is read by :func:`libtopomap.patterns.load_graph`.
    collectives : sequence of str
        Some of :data:`COLLECTIVES`.
    sizes : sequence of int
        Message sizes in bytes: the whole buffer for bcast/allreduce, one block per peer for
        alltoall and neighbor_alltoall.
    iterations, warmup : int
        Timed and untimed calls per size and variant; the first untimed call (made even with
        ``warmup=0``) is checked on every rank.
    fake_names, placement, seed, strategies, objective, refine, time_budget, routing
        Passed to :func:`~libtopomap.mpi.Create_dist_graph_adjacent`: ``routing`` (a model of
        :mod:`libtopomap.routing`, ``"native"``, default ``ecmp``) is that of the reported model
        metrics and of the mapping's congestion refinements.

    Returns
    -------
    dict
        ``n_processes, iterations, routing, results``; each result has ``collective, variant, explicit,
        strategy, winner_rank, before, after`` (model metrics of the mapped graph), ``reorder_s`` and
        ``rows`` with ``size, original, reordered`` (``avg_us, min_us, max_us``) and ``identical``, and
        ``vertices_before, vertices_after``: the topology vertex of each rank in the launcher's placement and
        in the mapping (what ``libtopomap bench`` simulates).

    Raises
    ------
    ChoiceError, CommGraphError, ArgumentError
        On every rank, before any other MPI call, when every rank was given the same bad collective, graph or
        sizes (the arguments of the other MPI calls are checked so too).
    CommError
        On all ranks if the ranks' arguments differ or fail differently, if reordering failed anywhere, or if a
        result differed between the two communicators or from the expected value.
    """
    p = comm.Get_size()
    rank = comm.Get_rank()

    checked = {}

    def check():
        for c in collectives:
            check_choice("collective", c, choices=COLLECTIVES)
        checked["graph"] = application_graph(graph, p)
        return checked["graph"], [int(s) for s in sizes]

    def options():  # what every rank must pass alike; the graph compared by a checksum
        g = checked["graph"]
        return {"collectives": tuple(collectives), "sizes": tuple(sizes), "iterations": iterations, "warmup": warmup,
                "graph": zlib.crc32(np.concatenate([g.src, g.dst]).tobytes() + g.weights.tobytes())}

    graph, sizes = agree_arguments(comm, check, what="checking the arguments of run_benchmark", options=options)
    _check_buffers(sizes, collectives, p, graph, comm=comm)
    results = []
    for coll in collectives:
        steps, g = _graph_for(coll, p, graph)
        lists = graph_lists(g, rank)
        t = time.perf_counter()
        reordered = Create_dist_graph_adjacent(comm, *lists, topology=topology, fake_names=fake_names,
                                               placement=placement, seed=seed, strategies=strategies,
                                               objective=objective, refine=refine, time_budget=time_budget,
                                               routing=routing)
        reorder_s = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
        original = comm.Create_dist_graph_adjacent(*lists, reorder=False)
        rep = ltm_report(reordered)
        try:
            for label, explicit in VARIANTS[coll]:
                rows = compare(original, reordered, coll, sizes, explicit=explicit, steps=steps,
                               iterations=iterations, warmup=warmup, label=label)
                results.append({"collective": coll, "variant": label, "explicit": explicit,
                                "strategy": rep.strategy, "winner_rank": rep.winner_rank,
                                "before": rep.before, "after": rep.after, "reorder_s": reorder_s, "rows": rows,
                                "vertices_before": rep.vertices_before.tolist(),
                                "vertices_after": rep.vertices_after.tolist()})
        finally:
            original.Free()
            reordered.Free()
    name = "ecmp" if routing is None else routing
    if name == "native":
        from ..routing import native_routing
        from ..loading import as_topology

        name = native_routing(as_topology(topology))
    return {"n_processes": p, "iterations": int(iterations), "routing": name, "results": results}


def format_table(bench):
    """The benchmark as text: one block per collective variant (what ``libtopomap bench`` prints)."""
    out = []
    for res in bench["results"]:
        b, a = res["before"], res["after"]
        who = "kept current placement" if res["winner_rank"] is None else f"rank {res['winner_rank']}"
        out.append(f"# {res['collective']} ({res['variant']}{', explicit schedule' if res['explicit'] else ''}); "
                   f"mapping: {res['strategy']} ({who})")
        out.append(f"#   model: max congestion {b['max_congestion']:.3g} -> {a['max_congestion']:.3g}, "
                   f"avg dilation {b['avg_dilation']:.3g} -> {a['avg_dilation']:.3g}, "
                   f"max dilation {b['max_dilation']} -> {a['max_dilation']}")
        out.extend(format_rows(res["rows"]))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def format_rows(rows):
    """Lines of a latency table (size, then avg/min/max on the original and the reordered communicator)."""
    out = [f"{'size':>8} {'orig avg':>10} {'orig min':>10} {'orig max':>10} "
           f"{'new avg':>10} {'new min':>10} {'new max':>10}  (us)"]
    for row in rows:
        o, n = row["original"], row["reordered"]
        out.append(f"{format_size(row['size']):>8} {o['avg_us']:10.1f} {o['min_us']:10.1f} {o['max_us']:10.1f} "
                   f"{n['avg_us']:10.1f} {n['min_us']:10.1f} {n['max_us']:10.1f}")
    return out
