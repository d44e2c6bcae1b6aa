"""Predict the run time of a placement with the SimGrid simulator.

A :class:`~libtopomap.Topology` becomes a SimGrid platform (one host per slot vertex, one full-duplex link
per link, per-hop latency as in Cui 2024, Table 3.3) and s4u actors replay a halo exchange or a
collective's schedule, each simulation in its own subprocess (``libtopomap/_simworker.py``).  The model,
its routes against ECMP and installing SimGrid: docs/simulation.rst,
"The s4u replay: ``libtopomap simulate``".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csgraph

from .commgraph import CommGraph, as_commgraph
from .errors import (ArgumentError, ArgumentTypeError, CommGraphError, MappingError,
                     SimGridUnavailable, SimulationError)
from .mapping import Mapping, check_mapping
from .vocabulary import ROUTINGS, check_choice

__all__ = [
    "simulate", "simulate_many", "compare", "build_platform", "Platform", "SimulationResult", "message_steps",
    "simgrid_available", "simgrid_version", "SimGridUnavailable", "SimulationError", "INSTALL_HINT",
    "parse_size", "parse_sizes", "parse_bandwidth", "parse_latency", "ROUTINGS", "DEFAULT_SIZES",
    "UNIT_LINK_RATE", "unit_bandwidth",
]

INSTALL_HINT = (
    "SimGrid's Python module is not importable. PyPI has no wheel; on Debian/Ubuntu run\n"
    "  apt-get install -y python3-simgrid\n"
    "then expose only its extension module to this Python (never all of /usr/lib/python3/dist-packages):\n"
    "  d=$(python -c 'import sys; print(sys.prefix)')/simgrid-debian; mkdir -p $d\n"
    "  ln -sf /usr/lib/python3/dist-packages/simgrid.cpython-311-x86_64-linux-gnu.so $d/\n"
    "  echo $d > $(python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/simgrid-debian.pth\n"
    "or build it: pip install 'pybind11<3' simgrid (needs Boost headers, ~10 minutes)."
)

# ROUTINGS: ``"dijkstra"`` (SimGrid's DijkstraCache zone), ``"floyd"`` (Floyd zone, cubic set-up),
# ``"explicit"`` (a Full zone with one BFS shortest path per communicating pair, computed here),
# ``"minimal"`` (a Full zone along the dragonfly's minimal routes, Dorier et al., section II-A.2) and
# ``"auto"`` (the fastest measured, see :func:`build_platform`).
_ZONE = {"dijkstra": "DijkstraCache", "floyd": "Floyd", "explicit": "Full", "minimal": "Full"}

DEFAULT_SIZES = (1024, 64 * 1024, 1024 * 1024)

_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_simworker.py")
_MARK = "@@SIMWORKER@@"


# ---------------------------------------------------------------------------------------------- units
_SI = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_BIN = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_PER_SECOND = {"s": 1.0, "ms": 1e3, "us": 1e6, "µs": 1e6, "ns": 1e9, "ps": 1e12}


def _quantity(value, number_types, pattern, convert, what, examples):
    """``value`` itself when it is one of ``number_types`` (not a bool), else ``convert(x, match)`` where
    ``match`` is ``pattern`` matched against ``str(value)`` and ``x`` its first group as a float; the one
    parser behind :func:`parse_size`, :func:`parse_bandwidth` and :func:`parse_latency`."""
    if isinstance(value, number_types) and not isinstance(value, bool):
        return value
    m = re.fullmatch(pattern, str(value))
    if not m:
        raise ArgumentError(f"bad {what} {value!r}: expected e.g. {examples}")
    return convert(float(m.group(1)), m)


def parse_size(value):
    """Message size in bytes: an int, or ``"256"``, ``"1K"``, ``"64KiB"``, ``"1M"``, ``"1MB"``.

    Prefixes are binary (``1K = 1024``), as message sizes are powers of two in benchmarks.

    Examples
    --------
    >>> parse_size("64K"), parse_size("1MiB"), parse_size(100)
    (65536, 1048576, 100)
    """
    n = _quantity(value, (int, np.integer), r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(?:i?B)?\s*",
                  lambda x, m: x * _BIN[m.group(2).lower()], "message size", "1024, 1K, 64KiB, 1M")
    if isinstance(n, float):
        if n != int(n):
            raise ArgumentError(f"message size {value!r} is not a whole number of bytes")
    n = int(n)
    if n < 0:
        raise ArgumentError(f"message size must be >= 0, got {value!r}")
    return n


def parse_sizes(value):
    """A comma-separated list (or sequence) of sizes -> list of int (see :func:`parse_size`)."""
    items = value.split(",") if isinstance(value, str) else list(value)
    sizes = [parse_size(x) for x in items if not (isinstance(x, str) and not x.strip())]
    if not sizes:
        raise ArgumentError(f"no message size in {value!r}")
    return sizes


def parse_bandwidth(value):
    """Bandwidth in bytes per second: a number (B/s), or ``"100Gbps"`` (bits), ``"12.5GBps"`` (bytes).

    Prefixes are decimal (networking convention); ``bps``/``b/s`` are bits, ``Bps``/``B/s`` bytes.

    Examples
    --------
    >>> parse_bandwidth("100Gbps"), parse_bandwidth("1GBps"), parse_bandwidth(5e9)
    (12500000000.0, 1000000000.0, 5000000000.0)
    """
    bw = float(_quantity(value, (int, float, np.number),
                         r"\s*(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*([kKmMgGtT]?)(bps|b/s|Bps|B/s)?\s*",
                         lambda x, m: x * _SI[m.group(2).lower()] / (8.0 if m.group(3) in ("bps", "b/s") else 1.0),
                         "bandwidth", "100Gbps, 12.5GBps or bytes/s"))
    if not np.isfinite(bw) or bw <= 0:
        raise ArgumentError(f"bandwidth must be positive, got {value!r}")
    return bw


#: Rate of a link of capacity 1 where the capacities are relative (generated topologies, Slurm files, edge
#: lists, ibsim nets without speeds): 100 Gb/s per direction, one 4x EDR InfiniBand link.
UNIT_LINK_RATE = "100Gbps"


def unit_bandwidth(topology, bandwidth=None):
    """Bytes per second of one unit of ``topology``'s link capacity.

    ``bandwidth`` when given; else the fabric's own rates where the capacities are link rates in Gb/s
    (``topology.attrs["capacity_unit"] == "Gb/s"``: InfiniBand fabrics ingested from dumps that give
    the links' width and speed, a 4x QDR link 40), i.e. 1 Gb/s per unit; else :data:`UNIT_LINK_RATE`.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> unit_bandwidth(ltm.torus("3x3")), unit_bandwidth(ltm.torus("3x3"), "1GBps")
    (12500000000.0, 1000000000.0)
    """
    if bandwidth is not None:
        return parse_bandwidth(bandwidth)
    if getattr(topology, "attrs", {}).get("capacity_unit") == "Gb/s":
        return parse_bandwidth("1Gbps")
    return parse_bandwidth(UNIT_LINK_RATE)


def parse_latency(value):
    """Latency in seconds: a number (s), or ``"100ns"``, ``"1.5us"``, ``"2ms"``, ``"0s"``.

    Examples
    --------
    >>> parse_latency("100ns"), parse_latency("1.5us"), parse_latency(0)
    (1e-07, 1.5e-06, 0.0)
    """
    lat = float(_quantity(value, (int, float, np.number),
                          r"\s*(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(s|ms|us|µs|ns|ps)?\s*",
                          lambda x, m: x / _PER_SECOND[m.group(2) or "s"], "latency", "100ns, 1us or seconds"))
    if not np.isfinite(lat) or lat < 0:
        raise ArgumentError(f"latency must be >= 0, got {value!r}")
    return lat


# ---------------------------------------------------------------------------------------------- SimGrid
_SIMGRID = {}


def simgrid_version():
    """SimGrid's version string as seen by a worker subprocess, or ``None`` when it is not installed.

    The answer is cached for the life of this process.
    """
    if "version" not in _SIMGRID:
        code = "import simgrid, sys; sys.stdout.write('@@' + str(simgrid.simgrid_version))"
        try:
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
            ok = out.returncode == 0 and "@@" in out.stdout
            _SIMGRID["version"] = out.stdout.split("@@", 1)[1].strip() if ok else None
        except (OSError, subprocess.TimeoutExpired):
            _SIMGRID["version"] = None
    return _SIMGRID["version"]


def simgrid_available():
    """Whether SimGrid's Python bindings can be imported by the simulation subprocesses."""
    return simgrid_version() is not None


def _require_simgrid():
    if not simgrid_available():
        raise SimGridUnavailable(INSTALL_HINT)


# ---------------------------------------------------------------------------------------------- platform
@dataclass(frozen=True)
class Platform:
    """A SimGrid platform built from a Topology (see :func:`build_platform`).

    Attributes
    ----------
    topology : Topology
    bandwidth : numpy.ndarray
        Bytes per second of each link (per direction), ``base bandwidth x capacity``.
    latency : numpy.ndarray
        Seconds per link.
    routing : str
        One of ``"dijkstra"``, ``"floyd"``, ``"explicit"``, ``"minimal"``.
    model : str
        SimGrid network model (``"CM02"``: a flow alone on a path gets exactly ``sum(latency) +
        size / min(bandwidth)``; ``"LV08"`` adds SimGrid's TCP correction factors).
    loopback_bandwidth, loopback_latency : float or None
        Between processes on the same vertex (``None``: SimGrid's defaults, 10 GB/s and 0 s).
    """

    topology: object
    bandwidth: np.ndarray
    latency: np.ndarray
    routing: str = "dijkstra"
    model: str = "CM02"
    loopback_bandwidth: float | None = None
    loopback_latency: float | None = None

    def job(self, placement, messages, *, repeat=1, link_bytes=False):
        """The JSON-ready job for the worker: ``messages`` is a list of ``(m, 3)`` arrays
        ``(src rank, dst rank, bytes)`` per step, ``placement`` a vertex per rank."""
        topo = self.topology
        placement = np.asarray(placement, dtype=np.int64)
        job = {
            "n_vertices": topo.n_vertices,
            "is_host": (np.asarray(topo.slots) > 0).astype(int).tolist(),
            "links": np.stack([topo.link_u, topo.link_v], 1).tolist(),
            "bandwidth": self.bandwidth.tolist(),
            "latency": self.latency.tolist(),
            "routing": _ZONE[self.routing],
            "model": self.model,
            "loopback_bandwidth": self.loopback_bandwidth,
            "loopback_latency": self.loopback_latency,
            "placement": placement.tolist(),
            "steps": [np.asarray(s, dtype=np.int64).tolist() for s in messages],
            "repeat": int(repeat),
            "link_bytes": bool(link_bytes),
        }
        if self.routing in ("explicit", "minimal"):
            pairs = np.concatenate([np.asarray(s, dtype=np.int64)[:, :2] for s in messages]) if messages else \
                np.zeros((0, 2), np.int64)
            routes = self.routes(placement[pairs[:, 0]], placement[pairs[:, 1]]) if len(pairs) else []
            _prune(job, topo, placement, routes)
        return job

    def routes(self, src_vertices, dst_vertices):
        """One shortest path (BFS, fewest hops) for each distinct vertex pair, in the worker's format
        ``[src, dst, [signed link ids]]`` (``j + 1``: link j from ``link_u`` to ``link_v``)."""
        topo = self.topology
        pairs = np.unique(np.stack([np.asarray(src_vertices), np.asarray(dst_vertices)], 1), axis=0)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        # signed link id of the arc a: +(j+1) when it runs link_u -> link_v
        arc_sign = np.where(topo.arc_source == topo.link_u[topo.arc_link], 1, -1) * (topo.arc_link.astype(np.int64) + 1)
        arc_of = {}
        for a, (u, v) in enumerate(zip(topo.arc_source.tolist(), topo.indices.tolist())):
            arc_of[u, v] = int(arc_sign[a])
        out = []
        if self.routing == "minimal":
            from .generators.dragonfly import dragonfly_queries

            q = dragonfly_queries(topo)
            for s, d in pairs.tolist():
                path = q.route(s, d)
                out.append([s, d, [arc_of[u, v] for u, v in zip(path[:-1], path[1:])]])
            return out
        adj = topo.adjacency
        for s in np.unique(pairs[:, 0]).tolist():
            _, pred = csgraph.breadth_first_order(adj, s, directed=False, return_predecessors=True)
            for d in pairs[pairs[:, 0] == s, 1].tolist():
                path, x = [], d
                while x != s:
                    p = int(pred[x])
                    if p < 0:
                        raise MappingError(f"no path from vertex {topo.names[s]!r} to {topo.names[d]!r}")
                    path.append(arc_of[p, x])
                    x = p
                out.append([s, d, path[::-1]])
        return out


def _prune(job, topology, placement, routes):
    """Keep in an explicit-route job only the placement's vertices, the links of its routes and their ends.

    SimGrid's Full zone holds a dense table over its vertices (8 bytes per pair: 2.8 GB for the
    18,576 vertices of the 16,512-terminal dragonfly), and unused vertices and links carry nothing.
    Vertex and link numbers become positions in the kept lists; ``job["link_ids"]`` maps a kept
    link back to the topology's link (the worker ignores it)."""
    placement = np.asarray(placement, dtype=np.int64)
    used = np.unique(np.abs(np.concatenate([np.asarray(r[2], dtype=np.int64) for r in routes])) - 1) \
        if routes else np.zeros(0, np.int64)
    keep = np.unique(np.concatenate([placement, topology.link_u[used], topology.link_v[used]]))
    vid = np.full(topology.n_vertices, -1, np.int64)
    vid[keep] = np.arange(keep.size)
    lid = np.zeros(topology.n_links, np.int64)
    lid[used] = np.arange(used.size)
    job["n_vertices"] = int(keep.size)
    job["is_host"] = (np.asarray(topology.slots)[keep] > 0).astype(int).tolist()
    job["links"] = np.stack([vid[topology.link_u[used]], vid[topology.link_v[used]]], 1).tolist()
    job["bandwidth"] = np.asarray(job["bandwidth"])[used].tolist()
    job["latency"] = np.asarray(job["latency"])[used].tolist()
    job["placement"] = vid[placement].tolist()
    job["routes"] = [[int(vid[s]), int(vid[d]), [int(np.sign(k) * (lid[abs(k) - 1] + 1)) for k in path]]
                     for s, d, path in routes]
    job["link_ids"] = used.tolist()


def _full_links(topology, job, values):
    """Per-link values of a (possibly pruned) job's links -> an array over all the topology's links."""
    if "link_ids" not in job:
        return values
    out = np.zeros(topology.n_links)
    out[np.asarray(job["link_ids"], dtype=np.int64)] = values
    return out


def build_platform(topology, *, bandwidth=None, latency="100ns", routing="auto", model="CM02",
                   loopback_bandwidth=None, loopback_latency=None):
    """Describe ``topology`` as a SimGrid platform.

    Parameters
    ----------
    topology : Topology
    bandwidth : float or str, optional
        Bandwidth of a link of capacity 1, per direction (bytes/s, or a string such as ``"100Gbps"``);
        a link of capacity ``c`` gets ``c x bandwidth``.  Default: :func:`unit_bandwidth` (an ingested
        fabric's own link rates, else 100 Gb/s).
    latency : float or str
        Latency of every link (seconds or e.g. ``"100ns"``).
    routing : {"auto", "dijkstra", "floyd", "explicit", "minimal"}
        ``"auto"`` picks ``"explicit"`` routes (as fast as DijkstraCache, faster than Floyd; see Notes).
        ``"minimal"``: explicit routes along a dragonfly's minimal routes (one global link, Dorier et al.
        section II-A.2; :meth:`~libtopomap.collectives.dragonfly.Dragonfly.route`) instead of BFS
        shortest paths, which on a dragonfly may take two global links.
    model : str
        SimGrid network model, ``"CM02"`` (default), ``"LV08"`` or ``"SMPI"``.
    loopback_bandwidth, loopback_latency : float or str, optional
        For messages between processes on the same vertex.

    Returns
    -------
    Platform

    Notes
    -----
    Measured with SimGrid 3.32 on the 1,024-vertex random shortcut ring of degree 19 with 512 ranks at
    1 MiB (``benchmarks/bench_simulate.py``, part 3; wall seconds per simulation including set-up, two
    runs on a shared 2-core machine): recursive-doubling allreduce 0.66-1.54 (explicit), 1.06-1.43
    (DijkstraCache), 2.40-2.42 (Floyd); Bruck alltoall 1.09-1.46, 1.54-1.69, 1.59-2.34.  Explicit routes
    (a Full zone that holds only the pairs that communicate, one BFS shortest path each) and DijkstraCache
    are about equally fast and Floyd is slowest; ``auto`` takes explicit routes because their cost grows
    with the pairs that communicate rather than with the network, and the paths chosen do not depend on
    SimGrid's version.  SimGrid 3.32's Python ``NetZone.create_dijkstra_zone`` actually builds a Floyd
    zone, so the platform is written as XML, where ``routing="DijkstraCache"`` is honoured.
    """
    from .topology import Topology

    if not isinstance(topology, Topology):
        raise ArgumentTypeError(f"build_platform needs a Topology, got {type(topology).__name__}")
    check_choice("simgrid-routing", routing)
    if routing == "auto":
        routing = "explicit"
    if routing == "minimal":
        from .generators.dragonfly import dragonfly_queries

        dragonfly_queries(topology)  # TopologyError when it is not a dragonfly
    base = unit_bandwidth(topology, bandwidth)
    lat = parse_latency(latency)
    bw = np.asarray(topology.capacity, dtype=np.float64) * base
    return Platform(topology, bw, np.full(topology.n_links, lat), routing, str(model),
                    None if loopback_bandwidth is None else parse_bandwidth(loopback_bandwidth),
                    None if loopback_latency is None else parse_latency(loopback_latency))


# ---------------------------------------------------------------------------------------------- messages
def _bruck_blocks(nprocs, steps):
    """Blocks per message in each step of Bruck's alltoall: step with distance ``2**k`` moves the
    blocks whose index has bit ``k`` set."""
    idx = np.arange(nprocs)
    return [int(np.count_nonzero(idx & (1 << k))) for k in range(len(steps))]


def _is_schedule(obj):
    if isinstance(obj, (list, tuple)) and obj:
        first = np.asarray(obj[0]) if not isinstance(obj[0], CommGraph) else None
        return first is not None and first.ndim == 2
    return False


def message_steps(communication, nprocs, size=1, *, root=0):
    """The messages to simulate, as a list of ``(m, 3)`` ``int64`` arrays ``(src, dst, bytes)`` per step.

    Parameters
    ----------
    communication : str, schedule or communication graph
        * a collective name (``"bcast"``, ``"allreduce"``, ``"alltoall"``, ``"allgather"``, see
          :func:`libtopomap.collectives.schedule`): every message carries ``size`` bytes, except
          Bruck's alltoall where ``size`` is the block per destination (MPI's send count) and step
          ``k`` moves every block whose index has bit ``k`` set;
        * a schedule: a list of steps, each an ``(m, 2)`` array of rank pairs (``size`` bytes each) or
          an ``(m, 3)`` array whose third column multiplies ``size``;
        * anything :func:`~libtopomap.as_commgraph` accepts: one halo-exchange step where every edge is
          a message and the heaviest edge carries ``size`` bytes (others in proportion to weight).
    nprocs : int
    size : int
    root : int
        Root of a broadcast.

    Returns
    -------
    list of numpy.ndarray

    Raises
    ------
    CommGraphError
        Ranks outside ``0 .. nprocs - 1`` or a graph of another size.
    """
    size = parse_size(size)
    if isinstance(communication, str):
        from .collectives import schedule

        steps = schedule(communication, nprocs, root=root)
        mult = _bruck_blocks(nprocs, steps) if communication.lower() == "alltoall" else [1] * len(steps)
        return [np.column_stack([s, np.full(len(s), m * size, np.int64)]) for s, m in zip(steps, mult)]
    if _is_schedule(communication):
        out = []
        for t, step in enumerate(communication):
            a = np.asarray(step)
            if a.size == 0:
                out.append(np.zeros((0, 3), np.int64))
                continue
            if a.ndim != 2 or a.shape[1] not in (2, 3):
                raise CommGraphError(f"schedule step {t}: expected (src, dst) or (src, dst, multiplier) rows")
            if a.shape[1] == 2:
                nbytes = np.full(len(a), size, np.int64)
            else:
                if np.any(a[:, 2] < 0):
                    raise CommGraphError(f"schedule step {t}: negative size multiplier")
                nbytes = np.round(a[:, 2].astype(np.float64) * size).astype(np.int64)
            pairs = a[:, :2].astype(np.int64)
            bad = np.flatnonzero(((pairs < 0) | (pairs >= nprocs)).any(1))
            if bad.size:
                raise CommGraphError(f"schedule step {t}: message {tuple(pairs[bad[0]].tolist())} names a rank "
                                     f"outside 0..{nprocs - 1}")
            out.append(np.column_stack([pairs, nbytes]))
        return out
    g = as_commgraph(communication)
    if g.n != nprocs:
        raise CommGraphError(f"the communication graph has {g.n} processes but the placement has {nprocs}")
    keep = g.src != g.dst
    w = g.weights[keep]
    wmax = float(w.max()) if w.size else 1.0
    nbytes = np.round(w / (wmax if wmax > 0 else 1.0) * size).astype(np.int64)
    return [np.column_stack([g.src[keep], g.dst[keep], nbytes]).astype(np.int64)]


def _placement(topology, placement):
    if isinstance(placement, Mapping):
        if placement.topology is not topology and placement.topology != topology:
            raise MappingError("the placement was made for a different topology")
        return placement.vertices.astype(np.int64)
    return check_mapping(topology, placement).astype(np.int64)


# ---------------------------------------------------------------------------------------------- running
def _run_job(job, timeout):
    t0 = time.perf_counter()
    try:
        # -P: the worker sits in the package folder; keep that folder off sys.path so no module here can
        # shadow a standard-library one.
        proc = subprocess.run([sys.executable, "-P", _WORKER], input=json.dumps(job), capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SimulationError(f"the SimGrid simulation ran longer than {timeout} s") from None
    out = proc.stdout
    if _MARK not in out:
        tail = (proc.stderr or "").strip().splitlines()[-5:]
        raise SimulationError(f"the SimGrid worker exited with status {proc.returncode}: " + " | ".join(tail))
    res = json.loads(out.rsplit(_MARK, 1)[1])
    if "error" in res:
        raise SimulationError(f"SimGrid: {res['error']}")
    res["wall_s"] = time.perf_counter() - t0
    return res


def _arc_loads(topology, up, down):
    """Per-link directional bytes -> per-arc array in the topology's CSR arc order."""
    up = np.asarray(up, dtype=np.float64)
    down = np.asarray(down, dtype=np.float64)
    j = topology.arc_link
    forward = topology.arc_source == topology.link_u[j]
    return np.where(forward, up[j], down[j])


@dataclass
class SimulationResult:
    """Simulated times of one placement.

    Attributes
    ----------
    sizes : list of int
        Message sizes (bytes).
    times : list of float
        Simulated completion time per size (seconds, the last rank's end; ``repeat`` repetitions).
    step_times : list of list of float
        Per size, the time at which the last rank finished each step (cumulative seconds).
    link_load : numpy.ndarray
        Traffic on each arc (CSR arc order of the topology) on SimGrid's single routes (shortest
        paths; minimal routes with ``routing="minimal"``), in messages of the simulated size per unit
        of capacity (size-independent).
    ecmp_load : numpy.ndarray
        The same under the model of :func:`libtopomap.metrics.congestion` with routing
        ``load_routing`` (ECMP by default; the name is kept for that default).
    max_link_load, max_congestion : float
        Maxima of the two arrays above.
    avg_hops : float
        Message-weighted average hop count of the placement (under ``load_routing``).
    n_messages : int
    routing, model, simgrid_version : str
    wall_s : float
        Wall-clock seconds spent in the simulations.
    load_routing : str
        Routing model (:mod:`libtopomap.routing`) of ``ecmp_load``, ``max_congestion`` and ``avg_hops``.
    """

    sizes: list
    times: list
    step_times: list
    link_load: np.ndarray
    ecmp_load: np.ndarray
    max_link_load: float
    max_congestion: float
    avg_hops: float
    n_messages: int
    routing: str
    model: str
    simgrid_version: str
    wall_s: float = 0.0
    placement: np.ndarray = field(default=None, repr=False)
    load_routing: str = "ecmp"

    def to_dict(self, *, arrays=False):
        """JSON-ready dict (per-arc loads only with ``arrays=True``)."""
        d = {"sizes": list(self.sizes), "times": list(self.times), "step_times": self.step_times,
             "max_link_load": self.max_link_load, "max_congestion": self.max_congestion,
             "avg_hops": self.avg_hops, "n_messages": self.n_messages, "routing": self.routing,
             "model": self.model, "simgrid_version": self.simgrid_version, "wall_s": self.wall_s,
             "load_routing": self.load_routing}
        if arrays:
            d["link_load"] = self.link_load.tolist()
            d["ecmp_load"] = self.ecmp_load.tolist()
            d["placement"] = None if self.placement is None else self.placement.tolist()
        return d


def _static_loads(topology, unit_steps, vert, load_routing="ecmp"):
    """Per-arc load (ECMP or ``load_routing``) and average hops of the messages (bytes of the unit-size steps)."""
    from .metrics import link_traffic, pair_distances
    from .routing import get_routing, route_hops

    allm = np.concatenate(unit_steps) if unit_steps else np.zeros((0, 3), np.int64)
    if len(allm) == 0:
        return np.zeros(topology.n_arcs), 0.0
    g = CommGraph(len(vert), allm[:, 0], allm[:, 1], allm[:, 2].astype(np.float64))
    ecmp = link_traffic(topology, g, vert, routing=load_routing) / topology.arc_capacity
    a, b = vert[allm[:, 0]], vert[allm[:, 1]]
    r = get_routing(load_routing, topology)
    hops = pair_distances(topology, a, b) if r.shortest else route_hops(topology, a, b, routing=r)
    w = allm[:, 2].astype(np.float64)
    avg = float(np.dot(w, hops) / w.sum()) if w.sum() > 0 else float(hops.mean())
    return ecmp, avg


def _simulate_many(topology, communication, placements, *, sizes, bandwidth, latency, routing, model, repeat,
                   root, jobs, timeout, loopback_bandwidth=None, loopback_latency=None, load_routing="ecmp"):
    from .routing import get_routing

    load_routing = get_routing(load_routing, topology).name
    get_routing(load_routing).check(topology)
    _require_simgrid()
    sizes = parse_sizes(sizes if not isinstance(sizes, (int, np.integer)) else [sizes])
    if int(repeat) < 1:
        raise ArgumentError(f"repeat must be >= 1, got {repeat}")
    platform = build_platform(topology, bandwidth=bandwidth, latency=latency, routing=routing, model=model,
                              loopback_bandwidth=loopback_bandwidth, loopback_latency=loopback_latency)
    verts = [_placement(topology, p) for p in placements]
    n = {len(v) for v in verts}
    if len(n) != 1:
        raise MappingError(f"placements of different lengths {sorted(n)}")
    nprocs = n.pop()
    # Loads and hops are linear in the size: compute them once on unit sizes (1 = one message of `size`).
    unit = message_steps(communication, nprocs, 1, root=root)
    tasks = []
    for pi, v in enumerate(verts):
        for si, s in enumerate(sizes):
            steps = [np.column_stack([u[:, :2], u[:, 2] * s]) for u in unit]
            tasks.append((pi, si, platform.job(v, steps, repeat=repeat, link_bytes=(si == 0))))
    workers = max(1, min(len(tasks), jobs or os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outs = list(pool.map(lambda t: _run_job(t[2], timeout), tasks))
    results = []
    for pi, v in enumerate(verts):
        mine = [(si, o) for (p, si, _), o in zip(tasks, outs) if p == pi]
        first = next(o for si, o in mine if si == 0)
        job0 = next(t[2] for t in tasks if t[0] == pi and t[1] == 0)
        sg_load = _arc_loads(topology, _full_links(topology, job0, first["link_bytes_up"]),
                             _full_links(topology, job0, first["link_bytes_down"])) / max(sizes[0], 1)
        sg_load = sg_load / (repeat * topology.arc_capacity)
        if sizes[0] == 0:
            sg_load[:] = np.nan
        ecmp, avg = _static_loads(topology, unit, v, load_routing)
        results.append(SimulationResult(
            sizes=list(sizes), times=[o["time"] for _, o in mine], step_times=[o["step_end"] for _, o in mine],
            link_load=sg_load, ecmp_load=ecmp, max_link_load=float(np.nanmax(sg_load)) if sg_load.size else 0.0,
            max_congestion=float(ecmp.max()) if ecmp.size else 0.0, avg_hops=avg,
            n_messages=int(sum(len(u) for u in unit)) * int(repeat), routing=platform.routing, model=platform.model,
            simgrid_version=first["simgrid_version"], wall_s=float(sum(o["wall_s"] for _, o in mine)),
            placement=v, load_routing=load_routing))
    return results


def simulate_many(topology, communication, placements, *, sizes=DEFAULT_SIZES, bandwidth=None,
                  latency="100ns", routing="auto", model="CM02", repeat=1, root=0, jobs=None, timeout=600,
                  loopback_bandwidth=None, loopback_latency=None, load_routing="ecmp"):
    """:func:`simulate` for several placements of the same communication; all simulations (placements x
    sizes) run in parallel subprocesses.  Returns a list of :class:`SimulationResult`, one per placement."""
    return _simulate_many(topology, communication, list(placements), sizes=sizes, bandwidth=bandwidth,
                          latency=latency, routing=routing, model=model, repeat=repeat, root=root, jobs=jobs,
                          timeout=timeout, loopback_bandwidth=loopback_bandwidth, loopback_latency=loopback_latency,
                          load_routing=load_routing)


def simulate(topology, communication, placement, *, sizes=DEFAULT_SIZES, bandwidth=None, latency="100ns",
             routing="auto", model="CM02", repeat=1, root=0, jobs=None, timeout=600,
             loopback_bandwidth=None, loopback_latency=None, load_routing="ecmp"):
    """Simulate ``communication`` with processes placed by ``placement`` and return the times.

    Parameters
    ----------
    topology : Topology
    communication : str, schedule or communication graph
        See :func:`message_steps` (a collective name, a list of steps, or a graph replayed as one
        halo-exchange step).
    placement : Mapping or array_like of int
        Vertex of each rank.
    sizes : sequence of int or str
        Message sizes (bytes, or ``"1K,64K,1M"``); one simulation each.
    bandwidth, latency : float or str
        Per link (see :func:`build_platform`); defaults are Cui 2024 Table 3.3 (100 Gbps per unit of
        capacity, 100 ns), or an ingested fabric's own link rates (:func:`unit_bandwidth`).
    routing : {"auto", "dijkstra", "floyd", "explicit", "minimal"}
        SimGrid's routing of the simulated messages (see :func:`build_platform`).
    load_routing : str or Routing
        Routing model (:mod:`libtopomap.routing`, ``"native"`` for the topology's own) of the static
        loads and hops reported beside the times (``ecmp_load``, ``max_congestion``, ``avg_hops``);
        default ``"ecmp"``.
    model : str
        SimGrid network model (``"CM02"``: exact ``latency + size / bandwidth`` for a lone flow).
    repeat : int
        Run the communication this many times back to back (Cui 2024 times ten repetitions).
    root : int
        Root of a broadcast.
    jobs : int, optional
        Simulations run in parallel (default: CPU count).
    timeout : float
        Seconds allowed per simulation.

    Returns
    -------
    SimulationResult

    Raises
    ------
    SimGridUnavailable
        SimGrid's Python bindings are missing (the message says how to install them).
    SimulationError
        A simulation failed or timed out.
    MappingError, CommGraphError
        Invalid placement or communication.

    Examples
    --------
    >>> from libtopomap import torus
    >>> r = simulate(torus("4x4"), "allreduce", range(16), sizes=[1024])  # doctest: +SKIP
    >>> r.times  # doctest: +SKIP
    [4.4684e-07]

    References
    ----------
    K. Cui, "Efficient Collective Communication in Interconnection Networks with Shortcut Network
    Topologies", PhD thesis, 2024, sections 3.4.1 and 4.5.1 (SimGrid evaluation, Tables 3.3 and 4.2).
    """
    return _simulate_many(topology, communication, [placement], sizes=sizes, bandwidth=bandwidth, latency=latency,
                          routing=routing, model=model, repeat=repeat, root=root, jobs=jobs, timeout=timeout,
                          loopback_bandwidth=loopback_bandwidth, loopback_latency=loopback_latency,
                          load_routing=load_routing)[0]


def compare(topology, communication, original, mapped, *, sizes=DEFAULT_SIZES, bandwidth=None,
            latency="100ns", routing="auto", model="CM02", repeat=1, root=0, jobs=None, timeout=600,
            loopback_bandwidth=None, loopback_latency=None, load_routing="ecmp"):
    """Simulate the original and the mapped placement (all simulations in parallel subprocesses).

    Parameters are those of :func:`simulate`, with two placements.

    Returns
    -------
    dict
        ``{"sizes", "original": SimulationResult, "mapped": SimulationResult, "speedup": [original time
        / mapped time per size]}``.
    """
    a, b = _simulate_many(topology, communication, [original, mapped], sizes=sizes, bandwidth=bandwidth,
                          latency=latency, routing=routing, model=model, repeat=repeat, root=root, jobs=jobs,
                          timeout=timeout, loopback_bandwidth=loopback_bandwidth, loopback_latency=loopback_latency,
                          load_routing=load_routing)
    speed = [float(x / y) if y > 0 else float("nan") for x, y in zip(a.times, b.times)]
    return {"sizes": list(a.sizes), "original": a, "mapped": b, "speedup": speed}
