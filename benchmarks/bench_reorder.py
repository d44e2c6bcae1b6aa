"""Time of the whole reordering call under MPI, split into its phases.

Run under mpiexec, e.g. ``mpiexec -n 8 python benchmarks/bench_reorder.py`` and ``-n 16``: a periodic
2-D halo exchange over all ranks, a torus of the same shape, and a scrambled placement (a fixed
random permutation given as ``placement=``).  Calls ``ltm.Create_dist_graph_adjacent`` several times
and prints, per call, the maximum over ranks of each phase (locate, gather, kernels, strategies,
selection, build, total) plus the congestion before and after; ``--json`` writes the records.
"""

import argparse
import json
import time

import numpy as np
from mpi4py import MPI

import libtopomap as ltm
from libtopomap.mpi.bench import graph_lists, grid_dims, halo_graph

PHASES = ("locate", "gather", "kernels", "strategies", "selection", "build", "total")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3, help="reordering calls (the first may load kernels)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-memory", type=int, help="bytes per node for the strategies running at once "
                                                   "(default: a quarter of the physical memory)")
    ap.add_argument("--json", help="write the records to this file (rank 0)")
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    dims = grid_dims(size)
    topo = ltm.torus(dims)
    graph = halo_graph(size)
    placement = np.random.default_rng(12345).permutation(size).tolist()
    s, d, sw, dw = graph_lists(graph, rank)
    records = []
    for call in range(args.calls):
        comm.Barrier()
        t = time.perf_counter()
        dcomm = ltm.Create_dist_graph_adjacent(comm, s, d, sw, dw, topology=topo, placement=placement,
                                               seed=args.seed, max_memory=args.max_memory)
        wall = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
        rep = ltm.report(dcomm)
        phases = {k: comm.allreduce(rep.timings.get(k, 0.0), op=MPI.MAX) for k in PHASES}
        rec = {"ranks": size, "torus": "x".join(map(str, dims)), "call": call, "wall": wall, **phases,
               "strategy": rep.strategy, "winner_rank": rep.winner_rank,
               "mapping_ranks": len(rep.plan.get("mapping_ranks", [])), "skipped": rep.skipped,
               "congestion_before": rep.before["max_congestion"], "congestion_after": rep.after["max_congestion"]}
        records.append(rec)
        dcomm.Free()
    if rank == 0:
        print(f"| ranks | mapping ranks | torus | call | {' | '.join(PHASES)} | winner | congestion |")
        print("|---|---|---|---|" + "---:|" * len(PHASES) + "---|---|")
        for r in records:
            print(f"| {r['ranks']} | {r['mapping_ranks']} | {r['torus']} | {r['call']} | "
                  + " | ".join(f"{r[k]:.3f}" for k in PHASES)
                  + f" | {r['strategy']} (rank {r['winner_rank']}) | {r['congestion_before']:.3g} -> "
                  f"{r['congestion_after']:.3g} |")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(records, fh, indent=1)


if __name__ == "__main__":
    main()
