"""Collective rank placement benchmark: Cui 2024, Tables 3.4-3.6 (random shortcut ring) and Table 4.1.

Setup of section 3.3.3/3.4.2: a 1024-node ring with random shortcuts, degree 19; 512 processes (one per
node) allocated by random, hierarchical-tree (BFS) or ring-based consecutive mapping; binomial-tree
Bcast, recursive-doubling Allreduce and Bruck Alltoall; total hops with ascending rank order ("none"),
after 200,000 two-opt iterations, after the greedy construction alone and after greedy + simulated
annealing ("anneal", fewer iterations so it takes no more time than two-opt).  Every configuration is
run over several seeds (a new network, allocation and search seed each); the table shows mean and
standard deviation and the thesis' numbers.  Circulant rows: G(1024, 10) with 512 processes placed by
Algorithm 4.1 (stride 2), ring-consecutive and random allocation.

Hop counting: every point-to-point message counts its hop distance; an Allreduce exchange is two
messages, a Bruck step is P messages (one combined message per rank), as in Table 4.1.

A last section compares the objectives (hops, the thesis' contention, our step model) on one seed.

Usage::

    python benchmarks/bench_collective.py [--seeds 5] [--iterations 200000] [--anneal-iterations 50000]
                                          [--contention-iterations 20000]
                                          [--out benchmarks/results/collective.json]

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

from libtopomap.collectives import allocate, collective_placement
from libtopomap.generators.circulant import circulant
from libtopomap.generators.shortcut import random_shortcut_ring

THESIS = {  # Tables 3.4-3.6: (ascending order, two-opt)
    ("bcast", "random"): (1373, 794), ("bcast", "tree"): (1080, 769), ("bcast", "ring"): (850, 741),
    ("allreduce", "random"): (12308, 9904), ("allreduce", "tree"): (11362, 9816),
    ("allreduce", "ring"): (11152, 9816),
    ("alltoall", "random"): (12347, 10459), ("alltoall", "tree"): (11373, 10326),
    ("alltoall", "ring"): (11135, 10389),
}
COLLECTIVES = ("bcast", "allreduce", "alltoall")
PLACEMENTS = ("random", "tree", "ring")


def warm_up():
    """Compile (or load cached) numba kernels on a tiny instance, so timings exclude compilation."""
    t = random_shortcut_ring(64, 5, seed=0)
    nodes = allocate(t, 32, "random", seed=0)
    for opt in ("two-opt", "greedy", "anneal"):
        for c in COLLECTIVES:
            collective_placement(t, nodes, c, optimizer=opt, iterations=200, seed=0, evaluate_paths=False)


def run_one(topo, nodes, collective, optimizer, iterations, seed):
    r = collective_placement(topo, nodes, collective, optimizer=optimizer, iterations=iterations, seed=seed,
                             evaluate_paths=False)
    return {"before": r.before["hops"], "after": r.after["hops"], "seconds": r.seconds, "accepted": r.accepted,
            "iterations": r.iterations}


def shortcut_runs(seeds, iterations, anneal_iterations, nodes_total=1024, degree=19, procs=512):
    runs = []
    for s in seeds:
        topo = random_shortcut_ring(nodes_total, degree, seed=s)
        for pl in PLACEMENTS:
            nodes = allocate(topo, procs, pl, seed=1000 + s)
            for c in COLLECTIVES:
                for opt, it in (("none", 0), ("two-opt", iterations), ("greedy", 0), ("anneal", anneal_iterations)):
                    res = run_one(topo, nodes, c, opt, it, seed=s)
                    runs.append({"seed": s, "collective": c, "placement": pl, "optimizer": opt, **res})
                    print(f"  seed {s} {c:9} {pl:6} {opt:7} {res['before']:6} -> {res['after']:6} "
                          f"{res['seconds']:.3f}s", file=sys.stderr)
    return runs


def circulant_runs(seeds, iterations, anneal_iterations, n=1024, procs=512):
    topo = circulant(n)
    k = int(np.log2(procs))
    minimum = {"bcast": procs - 1, "allreduce": procs * k, "alltoall": procs * k}
    runs = []
    for s in seeds:
        for pl in ("circulant", "ring", "random"):
            nodes = allocate(topo, procs, pl, seed=2000 + s)
            for c in COLLECTIVES:
                for opt, it in (("none", 0), ("two-opt", iterations), ("anneal", anneal_iterations)):
                    res = run_one(topo, nodes, c, opt, it, seed=s)
                    runs.append({"seed": s, "collective": c, "placement": pl, "optimizer": opt,
                                 "table_4_1": minimum[c], **res})
    return runs


def contention_runs(seed, iterations, nodes_total=1024, degree=19, procs=512):
    """The thesis' "two-opt for contentions" next to two-opt for hops, random allocation, one seed."""
    topo = random_shortcut_ring(nodes_total, degree, seed=seed)
    nodes = allocate(topo, procs, "random", seed=1000 + seed)
    out = []
    for c in COLLECTIVES:
        for opt, obj in (("two-opt", "hops"), ("two-opt", "contention"), ("anneal", "contention"),
                         ("anneal", "step")):
            r = collective_placement(topo, nodes, c, optimizer=opt, objective=obj, iterations=iterations, seed=seed)
            out.append({"collective": c, "optimizer": opt, "objective": obj, "iterations": iterations,
                        **{f"{k}_{w}": (r.before if w == "before" else r.after)[k]
                           for k in ("hops", "contention", "step") for w in ("before", "after")},
                        "seconds": r.seconds})
            print(f"  contention {c:9} {opt:7} {obj:10} {r.after}", file=sys.stderr)
    return out


def _ms(values):
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def summarise(runs, keys):
    groups = {}
    for r in runs:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    out = []
    for key, rs in groups.items():
        b, bs = _ms([r["before"] for r in rs])
        a, as_ = _ms([r["after"] for r in rs])
        t, ts = _ms([r["seconds"] for r in rs])
        row = dict(zip(keys, key))
        row.update(before=b, before_std=bs, after=a, after_std=as_, seconds=t,
                   seconds_max=max(r["seconds"] for r in rs), reduction=1 - a / b if b else 0.0, n=len(rs))
        if "table_4_1" in rs[0]:
            row["table_4_1"] = rs[0]["table_4_1"]
        out.append(row)
    return out


def markdown(short, circ, iterations, anneal_iterations, nseeds, cont=()):
    lines = [f"### Random shortcut ring, 1024 nodes, degree 19, 512 processes ({nseeds} seeds, mean ± sd)", "",
             f"two-opt: {iterations:,} iterations; anneal: greedy construction + {anneal_iterations:,} annealing "
             "iterations.", "",
             "| collective | placement | optimizer | hops before | hops after | reduction | seconds | "
             "thesis before -> two-opt |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    for r in short:
        th = THESIS[(r["collective"], r["placement"])]
        thesis = f"{th[0]:,} -> {th[1]:,}" if r["optimizer"] == "two-opt" else (f"{th[0]:,}" if r["optimizer"] == "none"
                                                                                else "")
        lines.append(f"| {r['collective']} | {r['placement']} | {r['optimizer']} | {r['before']:,.0f} ± "
                     f"{r['before_std']:.0f} | {r['after']:,.0f} ± {r['after_std']:.0f} | "
                     f"{100 * r['reduction']:.1f}% | {r['seconds']:.3f} | {thesis} |")
    lines += ["", "### Anneal vs two-opt (same seeds)", "",
              "| collective | placement | two-opt hops | anneal hops | anneal fewer hops | two-opt s | anneal s |",
              "|---|---|---:|---:|---:|---:|---:|"]
    idx = {(r["collective"], r["placement"], r["optimizer"]): r for r in short}
    for c in COLLECTIVES:
        for pl in PLACEMENTS:
            a, b = idx[(c, pl, "two-opt")], idx[(c, pl, "anneal")]
            lines.append(f"| {c} | {pl} | {a['after']:,.0f} | {b['after']:,.0f} | "
                         f"{100 * (1 - b['after'] / a['after']):.1f}% | {a['seconds']:.3f} | {b['seconds']:.3f} |")
    lines += ["", "### Circulant G(1024, 10), 512 processes (Table 4.1 minimum: Bcast P-1, Allreduce and Alltoall "
              "P log2 P)", "",
              "| collective | placement | optimizer | hops before | hops after | Table 4.1 | seconds |",
              "|---|---|---|---:|---:|---:|---:|"]
    for r in circ:
        lines.append(f"| {r['collective']} | {r['placement']} | {r['optimizer']} | {r['before']:,.0f} | "
                     f"{r['after']:,.0f} ± {r['after_std']:.0f} | {r['table_4_1']:,} | {r['seconds']:.3f} |")
    if cont:
        lines += ["", f"### Objectives: hops vs contention vs step model (random allocation, seed 0, "
                  f"{cont[0]['iterations']:,} iterations)", "",
                  "| collective | optimizer | objective | hops | contention | step model | seconds |",
                  "|---|---|---|---:|---:|---:|---:|"]
        for r in cont:
            lines.append(f"| {r['collective']} | {r['optimizer']} | {r['objective']} | {r['hops_before']:,} -> "
                         f"{r['hops_after']:,} | {r['contention_before']} -> {r['contention_after']} | "
                         f"{r['step_before']} -> {r['step_after']} | {r['seconds']:.2f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="number of seeds (default 5)")
    ap.add_argument("--iterations", type=int, default=200_000, help="two-opt iterations (default 200000)")
    ap.add_argument("--anneal-iterations", type=int, default=50_000, help="annealing iterations (default 50000)")
    ap.add_argument("--contention-iterations", type=int, default=20_000,
                    help="iterations of the contention/step-model section (default 20000; 0 skips it)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "collective.json"))
    args = ap.parse_args(argv)
    seeds = list(range(args.seeds))

    tic = time.perf_counter()
    warm_up()
    compile_s = time.perf_counter() - tic
    runs = shortcut_runs(seeds, args.iterations, args.anneal_iterations)
    circ = circulant_runs(seeds, args.iterations, args.anneal_iterations)
    cont = contention_runs(0, args.contention_iterations) if args.contention_iterations else []
    short_sum = summarise(runs, ("collective", "placement", "optimizer"))
    circ_sum = summarise(circ, ("collective", "placement", "optimizer"))

    # Acceptance checks (issue 5).
    ar = [r for r in runs if r["collective"] == "allreduce" and r["optimizer"] == "two-opt"]
    checks = {"two_opt_allreduce_200k_seconds_max": max(r["seconds"] for r in ar)}
    idx = {(r["collective"], r["placement"], r["optimizer"]): r for r in short_sum}
    gains = {f"{c}/{pl}": 1 - idx[(c, pl, "anneal")]["after"] / idx[(c, pl, "two-opt")]["after"]
             for c in COLLECTIVES for pl in PLACEMENTS}
    checks["anneal_fewer_hops_than_two_opt"] = gains
    checks["anneal_fewer_hops_min"] = min(gains.values())
    checks["anneal_time_over_two_opt"] = {f"{c}/{pl}": idx[(c, pl, "anneal")]["seconds"] /
                                          idx[(c, pl, "two-opt")]["seconds"] for c in COLLECTIVES for pl in PLACEMENTS}
    checks["circulant_stride_at_table_4_1"] = all(
        r["after"] == r["table_4_1"] and r["before"] == r["table_4_1"]
        for r in circ if r["placement"] == "circulant")

    md = markdown(short_sum, circ_sum, args.iterations, args.anneal_iterations, len(seeds), cont)
    md += (f"\n\nTwo-opt, Allreduce, 512 processes, {args.iterations:,} iterations: at most "
           f"{checks['two_opt_allreduce_200k_seconds_max']:.3f} s.  Anneal has "
           f"{100 * checks['anneal_fewer_hops_min']:.1f}% to {100 * max(gains.values()):.1f}% fewer hops than "
           f"two-opt.  numba warm-up {compile_s:.1f} s.\n")
    print(md)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    result = {"benchmark": "collective", "seeds": seeds, "iterations": args.iterations,
              "anneal_iterations": args.anneal_iterations, "compile_seconds": compile_s,
              "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                          "cpus": os.cpu_count()},
              "thesis": {f"{c}/{p}": v for (c, p), v in THESIS.items()},
              "summary": short_sum, "circulant_summary": circ_sum, "objectives": cont, "checks": checks, "runs": runs,
              "circulant_runs": circ}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write(md)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
