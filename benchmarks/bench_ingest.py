"""Benchmark: ingest a fat tree of 8,192 CAs and 640 switches written in ibnetdiscover syntax.

Usage: ``python benchmarks/bench_ingest.py [--repeat N] [--pods P] [--keep FILE]``

The fabric comes from :func:`adapters.synthetic.fat_tree_ibnetdiscover`; the timed part is
``libtopomap.load(path)`` (sniffing, parsing, cable merging, host grouping, Topology build), best of
``--repeat`` runs, wall and CPU time (the CPU time shows how much of the wall time a busy machine
took away).  The target is <= 3 s.
"""

import argparse
import os
import sys
import tempfile
import time

import libtopomap as ltm
from libtopomap.adapters import ingest_report
from libtopomap.adapters.synthetic import fat_tree_ibnetdiscover


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pods", type=int, default=8)
    ap.add_argument("--keep", help="also write the generated file here")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    text, counts = fat_tree_ibnetdiscover(pods=args.pods)
    gen = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fat_tree.ibnetdiscover")
        with open(path, "w") as fh:
            fh.write(text)
        if args.keep:
            with open(args.keep, "w") as fh:
                fh.write(text)
        times, cpu = [], []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            topo = ltm.load(path)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    rep = ingest_report(topo)
    ok = (rep.switches, rep.cas, rep.cables, topo.n_links) == tuple(counts)
    print(f"fabric: {counts.switches} switches, {counts.cas} CAs, {counts.cables} cables, {counts.links} links; "
          f"{len(text.splitlines())} lines, {len(text) / 1e6:.1f} MB (generated in {gen:.2f} s)")
    print(f"read:   {rep.switches} switches, {rep.hosts} hosts, {rep.cables} cables, {topo.n_links} links, "
          f"{len(rep.warnings)} warnings; counts {'match' if ok else 'DO NOT MATCH'}")
    print(f"ingest time: best {min(times):.3f} s wall ({min(cpu):.3f} s CPU), "
          f"all {', '.join(f'{t:.3f}' for t in times)} (target <= 3 s)")
    return 0 if ok and not rep.warnings else 1


if __name__ == "__main__":
    sys.exit(main())
