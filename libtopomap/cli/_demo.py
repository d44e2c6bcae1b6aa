"""``mpiexec -n 8 libtopomap demo``: reorder a badly placed halo exchange and show what changed.

With no arguments it uses the bundled 4x2 torus ``demo_torus_4x2.topo``, the fake-names layout
``demo_torus_4x2.names`` that spreads the ranks badly (both installed with the package in
``libtopomap/data/`` and read through :mod:`importlib.resources`), and the periodic 2-D halo
exchange of the job's ranks.  It reorders with :func:`libtopomap.Create_dist_graph_adjacent`, prints
congestion and dilation before and after, which strategy won on which rank, and a short
Neighbor_alltoall benchmark on the original and the reordered communicator, then the simulated time
of the same exchange on the modelled network with both placements (:mod:`libtopomap.cli._simulated`:
SMPI where installed, else the s4u replay), since all ranks here share one machine.  Only rank 0 prints.
``--routing MODEL`` is the routing model of the reordering's objective and of the printed congestion
and dilation (``routing=`` of :func:`libtopomap.Create_dist_graph_adjacent`; default ``ecmp``).
"""

import contextlib
import importlib.resources

from ._mpi_command import run_on_every_rank
from ._options import add_deprecated_alias, add_routing_option, non_negative_int, positive_int

DEMO_TOPOLOGY = "demo_torus_4x2.topo"
DEMO_NAMES = "demo_torus_4x2.names"
# The layout of demo_torus_4x2.names: rank r starts on host _DEMO_LAYOUT[r] of the 4x2 torus.
_DEMO_LAYOUT = (3, 0, 6, 1, 5, 2, 4, 7)


def _bundled(name, stack):
    """A real file path to the package data file ``name`` that stays valid while ``stack`` is open."""
    resource = importlib.resources.files("libtopomap.data").joinpath(name)
    if not resource.is_file():
        from ..errors import LibTopoMapError

        raise LibTopoMapError(f"the package data file libtopomap/data/{name} is missing: reinstall libtopomap")
    return stack.enter_context(importlib.resources.as_file(resource))


def add_parser(sub):
    p = sub.add_parser("demo", help="reorder a badly placed halo exchange on a bundled torus (run under "
                                    "mpiexec -n 4 or 8)",
                       description="Reorder a halo exchange whose ranks a fake-names layout spreads badly over a "
                                   "bundled 4x2 torus; print congestion and dilation before/after, the winning "
                                   "strategy and rank, a short benchmark, and the simulated time of the same "
                                   "exchange on the modelled network (SMPI, else SimGrid's s4u replay) with the "
                                   "launcher's placement and with the mapping.  Run: mpiexec -n 8 libtopomap demo")
    p.add_argument("--topology", help=f"topology file (default: the bundled {DEMO_TOPOLOGY})")
    fake_names = p.add_argument(
        "--fake-names", metavar="FILE",
        help=f"fake-names file (default: the bundled {DEMO_NAMES} with the bundled topology, "
             "else $LIBTOPOMAP_FAKE_NAMES or the MPI processor names)")
    add_deprecated_alias(p, "--fake-hosts", fake_names)
    p.add_argument("--graph", help="communication graph spec or file (default: periodic 2-D halo exchange)")
    p.add_argument("--sizes", default="8,1K,16K", help="benchmark message sizes per neighbour (default: 8,1K,16K)")
    p.add_argument("--iterations", type=positive_int, default=10, help="timed calls per size (default: 10)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="base seed of the mapping portfolio (default: 0)")
    add_routing_option(p)
    return p


def run(args):
    return run_on_every_rank(_run, args)


def _run(args):
    with contextlib.ExitStack() as stack:
        return _demo(args, stack)


def _demo(args, stack):
    from mpi4py import MPI

    from ..errors import LibTopoMapError
    from ..loading import load as read
    from ..mpi import Create_dist_graph_adjacent, report as ltm_report
    from ..mpi.bench import compare, format_rows, graph_lists, grid_dims, halo_graph, parse_size
    from ..mpi.agreement import collective_call
    from ._simulated import Exchange, format_simulated, simulate_exchanges, wait_for_root

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    # a bad size raises the same ArgumentError on every rank: a usage error (exit 2)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]

    placement = fake = shown = None
    if args.topology:
        topo = collective_call(comm, read, args.topology, what="reading the topology")
        fake = args.fake_names
    else:
        path = _bundled(DEMO_TOPOLOGY, stack)
        topo = collective_call(comm, read, str(path), what="reading the topology")
        fake = args.fake_names or str(_bundled(DEMO_NAMES, stack))
        shown = args.fake_names or f"bundled {DEMO_NAMES}"
        if size > len(_DEMO_LAYOUT) or size < 2:
            raise LibTopoMapError(
                f"the demo places one process on each of the {len(_DEMO_LAYOUT)} hosts of its 4x2 torus: run it "
                f"with mpiexec -n 2 to -n {len(_DEMO_LAYOUT)} (4 and 8 show most), not -n {size}; or give "
                "--topology and --fake-names for a bigger machine")
    if args.graph:
        from ..patterns import load_graph

        graph = collective_call(comm, load_graph, args.graph, what="reading the graph")
        if graph.n != size:
            raise LibTopoMapError(f"the graph {args.graph!r} has {graph.n} processes but the job has {size} ranks")
        gname = args.graph
    else:
        graph = halo_graph(size)
        gname = "periodic {}x{} halo exchange".format(*grid_dims(size))

    lists = graph_lists(graph, rank)
    original = comm.Create_dist_graph_adjacent(*lists, reorder=False)
    # The one-line change of an mpi4py application:
    routing = getattr(args, "routing", "ecmp")
    reordered = Create_dist_graph_adjacent(comm, *lists, reorder=True, topology=topo, seed=args.seed,
                                           fake_names=fake, placement=placement, routing=routing)
    rep = ltm_report(reordered)
    timings = {k: comm.allreduce(v, op=MPI.MAX) for k, v in rep.timings.items()}
    rows = compare(original, reordered, "neighbor_alltoall", sizes, iterations=args.iterations)
    original.Free()
    reordered.Free()

    if rank == 0:
        b, a = rep.before, rep.after
        names = topo.names
        print(f"libtopomap demo: {size} ranks, {gname}, on {topo.name or args.topology} "
              f"({topo.hosts.size} hosts, {topo.n_links} links)")
        where = shown or fake or ("explicit placement" if placement else "MPI processor names")
        print(f"placement before ({where}): " + " ".join(f"{r}:{names[v]}" for r, v in enumerate(rep.vertices_before)))
        print("placement after (new rank:host): "
              + " ".join(f"{k}:{names[v]}" for k, v in enumerate(rep.vertices_after)))
        print()
        if routing != "ecmp":
            from ..routing import get_routing

            print(f"routing: {get_routing(routing, topo).name} (congestion and dilation of its routes)")
        print(f"{'':16}{'before':>10}{'after':>10}")
        for key, label in (("max_congestion", "max congestion"), ("avg_congestion", "avg congestion"),
                           ("avg_dilation", "avg dilation"), ("max_dilation", "max dilation"),
                           ("hop_bytes", "hop-bytes")):
            print(f"{label:16}{b[key]:10.3g}{a[key]:10.3g}")
        print()
        if rep.winner_rank is None:
            print(f"winner: identity (no strategy beat the current placement on {rep.objective})")
        else:
            print(f"winner: {rep.strategy} on rank {rep.winner_rank} ({rep.objective} "
                  f"{b['objective']:.3g} -> {a['objective']:.3g})")
        print("candidates (rank: strategy objective seconds): " + ", ".join(
            f"{c['rank']}: {c['strategy']} {c['value']:.3g} {c['seconds']:.2f}s" for c in rep.candidates))
        print("reordering time, max over ranks (s): " + ", ".join(
            f"{k} {timings[k]:.3f}"
            for k in ("locate", "gather", "kernels", "strategies", "selection", "build", "total")))
        print()
        print(f"Neighbor_alltoall ({args.iterations} iterations per size; results checked identical; "
              "all ranks share this machine, so latency does not see the modelled network):")
        print("\n".join(format_rows(rows)))
        print(flush=True)
    with wait_for_root(comm):   # the other ranks sleep while rank 0 simulates
        if rank == 0:
            sim = simulate_exchanges(topo, [Exchange("Neighbor_alltoall", graph, rep.vertices_before,
                                                     rep.vertices_after)], sizes, routing=routing)
            print("\n".join(format_simulated(sim)))
    return 0
