"""``libtopomap map``: map a communication graph onto a topology offline (no MPI) and compare strategies."""

from __future__ import annotations

import json
import time

from ..formats import read
from ..mappers import OBJECTIVES, REFINEMENTS, STRATEGIES, map_processes, objective_value
from ..metrics import evaluate
from ..patterns import load_graph


def add_parser(sub):
    p = sub.add_parser(
        "map", help="map a communication graph onto a topology and report congestion, dilation, hop-bytes",
        description="Map a communication graph (edge list 'src dst [weight]', Matrix Market file, or a "
                    "pattern: stencil:16x16x16, stencil:64x64, torus-scrambled:8x8:SEED, random:P:DEGREE:SEED) "
                    "onto a topology with one strategy or all of them, and print the quality of each.")
    p.add_argument("--topology", required=True, metavar="FILE", help="topology file (any registered format)")
    p.add_argument("--graph", required=True, metavar="GRAPH", help="communication graph file or pattern")
    p.add_argument("--strategy", default="greedy", choices=list(STRATEGIES) + ["all"],
                   help="mapping strategy, or 'all' to run every one (default: greedy)")
    p.add_argument("--refine", choices=list(REFINEMENTS), help="refine each construction")
    p.add_argument("--objective", default="congestion", choices=list(OBJECTIVES),
                   help="what the refinement minimises and how the best is chosen (default: congestion)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--time-budget", type=float, metavar="SEC", help="seconds per refinement")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    p.add_argument("--output", metavar="MAPPING", help="write the chosen mapping as 'process vertex-name' lines")
    return p


def run(args):
    topo = read(args.topology)
    graph = load_graph(args.graph)
    names = [s for s in STRATEGIES] if args.strategy == "all" else [args.strategy]
    records, mappings = [], []
    for name in names:
        t0 = time.perf_counter()
        m = map_processes(topo, graph, strategy=name, objective=args.objective, refine=args.refine, seed=args.seed,
                          time_budget=args.time_budget)
        seconds = time.perf_counter() - t0
        q = evaluate(topo, graph, m)
        records.append({
            "strategy": m.strategy or name,
            "congestion": q["max_congestion"],
            "avg_congestion": q["avg_congestion"],
            "dilation": q["avg_dilation"],
            "max_dilation": q["max_dilation"],
            "hopbytes": q["hop_bytes"],
            "seconds": seconds,
            "objective": objective_value(topo, graph, m, args.objective),
        })
        mappings.append(m)
    best = min(range(len(records)), key=lambda i: (records[i]["objective"], i))
    for i, r in enumerate(records):
        r["chosen"] = i == best
    if args.output:
        with open(args.output, "w") as f:
            for p, nm in enumerate(mappings[best].names()):
                f.write(f"{p} {nm}\n")
    if args.json:
        print(json.dumps(records))
    else:
        print(f"{'strategy':<16} {'max cong':>10} {'avg cong':>10} {'avg dil':>8} {'max dil':>7} "
              f"{'hop-bytes':>12} {'seconds':>9}")
        for r in records:
            mark = " *" if r["chosen"] else ""
            print(f"{r['strategy']:<16} {r['congestion']:>10.4g} {r['avg_congestion']:>10.4g} {r['dilation']:>8.3f} "
                  f"{r['max_dilation']:>7d} {r['hopbytes']:>12.6g} {r['seconds']:>9.3f}{mark}")
        print(f"chosen (lowest {args.objective}): {records[best]['strategy']}")
    return 0
