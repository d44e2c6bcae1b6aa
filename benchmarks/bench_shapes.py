"""Quality on mismatched shapes (issue 29 part 2): periodic stencils mapped onto tori of another
shape, each strategy, the hop-bytes pick of the portfolio and Scotch; Markdown table on stdout and
in ``benchmarks/results/shapes.md``, JSON in ``benchmarks/results/shapes.json``.

Usage::

    nice python benchmarks/bench_shapes.py              # every case (minutes on a loaded machine)
    nice python benchmarks/bench_shapes.py --only 8x8x16-on-32x32
    nice python benchmarks/bench_shapes.py --budget inf   # no race budget: the same picks at any load

Rows per case come from one race, what ``map --strategy all --objective hopbytes`` runs (the
CLI's :class:`~libtopomap.portfolio.MappingProblem` and :func:`~libtopomap.portfolio.run_portfolio`,
seed 0): each strategy's construction with the race's seed (``scotch``: Scotch through scotchpy64
onto a "deco 2" target built from the network), ``portfolio(hopbytes)`` (the race's pick, polished
on hop-bytes; seconds = the whole race) and ``before(hopbytes)``: the pick the same race makes
without the strategies of ``--new`` (default ``dual-bisection``, the one issue 29 part 2 added),
its winner polished the same way (the strategies after it in the race's order got their seeds one
candidate earlier in the race before it was added).  ``scotch-torus`` is Scotch onto its own
``torusX`` target of the torus' dimensions (not a libtopomap strategy; the stronger Scotch run on
a torus).  ``--budget`` is the race's total budget (default the CLI's 100 s; ``inf``: none, which
makes the pick independent of the machine's load).  The stencils' labels are scrambled (seed 0), so
``identity`` is a random placement.  Hop-bytes count both directions of every stencil edge
(``libtopomap.evaluate``).  Timings on a shared 2-core machine are noisy; the load average is
printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np

import libtopomap as ltm
from libtopomap.mappers import STRATEGIES
from libtopomap.patterns import scrambled_torus
from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio, select

RESULTS = pathlib.Path(__file__).resolve().parent / "results"

#: (process grid, torus): 3-D onto 2-D, 2-D onto 3-D, sizes that do not divide, 4-D, another aspect.
CASES = (
    ("8x8x16", "32x32"),    # the case
    ("8x8x8", "16x32"),     # 3-D onto a non-square 2-D torus
    ("32x32", "8x8x16"),    # 2-D onto 3-D
    ("16x64", "8x8x16"),    # 2-D of another aspect onto 3-D
    ("10x10x10", "32x32"),  # non-divisible: 1,000 processes on 1,024 slots
    ("24x40", "8x8x16"),    # non-divisible: 960 processes on 1,024 slots
    ("4x4x4x4", "16x16"),   # 4-D onto 2-D
    ("8x32", "16x16"),      # 2-D onto 2-D of another aspect
)


def key(gdims, tdims):
    return f"{gdims}-on-{tdims}"


def scotch_torus(t, g, dims, seed=0):
    """Scotch's static mapping onto its ``torusX`` architecture (terminal = first dimension fastest)."""
    import scotchpy
    import scotchpy.common

    from libtopomap.commgraph import SymGraph
    from libtopomap.mappers.partition import int_weights
    from libtopomap.mappers.scotch import _deterministic, _scotch_graph, _strategy, repair_slots

    sym = SymGraph(g)
    appg = _scotch_graph(scotchpy, sym.indptr, sym.indices, int_weights(sym.wsum))
    part = np.zeros(g.n, np.int64)
    with _deterministic():
        scotchpy.common.random_seed(seed)
        scotchpy.common.random_reset()
        arch = scotchpy.Arch()
        arch.torusX(np.asarray(dims, np.int64))
        mapping = scotchpy.Mapping()
        appg.map_init(mapping, arch, part)
        try:
            appg.map_compute(mapping, _strategy(scotchpy, int(np.prod(dims))))
        finally:
            appg.map_exit(mapping)
    coords = np.unravel_index(part, tuple(dims[::-1]))[::-1]
    return repair_slots(t, np.ravel_multi_index(coords, tuple(dims)), t.slots)


def timed(fn):
    t0 = time.perf_counter()
    v = fn()
    return v, time.perf_counter() - t0


def row(t, g, method, v, seconds, **extra):
    v = np.asarray(v, np.int64)
    if np.unique(v).size != v.size:
        raise AssertionError(f"{method}: not a bijection")
    m = ltm.evaluate(t, g, v)
    return {"method": method, "hop_bytes": float(m["hop_bytes"]), "max_congestion": float(m["max_congestion"]),
            "avg_dilation": float(m["avg_dilation"]), "seconds": round(seconds, 2), **extra}


def bench_case(gdims, tdims, seed=0, new=("dual-bisection",), budget=None):
    t = ltm.torus(tdims)
    g = scrambled_torus(gdims, seed)
    dims = [int(x) for x in tdims.split("x")]
    problem = MappingProblem(t, g, objective="hopbytes", total_budget=budget)
    names = [x for x in STRATEGY_ORDER if x in STRATEGIES]
    cands = make_candidates(names, seed=seed, starts=np.flatnonzero(problem.slots))
    res, dt = timed(lambda: run_portfolio(problem, cands))
    rows = []
    for o in sorted(res.outcomes, key=lambda o: o.candidate.index):
        if o.payload is not None:  # the winner's entry is its polished result; its note has both values
            rows.append(row(t, g, o.candidate.strategy if o.candidate.index else "identity", o.payload, o.seconds,
                            label=o.label, note=o.note))
    rows.append(row(t, g, "portfolio(hopbytes)", res.winner.payload, dt, pick=res.winner.label))
    if res.winner.candidate.strategy in new:
        old = select([o for o in res.outcomes if o.candidate.strategy not in new and o is not res.winner])
        before, dt_before = timed(lambda: problem.polish(old))
    else:  # the race would have picked (and polished) the same without them
        before, dt_before = res.winner, dt
    rows.append(row(t, g, "before(hopbytes)", before.payload, dt_before, pick=before.label))
    if "scotch" in STRATEGIES:
        v, dt = timed(lambda: scotch_torus(t, g, dims, seed))
        rows.append(row(t, g, "scotch-torus", v, dt))
    by = {r["method"]: r["hop_bytes"] for r in rows}
    print(f"  {key(gdims, tdims)}: " + ", ".join(f"{k} {v:.0f}" for k, v in by.items())
          + f"; pick {res.winner.label}, before {before.label} (load {os.getloadavg()[0]:.1f})", file=sys.stderr)
    scotch_best = min([by[k] for k in ("scotch", "scotch-torus") if k in by], default=None)
    return {"key": key(gdims, tdims), "graph": f"stencil {gdims} (periodic, scrambled {seed})",
            "torus": tdims, "processes": g.n, "slots": int(np.sum(t.slots)), "rows": rows,
            "pick_hop_bytes": by["portfolio(hopbytes)"], "before_hop_bytes": by["before(hopbytes)"],
            "scotch_best_hop_bytes": scotch_best,
            "pick_over_scotch": None if scotch_best is None else round(by["portfolio(hopbytes)"] / scotch_best, 4),
            "before_over_scotch": None if scotch_best is None else round(by["before(hopbytes)"] / scotch_best, 4)}


def markdown(results, load):
    methods = []
    for r in results:
        for x in r["rows"]:
            if x["method"] not in methods:
                methods.append(x["method"])
    out = [f"Hop-bytes per case (seconds in brackets); load average at the start {load}.  The race's winner "
           "shows its polished result under its strategy (the JSON's label and note give both).", "",
           "| case | " + " | ".join(methods) + " | pick | pick / best Scotch | before / best Scotch |",
           "|---" * (len(methods) + 4) + "|"]
    for r in results:
        by = {x["method"]: x for x in r["rows"]}
        cells = [f"{by[m]['hop_bytes']:.0f} ({by[m]['seconds']:.1f})" if m in by else "" for m in methods]
        pick = by["portfolio(hopbytes)"].get("pick", "")
        ratio = "" if r["pick_over_scotch"] is None else f"{r['pick_over_scotch']:.3f}"
        was = "" if r["before_over_scotch"] is None else f"{r['before_over_scotch']:.3f}"
        out.append(f"| {r['key']} ({r['processes']} on {r['slots']}) | " + " | ".join(cells)
                   + f" | {pick} | {ratio} | {was} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="case key such as 8x8x16-on-32x32 (repeatable)")
    ap.add_argument("--new", action="append", default=None,
                    help="strategy left out of the before(hopbytes) pick (repeatable; default dual-bisection)")
    ap.add_argument("--budget", type=float, default=None, help="the race's total budget in seconds (default the "
                    "CLI's; inf: none)")
    ap.add_argument("--out", default="shapes", help="results file stem in benchmarks/results (default shapes)")
    args = ap.parse_args(argv)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    results = []
    for gdims, tdims in CASES:
        if args.only and key(gdims, tdims) not in args.only:
            continue
        results.append(bench_case(gdims, tdims, new=tuple(args.new or ("dual-bisection",)), budget=args.budget))
    md = markdown(results, load)
    print(md)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.md").write_text(md)
    loads = {"start": load, "end": " ".join(f"{x:.2f}" for x in os.getloadavg())}
    (RESULTS / f"{args.out}.json").write_text(json.dumps({"load_average": loads, "budget": args.budget,
                                                          "cases": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
