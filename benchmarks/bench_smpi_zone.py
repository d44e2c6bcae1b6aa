"""The next-hop table zone (a SimGrid platform library) against explicit routes: size, export, load, ``smpi run``.

``python benchmarks/bench_smpi_zone.py [--sizes 256,1024,4096] [--xml] [--run] [--json OUT]``: 2-D tori
under dimension-order (even rings: no TORUS zone) and 4-ary fat trees under ``table``.  For each: export
time and bytes of ``P.so`` + ``P.so.table``, SimGrid's load time and peak RSS (a subprocess that loads the
platform and routes one pair), and with ``--run`` a whole ``libtopomap smpi run`` of the halo proxy (2-D,
64 KiB, 10 iterations, one Allreduce) from a scrambled allocation (wall time of each phase, peak RSS of
this process and of the largest smpirun).  ``--xml`` also exports and loads explicit routes where the
route limit allows.

Measured (2 shared cores, SimGrid 3.32): table zone vs explicit routes.  256 hosts: 16x16 torus 125 KB /
0.36 s export / 0.04 s load (XML: 65,280 routes, 22.8 MB, 0.45 s load); 1,024: 32x32 torus 1.17 MB, 0.92 s,
0.05 s; 4-ary 5-tree 2.6 MB, 0.27 s, 0.04 s (XML: 1,047,552 routes, 242-685 MB, 25-87 s load); 4,096:
64x64 torus 17.2 MB, 35.5 s, 0.54 s; 4-ary 6-tree 42.9 MB, 22.3 s, 0.45 s, 174 MB RSS (XML refused: 16.7M
routes).  ``smpi run`` of the halo, scrambled allocation, 1,024 ranks: 4-ary 5-tree 144 s (two SMPI runs
77 + 66 s, platform 0.29 s), 32x32 torus 478 s (the scrambled run alone 474 s: SimGrid's contention
solver; the mapped rerun 2.6 s).
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

import libtopomap as ltm
from libtopomap.errors import ArgumentError
from libtopomap.smpi import write_platform

CASES = {
    256: [("torus 16x16", lambda: ltm.torus("16x16"), "dimension-order"),
          ("fattree 4-ary 4-tree", lambda: ltm.fattree(4, 4), "table")],
    1024: [("torus 32x32", lambda: ltm.torus("32x32"), "dimension-order"),
           ("fattree 4-ary 5-tree", lambda: ltm.fattree(4, 5), "table")],
    4096: [("torus 64x64", lambda: ltm.torus("64x64"), "dimension-order"),
           ("fattree 4-ary 6-tree", lambda: ltm.fattree(4, 6), "table")],
}

_LOAD = r"""
import os, resource, sys, time
t0 = time.perf_counter()
import simgrid as sg
e = sg.Engine(["load", "--log=root.thres:critical"])
e.load_platform(sys.argv[1])
hosts = e.all_hosts
def body():
    hosts[0].route_to(hosts[-1])
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write("@@%f %f\n" % (time.perf_counter() - t0, rss)); sys.stdout.flush()
sg.Actor.create("r", hosts[0], body)
e.run()
os._exit(0)
"""


def _load(path):
    out = subprocess.run([sys.executable, "-c", _LOAD, path], capture_output=True, text=True)
    if "@@" not in out.stdout:
        return {"load_error": out.stderr[-300:]}
    s, rss = out.stdout.split("@@")[1].split()
    return {"simgrid_load_s": round(float(s), 2), "simgrid_load_rss_mb": round(float(rss))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256,1024,4096")
    ap.add_argument("--xml", action="store_true", help="also export and load explicit routes (Full zone)")
    ap.add_argument("--run", action="store_true", help="also run 'smpi run' of the halo proxy")
    ap.add_argument("--cases", help="only the cases whose label contains this text")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    halo = None
    if args.run:
        from libtopomap.smpi import build

        halo = build(["halo"])["halo"]
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(x) for x in args.sizes.split(",")]:
            for label, make, routing in CASES[size]:
                if args.cases and args.cases not in label:
                    continue
                topo = make()
                row = {"case": label, "hosts": int(topo.hosts.size), "vertices": int(topo.n_vertices),
                       "routing": routing}
                info = write_platform(topo, os.path.join(tmp, "p.so"), routing=routing)
                row.update(zone=info.zone, table_bytes=info.table_bytes, bytes=info.bytes,
                           export_s=round(info.seconds, 2), **_load(info.path))
                if args.xml:
                    try:
                        x = write_platform(topo, os.path.join(tmp, "p.xml"), routing=routing, zone="full")
                    except ArgumentError as e:
                        row["xml"] = f"refused: {e}"
                    else:
                        row["xml"] = {"routes": x.routes, "bytes": x.bytes, "export_s": round(x.seconds, 2),
                                      **_load(x.path)}
                        os.unlink(x.path)
                if args.run:
                    from libtopomap.smpi import run

                    hosts = [topo.names[v] for v in topo.hosts]
                    random.Random(1).shuffle(hosts)
                    alloc = os.path.join(tmp, "alloc")
                    with open(alloc, "w") as f:
                        f.write("".join(f"{h}\n" for h in hosts))
                    t0 = time.perf_counter()
                    res = run(halo, ["2", "65536", "10", "1"], topology=topo, nprocs=len(hosts), allocation=alloc,
                              ranks_per_host=1, routing=routing)
                    row["smpi_run"] = {"wall_s": round(time.perf_counter() - t0, 1),
                                       "phases": {k: round(v, 2) for k, v in res.phases.items()},
                                       "zone": res.platform["zone"], "before_s": res.before.time,
                                       "after_s": res.after.time, "speedup": round(res.speedup, 3),
                                       "strategy": res.strategy,
                                       "rss_self_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                                       "rss_smpirun_mb": round(
                                           resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)}
                for p in (info.path, info.table):
                    if os.path.exists(p):
                        os.unlink(p)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
