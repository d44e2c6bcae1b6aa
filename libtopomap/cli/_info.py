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
    from ._options import add_routing_option

    routing = add_routing_option(p)
    routing.default = None   # without it, "routing" is the topology's native model and the distances are hops
    routing.help = ("diameter and ASPL of this routing model's routes (dragonfly minimal/valiant differ from the "
                    "hop distance; shortest-path models do not); 'routing' then names it (default: hop distances, "
                    "'routing' the topology's native model)")
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
    props = _properties(topo)
    if getattr(args, "routing", None) is not None:
        props.update(_routed(topo, args.routing))
    _print(args, props)
    return 0


def _routed(topo, model):
    """``diameter``, ``aspl`` and ``routing`` of the routes of ``model`` over ordered pairs of distinct
    slot vertices.  Shortest-path models keep the hop distances; dragonfly ``minimal`` and ``valiant``
    (expected hops) are summed per pair of attachment routers: a pair of slot vertices crosses its two
    leaf links (if any) and the routers' route, so the work is one route per router pair, in chunks."""
    import numpy as np

    from ..routing import get_routing, route_hops
    from ..routing._common import leaves

    r = get_routing(model, topo)
    r.check(topo)
    if r.shortest:
        return {"routing": r.name}
    hosts = np.flatnonzero(np.asarray(topo.slots) > 0)
    h = hosts.size
    if h < 2:
        return {"routing": r.name, "diameter": 0, "aspl": 0.0}
    if r.model == "lft":  # the tables route host to host: every ordered pair of hosts, in chunks
        total, diameter = 0.0, 0
        chunk = max(1, (1 << 22) // h)
        for lo in range(0, h, chunk):
            s = np.repeat(hosts[lo:lo + chunk], h)
            t = np.tile(hosts, s.size // h)
            hops = route_hops(topo, s, t, routing=r)
            total += float(hops.sum())
            diameter = max(diameter, int(hops.max()))
        return {"routing": r.name, "diameter": diameter, "aspl": total / (h * (h - 1))}
    att, off = leaves(topo)
    a, o = att[hosts], off[hosts]
    routers, inv = np.unique(a, return_inverse=True)
    count = np.bincount(inv).astype(np.float64)
    top = np.full(routers.size, -1, np.int64)
    np.maximum.at(top, inv, o)
    total = 2.0 * (h - 1) * float(o.sum())     # the leaf links of every ordered pair
    diameter = 0.0
    for i in range(routers.size):               # pairs on one router: their leaf links only
        if count[i] >= 2:
            oi = np.sort(o[inv == i])
            diameter = max(diameter, float(oi[-1] + oi[-2]))
    chunk = max(1, (1 << 22) // routers.size)
    for lo in range(0, routers.size, chunk):
        rows = np.arange(lo, min(lo + chunk, routers.size))
        s = np.repeat(routers[rows], routers.size)
        t = np.tile(routers, rows.size)
        core = route_hops(topo, s, t, routing=r).astype(np.float64).reshape(rows.size, routers.size)
        core[np.arange(rows.size), rows] = 0.0
        total += float((count[rows] @ core) @ count)
        other = core + top[rows][:, None] + top[None, :]
        other[np.arange(rows.size), rows] = -np.inf
        diameter = max(diameter, float(other.max()))
    routed = {"routing": r.name, "diameter": diameter if r.name == "valiant" else int(round(diameter)),
              "aspl": total / (h * (h - 1))}
    return routed


def _properties(topo):
    """The topology's properties; for a regular graph of hosts only (LDR, hypercube, Petersen...) also the
    most nodes its degree and diameter allow (Mehta 2005, equation 4.1; equal to "vertices" for a Moore graph)."""
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
