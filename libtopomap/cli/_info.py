"""``libtopomap info FILE [--format F] [--json]``: size and distance properties of a topology.

``libtopomap info auto`` discovers the machine (:mod:`libtopomap.autotopo`); under ``mpiexec`` every
rank contributes (:func:`libtopomap.mpi.auto.discover`), rank 0 prints, and each rank's binding is listed.
"""

import json
import sys

from ..errors import ArgumentError
from ..formats import read


def add_parser(sub):
    p = sub.add_parser("info", help="print vertices, hosts, slots, switches, links, degrees, diameter, ASPL",
                       description="Print the properties of a topology file (any registered format, sniffed); for a "
                       "regular graph of hosts only, also its Moore bound (the most nodes its degree and "
                       "diameter allow).")
    p.add_argument("file", help="topology file (LibTopoMap text, JSON, ibnetdiscover, ...), or 'auto' to discover "
                                "the machine (run under mpiexec to see every host)")
    p.add_argument("--format", help="input format (default: sniffed from the content)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(args):
    if args.file == "auto":
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            status = _run_auto(args)
        for w in caught:
            print(f"libtopomap info: warning: {w.message}", file=sys.stderr)
        return status
    topo = read(args.file, format=args.format)
    _print(args, _properties(topo))
    return 0


def _properties(topo):
    """The topology's properties; for a regular graph of hosts only (LDR, hypercube, Petersen...) also the
    most nodes its degree and diameter allow (seed 001, equation 4.1; equal to "vertices" for a Moore graph)."""
    from ..generators.ldr import moore_bound
    from ..metrics import properties  # numba: imported only when the command runs

    props = properties(topo)
    if props["degree_min"] == props["degree_max"] and props["hosts"] == props["vertices"] > 1:
        props["moore_bound"] = moore_bound(props["degree_max"], props["diameter"])
    return props


def _print(args, props, ranks=None):
    if args.json:
        print(json.dumps(props if ranks is None else {**props, "ranks": ranks}))
        return
    width = max(len(k) for k in props)
    for k, v in props.items():
        v = f"{v:.4f}" if isinstance(v, float) else (" ".join(v) or "-") if isinstance(v, list) else v
        print(f"{k:<{width}}  {v}")
    for r in ranks or ():
        print(f"rank {r['rank']}: host {r['host']}, bound to cpus {r['binding'] or '?'}, vertex {r['vertex']}")


def _run_auto(args):
    from ..autotopo import launched_by_mpiexec, local_result, warn_if_guessed

    if args.format is not None:
        raise ArgumentError("--format does not apply to 'auto'")
    if not launched_by_mpiexec():
        result = local_result()
        warn_if_guessed(result.topology)
        _auto_report(args, result)
        return 0
    from ._mpi_command import run_on_every_rank

    def body(args):
        from mpi4py import MPI

        from ..mpi.auto import discover

        comm = MPI.COMM_WORLD
        result = discover(comm)
        if comm.Get_rank() == 0:
            _auto_report(args, result)
        return 0
    return run_on_every_rank(body, args)


def _auto_report(args, result):
    """Properties of the discovered topology, then each rank's host, binding and vertex."""
    topo, placement, bindings = result
    names, kinds = topo.names, topo.kinds
    ranks = [{"rank": r, "host": names[v] if kinds[v] == "host" else names[v].split(":", 1)[0],
              "binding": bindings[r], "vertex": names[v]} for r, v in enumerate(placement.tolist())]
    _print(args, _properties(topo), ranks)
