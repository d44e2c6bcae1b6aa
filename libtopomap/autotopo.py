"""``topology="auto"``: the machine from what the processes can see, with no topology file.

Every process contributes a :class:`ProcessRecord` (:func:`probe`); :func:`build` turns the hosts into
a :class:`~libtopomap.Topology` from ``$LIBTOPOMAP_TOPOLOGY``, Slurm, HPE Cray xnames or one switch, with
each node's packages, NUMA domains, L3 groups and cores below its host.  This module never imports
mpi4py (the gather is :func:`libtopomap.mpi.auto.discover`).  The sources in order and the levels:
docs/formats.rst, "How ``auto`` builds the machine".
"""

from __future__ import annotations

import math
import os
import re
import shutil
import socket
import subprocess
import warnings
from dataclasses import dataclass, field

import numpy as np

from .errors import ArgumentError, FormatError, TopologyError
from .nodeinside import LEVELS, NodeInside, binding, format_cpulist, parse_cpulist, read_node
from .vocabulary import SOURCES  # the values of attrs["source"], re-exported here

__all__ = ["AUTO_ENV", "TOPOLOGY_ENV", "SOURCES", "DEFAULT_BANDWIDTHS", "XNAME", "ProcessRecord", "HostRecord",
           "AutoResult", "probe", "host_records", "build", "discover", "launched_by_mpiexec", "parse_scontrol",
           "read_scontrol", "warn_if_guessed", "local_result", "with_nodes"]

#: The variable naming a topology file to use instead of discovering the network.
TOPOLOGY_ENV = "LIBTOPOMAP_TOPOLOGY"
#: Environment variables each process reports.
AUTO_ENV = ("SLURMD_NODENAME", "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN", TOPOLOGY_ENV)
#: Bandwidth (GB/s per direction) of the link from a group of each level to its parent, and of the
#: host's network link: ``package`` is the socket interconnect, ``numa`` a NUMA domain's share of its
#: package, ``l3`` an L3 group's, ``core`` one core's.  A two-socket server with one 200 Gb/s NIC.
DEFAULT_BANDWIDTHS = {"network": 25.0, "package": 64.0, "numa": 100.0, "l3": 200.0, "core": 50.0}
#: An HPE Cray EX node name.
XNAME = re.compile(r"x(\d+)c(\d+)s(\d+)b(\d+)n(\d+)")
_MPIEXEC_ENV = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS")


@dataclass(frozen=True)
class ProcessRecord:
    """What one process sees.

    Parameters
    ----------
    host : str
        Host name (cut at the first ``'.'``).
    binding : str, sequence of int or None
        PUs the process may run on, as a CPU list (``"0-3,8"``, what :func:`probe` reports: a few bytes
        per rank in the gather) or numbers (None: unknown).
    env : dict or None
        The variables of :data:`AUTO_ENV` that are set (None: not reported, another process of the
        host reports them).
    node : NodeInside or None
        The node's hierarchy (None: unknown, or reported by another process of the host).
    """

    host: str
    binding: str | tuple | None = None
    env: dict | None = None
    node: NodeInside | None = None


@dataclass(frozen=True)
class HostRecord:
    """What the processes of one host saw, ranks in order.

    Parameters
    ----------
    name : str
    env : dict
    node : NodeInside or None
    ranks : tuple of int
        The ranks on this host.
    bindings : tuple
        The binding of each of ``ranks`` (a CPU list, a sequence of PUs, or None).
    """

    name: str
    env: dict = field(default_factory=dict)
    node: NodeInside | None = None
    ranks: tuple = ()
    bindings: tuple = ()

    @property
    def node_name(self):
        """The node's name for Slurm and xnames: ``SLURMD_NODENAME``, else the host name."""
        return self.env.get("SLURMD_NODENAME") or self.name


class AutoResult(tuple):
    """``(topology, placement, bindings)``: the topology, the vertex of every rank (int64 array) and
    every rank's binding as a CPU list (``"0-3"``, or None)."""

    __slots__ = ()

    def __new__(cls, topology, placement, bindings):
        return super().__new__(cls, (topology, placement, bindings))

    topology = property(lambda self: self[0])
    placement = property(lambda self: self[1])
    bindings = property(lambda self: self[2])


def launched_by_mpiexec(environ=None):
    """True when the environment is that of an ``mpiexec`` process (Open MPI, MPICH/Hydra, PMIx)."""
    environ = os.environ if environ is None else environ
    return any(k in environ for k in _MPIEXEC_ENV)


def probe(host=None, *, node=True, environ=None):
    """This process's :class:`ProcessRecord`.

    Parameters
    ----------
    host : str, optional
        Host name (default: this machine's, cut at the first ``'.'``).
    node : bool
        Read the node's hierarchy and report the environment (one process per host needs to).
    environ : mapping, optional
        Environment (default ``os.environ``).
    """
    environ = os.environ if environ is None else environ
    host = (host or socket.gethostname()).split(".", 1)[0]
    env = {k: environ[k] for k in AUTO_ENV if environ.get(k)} if node else None
    return ProcessRecord(host, _cpulist(binding()), env, read_node() if node else None)


def _cpulist(b):
    """A binding as a CPU list string (None stays None)."""
    return b if b is None or isinstance(b, str) else format_cpulist(b)


def host_records(processes):
    """Group process records (rank order) by host, hosts in order of their first rank.

    The environment and node of a host are those of the first of its processes that reports them.

    Returns
    -------
    list of HostRecord
    """
    by_host = {}
    for rank, p in enumerate(processes):
        h = by_host.get(p.host)
        if h is None:
            h = by_host[p.host] = {"env": None, "node": None, "ranks": [], "bindings": []}
        if h["env"] is None and p.env is not None:
            h["env"] = dict(p.env)
        if h["node"] is None and p.node is not None:
            h["node"] = p.node
        h["ranks"].append(rank)
        h["bindings"].append(_cpulist(p.binding))
    return [HostRecord(name, h["env"] or {}, h["node"], tuple(h["ranks"]), tuple(h["bindings"]))
            for name, h in by_host.items()]


# --------------------------------------------------------------------------------------- scontrol
def parse_scontrol(text):
    """Parse ``scontrol show topology`` output (topology/tree).

    Lines ``SwitchName=s1 Level=0 LinkSpeed=1 Nodes=tux[0-3]`` and ``SwitchName=s0 Level=1
    Switches=s[1-2] Nodes=tux[0-7]``: a switch's ``Nodes=`` lists every node below it, so a node hangs
    off the lowest-level switch that lists it, and switches are linked to their ``Switches=``.

    Returns
    -------
    dict of str -> list of str
        Node name -> its switch path, top switch first.

    Raises
    ------
    FormatError
        ``scontrol:line:`` for a line without ``SwitchName=`` or a bad hostlist; no switch at all.
    """
    from .adapters.slurm import expand_hostlist

    parent, leaf = {}, {}
    seen = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        params = {}
        for tok in line.split():
            k, eq, v = tok.partition("=")
            if eq:
                params[k.lower()] = v
        sw = params.get("switchname")
        if sw is None:
            raise FormatError(f"expected SwitchName=..., got {line[:60]!r}", path="scontrol show topology",
                              line=lineno)
        seen = True
        try:
            level = int(params.get("level", "0"))
            children = expand_hostlist(params["switches"]) if params.get("switches") else []
            nodes = expand_hostlist(params["nodes"]) if params.get("nodes") else []
        except (ValueError, FormatError) as e:
            raise FormatError(f"switch {sw!r}: {e}", path="scontrol show topology", line=lineno) from None
        for c in children:
            parent[c] = sw
        for nd in nodes:
            if nd not in leaf or level < leaf[nd][0]:
                leaf[nd] = (level, sw)
    if not seen:
        raise FormatError("no SwitchName= line", path="scontrol show topology")
    paths = {}
    for nd, (_, sw) in leaf.items():
        path = [sw]
        while path[-1] in parent and len(path) <= len(parent):
            path.append(parent[path[-1]])
        paths[nd] = path[::-1]
    return paths


def read_scontrol(*, timeout=20):
    """The output of ``scontrol show topology``, or None (no ``scontrol``, or it failed)."""
    prog = shutil.which("scontrol")
    if not prog:
        return None
    try:
        out = subprocess.run([prog, "show", "topology"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 and "SwitchName=" in out.stdout else None


# --------------------------------------------------------------------------------------- networks
class _Net:
    """Vertices and links being built (names unique)."""

    def __init__(self):
        self.names, self.kinds, self.slots, self.index = [], [], [], {}
        self.links, self.caps = [], []

    def vertex(self, name, kind, slots=0):
        v = self.index.get(name)
        if v is None:
            v = self.index[name] = len(self.names)
            self.names.append(name)
            self.kinds.append(kind)
            self.slots.append(slots)
        elif self.kinds[v] != kind:
            raise TopologyError(f"{name!r} is both a {self.kinds[v]} and a {kind}")
        return v

    def link(self, u, v, cap=1.0):
        self.links.append((u, v))
        self.caps.append(cap)


def _slurm_addr_paths(hosts):
    """Host -> switch path from SLURM_TOPOLOGY_ADDR(_PATTERN), or (None, why not)."""
    paths = {}
    for h in hosts:
        addr, pattern = h.env.get("SLURM_TOPOLOGY_ADDR"), h.env.get("SLURM_TOPOLOGY_ADDR_PATTERN")
        if not addr or not pattern:
            return None, f"host {h.name!r} has no SLURM_TOPOLOGY_ADDR/SLURM_TOPOLOGY_ADDR_PATTERN"
        parts, kinds = addr.split("."), pattern.split(".")
        if len(parts) != len(kinds) or kinds[-1] != "node" or any(k != "switch" for k in kinds[:-1]):
            raise TopologyError(f"host {h.name!r}: SLURM_TOPOLOGY_ADDR={addr!r} does not match "
                                f"SLURM_TOPOLOGY_ADDR_PATTERN={pattern!r} (one name per level, switches then the node)")
        if len(parts) == 1:
            return None, f"SLURM_TOPOLOGY_ADDR_PATTERN={pattern!r} of host {h.name!r} names no switch"
        paths[h.name] = parts[:-1]
    return paths, None


def _scontrol_paths(hosts, scontrol):
    if not scontrol:
        return None, "no 'scontrol show topology' output"
    table = parse_scontrol(scontrol)
    paths = {}
    for h in hosts:
        p = table.get(h.node_name)
        if p is None:
            raise TopologyError(f"host {h.name!r}: node {h.node_name!r} is not in 'scontrol show topology'")
        paths[h.name] = p
    return paths, None


def _tree(hosts, paths):
    net = _Net()
    for h in hosts:
        net.vertex(h.name, "host")
    roots = set()
    seen = set()
    for h in hosts:
        chain = [net.vertex(s, "switch") for s in paths[h.name]] + [net.index[h.name]]
        roots.add(chain[0])
        for u, v in zip(chain, chain[1:]):
            if (u, v) not in seen:
                seen.add((u, v))
                net.link(u, v)
    if len(roots) > 1:  # several trees: Slurm cannot route between them, libtopomap needs a connected machine
        top = "top"
        while top in net.index:
            top = "_" + top
        t = net.vertex(top, "switch")
        for r in sorted(roots):
            net.link(t, r)
    return net


def _xnames(hosts):
    out = {}
    for h in hosts:
        m = XNAME.fullmatch(h.node_name)
        if m is None:
            return None, f"node name {h.node_name!r} is not an xname (x<cabinet>c<chassis>s<slot>b<board>n<node>)"
        out[h.name] = tuple(int(x) for x in m.groups())
    return out, None


def _dragonfly(hosts, xn):
    net = _Net()
    for h in hosts:
        net.vertex(h.name, "host")
    cabinets = sorted({x[0] for x in xn.values()})
    routers = {c: sorted({x[1] for x in xn.values() if x[0] == c}) for c in cabinets}
    rv = {(c, k): net.vertex(f"x{c}c{k}", "switch") for c in cabinets for k in routers[c]}
    for h in hosts:
        x = xn[h.name]
        net.link(rv[x[0], x[1]], net.index[h.name])
    for c in cabinets:  # local links: the routers of a group are all linked
        rs = routers[c]
        for i in range(len(rs)):
            for j in range(i + 1, len(rs)):
                net.link(rv[c, rs[i]], rv[c, rs[j]])
    for gi, a in enumerate(cabinets):  # one global link per pair of groups, spread over their routers
        for gj in range(gi + 1, len(cabinets)):
            b = cabinets[gj]
            net.link(rv[a, routers[a][gj % len(routers[a])]], rv[b, routers[b][gi % len(routers[b])]])
    return net


def _single_switch(hosts):
    net = _Net()
    for h in hosts:
        net.vertex(h.name, "host")
    sw = "switch"
    while sw in net.index:
        sw = "_" + sw
    s = net.vertex(sw, "switch")
    for h in hosts:
        net.link(s, net.index[h.name])
    return net


def _from_file(hosts, path):
    from .formats import read, sniff

    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            fmt = sniff(f.read(65536), path)
    except OSError as e:
        raise FormatError(f"cannot open ${TOPOLOGY_ENV}: {e.strerror}", path=path) from None
    topo = read(path, format=fmt)
    net = _Net()
    net.names, net.kinds, net.slots = list(topo.names), list(topo.kinds), topo.slots.tolist()
    net.index = {nm: i for i, nm in enumerate(net.names)}
    net.links = list(zip(topo.link_u.tolist(), topo.link_v.tolist()))
    net.caps = topo.capacity.tolist()
    for h in hosts:
        if h.name not in net.index:
            raise TopologyError(f"host {h.name!r} is not in ${TOPOLOGY_ENV} ({path})")
        if topo.slots[net.index[h.name]] <= 0:
            raise TopologyError(f"host {h.name!r} is a switch in ${TOPOLOGY_ENV} ({path})")
    return net, ("ibnetdiscover" if fmt.startswith("ibnetdiscover") else "file"), topo.name


def _check_bandwidths(bandwidths):
    table = dict(DEFAULT_BANDWIDTHS)
    for k, v in (bandwidths or {}).items():
        if k not in table:
            raise ArgumentError(f"bandwidths: unknown level {k!r}; expected some of {', '.join(table)}")
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise ArgumentError(f"bandwidths[{k!r}] = {v!r} is not a number") from None
        if not (math.isfinite(v) and v > 0):
            raise ArgumentError(f"bandwidths[{k!r}] = {v!r} must be positive")
        table[k] = v
    return table


def _assign_cores(core_cpus, bindings):
    """Core of every rank: the least used core that its binding overlaps (all cores when unbound)."""
    used = [0] * len(core_cpus)
    out = []
    sets = {None: None}  # the distinct bindings of a host are few: parse each once
    for b in bindings:
        b = _cpulist(b)
        if b not in sets:
            sets[b] = set(parse_cpulist(b))
        bset = sets[b]
        cand = [k for k, cs in enumerate(core_cpus) if bset is None or bset.intersection(cs)]
        if not cand:
            cand = range(len(core_cpus))
        k = min(cand, key=lambda c: (used[c], c))
        used[k] += 1
        out.append(k)
    return out, used


def _expand(net, hosts, table):
    """Add the levels of each known node below its host; the vertex of every rank."""
    n_ranks = sum(len(h.ranks) for h in hosts)
    placement = np.full(n_ranks, -1, dtype=np.int64)
    uplink = np.zeros(len(net.names))
    for (u, v), c in zip(net.links, net.caps):
        uplink[u] += c
        uplink[v] += c
    levels = set()
    for h in hosts:
        hv = net.index[h.name]
        if h.node is None:
            net.slots[hv] = max(int(net.slots[hv]), len(h.ranks), 1)
            placement[list(h.ranks)] = hv
            continue
        net.slots[hv] = 0
        scale = (uplink[hv] or 1.0) / table["network"]  # a host alone (no network link): capacity 1
        parent_vertices = None
        for level, keys, parent, cpus in h.node.groups():
            levels.add(level)
            verts = []
            for i in range(len(keys)):
                up = hv if parent_vertices is None else parent_vertices[parent[i]]
                v = net.vertex(f"{h.name}:{level}-{i}", "core" if level == "core" else level)
                net.link(up, v, scale * table[level])
                verts.append(v)
            parent_vertices = verts
            last_cpus = cpus
        cores, used = _assign_cores(last_cpus, h.bindings)
        for k, v in enumerate(parent_vertices):
            net.slots[v] = max(len(last_cpus[k]), used[k])
        placement[list(h.ranks)] = [parent_vertices[k] for k in cores]
    return placement, [lv for lv in LEVELS if lv in levels]


def build(hosts, *, scontrol=None, bandwidths=None):
    """The topology of the hosts of a job, and where each rank runs on it.

    Parameters
    ----------
    hosts : sequence of HostRecord
        Every host of the job (:func:`host_records`); the ranks of all hosts together must be
        ``0..P-1``.
    scontrol : str, optional
        The output of ``scontrol show topology`` (used when ``SLURM_TOPOLOGY_ADDR`` names no switch).
    bandwidths : dict, optional
        Overrides of :data:`DEFAULT_BANDWIDTHS` (keys ``network``, ``package``, ``numa``, ``l3``,
        ``core``; GB/s, only their ratios matter).

    Returns
    -------
    AutoResult
        ``(topology, placement, bindings)``; ``topology.attrs`` has ``source``, ``node_levels`` and
        ``tried`` (the sources that did not apply, and why).

    Raises
    ------
    TopologyError
        No host, a SLURM_TOPOLOGY_ADDR that does not match its pattern, a host missing from the
        ``$LIBTOPOMAP_TOPOLOGY`` file or the ``scontrol`` output, a switch named like a host.
    FormatError
        An unreadable ``$LIBTOPOMAP_TOPOLOGY`` file or ``scontrol`` output.
    ArgumentError
        A bad ``bandwidths`` entry.

    Examples
    --------
    >>> hosts = [HostRecord("n1", {"SLURM_TOPOLOGY_ADDR": "s0.s1.n1",
    ...                            "SLURM_TOPOLOGY_ADDR_PATTERN": "switch.switch.node"}, ranks=(0,))]
    >>> topo, placement, _ = build(hosts)
    >>> topo.attrs["source"], topo.names, placement.tolist()
    ('slurm', ('n1', 's0', 's1'), [0])
    """
    table = _check_bandwidths(bandwidths)
    hosts = list(hosts)
    if not hosts:
        raise TopologyError("no host to build a topology of")
    ranks = sorted(r for h in hosts for r in h.ranks)
    if ranks != list(range(len(ranks))):
        raise TopologyError("the ranks of the hosts are not 0..P-1, each once")
    tried = []
    name = None
    files = {h.env.get(TOPOLOGY_ENV) for h in hosts} - {None}
    if len(files) > 1:
        raise TopologyError(f"the hosts disagree on ${TOPOLOGY_ENV}: {', '.join(sorted(files))}")
    if files:
        net, source, name = _from_file(hosts, files.pop())
    else:
        tried.append(f"${TOPOLOGY_ENV} is not set")
        net = None
        paths, why = _slurm_addr_paths(hosts)
        if paths is None:
            tried.append(why)
            paths, why = _scontrol_paths(hosts, scontrol)
        if paths is not None:
            net, source = _tree(hosts, paths), "slurm"
        else:
            tried.append(why)
            xn, why = _xnames(hosts)
            if xn is not None:
                net, source = _dragonfly(hosts, xn), "xname"
            else:
                tried.append(why)
                net, source = _single_switch(hosts), "single-switch"
    placement, levels = _expand(net, hosts, table)
    from .topology import Topology

    topo = Topology(net.names, np.asarray(net.links, dtype=np.int64).reshape(-1, 2), capacities=net.caps,
                    slots=net.slots, kinds=net.kinds, name=name or f"auto:{source}",
                    attrs={"source": source, "node_levels": levels, "tried": tried if source == "single-switch"
                           else tried[:0]})
    bindings = [None] * len(ranks)
    for h in hosts:
        for r, b in zip(h.ranks, h.bindings):
            bindings[r] = _cpulist(b)
    return AutoResult(topo, placement, bindings)


def with_nodes(topology, node, *, bandwidths=None):
    """``topology`` with the levels of ``node`` below every slot vertex (a generated network x a
    recorded node, e.g. for benchmarks).

    Parameters
    ----------
    topology : Topology
        The network; its slot vertices are the hosts.
    node : NodeInside
        The hierarchy of every host.
    bandwidths : dict, optional
        Overrides of :data:`DEFAULT_BANDWIDTHS`.

    Returns
    -------
    Topology
        Same vertices first, then each host's groups (names ``<host>:<level>-<i>``); the cores are the
        slot vertices (one slot per hardware thread); ``attrs["node_levels"]`` is set.

    Examples
    --------
    >>> from libtopomap import torus
    >>> node = NodeInside((0, 1), {"package": (0, 0), "core": (0, 1)})
    >>> t = with_nodes(torus("4"), node)
    >>> t.total_slots, t.names[4:7], t.attrs["node_levels"]
    (8, ('n0:package-0', 'n0:core-0', 'n0:core-1'), ['package', 'core'])
    """
    from .topology import Topology

    table = _check_bandwidths(bandwidths)
    net = _Net()
    net.names, net.kinds = list(topology.names), ["host" if s > 0 else k for s, k in zip(topology.slots,
                                                                                         topology.kinds)]
    net.slots = topology.slots.tolist()
    net.index = {nm: i for i, nm in enumerate(net.names)}
    net.links = list(zip(topology.link_u.tolist(), topology.link_v.tolist()))
    net.caps = topology.capacity.tolist()
    _, levels = _expand(net, [HostRecord(topology.names[v], {}, node) for v in topology.hosts], table)
    return Topology(net.names, np.asarray(net.links, dtype=np.int64).reshape(-1, 2), capacities=net.caps,
                    slots=net.slots, kinds=net.kinds, name=topology.name,
                    attrs={**topology.attrs, "node_levels": levels})


def warn_if_guessed(topology):
    """Warn (once, ``RuntimeWarning``) when :func:`build` fell back to one switch."""
    if topology.attrs.get("source") == "single-switch":
        warnings.warn("libtopomap auto: no network description found (tried: " + "; ".join(topology.attrs["tried"])
                      + f"); using one switch joining the {sum(k == 'host' for k in topology.kinds)} host(s)",
                      RuntimeWarning, stacklevel=3)


def local_result(*, bandwidths=None):
    """:func:`build` on this process's record alone (no MPI, no warning): an :class:`AutoResult`."""
    scontrol = read_scontrol() if "SLURM_JOB_ID" in os.environ else None
    return build(host_records([probe()]), scontrol=scontrol, bandwidths=bandwidths)


def discover(*, bandwidths=None):
    """The topology this process sees by itself (no MPI): ``libtopomap.load("auto")``.

    The records are this process's only: one host, its node's hierarchy and this process's binding.
    Warns (``RuntimeWarning``) when no network description was found.  Under ``mpiexec`` use
    ``topology="auto"`` in the MPI functions, or :func:`libtopomap.mpi.auto.discover`, to see every host.

    Returns
    -------
    Topology
    """
    topo = local_result(bandwidths=bandwidths).topology
    warn_if_guessed(topo)
    return topo
