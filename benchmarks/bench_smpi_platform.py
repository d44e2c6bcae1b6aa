"""Export time and XML size of libtopomap.smpi.write_platform at about 256, 1,024 and 4,096 hosts.

``python benchmarks/bench_smpi_platform.py [--sizes 256,1024,4096] [--load] [--json OUT]``: tori under
dimension-order (odd rings: SimGrid's TORUS zone; even rings: explicit routes), 4-ary fat trees under
``table`` and dragonflies under ``minimal`` (explicit routes).  ``--load`` also times SimGrid loading
each platform and routing one pair (in a subprocess).  Platforms above the route limit are reported as
refused, with the limit's message.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import libtopomap as ltm
from libtopomap.errors import ArgumentError
from libtopomap.smpi import write_platform

CASES = {
    256: [("torus 3x5x17", lambda: ltm.torus("3x5x17"), "dimension-order"),
          ("torus 16x16", lambda: ltm.torus("16x16"), "dimension-order"),
          ("fattree 4-ary 4-tree", lambda: ltm.fattree(4, 4), "table"),
          ("dragonfly g16 a8 p2 h2", lambda: ltm.dragonfly(16, 8, 2, 2), "minimal")],
    1024: [("torus 3x11x31", lambda: ltm.torus("3x11x31"), "dimension-order"),
           ("torus 32x32", lambda: ltm.torus("32x32"), "dimension-order"),
           ("fattree 4-ary 5-tree", lambda: ltm.fattree(4, 5), "table"),
           ("dragonfly g32 a8 p4 h4", lambda: ltm.dragonfly(32, 8, 4, 4), "minimal")],
    4096: [("torus 13x15x21", lambda: ltm.torus("13x15x21"), "dimension-order"),
           ("torus 16x16x16", lambda: ltm.torus("16x16x16"), "dimension-order"),
           ("fattree 4-ary 6-tree", lambda: ltm.fattree(4, 6), "table"),
           ("dragonfly g64 a16 p4 h4", lambda: ltm.dragonfly(64, 16, 4, 4), "minimal")],
}

_LOAD = r"""
import os, sys, time
t0 = time.perf_counter()
import simgrid as sg
e = sg.Engine(["load", "--log=root.thres:critical"])
e.load_platform(sys.argv[1])
hosts = e.all_hosts
def body():
    hosts[0].route_to(hosts[-1])
    sys.stdout.write("@@%f\n" % (time.perf_counter() - t0)); sys.stdout.flush()
sg.Actor.create("r", hosts[0], body)
e.run()
os._exit(0)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256,1024,4096")
    ap.add_argument("--load", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(x) for x in args.sizes.split(",")]:
            for label, make, routing in CASES[size]:
                topo = make()
                path = os.path.join(tmp, "p.xml")
                row = {"case": label, "hosts": int(topo.hosts.size), "routing": routing}
                t0 = time.perf_counter()
                try:
                    info = write_platform(topo, path, routing=routing)
                except ArgumentError as e:
                    row.update(refused=str(e), check_s=round(time.perf_counter() - t0, 3))
                else:
                    row.update(zone=info.zone, routes=info.routes, bytes=info.bytes, export_s=round(info.seconds, 2))
                    if args.load:
                        out = subprocess.run([sys.executable, "-c", _LOAD, path], capture_output=True, text=True)
                        row["simgrid_load_s"] = round(float(out.stdout.split("@@")[1]), 2) if "@@" in out.stdout \
                            else out.stderr[-300:]
                    os.unlink(path)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
