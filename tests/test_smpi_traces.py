"""SMPI's time-independent trace -> CommGraph with the collectives' messages
(:func:`libtopomap.smpi.read_ti_trace`, :mod:`libtopomap.smpi.collectives`).

A hand-written trace is parsed to the graph its lines give by hand (no SMPI needed).  With SMPI:
the traced graph of a program calling every collective equals, pair by pair and byte for byte, its
point-to-point message plus the messages SMPI itself sent for the collectives (its Paje trace with
``tracing/smpi/internals``), under the default selector and under named algorithms; and the ``colls``
proxy's trace equals the graph written out by hand.
"""

import collections
import shutil
import subprocess

import pytest

from libtopomap.errors import ArgumentError, FormatError
from libtopomap.smpi.collectives import algorithms_of
from libtopomap.smpi.traces import read_paje_trace, read_ti_trace

_SMPI = pytest.mark.skipif(shutil.which("smpirun") is None or shutil.which("smpicc") is None,
                           reason="SimGrid's SMPI (smpicc, smpirun) is not installed: apt-get install libsimgrid-dev")


def _write_trace(folder, lines_of_rank):
    """A time-independent trace: index file + one file per rank (SMPI's layout)."""
    files = []
    for r, lines in enumerate(lines_of_rank):
        f = folder / f"rank-{r + 1}.txt"
        f.write_text("".join(f"{r} {x}\n" for x in ["init", *lines, "finalize"]))
        files.append(str(f))
    index = folder / "ti.txt"
    index.write_text("".join(f + "\n" for f in files))
    return str(index)


def _pairs(g):
    """{(src, dst): weight} of a CommGraph."""
    out = {}
    for u in range(g.n):
        for v, w in zip(g.indices[g.indptr[u]:g.indptr[u + 1]], g.weights[g.indptr[u]:g.indptr[u + 1]]):
            out[u, int(v)] = out.get((u, int(v)), 0) + float(w)
    return out


SIZES = {0: 8, 1: 4, 6: 1}  # double, int, byte (SMPI's numbers are measured in real runs)


def test_snippet_parsed_to_the_algorithms_messages(tmp_path):
    # 4 ranks, SMPI 3.32 syntax: bcast COUNT ROOT TYPE; allreduce COUNT COMP TYPE; alltoall SCOUNT RCOUNT STYPE
    # RTYPE; isend PEER TAG COUNT TYPE; barrier (0 bytes)
    lines = [["bcast 100 1 6", "allreduce 10 0 0", "alltoall 7 7 1 1", "barrier"] for _ in range(4)]
    lines[0].append("isend 3 0 5 1")
    index = _write_trace(tmp_path, lines)
    g, summary = read_ti_trace(index, 4, SIZES)
    expected = collections.Counter()
    for s, d in ((1, 3), (1, 2), (3, 0)):   # binomial bcast from rank 1: relative 0->2, 0->1, 2->3
        expected[s, d] += 100
    for s in (1, 2, 3):                     # allreduce: reduce to 0 (linear) of 80 bytes ...
        expected[s, 0] += 80
    for s, d in ((0, 2), (0, 1), (2, 3)):   # ... then binomial bcast from 0
        expected[s, d] += 80
    for s in range(4):                      # alltoall, 4 ranks: 28 bytes to every other rank
        for d in range(4):
            if s != d:
                expected[s, d] += 28
    expected[0, 3] += 20                    # the isend: 5 ints
    assert _pairs(g) == dict(expected)
    assert summary["messages"] == 1 and summary["bytes"] == 20
    assert summary["collective_bytes"] == sum(expected.values()) - 20
    assert summary["collectives"] == {"bcast": 4, "allreduce": 4, "alltoall": 4, "barrier": 4}

    # without collectives: the point-to-point message only
    g, summary = read_ti_trace(index, 4, SIZES, collectives=False)
    assert _pairs(g) == {(0, 3): 20.0} and summary["collective_bytes"] == 0
    # named algorithms: recursive doubling allreduce (every rank exchanges with rank ^ 1, then rank ^ 2)
    g, _ = read_ti_trace(_write_trace(tmp_path, [["allreduce 10 0 0"]] * 4), 4, SIZES,
                         algorithms=algorithms_of(["--cfg=smpi/allreduce:rdb"]))
    assert _pairs(g) == {(r, r ^ m): 80.0 for r in range(4) for m in (1, 2)}


def test_snippet_vector_collectives_and_repeats(tmp_path):
    # 3 ranks: alltoallv (send size, counts, recv size, counts, types), twice; gatherv to root 2 with a sub-
    # communicator's 2 counts (left out); scatter from root 0; scan
    lines = []
    for r in range(3):
        counts = [r + j for j in range(3)]
        av = f"alltoallv {sum(counts)} {' '.join(map(str, counts))} {sum(counts)} {' '.join(map(str, counts))} 6 6"
        lines.append([av, av, "gatherv 5 5 5 0 6 6", "scatter 4 4 0 1 1", "scan 2 0 0"])
    g, summary = read_ti_trace(_write_trace(tmp_path, lines), 3, SIZES)
    expected = collections.Counter()
    for s in range(3):
        for d in range(3):
            if s != d:
                expected[s, d] += 2 * (s + d)   # twice the count for d
    for d in (1, 2):
        expected[0, d] += 16                    # scatter: 4 ints from the root
    for s in range(3):
        for d in range(s + 1, 3):
            expected[s, d] += 16                # scan: 2 doubles to every higher rank
    assert _pairs(g) == {k: float(v) for k, v in expected.items()}
    assert summary["not_expanded"] == {"gatherv": 3}


_PAJE_HEAD = """#This file was generated using SimGrid-3.32.0
%EventDef PajeDefineEntityValue 5
%       Alias string
%       Type string
%       Name string
%       Color color
%EndEventDef
%EventDef PajePushState 12
%       Time date
%       Type string
%       Container string
%       Value string
%       Size int
%EndEventDef
%EventDef PajePopState 13
%       Time date
%       Type string
%       Container string
%EndEventDef
%EventDef PajeStartLink 15
%       Time date
%       Type string
%       Container string
%       Value string
%       StartContainer string
%       Key string
%       Size int
%EndEventDef
%EventDef PajeEndLink 16
%       Time date
%       Type string
%       Container string
%       Value string
%       EndContainer string
%       Key string
%EndEventDef
5 8 2 PMPI_Isend "0.52 0.52 1"
5 9 2 PMPI_Sendrecv "1 0 0"
5 10 2 PMPI_Startall "1 0 0"
5 11 2 PMPI_Alltoall "1 0 0"
"""


def test_paje_snippet(tmp_path):
    # 3 ranks, containers 1..3 (SMPI's process ids, rank + 1).  Rank 0: an Isend of 100 bytes to rank 1, drawn
    # twice (at the call and at the request's start); rank 1: a Sendrecv to rank 2 whose first link names the
    # peer's rank (2, so process 2 = rank 1) and the second the right process (3); rank 2: a Startall of two
    # 30-byte messages to rank 0, both counted; then an Alltoall of 7 bytes per rank with internal tags
    lines = ["12 0 2 1 8 100", "15 0 3 0 PTP 1 1_2_5_1 100", "15 0 3 0 PTP 1 1_2_5_2 100", "13 0 2 1",
             "16 1 3 0 PTP 2 1_2_5_1", "16 1 3 0 PTP 2 1_2_5_2",
             "12 0 2 2 9 50", "15 0 3 0 PTP 2 2_2_0_3 50", "15 0 3 0 PTP 2 2_3_0_4 50", "13 0 2 2",
             "12 0 2 3 10 NA", "15 0 3 0 PTP 3 3_1_4_5 30", "15 0 3 0 PTP 3 3_1_4_6 30", "13 0 2 3"]
    for c in (1, 2, 3):
        lines += [f"12 1 2 {c} 11 7"] + [f"15 1 3 0 PTP {c} {c}_{d}_-9_{7 + 3 * c + d} 7" for d in (1, 2, 3)
                                         if d != c] + [f"13 1 2 {c}"]
    path = tmp_path / "t.paje"
    path.write_text(_PAJE_HEAD + "\n".join(lines) + "\n")
    g, summary = read_paje_trace(str(path), 3)
    alltoall = {(s, d): 7.0 for s in range(3) for d in range(3) if s != d}
    expected = collections.Counter(alltoall)
    expected.update({(0, 1): 100.0, (1, 2): 50.0, (2, 0): 60.0})
    assert _pairs(g) == dict(expected)
    assert (summary["messages"], summary["bytes"], summary["collective_bytes"]) == (4, 210, 42)
    assert summary["collectives"] == {"alltoall": 3}
    g, summary = read_paje_trace(str(path), 3, point_to_point=False)
    assert _pairs(g) == alltoall and summary["messages"] == 0
    path.write_text(_PAJE_HEAD + "15 0 3 0 PTP 3 3_4_-1_1 8\n")
    with pytest.raises(FormatError, match=r"t.paje:\d+: rank 2 -> 3 outside 0..2"):
        read_paje_trace(str(path), 3)
    path.write_text(_PAJE_HEAD + "15 0 3 0 PTP 3 3-4 8\n")
    with pytest.raises(FormatError, match=r"t.paje:\d+: not an SMPI Paje trace line"):
        read_paje_trace(str(path), 3)
    path.write_text(_PAJE_HEAD.replace("%       Size int\n%EndEventDef\n%EventDef PajeEndLink",
                                       "%EndEventDef\n%EventDef PajeEndLink") + "15 0 3 0 PTP 3 3_1_-1_1\n")
    with pytest.raises(FormatError, match="no Key and Size fields"):
        read_paje_trace(str(path), 3)


def test_bad_trace_lines_and_algorithms(tmp_path):
    with pytest.raises(FormatError, match=r"rank-1.txt:2: not an SMPI time-independent trace line"):
        read_ti_trace(_write_trace(tmp_path, [["bcast x 0 6"], ["bcast 1 0 6"]]), 2, SIZES)
    with pytest.raises(FormatError, match=r"rank-1.txt:2: a root outside 0..1 in a reduce of rank 0"):
        read_ti_trace(_write_trace(tmp_path, [["reduce 1 0 5 0"], ["reduce 1 0 5 0"]]), 2, SIZES)
    with pytest.raises(ArgumentError, match="smpi/bcast:NTSL: this bcast algorithm is not modelled"):
        algorithms_of(["--cfg=smpi/bcast:NTSL"])
    with pytest.raises(ArgumentError, match="only SMPI's default selector is modelled"):
        algorithms_of(["--cfg=smpi/coll-selector:mpich"])
    assert algorithms_of(["--cfg=smpi/alltoall:bruck", "--cfg=network/model:CM02"]) == {"alltoall": "bruck"}


# ---------------------------------------------------------------- with SMPI

# every collective on MPI_COMM_WORLD, the vector ones with counts that differ per rank
_ALL = r"""
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, p; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &p);
  char *s = calloc(1 << 20, 1), *q = calloc(1 << 20, 1);
  int cnt[64], dis[64], sc[64], rc[64];
  for (int i = 0; i < p; i++) { cnt[i] = 10 + i; dis[i] = 100 * i; sc[i] = 10 + r + i; rc[i] = 5; }
  MPI_Request rq;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(s, 100, MPI_BYTE, 1, MPI_COMM_WORLD);
  MPI_Reduce(s, q, 10, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD);
  MPI_Allreduce(s, q, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(s, 7, MPI_INT, q, 7, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoallv(s, sc, dis, MPI_BYTE, q, sc, dis, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Allgather(s, 5, MPI_INT, q, 5, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgatherv(s, cnt[r], MPI_BYTE, q, cnt, dis, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Gather(s, 3, MPI_INT, q, 3, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gatherv(s, cnt[r], MPI_BYTE, q, cnt, dis, MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Scatter(s, 3, MPI_INT, q, 3, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatterv(s, cnt, dis, MPI_BYTE, q, cnt[r], MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Reduce_scatter(s, q, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(s, q, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(s, q, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Ibcast(s, 100, MPI_BYTE, 0, MPI_COMM_WORLD, &rq); MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_Iallreduce(s, q, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq); MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_Ialltoall(s, 7, MPI_INT, q, 7, MPI_INT, MPI_COMM_WORLD, &rq); MPI_Wait(&rq, MPI_STATUS_IGNORE);
  if (r == 0) MPI_Send(s, 9, MPI_INT, p - 1, 0, MPI_COMM_WORLD);
  if (r == p - 1) MPI_Recv(q, 9, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def smpi_env(tmp_path_factory):
    import libtopomap as ltm
    from libtopomap.smpi import build, datatype_sizes
    from libtopomap.smpi.platform import write_platform

    d = tmp_path_factory.mktemp("smpi-traces")
    exe = build(["colls"], outdir=str(d / "bin"))
    src = d / "all.c"
    src.write_text(_ALL)
    subprocess.run(["smpicc", "-O2", "-o", str(d / "all"), str(src)], check=True, capture_output=True)
    info = write_platform(ltm.torus((8,)), str(d / "ring.xml"))
    return {"dir": d, "all": str(d / "all"), "colls": exe["colls"], "platform": info.path,
            "sizes": datatype_sizes(str(d / "bin"))}


def _smpirun(env, exe, args, n, extra, tmp_path, *, paje=False):
    from libtopomap.smpi import run_once

    hf = tmp_path / "hosts"
    hf.write_text("".join(f"n{i % 8}\n" for i in range(n)))
    out = tmp_path / ("paje" if paje else "ti")
    out.mkdir(exist_ok=True)
    trace = {"paje": str(out / "paje.trace")} if paje else {"trace": str(out / "ti.txt")}
    run_once(exe, args, platform=env["platform"], hostfile=str(hf), nprocs=n, extra_config=extra, timeout=300, **trace)
    return str(out / ("paje.trace" if paje else "ti.txt"))


@_SMPI
@pytest.mark.parametrize("n,extra", [
    (8, []), (5, []),
    (32, []),  # alltoall of 28-byte blocks on 32 ranks: Open MPI's decision picks Bruck's algorithm
    (6, ["--cfg=smpi/allreduce:rdb", "--cfg=smpi/reduce:binomial", "--cfg=smpi/alltoall:bruck",
         "--cfg=smpi/bcast:flattree", "--cfg=smpi/allgather:ring"]),
], ids=["8", "5", "32-bruck", "6-named"])
def test_traced_graph_is_what_smpi_sent(smpi_env, tmp_path, n, extra):
    g, summary = read_ti_trace(_smpirun(smpi_env, smpi_env["all"], [], n, extra, tmp_path), n, smpi_env["sizes"],
                               algorithms=algorithms_of(extra))
    assert not summary["not_expanded"] and not summary["unknown_datatypes"]
    index = _smpirun(smpi_env, smpi_env["all"], [], n, extra, tmp_path)
    p2p, _ = read_ti_trace(index, n, smpi_env["sizes"], collectives=False)
    assert _pairs(p2p) == {(0, n - 1): 36.0}  # the one MPI_Send of 9 ints
    sent, paje = read_paje_trace(_smpirun(smpi_env, smpi_env["all"], [], n, extra, tmp_path, paje=True), n)
    assert _pairs(g) == _pairs(sent)
    assert (paje["messages"], paje["bytes"], paje["collective_bytes"]) == (1, 36, summary["collective_bytes"])
    assert paje["collectives"] == {k: v for k, v in summary["collectives"].items()}
    only, _ = read_paje_trace(_smpirun(smpi_env, smpi_env["all"], [], n, extra, tmp_path, paje=True), n,
                              point_to_point=False)  # the collectives' messages alone: all but the MPI_Send
    expected = collections.Counter(_pairs(sent))
    expected[0, n - 1] -= 36
    assert _pairs(only) == {k: v for k, v in expected.items() if v}


# every way to send one message, each with its own tag and size (100 x tag bytes) to the next rank
_P2P = r"""
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, p; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &p);
  char *s = calloc(1 << 16, 1), *q = calloc(1 << 16, 1), *bb = malloc(1 << 17);
  MPI_Buffer_attach(bb, 1 << 17);
  MPI_Request rq[3];
  int to = (r + 1) % p, from = (r + p - 1) % p;
  for (int t = 1; t <= 12; t++) {  /* Send Ssend Bsend Rsend Isend Issend Irsend Ibsend Sendrecv Sendrecv_replace
                                      Send_init+Start, 2 x Send_init+Startall */
    int n = 100 * t, pre = t < 9 || t == 11;
    if (pre) MPI_Irecv(q, n, MPI_BYTE, from, t, MPI_COMM_WORLD, &rq[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    switch (t) {
    case 1: MPI_Send(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD); break;
    case 2: MPI_Ssend(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD); break;
    case 3: MPI_Bsend(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD); break;
    case 4: MPI_Rsend(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD); break;
    case 5: MPI_Isend(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD, &rq[1]); MPI_Wait(&rq[1], MPI_STATUS_IGNORE); break;
    case 6: MPI_Issend(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD, &rq[1]); MPI_Wait(&rq[1], MPI_STATUS_IGNORE); break;
    case 7: MPI_Irsend(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD, &rq[1]); MPI_Wait(&rq[1], MPI_STATUS_IGNORE); break;
    case 8: MPI_Ibsend(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD, &rq[1]); MPI_Wait(&rq[1], MPI_STATUS_IGNORE); break;
    case 9: MPI_Sendrecv(s, n, MPI_BYTE, to, t, q, n, MPI_BYTE, from, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break;
    case 10: MPI_Sendrecv_replace(s, n, MPI_BYTE, to, t, from, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break;
    case 11: MPI_Send_init(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD, &rq[1]); MPI_Start(&rq[1]);
             MPI_Wait(&rq[1], MPI_STATUS_IGNORE); MPI_Request_free(&rq[1]); break;
    case 12: MPI_Send_init(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD, &rq[1]);
             MPI_Send_init(s, n, MPI_BYTE, to, t, MPI_COMM_WORLD, &rq[2]); MPI_Startall(2, &rq[1]);
             MPI_Waitall(2, &rq[1], MPI_STATUSES_IGNORE); MPI_Request_free(&rq[1]); MPI_Request_free(&rq[2]);
             MPI_Recv(q, n, MPI_BYTE, from, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
             MPI_Recv(q, n, MPI_BYTE, from, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break;
    }
    if (pre) MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  }
  MPI_Buffer_detach(&bb, &r);
  MPI_Finalize();
  return 0;
}
"""


@_SMPI
def test_paje_point_to_point_is_the_time_independent_trace(smpi_env, tmp_path):
    """SimGrid 3.32 draws some sends twice in the Paje trace (Ssend, the I*send calls, Sendrecv: once at the call,
    once when the request starts; Sendrecv's first with the peer's rank for its process id): read_paje_trace
    counts each message once, as the time-independent trace does."""
    src = tmp_path / "p2p.c"
    src.write_text(_P2P)
    exe = tmp_path / "p2p"
    subprocess.run(["smpicc", "-O2", "-o", str(exe), str(src)], check=True, capture_output=True)
    n = 5
    ti, ti_sum = read_ti_trace(_smpirun(smpi_env, str(exe), [], n, [], tmp_path), n, smpi_env["sizes"],
                               collectives=False)
    paje, paje_sum = read_paje_trace(_smpirun(smpi_env, str(exe), [], n, [], tmp_path, paje=True), n)
    # every rank: one message of 100 x t bytes to the next for t = 1..11, two of 1,200
    expected = {(r, (r + 1) % n): float(sum(100 * t for t in range(1, 12)) + 2 * 1200) for r in range(n)}
    assert _pairs(paje) == expected
    assert paje_sum["messages"] == 13 * n and paje_sum["bytes"] == n * expected[0, 1]
    assert paje_sum["collectives"] == {"barrier": 12 * n}
    # the time-independent trace writes MPI_Startall without its requests: those two messages are not in it
    assert _pairs(ti) == {k: v - 2 * 1200 for k, v in expected.items()}
    assert ti_sum["messages"] == 11 * n and ti_sum["not_expanded"] == {"startall": n}


@_SMPI
def test_colls_proxy_graph_by_hand(smpi_env, tmp_path):
    # colls bcast,allreduce,alltoall 1K 2 on 8 ranks: each op 3 times (a warm-up, 2 timed), then a 1-double
    # MPI_Reduce to rank 0 of its timing; Barriers send nothing
    g, summary = read_ti_trace(_smpirun(smpi_env, smpi_env["colls"], ["bcast,allreduce,alltoall", "1K", "2"], 8, [],
                                        tmp_path), 8, smpi_env["sizes"])
    tree = [(0, 4), (0, 2), (4, 6), (0, 1), (2, 3), (4, 5), (6, 7)]  # binomial tree from 0 on 8 ranks
    expected = collections.Counter()
    for s, d in tree:
        expected[s, d] += 3 * 1024      # bcast of 1 KiB
        expected[s, d] += 3 * 1024      # allreduce: ... its bcast from 0 of 128 doubles
    for s in range(1, 8):
        expected[s, 0] += 3 * 1024      # allreduce: reduce to 0 (linear)
        expected[s, 0] += 3 * 8         # the timing's MPI_Reduce
    for s in range(8):
        for d in range(8):
            if s != d:
                expected[s, d] += 3 * 1024  # alltoall of 1 KiB blocks on 8 ranks: linear
    assert _pairs(g) == {k: float(v) for k, v in expected.items()}
    assert summary["messages"] == 0 and summary["collectives"]["alltoall"] == 24


@_SMPI
def test_paje_collectives_of_sub_communicators(smpi_env, tmp_path):
    # fft on 4 ranks (2 x 2 grid, 16^3 points, 1 iteration): Alltoall of 16^3 / 4 / 2 * 16 = 8 KiB blocks in each row
    # {0, 1}, {2, 3} and column {0, 2}, {1, 3}; the Paje trace has them and nothing between 0 and 3 or 1 and 2, where
    # the time-independent trace (no communicator) has the two Alltoalls over all ranks
    exe = smpi_env["dir"] / "bin"
    from libtopomap.smpi import build

    fft = build(["fft"], outdir=str(exe))["fft"]
    sent = _pairs(read_paje_trace(_smpirun(smpi_env, fft, ["16", "1"], 4, [], tmp_path, paje=True), 4)[0])
    # plus MPI_Comm_split's and the timing's messages (internal tags too, a few bytes each)
    assert {k for k, v in sent.items() if v >= 8192} == {(0, 1), (1, 0), (2, 3), (3, 2), (0, 2), (2, 0), (1, 3), (3, 1)}
    assert all(v < 8192 + 64 for v in sent.values())
    g, _ = read_ti_trace(_smpirun(smpi_env, fft, ["16", "1"], 4, [], tmp_path), 4, smpi_env["sizes"])
    assert _pairs(g)[0, 3] == 2 * 8192.0
    with pytest.raises(FormatError, match="no PajeStartLink event definition"):
        read_paje_trace(_smpirun(smpi_env, fft, ["16", "1"], 4, [], tmp_path), 4)
