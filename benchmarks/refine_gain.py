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
from libtopomap.portfolio.selection import rounded_key  # noqa: E402


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


def rule_check(r):
    """The rule's choice and winner recomputed from the recorded scores (``--render``): the identity row's
    construction is the current placement; ties of scores go to the strategy order."""
    from libtopomap.portfolio import REFINE_BEST, REFINE_GAIN

    rows = r["rows"]
    if not rows:
        return None
    order = lambda x: (rounded_key(x[0]), STRATEGY_ORDER.index(x[1]))  # noqa: E731
    strat = lambda x: x["candidate"].split("+")[0]  # noqa: E731
    built = [(tuple(x["built"]), strat(x)) for x in rows]
    best = rounded_key(min(built, key=order)[0])
    top = sorted(built, key=order)[:REFINE_BEST]
    floors = (r["bounds"]["congestion"], 0.0, r["bounds"]["hopbytes"])
    chosen = [s for k, s in top
              if rounded_key(tuple(max(v / g, f) for v, g, f in zip(k, REFINE_GAIN[s], floors))) <= best]
    every = [(tuple(x["refined"]), strat(x)) for x in rows] + [(tuple(rows[-1]["built"]), "identity")]
    kept = [(tuple(x["refined"]) if strat(x) in chosen else tuple(x["built"]), strat(x)) for x in rows]
    return [s for _, s in top], chosen, min(every, key=order), min(kept + every[-1:], key=order)


def markdown(results, load, head=None):
    out = [head or f"load average {load[0]:.2f} at start, {load[1]:.2f} at end", ""]
    for r in results:
        out += [f"## {r['key']} ({r['P']} processes, {r['iterations']} moves)", "",
                "| candidate | built (max, avg cong, hop-bytes) | refined | built / refined | cpu s |",
                "|---|---|---|---|---:|"]
        for x in r["rows"]:
            f = lambda k: ", ".join(f"{v:.6g}" for v in k)  # noqa: E731
            ratio = ", ".join("-" if v is None else f"{v:.4f}" for v in x["ratio"])
            out.append(f"| {x['candidate']} | {f(x['built'])} | {f(x['refined'])} | {ratio} | {x['cpu_s']:.2f} |")
        check = rule_check(r)
        if check is None:
            out += ["a construction at the lower bounds: nothing refined", ""]
            continue
        top, chosen, win_all, win_rule = check
        out += ["", f"winner, all refined: {win_all[1]} {list(win_all[0])}; the {len(top)} best constructions "
                    f"{top}, refined by the rule: {chosen}, winner {win_rule[1]} {list(win_rule[0])}: "
                    + ("same" if rounded_key(win_all[0]) == rounded_key(win_rule[0]) else "DIFFERENT"), ""]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(HERE / "results" / "refine_gain"))
    ap.add_argument("--render", action="store_true", help="no runs: rewrite OUT.md from OUT.json with today's rule")
    args = ap.parse_args(argv)
    if args.render:
        results = json.loads(pathlib.Path(args.out + ".json").read_text())
        old = pathlib.Path(args.out + ".md").read_text().splitlines()[0]
        pathlib.Path(args.out + ".md").write_text(markdown(results, None, head=old) + "\n")
        return
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
