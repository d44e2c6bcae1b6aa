"""Routing models: time and peak memory of the per-arc loads of each model (libtopomap.routing).

Usage::

    python benchmarks/bench_routing.py [--side 16] [--groups 129] [--procs 16384] [--out FILE.json]

Two instances: a 3-D 7-point stencil on a ``side^3`` torus under ``ecmp``, ``table``, ``oblivious`` and
``dimension-order``; a random graph (degree 6) of ``--procs`` processes mapped in order onto the
dragonfly ``g=groups, a=16, p=8, h=8`` under ``ecmp``, ``table``, ``oblivious``, ``minimal`` and
``valiant``.  Each row: seconds (best of ``--repeat``, kernels compiled on a tiny instance first),
the maximum and total load, and the peak of Python-tracked memory during one call.  Prints a Markdown
table and writes JSON.
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
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"compile_s": compile_s, "cpus": os.cpu_count(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
