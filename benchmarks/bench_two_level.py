"""Two-level mapping: a generated network x a recorded node hierarchy (issue 16).

Machines: a fat tree (``fattree(4, 2)``, 16 hosts) and a dragonfly (``dragonfly(5, 4, 2, 1)``, 40
hosts), each host being the recorded two-socket node of ``tests/data/auto/hwloc2_2pkg_16pu.xml``
with one process per core (SMT off: 2 packages x 2 L3 x 2 cores, 8 cores), built by
:func:`libtopomap.autotopo.with_nodes`.  One process per core (128 and 320 processes).

Patterns: a 3D 7-point stencil on the most cubic grid of ``P`` points and the recursive-doubling
allreduce (MPICH order; the communication graph of all its steps), both with their process labels
permuted at random (``--seed``), so that rank order says nothing about who talks to whom (as in
``bench_quality.py``); ``identity`` is then a random placement.

Mappings (all evaluated on the two-level topology):

* ``identity``: rank ``r`` on the ``r``-th core, nodes filled in order (``mpiexec --bind-to core``);
* ``network-only``: the strategy maps onto the network alone (each host with 8 slots), then the
  processes of a host take its cores in rank order (what a network-only mapper leaves to the launcher);
* ``network+node-tree``: treematch's idea on top: the same hosts, then on each host the processes are
  mapped onto the node's tree alone (the same strategy on the one-host two-level topology);
* ``two-level``: the strategy maps onto the whole two-level topology at once.

Columns: traffic (messages, each weighted by its graph weight) between two sockets of one node and
between two nodes, the maximum network congestion (ECMP traffic / capacity on the links between
hosts and switches, intra-node links left out) and the maximum congestion over every link, hop-bytes
on the two-level topology, and seconds (noisy on a shared 2-core machine).  Table on stdout, JSON in
``benchmarks/results/two_level.json``.

Usage::

    python benchmarks/bench_two_level.py [--strategy all|greedy|recursive|...] [--quick]
    mpiexec -n 8 -bind-to core python benchmarks/bench_two_level.py --mpi [--sizes 8,1K,64K] [--iterations 100]

``--mpi`` (under ``mpiexec``, ranks bound to cores; ``-bind-to core`` is MPICH hydra's spelling):
real timings instead of the model.  For each pattern over the job's ranks (the same scrambled 3D
stencil and recursive-doubling allreduce graphs), ``Neighbor_alltoall`` on the graph's
distributed-graph communicator is timed (:func:`libtopomap.mpi.bench.compare`, results checked equal)
in launch order and reordered by :func:`libtopomap.Create_dist_graph_adjacent` with

* ``network-only``: the job's network alone (its hosts under one switch, each host with as many slots
  as it has ranks), which is what ``topology="auto"`` finds here without the node's inside;
* ``two-level``: ``topology="auto"``, the same network with each node's packages, NUMA domains, L3
  groups and cores below it, and each rank on the core it is bound to.

The table gives the portfolio's winner, the model's congestion before/after on the topology mapped
onto, and the average (over ranks) of the per-call latency, median of ``--repeat`` runs, in launch
order and reordered.  JSON in ``benchmarks/results/two_level_mpi.json``.

``--scale 4096,32768`` (issue 11): time and peak memory of the two-level mapping itself at scale.  For
each host count ``k**3`` the fat tree ``fattree(k, 3)``, every host a node of 2 packages x 8 cores (16
processes per host: 65,536 and 524,288), a scrambled 3-D stencil, ``map_processes(strategy=...)``
(default greedy) in a fresh child process: seconds to build the machine, seconds to map (the network
step, the per-host step and the whole call), and the child's peak RSS (``ru_maxrss``).  Table on
stdout, JSON in ``benchmarks/results/two_level_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

import numpy as np

import libtopomap as ltm
from libtopomap.autotopo import with_nodes
from libtopomap.collectives.schedules import recursive_doubling_allreduce, schedule_graph
from libtopomap.commgraph import CommGraph
from libtopomap.mappers import map_processes
from libtopomap.nodeinside import NodeInside, parse_hwloc_xml
from libtopomap.patterns import stencil_dims

HERE = pathlib.Path(__file__).resolve().parent
NODE_XML = HERE.parent / "tests" / "data" / "auto" / "hwloc2_2pkg_16pu.xml"


def recorded_node():
    """The recorded node with one PU per core (SMT off)."""
    full = parse_hwloc_xml(NODE_XML.read_text())
    keep = [i for i, c in enumerate(full.cpus) if c < 8]
    return NodeInside(tuple(full.cpus[i] for i in keep), {k: tuple(v[i] for i in keep)
                                                         for k, v in full.labels.items()}, full.source)


def machines(quick):
    yield "fattree(4,2)", ltm.fattree(4, 2)
    if not quick:
        yield "dragonfly(5,4,2,1)", ltm.dragonfly(5, 4, 2, 1)


def scrambled(graph, seed):
    """``graph`` with its process labels permuted at random (``seed``): rank order says nothing."""
    perm = np.random.default_rng(seed).permutation(graph.n)
    return CommGraph(graph.n, perm[graph.src], perm[graph.dst], graph.weights)


def patterns(p, seed):
    dims = "x".join(map(str, stencil_dims(p, 3)))
    yield f"stencil3d {dims}", scrambled(ltm.stencil(dims), seed)
    yield "allreduce-rd", scrambled(schedule_graph(recursive_doubling_allreduce(p), p), seed)


class Machine:
    """The two-level topology and, per core vertex, its host and package."""

    def __init__(self, network, node):
        self.network = network
        self.node = node
        self.topo = with_nodes(network, node)
        names, kinds = self.topo.names, self.topo.kinds
        self.cores = np.array([v for v in range(self.topo.n_vertices) if kinds[v] == "core"], dtype=np.int64)
        package_of_core = self._packages(node)
        self.host_of = np.full(self.topo.n_vertices, -1, np.int64)
        self.package_of = np.full(self.topo.n_vertices, -1, np.int64)
        for v in self.cores:
            host, _, core = names[v].rpartition(":core-")
            self.host_of[v] = network.index(host)
            self.package_of[v] = package_of_core[int(core)]
        inside = np.array([k not in ("host", "switch") for k in kinds])
        self.network_arc = ~(inside[self.topo.arc_source] | inside[self.topo.indices])
        # the network alone, each host with as many slots as cores
        self.flat = ltm.Topology(network.names, np.stack([network.link_u, network.link_v], 1),
                                 capacities=network.capacity, slots=np.where(network.slots > 0, len(node.cpus), 0),
                                 kinds=network.kinds, name=network.name, attrs=network.attrs)
        one = ltm.Topology(["h"], np.zeros((0, 2), np.int64), slots=[1])
        self.node_topo = with_nodes(one, node)
        self.node_cores = np.array([v for v in range(self.node_topo.n_vertices)
                                    if self.node_topo.kinds[v] == "core"], dtype=np.int64)

    @staticmethod
    def _packages(node):
        groups = node.groups()
        idx = {level: i for i, (level, *_rest) in enumerate(groups)}
        out = []
        for k in range(len(groups[-1][1])):
            i, level = k, len(groups) - 1
            while level > idx["package"]:
                i = groups[level][2][i]
                level -= 1
            out.append(i)
        return out

    def core_vertex(self, host_vertex, k):
        return self.topo.index(f"{self.network.names[host_vertex]}:core-{k}")

    def from_hosts(self, hosts_of_process, order_within):
        """Core of each process from its host and its order within the host (``order_within[p]``)."""
        return np.array([self.core_vertex(h, k) for h, k in zip(hosts_of_process, order_within)], np.int64)

    def measure(self, graph, mapping):
        m = np.asarray(mapping, np.int64)
        src, dst, w = m[graph.src], m[graph.dst], graph.weights
        same_host = self.host_of[src] == self.host_of[dst]
        across_nodes = float(w[~same_host].sum())
        across_sockets = float(w[same_host & (self.package_of[src] != self.package_of[dst])].sum())
        load = ltm.link_traffic(self.topo, graph, m) / self.topo.arc_capacity
        return {"across_sockets": across_sockets, "across_nodes": across_nodes,
                "network_congestion": float(load[self.network_arc].max(initial=0.0)),
                "max_congestion": float(load.max(initial=0.0)),
                "hop_bytes": float(ltm.hop_bytes(self.topo, graph, m))}


def _within(graph, members, mach, strategy, seed):
    """Map the processes ``members`` of one host onto the node's tree (treematch's idea)."""
    pos = {int(p): i for i, p in enumerate(members)}
    keep = np.array([s in pos and d in pos for s, d in zip(graph.src.tolist(), graph.dst.tolist())], bool)
    if not keep.any():
        return np.arange(len(members))
    sub = CommGraph(len(members), [pos[s] for s in graph.src[keep].tolist()],
                    [pos[d] for d in graph.dst[keep].tolist()], graph.weights[keep])
    slots = np.zeros(mach.node_topo.n_vertices, np.int64)
    slots[mach.node_cores] = 1
    return np.searchsorted(mach.node_cores, best_map(mach.node_topo, sub, strategy, seed, slots=slots))


PORTFOLIO = ("greedy", "rcm", "recursive", "multisection", "scotch")


def best_map(topo, graph, strategy, seed, **kw):
    """``map_processes`` with ``strategy``, or with ``"all"`` the best of :data:`PORTFOLIO` on ``topo``
    by (max congestion, hop-bytes): the portfolio's objective, measured on the topology mapped onto."""
    if strategy != "all":
        return np.asarray(map_processes(topo, graph, strategy=strategy, seed=seed, **kw).vertices, np.int64)
    best, key = None, None
    for s in PORTFOLIO:
        v = np.asarray(map_processes(topo, graph, strategy=s, seed=seed, **kw).vertices, np.int64)
        k = (round(float(ltm.max_congestion(topo, graph, v)), 9), float(ltm.hop_bytes(topo, graph, v)))
        if key is None or k < key:
            best, key = v, k
    return best


def mappings(mach, graph, strategy, seed):
    p = graph.n
    t = time.perf_counter()
    yield "identity", mach.cores[:p], time.perf_counter() - t
    t = time.perf_counter()
    hosts = best_map(mach.flat, graph, strategy, seed)
    order = np.zeros(p, np.int64)
    for h in np.unique(hosts):
        members = np.flatnonzero(hosts == h)
        order[members] = np.arange(members.size)
    net_seconds = time.perf_counter() - t
    yield "network-only", mach.from_hosts(hosts, order), net_seconds
    t = time.perf_counter()
    for h in np.unique(hosts):
        members = np.flatnonzero(hosts == h)
        order[members] = _within(graph, members, mach, strategy, seed)
    yield "network+node-tree", mach.from_hosts(hosts, order), net_seconds + time.perf_counter() - t
    t = time.perf_counter()
    yield "two-level", best_map(mach.topo, graph, strategy, seed), time.perf_counter() - t


def network_only(comm):
    """The job's hosts under one switch, each with as many slots as it runs ranks (no node inside)."""
    from mpi4py import MPI

    names = comm.allgather(MPI.Get_processor_name().split(".")[0])
    hosts = sorted(set(names))
    links = np.array([[0, k + 1] for k in range(len(hosts))], np.int64).reshape(-1, 2)
    return ltm.Topology(["switch-0"] + hosts, links, slots=[0] + [names.count(h) for h in hosts],
                        kinds=["switch"] + ["host"] * len(hosts), name="network-only")


def mpi_main(args):
    """``--mpi``: timed ``Neighbor_alltoall`` in launch order and reordered, network-only vs two-level."""
    from mpi4py import MPI

    from libtopomap.mpi import Create_dist_graph_adjacent, report
    from libtopomap.mpi.bench import compare, graph_lists, parse_size

    comm = MPI.COMM_WORLD
    rank, p = comm.Get_rank(), comm.Get_size()
    sizes = [parse_size(x) for x in args.sizes.split(",")]
    flat = network_only(comm)
    binding = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    bindings = comm.gather(binding)
    rows = []
    if rank == 0:
        print(f"{p} ranks under mpiexec on {os.cpu_count()} CPUs (bindings {bindings}); "
              f"{args.iterations} calls per size, median of {args.repeat} runs; load {os.getloadavg()[0]:.1f}")
        head = (f"{'pattern':<20} {'mapping':<13} {'winner':<22} {'cong before':>11} {'after':>7} "
                + "".join(f"{'launch ' + f:>12} {'mapped ' + f:>12}" for f in args.sizes.split(",")))
        print(head)
        print("-" * len(head))
    for pname, graph in patterns(p, args.seed):
        src, dst, sw, dw = graph_lists(graph, rank)
        original = comm.Create_dist_graph_adjacent(src, dst, sw, dw, reorder=False)
        for label, topology in (("network-only", flat), ("two-level", "auto")):
            mapped = Create_dist_graph_adjacent(comm, src, dst, sw, dw, reorder=True, topology=topology,
                                                seed=args.seed)
            rep = report(mapped)
            runs = [compare(original, mapped, "neighbor_alltoall", sizes, iterations=args.iterations)
                    for _ in range(args.repeat)]
            med = {which: [float(np.median([run[k][which]["avg_us"] for run in runs])) for k in range(len(sizes))]
                   for which in ("original", "reordered")}
            r = {"pattern": pname, "mapping": label, "winner": rep.strategy,
                 "congestion_before": rep.before.get("max_congestion"),
                 "congestion_after": rep.after.get("max_congestion"),
                 "sizes": sizes, "launch_us": med["original"], "mapped_us": med["reordered"]}
            rows.append(r)
            if rank == 0:
                print(f"{pname:<20} {label:<13} {str(rep.strategy):<22} {r['congestion_before']:>11.3g} "
                      f"{r['congestion_after']:>7.3g} "
                      + "".join(f"{a:>12.1f} {b:>12.1f}" for a, b in zip(med["original"], med["reordered"])))
            mapped.Free()
        original.Free()
    if rank == 0:
        out = pathlib.Path(args.json if args.json != DEFAULT_JSON else str(HERE / "results" / "two_level_mpi.json"))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"processes": p, "cpus": os.cpu_count(), "bindings": bindings,
                                   "iterations": args.iterations, "repeat": args.repeat, "seed": args.seed,
                                   "loadavg": os.getloadavg(), "rows": rows}, indent=1) + "\n")
        print(f"JSON: {out}")
    return 0


DEFAULT_JSON = str(HERE / "results" / "two_level.json")


SCALE_NODE = NodeInside(tuple(range(16)), {"package": (0,) * 8 + (1,) * 8, "core": tuple(range(16))})


def scale_child(hosts, strategy, seed):
    """One ``--scale`` measurement (in its own process): prints one JSON line."""
    import resource

    from libtopomap.mappers import two_level
    from libtopomap.patterns import scrambled_torus

    k = round(hosts ** (1 / 3))
    if k ** 3 != hosts:
        raise SystemExit(f"--scale: {hosts} hosts is not a cube k**3")
    warm = with_nodes(ltm.fattree(4, 2), SCALE_NODE)  # numba caches and imports, untimed
    map_processes(warm, scrambled_torus(stencil_dims(warm.total_slots), seed=seed), strategy=strategy, seed=seed)
    t0 = time.perf_counter()
    topo = with_nodes(ltm.fattree(k, 3), SCALE_NODE)
    graph = scrambled_torus(stencil_dims(topo.total_slots), seed=seed)
    t1 = time.perf_counter()
    split = {"network_s": 0.0, "hosts_s": 0.0, "host_calls": 0}
    inner = two_level.map_two_level

    def timed(topology, g, construct, **kw):  # the network step is the first construct call
        def c(t, sub, sl):
            a = time.perf_counter()
            r = construct(t, sub, sl)
            key = "hosts_s" if split["network_s"] else "network_s"
            split[key] += time.perf_counter() - a
            split["host_calls"] += key == "hosts_s"
            return r
        return inner(topology, g, c, **kw)

    import libtopomap.mappers as mappers
    mappers.map_two_level = timed
    try:
        t2 = time.perf_counter()
        m = map_processes(topo, graph, strategy=strategy, seed=seed)
        t3 = time.perf_counter()
    finally:
        mappers.map_two_level = inner
    v = np.asarray(m.vertices)
    ok = bool(np.all(np.bincount(v, minlength=topo.n_vertices) <= np.asarray(topo.slots)))
    print(json.dumps({"hosts": hosts, "processes": int(graph.n), "vertices": topo.n_vertices, "strategy": strategy,
                      "build_s": t1 - t0, "map_s": t3 - t2, **split, "rest_s": t3 - t2 - split["network_s"]
                      - split["hosts_s"], "valid": ok,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
    return 0


def scale_main(args):
    import subprocess
    import sys

    strategy = "greedy" if args.strategy == "all" else args.strategy
    rows = []
    head = (f"{'hosts':>7} {'processes':>10} {'strategy':<10} {'build s':>8} {'map s':>8} {'network s':>10} "
            f"{'hosts s':>8} {'rest s':>7} {'peak MiB':>9} {'load':>5}")
    print(head)
    print("-" * len(head))
    for hosts in [int(x) for x in args.scale.split(",")]:
        load = os.getloadavg()[0]
        done = subprocess.run([sys.executable, __file__, "--scale-child", str(hosts), strategy, "--seed",
                               str(args.seed)], capture_output=True, text=True)
        if done.returncode:
            print(f"{hosts:>7} failed: {done.stderr.strip().splitlines()[-1:]}")
            rows.append({"hosts": hosts, "strategy": strategy, "error": done.stderr[-2000:]})
            continue
        r = {**json.loads(done.stdout.strip().splitlines()[-1]), "load": [load, os.getloadavg()[0]]}
        rows.append(r)
        print(f"{hosts:>7} {r['processes']:>10} {strategy:<10} {r['build_s']:>8.2f} {r['map_s']:>8.2f} "
              f"{r['network_s']:>10.2f} {r['hosts_s']:>8.2f} {r['rest_s']:>7.2f} {r['peak_rss_mib']:>9.0f} "
              f"{load:>5.1f}")
    out = pathlib.Path(args.json if args.json != DEFAULT_JSON else HERE / "results" / "two_level_scale.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"node": SCALE_NODE.to_dict(), "cpus": os.cpu_count(), "rows": rows}, indent=1) + "\n")
    print(f"JSON: {out}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strategy", default="all",
                    help="a mapping strategy, or 'all' (default): the best of greedy, rcm, recursive, multisection "
                         "and scotch by (max congestion, hop-bytes) on the topology each approach maps onto")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="the fat tree only")
    ap.add_argument("--json", default=DEFAULT_JSON, help="JSON output path (with --mpi: two_level_mpi.json)")
    ap.add_argument("--mpi", action="store_true", help="real timings under mpiexec (see the module docstring)")
    ap.add_argument("--sizes", default="8,1K,64K", help="--mpi: bytes per neighbour (default 8,1K,64K)")
    ap.add_argument("--iterations", type=int, default=100, help="--mpi: timed calls per size (default 100)")
    ap.add_argument("--repeat", type=int, default=5, help="--mpi: runs per size, the median kept (default 5)")
    ap.add_argument("--scale", metavar="HOSTS", help="time and peak RSS of the two-level mapping at these host "
                                                     "counts (cubes, e.g. 4096,32768; see the module docstring)")
    ap.add_argument("--scale-child", nargs=2, metavar=("HOSTS", "STRATEGY"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.mpi:
        return mpi_main(args)
    if args.scale_child:
        return scale_child(int(args.scale_child[0]), args.scale_child[1], args.seed)
    if args.scale:
        return scale_main(args)
    node = recorded_node()
    rows = []
    head = (f"{'machine':<20} {'pattern':<20} {'mapping':<18} {'x-socket':>9} {'x-node':>9} {'net.cong':>9} "
            f"{'max.cong':>9} {'hop-bytes':>10} {'s':>6}")
    print(f"strategy {args.strategy}, seed {args.seed}, node {'x'.join(node.levels)} "
          f"({len(node.cpus)} cores, {NODE_XML.name} without SMT)")
    print(head)
    print("-" * len(head))
    for mname, network in machines(args.quick):
        mach = Machine(network, node)
        p = mach.cores.size
        for pname, graph in patterns(p, args.seed):
            for label, mapping, seconds in mappings(mach, graph, args.strategy, args.seed):
                r = {"machine": mname, "processes": int(p), "pattern": pname, "mapping": label,
                     "strategy": args.strategy, **mach.measure(graph, mapping), "seconds": seconds}
                rows.append(r)
                print(f"{mname:<20} {pname:<20} {label:<18} {r['across_sockets']:>9.0f} {r['across_nodes']:>9.0f} "
                      f"{r['network_congestion']:>9.2f} {r['max_congestion']:>9.2f} {r['hop_bytes']:>10.0f} "
                      f"{seconds:>6.2f}")
    out = pathlib.Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"node": node.to_dict(), "strategy": args.strategy, "seed": args.seed,
                               "rows": rows}, indent=1) + "\n")
    print(f"JSON: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
