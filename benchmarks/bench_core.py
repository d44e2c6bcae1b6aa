"""Core benchmark: hop distances of a 32x32x32 torus (distance oracle vs the former dense matrix); ECMP
and Algorithm 3 congestion of a 3-D 7-point stencil on a 16x16x16 torus.

Usage::

    python benchmarks/bench_core.py [--side 32] [--stencil 16] [--baseline] [--out benchmarks/results/core.json]

Prints a Markdown table and writes the numbers as JSON.  Numba compile time is measured on a tiny
instance first and reported separately, so the timed runs use compiled (or cached) kernels.
The distances part times ``topology.distances`` (closed form on a generated torus, and the bounded
table/search path on the same graph loaded without its generator attributes), hop-bytes of a random
mapping of the stencil and ``properties`` (diameter, ASPL).  ``--baseline`` also builds the former
dense ``H x H`` host distance matrix (compiled BFS per host, uint8) for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
import tracemalloc

import numpy as np

import libtopomap
from libtopomap import Mapping, congestion, congestion_estimate, torus


def stencil_7pt(side):
    """Periodic 3-D 7-point stencil on side^3 processes: each process sends 1 unit to its 6 neighbours."""
    return libtopomap.stencil(f"{side}x{side}x{side}")


def maxrss_mib():
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 1024 if sys.platform != "darwin" else r / 2 ** 20


def timed(fn, *args, trace=False):
    if trace:
        tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    val = fn(*args)
    dt = time.perf_counter() - t0
    timed.cpu = time.process_time() - c0  # CPU seconds of all threads: less sensitive to a busy machine
    peak = None
    if trace:
        peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
        tracemalloc.stop()
    return val, dt, peak


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--side", type=int, default=32, help="torus side for the distance measurements (default 32)")
    ap.add_argument("--stencil", type=int, default=16, help="torus/stencil side for congestion (default 16)")
    ap.add_argument("--baseline", action="store_true", help="also build the former dense host distance matrix")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "core.json"))
    args = ap.parse_args(argv)

    import numba

    rows = []
    res = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                       "load_average_at_start": os.getloadavg()[0],
                       "numba_threads": numba.get_num_threads(), "platform": platform.platform(),
                       "libtopomap": libtopomap.__version__}}

    # --- compile (or load cached) kernels on a tiny instance
    tiny = torus("3x3x3")
    g_tiny = stencil_7pt(3)
    t0 = time.perf_counter()
    _ = tiny.distances.pairs([0], [1])
    congestion(tiny, g_tiny, np.arange(27))
    congestion_estimate(tiny, g_tiny, np.arange(27))
    res["compile_s"] = time.perf_counter() - t0
    rows.append(("numba compile / cache load (all kernels, 3x3x3)", f"{res['compile_s']:.2f} s", ""))

    # --- hop distances of a side^3 torus: no H x H matrix
    side = args.side
    rss0 = maxrss_mib()
    topo, t_build, _ = timed(torus, (side, side, side))
    rows.append((f"build {side}^3 torus (Topology)", f"{t_build:.2f} s",
                 f"{topo.n_vertices} vertices, {topo.n_links} links"))
    g = stencil_7pt(side)
    vert = np.random.default_rng(0).permutation(g.n)
    res["distances"] = {"torus": f"{side}x{side}x{side}", "hosts": int(topo.hosts.size), "build_topology_s": t_build}
    plain = libtopomap.Topology(topo.names, np.stack([topo.link_u, topo.link_v], 1))  # no generator attributes
    for label, t in (("closed form", topo), ("search (no generator attributes)", plain)):
        oracle, t_o, peak_o = timed(lambda: t.distances, trace=True)
        hb, t_hb, _ = timed(libtopomap.hop_bytes, t, g, vert)
        props, t_p, _ = timed(libtopomap.properties, t)
        res["distances"][label] = {"kind": oracle.kind, "oracle_s": t_o, "oracle_mib": oracle.nbytes / 2**20,
                                   "hop_bytes_random_s": t_hb, "hop_bytes_random": hb,
                                   "properties_s": t_p, "diameter": props["diameter"], "aspl": props["aspl"]}
        rows.append((f"distance oracle {side}^3, {label} ({oracle.kind})", f"{t_o:.2f} s",
                     f"{oracle.nbytes / 2**20:.1f} MiB held"))
        rows.append((f"hop-bytes of a random mapping, {g.n_edges} edges, {label}", f"{t_hb:.2f} s", f"{hb:.0f}"))
        rows.append((f"properties (diameter, ASPL), {label}", f"{t_p:.2f} s",
                     f"diameter {props['diameter']}, ASPL {props['aspl']:.4f}"))
    res["distances"]["maxrss_mib"] = maxrss_mib()
    res["distances"]["maxrss_growth_mib"] = maxrss_mib() - rss0
    if args.baseline:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            d, t_dist, peak = timed(lambda: libtopomap.torus((side, side, side)).host_distances, trace=True)
        res["distances"]["dense_baseline"] = {"s": t_dist, "matrix_mib": d.nbytes / 2**20, "traced_peak_mib": peak}
        rows.append((f"former dense host_distances {side}^3 ({d.dtype})", f"{t_dist:.2f} s",
                     f"matrix {d.nbytes / 2 ** 20:.0f} MiB"))
        del d
    del topo, plain

    # --- stencil congestion on a s^3 torus, identity and random mappings
    s = args.stencil
    topo = torus((s, s, s))
    g = stencil_7pt(s)
    res["stencil"] = {"torus": f"{s}x{s}x{s}", "processes": g.n, "edges": g.n_edges}
    rng = np.random.default_rng(0)
    for label, vert in (("identity", np.arange(g.n)), ("random", rng.permutation(g.n))):
        m = Mapping(topo, vert)
        c_ecmp, t_ecmp, _ = timed(congestion, topo, g, m)
        c_alg3, t_alg3, _ = timed(congestion_estimate, topo, g, m)
        res["stencil"][label] = {
            "ecmp_max_congestion": float(c_ecmp.max()), "ecmp_avg_congestion": float(c_ecmp.mean()),
            "ecmp_s": t_ecmp,
            "alg3_max_congestion": float(c_alg3.max()), "alg3_avg_congestion": float(c_alg3.mean()),
            "alg3_s": t_alg3,
        }
        rows.append((f"ECMP congestion, 7-pt stencil {s}^3, {label} mapping", f"{t_ecmp:.3f} s",
                     f"max {c_ecmp.max():.3f}, avg {c_ecmp.mean():.3f}"))
        rows.append((f"Alg. 3 congestion, 7-pt stencil {s}^3, {label} mapping", f"{t_alg3:.3f} s",
                     f"max {c_alg3.max():.3f}, avg {c_alg3.mean():.3f}"))

    print("| measurement | time | notes |\n|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} |")
    res["machine"]["load_average_at_end"] = os.getloadavg()[0]
    print(f"\n{res['machine']}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(res, fh, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
