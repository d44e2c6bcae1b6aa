"""``libtopomap plot KIND ...``: draw a mapping as PNG and SVG (``adjacency``, ``loads``, ``hops``,
``times``; :mod:`libtopomap.plot`).  The kinds and ``--routing``: docs/simulation.rst, "Plots".
"""

from __future__ import annotations

from ..errors import ArgumentError, FormatError, LibTopoMapError, MappingError
from ..vocabulary import COLLECTIVES
from ._options import add_routing_option, non_negative_int, positive_int
from ._simulate import resolve_workload

KINDS = ("adjacency", "loads", "hops", "times")


def add_parser(sub):
    p = sub.add_parser("plot", help="draw adjacency matrices, link loads, hop histograms or simulated times",
                       description="Draw a picture of a mapping and write it as STEM.png and STEM.svg. "
                                   "Needs matplotlib (the 'plot' extra).")
    p.add_argument("kind", choices=KINDS,
                   help="adjacency: matrices before/after RCM; loads: link loads on the network; hops: hop "
                        "histograms; times: simulated time vs message size")
    p.add_argument("-o", "--output", metavar="STEM", help="output file stem (default: libtopomap-KIND)")
    p.add_argument("--topology", metavar="FILE", help="topology file")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--graph", metavar="GRAPH", help="communication graph (stencil:16x16, a file, ...)")
    what.add_argument("--collective", choices=COLLECTIVES,
                      help="a collective's schedule instead of a graph")
    p.add_argument("--procs", type=positive_int, metavar="P", help="number of ranks of the collective")
    p.add_argument("--root", type=non_negative_int, default=0, help="root of bcast")
    p.add_argument("--placement", metavar="HOW", help="original placement (see 'libtopomap simulate --help')")
    mapped = p.add_mutually_exclusive_group()
    mapped.add_argument("--mapping", metavar="FILE", help="mapped placement from a file")
    mapped.add_argument("--strategy", metavar="S", help="mapped placement computed by this strategy")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of random placements and searches")
    p.add_argument("--iterations", type=non_negative_int, default=200_000,
                   help="swaps of two-opt/anneal rank placement")
    p.add_argument("--load", choices=("ecmp", "simgrid"), default="ecmp",
                   help="loads: the routing model's loads (default; ECMP unless --routing) or SimGrid's single "
                        "shortest paths (needs SimGrid)")
    add_routing_option(p)
    p.add_argument("--weighted", action="store_true", help="hops: count volume instead of messages")
    p.add_argument("--from", dest="from_json", metavar="JSON",
                   help="times: read 'libtopomap simulate --json' output instead of simulating")
    p.add_argument("--sizes", default="1K,64K,1M", help="times: message sizes (default 1K,64K,1M)")
    p.add_argument("--bandwidth", help="times/loads: bandwidth of a capacity-1 link (default: an ingested "
                   "fabric's own link rates, else 100Gbps)")
    p.add_argument("--latency", default="100ns", help="times/loads: link latency (default 100ns)")
    p.add_argument("--dims", help="loads: draw the network as this grid, e.g. 8x8 (for a torus/mesh file "
                                  "without its generator attributes)")
    p.add_argument("--title", help="figure title")
    return p


def _require(args, *names):
    missing = [f"--{n}" for n in names if getattr(args, n) is None]
    if missing:
        raise MappingError(f"plot {args.kind} needs {' and '.join(missing)}")


def _need_workload(args):
    _require(args, "topology")
    if args.graph is None and args.collective is None:
        raise MappingError(f"plot {args.kind} needs --graph GRAPH or --collective C --procs P")


def _read_times(path):
    """``(document, sizes, {"original": times, "mapped": times})`` of a ``simulate --json`` file; any
    problem (not a regular file, not UTF-8, not JSON, NaN, another structure) is a FormatError."""
    import math
    import os

    from .._textio import read_text
    from ..formats.json_format import load_json

    if not os.path.exists(path):
        raise FormatError("no such file", path=path)
    # a simulate --json document is a few kilobytes
    text = read_text(path, limit=64 << 20, hint=": not the output of 'libtopomap simulate --json'")
    data = load_json(text, path=path)

    def numbers(x, what, positive=False):
        if not isinstance(x, list) or not x or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                and (v > 0 if positive else v >= 0) for v in x):
            raise FormatError(f"{what} must be a non-empty list of {'positive' if positive else 'non-negative'} "
                              "numbers: not the output of 'libtopomap simulate --json'", path=path)
        return x
    if not isinstance(data, dict):
        raise FormatError("expected an object: not the output of 'libtopomap simulate --json'", path=path)
    sizes = numbers(data.get("sizes"), '"sizes"', positive=True)
    times = {}
    for key in ("original", "mapped"):
        part = data.get(key)
        t = numbers(part.get("times") if isinstance(part, dict) else None, f'"{key}": {{"times"}}')
        if len(t) != len(sizes):
            raise FormatError(f'"{key}" has {len(t)} times for {len(sizes)} sizes', path=path)
        times[key] = t
    return data, sizes, times


def _check_routing(args):
    """``--routing`` other than ``ecmp`` applies to ``loads`` (model loads) and ``hops`` only."""
    routing = getattr(args, "routing", "ecmp")
    if routing == "ecmp":
        return
    if args.kind == "hops" or (args.kind == "loads" and args.load == "ecmp"):
        return
    what = "plot loads --load simgrid draws SimGrid's loads" if args.kind == "loads" else \
        f"plot {args.kind} does not draw routed loads or hops"
    raise ArgumentError(f"--routing {routing}: {what}; --routing applies to plot loads (--load ecmp) and plot hops")


def _check_output(stem):
    """An output folder that does not exist is an error, not created: a typo would scatter files."""
    import os

    d = os.path.dirname(stem)
    if d and not os.path.isdir(d):
        raise ArgumentError(f"-o {stem}: folder {d!r} does not exist (create it first)")


def run(args):
    stem = args.output or f"libtopomap-{args.kind}"
    _check_output(stem)
    _check_routing(args)
    try:
        from .. import plot as P
    except ImportError as e:  # pragma: no cover - plot itself needs numpy/scipy only
        raise LibTopoMapError(f"plot: {e}") from None
    P.require_matplotlib()
    if args.kind == "adjacency":
        if args.topology is None and args.graph is None and args.collective is None:
            raise MappingError("plot adjacency needs --topology, --graph/--collective, or both")
        topo = None
        graph = None
        if args.topology is not None:
            from ..loading import load as read

            topo = read(args.topology)
        if args.graph is not None:
            from ..patterns import load_graph

            graph = load_graph(args.graph)
        elif args.collective is not None:
            from ..collectives import schedule, schedule_graph

            _require(args, "procs")
            graph = schedule_graph(schedule(args.collective, args.procs, root=args.root), args.procs)
        fig = P.plot_adjacency(topo, graph, title=args.title)
    elif args.kind == "times" and args.from_json:
        data, sizes, times = _read_times(args.from_json)
        notes = data.get("placements")
        if notes is not None and not (isinstance(notes, dict) and all(isinstance(v, str) for v in notes.values())):
            notes = None
        fig = P.plot_times(sizes, times, title=args.title or f"{data.get('communication', '')} on "
                           f"{data.get('topology', '')}", notes=notes)
    else:
        _need_workload(args)
        w = resolve_workload(args)
        notes = {"original": w.original_label, "mapped": w.mapped_label}
        title = args.title
        from ..routing import get_routing

        routing = get_routing(getattr(args, "routing", "ecmp"), w.topology)
        routing.check(w.topology)
        under = "" if routing.name == "ecmp" else f" ({routing.name} routing)"
        if args.kind == "hops":
            msgs = w.messages(1)
            fig = P.plot_hops(w.topology, msgs, {"original": w.original, "mapped": w.mapped},
                              weighted=args.weighted, routing=routing,
                              title=title or f"Hops per message{under}: {w.description}")
        elif args.kind == "loads":
            if args.load == "ecmp":
                import numpy as np

                from ..metrics import link_traffic
                from ..commgraph import CommGraph

                allm = np.concatenate(w.messages(1))
                g = CommGraph(w.nprocs, allm[:, 0], allm[:, 1], allm[:, 2].astype(np.float64))
                loads = [link_traffic(w.topology, g, v, routing=routing) / w.topology.arc_capacity
                         for v in (w.original, w.mapped)]
                label = ("ECMP" if routing.name == "ecmp" else f"{routing.name} routing") + \
                    " load (messages per unit capacity)"
            else:
                from ..simulate import compare

                res = compare(w.topology, w.communication, w.original, w.mapped, sizes=[1024],
                              bandwidth=args.bandwidth, latency=args.latency, root=w.root)
                loads = [res["original"].link_load, res["mapped"].link_load]
                label = "load on SimGrid's shortest paths (messages per unit capacity)"
            fig = P.plot_link_loads(w.topology, loads, titles=["original", "mapped"],
                                    placements=[w.original, w.mapped], label=label,
                                    title=title or f"Link load{under}: {w.description}", dims=args.dims)
        else:  # times, simulated now
            from ..simulate import compare, parse_sizes

            sizes = parse_sizes(args.sizes)
            res = compare(w.topology, w.communication, w.original, w.mapped, sizes=sizes,
                          bandwidth=args.bandwidth, latency=args.latency, root=w.root)
            fig = P.plot_times(sizes, {"original": res["original"].times, "mapped": res["mapped"].times},
                               title=title or f"{w.description} on {w.topology.name or args.topology}", notes=notes)
    files = P.save(fig, stem)
    print("wrote " + ", ".join(files))
    return 0
