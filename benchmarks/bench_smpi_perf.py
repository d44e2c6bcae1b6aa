"""What SimGrid options cost and save on one SMPI halo run (issue 28's 1,024-rank target).

``python benchmarks/bench_smpi_perf.py [--cases torus:1024:order,torus:256:scrambled] [--iters 10]
[--options base,full] [--binary PATH] [--out benchmarks/results/smpi_s11_perf]``

Every case is one ``smpirun`` of the ``halo`` proxy (2-D, 64 KiB, ``--iters`` iterations, Allreduce) with
:data:`libtopomap.smpi.SMPI_CONFIG` plus the option under test, on the platform ``libtopomap smpi run``
writes (:func:`libtopomap.smpi.write_platform`, ``format="auto"``), ranks in vertex order (``order``) or in a
random order (``scrambled``, seed 1).  Per run: wall and CPU seconds (``/usr/bin/time``), peak RSS, peak PSS
(``/proc/PID/smaps_rollup`` polled every 0.2 s: RSS counts a shared-malloc block once per mapping, PSS once),
the proxy's simulated time and SMPI's end of simulation, the load average.  Table on stdout and in
``OUT.md``, rows in ``OUT.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

import libtopomap as ltm
from libtopomap.smpi import build, write_platform
from libtopomap.smpi.build import require_tool
from libtopomap.smpi.runner import SMPI_CONFIG

#: Options under test (name -> extra --cfg arguments).
OPTIONS = {
    "base": [],
    "full": ["--cfg=network/optim:Full", "--cfg=network/maxmin-selective-update:no"],
    "surf-1e-8": ["--cfg=surf/precision:1e-8"],
    "surf-1e-7": ["--cfg=surf/precision:1e-7"],
    "maxmin-1e-4": ["--cfg=maxmin/precision:1e-4"],
    "ucontext": ["--cfg=contexts/factory:ucontext"],
    "stack-128k": ["--cfg=contexts/stack-size:128"],
    "no-trace": [],  # base without -trace-ti (the other rows trace, as smpi run's first run does)
}
NETWORKS = {"torus": {256: "8x8x4", 1024: "16x8x8", 4096: "16x16x16"}, "fattree": {256: 4, 1024: 5, 4096: 6}}


def topology(net, size):
    return ltm.torus(NETWORKS[net][size]) if net == "torus" else ltm.fattree(4, NETWORKS[net][size])


def _peak_memory(proc, deadline):
    """Poll the smpimain child of ``proc`` until it ends or ``deadline`` (``time.monotonic``) passes
    -> (peak RSS kB, peak PSS kB, CPU seconds of the simulation so far: what a killed run had used)."""
    rss = pss = 0
    cpu = 0.0
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            kids = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
            for k in kids:
                for sub in [k] + subprocess.run(["pgrep", "-P", k], capture_output=True, text=True).stdout.split():
                    with open(f"/proc/{sub}/smaps_rollup") as f:
                        text = f.read()
                    m = re.search(r"^Rss:\s+(\d+)", text, re.M), re.search(r"^Pss:\s+(\d+)", text, re.M)
                    if m[0] and m[1]:
                        rss, pss = max(rss, int(m[0][1])), max(pss, int(m[1][1]))
                    with open(f"/proc/{sub}/stat") as f:
                        ticks = f.read().rsplit(")", 1)[1].split()[11:13]  # utime, stime
                    cpu = max(cpu, sum(map(int, ticks)) / os.sysconf("SC_CLK_TCK"))
        except OSError:
            pass
        time.sleep(0.2)
    return rss, pss, cpu


def run_case(binary, platform, hostfile, nprocs, option, iters, tmp, timeout):
    cmd = ["/usr/bin/time", "-f", "LTMTIME %e %U %S %M", "nice", require_tool("smpirun"), "-np", str(nprocs),
           "-platform", platform, "-hostfile", hostfile]
    if option != "no-trace":
        cmd += ["-trace-ti", f"--cfg=tracing/filename:{os.path.join(tmp, 'ti', 'ti.txt')}"]
    cmd += [*SMPI_CONFIG, "--cfg=smpi/simulate-computation:0", *OPTIONS[option], binary, "2", "65536", str(iters), "1"]
    os.makedirs(os.path.join(tmp, "ti"), exist_ok=True)
    load = os.getloadavg()
    # its own session: on timeout the whole group goes (smpirun is a script that starts smpimain)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    rss_poll, pss, cpu_poll = _peak_memory(proc, time.monotonic() + timeout)
    killed = proc.poll() is None
    if killed:
        os.killpg(proc.pid, 9)
    out, err = proc.communicate()
    t = re.search(r"LTMTIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)", err)
    sim = re.search(r"time=([0-9.eE+-]+)", out)
    end = re.search(r"Simulated time: ([0-9.eE+-]+)", err)
    return {"option": option, "cfg": OPTIONS[option], "ok": bool(t and sim),
            "wall_s": float(t[1]) if t else None, "cpu_s": float(t[2]) + float(t[3]) if t else cpu_poll,
            "peak_rss_mb": int(t[4]) / 1024 if t else rss_poll / 1024, "peak_pss_mb": pss / 1024,
            "sim_time": float(sim[1]) if sim else None, "sim_end": float(end[1]) if end else None,
            "load_start": [round(x, 2) for x in load], "load_end": [round(x, 2) for x in os.getloadavg()],
            "error": f"killed after {timeout:g} s wall" if killed else
            None if t and sim else (err.strip().splitlines() or ["no output"])[-1]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="torus:1024:order", help="NET:SIZE:order|scrambled, comma separated")
    ap.add_argument("--options", default="base", help=f"comma separated, of {', '.join(OPTIONS)}")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--binary", default=None, help="the halo proxy (default: built with libtopomap smpi build)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    binary = os.path.abspath(args.binary) if args.binary else build(["halo"])["halo"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ltm-smpiperf-") as tmp:
        for case in args.cases.split(","):
            net, size, order = case.split(":")
            size = int(size)
            info = write_platform(topology(net, size), os.path.join(tmp, f"{net}{size}"), format="auto")
            hosts = list(info.hostnames)
            if order == "scrambled":
                hosts = [hosts[i] for i in np.random.default_rng(1).permutation(len(hosts))]
            hf = os.path.join(tmp, f"{case}.hosts".replace(":", "_"))
            with open(hf, "w") as f:
                f.write("".join(h + "\n" for h in hosts))
            for option in args.options.split(","):
                row = {"network": net, "size": size, "order": order, "iters": args.iters, "zone": info.zone,
                       "routing": info.routing, "binary": binary,
                       **run_case(binary, info.path, hf, size, option, args.iters, tmp, args.timeout)}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    head = ("| network | ranks | order | iters | option | CPU s | wall s | peak RSS MB | peak PSS MB | "
            "simulated (proxy) s | SMPI end s | load at start |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        def f(x, fmt):
            return "-" if x is None else format(x, fmt)
        lines.append(f"| {r['network']} | {r['size']} | {r['order']} | {r['iters']} | {r['option']} | "
                     f"{f(r['cpu_s'], '.2f')} | {f(r['wall_s'], '.1f')} | {f(r['peak_rss_mb'], '.0f')} | "
                     f"{f(r['peak_pss_mb'], '.0f')} | {f(r['sim_time'], '.9e')} | {f(r['sim_end'], '.6g')} | "
                     f"{' '.join(map(str, r['load_start']))} |")
    print("\n".join(lines))
    if args.out:
        with open(args.out + ".json", "w") as f:
            json.dump(rows, f, indent=1)
        with open(args.out + ".md", "w") as f:
            f.write(f"`python benchmarks/bench_smpi_perf.py {' '.join(argv or sys.argv[1:])}`\n\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
