"""SMPI's two traces, what each costs: the time-independent trace (``-trace-ti``) and the Paje trace with the
collectives' messages (``tracing/smpi/internals``), for the halo and the pencil FFT proxy.

For each size (256 ranks on a 16x16 torus, 1,024 on a 32x32 torus, whole machine in vertex order) and program
(``halo 2 65536 10 1``: 2-D halo + one-double Allreduce per iteration; ``fft 64 2``: Alltoall in row and
column communicators), one untraced smpirun, one with each trace (:func:`libtopomap.smpi.run_once`), then
each trace read in a fresh Python process (wall and CPU seconds of the read after the imports, the reader's peak
RSS and its RSS after the imports): :func:`libtopomap.smpi.read_ti_trace` (with the collectives' expansion)
and :func:`libtopomap.smpi.read_paje_trace`.  This chose how ``smpi run`` traces (docs/simulation.rst,
"Which trace").

Prints a table and writes ``benchmarks/results/smpi_traces.{md,json}``.
Usage: ``nice python benchmarks/bench_smpi_traces.py [--sizes 256 1024]``.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import libtopomap as ltm
from libtopomap.smpi import build, datatype_sizes, run_once
from libtopomap.smpi.platform import write_platform

PROGRAMS = {"halo": ["2", "65536", "10", "1"], "fft": ["64", "2"]}
TORI = {64: (8, 8), 256: (16, 16), 1024: (32, 32)}

_READ = r"""
import json, resource, sys, time
from libtopomap.commgraph import CommGraph  # imports (numba's kernels, the schedules) before the clock starts
from libtopomap.collectives import schedules  # noqa: F401
from libtopomap.smpi.traces import read_paje_trace, read_ti_trace
CommGraph(2, [0], [1])
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
kind, path, n, sizes = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
t0, c0 = time.perf_counter(), time.process_time()
if kind == "ti":
    g, s = read_ti_trace(path, n, {int(k): v for k, v in sizes.items()})
    extra = {"messages": s["messages"], "collective_bytes": s["collective_bytes"]}
else:
    g, s = read_paje_trace(path, n)
    extra = {"messages": s["messages"], "collective_bytes": s["collective_bytes"]}
print(json.dumps({"read_s": time.perf_counter() - t0, "read_cpu_s": time.process_time() - c0, "edges": g.n_edges,
                  "bytes": float(g.weights.sum()),
                  "read_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss_before_mb": rss0,
                  **extra}))
"""


def _size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


def _read(kind, path, n, sizes):
    out = subprocess.run([sys.executable, "-c", _READ, kind, path, str(n), json.dumps(sizes)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--programs", nargs="+", default=list(PROGRAMS))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "smpi_traces"))
    a = ap.parse_args()
    bins = build(["halo", "fft"])
    sizes = datatype_sizes()
    rows = []
    load_start = os.getloadavg()
    for n in a.sizes:
        topo = ltm.torus(TORI[n])
        with tempfile.TemporaryDirectory() as d:
            info = write_platform(topo, os.path.join(d, "platform"), format="auto")
            hf = os.path.join(d, "hosts")
            with open(hf, "w") as f:
                f.write("".join(f"{topo.names[int(v)]}\n" for v in topo.hosts[:n]))
            for prog in a.programs:
                kw = dict(platform=info.path, hostfile=hf, nprocs=n)
                plain = run_once(bins[prog], PROGRAMS[prog], **kw)
                index = os.path.join(d, "ti", "ti.txt")
                os.makedirs(os.path.dirname(index), exist_ok=True)
                ti = run_once(bins[prog], PROGRAMS[prog], trace=index, **kw)
                paje = os.path.join(d, "paje.trace")
                pj = run_once(bins[prog], PROGRAMS[prog], paje=paje, **kw)
                r_ti = _read("ti", index, n, sizes)
                r_pj = _read("paje", paje, n, sizes)
                row = {"ranks": n, "platform_zone": info.zone, "program": f"{prog} {' '.join(PROGRAMS[prog])}",
                       "simulated_s": plain.time, "same_time": plain.time == ti.time == pj.time,
                       "untraced_wall_s": plain.wall, "untraced_cpu_s": plain.cpu,
                       "ti_wall_s": ti.wall, "ti_cpu_s": ti.cpu, "ti_bytes": _size(os.path.dirname(index)),
                       "ti_read_s": r_ti["read_s"], "ti_read_cpu_s": r_ti["read_cpu_s"],
                       "ti_read_rss_mb": r_ti["read_rss_mb"],
                       "reader_rss_before_mb": r_ti["rss_before_mb"],
                       "ti_edges": r_ti["edges"], "paje_wall_s": pj.wall, "paje_cpu_s": pj.cpu,
                       "paje_bytes": _size(paje), "paje_read_s": r_pj["read_s"], "paje_read_cpu_s": r_pj["read_cpu_s"],
                       "paje_read_rss_mb": r_pj["read_rss_mb"], "paje_edges": r_pj["edges"],
                       "ti_collective_bytes": r_ti["collective_bytes"],
                       "paje_collective_bytes": r_pj["collective_bytes"],
                       "same_p2p_messages": r_ti["messages"] == r_pj["messages"],
                       "load_average": os.getloadavg()}
                rows.append(row)
                print(json.dumps(row), flush=True)
                for p in (paje, os.path.dirname(index)):
                    subprocess.run(["rm", "-rf", p], check=True)
    head = (f"SMPI traces (SimGrid CM02, whole torus in vertex order); load average at start "
            f"{load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}, per row at its end\n\n"
            "| ranks | program | simulated (s) | untraced CPU (s) | TI CPU (s) | TI MB | TI read CPU (s) | TI read RSS "
            "(MB) | Paje CPU (s) | Paje MB | Paje read CPU (s) | Paje read RSS (MB) | edges TI / Paje | same time | "
            "load |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| {r['ranks']} | {r['program']} | {r['simulated_s']:.6e} | {r['untraced_cpu_s']:.2f} | {r['ti_cpu_s']:.2f} | "
        f"{r['ti_bytes'] / 1e6:.1f} | {r['ti_read_cpu_s']:.2f} | {r['ti_read_rss_mb']:.0f} | {r['paje_cpu_s']:.2f} | "
        f"{r['paje_bytes'] / 1e6:.1f} | {r['paje_read_cpu_s']:.2f} | {r['paje_read_rss_mb']:.0f} | "
        f"{r['ti_edges']} / {r['paje_edges']} | {r['same_time']} | "
        f"{r['load_average'][0]:.1f} |\n" for r in rows)
    print(head + body)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out + ".md", "w") as f:
        f.write(head + body)
    with open(a.out + ".json", "w") as f:
        json.dump({"load_average_start": load_start, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
