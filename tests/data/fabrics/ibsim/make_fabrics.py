#!/usr/bin/env python3
"""Regenerate the ibsim fabrics: a net file per fabric, then OpenSM's routes, ibnetdiscover and dump_lfts.

Needs Debian's ibsim-utils, opensm and infiniband-diags.  ibsim simulates the fabric's management datagrams;
OpenSM, ibnetdiscover and dump_lfts run unchanged with libumad2sim preloaded, so the forwarding tables are the
ones OpenSM's routing engine really computes.  Run from this folder:  python3 make_fabrics.py
"""

import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"


def kary_ntree(k, n):
    """ibsim net file of the k-ary n-tree of libtopomap.generate fattree (same hosts n<i>, same wiring).

    Switch <w, l> (w: n-1 base-k digits, digit 0 most significant): down port 1 + v to the child that has v
    in digit l (leaves: host k w + v), up port k + 1 + u to the parent that has u in digit l - 1.
    """
    per = k ** (n - 1)

    def name(level, w):
        return f"sw-l{level}-{w}"

    lines = []
    # the first port in the file is where the SM runs: put a host first
    hosts = k ** n
    for p in range(hosts):
        lines += [f'Hca\t1\t"n{p} HCA-1"', f'[1]\t"{name(n - 1, p // k)}"[{1 + p % k}]', ""]
    for l in range(n):  # noqa: E741 (level l, as in the docstring)
        for w in range(per):
            lines.append(f'Switch\t{2 * k}\t"{name(l, w)}"')
            if l == n - 1:
                for v in range(k):
                    lines.append(f'[{1 + v}]\t"n{k * w + v} HCA-1"[1]')
            else:
                place = k ** (n - 2 - l)
                digit = (w // place) % k
                for v in range(k):
                    child = w - digit * place + v * place
                    lines.append(f'[{1 + v}]\t"{name(l + 1, child)}"[{k + 1 + digit}]')
            if l > 0:
                place = k ** (n - 1 - l)
                digit = (w // place) % k
                for u in range(k):
                    parent = w - digit * place + u * place
                    lines.append(f'[{k + 1 + u}]\t"{name(l - 1, parent)}"[{1 + digit}]')
            lines.append("")
    return "\n".join(lines)


def tapered(leaves, per_leaf, spines):
    """Two-level tree: ``leaves`` leaf switches of ``per_leaf`` hosts, one cable from every leaf to every spine."""
    lines = []
    for p in range(leaves * per_leaf):
        lines += [f'Hca\t1\t"n{p} HCA-1"', f'[1]\t"leaf{p // per_leaf}"[{1 + p % per_leaf}]', ""]
    for s in range(spines):
        lines.append(f'Switch\t{leaves}\t"spine{s}"')
        lines += [f'[{1 + f}]\t"leaf{f}"[{per_leaf + 1 + s}]' for f in range(leaves)]
        lines.append("")
    for f in range(leaves):
        lines.append(f'Switch\t{per_leaf + spines}\t"leaf{f}"')
        lines += [f'[{1 + v}]\t"n{f * per_leaf + v} HCA-1"[1]' for v in range(per_leaf)]
        lines += [f'[{per_leaf + 1 + s}]\t"spine{s}"[{1 + f}]' for s in range(spines)]
        lines.append("")
    return "\n".join(lines)


FABRICS = {
    # name: (net text, OpenSM routing engine)
    "ftree-4-3": (kary_ntree(4, 3), "ftree"),
    "ftree-4-3-updn": (kary_ntree(4, 3), "updn"),
    "tapered-8x8-2": (tapered(8, 8, 2), "updn"),
}


def run(name, net, engine):
    work = HERE / f".work-{name}"
    work.mkdir(exist_ok=True)
    (HERE / f"{name}.net").write_text(net + "\n")
    env = dict(os.environ, LD_PRELOAD=UMAD2SIM, OSM_TMP_DIR=str(work), OSM_CACHE_DIR=str(work))
    sim = subprocess.Popen(["ibsim", "-s", str(HERE / f"{name}.net")], stdin=subprocess.PIPE,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work)
    try:
        time.sleep(2)
        subprocess.run(["opensm", "-o", "-R", engine, "-f", str(work / "osm.log")], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        for tool, out in (("ibnetdiscover", "ibnetdiscover"), ("dump_lfts", "lfts")):
            text = subprocess.run([tool], env=env, check=True, capture_output=True, text=True, timeout=300).stdout
            (HERE / f"{name}.{out}.txt").write_text(text)
    finally:
        sim.kill()
        sim.wait()
    print(name, "done")


if __name__ == "__main__":
    for name in sys.argv[1:] or FABRICS:
        run(name, *FABRICS[name])
