"""``libtopomap smpi run`` and ``libtopomap smpi build``: the measuring actions of the ``smpi`` group.

``libtopomap smpi run --topology T -n N [--allocation HOSTS] [--ranks-per-host K] [--strategy S]
[--routing M] [--objective O] [--trace paje|ti] [--json] -- ./app ARGS`` runs an SMPI program in the launcher's order,
maps its traced graph and reruns it (:func:`libtopomap.smpi.run`); ``libtopomap smpi build [-o DIR]
[NAME ...]`` compiles the proxy codes (:func:`libtopomap.smpi.build`).  :func:`add_run` and
:func:`add_build` are called by :func:`libtopomap.cli._smpi.register`.
"""

from __future__ import annotations

import argparse
import json

from ._options import add_size_limits, non_negative_int, positive_float, positive_int

__all__ = ["add_run", "add_build"]


def add_run(actions):
    """Add ``smpi run`` to the ``smpi`` group's subparsers."""
    from ..vocabulary import OBJECTIVES, REFINEMENTS, SMPI_TRACES, STRATEGIES, describe

    p = actions.add_parser(
        "run", help="run an SMPI program in the launcher's order, map its traced graph, rerun it mapped",
        description="Run a program built with smpicc under smpirun on a platform of the topology (CM02 network "
                    "model, cross-traffic off), ranks in the launcher's order (they fill the allocation's hosts in "
                    "order); read its communication graph from SMPI's trace (--trace); map it with the "
                    "portfolio under the platform's routing model onto the allocation; rerun with the mapping's "
                    "hostfile.  Prints the simulated time before and after, the speed-up, the model's metrics "
                    "of both placements and the wall time of each phase.  Everything after '--' is the program "
                    "and its arguments.")
    p.add_argument("--topology", required=True, metavar="FILE", help="topology file (any registered format)")
    p.add_argument("-n", "--np", dest="nprocs", type=positive_int, required=True, metavar="N", help="ranks")
    p.add_argument("--allocation", metavar="HOSTS",
                   help="the job's hosts in launch order: a hostfile ('host', 'host slots=N', 'host:N') or a Slurm "
                        "node list such as nid[0001-0004] (default: every host of the topology, vertex order)")
    p.add_argument("--ranks-per-host", type=positive_int, metavar="K",
                   help="ranks per allocation host a hostfile does not size (default: ranks / hosts rounded up; "
                        "without --allocation: each host's slots)")
    p.add_argument("--strategy", default="all", choices=["all", *STRATEGIES],
                   help="mapping strategy, or 'all' to race the portfolio (default all)")
    p.add_argument("--refine", choices=list(REFINEMENTS), help="refine the best constructions")
    p.add_argument("--objective", default="congestion", choices=list(OBJECTIVES),
                   help="what the mapping minimises (default congestion)")
    p.add_argument("--routing", metavar="MODEL",
                   help="single-path routing model of the platform and of the mapping (default: the platform's, "
                        "see 'libtopomap smpi platform --help')")
    p.add_argument("--trace", default="paje", choices=list(SMPI_TRACES),
                   help=f"which SMPI trace gives the graph (default paje): {describe('smpi-trace')}")
    p.add_argument("--graph", metavar="GRAPH",
                   help="map this communication graph (file or pattern) instead of the traced one")
    p.add_argument("--bandwidth", help="bandwidth of a link of capacity 1 (default: an ingested fabric's own "
                   "link rates, its capacities being Gb/s; else 100Gbps)")
    p.add_argument("--latency", default="100ns", help="latency of every link (default 100ns)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="base seed of the mapping (default 0)")
    p.add_argument("--compute", action="store_true",
                   help="also simulate the time the program computes between MPI calls (times then vary from run "
                        "to run)")
    p.add_argument("--cfg", action="append", default=[], metavar="KEY:VALUE",
                   help="more SimGrid options for both runs, e.g. --cfg smpi/bcast:binomial_tree (repeatable)")
    p.add_argument("--timeout", type=positive_float, metavar="SEC", help="seconds per smpirun")
    p.add_argument("--workdir", metavar="DIR", help="keep the platform, hostfiles and trace in DIR")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS]",
                   help="the SMPI program (built with smpicc) and its arguments")
    add_size_limits(p)
    p.set_defaults(_smpi_run=_run_run)
    return p


def _run_run(args):
    from ..errors import ArgumentError
    from ..smpi import run

    command = list(args.program)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise ArgumentError("no program: put it after '--', e.g. -- ./halo 2 65536 10")
    res = run(command[0], command[1:], topology=args.topology, nprocs=args.nprocs, allocation=args.allocation,
              ranks_per_host=args.ranks_per_host, strategy=args.strategy, routing=args.routing,
              objective=args.objective, refine=args.refine, seed=args.seed, graph=args.graph, trace=args.trace,
              bandwidth=args.bandwidth, latency=args.latency, compute=args.compute, workdir=args.workdir,
              timeout=args.timeout, extra_config=[f"--cfg={c}" for c in args.cfg])
    if args.json:
        print(json.dumps(res.to_dict()))
    else:
        print(res.summary())
    return 0


def add_build(actions):
    """Add ``smpi build`` to the ``smpi`` group's subparsers."""
    from ..smpi.build import PROXIES

    p = actions.add_parser(
        "build", help="compile the proxy codes (halo, cg, fft, colls, replay) with smpicc",
        description="Compile libtopomap's SMPI proxy codes with 'smpicc -O2' (kept while their source is "
                    "unchanged) and print the path of each executable.")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"proxies to build (default all: {', '.join(PROXIES)})")
    p.add_argument("-o", "--outdir", metavar="DIR",
                   help="output folder (default $LIBTOPOMAP_SMPI_DIR, else ~/.cache/libtopomap/smpi)")
    p.add_argument("--force", action="store_true", help="recompile even when up to date")
    p.set_defaults(_smpi_run=_run_build)
    return p


def _run_build(args):
    from ..smpi import build

    for name, path in build(args.names or None, outdir=args.outdir, force=args.force, helpers=True).items():
        print(f"{name} {path}")
    return 0
