"""``libtopomap smpi ACTION``: SimGrid SMPI tooling (a group of actions).

``libtopomap smpi platform --topology T [--routing M] [--bandwidth B] [--latency L] [--allocation HOSTS]
[-o P.xml | -o P.so]`` writes a SimGrid platform whose routes are those of routing model ``M``
(:func:`libtopomap.smpi.write_platform`).  Each action is one ``_add_<action>(actions)`` that sets
``_smpi_run``; :func:`register` adds the group and its actions.
"""

from __future__ import annotations

import sys

from ._options import add_size_limits, positive_int
from ._smpi_run import add_build, add_run

__all__ = ["register", "add_parser", "run"]

HELP = ("SimGrid SMPI: export a platform that routes as a routing model, build the proxy codes, "
        "measure-map-rerun an MPI program")


def register(subparsers):
    """Add the ``smpi`` group and its actions to ``subparsers``; returns the group's parser."""
    p = subparsers.add_parser("smpi", help=HELP,
                              description="Run MPI programs on a simulated copy of the network with SimGrid's SMPI.")
    actions = p.add_subparsers(dest="smpi_action", metavar="ACTION")
    actions.required = True
    _add_platform(actions)
    add_run(actions)
    add_build(actions)
    return p


#: The registration entry point of :mod:`libtopomap.cli` (``add_parser(subparsers)``).
add_parser = register


def run(args):
    """Run the chosen action."""
    return args._smpi_run(args)


# ---------------------------------------------------------------------------------------------- platform
def _add_platform(actions):
    from ..smpi.platform import DEFAULT_MAX_ROUTES, FORMATS, SHARING_POLICIES, SINGLE_PATH_ROUTINGS, ZONES

    p = actions.add_parser(
        "platform",
        help="write a SimGrid platform (XML, or a .so library + table) whose routes are those of a routing model",
        description="Write a SimGrid 3.32 platform (DTD 4.1) of a topology: hosts named as the topology's, one core "
                    "per slot, links of bandwidth x capacity, and the routes of a single-path routing model (a "
                    "SimGrid TORUS zone where it provably routes the same, explicit routes otherwise; with -o P.so a "
                    "platform library that routes by a next-hop table, for destination-based routings).")
    p.add_argument("--topology", required=True, metavar="FILE", help="topology file (any registered format)")
    p.add_argument("--routing", metavar="MODEL",
                   help=f"single-path routing model: {', '.join(SINGLE_PATH_ROUTINGS)}, or native (default: the "
                        "topology's native routing when single-path, else dimension-order on generated grids, "
                        "table elsewhere)")
    p.add_argument("--bandwidth", help="bandwidth of a link of capacity 1 (default: an ingested fabric's own "
                   "link rates, its capacities being Gb/s; else 100Gbps)")
    p.add_argument("--latency", default="100ns", help="latency of every link (default 100ns)")
    p.add_argument("--speed", default="100Gf", help="flop/s of each core (default 100Gf)")
    p.add_argument("--sharing", choices=SHARING_POLICIES, default="SPLITDUPLEX",
                   help="SimGrid link sharing policy (default SPLITDUPLEX: each direction its own bandwidth)")
    p.add_argument("--zone", choices=ZONES, default="auto",
                   help="auto: a SimGrid cluster zone where it provably routes as the model, else (writing a "
                        "platform library) the next-hop table zone for destination-based routings, else explicit "
                        "routes; full: explicit routes; cluster: a cluster zone or an error; table: the next-hop "
                        "table zone or an error (default auto)")
    p.add_argument("--format", choices=FORMATS,
                   help="xml; so: a platform library P.so and its table P.so.table (smpirun -platform P.so: hosts x "
                        "vertices bytes instead of hosts^2 routes); auto: the zone decides (default: so when -o ends "
                        "in .so, else xml)")
    p.add_argument("--max-table-bytes", type=positive_int, metavar="N",
                   help="refuse next-hop tables of more than N bytes, before building (default 1 GiB)")
    p.add_argument("--allocation", metavar="HOSTS",
                   help="only these hosts, in this order: a hostfile or a Slurm node list such as nid[0001-0004]")
    p.add_argument("--max-routes", type=positive_int, metavar="N",
                   help=f"refuse platforms of more than N explicit routes, before building (default "
                        f"{DEFAULT_MAX_ROUTES:,})")
    p.add_argument("-o", "--output", metavar="FILE", help="the platform file (default: standard output)")
    add_size_limits(p)
    p.set_defaults(_smpi_run=_run_platform)
    return p


def _run_platform(args):
    from .. import load
    from ..smpi import platform, write_platform

    topo = load(args.topology)
    hosts = None
    if args.allocation is not None:
        from ..rankfiles import read_allocation

        hosts = read_allocation(args.allocation).hosts
    routing = args.routing
    opts = dict(routing=routing, bandwidth=args.bandwidth, latency=args.latency, hosts=hosts, sharing=args.sharing,
                speed=args.speed, zone=args.zone, max_routes=args.max_routes)
    if args.output in (None, "-"):
        if args.format not in (None, "xml"):
            from ..errors import ArgumentError

            raise ArgumentError("a platform library cannot go to standard output: give -o P.so")
        sys.stdout.write(platform(topo, **opts))
        return 0
    info = write_platform(topo, args.output, format=args.format, max_table_bytes=args.max_table_bytes, **opts)
    what = (f"a next-hop table of {info.table_bytes:,} bytes ({info.table})" if info.table else
            f"{info.routes:,} explicit routes")
    print(f"wrote {info.path}: {len(info.hostnames)} hosts, zone {info.zone}, routing {info.routing}, {what}, "
          f"{info.bytes:,} bytes in {info.seconds:.2f} s", file=sys.stderr)
    return 0
