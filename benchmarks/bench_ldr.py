"""LDR graphs against hypercubes: Mehta 2005 (MS thesis), Table 4.1, beside the library's generator.

For every row (8 .. 2,048 nodes, degree log2 N) the benchmark builds ``ldr(N, log2 N, seed=s)`` for
several seeds with the default number of draws and prints the thesis' hypercube and LDR columns
beside the library's diameter and average internode distance, plus the Moore lower bound on the
diameter (the smallest ``k`` whose Moore bound reaches ``N``, equation 4.1).

ASPL convention: Table 4.1 averages over all N^2 ordered pairs, a node and itself included (its
hypercube column is log2(N)/2), so the library's ASPL over distinct pairs is multiplied by
(N - 1)/N.  A row *matches* when the diameter is the thesis' and the average internode distance is
at most the thesis' value plus its rounding (0.005).

Usage::

    python benchmarks/bench_ldr.py [--seeds 3] [--trials 100] [--max-nodes 2048]
                                   [--out benchmarks/results/ldr.json]

Prints a Markdown table and writes it next to the JSON (``.md``).  Timings are wall-clock seconds
per generated topology (all draws, their evaluation and the final Topology), single process.

Second table, Figures 4.4-4.8 (BigNetSim): the thesis plots message latency against load factor from
a packet-level simulation (BlueGene/L-like switches, buffers, flow control; its Table 4.2 of
parameters is empty in the text and the plots carry no numbers), so only its claims can be checked.
The library's flow model gives the two ends of each curve for uniform random traffic: the latency at
low load follows the average hops, and the load at which a network saturates is inversely
proportional to its most loaded link (``link_traffic`` under a routing model).  The thesis' routings
map onto the library's models: hypercube fixed (Hamming-distance) routing = ``dimension-order``
(e-cube), LDR fixed shortest-path routing = ``table`` (the lowest-index shortest-path next hop),
oblivious = ``oblivious`` on both, and adaptive routing is bounded by the best static split,
``ecmp``.  Traffic: every ordered pair once at 64 nodes (exact), 200,000 seeded uniform random pairs
at 2,048.  "sat. load vs HC fixed" is the hypercube's fixed-routing maximum link load divided by the
row's: above 1, the network saturates at a higher load factor than the hypercube with its fixed routing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from libtopomap import hypercube, ldr, properties
from libtopomap.generators.ldr import moore_bound

#: Table 4.1: nodes -> (connections, HC diameter, LDG diameter, HC avg. i.n.d., LDG avg. i.n.d.)
TABLE_41 = {8: (3, 3, 2, 1.5, 1.375), 16: (4, 4, 3, 2, 1.77), 32: (5, 5, 3, 2.5, 2.11), 64: (6, 6, 4, 3, 2.45),
            128: (7, 7, 4, 3.5, 2.65), 256: (8, 8, 4, 4, 2.87), 512: (9, 9, 5, 4.5, 3.09),
            1024: (10, 10, 5, 5, 3.3), 2048: (11, 11, 5, 5.5, 3.48)}


def moore_diameter(n, d):
    """Smallest diameter a d-regular graph on n nodes can have by the Moore bound."""
    k = 0
    while moore_bound(d, k) < n:
        k += 1
    return k


#: Figures 4.4-4.8: (nodes, routing in the thesis, hypercube model, LDR model, the thesis' claim).
FIGURES_4 = ((64, "fixed", "dimension-order", "table", "Fig. 4.4: LDR slightly lower latency up to load 0.6, "
              "then it saturates at a much lower load than the hypercube"),
             (64, "oblivious", "oblivious", "oblivious", "Fig. 4.5: LDR better over the whole load range"),
             (64, "adaptive", "ecmp", "ecmp", "Fig. 4.7: about the same at low load, LDR better at high load"),
             (2048, "adaptive", "ecmp", "ecmp", "Fig. 4.8: LDR latency 25-30% lower"))


def uniform_pairs(n, *, pairs=200_000, seed=0):
    """Uniform random traffic on ``n`` nodes: every ordered pair once when ``n * (n - 1) <= pairs``, else
    ``pairs`` seeded random ordered pairs of distinct nodes (weights 1)."""
    from libtopomap import CommGraph

    if n * (n - 1) <= pairs:
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
    else:
        rng = np.random.default_rng(seed)
        src = rng.integers(0, n, pairs)
        dst = rng.integers(0, n - 1, pairs)
        dst = dst + (dst >= src)
    return CommGraph(n, src, dst, np.ones(src.size))


def saturation_rows(max_nodes=2048, seed=0):
    """Average hops and most loaded link of uniform traffic on the hypercube and ``ldr(N, log2 N, seed)``
    under each routing model of :data:`FIGURES_4`."""
    from libtopomap import link_traffic

    rows = []
    for n, routing, hc_model, ldr_model, claim in FIGURES_4:
        if n > max_nodes:
            continue
        d = n.bit_length() - 1
        g = uniform_pairs(n, seed=seed)
        out = {"nodes": n, "routing": routing, "claim": claim, "pairs": int(g.n_edges)}
        hc_fixed = link_traffic(hypercube(d), g, np.arange(n), routing="dimension-order").max()
        for net, topo, model in (("hypercube", hypercube(d), hc_model), ("ldr", ldr(n, d, seed=seed), ldr_model)):
            t0 = time.perf_counter()
            load = link_traffic(topo, g, np.arange(n), routing=model)
            out[net] = {"model": model, "avg_hops": float(load.sum() / g.weights.sum()),
                        "max_link_load": float(load.max()), "saturation_vs_hc_fixed": float(hc_fixed / load.max()),
                        "seconds": time.perf_counter() - t0}
        rows.append(out)
    return rows


def saturation_markdown(rows):
    lines = ["## Figures 4.4-4.8 (BigNetSim) in the flow model: uniform traffic, hops and saturation", "",
             "| nodes | thesis routing | network (model) | avg hops | max link load | sat. load vs HC fixed | "
             "thesis claim |", "|---:|---|---|---:|---:|---:|---|"]
    for r in rows:
        for net in ("hypercube", "ldr"):
            x = r[net]
            lines.append(f"| {r['nodes']} | {r['routing']} | {net} ({x['model']}) | {x['avg_hops']:.3f} | "
                         f"{x['max_link_load']:.1f} | {x['saturation_vs_hc_fixed']:.2f} | "
                         f"{r['claim'] if net == 'ldr' else ''} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds per row (default 3)")
    ap.add_argument("--trials", type=int, default=100, help="draws per graph (default 100, the library default)")
    ap.add_argument("--max-nodes", type=int, default=2048)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "ldr.json"))
    args = ap.parse_args(argv)
    tic = time.perf_counter()
    ldr(8, 3, seed=0, trials=1)  # numba compile / cache load
    compile_s = time.perf_counter() - tic
    rows = []
    for n, (d, hc_dia, dia, hc_ind, ind) in TABLE_41.items():
        if n > args.max_nodes:
            continue
        q = properties(hypercube(d))
        runs = []
        for s in range(args.seeds):
            t0 = time.perf_counter()
            t = ldr(n, d, seed=s, trials=args.trials)
            sec = time.perf_counter() - t0
            runs.append({"seed": s, "diameter": t.attrs["diameter"], "avg_ind": t.attrs["aspl"] * (n - 1) / n,
                         "best_trial": t.attrs["best_trial"], "seconds": sec})
        matches = [r["diameter"] == dia and r["avg_ind"] <= ind + 0.005 for r in runs]
        rows.append({"nodes": n, "degree": d, "moore_diameter": moore_diameter(n, d),
                     "hc_diameter": {"thesis": hc_dia, "library": q["diameter"]},
                     "hc_avg_ind": {"thesis": hc_ind, "library": q["aspl"] * (n - 1) / n},
                     "ldr_diameter_thesis": dia, "ldr_avg_ind_thesis": ind, "runs": runs,
                     "matches": sum(matches), "seeds": len(runs)})
        print(f"{n} done", file=sys.stderr, flush=True)

    lines = [f"## Table 4.1 (Mehta 2005): LDR graph vs hypercube; library: {args.trials} draws, "
             f"seeds 0..{args.seeds - 1}", "",
             "| nodes | conn. | HC dia. (thesis / lib) | HC avg. i.n.d. (thesis / lib) | Moore min dia. | "
             "LDG dia. thesis | LDG dia. lib (per seed) | LDG avg. i.n.d. thesis | LDG avg. i.n.d. lib (per seed) | "
             "match | s per graph |",
             "|---:|---:|---|---|---:|---:|---|---:|---|---|---:|"]
    for r in rows:
        lines.append(
            f"| {r['nodes']} | {r['degree']} | {r['hc_diameter']['thesis']} / {r['hc_diameter']['library']} | "
            f"{r['hc_avg_ind']['thesis']} / {r['hc_avg_ind']['library']:.3f} | {r['moore_diameter']} | "
            f"{r['ldr_diameter_thesis']} | {', '.join(str(x['diameter']) for x in r['runs'])} | "
            f"{r['ldr_avg_ind_thesis']} | {', '.join('%.3f' % x['avg_ind'] for x in r['runs'])} | "
            f"{r['matches']}/{r['seeds']} | {np.mean([x['seconds'] for x in r['runs']]):.2f} |")
    total = sum(r["matches"] for r in rows), sum(r["seeds"] for r in rows)
    lines += ["", f"{total[0]}/{total[1]} graphs match their row (same diameter, avg. i.n.d. <= thesis + 0.005). "
              f"Avg. i.n.d. over N^2 ordered pairs (self included). numba warm-up {compile_s:.1f} s."]
    sat = saturation_rows(args.max_nodes)
    lines += [""] + saturation_markdown(sat)
    md = "\n".join(lines) + "\n"
    print(md)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    result = {"benchmark": "ldr", "trials": args.trials, "compile_seconds": compile_s,
              "machine": {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count()},
              "rows": rows, "matches": total[0], "graphs": total[1], "figures_4": sat}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write(md)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
