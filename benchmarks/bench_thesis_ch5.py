"""Cui 2024 (PhD thesis), chapter 5: circulant vs random shortcut vs dragonfly, beside the library.

Sections (one compute node per switch, degree ``2 log2 N - 1`` everywhere):

1. **Diameter and ASPL** (section 5.1, Figures 5.1-5.2) for N = 16 .. 8,192: circulant
   ``G(N, log2 N)``, random shortcut ring, dragonfly.  The thesis' circulant diameters are
   2, 3, 3, 4, 4, 5, 5, 6, 6, 7; the dragonfly's is "always 3", the random shortcut's "4 at 8,192".
   The thesis does not give the dragonfly's parameters except through its degree; the benchmark
   takes the largest group size ``a`` (a power of two) with ``h = d - a + 1 >= 1`` global links per
   router and every pair of groups linked (``g - 1 <= a h``), which is ``dragonfly(64, 16, 0, 4)`` at
   1,024.  ASPL over distinct pairs.
2. **Collective hops at N = 1,024** (section 5.2.1, Figures 5.3-5.5): binomial Bcast, recursive-
   doubling Allreduce, Bruck Alltoall over all 1,024 nodes under ring-consecutive (ascending)
   order, random order, and random + two-opt (200,000 iterations).  Reference, ring order,
   measured with the library when the issue was written: circulant 1,023 / 10,240 / 10,240,
   dragonfly 1,093 / 19,968 / 21,888, random shortcut 1,709 / 25,136 / 25,197.  The thesis gives
   percentages: circulant 9% / 40% fewer Bcast hops than dragonfly / random, 48% / 59% for
   Allreduce, 52% / 59% for Alltoall.
3. **Average point-to-point hops** (section 5.3.1, Figure 5.12): uniform random traffic among the
   ``m`` mapped nodes of a 1,024-switch network, computed exactly (mean over all ordered pairs of
   distinct mapped nodes, not 100,000 samples); thesis: the circulant is below the random shortcut
   for ``m <= 128`` with circulant and ring mapping.
4. **Total hops vs collective ratio** (section 5.4, Figure 5.14): ``mn + p = 102,400`` messages, ``m``
   per Alltoall (``N log2 N``), ``n`` Alltoalls, ``p`` random point-to-point messages; ratio
   ``mn / (mn + p)`` from 10% to 90%.  Total = ``n x Alltoall hops + p x mean point-to-point hops``.
   Best mapping per network (circulant: circulant or ring mapping; random shortcut: random, tree or
   ring allocation with two-opt).  Thesis: circulant wins for ``N <= 128``; at ``N = 1,024`` above
   a 50% ratio.
5. **Cable length** (section 5.6, Figure 5.19): :func:`~libtopomap.generators.shortcut.cable_lengths`,
   8 switches per 0.6 m x 2.1 m cabinet; thesis: circulant 46% shorter at 1,024 switches.
6. **CCO rank order** (section 3.4.4, Figure 3.10's competitor): Bcast hops on a 1,024-node random
   shortcut ring, 512 processes, random / tree / ring allocation, ascending vs CCO
   (:func:`~libtopomap.collectives.multicast.cco_order`) vs two-opt; thesis Table 3.4 gives
   ascending and two-opt.
7. **Figure 3.10** (SimGrid Bcast, same setup, 256 B and 1 MB, ten repetitions) with
   :func:`libtopomap.simulate.simulate_many`, only when SimGrid imports (else the output says so;
   ``--no-simgrid`` skips it).

Usage::

    python benchmarks/bench_thesis_ch5.py [--seeds 3] [--max-n 8192] [--iterations 200000] [--no-simgrid]
                                          [--out benchmarks/results/thesis_ch5.json]

Timings are wall-clock, single process, noisy (a shared 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time

import numpy as np

from libtopomap.collectives import allocate, optimize_ranks, schedule, total_hops
from libtopomap.collectives.multicast import cco_order
from libtopomap.generators.circulant import circulant
from libtopomap.generators.dragonfly import dragonfly
from libtopomap.generators.ldr import distance_total
from libtopomap.generators.shortcut import cable_lengths, random_shortcut_ring

CIRCULANT_DIAMETERS = {16: 2, 32: 3, 64: 3, 128: 4, 256: 4, 512: 5, 1024: 5, 2048: 6, 4096: 6, 8192: 7}
REFERENCE_1024 = {"circulant": (1023, 10240, 10240), "dragonfly": (1093, 19968, 21888),
                  "random shortcut": (1709, 25136, 25197)}
THESIS_PERCENT = {"bcast": (9, 40), "allreduce": (48, 59), "alltoall": (52, 59)}  # less than (dragonfly, random)
TABLE_34_BCAST = {"random": (1373, 794), "tree": (1080, 769), "ring": (850, 741)}  # Cui Table 3.4
COLLS = ("bcast", "allreduce", "alltoall")
TOTAL = 102_400


def dragonfly_params(n):
    """``(g, a, p, h)`` for ``n`` routers of degree ``2 log2 n - 1``: the largest power-of-two ``a``
    with ``h = d - a + 1 >= 1`` and ``g - 1 <= a h``."""
    d = 2 * int(math.log2(n)) - 1
    best = None
    a = 1
    while a <= n:
        h = d - a + 1
        g = n // a
        if h >= 1 and n % a == 0 and g - 1 <= a * h:
            best = (g, a, 0, h)
        a *= 2
    return best


def networks(n, seed):
    d = 2 * int(math.log2(n)) - 1
    out = {"circulant": circulant(n), "random shortcut": random_shortcut_ring(n, d, seed=seed)}
    prm = dragonfly_params(n)
    if prm is not None:
        out["dragonfly"] = dragonfly(*prm)
    return out


def edges(t):
    return np.stack([t.link_u, t.link_v], 1).astype(np.int64)


def section1(sizes, seeds):
    rows = []
    for n in sizes:
        for s in seeds:
            nets = networks(n, s)
            for name, t in nets.items():
                if name != "random shortcut" and s != seeds[0]:
                    continue
                total, diam = distance_total(t.n_vertices, edges(t))
                rows.append(dict(n=n, network=name, seed=s if name == "random shortcut" else None,
                                 params=dragonfly_params(n) if name == "dragonfly" else None,
                                 degree=int(t.degree.max()),
                                 diameter=diam, aspl=total / (n * (n - 1)),
                                 thesis_diameter={"circulant": CIRCULANT_DIAMETERS.get(n), "dragonfly": 3}.get(name)))
    return rows


def section2(seed, iterations):
    rows = []
    for name, t in networks(1024, seed).items():
        hosts = t.hosts.astype(np.int64)
        rnd = allocate(t, 1024, "random", seed=seed)
        for label, nodes, opt in (("ring", hosts, False), ("random", rnd, False), ("random + two-opt", rnd, True),
                                  ("ring + two-opt", hosts, True)):
            row = dict(network=name, mapping=label)
            for c in COLLS:
                steps = schedule(c, 1024)
                v = nodes
                if opt:
                    res = optimize_ranks(t, nodes, steps, optimizer="two-opt", iterations=iterations, seed=seed)
                    v = nodes[res.permutation]
                row[c] = total_hops(t, steps, v)
            rows.append(row)
    return rows


def mean_p2p(t, nodes):
    """Exact mean hops over ordered pairs of distinct nodes (uniform random traffic)."""
    v = np.asarray(nodes, dtype=np.int64)
    m = v.size
    total = 0
    for lo in range(0, m, 128):
        a = np.repeat(v[lo:lo + 128], m)
        b = np.tile(v, min(128, m - lo))
        total += int(t.distances.pairs(a, b).sum())
    return total / (m * (m - 1))


def mappings(name, t, m, seed):
    """(label, nodes) of the thesis' mappings for ``m`` of the 1,024 nodes."""
    out = [("ring", allocate(t, m, "ring", seed=seed)), ("random", allocate(t, m, "random", seed=seed))]
    if name == "circulant":
        out.append(("circulant", allocate(t, m, "circulant", seed=seed)))
    else:
        out.append(("tree", allocate(t, m, "tree", seed=seed)))
    return out


def section34(seed, iterations, sizes):
    nets = networks(1024, seed)
    del nets["dragonfly"]
    p2p, mix = [], []
    for m in sizes:
        best = {}
        for name, t in nets.items():
            for label, nodes in mappings(name, t, m, seed):
                avg = mean_p2p(t, nodes)
                steps = schedule("alltoall", m)
                if name == "circulant":
                    a2a = total_hops(t, steps, nodes)
                else:
                    res = optimize_ranks(t, nodes, steps, optimizer="two-opt", iterations=iterations, seed=seed)
                    a2a = total_hops(t, steps, nodes[res.permutation])
                msgs = sum(len(s) for s in steps)
                p2p.append(dict(m=m, network=name, mapping=label, mean_hops=avg, alltoall_hops=a2a, messages=msgs))
                per_msg = a2a / msgs
                curve = [r * TOTAL * per_msg + (1 - r) * TOTAL * avg for r in np.arange(1, 10) / 10]
                if name not in best or curve[4] < best[name][1][4]:
                    best[name] = (label, curve, per_msg, avg)
        (cl, cc, cpm, cavg), (rl, rc, rpm, ravg) = best["circulant"], best["random shortcut"]
        # crossover of the two straight lines: r (cpm - cavg) + cavg = r (rpm - ravg) + ravg
        den = (cpm - cavg) - (rpm - ravg)
        cross = (ravg - cavg) / den if den else float("nan")
        mix.append(dict(m=m, circulant_mapping=cl, shortcut_mapping=rl, circulant=cc, shortcut=rc,
                        circulant_wins=[bool(a < b) for a, b in zip(cc, rc)], crossover_ratio=cross))
    return p2p, mix


def section5(sizes, seed):
    rows = []
    for n in sizes:
        nets = networks(n, seed)
        c = float(cable_lengths(nets["circulant"]).mean())
        r = float(cable_lengths(nets["random shortcut"]).mean())
        rows.append(dict(n=n, circulant=c, shortcut=r, reduction=1 - c / r))
    return rows


def section6(seeds, iterations):
    rows = []
    for s in seeds:
        t = random_shortcut_ring(1024, 19, seed=s)
        steps = schedule("bcast", 512)
        for alloc in ("random", "tree", "ring"):
            nodes = allocate(t, 512, alloc, seed=s)
            asc = total_hops(t, steps, nodes)
            cco = total_hops(t, steps, nodes[cco_order(t, nodes)])
            res = optimize_ranks(t, nodes, steps, optimizer="two-opt", iterations=iterations, seed=s)
            two = total_hops(t, steps, nodes[res.permutation])
            rows.append(dict(seed=s, allocation=alloc, ascending=asc, cco=cco, two_opt=two))
    return rows


def section7(seed, iterations, sizes=(256, 1 << 20)):
    """Figure 3.10 with SimGrid: Bcast, 1,024-node random shortcut, 512 processes, ten repetitions."""
    from libtopomap.simulate import simulate_many

    t = random_shortcut_ring(1024, 19, seed=seed)
    steps = schedule("bcast", 512)
    rows = []
    for alloc in ("random", "tree", "ring"):
        nodes = allocate(t, 512, alloc, seed=seed)
        res = optimize_ranks(t, nodes, steps, optimizer="two-opt", iterations=iterations, seed=seed)
        orders = {"ascending": nodes, "CCO": nodes[cco_order(t, nodes)], "two-opt": nodes[res.permutation]}
        sims = simulate_many(t, "bcast", list(orders.values()), sizes=list(sizes), repeat=10, jobs=2)
        for (label, v), r in zip(orders.items(), sims):
            rows.append(dict(allocation=alloc, order=label, hops=total_hops(t, steps, v),
                             sizes=list(sizes), seconds=list(r.times)))
    return rows


def markdown(r1, r2, p2p, mix, r5, r6, simgrid, r7=()):
    L = ["## 5.1 Diameter and ASPL (distinct pairs; random shortcut: mean over seeds)", "",
         "| N | network | degree | diameter | thesis | ASPL |", "|---:|---|---:|---:|---:|---:|"]
    keys = sorted({(r["n"], r["network"]) for r in r1}, key=lambda k: (k[0], k[1]))
    for n, name in keys:
        rs = [r for r in r1 if r["n"] == n and r["network"] == name]
        diam = sorted({r["diameter"] for r in rs})
        th = rs[0]["thesis_diameter"]
        label = name + (f" {rs[0]['params']}" if name == "dragonfly" else "")
        L.append(f"| {n} | {label} | {rs[0]['degree']} | {'/'.join(map(str, diam))} | {th if th else ''} "
                 f"| {np.mean([r['aspl'] for r in rs]):.3f} |")
    L += ["", "## 5.2.1 Collective hops, N = 1,024, all nodes", "",
          "| network | mapping | Bcast | Allreduce | Alltoall | reference (ring) |", "|---|---|---:|---:|---:|---|"]
    for r in r2:
        ref = "/".join(f"{x:,}" for x in REFERENCE_1024[r["network"]]) if r["mapping"] == "ring" else ""
        L.append(f"| {r['network']} | {r['mapping']} | {r['bcast']:,} | {r['allreduce']:,} | {r['alltoall']:,} "
                 f"| {ref} |")
    ring = {r["network"]: r for r in r2 if r["mapping"] == "ring"}
    L += ["", "Circulant's hops below dragonfly / random shortcut, ring order (thesis in brackets):", ""]
    for c in COLLS:
        a = 1 - ring["circulant"][c] / ring["dragonfly"][c]
        b = 1 - ring["circulant"][c] / ring["random shortcut"][c]
        L.append(f"- {c}: {a:.0%} [{THESIS_PERCENT[c][0]}%] / {b:.0%} [{THESIS_PERCENT[c][1]}%]")
    L += ["", "## 5.3.1 Mean point-to-point hops, uniform random traffic among m mapped nodes (1,024 switches)", "",
          "| m | " + " | ".join(f"{n} {lab}" for n, lab in _p2p_cols(p2p)) + " |",
          "|---:|" + "---:|" * len(_p2p_cols(p2p))]
    for m in sorted({r["m"] for r in p2p}):
        vals = {(r["network"], r["mapping"]): r["mean_hops"] for r in p2p if r["m"] == m}
        L.append(f"| {m} | " + " | ".join(f"{vals[k]:.2f}" for k in _p2p_cols(p2p)) + " |")
    L += ["", "## 5.4 Total hops (thousands) vs collective ratio, mn + p = 102,400 (best mapping per network)", "",
          "| m | circulant (mapping) / random shortcut (mapping) at 10% .. 90% | circulant wins at | crossover |",
          "|---:|---|---|---:|"]
    for r in mix:
        pairs = " ; ".join(f"{a / 1e3:.0f}/{b / 1e3:.0f}" for a, b in zip(r["circulant"], r["shortcut"]))
        wins = ",".join(f"{10 * (i + 1)}%" for i, w in enumerate(r["circulant_wins"]) if w) or "none"
        x = r["crossover_ratio"]
        cross = f"{x:.2f}" if 0 <= x <= 1 else "none in 0..1"
        L.append(f"| {r['m']} | ({r['circulant_mapping']} / {r['shortcut_mapping']}) {pairs} | {wins} | {cross} |")
    L += ["", "## 5.6 Average cable length (m), 8 switches per 0.6 m x 2.1 m cabinet", "",
          "| switches | circulant | random shortcut | circulant shorter by | thesis |", "|---:|---:|---:|---:|---|"]
    for r in r5:
        L.append(f"| {r['n']} | {r['circulant']:.2f} | {r['shortcut']:.2f} | {r['reduction']:.1%} "
                 f"| {'46%' if r['n'] == 1024 else ''} |")
    L += ["", "## CCO rank order (Bcast, random shortcut 1,024 nodes degree 19, 512 processes; mean over seeds)", "",
          "| allocation | ascending | CCO | two-opt | thesis Table 3.4 (ascending -> two-opt) |",
          "|---|---:|---:|---:|---|"]
    for alloc in ("random", "tree", "ring"):
        rs = [r for r in r6 if r["allocation"] == alloc]
        a, c, t = (np.mean([r[k] for r in rs]) for k in ("ascending", "cco", "two_opt"))
        th = TABLE_34_BCAST[alloc]
        L.append(f"| {alloc} | {a:.0f} | {c:.0f} | {t:.0f} | {th[0]:,} -> {th[1]:,} |")
    L += ["", f"SimGrid Bcast experiment of Figure 3.10: {simgrid}"]
    if r7:
        sizes = r7[0]["sizes"]
        L += ["", "| allocation | order | hops | " + " | ".join(f"{s} B, 10 Bcasts (us)" for s in sizes) + " |",
              "|---|---|---:|" + "---:|" * len(sizes)]
        for r in r7:
            L.append(f"| {r['allocation']} | {r['order']} | {r['hops']} | "
                     + " | ".join(f"{x * 1e6:.1f}" for x in r["seconds"]) + " |")
        L += ["", "Thesis (Figure 3.10, read off the plot): two-opt with random mapping usually best; CCO "
              "usually behind two-opt."]
    return "\n".join(L)


def _p2p_cols(p2p):
    seen = []
    for r in p2p:
        k = (r["network"], r["mapping"])
        if k not in seen:
            seen.append(k)
    return seen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="random shortcut networks per size (default 3)")
    ap.add_argument("--max-n", type=int, default=8192)
    ap.add_argument("--iterations", type=int, default=200_000, help="two-opt iterations (default 200,000)")
    ap.add_argument("--no-simgrid", action="store_true", help="skip the SimGrid Bcast of Figure 3.10")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "thesis_ch5.json"))
    args = ap.parse_args(argv)
    seeds = list(range(args.seeds))
    sizes = [n for n in CIRCULANT_DIAMETERS if n <= args.max_n]
    from libtopomap.simulate import simgrid_version

    version = simgrid_version()
    have_simgrid = version is not None
    simgrid_note = (f"SimGrid {version}" + " (CM02 model, 100 Gbps, 100 ns per hop; seed 0)" if have_simgrid else
                    "not run: `import simgrid` fails in this environment (see libtopomap.simulate.INSTALL_HINT)")
    tic = time.perf_counter()
    timings = {}
    t0 = time.perf_counter()
    r1 = section1(sizes, seeds)
    timings["5.1"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    r2 = section2(seeds[0], args.iterations)
    timings["5.2.1"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    p2p, mix = section34(seeds[0], args.iterations, [8, 16, 32, 64, 128, 256, 512, 1024])
    timings["5.3-5.4"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    r5 = section5([n for n in (64, 256, 1024, 4096) if n <= args.max_n], seeds[0])
    timings["5.6"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    r6 = section6(seeds, args.iterations)
    timings["cco"] = time.perf_counter() - t0
    r7 = []
    if have_simgrid and not args.no_simgrid:
        t0 = time.perf_counter()
        r7 = section7(seeds[0], args.iterations)
        timings["fig 3.10 simgrid"] = time.perf_counter() - t0
    elif have_simgrid:
        simgrid_note = "skipped (--no-simgrid)"
    text = markdown(r1, r2, p2p, mix, r5, r6, simgrid_note, r7)
    total = time.perf_counter() - tic
    text += ("\n\nSeconds per section (wall clock, one process, noisy): "
             + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()) + f"; {total:.1f} in all.")
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"diameter_aspl": r1, "collectives_1024": r2, "p2p": p2p, "ratio": mix, "cable": r5, "cco": r6,
                   "simgrid_bcast": r7, "simgrid": simgrid_note, "seeds": seeds, "iterations": args.iterations,
                   "python": sys.version.split()[0], "machine": platform.machine(), "seconds": timings},
                  f, indent=1, default=float)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
