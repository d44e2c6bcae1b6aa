"""Why does SMPI disagree with the race on an instance of :mod:`bench_smpi`?  Time split by phase, loads by link.

``python benchmarks/bench_smpi_ties.py --instance "8:4,whole,cg" --instance "avakas,frag,halo" [--out OUT]
[--placements OUT.json] [--bandwidth 1Gbps]``

For each instance (network label substring, allocation, application of :mod:`bench_smpi` at 64 hosts) the
launcher's order and the winner of ``map --strategy all`` (objective congestion, refinement ``ta``, the platform's
routing, no time budget so the machine's load does not change it; ``--placements``: those of an earlier run) are
simulated with SMPI as the application, as its neighbour exchange alone (``halo`` with no Allreduce, the ``replay``
of one iteration of the traced graph for ``cg``: 10 iterations and 1), the rest (app - exchange: the Allreduces and
the phases' coupling) and one Allreduce of a double alone (the ``colls`` proxy, mean of 10).  Per placement, under
the platform's routing and for one iteration's bytes: :func:`libtopomap.fluid.phase_time` (in microseconds at
100 Gbps per unit of capacity), max congestion and how many links carry it, hop-bytes, the hops of the longest
route, the sum of the routes' hops, and the sum over the levels of the rank-order binomial tree of its longest
route (SMPI's default Bcast).  ``--bandwidth``: of a link of capacity 1 on the platform (bench_smpi: 100Gbps).
Output: Markdown on stdout (and ``OUT.md``), the placements and numbers in ``OUT.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_smpi as B  # noqa: E402

from libtopomap.commgraph import CommGraph  # noqa: E402
from libtopomap.fluid import demand_routes, phase_time  # noqa: E402
from libtopomap.metrics import evaluate, link_traffic  # noqa: E402
from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio  # noqa: E402
from libtopomap.rankfiles import Allocation, allocation_topology  # noqa: E402
from libtopomap.smpi import build, datatype_sizes, read_ti_trace, run_once, write_edge_list, write_platform  # noqa: E402
from libtopomap.vocabulary import STRATEGIES  # noqa: E402

LINK_BPS = 100e9 / 8  # bench_smpi's platforms: 100 Gbps links


def model(t, g, p, routing):
    """Model numbers of placement ``p`` under ``routing``."""
    load = link_traffic(t, g, p, routing=routing)
    m = evaluate(t, g, p, routing=routing)
    s, d = p[g.src], p[g.dst]
    keep = s != d
    ptr, _ = demand_routes(t, s[keep], d[keep], routing=routing)
    hops = np.diff(ptr)
    top = load.max()
    # rank-order binomial tree rooted at rank 0 (SMPI's default Bcast and Reduce): per level, the longest route
    tree = 0
    for k in range(int(np.ceil(np.log2(g.n)))):
        lo = np.arange(min(1 << k, g.n - (1 << k)))
        tp, _ = demand_routes(t, p[lo], p[lo + (1 << k)], routing=routing)
        tree += int(np.diff(tp).max())
    return {"tree_hops": tree, "max": float(top), "n_at_max": int(np.sum(load >= top * (1 - 1e-9))),
            "phase_us": phase_time(t, g, p, routing=routing) / LINK_BPS * 1e6, "hop_bytes": float(m["hop_bytes"]),
            "max_hops": int(hops.max()), "sum_hops": int(hops.sum()), "load": load}


def race(t, g, launch, routing):
    problem = MappingProblem(t, g, placement=launch, objective="congestion", routing=routing,
                             total_budget=float("inf"))
    cands = make_candidates([x for x in STRATEGY_ORDER if x in STRATEGIES], seed=0, refine="ta",
                            starts=np.flatnonzero(problem.slots))
    res = run_portfolio(problem, cands)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--instance", action="append", required=True, help="NETWORK,ALLOC,APP (repeatable)")
    ap.add_argument("--out")
    ap.add_argument("--placements", help="OUT.json of an earlier run: its placements instead of new races")
    ap.add_argument("--bandwidth", default="100Gbps", help="of a link of capacity 1 (bench_smpi: 100Gbps)")
    a = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="ltm-ties-")
    L, dump = [], []
    try:
        proxies = os.path.join(tmp, "proxies")
        exe = build(["halo", "cg", "replay", "colls"], outdir=proxies)
        old = {}
        if a.placements:
            with open(a.placements) as f:
                for d in json.load(f):
                    old.setdefault(d["instance"], {})[d["placement"]] = np.asarray(d["p"], np.int64)
        dt = datatype_sizes(proxies)
        for spec in a.instance:
            net, alloc_kind, app = spec.split(",")
            label, family, make, prouting = next(x for x in B.networks(64) if net in x[0])
            topo = make()
            rng = np.random.default_rng(12345 + 64)
            hv = [int(v) for v in topo.hosts]
            if family == "fabric":
                hv = hv[:64]
            if alloc_kind == "frag":
                hv = sorted(rng.choice(hv, size=len(hv) // 2, replace=False).tolist())
            n = len(hv)
            alloc = Allocation(tuple(topo.names[v] for v in hv), tuple(1 for _ in hv))
            t, launch = allocation_topology(topo, alloc)
            launch = np.asarray(launch[:n], np.int64)
            wd = os.path.join(tmp, "w")
            os.makedirs(wd, exist_ok=True)
            info = write_platform(topo, os.path.join(wd, "platform"), routing=prouting,
                                  hosts=list(alloc.hosts), format="auto", outdir=proxies,
                                  bandwidth=a.bandwidth)
            routing = info.routing
            args = B.app_args(app, n)
            hf = os.path.join(wd, "hosts")

            def sim(binary, argv_, p, trace=None):
                with open(hf, "w") as f:
                    f.write("".join(f"{t.names[int(v)]}\n" for v in p))
                return run_once(binary, argv_, platform=info.path, hostfile=hf, nprocs=n, trace=trace).time * 1e6

            tr = os.path.join(wd, "trace", "ti.txt")
            os.makedirs(os.path.dirname(tr), exist_ok=True)
            sim(exe[app], args, launch, trace=tr)
            g, _ = read_ti_trace(tr, n, dt)
            shutil.rmtree(os.path.dirname(tr))
            # the trace holds the 10 iterations' bytes: one exchange is a tenth
            g1 = CommGraph(g.n, g.src, g.dst, g.weights / 10)
            edges = os.path.join(wd, "edges.txt")
            write_edge_list(g1, edges)
            if spec in old:
                places, keys = old[spec], {}
            else:
                res = race(t, g, launch, routing)
                places = {"launcher": launch, f"winner {res.winner.label}": np.asarray(res.winner.payload, np.int64)}
                keys = {k: next((o.key for o in res.outcomes if o.payload is not None
                                 and np.array_equal(o.payload, p)), None) for k, p in places.items()}
            L += [f"## {label}, {alloc_kind}, {app} ({n} ranks, routing {routing})", "",
                  "| placement | app us | exchange x10 us | rest us | Allreduce us | exchange x1 us | phase_time us "
                  "| max cong | links at max | hop-bytes | max hops | sum hops | bcast tree hops | race key |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
            loads = {}
            for name, p in places.items():
                full = sim(exe[app], args, p)
                if app == "halo":
                    ex10 = sim(exe["halo"], ["2", "65536", "10", "0"], p)
                    ex1 = sim(exe["halo"], ["2", "65536", "1", "0"], p)
                else:
                    ex10 = sim(exe["replay"], [edges, "10"], p)
                    ex1 = sim(exe["replay"], [edges, "1"], p)
                ar = sim(exe["colls"], ["allreduce", "8", "10"], p) / 10
                m = model(t, g1, p, routing)
                loads[name] = m.pop("load")
                key = keys.get(name)
                L.append(f"| {name} | {full:.2f} | {ex10:.2f} | {full - ex10:.2f} | {ar:.3f} | {ex1:.3f} | "
                         f"{m['phase_us']:.3f} | {m['max']:.0f} | {m['n_at_max']} | {m['hop_bytes']:.0f} | "
                         f"{m['max_hops']} | {m['sum_hops']} | {m['tree_hops']} | "
                         f"{tuple(round(x, 1) for x in key) if key else '-'} |")
                dump.append({"instance": spec, "placement": name, "p": p.tolist(), "app_us": full, "ex10_us": ex10,
                             "ex1_us": ex1, "allreduce_us": ar, **m})
            # links whose load differs between the two placements
            (n0, l0), (n1, l1) = loads.items()
            diff = np.flatnonzero(l0 != l1)
            L += ["", f"Links whose load differs ({diff.size} of {l0.size} arcs); loads in bytes per exchange, sorted "
                  "by the larger load:", "", f"| arc | {n0} | {n1} |", "|---|---|---|"]
            for arc in diff[np.argsort(-np.maximum(l0[diff], l1[diff]), kind="stable")][:16]:
                L.append(f"| {t.names[t.arc_source[arc]]} -> {t.names[t.indices[arc]]} | {l0[arc]:.0f} | "
                         f"{l1[arc]:.0f} |")
            L.append("")
            shutil.rmtree(wd, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    md = "\n".join(L) + "\n"
    print(md)
    if a.out:
        with open(a.out + ".md", "w") as f:
            f.write(md)
        with open(a.out + ".json", "w") as f:
            json.dump(dump, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
