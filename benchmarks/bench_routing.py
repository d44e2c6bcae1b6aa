"""Routing models: time and peak memory of the per-arc loads of each model (libtopomap.routing).

Usage::

    python benchmarks/bench_routing.py [--side 16] [--groups 129] [--procs 16384] [--ta-budget 30] [--out FILE.json]

Two instances: a 3-D 7-point stencil on a ``side^3`` torus under ``ecmp``, ``table``, ``oblivious`` and
``dimension-order``; a random graph (degree 6) of ``--procs`` processes mapped in order onto the
dragonfly ``g=groups, a=16, p=8, h=8`` under ``ecmp``, ``table``, ``oblivious``, ``minimal`` and
``valiant``.  Each row: seconds (best of ``--repeat``, kernels compiled on a tiny instance first),
the maximum and total load, and the peak of Python-tracked memory during one call.

Then the engine under a routing model: threshold accepting (``--ta-budget`` seconds, the congestion
objective, from the in-order placement of ``--ta-graph``, default the 3-D stencil ``16x32x32`` whose
in-order placement loads one global link per pair of neighbouring groups with 128 messages; the
random graph above sits at the terminal links' bound already) on the same dragonfly once under
``ecmp`` and once under ``minimal`` (the network's own routing), both results evaluated under
``minimal`` (and ``ecmp``), with the moves each walk made.  ``--ta-budget 0`` skips it.

With ``--hb-budget S``: the hop-bytes objective under a routing model.  The swap search of
:func:`~libtopomap.mappers.hopbytes_swap.refine_hopbytes_swap` (what ``map --objective hopbytes``
runs first) for ``S`` seconds from a random placement (``--seed``) of ``--ta-graph`` on the same
dragonfly, under ``ecmp`` (hop distances), ``minimal`` and ``valiant`` (each model's own hops), every
result evaluated under the three models: the search under a model should reach the lowest
hop-bytes under that model.  Prints Markdown tables and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import tracemalloc

import numpy as np

import libtopomap as ltm
from libtopomap import metrics
from libtopomap.mappers.hopbytes_swap import hopbytes_swap
from libtopomap.mappers.threshold_accepting import threshold_accepting
from libtopomap.routing import route_traffic


def stencil(side):
    """``(src, dst)`` of the periodic 3-D 7-point stencil on ``side^3`` processes."""
    g = ltm.stencil(f"{side}x{side}x{side}")
    return g.src, g.dst


def measure(topo, s, t, model, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        tr = route_traffic(topo, s, t, routing=model)
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    route_traffic(topo, s, t, routing=model)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"model": model, "seconds": best, "max_load": float(tr.max()), "total_load": float(tr.sum()),
            "peak_mib": peak / 2**20}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", type=int, default=16)
    ap.add_argument("--groups", type=int, default=129)
    ap.add_argument("--procs", type=int, default=16384)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ta-budget", type=float, default=30.0, help="seconds of each TA run (0: skip)")
    ap.add_argument("--hb-budget", type=float, default=0.0,
                    help="seconds of each hop-bytes swap search under ecmp/minimal/valiant (0: skip, the default)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ta-graph", default="stencil:16x32x32",
                    help="graph spec of the TA runs ('random': the one above)")
    ap.add_argument("--out", default="benchmarks/results/routing.json")
    args = ap.parse_args()

    t0 = time.perf_counter()  # compile every kernel on tiny instances
    small = ltm.dragonfly(9, 4, 2, 2)
    for m in ("table", "oblivious", "minimal", "valiant", "ecmp"):
        route_traffic(small, [0, 5], [70, 3], routing=m)
    route_traffic(ltm.torus("4x4"), [0], [5], routing="dimension-order")
    compile_s = time.perf_counter() - t0

    rows = []
    torus = ltm.torus((args.side,) * 3)
    s, t = stencil(args.side)
    for m in ("ecmp", "table", "oblivious", "dimension-order"):
        rows.append({"instance": f"torus {args.side}^3, 7-point stencil ({s.size} demands)",
                     **measure(torus, s, t, m, args.repeat)})
    df = ltm.dragonfly(args.groups, 16, 8, 8)
    g = ltm.random_graph(min(args.procs, int(df.slots.sum())), 6, seed=1)
    hosts = np.flatnonzero(df.slots > 0)
    s, t = hosts[g.src], hosts[g.dst]
    for m in ("ecmp", "table", "oblivious", "minimal", "valiant"):
        rows.append({"instance": f"dragonfly g={args.groups} a=16 p=8 h=8, random graph ({s.size} demands)",
                     **measure(df, s, t, m, args.repeat)})

    print(f"compile (or cache load) of the kernels: {compile_s:.1f} s; {os.cpu_count()} CPUs, "
          f"{platform.python_version()}")
    print("| instance | model | seconds | max load | total load | peak MiB |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['instance']} | {r['model']} | {r['seconds']:.3f} | {r['max_load']:.4g} | {r['total_load']:.6g} "
              f"| {r['peak_mib']:.1f} |")
    engine = []
    if args.ta_budget > 0:
        threshold_accepting(small, ltm.random_graph(60, 3, seed=1), np.flatnonzero(small.slots > 0)[:60],
                            small.slots.astype(np.int64), "congestion", rng=np.random.default_rng(0), iterations=50,
                            routing="minimal")  # compile the engine's per-pair kernels
        if args.ta_graph != "random":
            g = ltm.load_graph(args.ta_graph)
        start = hosts[:g.n]
        slots = df.slots.astype(np.int64)
        before = {m: ltm.evaluate(df, g, start, routing=m) for m in ("minimal", "ecmp")}
        for m in ("ecmp", "minimal"):
            t0 = time.perf_counter()
            best, _, value, stats = threshold_accepting(df, g, start, slots, "congestion",
                                                        rng=np.random.default_rng(args.seed),
                                                        time_budget=args.ta_budget, routing=m)
            secs = time.perf_counter() - t0
            ev = {r: ltm.evaluate(df, g, best, routing=r) for r in ("minimal", "ecmp")}
            engine.append({"graph": args.ta_graph, "ta_routing": m, "seconds": secs,
                           "stopped": stats.get("stopped"), "moves": int(stats.get("iterations", 0)),
                           "engine_value": float(value), "start_minimal": before["minimal"],
                           "start_ecmp": before["ecmp"], "minimal": ev["minimal"], "ecmp": ev["ecmp"]})
        print()
        print(f"threshold accepting, {args.ta_budget:g} s each, congestion objective, in-order start, "
              f"{args.ta_graph} ({g.n} processes) on the dragonfly g={args.groups}; results evaluated under both "
              "models")
        print("| TA under | moves | s | max cong. (minimal) | hop-bytes (minimal) | max cong. (ecmp) | "
              "engine's value |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        b = engine[0]
        print(f"| (start) | | | {b['start_minimal']['max_congestion']:.4g} | {b['start_minimal']['hop_bytes']:.6g} | "
              f"{b['start_ecmp']['max_congestion']:.4g} | |")
        for e in engine:
            print(f"| {e['ta_routing']} | {e['moves']} | {e['seconds']:.1f} | {e['minimal']['max_congestion']:.4g} | "
                  f"{e['minimal']['hop_bytes']:.6g} | {e['ecmp']['max_congestion']:.4g} | {e['engine_value']:.4g} |")
    hop = hop_engine(df, hosts, args) if args.hb_budget > 0 else []
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"compile_s": compile_s, "cpus": os.cpu_count(), "load": os.getloadavg()[0], "rows": rows,
                       "engine": engine, "hopbytes_engine": hop}, f, indent=1)


HOP_MODELS = ("ecmp", "minimal", "valiant")


def hop_engine(df, hosts, args):
    """The hop-bytes swap search under each model of :data:`HOP_MODELS`, evaluated under all of them."""
    small = ltm.dragonfly(9, 4, 2, 2)
    sg = ltm.random_graph(60, 3, seed=1)
    for m in HOP_MODELS:  # compile the engine's kernels
        hopbytes_swap(small, sg, np.flatnonzero(small.slots > 0)[:60], small.slots.astype(np.int64),
                      rng=np.random.default_rng(0), iterations=50, routing=m)
    g = ltm.random_graph(min(args.procs, hosts.size), 6, seed=1) if args.ta_graph == "random" else \
        ltm.load_graph(args.ta_graph)
    start = np.random.default_rng(args.seed).permutation(hosts)[:g.n]
    slots = df.slots.astype(np.int64)
    before = {r: metrics.hop_bytes(df, g, start, routing=r) for r in HOP_MODELS}
    out = []
    for m in HOP_MODELS:
        t0 = time.perf_counter()
        best, _, value, stats = hopbytes_swap(df, g, start, slots, rng=np.random.default_rng(args.seed),
                                              time_budget=args.hb_budget, routing=m)
        secs = time.perf_counter() - t0
        out.append({"graph": args.ta_graph, "search_routing": m, "seconds": secs, "stopped": stats.get("stopped"),
                    "moves": int(stats.get("iterations", 0)), "engine_value": float(value), "start": before,
                    "hop_bytes": {r: metrics.hop_bytes(df, g, best, routing=r) for r in HOP_MODELS}})
    print()
    print(f"hop-bytes swap search (hb-swap), {args.hb_budget:g} s each, random start (seed {args.seed}), "
          f"{args.ta_graph} ({g.n} processes) on the dragonfly; results evaluated under each model "
          f"(load {os.getloadavg()[0]:.1f})")
    print("| search under | moves | s | hop-bytes (ecmp) | hop-bytes (minimal) | hop-bytes (valiant) "
          "| engine's value |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("| (start) | | | " + " | ".join(f"{before[r]:.6g}" for r in HOP_MODELS) + " | |")
    for e in out:
        print(f"| {e['search_routing']} | {e['moves']} | {e['seconds']:.1f} | "
              + " | ".join(f"{e['hop_bytes'][r]:.6g}" for r in HOP_MODELS) + f" | {e['engine_value']:.6g} |")
    return out


if __name__ == "__main__":
    main()
