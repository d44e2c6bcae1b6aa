"""Dorier et al.'s broadcasts on the 16,512-terminal dragonfly (seed 002, sections III-E and IV-B, Fig. 2-3).

Setup of section IV-B: ``g = 129`` groups of ``a = 16`` routers, ``p = 8`` terminals and ``h = 8`` global
links per router; for each allocation size ``n`` (64 .. 10,240), 20 random allocations (seeds 0-19;
rank ``i`` on the ``i``-th drawn terminal, root rank 0, so the root terminal is random too).  For TREE,
LLF, GLF and FOREST (:mod:`libtopomap.collectives.dorier`) the table gives, as mean over the runs:

* link traversals under minimal routing: global and local (terminal links are ``2(n - 1)`` for all);
  for TREE next to the section III-E expectations, for the topology-aware algorithms with a check that
  every run used exactly ``groups involved - 1`` global links and at most ``2(g-1) + g(a-1) = 2,191``
  local links;
* the makespan of section IV-B (a send lasts as many time units as links it crosses; a sender waits;
  last arrival), mean and range; the reference of a rough sketch of the same algorithms at
  ``n = 10,240`` is TREE 69, GLF 58, LLF 54, FOREST 46.

SimGrid times (1 KB / 1 MB) are not produced: a 16,512-terminal platform per run is beyond this
benchmark's budget (``libtopomap.simulate`` can run one allocation at a time).

Usage::

    python benchmarks/bench_dorier.py [--runs 20] [--sizes 64,128,...] [--out benchmarks/results/dorier.json]

Prints a Markdown table and writes it next to the JSON (``.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from libtopomap.collectives import BCAST_ALGORITHMS, dragonfly_link_use, evaluate_bcast
from libtopomap.collectives.allocation import random_allocation
from libtopomap.generators import dragonfly

G, A, P, H = 129, 16, 8, 8
SIZES = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 10240)
REFERENCE = {"tree": 69, "glf": 58, "llf": 54, "forest": 46}  # rough sketch, n = 10,240


def run(sizes, runs):
    topo = dragonfly(G, A, P, H)
    rows = []
    for n in sizes:
        per = {alg: {"global": [], "local": [], "terminal": [], "makespan": [], "groups": [], "seconds": []}
               for alg in BCAST_ALGORITHMS}
        for seed in range(runs):
            nodes = random_allocation(topo, n, seed=seed)
            for alg in BCAST_ALGORITHMS:
                t0 = time.perf_counter()
                r = evaluate_bcast(topo, nodes, alg)
                per[alg]["seconds"].append(time.perf_counter() - t0)
                for k in ("global", "local", "terminal"):
                    per[alg][k].append(r["links"][k])
                per[alg]["makespan"].append(r["makespan"])
                per[alg]["groups"].append(r["groups"])
        expect = dragonfly_link_use(G, A, P, H, n)
        row = {"n": n, "runs": runs, "expected_tree": {k: expect[k] for k in ("terminal", "local", "local_paper",
                                                                                "global")},
               "bounds": {k: expect[k] for k in ("bound_local", "bound_global")}, "algorithms": {}}
        for alg, d in per.items():
            arr = {k: np.asarray(v, dtype=float) for k, v in d.items()}
            groups = arr["groups"]
            row["algorithms"][alg] = {
                "global_mean": float(arr["global"].mean()), "global_sem": float(arr["global"].std(ddof=1) /
                                                                               np.sqrt(runs)) if runs > 1 else 0.0,
                "local_mean": float(arr["local"].mean()), "local_max": int(arr["local"].max()),
                "local_sem": float(arr["local"].std(ddof=1) / np.sqrt(runs)) if runs > 1 else 0.0,
                "terminal": int(arr["terminal"].max()),
                "global_is_groups_minus_1": bool(np.all(arr["global"] == groups - 1)),
                "makespan_mean": float(arr["makespan"].mean()), "makespan_min": float(arr["makespan"].min()),
                "makespan_max": float(arr["makespan"].max()), "groups_mean": float(groups.mean()),
                "seconds_mean": float(arr["seconds"].mean()), "raw": {k: v for k, v in d.items() if k != "seconds"}}
        rows.append(row)
        print(f"n={n}: " + ", ".join(f"{a} {row['algorithms'][a]['makespan_mean']:.1f}" for a in BCAST_ALGORITHMS),
              file=sys.stderr, flush=True)
    return rows


def table(rows):
    out = ["| n | groups | TREE global (E) | TREE local (E; paper) | LLF/GLF/FOREST global | "
           "LLF / GLF / FOREST local (max) | TREE | LLF | GLF | FOREST |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        al, e = r["algorithms"], r["expected_tree"]
        tree = al["tree"]
        aware = [al[a] for a in ("llf", "glf", "forest")]
        glob = aware[0]["global_mean"]
        ok = all(x["global_is_groups_minus_1"] for x in aware) and all(x["local_max"] <= r["bounds"]["bound_local"]
                                                                        for x in aware)
        ms = [f"{al[a]['makespan_mean']:.1f} [{al[a]['makespan_min']:.0f}-{al[a]['makespan_max']:.0f}]"
              for a in ("tree", "llf", "glf", "forest")]
        out.append(f"| {r['n']} | {al['tree']['groups_mean']:.1f} | {tree['global_mean']:.1f} ± "
                   f"{tree['global_sem']:.1f} ({e['global']:.1f}) | {tree['local_mean']:.1f} ± "
                   f"{tree['local_sem']:.1f} "
                   f"({e['local']:.1f}; {e['local_paper']:.1f}) | {glob:.1f} {'= groups-1' if ok else 'VIOLATED'} | "
                   + " / ".join(f"{x['local_mean']:.0f} ({x['local_max']})" for x in aware) + " | " + " | ".join(ms)
                   + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="random allocations per size (default 20)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated allocation sizes")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "dorier.json"))
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    t0 = time.perf_counter()
    rows = run(sizes, args.runs)
    md = ["# Dorier et al. broadcasts on dragonfly g=129 a=16 p=8 h=8 (16,512 terminals)", "",
          f"{args.runs} random allocations per size, root rank 0; link traversals under minimal routing "
          "(mean ± standard error; in parentheses the section III-E expectation, then the paper's printed "
          "formula); LLF/GLF/FOREST local: mean (max over runs), bound 2,191; makespans in the section IV-B "
          "model: mean [min-max].  Reference makespans at n = 10,240 (rough sketch): "
          + ", ".join(f"{k.upper()} {v}" for k, v in REFERENCE.items()) + ".", "", table(rows), "",
          f"{time.perf_counter() - t0:.0f} s on {platform.node()} ({platform.processor() or platform.machine()})."]
    text = "\n".join(md)
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"topology": {"g": G, "a": A, "p": P, "h": H}, "reference_makespan_10240": REFERENCE,
                   "rows": rows, "seconds": time.perf_counter() - t0, "python": sys.version.split()[0]}, f, indent=1)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
