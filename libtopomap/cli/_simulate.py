"""``libtopomap simulate``: SimGrid-simulated time of the original and the mapped placement.

``libtopomap simulate --topology FILE (--graph GRAPH | --collective C --procs P)
[--placement ... | --mapping FILE | --strategy ...] [--sizes 1K,64K,1M] [--bandwidth 100Gbps]
[--latency 100ns] [--json]``

The workload options (topology, communication, original and mapped placement) are shared with
``libtopomap plot`` through :func:`add_workload_args` and :func:`resolve_workload`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._textio import content_lines
from ..errors import ArgumentError, FormatError, MappingError
from ..loading import load as read
from ..vocabulary import COLLECTIVES, ROUTINGS
from ._options import add_routing_option, non_negative_int, positive_int
from ._progress import add_quiet, for_command

if TYPE_CHECKING:  # numpy is imported when a workload is resolved, not when the parser is built
    import numpy as np

__all__ = ["add_parser", "run", "add_workload_args", "resolve_workload", "Workload", "read_mapping_file"]


@dataclass
class Workload:
    """What to simulate or draw: ``communication`` is a graph or a collective name."""

    topology: object
    communication: object
    nprocs: int
    original: np.ndarray
    mapped: np.ndarray
    original_label: str
    mapped_label: str
    description: str
    root: int = 0

    def messages(self, size=1):
        from ..simulate import message_steps

        return message_steps(self.communication, self.nprocs, size, root=self.root)


def add_workload_args(p, *, placements=True):
    """Add ``--topology``, ``--graph``/``--collective``/``--procs`` and the placement options."""
    p.add_argument("--topology", required=True, metavar="FILE",
                   help="topology file (LibTopoMap text, JSON, ibnetdiscover, ...; see 'libtopomap generate')")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--graph", metavar="GRAPH",
                      help="communication graph replayed as one halo exchange: stencil:16x16, random:P:D:SEED, "
                           "an edge-list file or a Matrix Market file")
    what.add_argument("--collective", choices=COLLECTIVES,
                      help="a collective replayed step by step (binomial bcast, recursive-doubling allreduce, "
                           "Bruck alltoall, ring allgather)")
    p.add_argument("--procs", type=positive_int, metavar="P", help="number of ranks of the collective")
    p.add_argument("--root", type=non_negative_int, default=0, help="root of bcast (default 0)")
    if not placements:
        return
    p.add_argument("--placement", metavar="HOW",
                   help="original placement: for a graph 'identity' (default: slots in vertex order) or "
                        "'random'; for a collective an allocation 'ascending' (default), 'random', 'tree', "
                        "'ring' or 'circulant' with ranks in allocation order; or a mapping file")
    mapped = p.add_mutually_exclusive_group()
    mapped.add_argument("--mapping", metavar="FILE",
                        help="mapped placement from a file ('process vertex' or 'vertex' lines, as written by "
                             "'libtopomap map --output', or a JSON list)")
    mapped.add_argument("--strategy", metavar="S",
                        help="mapped placement computed: for a graph a mapping strategy (identity, random, greedy, "
                             "rcm, recursive, scotch; '+two-opt' or '+ta' refines; default greedy); for a "
                             "collective a rank placement 'two-opt' (default) or 'anneal' over the allocated "
                             "nodes, or a mapping strategy on the schedule's graph")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of random placements and searches (default 0)")
    p.add_argument("--iterations", type=non_negative_int, default=200_000,
                   help="swaps tried by two-opt/anneal rank placement (default 200000, as in Cui 2024)")


def read_mapping_file(path, topology, nprocs=None):
    """Vertex of each process from a file: JSON list (names or indices) or ``[process] vertex`` lines."""
    import numpy as np

    from .._textio import read_text

    text = read_text(path)
    stripped = text.lstrip()
    items = []
    if stripped.startswith("[") or stripped.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise FormatError(f"bad JSON: {e.msg}", path=path, line=e.lineno) from None
        if isinstance(data, dict):
            data = data.get("vertices", data.get("mapping"))
        if not isinstance(data, list):
            raise FormatError("expected a JSON list of vertices (or {'vertices': [...]})", path=path)
        items = [(i, x, None) for i, x in enumerate(data)]
    else:
        seq = 0
        for lineno, line in content_lines(text):
            parts = line.split()
            if len(parts) == 1:
                items.append((seq, parts[0], lineno))
            elif len(parts) == 2:
                try:
                    proc = int(parts[0])
                except ValueError:
                    raise FormatError(f"process number expected, got {parts[0]!r}", path=path, line=lineno) from None
                items.append((proc, parts[1], lineno))
            else:
                raise FormatError("expected 'vertex' or 'process vertex'", path=path, line=lineno)
            seq += 1
    n = len(items)
    vert = np.full(n, -1, dtype=np.int64)
    for proc, v, lineno in items:
        if not 0 <= proc < n or vert[proc] != -1:
            raise FormatError(f"process {proc} is out of range 0..{n - 1} or given twice", path=path, line=lineno)
        if isinstance(v, str) and v in topology:
            vert[proc] = topology.index(v)
        else:
            try:
                idx = int(v)
            except (TypeError, ValueError, OverflowError):  # OverflowError: a JSON number such as 1e999
                raise FormatError(f"unknown vertex {v!r}", path=path, line=lineno) from None
            if not 0 <= idx < topology.n_vertices:
                raise FormatError(f"vertex index {idx} outside 0..{topology.n_vertices - 1}", path=path, line=lineno)
            vert[proc] = idx
    if nprocs is not None and n != nprocs:
        raise MappingError(f"{path}: {n} processes in the mapping file, {nprocs} in the communication")
    return vert


def _graph_placement(topology, graph, how, seed, current=None):
    import numpy as np

    from ..mappers import map_processes

    strategy, _, refine = how.partition("+")
    m = map_processes(topology, graph, strategy=strategy, refine=refine or None, seed=seed, placement=current)
    return m.vertices.astype(np.int64), m.strategy or how


def resolve_workload(args, *, need_mapped=True):
    """Read the topology and communication and compute both placements from parsed arguments."""
    import numpy as np

    topology = read(args.topology)
    root = getattr(args, "root", 0) or 0
    placement_opt = getattr(args, "placement", None)
    mapping_opt = getattr(args, "mapping", None)
    strategy_opt = getattr(args, "strategy", None)
    seed = getattr(args, "seed", 0)
    if args.graph is not None:
        from ..patterns import load_graph

        graph = load_graph(args.graph)
        nprocs = graph.n
        if args.procs is not None and args.procs != nprocs:
            raise MappingError(f"--procs {args.procs} but the graph {args.graph!r} has {nprocs} processes")
        how = placement_opt or "identity"
        if how in ("identity", "random"):
            original, olabel = _graph_placement(topology, graph, how, seed)
        elif os.path.exists(how):
            original, olabel = read_mapping_file(how, topology, nprocs), os.path.basename(how)
        else:
            raise ArgumentError(f"--placement {how!r}: expected identity, random or a mapping file")
        if mapping_opt:
            mapped, mlabel = read_mapping_file(mapping_opt, topology, nprocs), os.path.basename(mapping_opt)
        elif need_mapped:
            mapped, mlabel = _graph_placement(topology, graph, strategy_opt or "greedy", seed, current=original)
        else:
            mapped, mlabel = original, olabel
        desc = f"halo exchange of {args.graph} ({nprocs} processes, {graph.n_edges} messages)"
        return Workload(topology, graph, nprocs, original, mapped, olabel, mlabel, desc, root)

    from ..collectives import schedule, schedule_graph
    from ..collectives.allocation import ALLOCATIONS, allocate

    if args.procs is None:
        raise ArgumentError("--collective needs --procs P")
    nprocs = int(args.procs)
    if root >= nprocs:
        raise ArgumentError(f"--root {root} is outside 0..{nprocs - 1} (--procs {nprocs})")
    steps = schedule(args.collective, nprocs, root=root)
    how = placement_opt or "ascending"
    if how in ALLOCATIONS:
        nodes = allocate(topology, nprocs, how, seed=seed)
        olabel = f"{how} allocation, ascending ranks"
    elif os.path.exists(how):
        nodes = read_mapping_file(how, topology, nprocs)
        olabel = os.path.basename(how)
    else:
        raise ArgumentError(f"--placement {how!r}: expected one of {', '.join(ALLOCATIONS)} or a mapping file")
    original = np.asarray(nodes, dtype=np.int64)
    if mapping_opt:
        mapped, mlabel = read_mapping_file(mapping_opt, topology, nprocs), os.path.basename(mapping_opt)
    elif not need_mapped:
        mapped, mlabel = original, olabel
    else:
        strat = strategy_opt or "two-opt"
        if strat in ("two-opt", "anneal"):
            from ..collectives.rank_placement import optimize_ranks

            res = optimize_ranks(topology, original, steps, objective="hops", optimizer=strat,
                                 iterations=args.iterations, seed=seed)
            mapped = original[res.permutation]
            mlabel = f"{strat} rank placement ({args.iterations} swaps, hops {res.cost_before} -> {res.cost_after})"
        else:
            slots = np.zeros(topology.n_vertices, dtype=np.int64)
            np.add.at(slots, original, 1)
            from ..mappers import map_processes

            s, _, refine = strat.partition("+")
            m = map_processes(topology, schedule_graph(steps, nprocs), strategy=s, refine=refine or None,
                              slots=slots, seed=seed, placement=original)
            mapped, mlabel = m.vertices.astype(np.int64), f"{m.strategy or strat} on the allocated nodes"
    n_msg = sum(len(s) for s in steps)
    desc = f"{args.collective} on {nprocs} ranks ({len(steps)} steps, {n_msg} messages)"
    return Workload(topology, args.collective, nprocs, original, mapped, olabel, mlabel, desc, root)


def add_parser(sub):
    p = sub.add_parser(
        "simulate", help="SimGrid-simulated time of the original and the mapped placement",
        description="Build a SimGrid platform from the topology (one host per slot vertex, one full-duplex link "
                    "per link with bandwidth x capacity, switches as routers), replay the communication for the "
                    "original and the mapped placement and print simulated times and speed-ups per message "
                    "size, with hop counts and the maximum link load on SimGrid's single shortest paths next to "
                    "the ECMP model's maximum congestion.")
    add_workload_args(p)
    p.add_argument("--sizes", default="1K,64K,1M",
                   help="message sizes, comma-separated, binary prefixes (default 1K,64K,1M); a graph's heaviest "
                        "edge carries this size, Bruck alltoall moves blocks of this size")
    p.add_argument("--bandwidth", help="bandwidth of a capacity-1 link (default: an ingested fabric's own link "
                   "rates, its capacities being Gb/s; else 100Gbps)")
    p.add_argument("--latency", default="100ns", help="latency of every link (default 100ns)")
    p.add_argument("--routing", default="auto", choices=ROUTINGS,
                   help="SimGrid routing: explicit shortest paths (auto), DijkstraCache or Floyd zones, or a "
                        "dragonfly's minimal routes (minimal)")
    add_routing_option(p, "--load-routing", dest="load_routing")  # --routing is SimGrid's
    p.add_argument("--model", default="CM02", help="SimGrid network model (default CM02)")
    p.add_argument("--repeat", type=positive_int, default=1, help="run the communication this many times (default 1)")
    p.add_argument("--jobs", type=positive_int, help="simulations run in parallel (default: CPU count)")
    p.add_argument("--plot", metavar="STEM", help="also draw time vs size to STEM.png and STEM.svg")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_quiet(p)
    return p


def _fmt_time(t):
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if t >= f or unit == "ns":
            return f"{t / f:.4g} {unit}"
    return f"{t:g} s"  # pragma: no cover


def run(args):
    from ..simulate import compare, parse_bandwidth, parse_latency, parse_sizes, unit_bandwidth

    # bad values raise ArgumentError: a usage error (exit 2)
    sizes = parse_sizes(args.sizes)
    if args.bandwidth is not None:
        parse_bandwidth(args.bandwidth)
    latency = parse_latency(args.latency)
    with for_command(args, "simulate") as progress:
        progress.stage("computing the placements")
        w = resolve_workload(args)
        bandwidth = unit_bandwidth(w.topology, args.bandwidth)
        progress.stage(f"SimGrid: {len(sizes)} sizes x 2 placements")
        res = compare(w.topology, w.communication, w.original, w.mapped, sizes=sizes, bandwidth=bandwidth,
                      latency=latency, routing=args.routing, model=args.model, repeat=args.repeat, root=w.root,
                      jobs=args.jobs, load_routing=getattr(args, "load_routing", "ecmp"))
    a, b = res["original"], res["mapped"]
    if args.plot:
        from ..plot import plot_times, save

        fig = plot_times(sizes, {"original": a.times, "mapped": b.times},
                         title=f"{w.description} on {w.topology.name or args.topology}",
                         notes={"original": w.original_label, "mapped": w.mapped_label})
        files = save(fig, args.plot)
    if args.json:
        out = {"topology": w.topology.name or args.topology, "communication": w.description, "procs": w.nprocs,
               "sizes": sizes, "bandwidth_Bps": bandwidth, "latency_s": latency,
               "placements": {"original": w.original_label, "mapped": w.mapped_label},
               "original": a.to_dict(), "mapped": b.to_dict(), "speedup": res["speedup"]}
        print(json.dumps(out))
        return 0
    t = w.topology
    print(f"topology       {t.name or args.topology}: {t.hosts.size} hosts, {t.n_vertices - t.hosts.size} switches, "
          f"{t.n_links} links")
    print(f"communication  {w.description}")
    print(f"original       {w.original_label}")
    print(f"mapped         {w.mapped_label}")
    print(f"SimGrid        {a.simgrid_version}, model {a.model}, routing {a.routing}, "
          f"{bandwidth * 8 / 1e9:g} Gbps per unit of capacity and {latency * 1e9:g} ns per link; "
          f"{a.wall_s + b.wall_s:.1f} s of simulation")
    from ..plot import format_bytes

    print(f"{'size':>10}  {'original':>12}  {'mapped':>12}  {'speed-up':>9}")
    for s, x, y, sp in zip(sizes, a.times, b.times, res["speedup"]):
        print(f"{format_bytes(s):>10}  {_fmt_time(x):>12}  {_fmt_time(y):>12}  {sp:>8.3f}x")
    print(f"{'avg hops':>10}  {a.avg_hops:>12.3f}  {b.avg_hops:>12.3f}")
    paths = "SimGrid's minimal routes" if a.routing == "minimal" else "SimGrid's single shortest paths"
    print(f"{'max load':>10}  {a.max_link_load:>12.4g}  {b.max_link_load:>12.4g}   {paths}")
    model = "ECMP model (all shortest paths)" if a.load_routing == "ecmp" else f"{a.load_routing} routing model"
    print(f"{'max cong.':>10}  {a.max_congestion:>12.4g}  {b.max_congestion:>12.4g}   {model}")
    print("(loads in messages of the simulated size per unit of link capacity)")
    if args.plot:
        print("wrote " + ", ".join(files))
    return 0
