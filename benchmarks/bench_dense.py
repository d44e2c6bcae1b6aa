"""Dense communication graphs (issue 29, part 1): ``map --strategy all --refine ta`` and its phases.

Usage::

    nice python benchmarks/bench_dense.py                          # random:1000:437:1 on dragonfly(17, 8, 8, 2)
    nice python benchmarks/bench_dense.py --graph random:1000:1000:1 --no-phases
    BENCH_DENSE_SRC=/tmp/old-tree nice python benchmarks/bench_dense.py --out /tmp/before

What is measured, in this process (a first, untimed race fills numba's kernel cache unless
``--cold``):

* ``race``: the CLI's code path (:class:`~libtopomap.portfolio.MappingProblem` with the default
  budget, every strategy, ``--refine ta``, congestion): wall and CPU seconds of the whole race, the
  seconds of every candidate as the race reports them, the winner's maximum congestion (ECMP) and
  hop-bytes;
* ``scotch``: ``map_processes(strategy="scotch")`` alone, in the same run, for the ratios;
* ``phases`` (unless ``--no-phases``): CPU and wall seconds of every construction alone (no budget)
  and of threshold accepting and two-opt with the race's move budget from multisection's mapping.

The load average (1 min) is recorded next to every timing: on a shared 2-core machine wall times
follow the load, CPU times much less.  Markdown on stdout and in ``OUT.md``, JSON in ``OUT.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent

src = os.environ.get("BENCH_DENSE_SRC")
if src:  # another tree's libtopomap, even where this one is installed in editable mode
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")
                        and "__editable__" not in repr(f)]
    sys.path.insert(0, src)

import numpy as np  # noqa: E402 (after choosing the source tree)

import libtopomap as ltm  # noqa: E402


def _load():
    return round(os.getloadavg()[0], 2)


def _clock(fn):
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c, time.perf_counter() - w


def race(t, g, budget):
    from libtopomap.portfolio import (
        STRATEGY_ORDER,
        MappingProblem,
        make_candidates,
        run_portfolio,
    )
    from libtopomap.vocabulary import STRATEGIES

    problem = MappingProblem(t, g, objective="congestion", total_budget=budget)
    names = [x for x in STRATEGY_ORDER if x in STRATEGIES]
    cands = make_candidates(names, seed=0, refine="ta", starts=np.flatnonzero(problem.slots))
    load = _load()
    res, cpu, wall = _clock(lambda: run_portfolio(problem, cands))
    rows = [{"candidate": o.label, "seconds": round(o.seconds, 3), "max_congestion": o.metrics["max_congestion"],
             "hop_bytes": o.metrics["hop_bytes"], "note": o.note, "chosen": o is res.winner} for o in res.outcomes]
    rows += [{"candidate": s.candidate.label, "skipped": s.reason} for s in res.skipped]
    w = res.winner.metrics
    return {"wall": wall, "cpu": cpu, "load": load, "budget": problem.total_budget, "winner": res.winner.label,
            "max_congestion": w["max_congestion"], "hop_bytes": w["hop_bytes"], "candidates": rows}


def phases(t, g):
    from libtopomap.commgraph import as_commgraph
    from libtopomap.mappers.threshold_accepting import threshold_accepting
    from libtopomap.mappers.two_opt import two_opt
    from libtopomap.portfolio import default_iterations

    g = as_commgraph(g)
    slots = np.asarray(t.slots, np.int64)
    out, built = [], {}
    for s in ("greedy", "recursive", "multisection", "scotch", "rcm", "random"):
        load = _load()
        m, cpu, wall = _clock(lambda: ltm.map_processes(t, g, strategy=s, seed=0, objective="congestion"))
        built[s] = np.asarray(m.vertices, np.int64)
        e = ltm.evaluate(t, g, built[s])
        out.append({"phase": s, "cpu": cpu, "wall": wall, "load": load, "max_congestion": e["max_congestion"],
                    "hop_bytes": e["hop_bytes"]})
        print(f"  {s:14s} cpu {cpu:7.2f} s wall {wall:7.2f} s load {load}", file=sys.stderr, flush=True)
    it = default_iterations(g.n)
    for name, fn in (("ta", threshold_accepting), ("two-opt", two_opt)):
        load = _load()
        (v, _, _, st), cpu, wall = _clock(lambda: fn(t, g, built["multisection"], slots, "congestion",
                                                     rng=np.random.default_rng(0), iterations=it))
        e = ltm.evaluate(t, g, v)
        out.append({"phase": f"multisection+{name}", "cpu": cpu, "wall": wall, "load": load,
                    "max_congestion": e["max_congestion"], "hop_bytes": e["hop_bytes"],
                    "moves": int(st.get("iterations", 0))})
        print(f"  {name:14s} cpu {cpu:7.2f} s wall {wall:7.2f} s load {load}", file=sys.stderr, flush=True)
    return out


def markdown(r):
    lines = [f"# `map --strategy all --refine ta` on a dense graph: {r['graph']} on {r['topology']}", "",
             f"libtopomap from {r['source']}; {os.cpu_count()} cores, load average (1 min) next to every timing.",
             "", "| run | wall s | CPU s | load | budget s | winner | max cong | hop-bytes |",
             "|---|---:|---:|---:|---:|---|---:|---:|"]
    x = r["race"]
    lines.append(f"| race | {x['wall']:.2f} | {x['cpu']:.2f} | {x['load']} | {x['budget']:.0f} | {x['winner']} | "
                 f"{x['max_congestion']:.5g} | {x['hop_bytes']:.6g} |")
    s = r["scotch"]
    lines.append(f"| scotch alone | {s['wall']:.2f} | {s['cpu']:.2f} | {s['load']} | | scotch | "
                 f"{s['max_congestion']:.5g} | {s['hop_bytes']:.6g} |")
    lines += ["", f"Race / Scotch: wall {x['wall'] / s['wall']:.2f}x, max congestion "
              f"{x['max_congestion'] / s['max_congestion']:.3f}x, hop-bytes {x['hop_bytes'] / s['hop_bytes']:.3f}x.",
              "", "| candidate | seconds | max cong | hop-bytes | note |", "|---|---:|---:|---:|---|"]
    for c in x["candidates"]:
        if "skipped" in c:
            lines.append(f"| {c['candidate']} | skipped | | | {c['skipped']} |")
        else:
            lines.append(f"| {c['candidate']}{' *' if c['chosen'] else ''} | {c['seconds']:.2f} | "
                         f"{c['max_congestion']:.5g} | {c['hop_bytes']:.6g} | {c['note'] or ''} |")
    if r.get("phases"):
        lines += ["", "Phases alone (no budget; refinements from multisection's mapping, the race's moves):", "",
                  "| phase | CPU s | wall s | load | max cong | hop-bytes |", "|---|---:|---:|---:|---:|---:|"]
        for p in r["phases"]:
            lines.append(f"| {p['phase']} | {p['cpu']:.2f} | {p['wall']:.2f} | {p['load']} | "
                         f"{p['max_congestion']:.5g} | {p['hop_bytes']:.6g} |")
    return "\n".join(lines) + "\n"


def write_report(md, record, out):
    """Print the table ``md`` and write it and ``record`` beside ``out`` (``.md`` and ``.json``); also
    profile_dense.py's."""
    print(md)
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(md)
    out.with_suffix(".json").write_text(json.dumps(record, indent=1, default=float) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="random:1000:437:1", help="libtopomap.load_graph spec")
    ap.add_argument("--topology", default="dragonfly(17, 8, 8, 2)", help="generator call (libtopomap names)")
    ap.add_argument("--budget", type=float, default=None, help="race budget (default: the library's)")
    ap.add_argument("--no-phases", action="store_true")
    ap.add_argument("--cold", action="store_true", help="no untimed warm-up race")
    ap.add_argument("--out", default=str(HERE / "results" / "dense"), help="output prefix (.md and .json)")
    args = ap.parse_args(argv)
    t = eval("ltm." + args.topology, {"ltm": ltm})
    g = ltm.load_graph(args.graph)
    if not args.cold:
        race(t, g, args.budget)
    r = {"graph": args.graph, "topology": args.topology, "source": os.path.dirname(ltm.__file__),
         "race": race(t, g, args.budget)}
    print(f"  race wall {r['race']['wall']:.2f} s cpu {r['race']['cpu']:.2f} s load {r['race']['load']}",
          file=sys.stderr, flush=True)
    load = _load()
    m, cpu, wall = _clock(lambda: ltm.map_processes(t, g, strategy="scotch", seed=0))
    e = ltm.evaluate(t, g, m.vertices)
    r["scotch"] = {"wall": wall, "cpu": cpu, "load": load, "max_congestion": e["max_congestion"],
                   "hop_bytes": e["hop_bytes"]}
    if not args.no_phases:
        r["phases"] = phases(t, g)
    write_report(markdown(r), r, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
