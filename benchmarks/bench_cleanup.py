"""The congestion winner's traffic: the portfolio (every strategy + threshold accepting, objective
congestion) with and without the capped hop-bytes clean-up of threshold accepting, next to Scotch,
on the small instances of ``bench_quality.py``; Markdown table on stdout, JSON with ``--json``.

Usage::

    python benchmarks/bench_cleanup.py [--only KEY ...] [--json FILE]

Every result is evaluated by ``libtopomap.evaluate``.  ``/ scotch``: the pick's max congestion and
hop-bytes over Scotch's (issue 19's targets: congestion <= 0.9x where not tied at a lower bound,
hop-bytes <= 1.05x the best peer).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import libtopomap as ltm  # noqa: E402
from libtopomap.mappers import HAVE_SCOTCH  # noqa: E402
from libtopomap.portfolio import MappingProblem, make_candidates, run_portfolio  # noqa: E402


def _portfolio(t, g, cleanup, seed):
    """The portfolio's pick under the congestion objective, threshold accepting with or without the
    clean-up (its default share, or 0)."""
    fn = sys.modules["libtopomap.mappers.threshold_accepting"].threshold_accepting
    old = fn.__kwdefaults__["cleanup"]
    try:
        fn.__kwdefaults__["cleanup"] = old if cleanup else 0.0
        problem = MappingProblem(t, g, objective="congestion")
        cands = make_candidates([s for s in ltm.STRATEGIES if s != "identity"], seed=seed, refine="ta")
        t0 = time.perf_counter()
        res = run_portfolio(problem, cands)
        return res.winner, time.perf_counter() - t0
    finally:
        fn.__kwdefaults__["cleanup"] = old


def main(argv=None):
    from bench_quality import instances

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rows = []
    print("| instance | method | max congestion | hop-bytes | avg dilation | seconds | cong / scotch "
          "| hop-bytes / scotch |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for key, label, t, g in instances(True):
        if args.only and key not in args.only:
            continue
        res = {}
        if HAVE_SCOTCH:
            t0 = time.perf_counter()
            m = ltm.map_processes(t, g, strategy="scotch", seed=args.seed)
            res["scotch"] = (ltm.evaluate(t, g, m.vertices), time.perf_counter() - t0, "scotch")
        for name, cl in (("portfolio+ta (no clean-up)", False), ("portfolio+ta", True)):
            w, dt = _portfolio(t, g, cl, args.seed)
            res[name] = (ltm.evaluate(t, g, w.payload), dt, w.label)
        sc = res.get("scotch", (None,))[0]
        for name, (e, dt, pick) in res.items():
            rc = e["max_congestion"] / sc["max_congestion"] if sc else float("nan")
            rh = e["hop_bytes"] / sc["hop_bytes"] if sc else float("nan")
            print(f"| {key} | {name} ({pick}) | {e['max_congestion']:.4g} | {e['hop_bytes']:.6g} | "
                  f"{e['avg_dilation']:.3f} | {dt:.2f} | {rc:.3f} | {rh:.3f} |", flush=True)
            rows.append({"instance": key, "label": label, "method": name, "pick": pick, "seconds": dt,
                         **{k: float(v) for k, v in e.items()}})
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
