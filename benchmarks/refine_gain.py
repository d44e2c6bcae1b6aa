"""How much threshold accepting improves each construction of ``map --strategy all --refine ta``: the
data behind the race's rule of refining only constructions that can still win
(:data:`libtopomap.portfolio.selection.REFINE_GAIN`).

Usage::

    nice python benchmarks/refine_gain.py --out benchmarks/results/refine_gain_s11        # quality --quick + speed
    nice python benchmarks/refine_gain.py --only fattree-32-3 --out ...                    # the 32,768 fat tree

For every instance (bench_quality's ``--quick`` instances, bench_speed's, and on request the 32-ary
3-tree of bench_scale) it builds every candidate of the race as :func:`~libtopomap.portfolio.run_portfolio`
does (same problem, candidates and seeds, default budget), then refines *every* construction, not only
the chosen ones, each with the whole default budget, and records per candidate the score before and after
(maximum congestion, average congestion, hop-bytes) and the ratio ``built / refined`` of each.  It also
says which candidate the race picks when all are refined and when only those the rule keeps are.
Results: a Markdown table and JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import libtopomap as ltm  # noqa: E402
from libtopomap.mappers import STRATEGIES  # noqa: E402
from libtopomap.portfolio import (STRATEGY_ORDER, MappingProblem, make_candidates, refinement_choice,  # noqa: E402
                                  select)


def instances(only):
    import bench_quality
    import bench_speed

    out = [(k, t, g) for k, _, t, g in bench_quality.instances(True)]
    for k, (gen, pattern, _) in bench_speed.INSTANCES.items():
        out.append(("speed-" + k, eval("ltm." + gen), ltm.load_graph(pattern)))
    if only and "fattree-32-3" in only:
        out.append(("fattree-32-3", ltm.fattree(32, 3), ltm.load_graph("torus-scrambled:32x32x32:1")))
    return [x for x in out if not only or x[0] in only]


def measure(key, t, g, seed):
    problem = MappingProblem(t, g, objective="congestion")
    names = [x for x in STRATEGY_ORDER if x in STRATEGIES]
    cands = make_candidates(names, seed=seed, refine="ta", starts=np.flatnonzero(problem.slots))
    problem.start_clock()
    built = {c.index: problem.construct(c) for c in cands}
    rows, refined = [], dict(built)
    for c in cands[1 if not any(o.at_bound for o in built.values()) else len(cands):]:  # at the bound: none
        b = built[c.index]
        t0 = time.process_time()
        problem.start_clock()  # every refinement gets the whole default budget
        r = problem.refine(c, b)
        refined[c.index] = r
        rows.append({"candidate": c.label, "built": list(b.key), "refined": list(r.key),
                     "ratio": [x / y if y else None for x, y in zip(b.key, r.key)], "cpu_s": time.process_time() - t0,
                     "at_bound": b.at_bound, "note": r.note})
    chosen = refinement_choice(built.values(), cands, problem.order, reach=getattr(problem, "refine_reach", None))
    kept = {i: (refined[i] if i in chosen else built[i]) for i in built}
    win_all, win_rule = select(refined.values()).label, select(kept.values()).label
    return {"key": key, "P": int(g.n), "iterations": problem.iterations,
            "bounds": {k: float(v) for k, v in problem.bounds.items()}, "rows": rows, "chosen": sorted(chosen),
            "winner_all_refined": win_all, "winner_rule": win_rule,
            "winner_key_all": list(select(refined.values()).key), "winner_key_rule": list(select(kept.values()).key)}


def markdown(results, load):
    out = [f"load average {load[0]:.2f} at start, {load[1]:.2f} at end", ""]
    for r in results:
        out += [f"## {r['key']} ({r['P']} processes, {r['iterations']} moves)", "",
                "| candidate | built (max, avg cong, hop-bytes) | refined | built / refined | cpu s |",
                "|---|---|---|---|---:|"]
        for x in r["rows"]:
            f = lambda k: ", ".join(f"{v:.6g}" for v in k)  # noqa: E731
            ratio = ", ".join("-" if v is None else f"{v:.4f}" for v in x["ratio"])
            out.append(f"| {x['candidate']} | {f(x['built'])} | {f(x['refined'])} | {ratio} | {x['cpu_s']:.2f} |")
        out += ["", f"winner, all refined: {r['winner_all_refined']} {r['winner_key_all']}; with the rule "
                    f"(refined {r['chosen']}): {r['winner_rule']} {r['winner_key_rule']}", ""]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(HERE / "results" / "refine_gain"))
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    results = []
    for key, t, g in instances(args.only):
        print(key, file=sys.stderr, flush=True)
        results.append(measure(key, t, g, args.seed))
    md = markdown(results, (load0, os.getloadavg()[0]))
    print(md)
    pathlib.Path(args.out + ".md").write_text(md + "\n")
    pathlib.Path(args.out + ".json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
