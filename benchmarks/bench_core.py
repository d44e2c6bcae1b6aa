"""Core benchmark: host distance data of a 32x32x32 torus; ECMP and Algorithm 3 congestion of a 3-D
7-point stencil on a 16x16x16 torus.

Usage::

    python benchmarks/bench_core.py [--side 32] [--stencil 16] [--baseline] [--out benchmarks/results/core.json]

Prints a Markdown table and writes the numbers as JSON.  Numba compile time is measured on a tiny
instance first and reported separately, so the timed runs use compiled (or cached) kernels.
``--baseline`` also times the previous implementation of ``host_distances`` (batched
``scipy.sparse.csgraph.shortest_path``, float64 rows converted to uint8) on the same torus.
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
from scipy.sparse import csgraph

import libtopomap
from libtopomap import CommGraph, Mapping, congestion, congestion_estimate, torus


def stencil_7pt(side):
    """Periodic 3-D 7-point stencil on side^3 processes: each process sends 1 unit to its 6 neighbours."""
    n = side ** 3
    idx = np.arange(n).reshape(side, side, side)
    src, dst = [], []
    for axis in range(3):
        for shift in (1, -1):
            src.append(idx.ravel())
            dst.append(np.roll(idx, shift, axis=axis).ravel())
    return CommGraph(n, np.concatenate(src), np.concatenate(dst))


def scipy_host_distances(topo, batch=1024):
    """The previous implementation: batched csgraph BFS with float64 rows, then uint8."""
    hosts = topo.hosts
    out = np.empty((hosts.size, hosts.size), dtype=np.uint8)
    for lo in range(0, hosts.size, batch):
        d = csgraph.shortest_path(topo.adjacency, method="D", unweighted=True, indices=hosts[lo:lo + batch])
        out[lo:lo + d.shape[0]] = d[:, hosts]
    return out


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
    ap.add_argument("--side", type=int, default=32, help="torus side for the host distance build (default 32)")
    ap.add_argument("--stencil", type=int, default=16, help="torus/stencil side for congestion (default 16)")
    ap.add_argument("--baseline", action="store_true", help="also time the scipy csgraph implementation")
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
    _ = tiny.host_distances
    congestion(tiny, g_tiny, np.arange(27))
    congestion_estimate(tiny, g_tiny, np.arange(27))
    res["compile_s"] = time.perf_counter() - t0
    rows.append(("numba compile / cache load (all kernels, 3x3x3)", f"{res['compile_s']:.2f} s", ""))

    # --- host distances of a side^3 torus
    side = args.side
    rss0 = maxrss_mib()
    topo, t_build, _ = timed(torus, (side, side, side))
    d, t_dist, peak = timed(lambda: topo.host_distances, trace=True)
    cpu_dist = timed.cpu
    rss1 = maxrss_mib()
    res["host_distances"] = {"torus": f"{side}x{side}x{side}", "hosts": int(topo.hosts.size),
                             "build_topology_s": t_build, "host_distances_s": t_dist,
                             "host_distances_cpu_s": cpu_dist,
                             "matrix_dtype": str(d.dtype), "matrix_mib": d.nbytes / 2 ** 20,
                             "tracemalloc_peak_mib": peak, "maxrss_mib": rss1, "maxrss_growth_mib": rss1 - rss0,
                             "diameter": int(d.max())}
    rows.append((f"build {side}^3 torus (Topology)", f"{t_build:.2f} s", f"{topo.n_vertices} vertices, {topo.n_links} links"))
    rows.append((f"host_distances {side}^3 ({d.dtype}, compiled BFS)", f"{t_dist:.2f} s (CPU {cpu_dist:.1f} s)",
                 f"matrix {d.nbytes / 2 ** 20:.0f} MiB, traced peak {peak:.0f} MiB, maxrss {rss1:.0f} MiB"))
    if args.baseline:
        del d
        ref, t_ref, peak_ref = timed(scipy_host_distances, topo, trace=True)
        assert np.array_equal(ref, topo.host_distances)
        res["host_distances"]["scipy_baseline_s"] = t_ref
        res["host_distances"]["scipy_baseline_cpu_s"] = timed.cpu
        res["host_distances"]["scipy_baseline_tracemalloc_peak_mib"] = peak_ref
        rows.append((f"host_distances {side}^3, previous scipy csgraph version", f"{t_ref:.2f} s (CPU {timed.cpu:.1f} s)",
                     f"traced peak {peak_ref:.0f} MiB"))
        del ref
    del topo

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

    print(f"| measurement | time | notes |\n|---|---|---|")
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
