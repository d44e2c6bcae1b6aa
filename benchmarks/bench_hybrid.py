"""Hybrid networks and multicast trees: Mehta 2005 (MS thesis), chapters 5 and 6, beside the library.

Part 1 (chapter 5) builds the thesis' hybrids -- 32/8 (Figure 5.1), 1024/64, 4096/256, 4096/1024
(Figures 5.2-5.4) and 256/16 (Figure 6.3) -- with hypercube and LDR components and prints the
structure the text states (components, fat trees) beside the library's, with the node diameter and
average internode distance (over distinct node pairs) under shortest-path routing, which
:func:`~libtopomap.generators.hybrid.hybrid_route` achieves (checked on a sample of pairs).  The
thesis' "1024/64, i.e. 16 such fat-trees" contradicts its rule of section 5.1 (one fat tree per
position of a component: 64); the table flags it.  The thesis gives no hop numbers for hybrids
(only simulated latencies), so the library's are printed alone.

Part 2 (chapter 6) compares multicast tree sizes on three networks of 256 nodes: the hypercube
(enclosing-subcube tree, section 6.1), an LDR graph of degree 8 (union of shortest paths, 6.2) and
the hybrids of 16-node components (6.3), for random groups (root in the group): mean tree links
and depth.  The thesis has no such numbers either; its claim is qualitative (LDR trees use fewer
links because of its lower distances, the hybrid's gain is small for 16-node components).

Usage::

    python benchmarks/bench_hybrid.py [--seed 1] [--groups 30] [--out benchmarks/results/hybrid.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from libtopomap import hybrid, hypercube, ldr
from libtopomap.collectives.multicast import hybrid_tree, hypercube_tree, ldr_tree
from libtopomap.generators.hybrid import hybrid_route

#: (T, D, where, fat trees as the thesis states them)
EXAMPLES = [(32, 8, "Fig. 5.1", 8), (1024, 64, "Fig. 5.2", 16), (4096, 256, "Fig. 5.3", None),
            (4096, 1024, "Fig. 5.4", None), (256, 16, "Fig. 6.3", None)]


def node_distances(t):
    """(diameter, ASPL over distinct node pairs) by breadth-first searches from every node, in chunks."""
    nodes = t.attrs["nodes"]
    total, diam = 0, 0
    for lo in range(0, nodes, 256):
        rows = t.hop_distances(np.arange(lo, min(nodes, lo + 256)))[:, :nodes].astype(np.int64)
        total += int(rows.sum())
        diam = max(diam, int(rows.max()))
    return diam, total / (nodes * (nodes - 1))


def part1(seed, rng):
    rows = []
    for nodes, d, where, stated in EXAMPLES:
        for comp in ("hypercube", "ldr"):
            tic = time.perf_counter()
            t = hybrid(nodes, d, component=comp, seed=seed)
            build = time.perf_counter() - tic
            diam, aspl = node_distances(t)
            pairs = rng.integers(0, nodes, size=(200, 2))
            ok = all(len(hybrid_route(t, a, b)) - 1 == t.distance(a, b) for a, b in pairs.tolist())
            a = t.attrs
            rows.append(dict(nodes=nodes, component_size=d, where=where, component=comp,
                             components=a["components"], fat_trees=a["fat_trees"],
                             fat_trees_thesis=stated if stated is not None else a["fat_trees"],
                             arity=a["arity"], levels=a["levels"], vertices=t.n_vertices, links=t.n_links,
                             diameter=diam, aspl=round(aspl, 4), routes_shortest=ok, build_s=round(build, 3)))
    return rows


def part2(seed, rng, n_groups):
    hc = hypercube(8)
    lg = ldr(256, 8, seed=seed)
    hh = hybrid(256, 16, component="hypercube")
    hl = hybrid(256, 16, component="ldr", seed=seed)
    nets = [("hypercube 256 (6.1)", lambda r, g: hypercube_tree(8, r, g)),
            ("hypercube 256, shortest paths", lambda r, g: ldr_tree(hc, r, g)),
            ("LDR 256 deg 8 (6.2)", lambda r, g: ldr_tree(lg, r, g)),
            ("hybrid 256/16 hypercube (6.3)", lambda r, g: hybrid_tree(hh, r, g)),
            ("hybrid 256/16 LDR (6.3)", lambda r, g: hybrid_tree(hl, r, g))]
    rows = []
    for size in (2, 4, 8, 16, 32, 64, 128, 256):
        groups = [rng.choice(256, size=size, replace=False) for _ in range(n_groups if size < 256 else 1)]
        for label, build in nets:
            links, depth = [], []
            for g in groups:
                tree = build(int(g[0]), g)
                links.append(tree.links)
                depth.append(tree.depth)
            rows.append(dict(group=size, network=label, links=float(np.mean(links)), depth=float(np.mean(depth))))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--groups", type=int, default=30, help="random groups per size (default 30)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "hybrid.json"))
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    tic = time.perf_counter()
    r1 = part1(args.seed, rng)
    r2 = part2(args.seed, rng, args.groups)
    lines = ["## Chapter 5: hybrids (node distances over distinct pairs, shortest-path routing)", "",
             "| T / D | where | component | components | fat trees (thesis / rule) | k-ary n-tree | vertices | links "
             "| diameter | ASPL | routes shortest |",
             "|---|---|---|---:|---|---|---:|---:|---:|---:|---|"]
    for r in r1:
        flag = "" if r["fat_trees_thesis"] == r["fat_trees"] else " **contradicts the rule**"
        lines.append(f"| {r['nodes']}/{r['component_size']} | {r['where']} | {r['component']} | {r['components']} "
                     f"| {r['fat_trees_thesis']} / {r['fat_trees']}{flag} | {r['arity']}-ary {r['levels']}-tree "
                     f"| {r['vertices']} | {r['links']} | {r['diameter']} | {r['aspl']:.4f} "
                     f"| {'yes' if r['routes_shortest'] else 'NO'} (200 pairs) |")
    lines += ["", "## Chapter 6: multicast tree size, 256 nodes (mean over random groups, root in the group)", "",
              "| group | network | tree links | depth (hops) |", "|---:|---|---:|---:|"]
    for r in r2:
        lines.append(f"| {r['group']} | {r['network']} | {r['links']:.1f} | {r['depth']:.2f} |")
    text = "\n".join(lines)
    print(text)
    total = time.perf_counter() - tic
    print(f"\n{total:.1f} s in all ({platform.processor() or platform.machine()}, one process; timings noisy)")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"chapter5": r1, "chapter6": r2, "seed": args.seed, "groups": args.groups,
                   "python": sys.version.split()[0], "seconds": round(total, 1)}, f, indent=1)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
