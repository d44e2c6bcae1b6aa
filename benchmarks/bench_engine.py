"""Local-search engine benchmark: moves per second of the one walk (hop-bytes and ECMP modes), the
chunked breadth-first kernels of ``_kernels``, and the N_C^d hop-bytes swap search.

Usage::

    python benchmarks/bench_engine.py [--reps 5] [--out benchmarks/results/engine.json]

Prints a Markdown table (minimum over ``--reps`` runs, kernels compiled or loaded first) and writes
the rows as JSON.  To compare two trees, run it in each with ``PYTHONPATH`` pointing at the tree, back
to back on a quiet machine: on a loaded 2-core machine the spread between runs exceeds 50%.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import libtopomap as ltm
from libtopomap._kernels.bfs import bfs_distance_rows, grouped_pair_search, k_nearest, source_sums
from libtopomap.mappers.hopbytes_swap import hopbytes_swap
from libtopomap.commgraph import SymGraph
from libtopomap.mappers.local_search import SwapState
from libtopomap.patterns import scrambled_torus, stencil


def _best(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def walk_rows(reps):
    rows = []
    for dims, gd in [((12, 12, 12), (48, 36)), ((16, 16, 16), (64, 64))]:
        topo = ltm.torus("x".join(map(str, dims)))
        sym = SymGraph(stencil(gd))
        slots = topo.slots.astype(np.int64)
        start = np.random.default_rng(1).permutation(topo.n_vertices)[:sym.n]
        for obj, n in [("hopbytes", 400_000), ("congestion", 4_000)]:
            def run():
                st = SwapState(topo, sym, start, slots, obj)
                st.run(np.zeros(n), np.random.default_rng(5))
                return st.score
            sec = _best(run, reps) if obj == "hopbytes" else _best(run, max(1, reps // 2))
            rows.append({"what": f"walk {obj}", "instance": f"torus {dims}, stencil {gd}", "moves": n,
                         "seconds": round(sec, 4), "score": run()})
    return rows


def kernel_rows(reps):
    t = ltm.torus("24x24x24")
    n = t.n_vertices
    src = np.arange(0, n, 7, dtype=np.int64)
    col = np.full(n, -1, np.int64)
    col[:512] = np.arange(512)
    out = np.zeros((src.size, 512), np.int32)
    gp = np.arange(src.size + 1, dtype=np.int64) * 4
    tg = np.random.default_rng(0).integers(0, n, src.size * 4).astype(np.int64)
    o2 = np.zeros(tg.size, np.int64)
    mask = np.ones(n, bool)
    cases = {
        "bfs_distance_rows": lambda: bfs_distance_rows(t.indptr, t.indices, n, src, col, out),
        "source_sums": lambda: source_sums(t.indptr, t.indices, n, src, np.ones(n)),
        "k_nearest": lambda: k_nearest(t.indptr, t.indices, n, np.arange(n, dtype=np.int64), mask, 12),
        "grouped_pair_search": lambda: grouped_pair_search(t.indptr, t.indices, n, gp, src, tg, o2),
    }
    return [{"what": k, "instance": f"torus 24^3, {src.size} sources", "seconds": round(_best(f, reps), 4)}
            for k, f in cases.items()]


def swap_rows():
    rows = []
    for name, topo, pat in [("fattree(4, 4)", ltm.fattree(4, 4), "16x16"),
                            ("dragonfly(9, 8, 4, 1)", ltm.dragonfly(9, 8, 4, 1), "16x16"),
                            ("torus 12x12x12", ltm.torus("12x12x12"), "16x16"),
                            ("torus 12x12x12", ltm.torus("12x12x12"), "12x12x12")]:
        g = scrambled_torus(pat, seed=1)
        slots = topo.slots.astype(np.int64)
        start = np.flatnonzero(slots > 0)[:g.n]
        hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(0), iterations=10)
        t = time.perf_counter()
        _, s0, b, st = hopbytes_swap(topo, g, start, slots, rng=np.random.default_rng(0))
        rows.append({"what": "hb-swap to a local optimum", "instance": f"{name}, torus-scrambled:{pat}:1",
                     "moves": st["iterations"], "seconds": round(time.perf_counter() - t, 3),
                     "score": f"{s0:g} -> {b:g} ({st['stopped']})"})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    rows = walk_rows(a.reps) + kernel_rows(a.reps) + swap_rows()
    print("| what | instance | moves | seconds | score |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['what']} | {r['instance']} | {r.get('moves', '')} | {r['seconds']} | {r.get('score', '')} |")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
