"""Placements under SMPI: does the model's ranking of placements predict simulated MPI time? (issue 28 part 6)

``python benchmarks/bench_smpi.py [--quick] [--sizes 256,1024] [--apps halo,cg] [--out benchmarks/results/smpi]``

For every instance (network x machine size x allocation x application) the proxy is run with SimGrid's
SMPI (:func:`libtopomap.smpi.run_once`: CM02, cross-traffic off, computation not simulated) once per
placement, on one platform per (network, size, allocation) written by
:func:`libtopomap.smpi.write_platform` at its default link rates (the fabric's own rates on avakas, capacity
in Gb/s: 4x QDR 40 Gb/s; capacity 1 = 100 Gb/s on the generated networks) under the platform's routing
(``dimension-order`` on the torus, ``minimal`` on the dragonfly, ``table`` elsewhere, ``dmodk`` on trees once
that routing model exists).

* Networks: a full 4-ary n-tree, two-level trees tapered 2:1 and 4:1 (leaf switches of ``d`` hosts and
  ``d/2`` or ``d/4`` spines, one link from every leaf to every spine), a 3-D torus, a dragonfly (one global
  link per group pair, minimal routing) and the real avakas InfiniBand fabric of ``tests/data/fabrics``
  (281 hosts: its first 256 hosts make the "whole" allocation; no 1,024 size).
* Sizes: the machine's hosts (one rank per host).  Allocations: ``whole`` (every host, vertex order),
  ``frag`` (half of the hosts drawn at random, sorted as a launcher gives them, half the ranks).
* Applications: ``halo`` (2-D periodic, 64 KiB to each of 4 neighbours, 10 iterations + a one-double
  Allreduce) and ``cg`` (3-D block mesh of 64^3 cells per rank: 32 KiB faces, not periodic, 10 iterations
  + two Allreduce).  The communication graph is SMPI's time-independent trace of the launcher-order run
  (:func:`libtopomap.smpi.read_ti_trace`), taken once per (application, ranks) and reused everywhere.
* Placements: launcher order, random (seed 1), libtopomap's portfolio (every strategy raced, the
  refinement of the objective: ``ta`` for congestion, ``hb-swap`` for hop-bytes) per objective
  (congestion, hop-bytes) and per routing model of the mapping (``ecmp``, the platform's, ``dmodk`` on
  trees when available), Scotch alone, KaHIP (eco) and SharedMap (fast) on trees when the ``peers`` extra
  imports (``benchmarks/peer_mappers.py``; on a fragmented allocation the allocation's hierarchy padded to a
  uniform one, :func:`peer_mappers.padded_hierarchy`; each in a child cut after ``PEER_TIMEOUT``).
  Identical placements are simulated once.
* Per placement: SMPI time, and :func:`libtopomap.metrics.evaluate` under ECMP and under the platform's
  routing (max congestion, hop-bytes, average dilation).

Output: a Markdown table (stdout and ``OUT.md``) of times per placement, the speed-up of the best
libtopomap placement over the launcher's order, the share of the random -> best gap it recovers, issue 28's
targets for ``ltm cong/P`` (its speed-up over the launcher's order, its time over the fastest peer's), and the
Spearman rank correlation of each model metric with SMPI time per instance and pooled (each instance's
values divided by its launcher-order values); JSON in ``OUT.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform as _platform
import shutil
import sys
import tempfile
import time

import numpy as np

import libtopomap as ltm
from libtopomap import Topology
from libtopomap.metrics import evaluate
from libtopomap.portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio
from libtopomap.rankfiles import Allocation, allocation_topology
from libtopomap.simulate import unit_bandwidth
from libtopomap.routing import ROUTING_MODELS
from libtopomap.smpi import SmpiError, build, datatype_sizes, read_ti_trace, run_once, write_platform
from libtopomap.vocabulary import STRATEGIES

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FABRIC = os.path.join(ROOT, "tests", "data", "fabrics", "open-mpi__hwloc__avakas-ib-subnet-fe80.txt")
HAVE_DMODK = "dmodk" in ROUTING_MODELS
METRICS = ("cong_ecmp", "cong_platform", "hop_bytes", "avg_dilation")


# ----------------------------------------------------------------------------------------------- networks
def two_level(hosts, per_leaf, spines, name):
    """Two-level tree: ``hosts / per_leaf`` leaf switches of ``per_leaf`` hosts, ``spines`` spine switches,
    one link from every leaf to every spine (taper ``per_leaf : spines``); hosts first, then leaves, spines."""
    leaves = hosts // per_leaf
    names = ([f"n{i}" for i in range(hosts)] + [f"leaf{j}" for j in range(leaves)]
             + [f"spine{s}" for s in range(spines)])
    links = [(i, hosts + i // per_leaf) for i in range(hosts)]
    links += [(hosts + j, hosts + leaves + s) for j in range(leaves) for s in range(spines)]
    kinds = ["host"] * hosts + ["switch"] * (leaves + spines)
    slots = [1] * hosts + [0] * (leaves + spines)
    return Topology(names, links, slots=slots, kinds=kinds, name=name)


def networks(size):
    """``[(label, family, make, platform routing or None)]`` of machines with ``size`` hosts."""
    tree = "dmodk" if HAVE_DMODK else "table"
    n = round(math.log(size, 4))
    leaf = 8 if size <= 64 else 16 if size <= 256 else 32
    torus = {64: "4x4x4", 256: "8x8x4", 1024: "16x8x8", 4096: "16x16x16"}[size]
    fly = {64: (8, 4, 2, 2), 256: (16, 8, 2, 2), 1024: (32, 8, 4, 4), 4096: (64, 16, 4, 4)}[size]
    out = [(f"fattree 4-ary {n}-tree", "tree", lambda: ltm.fattree(4, n), tree),
           (f"2-level {leaf}:{leaf // 2} (2:1)", "tree", lambda: two_level(size, leaf, leaf // 2, "taper2"), tree),
           (f"2-level {leaf}:{leaf // 4} (4:1)", "tree", lambda: two_level(size, leaf, leaf // 4, "taper4"), tree),
           (f"torus {torus}", "torus", lambda: ltm.torus(torus), "dimension-order"),
           ("dragonfly g{} a{} p{} h{}".format(*fly), "dragonfly", lambda: ltm.dragonfly(*fly), "minimal")]
    if size <= 256:
        out.append(("fabric avakas (IB, 281 hosts)", "fabric", lambda: ltm.load(FABRIC), "table"))
    return out


# ----------------------------------------------------------------------------------------------- apps
def app_args(app, ranks):
    if app == "halo":
        return ["2", "65536", "10", "1"]
    d = ltm.Compute_dims(ranks, 3)
    return ["x".join(str(64 * x) for x in d), "10"]


# ----------------------------------------------------------------------------------------------- peers
PEER_TIMEOUT = 300.0   # s per peer mapping (SharedMap once did not return in 10 minutes on a 64-host tree here)


def _peers():
    """``(peer_mappers module with the KaHIP library, None)`` or ``(None, why not)``."""
    sys.path.insert(0, HERE)
    import peer_mappers as pm

    lib = pm.kahip_lib()
    have_sm = pm.have("chszlablib")
    if lib is None and not have_sm:
        return None, "the peers extra (kahip, chszlablib) is not installed: pip install -e '.[peers]'"
    return (pm, lib, have_sm), None


def _in_child(fn, timeout):
    """``fn()`` in a forked child, cut after ``timeout`` s: ``(result, CPU s)``; raises TimeoutError."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def child():
        t0 = time.process_time()
        try:
            send.send((fn(), time.process_time() - t0, None))
        except Exception as e:  # noqa: BLE001 - reported to the parent
            send.send((None, 0.0, f"{type(e).__name__}: {e}"))

    proc = ctx.Process(target=child)
    proc.start()
    try:
        if not recv.poll(timeout):
            raise TimeoutError(f"no mapping within {timeout:.0f} s")
        out, cpu, err = recv.recv()
    finally:
        proc.kill()
        proc.join()
    if err:
        raise RuntimeError(err)
    return out, cpu


def peer_placements(peers, t, g, slots):
    """``({label: callable -> placement}, why not)``: KaHIP process mapping (eco) and SharedMap (fast) on a tree.

    The machine's hierarchy when the job fills a uniform tree, else the allocation's padded to a uniform one
    (:func:`peer_mappers.padded_hierarchy`: a fragmented allocation)."""
    pm, lib, have_sm = peers
    hier = (pm.machine_hierarchy(t, slots) if g.n == int(np.asarray(slots).sum()) else None) \
        or pm.padded_hierarchy(t, slots)
    if hier is None:
        return {}, "the allocation is not a tree of hosts with equal slots (KaHIP/SharedMap need a hierarchy)"
    out = {}
    if lib is not None:
        out["KaHIP eco"] = lambda: pm.run_kahip(lib, t, g, slots, hier, pm.KAHIP_MODES["eco"])
    if have_sm:
        out["SharedMap fast"] = lambda: pm.run_sharedmap(t, g, slots, hier, "fast")
    return out, None


# ----------------------------------------------------------------------------------------------- mapping
def portfolio(restricted, g, launch, objective, routing, budget, seed=0):
    refine = "ta" if objective == "congestion" else "hb-swap"
    problem = MappingProblem(restricted, g, placement=launch, objective=objective, routing=routing,
                             total_budget=budget)
    strategies = [x for x in STRATEGY_ORDER if x in STRATEGIES]
    cands = make_candidates(strategies, seed=seed, refine=refine, starts=np.flatnonzero(problem.slots))
    res = run_portfolio(problem, cands)
    return np.asarray(res.winner.payload, dtype=np.int64), res.winner.label


def metrics(restricted, g, p, routing):
    e = evaluate(restricted, g, p, routing="ecmp")
    f = evaluate(restricted, g, p, routing=routing)
    return {"cong_ecmp": float(e["max_congestion"]), "cong_platform": float(f["max_congestion"]),
            "hop_bytes": float(f["hop_bytes"]), "avg_dilation": float(f["avg_dilation"])}


def spearman(x, y):
    from scipy.stats import spearmanr

    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    r = spearmanr(x, y).statistic
    return None if not np.isfinite(r) else float(r)


# ----------------------------------------------------------------------------------------------- one instance
def run_instance(ctx, label, family, topo, routing, size, alloc_kind, apps, budget, log):
    rng = np.random.default_rng(12345 + size)
    hv = [int(v) for v in topo.hosts]
    if family == "fabric":
        hv = hv[:size]
    if alloc_kind == "frag":
        hv = sorted(rng.choice(hv, size=len(hv) // 2, replace=False).tolist())
    ranks = len(hv)
    names = topo.names
    alloc = Allocation(tuple(names[v] for v in hv), tuple(1 for _ in hv))
    restricted, launch = allocation_topology(topo, alloc)
    launch = np.asarray(launch[:ranks], np.int64)
    wd = tempfile.mkdtemp(prefix="ltm-bsmpi-", dir=ctx["tmp"])
    t0 = time.perf_counter()
    try:
        info = write_platform(topo, os.path.join(wd, "platform"), routing=routing, hosts=list(alloc.hosts),
                              format="auto", outdir=ctx["proxies"])
    except Exception as e:  # noqa: BLE001 - an instance the platform export refuses is reported, not fatal
        shutil.rmtree(wd, ignore_errors=True)
        return [{"network": label, "size": size, "alloc": alloc_kind, "ranks": ranks,
                 "skipped": f"platform: {type(e).__name__}: {e}"}]
    plat_s = time.perf_counter() - t0
    ctx["gbps_per_capacity"] = unit_bandwidth(topo) * 8 / 1e9   # the rate write_platform gave capacity 1
    prouting = info.routing
    log(f"# {label} size {size} {alloc_kind}: {ranks} ranks, platform {info.zone} ({prouting}) "
        f"{info.bytes / 1e6:.1f} MB in {plat_s:.1f} s")
    rows = []
    try:
        for app in apps:
            rows.append(run_app(ctx, wd, info, label, family, size, alloc_kind, app, restricted, launch, prouting,
                                ranks, rng, budget, log, plat_s))
    finally:
        shutil.rmtree(wd, ignore_errors=True)
    return rows


def run_app(ctx, wd, info, label, family, size, alloc_kind, app, restricted, launch, prouting, ranks, rng, budget,
            log, plat_s):
    names = restricted.names
    args = app_args(app, ranks)
    exe = ctx["exe"][app]
    t_inst = time.perf_counter()
    sims = {}        # placement key -> (time, wall)
    row = {"network": label, "family": family, "size": size, "alloc": alloc_kind, "app": app, "ranks": ranks,
           "args": args, "platform": {"zone": info.zone, "routing": prouting, "bytes": info.bytes,
                                      "seconds": round(plat_s, 2), "gbps_per_capacity": ctx["gbps_per_capacity"]},
           "placements": {}, "skipped": []}

    def simulate(p, trace=None):
        key = p.tobytes()
        if key in sims and trace is None:
            return sims[key]
        hf = os.path.join(wd, "hosts")
        with open(hf, "w") as f:
            f.write("".join(f"{names[int(v)]}\n" for v in p))
        s = run_once(exe, args, platform=info.path, hostfile=hf, nprocs=ranks, trace=trace, timeout=ctx["timeout"])
        sims[key] = (s.time, s.wall, s.cpu)
        return sims[key]

    # the graph: SMPI's trace of the launcher-order run, once per (app, ranks)
    gkey = (app, ranks)
    trace = None
    if gkey not in ctx["graphs"]:
        trace = os.path.join(wd, "trace", "ti.txt")
        os.makedirs(os.path.dirname(trace), exist_ok=True)
    placements = {"launcher": (launch, 0.0, "launcher")}
    try:
        simulate(launch, trace)
    except SmpiError as e:
        row["error"] = str(e)
        log(f"  {app}: {e}")
        return row
    if trace is not None:
        t0 = time.perf_counter()
        g, tr = read_ti_trace(trace, ranks, ctx["dtypes"])
        ctx["graphs"][gkey] = g
        shutil.rmtree(os.path.dirname(trace), ignore_errors=True)
        row["trace_s"] = round(time.perf_counter() - t0, 2)
    g = ctx["graphs"][gkey]
    row["graph"] = {"processes": g.n, "edges": int(g.n_edges), "bytes": float(g.weights.sum())}

    placements["random"] = (rng.permutation(launch), 0.0, "random")
    routings = ["ecmp", prouting] + (["dmodk"] if HAVE_DMODK and family == "tree" and prouting != "dmodk" else [])
    for obj, tag in (("congestion", "cong"), ("hopbytes", "hb")):
        for r in dict.fromkeys(routings):
            t0 = time.perf_counter()
            p, strat = portfolio(restricted, g, launch, obj, r, budget)
            placements[f"ltm {tag}/{r}"] = (p, time.perf_counter() - t0, strat)
    if "scotch" in STRATEGIES:
        t0 = time.perf_counter()
        m = ltm.map_processes(restricted, g, strategy="scotch", placement=launch, seed=0)
        placements["scotch"] = (np.asarray(m.vertices, np.int64),
                                time.perf_counter() - t0, "scotch")
    else:
        row["skipped"].append("scotch: pyscotch not installed")
    if family == "tree":
        if ctx["peers"] is None:
            row["skipped"].append(f"KaHIP/SharedMap: {ctx['peers_why']}")
        else:
            fns, why = peer_placements(ctx["peers"], restricted, g, restricted.slots)
            if why:
                row["skipped"].append(f"KaHIP/SharedMap: {why}")
            for k, fn in fns.items():
                t0 = time.perf_counter()
                try:
                    p, cpu = _in_child(fn, PEER_TIMEOUT)
                    placements[k] = (np.asarray(p, np.int64), time.perf_counter() - t0, k)
                    row.setdefault("peer_cpu_s", {})[k] = round(cpu, 3)
                except Exception as e:  # noqa: BLE001 - a failing peer is reported, not fatal
                    row["skipped"].append(f"{k}: {type(e).__name__}: {e}")

    for k, (p, map_s, strat) in placements.items():
        try:
            t, wall, cpu = simulate(p)
        except SmpiError as e:
            row["placements"][k] = {"error": str(e)}
            continue
        row["placements"][k] = {"time": t, "sim_wall": round(wall, 2), "sim_cpu": round(cpu, 2),
                                "map_s": round(map_s, 2), "strategy": strat,
                                **metrics(restricted, g, p, prouting)}
    ok = {k: v for k, v in row["placements"].items() if "time" in v}
    T = {k: v["time"] for k, v in ok.items()}
    ltm_keys = [k for k in T if k.startswith("ltm ")]
    if T and ltm_keys and "launcher" in T and "random" in T:
        best_ltm = min(ltm_keys, key=T.get)
        best = min(T.values())
        row["best_ltm"] = best_ltm
        row["speedup_best_ltm"] = T["launcher"] / T[best_ltm]
        row["speedups"] = {k: T["launcher"] / v for k, v in T.items()}
        gap = T["random"] - best
        row["gap_recovered"] = {k: ((T["random"] - T[k]) / gap if gap > 0 else 1.0) for k in ltm_keys}
        row["fastest"] = min(T, key=T.get)
        # rank correlation over the placements of the instance
        keys = list(ok)
        row["spearman"] = {m: spearman([ok[k][m] for k in keys], [ok[k]["time"] for k in keys]) for m in METRICS}
    row["wall_s"] = round(time.perf_counter() - t_inst, 1)
    log(f"  {app}: " + ", ".join(f"{k} {v['time'] * 1e6:.1f}us" if "time" in v else f"{k} ERR"
                                 for k, v in row["placements"].items()) + f"  [{row['wall_s']} s]")
    return row


# ----------------------------------------------------------------------------------------------- report
def pooled(rows):
    """Spearman of each metric with time over every placement of every instance, both divided by the
    instance's launcher-order values; and the mean of the per-instance coefficients."""
    out = {}
    for m in METRICS:
        xs, ys, per = [], [], []
        for r in rows:
            P = r.get("placements", {})
            base = P.get("launcher", {})
            if "time" not in base:
                continue
            for v in P.values():
                if "time" in v:
                    xs.append(v[m] / base[m] if base[m] else v[m])
                    ys.append(v["time"] / base["time"])
            if r.get("spearman", {}).get(m) is not None:
                per.append(r["spearman"][m])
        out[m] = {"pooled": spearman(xs, ys), "mean_per_instance": float(np.mean(per)) if per else None,
                  "instances": len(per), "points": len(xs)}
    return out


def _col(key, prouting):
    """Column of a placement key: the platform's routing written ``P``."""
    return key[:-len(prouting)] + "P" if key.startswith("ltm ") and key.endswith("/" + prouting) else key


def _f(x, fmt="{:.3f}"):
    return "-" if x is None else fmt.format(x)


def targets(row):
    """``(launcher time / ltm cong/P's, ltm cong/P's time / the fastest peer's)`` of a row (None where missing)."""
    P = {k: v["time"] for k, v in row.get("placements", {}).items() if "time" in v}
    mine = P.get(f"ltm cong/{row['platform']['routing']}")
    peers = [v for k, v in P.items() if k not in ("launcher", "random") and not k.startswith("ltm ")]
    if mine is None:
        return None, None
    return (P["launcher"] / mine if "launcher" in P else None), (mine / min(peers) if peers else None)


def markdown(rows, pool, meta):
    cols = ["launcher", "random", "ltm cong/ecmp", "ltm cong/P", "ltm hb/ecmp", "ltm hb/P", "scotch"]
    seen = {_col(k, r["platform"]["routing"]) for r in rows for k in r.get("placements", {})}
    cols += sorted(seen - set(cols))
    L = [f"# SMPI placements benchmark ({meta['date']})", "",
         f"`{meta['command']}`; SimGrid {meta['simgrid']} SMPI, CM02, cross-traffic off, computation not "
         f"simulated, links of 100 ns at the platform's default rates (capacity 1 = 100 Gb/s on generated "
         f"networks, the fabric's own rates on avakas: 4x QDR 40 Gb/s).  Machine: {meta['machine']}; load average "
         f"at start "
         f"{meta['load_start']}, at end {meta['load_end']}; total wall {meta['wall_s']:.0f} s, "
         f"{meta.get('cpu_s', 0):.0f} CPU s (this process and its children).", "",
         "Simulated time per placement in microseconds (P = the platform's routing: dimension-order on the torus, "
         f"minimal on the dragonfly, {'dmodk' if HAVE_DMODK else 'table'} on the trees, table on the fabric).  "
         "`best/L`: launcher time / best libtopomap placement's; "
         "`gap`: share of the random -> fastest gap recovered by the best libtopomap placement "
         "(and by `ltm cong/P`).  Issue 28's targets for `ltm cong/P` (`map --strategy all` under the platform's "
         "routing): `cong/P vs L` (launcher time / its time) >= 1.00x, >= 1.3x on fragmented tori and tapered trees; "
         "`x fastest peer` (its time / the fastest peer's: Scotch, KaHIP, SharedMap) <= 1.02; gap >= 90%.  "
         "`!` marks a miss.", "",
         "| network | size | alloc | app | ranks | " + " | ".join(cols)
         + " | best/L | gap best (cong/P) | cong/P vs L | x fastest peer |",
         "|" + "---|" * (len(cols) + 9)]
    for r in rows:
        if "placements" not in r:
            L.append(f"| {r['network']} | {r['size']} | {r['alloc']} | {r.get('app', '-')} | {r['ranks']} | "
                     + " | ".join("-" for _ in cols) + f" | skipped: {r.get('skipped') or r.get('error')} | |")
            continue
        P = r["placements"]
        pr = r["platform"]["routing"]
        cells = []
        for c in cols:
            k = c[:-1] + pr if c.startswith("ltm ") and c.endswith("/P") else c
            v = P.get(k)
            cells.append("-" if v is None else ("timeout" if "did not finish" in v["error"] else "err")
                         if "time" not in v else
                         (f"**{v['time'] * 1e6:.1f}**" if k == r.get("fastest") else f"{v['time'] * 1e6:.1f}"))
        gr = r.get("gap_recovered", {})
        gb = gr.get(r.get("best_ltm"))
        gp = gr.get(f"ltm cong/{pr}")
        sp, vp = targets(r)
        need = 1.3 if r["alloc"] == "frag" and (r.get("family") == "torus" or "2-level" in r["network"]) else 1.0
        L.append(f"| {r['network']} | {r['size']} | {r['alloc']} | {r['app']} | {r['ranks']} | " + " | ".join(cells)
                 + f" | {_f(r.get('speedup_best_ltm'), '{:.2f}x')} | {_f(gb, '{:.0%}')} ({_f(gp, '{:.0%}')}"
                 + ("!" if gp is not None and gp < 0.9 else "") + ") | "
                 + _f(sp, "{:.2f}x") + ("!" if sp is not None and sp < need - 5e-4 else "") + " | "
                 + _f(vp, "{:.3f}") + ("!" if vp is not None and vp > 1.02 else "") + " |")
    L += ["", "## Spearman rank correlation of model metrics with SMPI time", "",
          "Per instance over its placements (mean), and pooled over all placements of all instances with each "
          "instance's values divided by its launcher-order values.", "",
          "| metric | mean per instance | pooled | instances | points |", "|---|---|---|---|---|"]
    for m, v in pool.items():
        L.append(f"| {m} | {_f(v['mean_per_instance'])} | {_f(v['pooled'])} | {v['instances']} | {v['points']} |")
    fam = meta.get("pool_by_family", {})
    if fam:
        L += ["", "Pooled per network family:", "", "| family | " + " | ".join(METRICS) + " |",
              "|---|" + "---|" * len(METRICS)]
        for f, v in fam.items():
            L.append(f"| {f} | " + " | ".join(_f(v[m]["pooled"]) for m in METRICS) + " |")
    L += ["", "## Per-instance correlations", "", "| network | size | alloc | app | " + " | ".join(METRICS) + " |",
          "|---|---|---|---|" + "---|" * len(METRICS)]
    for r in rows:
        if r.get("spearman"):
            L.append(f"| {r['network']} | {r['size']} | {r['alloc']} | {r['app']} | "
                     + " | ".join(_f(r["spearman"][m]) for m in METRICS) + " |")
    per_row = [f"{r['network']} {r['size']} {r['alloc']} {r.get('app', '-')}: {s}" for r in rows
               for s in (r.get("skipped") if isinstance(r.get("skipped"), list) else [])]
    if meta.get("skipped") or per_row:
        L += ["", "## Skipped", ""] + [f"- {s}" for s in meta.get("skipped", []) + per_row]
    return "\n".join(L) + "\n"


# ----------------------------------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes 64 and 256, halo only")
    ap.add_argument("--sizes", help="machine sizes (hosts), default 256,1024 (4096 is accepted)")
    ap.add_argument("--apps", help="halo,cg (default both; --quick: halo)")
    ap.add_argument("--big-apps", default="halo",
                    help="applications above 256 hosts (default halo: cg at 1,024 does not fit the time here)")
    ap.add_argument("--networks", help="comma-separated substrings of network labels to keep")
    ap.add_argument("--allocs", default="whole,frag")
    ap.add_argument("--budget", type=float, help="seconds of each portfolio race (default 2 per 256 ranks, >= 2)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per smpirun")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "smpi"), help="writes OUT.md and OUT.json")
    a = ap.parse_args(argv)
    if shutil.which("smpirun") is None or shutil.which("smpicc") is None:
        print("bench_smpi: SMPI not found (install libsimgrid-dev)", file=sys.stderr)
        return 2
    sizes = [int(x) for x in (a.sizes or ("64,256" if a.quick else "256,1024")).split(",")]
    apps = (a.apps or ("halo" if a.quick else "halo,cg")).split(",")
    skipped = []
    big_apps = a.big_apps.split(",")
    if any(s > 256 for s in sizes):
        miss = [x for x in apps if x not in big_apps]
        if miss:
            skipped.append(f"{', '.join(miss)} above 256 hosts: not run by default (the full run must stay near 20 "
                           "minutes on this shared 2-core machine); --big-apps halo,cg runs it")
    t_start = time.perf_counter()
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    cpu_start = sum(os.times()[:4])
    if 4096 not in sizes:
        skipped.append("4,096 hosts: not run by default (one 4,096-rank halo simulation on the 16x16x16 torus had "
                       "used 173 CPU s and 1.9 GB unfinished, and 1,024-rank ones take 4-67 CPU s, x about 8 "
                       "placements x 5 networks x 2 allocations: hours on this shared 2-core machine); "
                       "--sizes 4096 runs it")
    if not HAVE_DMODK:
        skipped.append("dmodk routing (platform and mapping) on trees: not in libtopomap.routing.ROUTING_MODELS on "
                       "this branch (branch fabricroute adds it); trees use the platform's `table` routing "
                       "(lowest-index next hop)")
    if any(s > 256 for s in sizes):
        skipped.append("fabric avakas at 1,024: the fabric has 281 hosts")
    peers, why = _peers()
    if peers is None:
        skipped.append(f"KaHIP/SharedMap: {why}")
    tmp = tempfile.mkdtemp(prefix="ltm-bench-smpi-")
    proxies = os.path.join(tmp, "proxies")
    exe = build(["halo", "cg"], outdir=proxies)
    ctx = {"tmp": tmp, "proxies": proxies, "exe": exe, "dtypes": datatype_sizes(proxies), "graphs": {},
           "peers": peers, "peers_why": why, "timeout": a.timeout}

    def log(s):
        print(s, file=sys.stderr, flush=True)

    rows = []
    try:
        for size in sizes:
            budget = a.budget if a.budget is not None else max(2.0, 2.0 * size / 256)
            for label, family, make, routing in networks(size):
                if a.networks and not any(s in label for s in a.networks.split(",")):
                    continue
                topo = make()
                for alloc_kind in a.allocs.split(","):
                    use = apps if size <= 256 else big_apps
                    rows += run_instance(ctx, label, family, topo, routing, size, alloc_kind, use, budget, log)
                    with open(a.out + ".partial.json", "w") as f:   # what is done so far, if the run is cut
                        json.dump(rows, f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pool = pooled(rows)
    fams = sorted({r.get("family") for r in rows if r.get("family")})
    by_family = {f: pooled([r for r in rows if r.get("family") == f]) for f in fams}
    try:
        import simgrid

        sgv = getattr(simgrid, "simgrid_version", None) or "3.32"
    except Exception:  # noqa: BLE001
        sgv = "3.32"
    meta = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/bench_smpi.py "
            + " ".join(argv if argv is not None else sys.argv[1:]),
            "simgrid": sgv, "machine": f"{_platform.node()} {os.cpu_count()} CPUs (shared)",
            "load_start": load_start, "load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "wall_s": time.perf_counter() - t_start, "cpu_s": sum(os.times()[:4]) - cpu_start,
            "skipped": skipped, "pool_by_family": by_family,
            "dmodk": HAVE_DMODK}
    md = markdown(rows, pool, meta)
    print(md)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".md", "w") as f:
        f.write(md)
    with open(a.out + ".json", "w") as f:
        json.dump({"meta": meta, "pooled": pool, "rows": rows}, f, indent=1)
    if os.path.exists(a.out + ".partial.json"):
        os.unlink(a.out + ".partial.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
