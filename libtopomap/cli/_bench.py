"""``mpiexec -n N libtopomap bench --topology FILE ...``: collectives before and after reordering.

OSU-style latency table (average / min / max over ranks, microseconds) of Bcast, Allreduce, Alltoall
and Neighbor_alltoall on the original and the reordered communicator, with the explicit
point-to-point schedules (binomial Bcast, recursive-doubling Allreduce, Bruck Alltoall) whose hops
the mapping optimizes, plus the model's congestion and dilation before and after (under ``--routing``,
which the mapping also optimises).  Then, since all ranks here may share one machine, the simulated time
of each mapped exchange on the modelled network with the launcher's placement and with the mapping
(:mod:`libtopomap.cli._simulated`: SMPI where installed, else the s4u replay; in ``--json`` the key
``simulated``).  Only rank 0 prints.
"""

import argparse
import json

from ..errors import ArgumentError
from ._mpi_command import run_on_every_rank
from ._options import add_deprecated_alias, add_routing_option, non_negative_int, positive_int

HELP = "benchmark collectives on the original and the reordered communicator (run under mpiexec)"
DESCRIPTION = ("Run collectives on numpy buffers on the original and the reordered communicator (run under "
               "mpiexec -n N) and print per-size latency and the model's congestion and dilation before/after; "
               "results are checked to be identical on both.  Then the simulated time of each mapped exchange on "
               "the modelled network (SMPI, else SimGrid's s4u replay), launcher's placement vs mapping.")

#: Most timed calls per size: more adds no precision that repeated runs would not, and a typo
#: (``--iterations 1000000000``) would otherwise hold the whole allocation for days.
MAX_ITERATIONS = 10_000


def _iterations(text):
    """argparse type: an integer in ``1..MAX_ITERATIONS``."""
    n = positive_int(text)
    if n > MAX_ITERATIONS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_ITERATIONS} timed calls per size, got {text!r}")
    return n


def add_parser(sub):
    p = sub.add_parser("bench", help=HELP, description=DESCRIPTION)
    p.add_argument("--topology", required=True, help="topology file (any registered format)")
    fake_names = p.add_argument(
        "--fake-names", metavar="FILE",
        help="fake-names file ('<rank> <hostname>' lines); default: $LIBTOPOMAP_FAKE_NAMES or the MPI processor names")
    add_deprecated_alias(p, "--fake-hosts", fake_names)
    p.add_argument("--graph", help="application graph for neighbor_alltoall: a pattern spec (stencil:4x2, "
                                   "torus-scrambled:4x4:1, random:P:D:SEED) or an edge-list / .mtx file "
                                   "(default: periodic 2-D halo exchange)")
    p.add_argument("--collectives", default="bcast,allreduce,alltoall,neighbor_alltoall",
                   help="comma-separated, from bcast, allreduce, alltoall, neighbor_alltoall (default: all)")
    p.add_argument("--sizes", default="8,1K,64K,1M",
                   help="message sizes in bytes with K/M suffixes (default: 8,1K,64K,1M)")
    p.add_argument("--iterations", type=_iterations, default=10,
                   help=f"timed calls per size, at most {MAX_ITERATIONS} (default: 10)")
    p.add_argument("--strategies", help="comma-separated mapping strategies to race (default: all installed)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="base seed of the mapping portfolio (default: 0)")
    add_routing_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(args):
    return run_on_every_rank(_run, args)


def _run(args):
    from mpi4py import MPI

    from ..loading import load as read
    from ..mpi.bench import format_table, parse_size, run_benchmark
    from ..mpi.agreement import collective_call
    from ._simulated import format_simulated, wait_for_root

    comm = MPI.COMM_WORLD
    # The same on every rank, so every rank raises the same ArgumentError (usage error, exit 2).
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    if not sizes:
        raise ArgumentError("--sizes is empty: expected message sizes such as 8,1K,64K")
    collectives = [c.strip() for c in args.collectives.split(",") if c.strip()]
    topo = collective_call(comm, read, args.topology, what="reading the topology")
    strategies = None if not args.strategies else [s.strip() for s in args.strategies.split(",")]
    result = run_benchmark(comm, topo, graph=args.graph, collectives=collectives, sizes=sizes,
                           iterations=args.iterations, fake_names=args.fake_names, seed=args.seed,
                           strategies=strategies, routing=args.routing)
    with wait_for_root(comm):   # the other ranks sleep while rank 0 simulates
        if comm.Get_rank() == 0:
            if not args.json:
                print(f"libtopomap bench: {result['n_processes']} ranks, topology {topo.name or args.topology}, "
                      f"{result['iterations']} iterations per size, {result['routing']} routing; latency per call "
                      "in microseconds")
                print(format_table(result), flush=True)
            result["simulated"] = _simulate(topo, result, args, sizes)
            if args.json:
                print(json.dumps(result))
            else:
                print("\n".join(format_simulated(result["simulated"])))
    return 0


def _simulate(topo, result, args, sizes):
    """Simulate each benchmarked collective (its explicit schedule) or application graph, once per mapping."""
    from ..mpi.bench import application_graph
    from ._simulated import Exchange, simulate_exchanges

    exchanges, seen = [], set()
    for res in result["results"]:
        coll = res["collective"]
        if coll in seen:   # the variants of a collective share its mapping
            continue
        seen.add(coll)
        what = (application_graph(args.graph, result["n_processes"]) if coll == "neighbor_alltoall" else coll)
        exchanges.append(Exchange("Neighbor_alltoall" if coll == "neighbor_alltoall" else coll, what,
                                  res["vertices_before"], res["vertices_after"]))
    return simulate_exchanges(topo, exchanges, sizes, routing=args.routing)
