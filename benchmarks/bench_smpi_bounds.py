"""Is 1.3x over the launcher's order attainable on fragmented tapered trees?  Lower bounds vs SMPI time.

``python benchmarks/bench_smpi_bounds.py [--sizes 64,256] [--apps halo,cg] [--out benchmarks/results/X]``

The instances of ``bench_smpi.py`` (same trees, same fragmented allocation, same traced graph).  Per
placement (launcher's order, random, ``ltm cong/dmodk``, Scotch, the peers of ``bench_smpi``): SMPI time and
the dmodk bound ``max link bytes / bandwidth + latency of the longest route`` (link loads of
:func:`libtopomap.metrics.link_traffic` under ``dmodk``, the platform's routing; every iteration waits for its
messages, so the run lasts at least as long as its most loaded link needs to carry its bytes).

For ANY placement on the allocation, a bound independent of the placement and of the routing: every
process's bytes leave through its host's link (``max process out/in bytes / bandwidth``), and whichever
``c`` processes sit under a leaf switch of ``c`` allocated hosts, at least ``min_{|S| = c} out(S)`` bytes
leave it over its ``u`` uplinks (the minimum by an integer program, scipy's HiGHS, its dual bound when cut
by the time limit): ``max_leaf min_out(c) / (u x bandwidth)``.  ``L / bound`` is the most any placement
could gain over the launcher's order.

The same bound measured: SMPI on the same allocation with every switch-to-switch link 1,000x faster (no
taper, no shared uplink: only the hosts' links and the latencies are left), launcher's order and
``ltm cong/dmodk``.  A faster link never slows a max-min fair fluid model down here, so no placement on the
real tree beats this ``ideal`` time by more than the latency it could save (2 of 4 hops per message).
And with that latency too: ``crossbar``, the launcher's order on one switch holding the allocation's hosts (every
placement is the same there; on the tree every message crosses the same host links plus more links), a lower
bound of every placement's SMPI time on the tree: ``L/crossbar`` is the most any placement can gain.

``--descent N``: a plain swap descent on ``(max link bytes under dmodk, links at that maximum, sum of squared
loads)`` from the launcher's order and from ``N - 1`` random placements (every pair of processes tried, whole
loads recomputed per swap: for 32-rank instances only), each result simulated: what a search that sees
dmodk's fixed paths and the plateau of the maximum can reach.
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
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_array, vstack

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_smpi as bs  # noqa: E402

import libtopomap as ltm  # noqa: E402
from libtopomap.metrics import link_traffic, max_dilation  # noqa: E402
from libtopomap.rankfiles import Allocation, allocation_topology  # noqa: E402
from libtopomap.smpi import build, datatype_sizes, read_ti_trace, run_once, write_platform  # noqa: E402

BW = 100e9 / 8      # bytes/s of every link (bench_smpi's platform: 100 Gbps)
LAT = 100e-9        # s per link


def min_boundary(g, c, *, out=True, time_limit=20.0):
    """Least bytes leaving (``out``) or entering a set of ``c`` processes of ``g``: ``(bound, exact)``."""
    n = g.n
    keep = g.src != g.dst
    s, d, w = g.src[keep], g.dst[keep], np.asarray(g.weights, float)[keep]
    if not out:
        s, d = d, s
    m = s.size
    # x_v in S; y_e >= x_s - x_d (edge leaves S)
    cost = np.concatenate([np.zeros(n), w])
    rows = np.arange(m)
    A = coo_array((np.concatenate([np.ones(m), -np.ones(m), -np.ones(m)]),
                   (np.concatenate([rows, rows, rows]), np.concatenate([s, d, n + rows]))), shape=(m, n + m))
    card = coo_array((np.ones(n), (np.zeros(n, int), np.arange(n))), shape=(1, n + m))
    cons = [LinearConstraint(vstack([A]), -np.inf, 0.0), LinearConstraint(card, c, c)]
    res = milp(cost, constraints=cons, integrality=np.concatenate([np.ones(n), np.zeros(m)]),
               bounds=Bounds(0, 1), options={"time_limit": time_limit})
    exact = res.status == 0
    lb = res.fun if exact else getattr(res, "mip_dual_bound", None)
    return float(lb if lb is not None else 0.0), exact


def any_placement_bound(topo, restricted, g):
    """``(seconds, detail)``: the placement-independent bound of the module docstring."""
    keep = g.src != g.dst
    w = np.asarray(g.weights, float)[keep]
    outw = np.bincount(g.src[keep], weights=w, minlength=g.n)
    inw = np.bincount(g.dst[keep], weights=w, minlength=g.n)
    host = max(outw.max(), inw.max()) / BW
    slots = np.asarray(restricted.slots)
    kinds = restricted.kinds
    leaf_count = {}
    for v in np.flatnonzero(slots > 0):
        nb = [int(x) for x in restricted.neighbors(int(v)) if kinds[int(x)] == "switch"]
        leaf_count[nb[0]] = leaf_count.get(nb[0], 0) + int(slots[v])
    leaf = 0.0
    detail = {"host_s": host, "leaves": {}}
    cache = {}
    for sw, c in sorted(leaf_count.items(), key=lambda kv: -kv[1]):
        ups = sum(1 for x in restricted.neighbors(sw) if kinds[int(x)] == "switch")
        if c not in cache:
            o, eo = min_boundary(g, c, out=True)
            i, ei = min_boundary(g, c, out=False)
            cache[c] = (max(o, i), eo and ei)
        b, exact = cache[c]
        detail["leaves"][restricted.names[sw]] = {"hosts": c, "uplinks": ups, "min_out_bytes": b, "exact": exact}
        leaf = max(leaf, b / (ups * BW))
    detail["leaf_s"] = leaf
    return max(host, leaf), detail


def dmodk_bound(restricted, g, p):
    """``(seconds, max link bytes, hops of the longest route)`` under dmodk."""
    load = link_traffic(restricted, g, p, routing="dmodk")
    h = int(max_dilation(restricted, g, p, routing="dmodk"))
    return float(load.max()) / BW + h * LAT, float(load.max()), h


def unblocked(topo, factor=1000.0):
    """``topo`` with every switch-to-switch link ``factor`` times faster."""
    sw = np.asarray([k == "switch" for k in topo.kinds])
    cap = np.where(sw[topo.link_u] & sw[topo.link_v], factor, 1.0) * topo.capacity
    return ltm.Topology(topo.names, np.stack([topo.link_u, topo.link_v], 1), capacities=cap, slots=topo.slots,
                        kinds=topo.kinds, name=topo.name, attrs=topo.attrs)


def dmodk_descent(restricted, g, start):
    """Swap descent on ``(max load, arcs at max, sum of squares)`` under dmodk (exhaustive, first improvement)."""
    def key(p):
        load = link_traffic(restricted, g, p, routing="dmodk")
        m = load.max()
        return (round(m), int((load > m - 0.5).sum()), float(((load / 65536.0) ** 2).sum()))

    p = np.array(start, np.int64)
    k = key(p)
    improved = True
    while improved:
        improved = False
        for i in range(p.size):
            for j in range(i + 1, p.size):
                p[i], p[j] = p[j], p[i]
                k2 = key(p)
                if k2 < k:
                    k, improved = k2, True
                else:
                    p[i], p[j] = p[j], p[i]
    return p


def crossbar(names):
    """One switch with the hosts ``names`` (links of capacity 1)."""
    k = len(names)
    return ltm.Topology(list(names) + ["xbar"], [(i, k) for i in range(k)], slots=[1] * k + [0],
                        kinds=["host"] * k + ["switch"], name="crossbar")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="64")
    ap.add_argument("--apps", default="halo,cg")
    ap.add_argument("--networks", default="(2:1),(4:1)")
    ap.add_argument("--budget", type=float, default=None)
    ap.add_argument("--descent", type=int, default=0, help="descents from the launcher's order and N-1 random starts")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "smpi_s11_trees_bounds"))
    a = ap.parse_args(argv)
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    t_start = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="ltm-bounds-")
    proxies = os.path.join(tmp, "proxies")
    exe = build(["halo", "cg"], outdir=proxies)
    dtypes = datatype_sizes(proxies)
    rows = []
    try:
        for size in [int(x) for x in a.sizes.split(",")]:
            budget = a.budget if a.budget is not None else max(2.0, 2.0 * size / 256)
            for label, family, make, routing in bs.networks(size):
                if not any(s in label for s in a.networks.split(",")):
                    continue
                topo = make()
                rng = np.random.default_rng(12345 + size)       # bench_smpi's allocation
                hv = sorted(rng.choice([int(v) for v in topo.hosts], size=topo.hosts.size // 2,
                                       replace=False).tolist())
                alloc = Allocation(tuple(topo.names[v] for v in hv), tuple(1 for _ in hv))
                restricted, launch = allocation_topology(topo, alloc)
                launch = np.asarray(launch[:len(hv)], np.int64)
                wd = tempfile.mkdtemp(dir=tmp)
                info = write_platform(topo, os.path.join(wd, "platform"), routing=routing, hosts=list(alloc.hosts),
                                      format="auto", outdir=proxies)
                ideal = write_platform(unblocked(topo), os.path.join(wd, "ideal"), routing=routing,
                                       hosts=list(alloc.hosts), format="auto", outdir=proxies)
                xbar = write_platform(crossbar(alloc.hosts), os.path.join(wd, "xbar"), routing=routing,
                                      format="auto", outdir=proxies)
                perm = rng.permutation(launch)
                for app in a.apps.split(","):
                    args = bs.app_args(app, len(hv))

                    def sim(p, trace=None, plat=info):
                        hf = os.path.join(wd, "hosts")
                        with open(hf, "w") as f:
                            f.write("".join(f"{restricted.names[int(v)]}\n" for v in p))
                        return run_once(exe[app], args, platform=plat.path, hostfile=hf, nprocs=len(hv),
                                        trace=trace).time

                    trace = os.path.join(wd, "trace", "ti.txt")
                    os.makedirs(os.path.dirname(trace), exist_ok=True)
                    tl = sim(launch, trace)
                    g, _ = read_ti_trace(trace, len(hv), dtypes)
                    shutil.rmtree(os.path.dirname(trace))
                    anyb, detail = any_placement_bound(topo, restricted, g)
                    txbar = sim(launch, plat=xbar)
                    pl = {"launcher": launch, "random": perm}
                    t0 = time.perf_counter()
                    pl["ltm cong/dmodk"], win = bs.portfolio(restricted, g, launch, "congestion", "dmodk", budget)
                    map_s = time.perf_counter() - t0
                    m = ltm.map_processes(restricted, g, strategy="scotch", placement=launch, seed=0)
                    pl["scotch"] = np.asarray(m.vertices, np.int64)
                    for i in range(a.descent):
                        pl[f"descent {i}"] = dmodk_descent(restricted, g, launch if i == 0 else rng.permutation(launch))
                    row = {"network": label, "size": size, "app": app, "ranks": len(hv), "any_bound_s": anyb,
                           "any_detail": detail, "winner": win, "map_s": map_s, "crossbar_time": txbar,
                           "placements": {}}
                    for k, p in pl.items():
                        t = tl if k == "launcher" else sim(p)
                        b, mx, h = dmodk_bound(restricted, g, p)
                        row["placements"][k] = {"time": t, "dmodk_bound": b, "max_link_bytes": mx, "hops": h}
                        if k in ("launcher", "ltm cong/dmodk"):
                            row["placements"][k]["ideal_time"] = sim(p, plat=ideal)
                    rows.append(row)
                    print(json.dumps({k: v for k, v in row.items() if k != "any_detail"}, default=float),
                          file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    meta = {"command": "python benchmarks/bench_smpi_bounds.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "load_start": load0, "load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "wall_s": time.perf_counter() - t_start}
    md = markdown(rows, meta)
    print(md)
    with open(a.out + ".md", "w") as f:
        f.write(md)
    with open(a.out + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1, default=float)
    return 0


def markdown(rows, meta):
    us = lambda x: f"{x * 1e6:.1f}"  # noqa: E731
    extra = []
    L = ["# Lower bounds vs SMPI time on fragmented tapered trees", "",
         f"`{meta['command']}`; load average at start {meta['load_start']}, at end {meta['load_end']}; "
         f"wall {meta['wall_s']:.0f} s.", "",
         "Per placement: SMPI time / dmodk bound (max link bytes under dmodk / 12.5 GB/s + 100 ns x hops of the "
         "longest route), microseconds.  `any`: the bound for every placement (host links; leaf uplinks with the "
         "least bytes any set of that leaf's size sends out).  `L/any`: the most any placement could gain over the "
         "launcher's order.", "",
         "| network | size | app | ranks | launcher | random | ltm cong/dmodk | scotch | any (host, leaf) | L/any |"
         " ideal L / ltm | L/ideal | crossbar | L/crossbar | ltm: L/t |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        P = r["placements"]
        d = {k: v for k, v in P.items() if k.startswith("descent")}
        if d:
            best = min(d, key=lambda k: d[k]["time"])
            extra.append(f"| {r['network']} | {r['size']} | {r['app']} | "
                         + ", ".join(f"{us(v['time'])} ({v['max_link_bytes'] / 65536:.0f})" for v in d.values())
                         + f" | {P['launcher']['time'] / d[best]['time']:.2f}x |")
        cells = [f"{us(P[k]['time'])} / {us(P[k]['dmodk_bound'])}" for k in
                 ("launcher", "random", "ltm cong/dmodk", "scotch")]
        d = r["any_detail"]
        L.append(f"| {r['network']} | {r['size']} | {r['app']} | {r['ranks']} | " + " | ".join(cells)
                 + f" | {us(r['any_bound_s'])} ({us(d['host_s'])}, {us(d['leaf_s'])}) | "
                 f"{P['launcher']['time'] / r['any_bound_s']:.2f}x | "
                 f"{us(P['launcher']['ideal_time'])} / {us(P['ltm cong/dmodk']['ideal_time'])} | "
                 f"{P['launcher']['time'] / min(P[k]['ideal_time'] for k in ('launcher', 'ltm cong/dmodk')):.2f}x | "
                 f"{us(r['crossbar_time'])} | {P['launcher']['time'] / r['crossbar_time']:.2f}x | "
                 f"{P['launcher']['time'] / P['ltm cong/dmodk']['time']:.2f}x |")
    if extra:
        L += ["", "Swap descents under dmodk (`--descent`): SMPI time, us (max link bytes / 64 KiB), from the "
              "launcher's order first, then random starts; the best's speed-up over the launcher's order.", "",
              "| network | size | app | descents | L / best |", "|---|---|---|---|---|"] + extra
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
