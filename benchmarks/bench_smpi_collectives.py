"""SMPI: mapping a collective-only program (the ``fft`` proxy: Alltoall in row and column communicators)
from its traced graph, by each trace of ``smpi run`` and from the program's true graph.

For each topology (64 hosts) and a scrambled allocation, ``libtopomap.smpi.run`` on ``fft N ITERS`` with:

* ``p2p only``: the point-to-point graph of the time-independent trace (what ``smpi run`` read before
  collectives were expanded): the fft sends none, so nothing is mapped (the launcher's order is kept);
* ``trace ti``: ``trace="ti"``, the time-independent trace with every collective expanded into SMPI's
  algorithm (:mod:`libtopomap.smpi.collectives`), taken over ``MPI_COMM_WORLD`` since that trace names no
  communicator: the row and column Alltoalls become one 64-rank Alltoall;
* ``trace paje``: ``trace="paje"`` (the default), every message SMPI sent, from its Paje trace with
  ``tracing/smpi/internals`` (:func:`libtopomap.smpi.read_paje_trace`): the sub-communicators' messages
  where they went;
* ``true graph``: the graph of the row and column Alltoalls given with ``graph=`` (what a
  communicator-aware trace would give).

Prints a table and writes ``benchmarks/results/smpi_collectives.{md,json}``.
Usage: ``nice python benchmarks/bench_smpi_collectives.py [--n 64] [--iters 2]``.
"""

import argparse
import json
import os
import random
import tempfile
import time


import libtopomap as ltm
from libtopomap.smpi import build, run
from libtopomap.smpi.traces import read_ti_trace


def fft_graph(p, n, iters):
    """Bytes per rank pair of ``fft`` on ``p`` ranks: Alltoall of ``rb`` bytes in each row of C ranks, of ``cb``
    in each column of R ranks (proxies/fft.c: MPI_Dims_create(p, 2) = R x C, row-major ranks)."""
    import math

    r = c = int(math.isqrt(p))
    assert r * c == p, "square grids only here"
    local = n ** 3 / p
    rb, cb = max(1, int(local / c * 16)), max(1, int(local / r * 16))
    src, dst, w = [], [], []
    for a in range(p):
        ra, ca = divmod(a, c)
        for b in range(p):
            if a == b:
                continue
            rb_, cb_ = divmod(b, c)
            if ra == rb_:
                src.append(a), dst.append(b), w.append(rb * iters)
            elif ca == cb_:
                src.append(a), dst.append(b), w.append(cb * iters)
    return ltm.CommGraph(p, src, dst, w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "smpi_collectives"))
    a = ap.parse_args()
    p = 64
    bins = build(["fft"])
    topologies = {"torus 8x8": ltm.torus((8, 8)), "fat tree 4-ary 3-tree": ltm.fattree(4, 3)}
    rows = []
    load = os.getloadavg()
    for tname, topo in topologies.items():
        hosts = [topo.names[int(v)] for v in topo.hosts][:p]
        random.Random(1).shuffle(hosts)
        with tempfile.TemporaryDirectory() as d:
            alloc = os.path.join(d, "alloc")
            with open(alloc, "w") as f:
                f.write("".join(f"{h}\n" for h in hosts))
            true = fft_graph(p, a.n, a.iters)
            for label, kw in (("trace ti", {"trace": "ti"}), ("trace paje", {"trace": "paje"}),
                              ("true graph", {"graph": true})):
                t0 = time.perf_counter()
                res = run(bins["fft"], [str(a.n), str(a.iters)], topology=topo, nprocs=p, allocation=alloc,
                          ranks_per_host=1, workdir=os.path.join(d, label.replace(" ", "_")), **kw)
                wall = time.perf_counter() - t0
                # the same placements scored on the true graph
                from libtopomap.metrics import evaluate
                from libtopomap.rankfiles import Allocation, allocation_topology

                restricted, _ = allocation_topology(topo, Allocation(tuple(hosts), (1,) * p))
                idx = {restricted.names[v]: v for v in range(restricted.n_vertices)}
                cong = [evaluate(restricted, true, [idx[h] for h in pl], routing=res.routing)["max_congestion"]
                        for pl in (res.placement_before, res.placement_after)]
                rows.append({"topology": tname, "graph": label, "edges": res.graph["edges"],
                             "collective_bytes": res.graph.get("collective_bytes"),
                             "before_s": res.before.time, "after_s": res.after.time, "speedup": res.speedup,
                             "strategy": res.strategy, "true_congestion_before": cong[0],
                             "true_congestion_after": cong[1], "wall_s": wall,
                             "cpu_s": res.phases_cpu.get("total")})
                if label == "trace ti":
                    index = os.path.join(d, "trace_ti", "trace", "ti.txt")
                    g, _ = read_ti_trace(index, p, None, collectives=False)
                    rows.append({"topology": tname, "graph": "p2p only", "edges": g.n_edges, "collective_bytes": 0,
                                 "before_s": res.before.time, "after_s": res.before.time, "speedup": 1.0,
                                 "strategy": "(nothing to map)", "true_congestion_before": cong[0],
                                 "true_congestion_after": cong[0], "wall_s": 0.0, "cpu_s": 0.0})
            print(rows[-4:], flush=True)
    head = (f"fft proxy N={a.n} ITERS={a.iters}, {p} ranks, scrambled allocation (seed 1), SMPI CM02; "
            f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n\n"
            "| topology | graph mapped | edges | SMPI before (s) | SMPI after (s) | speed-up | strategy | "
            "max congestion on the true graph before -> after | wall (s) | CPU (s) |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    body = "".join(f"| {r['topology']} | {r['graph']} | {r['edges']} | {r['before_s']:.6e} | {r['after_s']:.6e} | "
                   f"{r['speedup']:.3f} | {r['strategy']} | {r['true_congestion_before']:.4g} -> "
                   f"{r['true_congestion_after']:.4g} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} |\n" for r in rows)
    print(head + body)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out + ".md", "w") as f:
        f.write(head + body)
    with open(a.out + ".json", "w") as f:
        json.dump({"n": a.n, "iters": a.iters, "ranks": p, "load_average": load, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
