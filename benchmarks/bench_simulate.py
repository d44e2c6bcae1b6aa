"""SimGrid-simulated collectives on shortcut networks: the direction and size of Cui 2024's results.

Usage::

    python benchmarks/bench_simulate.py [--sizes 256,1M] [--seed 0] [--iterations 200000]
                                        [--contention-iterations 50000] [--repeat 1] [--routing-only]
                                        [--out benchmarks/results/simulate.json]

Part 1 (Cui 2024, section 3.4.2, Figures 3.11/3.12): a random shortcut ring of 1,024 nodes of degree 19, 512
processes on nodes chosen by random, hierarchical-tree and ring-consecutive allocation; Allreduce (recursive
doubling) and Alltoall (Bruck) with ascending-order rank placement vs the thesis' two two-opt rank placements:
two-opt-hops (200,000 swaps) and two-opt-contention (50,000 swaps; messages of one step sharing a link
direction).  Part 2 (section 4.5.2, Figures 4.7/4.8): the circulant G(1024, 10) (jumps 1, 2, 4, ..., 512;
degree 19), 512 processes placed by circulant mapping (stride 2), ring-consecutive, random, and random +
two-opt-hops, each against random allocation.  Network as in Tables 3.3/4.2: one node per switch, 100 Gbps
links, 100 ns per hop, minimal routing (SimGrid CM02 model, one shortest path per pair).  Part 3 times
SimGrid's routing choices (explicit routes, DijkstraCache, Floyd) on the same network.

Sizes: Allreduce sends the whole vector each step; for Alltoall the size is the block per destination
(MPI's send count), so a Bruck step moves 256 blocks per message at 512 processes.

Prints Markdown tables (simulated seconds, speed-up, total hops) and writes everything as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from libtopomap.collectives import schedule
from libtopomap.collectives.allocation import allocate
from libtopomap.collectives.rank_placement import optimize_ranks
from libtopomap.generators import circulant, random_shortcut_ring
from libtopomap.metrics import pair_distances
from libtopomap.plot import format_bytes
from libtopomap.simulate import (_run_job, build_platform, message_steps, parse_sizes, simgrid_version,
                                 simulate_many)

NODES, DEGREE, PROCS = 1024, 19, 512
COLLECTIVES = ("allreduce", "alltoall")


def total_hops(topo, steps, vert):
    pairs = np.concatenate(steps)
    return int(pair_distances(topo, vert[pairs[:, 0]], vert[pairs[:, 1]]).sum())


def two_opt_placement(topo, nodes, steps, objective, iterations, seed):
    res = optimize_ranks(topo, nodes, steps, objective=objective, optimizer="two-opt", iterations=iterations,
                         seed=seed)
    return nodes[res.permutation]


def run_case(args, sizes, topo, coll, label, baseline_name, placements):
    """Simulate the baseline and every improved placement together; one row per improved placement."""
    steps = schedule(coll, PROCS)
    names = list(placements)
    t0 = time.perf_counter()
    res = simulate_many(topo, coll, [placements[n] for n in names], sizes=sizes, repeat=args.repeat)
    wall = time.perf_counter() - t0
    base = res[0]
    rows = []
    for name, r in zip(names[1:], res[1:]):
        row = {"topology": topo.name, "collective": coll, "nodes": label, "baseline": baseline_name,
               "improved": name, "sizes": sizes, "baseline_s": base.times, "improved_s": r.times,
               "speedup": [a / b for a, b in zip(base.times, r.times)],
               "hops": [total_hops(topo, steps, placements[names[0]]), total_hops(topo, steps, placements[name])],
               "max_link_load": [base.max_link_load, r.max_link_load],
               "max_congestion_ecmp": [base.max_congestion, r.max_congestion], "wall_s": wall}
        rows.append(row)
        print_row(row)
    return rows


def part1(args, sizes):
    topo = random_shortcut_ring(NODES, DEGREE, seed=args.seed)
    rows = []
    for coll in COLLECTIVES:
        steps = schedule(coll, PROCS)
        for alloc in ("random", "tree", "ring"):
            nodes = allocate(topo, PROCS, alloc, seed=args.seed)
            placements = {
                "ascending": nodes,
                "two-opt-hops": two_opt_placement(topo, nodes, steps, "hops", args.iterations, args.seed),
                "two-opt-contention": two_opt_placement(topo, nodes, steps, "contention",
                                                        args.contention_iterations, args.seed),
            }
            rows += run_case(args, sizes, topo, coll, alloc, "ascending", placements)
    return rows


def part2(args, sizes):
    topo = circulant(NODES)  # G(1024, 10): jumps 2**0 .. 2**9
    rows = []
    for coll in COLLECTIVES:
        steps = schedule(coll, PROCS)
        random_nodes = allocate(topo, PROCS, "random", seed=args.seed)
        placements = {
            "random": random_nodes,
            "circulant": allocate(topo, PROCS, "circulant", seed=args.seed),
            "ring": allocate(topo, PROCS, "ring", seed=args.seed),
            "random+two-opt-hops": two_opt_placement(topo, random_nodes, steps, "hops", args.iterations, args.seed),
        }
        rows += run_case(args, sizes, topo, coll, "-", "random", placements)
    return rows


def part3(args):
    """Set-up and run time of each SimGrid routing on the 1,024-node shortcut ring, 1 MiB Bruck alltoall."""
    topo = random_shortcut_ring(NODES, DEGREE, seed=args.seed)
    nodes = allocate(topo, PROCS, "random", seed=args.seed)
    out = []
    for coll in COLLECTIVES:
        msgs = message_steps(coll, PROCS, 1 << 20)
        for routing in ("explicit", "dijkstra", "floyd"):
            plat = build_platform(topo, routing=routing)
            t0 = time.perf_counter()
            job = plat.job(nodes, msgs, link_bytes=False)
            t_job = time.perf_counter() - t0
            res = _run_job(job, 600)
            out.append({"collective": coll, "routing": routing, "simulated_s": res["time"], "job_s": t_job,
                         "setup_s": res["setup_s"], "run_s": res["run_s"], "wall_s": res["wall_s"] + t_job})
            print(f"| {coll} | {routing} | {res['time']:.6g} | {t_job:.2f} | {res['setup_s']:.2f} | "
                  f"{res['run_s']:.2f} | {res['wall_s'] + t_job:.2f} |", flush=True)
    return out


def print_row(r):
    cells = " | ".join(f"{a:.4g} / {b:.4g} ({s:.2f}x)" for a, b, s in zip(r["baseline_s"], r["improved_s"],
                                                                          r["speedup"]))
    print(f"| {r['collective']} | {r['nodes']} | {r['baseline']} -> {r['improved']} | {cells} | "
          f"{r['hops'][0]} -> {r['hops'][1]} | {r['max_link_load'][0]:.0f} -> {r['max_link_load'][1]:.0f} | "
          f"{r['wall_s']:.1f} |", flush=True)


def header(sizes):
    cols = " | ".join(f"{format_bytes(s)}: s, baseline / improved (speed-up)" for s in sizes)
    print(f"| collective | nodes | placement | {cols} | total hops | max link load | wall s |")
    print("|" + "---|" * (6 + len(sizes)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="256,1M", help="message sizes (default 256,1M)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=200_000, help="two-opt-hops swaps (default 200000)")
    ap.add_argument("--contention-iterations", type=int, default=50_000,
                    help="two-opt-contention swaps (default 50000; each costs a route update)")
    ap.add_argument("--repeat", type=int, default=1, help="repetitions of each collective (thesis: 10)")
    ap.add_argument("--routing-only", action="store_true", help="only part 3 (routing timings)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "simulate.json"))
    args = ap.parse_args(argv)
    version = simgrid_version()
    if version is None:
        print("SimGrid is not installed; see libtopomap.simulate.INSTALL_HINT", file=sys.stderr)
        return 1
    sizes = parse_sizes(args.sizes)
    t0 = time.perf_counter()
    result = {"simgrid": version, "python": sys.version.split()[0], "machine": platform.machine(),
              "cpus": os.cpu_count(), "seed": args.seed, "iterations": args.iterations,
              "contention_iterations": args.contention_iterations, "repeat": args.repeat,
              "bandwidth": "100Gbps", "latency": "100ns", "model": "CM02"}
    if not args.routing_only:
        print(f"\nPart 1 (Cui 2024 sec. 3.4.2): random shortcut ring n={NODES}, degree {DEGREE}, {PROCS} processes, "
              f"ascending vs two-opt-hops ({args.iterations} swaps) and two-opt-contention "
              f"({args.contention_iterations} swaps)\n")
        header(sizes)
        result["shortcut"] = part1(args, sizes)
        print(f"\nPart 2 (Cui 2024 sec. 4.5.2): circulant G({NODES}, 10), {PROCS} processes, random allocation vs "
              "circulant / ring / random+two-opt-hops\n")
        header(sizes)
        result["circulant"] = part2(args, sizes)
    print("\nPart 3: SimGrid routing choices (1 MiB, random allocation, 512 ranks)\n")
    print("| collective | routing | simulated s | job build s | SimGrid setup s | SimGrid run s | wall s |")
    print("|---|---|---|---|---|---|---|")
    result["routing"] = part3(args)
    result["total_wall_s"] = time.perf_counter() - t0
    print(f"\ntotal {result['total_wall_s']:.0f} s")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
