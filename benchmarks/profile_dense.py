"""CPU seconds per phase of a dense race (issue 29, part 1): every construction, its scoring, every
refinement, the polish, and the race's own overhead, with an optional cProfile of the whole race.

Usage::

    nice python benchmarks/profile_dense.py                         # random:1000:437:1 on dragonfly(17, 8, 8, 2)
    nice python benchmarks/profile_dense.py --cprofile /tmp/race.prof --graph random:1000:1000:1

A first race without a budget (every construction and refinement runs) compiles the numba kernels
(its CPU seconds are reported apart); the measured race then runs with every kernel compiled.  The phases are
timed by wrapping the :class:`~libtopomap.portfolio.MappingProblem` methods of that race
(``construct``, ``refine``, ``polish``, ``score``) with ``time.process_time``: a construction's CPU
excludes its scoring, a refinement's excludes the scoring of its result.  Markdown on stdout, JSON
in ``OUT.json``.
"""

from __future__ import annotations

import argparse
import cProfile
import math
import os
import pathlib
import pstats
import sys
import time

import numpy as np

import libtopomap as ltm
from bench_dense import write_report  # benchmarks/ is the script's folder

HERE = pathlib.Path(__file__).resolve().parent


def _load():
    return round(os.getloadavg()[0], 2)


def instrumented_race(t, g, budget, profile=None):
    """Run one race; returns its wall, CPU and the per-phase CPU rows."""
    from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio
    from libtopomap.vocabulary import STRATEGIES

    problem = MappingProblem(t, g, objective="congestion", total_budget=budget)
    names = [x for x in STRATEGY_ORDER if x in STRATEGIES]
    cands = make_candidates(names, seed=0, refine="ta", starts=np.flatnonzero(problem.slots))
    rows, scoring = [], [0.0]

    def wrap(name, fn):
        def timed(*a, **kw):
            s0, c0, w0 = scoring[0], time.process_time(), time.perf_counter()
            out = fn(*a, **kw)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            if name == "score":
                scoring[0] += cpu
                return out
            sc = scoring[0] - s0
            label = a[0].label if name != "polish" else "winner polish"
            rows.append({"phase": name, "candidate": label, "cpu": cpu - sc, "scoring_cpu": sc, "wall": wall,
                         "note": getattr(out, "note", "") or ""})
            return out
        return timed

    for name in ("construct", "refine", "polish", "score"):
        setattr(problem, name, wrap(name, getattr(problem, name)))
    load = _load()
    c0, w0 = time.process_time(), time.perf_counter()
    if profile is not None:
        profile.enable()
    res = run_portfolio(problem, cands)
    if profile is not None:
        profile.disable()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    w = res.winner.metrics
    return {"wall": wall, "cpu": cpu, "load": load, "load_after": _load(), "budget": problem.total_budget,
            "winner": res.winner.label, "max_congestion": w["max_congestion"], "hop_bytes": w["hop_bytes"],
            "phases": rows, "skipped": [s.reason for s in res.skipped],
            "overhead_cpu": cpu - sum(r["cpu"] + r["scoring_cpu"] for r in rows)}


def markdown(r):
    x = r["race"]
    lines = [f"# Phases of `map --strategy all --refine ta`: {r['graph']} on {r['topology']}", "",
             f"Compilation and first race: {r['first']['cpu']:.2f} s CPU, {r['first']['wall']:.2f} s wall "
             f"(load {r['first']['load']}).  Measured race: {x['wall']:.2f} s wall, {x['cpu']:.2f} s CPU, load "
             f"{x['load']} -> {x['load_after']}; winner {x['winner']} (max congestion {x['max_congestion']:.5g}, "
             f"hop-bytes {x['hop_bytes']:.6g}).", "",
             f"Scotch alone: {r['scotch']['wall']:.2f} s wall, {r['scotch']['cpu']:.2f} s CPU (load "
             f"{r['scotch']['load']}), max congestion {r['scotch']['max_congestion']:.5g}, hop-bytes "
             f"{r['scotch']['hop_bytes']:.6g}.  Race / Scotch CPU: {x['cpu'] / r['scotch']['cpu']:.2f}x.", "",
             "| phase | candidate | CPU s | its scoring CPU s | wall s | note |", "|---|---|---:|---:|---:|---|"]
    for p in x["phases"]:
        lines.append(f"| {p['phase']} | {p['candidate']} | {p['cpu']:.3f} | {p['scoring_cpu']:.3f} | "
                     f"{p['wall']:.2f} | {p['note']} |")
    lines.append(f"| race overhead | | {x['overhead_cpu']:.3f} | | | |")
    for s in x["skipped"]:
        lines.append(f"| skipped | | | | | {s} |")
    if r.get("top"):
        lines += ["", "cProfile, top functions by own CPU time:", "", "```", r["top"], "```"]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="random:1000:437:1", help="libtopomap.load_graph spec")
    ap.add_argument("--topology", default="dragonfly(17, 8, 8, 2)", help="generator call (libtopomap names)")
    ap.add_argument("--budget", type=float, default=None, help="race budget (default: the library's)")
    ap.add_argument("--cprofile", default=None, help="write the measured race's cProfile stats here")
    ap.add_argument("--out", default=str(HERE / "results" / "dense_phases"), help="output prefix (.md and .json)")
    args = ap.parse_args(argv)
    t = eval("ltm." + args.topology, {"ltm": ltm})
    g = ltm.load_graph(args.graph)
    first = instrumented_race(t, g, math.inf)
    prof = cProfile.Profile() if args.cprofile else None
    r = {"graph": args.graph, "topology": args.topology, "first": first,
         "race": instrumented_race(t, g, args.budget, prof)}
    load, c0, w0 = _load(), time.process_time(), time.perf_counter()
    m = ltm.map_processes(t, g, strategy="scotch", seed=0)
    r["scotch"] = {"cpu": time.process_time() - c0, "wall": time.perf_counter() - w0, "load": load}
    e = ltm.evaluate(t, g, m.vertices)
    r["scotch"].update(max_congestion=e["max_congestion"], hop_bytes=e["hop_bytes"])
    if prof is not None:
        prof.dump_stats(args.cprofile)
        import io

        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
        r["top"] = "\n".join(ln for ln in s.getvalue().splitlines() if ln.strip())[-4000:]
    write_report(markdown(r), r, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
