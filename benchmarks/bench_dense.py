"""Dense communication graphs (issue 29, part 1): ``map --strategy all --refine ta`` and its phases.

Usage::

    nice python benchmarks/bench_dense.py                          # random:1000:437:1 on dragonfly(17, 8, 8, 2)
    nice python benchmarks/bench_dense.py --graph random:1000:1000:1 --no-phases
    BENCH_DENSE_SRC=/tmp/old-tree nice python benchmarks/bench_dense.py --out /tmp/before
    nice python benchmarks/bench_dense.py --suite --out benchmarks/results/dense_s11   # the shapes below

What is measured, in this process (a first, untimed race fills numba's kernel cache unless
``--cold``):

* ``race``: the CLI's code path (:class:`~libtopomap.portfolio.MappingProblem` with the default
  budget, every strategy, ``--refine ta``, congestion): wall and CPU seconds of the whole race, the
  seconds of every candidate as the race reports them, the winner's maximum congestion (ECMP) and
  hop-bytes;
* ``scotch``: ``map_processes(strategy="scotch")`` alone, in the same run, for the ratios;
* ``phases`` (unless ``--no-phases``): CPU and wall seconds of every construction alone (no budget)
  and of threshold accepting and two-opt with the race's move budget from multisection's mapping.

``--suite`` runs every instance of :data:`SUITE` (graphs of :mod:`dense_shapes`: algebraic-multigrid-like,
power-law, uniform random of degree 100-1,000, 4,096 ranks at degree ~100; each onto a dragonfly, a fat
tree and a torus) in a process of its own: the race (no warm-up; numba's cache should be warm, see
``--warm``), its peak memory (``ru_maxrss`` after the race), then Scotch alone, one table row each with
the budget check (race wall <= 1.1 x budget) and the ratios to Scotch.

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

sys.path.insert(0, str(HERE))
from dense_shapes import dense_graph  # noqa: E402

# Networks: hosts >= processes.  1,000 processes: the 1,088-host dragonfly, the 10-ary 3-tree,
# the 10x10x10 torus; 4,096: a 4,224-host dragonfly, the 16-ary 3-tree, the 16x16x16 torus.
NETWORKS = {1000: ("dragonfly(17, 8, 8, 2)", "fattree(10, 3)", "torus((10, 10, 10))"),
            4096: ("dragonfly(33, 16, 8, 2)", "fattree(16, 3)", "torus((16, 16, 16))")}
GRAPHS = {1000: ("amg:10x10x10", "powerlaw:1000:150", "random:1000:100:1", "random:1000:300:1",
                 "random:1000:1000:1"),
          4096: ("random:4096:100:1", "powerlaw:4096:150")}
#: (graph, network) of ``--suite``.
SUITE = [(g, t) for n in GRAPHS for g in GRAPHS[n] for t in NETWORKS[n]]


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


def one(graph, topology, budget):
    """One suite row, in this process: the race, its peak memory, Scotch alone."""
    import resource

    from libtopomap.commgraph import sym_graph

    t = eval("ltm." + topology, {"ltm": ltm})
    g = dense_graph(graph)
    deg = np.diff(sym_graph(g).indptr)
    r = race(t, g, budget)
    r["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    r["kept"] = bool(r["wall"] <= 1.1 * r["budget"])
    load = _load()
    m, cpu, wall = _clock(lambda: ltm.map_processes(t, g, strategy="scotch", seed=0))
    e = ltm.evaluate(t, g, m.vertices)
    return {"graph": graph, "topology": topology, "processes": g.n, "entries": int(deg.sum()),
            "mean_degree": float(deg.mean()), "max_degree": int(deg.max()), "race": r,
            "scotch": {"wall": wall, "cpu": cpu, "load": load, "max_congestion": e["max_congestion"],
                       "hop_bytes": e["hop_bytes"]}}


def suite_markdown(rows, budget):
    lines = ["# Dense graphs of real shape: `map --strategy all --refine ta` (congestion) against Scotch", "",
             f"{os.cpu_count()} cores, shared; load average (1 min) at the start of each race and of Scotch's run. "
             f"Budget: {'the library default' if budget is None else f'{budget} s'}; kept = race wall <= 1.1 x budget; "
             "peak = the process's maximum RSS after the race (inputs included).  Ratios: race / Scotch "
             "(max congestion and hop-bytes: lower is better).", "",
             "| graph | network | P | mean / max deg | race CPU s | wall s | load | peak MB | budget kept | winner "
             "| max cong x Scotch | hop-bytes x Scotch | Scotch CPU / wall s (load) | CPU x Scotch |",
             "|---|---|---:|---|---:|---:|---:|---:|---|---|---:|---:|---|---:|"]
    for x in rows:
        if "error" in x:
            lines.append(f"| {x['graph']} | {x['topology']} | | | | | | | | failed: {x['error']} | | | | |")
            continue
        r, s = x["race"], x["scotch"]
        lines.append(
            f"| {x['graph']} | {x['topology']} | {x['processes']} | {x['mean_degree']:.0f} / {x['max_degree']} | "
            f"{r['cpu']:.2f} | {r['wall']:.2f} | {r['load']} | {r['peak_mb']:.0f} | "
            f"{'yes' if r['kept'] else 'NO'} ({r['budget']:.0f} s) | {r['winner']} | "
            f"{r['max_congestion'] / s['max_congestion']:.3f} | {r['hop_bytes'] / s['hop_bytes']:.3f} | "
            f"{s['cpu']:.2f} / {s['wall']:.2f} ({s['load']}) | {r['cpu'] / max(s['cpu'], 1e-9):.2f} |")
    return "\n".join(lines) + "\n"


def suite(args):
    import subprocess

    todo = [x for x in SUITE if not args.only or any(k in f"{x[0]} {x[1]}" for k in args.only)]
    if args.warm:  # fill numba's cache: one small race per network kind
        for topo in dict.fromkeys(t for _, t in todo):
            print(f"  warming {topo}", file=sys.stderr, flush=True)
            subprocess.run([sys.executable, __file__, "--one", "random:200:60:1", topo, "--budget", "30"],
                           check=False, capture_output=True)
    rows, out = [], pathlib.Path(args.out)
    for graph, topo in todo:
        cmd = [sys.executable, __file__, "--one", graph, topo]
        if args.budget is not None:
            cmd += ["--budget", str(args.budget)]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        try:
            row = json.loads(p.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            row = {"graph": graph, "topology": topo, "error": (p.stderr.strip().splitlines() or ["?"])[-1]}
        rows.append(row)
        r = row.get("race", {})
        print(f"  {graph} on {topo}: race cpu {r.get('cpu')} s wall {r.get('wall')} s load {r.get('load')}",
              file=sys.stderr, flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps({"budget": args.budget, "rows": rows}, indent=1,
                                                       default=float) + "\n")
    md = suite_markdown(rows, args.budget)
    print(md)
    out.with_suffix(".md").write_text(md)
    return 0


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
    ap.add_argument("--graph", default="random:1000:437:1", help="libtopomap.load_graph spec, amg:NXxNYxNZ "
                    "or powerlaw:N:MEAN_DEGREE[:SEED] (dense_shapes.dense_graph)")
    ap.add_argument("--topology", default="dragonfly(17, 8, 8, 2)", help="generator call (libtopomap names)")
    ap.add_argument("--budget", type=float, default=None, help="race budget (default: the library's)")
    ap.add_argument("--no-phases", action="store_true")
    ap.add_argument("--cold", action="store_true", help="no untimed warm-up race")
    ap.add_argument("--out", default=str(HERE / "results" / "dense"), help="output prefix (.md and .json)")
    ap.add_argument("--suite", action="store_true", help="every (graph, network) of SUITE, a process each")
    ap.add_argument("--only", nargs="*", help="with --suite: the instances whose 'graph network' contains one of these")
    ap.add_argument("--warm", action="store_true", help="with --suite: fill numba's cache first")
    ap.add_argument("--one", nargs=2, metavar=("GRAPH", "NETWORK"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one, args.budget), default=float))
        return 0
    if args.suite:
        return suite(args)
    t = eval("ltm." + args.topology, {"ltm": ltm})
    g = dense_graph(args.graph)
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
