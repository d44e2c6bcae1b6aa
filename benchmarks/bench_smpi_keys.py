"""Which tie-break orders placements as SMPI does?  Many placements per tree instance, SMPI time vs model keys.

``python benchmarks/bench_smpi_keys.py [--networks fattree,8:4] [--out benchmarks/results/smpi_64_keys]``
``python benchmarks/bench_smpi_keys.py --report OUT.json --out OUT`` (keys recomputed on a saved run's placements)

On the 64-host trees of :mod:`bench_smpi` (dmodk routing; whole and fragmented allocations; halo and cg), every
outcome of the portfolio races (objectives congestion and hop-bytes, routings ecmp and dmodk), the random
placement and launcher orders with 1 to 16 random swaps are simulated with SMPI.  Per placement, under dmodk: max
congestion, the max on switch-to-switch links and how many links carry it, the sum of squared loads, hop-bytes,
the hop-weighted maximum load and :func:`libtopomap.fluid.phase_time`.  Spearman of each with SMPI time per
instance, over all placements and over those that tie with the launcher's order on max congestion (the race's
tie-break decides those).  Output: ``OUT.md`` and ``OUT.json`` (with the placements).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_smpi as B  # noqa: E402

from libtopomap.commgraph import CommGraph  # noqa: E402
from libtopomap.fluid import demand_routes, phase_time  # noqa: E402
from libtopomap.metrics import evaluate, link_traffic  # noqa: E402
from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio  # noqa: E402
from libtopomap.rankfiles import Allocation, allocation_topology  # noqa: E402
from libtopomap.smpi import build, datatype_sizes, read_ti_trace, run_once, write_platform  # noqa: E402
from libtopomap.vocabulary import STRATEGIES  # noqa: E402

KEYS = ("max", "sw_max", "sw_n_at_max", "sumsq", "hop_bytes", "hop_load", "phase_time")


def keys(t, g, p, routing="dmodk"):
    """The candidate keys of placement ``p`` (see the module docstring)."""
    load = link_traffic(t, g, p, routing=routing)
    host = np.array([k == "host" for k in t.kinds])
    sw = ~(host[t.arc_source] | host[t.indices])
    s, d = p[g.src], p[g.dst]
    keep = s != d
    ptr, arcs = demand_routes(t, s[keep], d[keep], routing=routing)
    hops = np.diff(ptr)
    hop_load = np.bincount(arcs, weights=np.repeat(g.weights[keep] * hops, hops), minlength=load.size)
    sw_max = float(load[sw].max())
    return {"max": float(load.max()), "sw_max": sw_max, "sw_n_at_max": int(np.sum(load[sw] >= sw_max * (1 - 1e-9))),
            "sumsq": float(np.sum(load ** 2)), "hop_bytes": float(evaluate(t, g, p, routing=routing)["hop_bytes"]),
            "hop_load": float(hop_load.max()), "phase_time": phase_time(t, g, p, routing=routing)}


def placements(restricted, g, launch, rng):
    out = {"launcher": launch, "random": rng.permutation(launch)}
    strategies = [x for x in STRATEGY_ORDER if x in STRATEGIES]
    for obj in ("congestion", "hopbytes"):
        for r in ("ecmp", "dmodk"):
            problem = MappingProblem(restricted, g, placement=launch, objective=obj, routing=r, total_budget=1.0)
            cands = make_candidates(strategies, seed=0, refine="ta" if obj == "congestion" else "hb-swap",
                                    starts=np.flatnonzero(problem.slots))
            res = run_portfolio(problem, cands)
            out[f"win {obj[:4]}/{r}"] = np.asarray(res.winner.payload, np.int64)
            for o in res.outcomes:
                if o.payload is not None:
                    out[f"{obj[:4]}/{r}/{o.label}/{o.candidate.index}"] = np.asarray(o.payload, np.int64)
    for k in (1, 2, 3, 4, 6, 8, 16):
        for s in range(2):
            q = launch.copy()
            rr = np.random.default_rng(100 * k + s)
            for _ in range(k):
                i, j = rr.choice(launch.size, 2, replace=False)
                q[[i, j]] = q[[j, i]]
            out[f"swap{k}.{s}"] = q
    uniq = {}
    for k, p in out.items():
        uniq.setdefault(p.tobytes(), (k, p))
    return list(uniq.values())


def run(networks, log):
    size = 64
    tmp = tempfile.mkdtemp(prefix="ltm-bench-keys-")
    proxies = os.path.join(tmp, "proxies")
    exe = build(["halo", "cg"], outdir=proxies)
    dt = datatype_sizes(proxies)
    graphs, out = {}, []
    try:
        for label, family, make, routing in B.networks(size):
            if family != "tree" or (networks and not any(s in label for s in networks)):
                continue
            topo = make()
            for alloc_kind in ("whole", "frag"):
                rng = np.random.default_rng(12345 + size)
                hv = [int(v) for v in topo.hosts]
                if alloc_kind == "frag":
                    hv = sorted(rng.choice(hv, size=len(hv) // 2, replace=False).tolist())
                alloc = Allocation(tuple(topo.names[v] for v in hv), tuple(1 for _ in hv))
                restricted, launch = allocation_topology(topo, alloc)
                launch = np.asarray(launch[:len(hv)], np.int64)
                wd = tempfile.mkdtemp(dir=tmp)
                info = write_platform(topo, os.path.join(wd, "platform"), routing=routing, hosts=list(alloc.hosts),
                                      format="auto", outdir=proxies)
                for app in ("halo", "cg"):
                    args = B.app_args(app, len(hv))

                    def sim(p, trace=None):
                        hf = os.path.join(wd, "hosts")
                        with open(hf, "w") as f:
                            f.write("".join(f"{restricted.names[int(v)]}\n" for v in p))
                        return run_once(exe[app], args, platform=info.path, hostfile=hf, nprocs=len(hv),
                                        trace=trace).time

                    if (app, len(hv)) not in graphs:
                        tr = os.path.join(wd, "trace", "ti.txt")
                        os.makedirs(os.path.dirname(tr), exist_ok=True)
                        sim(launch, tr)
                        graphs[app, len(hv)] = read_ti_trace(tr, len(hv), dt)[0]
                    g = graphs[app, len(hv)]
                    t0 = time.perf_counter()
                    rows = [{"name": k, "time": sim(p), "p": p.tolist(), **keys(restricted, g, p)}
                            for k, p in placements(restricted, g, launch, rng)]
                    log(f"{label} {alloc_kind} {app}: {len(rows)} placements in {time.perf_counter() - t0:.0f} s")
                    out.append({"network": label, "alloc": alloc_kind, "app": app, "hv": hv, "rows": rows,
                                "src": g.src.tolist(), "dst": g.dst.tolist(), "w": g.weights.tolist()})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def recompute(data):
    """Keys again from the saved placements and graphs (SMPI times kept)."""
    tops = {label: make() for label, _, make, _ in B.networks(64)}
    for inst in data:
        topo, hv = tops[inst["network"]], inst["hv"]
        restricted, _ = allocation_topology(topo, Allocation(tuple(topo.names[v] for v in hv), tuple(1 for _ in hv)))
        g = CommGraph(len(hv), inst["src"], inst["dst"], inst["w"])
        for r in inst["rows"]:
            r.update(keys(restricted, g, np.asarray(r["p"], np.int64)))
    return data


def markdown(data, meta):
    L = [f"# Tie-break keys vs SMPI time ({meta['date']})", "", meta["how"], "",
         "Spearman of each key with SMPI time per instance: over all placements / over those that tie with the "
         "launcher's order on max congestion (count in brackets; `-` where a key is constant).", "",
         "| network | alloc | app | placements (ties) | " + " | ".join(KEYS) + " |",
         "|---|---|---|---|" + "---|" * len(KEYS)]
    for inst in data:
        rows = inst["rows"]
        L0 = next(r for r in rows if r["name"] == "launcher")
        tie = [r for r in rows if abs(r["max"] - L0["max"]) <= 1e-9 * L0["max"]]
        cells = []
        for k in KEYS:
            a = B.spearman([r[k] for r in rows], [r["time"] for r in rows])
            b = B.spearman([r[k] for r in tie], [r["time"] for r in tie])
            cells.append(f"{B._f(a, '{:.2f}')} / {B._f(b, '{:.2f}')}")
        L.append(f"| {inst['network']} | {inst['alloc']} | {inst['app']} | {len(rows)} ({len(tie)}) | "
                 + " | ".join(cells) + " |")
    L += ["", "The launcher's order and the races' winners (`win OBJECTIVE/ROUTING`, where not the same placement "
          "as an earlier row) under dmodk: SMPI time and each key over the launcher's.", "",
          "| network | alloc | app | placement | SMPI us | max cong / L | phase time / L | hop-bytes / L |",
          "|---|---|---|---|---|---|---|---|"]
    for inst in data:
        L0 = next(r for r in inst["rows"] if r["name"] == "launcher")
        for r in inst["rows"]:
            if r["name"] == "launcher" or r["name"].startswith("win "):
                L.append(f"| {inst['network']} | {inst['alloc']} | {inst['app']} | {r['name']} | "
                         f"{r['time'] * 1e6:.1f} | "
                         f"{r['max'] / L0['max']:.3f} | {r['phase_time'] / L0['phase_time']:.3f} | "
                         f"{r['hop_bytes'] / L0['hop_bytes']:.3f} |")
    return "\n".join(L) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--networks", help="comma-separated substrings of the tree labels to keep")
    ap.add_argument("--report", help="a saved OUT.json: recompute the keys and print the tables")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "smpi_64_keys"))
    a = ap.parse_args(argv)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if a.report:
        with open(a.report) as f:
            data = recompute(json.load(f)["instances"])
        how = f"Keys recomputed from the placements and SMPI times saved in `{os.path.basename(a.report)}`."
    else:
        if shutil.which("smpirun") is None or shutil.which("smpicc") is None:
            print("bench_smpi_keys: SMPI not found (install libsimgrid-dev)", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        data = run(a.networks.split(",") if a.networks else None, lambda s: print(s, file=sys.stderr, flush=True))
        how = (f"`python benchmarks/bench_smpi_keys.py {' '.join(argv if argv is not None else sys.argv[1:])}`; "
               f"SimGrid SMPI CM02 as bench_smpi; load average at start {load}, at end "
               f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; wall {time.perf_counter() - t0:.0f} s.")
    meta = {"date": time.strftime("%Y-%m-%d"), "how": how}
    md = markdown(data, meta)
    print(md)
    with open(a.out + ".md", "w") as f:
        f.write(md)
    if not a.report:
        with open(a.out + ".json", "w") as f:
            json.dump({"meta": meta, "instances": data}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
