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
"""

from __future__ import annotations

import argparse
import json
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
                                 kinds=network.kinds, name=network.name)
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strategy", default="all",
                    help="a mapping strategy, or 'all' (default): the best of greedy, rcm, recursive, multisection "
                         "and scotch by (max congestion, hop-bytes) on the topology each approach maps onto")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="the fat tree only")
    ap.add_argument("--json", default=str(HERE / "results" / "two_level.json"), help="JSON output path")
    args = ap.parse_args(argv)
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
