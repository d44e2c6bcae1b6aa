"""Task mapping in rectangular twisted tori (Camarero et al.): the model against link loads.

For RT(a) and RTT(a) (default ``a = 4``: 32 nodes) and each mapping of sections 3.3-3.4 (identity and
diagonal shift of a ``2a x a`` process torus; with ``c = 2`` the vertical union, the diagonal shift
after it and the twisted union of a ``2a x 2a`` torus) the benchmark computes the library's ECMP link
loads (:func:`libtopomap.link_traffic`) of

* local traffic: every process sends one unit, a quarter to each of its 4 logical neighbours;
* global traffic: every node sends one unit spread evenly over the N nodes, itself included;

per unit of traffic injected by each network node.  Loads are linear in alpha, the proportion of
local traffic, so the two are computed once and combined.  For every alpha the table prints

* the paper's closed forms (:func:`libtopomap.mappers.twisted_mappings.model`, Table 1's rounded
  average distances): latency ``tau = alpha d + (1 - alpha) kbar`` and ``max_th = (2/N) min_j |E_j|
  / tau_j`` (phits per node and cycle, one phit per link direction and cycle);
* the measured ones: ``tau`` from the measured dilation and exact average distance, and the
  maximum throughput ``1 / (largest arc load)``.

It also checks the link classes |E_hi|, |E_vi|, |E_hp|, |E_vp| against the arcs of the generated
networks, the alpha where RT and RTT (identity) cross (model: a/(a+3)), Table 1's per-dimension
average distances against the measured uniform loads, and the average/max dilation of every
mapping, c = 4 included (16 x 8 tasks on RT(4)/RTT(4)).

Usage::

    python benchmarks/bench_twisted.py [--a 4] [--out benchmarks/results/twisted.json]

Prints a Markdown table and writes it next to the JSON (``.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np

from libtopomap import CommGraph, average_dilation, link_traffic, max_dilation, properties, rt, rtt, stencil
from libtopomap.mappers import map_processes
from libtopomap.mappers.twisted_mappings import MODEL_CASES, arc_classes, link_classes, logical_grid, model, table1

ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
EXTRA = [("rt", "identity", "v+h"), ("rtt", "identity", "v+h"), ("rtt", "identity", "t+h"), ("rt", "identity", "t+h")]
NAMES = {None: "", "v": "f2v", "t": "f2t", "v+h": "f2v.f2h", "t+h": "f2t.f2h"}


def case_name(kind, mapping, conc):
    f = {"identity": "id", "diagonal-shift": "fd"}[mapping]
    return f"{kind.upper()} {f}" + (f" o {NAMES[conc]}" if conc else "")


def uniform_loads(t):
    """Arc loads of uniform traffic, one unit per node spread over all N nodes (self included)."""
    n = t.n_vertices
    s, d = np.divmod(np.arange(n * n), n)
    keep = s != d
    g = CommGraph(n, s[keep], d[keep], np.full(int(keep.sum()), 1.0 / n))
    return link_traffic(t, g, np.arange(n)), properties(t)["aspl"] * (n - 1) / n


def local_case(kind, a, mapping, conc):
    t = rt(a) if kind == "rt" else rtt(a)
    M, N = logical_grid(a, conc)
    c = M * N // (2 * a * a)
    g = stencil(f"{N}x{M}")
    m = map_processes(t, g, strategy=mapping, concentration=conc, slots=np.full(2 * a * a, c))
    gl = CommGraph(g.n, g.src, g.indices, g.weights / (4 * c))  # one unit per node and cycle
    return t, g, m, link_traffic(t, gl, m), c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", type=int, default=4)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "twisted.json"))
    args = ap.parse_args(argv)
    a = args.a
    N = 2 * a * a
    sizes = link_classes(a)
    topo = {"rt": rt(a), "rtt": rtt(a)}
    classes = {k: arc_classes(t) for k, t in topo.items()}
    uni = {k: uniform_loads(t) for k, t in topo.items()}
    out = {"a": a, "link_classes": {}, "table1": {}, "cases": [], "dilation": []}

    lines = [f"## Seed 004 on RT({a}) / RTT({a}), N = {N}", "", "### Link classes", "",
             "| class | paper | RT arcs / 2 | RTT arcs / 2 |", "|---|---:|---:|---:|"]
    for j, e in sizes.items():
        got = {k: int((classes[k] == j).sum()) // 2 for k in topo}
        out["link_classes"][j] = {"paper": e, **got}
        lines.append(f"| E_{j} | {e} | {got['rt']} | {got['rtt']} |")

    lines += ["", "### Table 1 (average over all N destinations, self included)", "",
              "| topology | k paper / lib | kbar paper / lib | kbar_x paper / lib | kbar_y paper / lib |",
              "|---|---|---|---|---|"]
    for k, t in topo.items():
        load, kbar = uni[k]
        cls = classes[k]
        # every node injects one unit spread over N destinations: hops on a dimension's links / N
        kx = load[(cls == "hi") | (cls == "hp")].sum() / N
        ky = load[(cls == "vi") | (cls == "vp")].sum() / N
        p = properties(t)
        t1 = table1(a, k)
        row = {"k": (t1["k"], p["diameter"]), "kbar": (t1["kbar"], kbar), "kbar_x": (t1["kbar_x"], kx),
               "kbar_y": (t1["kbar_y"], ky)}
        out["table1"][k] = row
        lines.append(f"| {k.upper()}({a}) | " + " | ".join(f"{v[0]:.4g} / {v[1]:.4f}" for v in row.values()) + " |")

    lines += ["", "### Latency tau and maximum throughput (phits/node/cycle): paper model / library", "",
              "| case | section | d | " + " | ".join(f"alpha={x:g}: tau | th" for x in ALPHAS) + " |",
              "|---|---|---:|" + "---|---|" * len(ALPHAS)]
    measured_th = {}
    for (kind, mapping, conc), sec in MODEL_CASES.items():
        t, g, m, loc, c = local_case(kind, a, mapping, conc)
        d = average_dilation(t, g, m)
        gload, kbar = uni[kind]
        mod = model(a, kind, mapping, conc, np.array(ALPHAS))
        rows = []
        for i, al in enumerate(ALPHAS):
            th = 1.0 / (al * loc + (1 - al) * gload).max()
            rows.append({"alpha": al, "tau_model": float(mod["tau"][i]), "tau": al * d + (1 - al) * kbar,
                         "th_model": float(mod["max_th"][i]), "th": th})
        measured_th[(kind, mapping, conc)] = (loc, gload)
        out["cases"].append({"case": case_name(kind, mapping, conc), "section": sec, "c": c,
                             "d_model": mod["d"], "d": d, "rows": rows})
        lines.append(f"| {case_name(kind, mapping, conc)} | {sec} | {mod['d']:.4g} / {d:.4g} | " + " | ".join(
            f"{r['tau_model']:.3f} / {r['tau']:.3f} | {r['th_model']:.3f} / {r['th']:.3f}" for r in rows) + " |")

    # RT and RTT (identity) cross where their maximum throughputs are equal
    def th(key, al):
        loc, gl = measured_th[key]
        return 1.0 / (al * loc + (1 - al) * gl).max()

    lo, hi = 0.0, 1.0
    f = lambda al: th(("rt", "identity", None), al) - th(("rtt", "identity", None), al)  # noqa: E731
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) * f(lo) > 0 else (lo, mid)
    cross = (lo + hi) / 2
    out["crossing"] = {"model": a / (a + 3), "library": cross}
    out["alpha0"] = {"rt": th(("rt", "identity", None), 0.0), "rtt": th(("rtt", "identity", None), 0.0),
                     "rt_model": float(model(a, "rt", "identity", None, 0.0)["max_th"]),
                     "rtt_model": float(model(a, "rtt", "identity", None, 0.0)["max_th"])}
    a0 = out["alpha0"]
    lines += ["", f"alpha = 0 (uniform traffic): RT {a0['rt']:.3f} measured vs {a0['rt_model']:.3f} "
              f"model; RTT {a0['rtt']:.3f} measured vs {a0['rtt_model']:.3f} from the rounded "
              f"kbar = 2a/3 (exact kbar = (4a^2 - 1)/(6a) gives {4 * 6 * a / (4 * a * a - 1):.3f}).",
              f"RT and RTT (identity) cross at alpha = {cross:.4f} measured, {a / (a + 3):.4f} = a/(a+3) in the model."]

    lines += ["", "### Dilation of every mapping (average / max)", "", "| case | c | grid | average | max |",
              "|---|---:|---|---:|---:|"]
    for kind, mapping, conc in list(MODEL_CASES) + EXTRA:
        t, g, m, _, c = local_case(kind, a, mapping, conc)
        M, Nn = logical_grid(a, conc)
        avg, mx = average_dilation(t, g, m), max_dilation(t, g, m)
        out["dilation"].append({"case": case_name(kind, mapping, conc), "c": c, "grid": [M, Nn],
                                "average": avg, "max": mx})
        lines.append(f"| {case_name(kind, mapping, conc)} | {c} | {M}x{Nn} | {avg:.4f} | {mx} |")
    md = "\n".join(lines) + "\n"
    print(md)
    out["machine"] = {"python": sys.version.split()[0], "platform": platform.platform()}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as fh:
        fh.write(md)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
