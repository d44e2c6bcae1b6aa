"""Export a topology as a SimGrid 3.32 platform (XML, DTD 4.1) that routes as a libtopomap routing model.

Links become ``SPLITDUPLEX`` SimGrid links of ``bandwidth x capacity`` (by default an ingested fabric's own
rates, else capacity 1 = 100 Gb/s: :func:`libtopomap.simulate.unit_bandwidth`); the routes are a ``Full``
zone of explicit routes from :func:`libtopomap.routing.route_traffic`, or a ``TORUS``/``FAT_TREE`` cluster
zone where it provably routes as the model; above ``max_routes`` the export is refused.  The details:
docs/simulation.rst, "The SMPI platform export".
"""

from __future__ import annotations

import io
import os
import re
import time
from dataclasses import dataclass
from xml.sax.saxutils import escape

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, TopologyError
from ..vocabulary import MULTIPATH_ROUTINGS, ROUTING_MODELS

from . import nexthops

__all__ = ["platform", "write_platform", "PlatformInfo", "DEFAULT_MAX_ROUTES", "SINGLE_PATH_ROUTINGS",
           "MULTIPATH_ROUTINGS", "SHARING_POLICIES", "ZONES", "FORMATS"]

#: Explicit routes a platform may hold: 1,024 hosts, all ordered pairs (1,047,552 routes; a 32 x 32 torus
#: under dimension-order is 685 MB of XML, 2.5 s to export and 87 s for SimGrid 3.32 to load).
DEFAULT_MAX_ROUTES = 1 << 20
#: Routing models a platform can be exported for (every model of the library that is not multipath).
SINGLE_PATH_ROUTINGS = tuple(m for m in ROUTING_MODELS if m not in MULTIPATH_ROUTINGS)
#: SimGrid link sharing policies accepted (``SPLITDUPLEX``: one resource per direction).
SHARING_POLICIES = ("SPLITDUPLEX", "SHARED", "FATPIPE")
#: ``zone=`` choices: ``auto`` (a cluster zone where it provably matches, else, when writing a platform
#: library, ``table`` for destination-based routings, else ``full``), ``full`` (explicit routes always),
#: ``cluster`` (a cluster zone or an error saying why not), ``table`` (a next-hop table in a platform
#: library, see :mod:`libtopomap.smpi.zone`, or an error).
ZONES = ("auto", "full", "cluster", "table")
#: ``format=`` choices of :func:`write_platform`: ``xml``, ``so`` (platform library + table), ``auto`` (the
#: zone decides: XML for cluster zones and explicit routes, a library for the table zone).
FORMATS = ("xml", "so", "auto")

_SPEED = re.compile(r"\s*\d+(\.\d+)?([eE][-+]?\d+)?\s*[kKMGTPE]?f\s*")


@dataclass(frozen=True)
class PlatformInfo:
    """What :func:`write_platform` wrote.

    Attributes
    ----------
    path : str
        The file written.
    hostnames : tuple of str
        The platform's hosts, in the order written (the allocation's order when ``hosts=`` was given).
    routes : int
        Explicit routes written (0 for a cluster zone, which computes its routes itself).
    bytes : int
        Size of the file.
    seconds : float
        Wall time of the export.
    zone : str
        ``"Full"`` (explicit routes), ``"TORUS"`` or ``"FAT_TREE"`` (a SimGrid cluster zone), ``"table"``
        (libtopomap's next-hop table zone, a platform library).
    routing : str
        The routing model the routes follow.
    table : str or None
        The next-hop table beside a platform library (``path + ".table"``), else None.
    table_bytes : int
        Bytes of that table (0 without one).
    """

    path: str
    hostnames: tuple
    routes: int
    bytes: int
    seconds: float
    zone: str
    routing: str
    table: str | None = None
    table_bytes: int = 0


# ---------------------------------------------------------------------------------------------- arguments
def _routing_name(topology, routing):
    """The model's name: ``None`` is the topology's native routing when single-path, else
    ``dimension-order`` on generated grids, ``dmodk`` on generated fat trees, ``table`` elsewhere."""
    from ..routing import Routing, native_routing
    from ..routing._models import model_of

    if routing is None:
        name = native_routing(topology)
        if name in MULTIPATH_ROUTINGS:
            if topology.distances.grid_shape is not None:
                name = "dimension-order"
            elif topology.attrs.get("generator") == "fattree":
                name = "dmodk"  # what OpenSM's ftree engine and SimGrid's FAT_TREE zone install
            else:
                name = "table"
    elif isinstance(routing, Routing):
        name = routing.name
    elif routing == "native":
        name = native_routing(topology)
    elif isinstance(routing, str):
        name = routing
    else:
        raise ArgumentTypeError(f"routing must be a name, got {type(routing).__name__}")
    choices = ", ".join(SINGLE_PATH_ROUTINGS)
    if name in MULTIPATH_ROUTINGS:
        raise ArgumentError(f"routing {name!r} splits messages over several paths; a SimGrid platform needs one "
                            f"path per pair: choose one of {choices}")
    if model_of(name) not in ROUTING_MODELS:
        raise ArgumentError(f"unknown routing {name!r}; a SimGrid platform needs one path per pair: choose one "
                            f"of {choices}")
    return name


def _host_vertices(topology, hosts):
    """Vertex indices of the platform's hosts, in order: every host, or the allocation ``hosts``
    (names, vertex indices, or an object with ``.hosts`` such as :class:`libtopomap.rankfiles.Allocation`)."""
    if hosts is None:
        return np.asarray(topology.hosts, dtype=np.int64)
    hosts = getattr(hosts, "hosts", hosts)
    if isinstance(hosts, str):
        hosts = [hosts]
    out = []
    slots = topology.slots
    for h in hosts:
        if isinstance(h, (int, np.integer)) and not isinstance(h, bool):
            v = int(h)
            if not 0 <= v < topology.n_vertices:
                raise TopologyError(f"host index {v} outside 0..{topology.n_vertices - 1}")
        elif isinstance(h, str):
            v = topology.index(h)
        else:
            raise ArgumentTypeError(f"hosts must be names or vertex indices, got {type(h).__name__}")
        if slots[v] <= 0:
            raise ArgumentError(f"{topology.names[v]!r} is a switch (no slot), not a host")
        out.append(v)
    if not out:
        raise ArgumentError("hosts is empty: the platform needs at least one host")
    arr = np.asarray(out, dtype=np.int64)
    uniq, counts = np.unique(arr, return_counts=True)
    if counts.max() > 1:
        raise ArgumentError(f"host {topology.names[int(uniq[counts.argmax()])]!r} is listed twice")
    return arr


def _speed(speed):
    if isinstance(speed, (int, float, np.number)) and not isinstance(speed, bool):
        if not np.isfinite(speed) or speed <= 0:
            raise ArgumentError(f"speed must be positive, got {speed!r}")
        return f"{float(speed)!r}f"
    if not isinstance(speed, str) or not _SPEED.fullmatch(speed):
        raise ArgumentError(f"speed must be flop/s such as 100Gf or 1e11, got {speed!r}")
    return speed.strip()


# ---------------------------------------------------------------------------------------------- cluster zones
_NAME = re.compile(r"(\D*)(0|[1-9]\d*)(\D*)")


def _name_numbers(names):
    """``(prefix, suffix, numbers)`` when every name is ``prefix + str(number) + suffix`` (SimGrid's
    cluster host naming, numbers without leading zeros), else None."""
    m = _NAME.fullmatch(names[0]) if names else None
    if m is None:
        return None
    prefix, suffix = m.group(1), m.group(3)
    nums = []
    for nm in names:
        m = _NAME.fullmatch(nm)
        if m is None or m.group(1) != prefix or m.group(3) != suffix:
            return None
        nums.append(int(m.group(2)))
    return prefix, suffix, np.asarray(nums, dtype=np.int64)


def _radical(numbers):
    """SimGrid's ``radical`` list: runs of consecutive numbers as ``a-b``, in order."""
    parts, i, n = [], 0, len(numbers)
    while i < n:
        j = i
        while j + 1 < n and numbers[j + 1] == numbers[j] + 1:
            j += 1
        parts.append(f"{numbers[i]}" if j == i else f"{numbers[i]}-{numbers[j]}")
        i = j + 1
    return ",".join(parts)


def _torus_cluster(topology, routing, host_vertices):
    """SimGrid's ``TORUS`` cluster zone where it provably routes as ``dimension-order``.

    SimGrid 3.32 (``TorusZone::get_local_route``) corrects its dimensions in list order, position
    ``p`` of the cluster having coordinate ``(p / prod(dims[:j])) % dims[j]`` in dimension ``j`` (the
    first dimension varies fastest), and goes *up* in a ring of ``k`` when the source coordinate ``m``
    and target ``t`` satisfy ``m < t <= m + k/2`` or ``m > k/2 and t <= (m + k/2) % k``: the shorter way
    round, as libtopomap does.  Rings of odd ``k`` have no tie, so the two agree; rings of ``k = 2``
    have one link used both ways in both (SimGrid uses the lower position's link), so they agree too.
    On an even ring ``k >= 4`` the tie (displacement ``k/2``) goes up in libtopomap but *down* in
    SimGrid from ``m = k/2`` to ``t = 0``: such tori get explicit routes.

    libtopomap corrects dimension 0 first (the last on a hypercube, e-cube) and numbers vertices in C
    order; the cluster lists the dimensions in libtopomap's routing order and its ``radical`` lists, for
    each position, the number in the host's name, so host ``prefix + radical[p] + suffix`` sits at the
    position whose coordinates it has (names must all be ``prefix + integer + suffix``).

    Returns
    -------
    (dict or None, str)
        The cluster (``kind``, ``hostnames`` in position order, ``xml``) or None, and why not.
    """
    if routing != "dimension-order":
        return None, f"the TORUS zone routes as dimension-order, not {routing}"
    gen = topology.attrs.get("generator")
    shape = topology.distances.grid_shape
    if gen not in ("torus", "hypercube") or shape is None:
        return None, "the TORUS zone needs a torus or hypercube from libtopomap's generators"
    dims, wrap = (np.asarray(x) for x in shape)
    dims = dims.astype(np.int64)
    if gen == "torus" and not wrap.all():
        return None, "the TORUS zone needs wrap-around links in every dimension"
    if (dims < 2).any():
        return None, "the TORUS zone needs every dimension >= 2"
    even = dims[(dims >= 4) & (dims % 2 == 0)]
    if even.size:
        return None, (f"SimGrid's TORUS breaks the tie of a ring of even length {int(even[0])} differently "
                      "(down from coordinate k/2 to 0; libtopomap goes up)")
    n = int(np.prod(dims))
    if topology.n_vertices != n or topology.hosts.size != n:
        return None, "every vertex of the torus must be a host"
    slots = np.asarray(topology.slots)
    if (slots != slots[0]).any():
        return None, "SimGrid's clusters give every host the same number of cores"
    cap = np.asarray(topology.capacity)
    if (cap != cap[0]).any():
        return None, "SimGrid's clusters give every link the same bandwidth"
    # Links: exactly the grid's, one per (vertex, dimension) with k >= 3 and one per pair with k = 2.
    coords = np.stack(np.unravel_index(np.arange(n), tuple(dims)), 1)
    du = coords[topology.link_u]
    dv = coords[topology.link_v]
    diff = (dv - du) % dims
    moved = diff != 0
    one = moved.sum(1) == 1
    step = np.where(moved, np.minimum(diff, dims - diff), 0).sum(1) == 1
    expected = int(sum(n // 2 if k == 2 else n for k in dims.tolist()))
    if not (one & step).all() or topology.n_links != expected:
        return None, "the links are not exactly those of the torus"
    named = _name_numbers([topology.names[v] for v in range(n)])
    if named is None:
        return None, "host names are not all prefix + integer + suffix (SimGrid's cluster naming)"
    prefix, suffix, numbers = named
    order = np.arange(dims.size)
    if topology.distances.kind == "hypercube":
        order = order[::-1]
    sdims = dims[order]
    pos = np.arange(n, dtype=np.int64)
    c = np.empty((n, dims.size), dtype=np.int64)
    prod = 1
    for j, k in enumerate(sdims.tolist()):
        c[:, order[j]] = (pos // prod) % k
        prod *= k
    vertex_at = np.ravel_multi_index(tuple(c.T), tuple(dims))
    hostnames = tuple(topology.names[v] for v in vertex_at.tolist())
    return {"kind": "TORUS", "hostnames": hostnames, "prefix": prefix, "suffix": suffix,
            "radical": _radical(numbers[vertex_at].tolist()), "core": int(slots[0]),
            "topo_parameters": ",".join(str(k) for k in sdims.tolist()), "capacity": float(cap[0])}, ""


def _fat_tree_cluster(topology, routing, host_vertices):
    """Hook for SimGrid's ``FAT_TREE`` cluster zone, to be used only where it provably routes as ``dmodk``.

    SimGrid's ``FatTreeZone`` (topo_parameters ``levels;down;up;link counts``) sends a message up
    to the nearest common ancestor choosing, at each level, the up-port from the destination's
    position (d-mod-k).  Returning a cluster here needs a proof, as :func:`_torus_cluster` gives for
    ``TORUS``, that SimGrid's port numbering, host positions and up-port rule equal libtopomap's
    ``dmodk`` on the topology (a generated k-ary n-tree, every link of one capacity, host names
    ``prefix + integer + suffix``); the route-equality test of ``tests/test_smpi_platform.py`` then
    checks every pair.  Until then every fat tree gets explicit routes, which are exact for any model.

    Returns
    -------
    (dict or None, str)
        As :func:`_torus_cluster`.
    """
    if routing != "dmodk":
        return None, f"the FAT_TREE zone routes as dmodk, not {routing}"
    return None, "the FAT_TREE zone is not yet proven to route as libtopomap's dmodk"


#: Cluster zones tried in order by ``zone="auto"`` / ``"cluster"``: ``matcher(topology, routing,
#: host_vertices) -> (cluster dict or None, reason)``.
_CLUSTER_MATCHERS = (_torus_cluster, _fat_tree_cluster)


def _cluster_xml(cl, *, speed, bandwidth, latency, sharing):
    # Loopback as SimGrid's default (10 GB/s, 0 s, fatpipe) so that ranks on one host communicate as in
    # a Full zone, whose self routes take the network model's loopback.
    return (f'<cluster id="torus" prefix={_attr(cl["prefix"])} suffix={_attr(cl["suffix"])} '
            f'radical="{cl["radical"]}" speed="{speed}" core="{cl["core"]}" '
            f'bw="{bandwidth * cl["capacity"]!r}Bps" lat="{latency!r}s" sharing_policy="{sharing}" '
            f'topology="{cl["kind"]}" topo_parameters="{cl["topo_parameters"]}" '
            'loopback_bw="10GBps" loopback_lat="0s"/>\n')


def _attr(text):
    return '"' + escape(text, {'"': "&quot;"}) + '"'


# ---------------------------------------------------------------------------------------------- explicit routes
def _walk(topology, nxt, srcs, t, flow):
    """Paths of ``srcs`` to ``t`` along ``nxt`` (a ``sources x hops`` table padded with -1); None when a walk
    strands or loops, or the walks do not add up to ``flow`` (then the model is not destination-based here)."""
    cur = srcs.copy()
    steps = []
    for _ in range(topology.n_vertices):
        active = np.flatnonzero(cur != t)
        if active.size == 0:
            break
        arcs = nxt[cur[active]]
        if (arcs < 0).any():
            return None
        row = np.full(srcs.size, -1, dtype=np.int64)
        row[active] = arcs
        steps.append(row)
        cur[active] = topology.indices[arcs]
    else:
        return None
    table = np.stack(steps) if steps else np.zeros((0, srcs.size), np.int64)
    used = table[table >= 0]
    if not np.array_equal(np.bincount(used, minlength=flow.size), np.rint(flow).astype(np.int64)):
        return None
    return table.T.copy()  # one row per source, arcs in order, -1 after the destination


def _pair_path(topology, routing, s, t):
    """The single path of one pair, from a :func:`route_traffic` call for that pair alone."""
    from ..routing import route_traffic

    flow = route_traffic(topology, [s], [t], routing=routing)
    pos = np.flatnonzero(flow > 1e-9)
    names = topology.names
    if (np.abs(flow[pos] - 1.0) > 1e-6).any():
        raise ArgumentError(f"routing {routing!r} splits the messages of {names[s]} -> {names[t]} over several "
                            f"paths; a SimGrid platform needs one path per pair: choose one of "
                            f"{', '.join(SINGLE_PATH_ROUTINGS)}")
    nxt = {int(topology.arc_source[a]): int(a) for a in pos}
    path, v = [], s
    while v != t and len(path) <= pos.size:
        a = nxt.get(v)
        if a is None:
            break
        path.append(a)
        v = int(topology.indices[a])
    if v != t or len(path) != pos.size:
        raise ArgumentError(f"routing {routing!r} does not give {names[s]} -> {names[t]} one simple path")
    return np.asarray(path, dtype=np.int64)


def _paths_to(topology, routing, hv, t):
    """``(sources, paths)`` of every host of ``hv`` but ``t`` to ``t`` under ``routing``: a ``sources x hops``
    table padded with -1, or a list of arc arrays (per-pair fallback)."""
    from ..routing import route_traffic

    srcs = hv[hv != t]
    if srcs.size == 0:
        return srcs, []
    flow = route_traffic(topology, srcs, np.full(srcs.size, t, dtype=np.int64), routing=routing)
    nxt = nexthops.next_arcs(topology, flow)
    paths = None if nxt is None else _walk(topology, nxt, srcs, t, flow)
    if paths is None:  # single-path but not destination-based here: one call per pair
        paths = [_pair_path(topology, routing, int(s), t) for s in srcs.tolist()]
    return srcs, paths


# ---------------------------------------------------------------------------------------------- XML
def _plan(topology, routing, hosts, zone, max_routes, *, check_routes=True):
    """Check everything before building: the model, the hosts, the zone and (``check_routes``) the route count."""
    from ..topology import Topology

    if not isinstance(topology, Topology):
        raise ArgumentTypeError(f"platform needs a Topology, got {type(topology).__name__}")
    name = _routing_name(topology, routing)
    from ..routing import get_routing

    get_routing(name, topology).check(topology)  # TopologyError when the model cannot route here
    hv = _host_vertices(topology, hosts)
    if zone not in ZONES:
        raise ArgumentError(f"zone must be one of {', '.join(ZONES)}, got {zone!r}")
    cluster, reasons = None, []
    if zone in ("auto", "cluster"):
        for matcher in _CLUSTER_MATCHERS:
            cluster, why = matcher(topology, name, hv)
            if cluster is not None:
                break
            reasons.append(why)
        if cluster is None and zone == "cluster":
            raise ArgumentError(f"no SimGrid cluster zone routes as {name} on this topology: {'; '.join(reasons)}")
    if max_routes is None:
        max_routes = DEFAULT_MAX_ROUTES
    if isinstance(max_routes, bool) or not isinstance(max_routes, (int, np.integer)) or max_routes < 0:
        raise ArgumentError(f"max_routes must be an integer >= 0, got {max_routes!r}")
    if cluster is None and check_routes:
        n_routes = int(hv.size) * (int(hv.size) - 1)
        if n_routes > max_routes:
            raise ArgumentError(f"an explicit-route platform of {hv.size} hosts needs {n_routes:,} routes, above the "
                                f"limit of {int(max_routes):,} (max_routes / --max-routes); export an allocation "
                                "(hosts= / --allocation) or raise the limit")
    return name, hv, cluster


def _chunks(topology, name, hv, cluster, *, bandwidth, latency, sharing, speed):
    """The platform's XML, in pieces (one per destination for explicit routes)."""
    from .._version import __version__

    zone_kind = cluster["kind"] if cluster else "Full"
    head = ["<?xml version='1.0'?>\n",
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n',
            '<platform version="4.1">\n',
            f"<!-- libtopomap {__version__}: routing {name}, zone {zone_kind}, {hv.size} hosts, "
            f"capacity 1 = {bandwidth!r} B/s"
            + ("" if cluster else "; link lJ is topology link J, UP from link_u[J] to link_v[J]") + " -->\n"]
    if cluster:
        head.append(_cluster_xml(cluster, speed=speed, bandwidth=bandwidth, latency=latency, sharing=sharing))
        head.append("</platform>\n")
        yield "".join(head)
        return
    names = topology.names
    attr = {int(v): _attr(names[v]) for v in hv.tolist()}
    slots = topology.slots
    head.append('<zone id="libtopomap" routing="Full">\n')
    head.extend(f'<host id={attr[v]} speed="{speed}" core="{int(slots[v])}"/>\n' for v in hv.tolist())
    bws = np.asarray(topology.capacity, dtype=np.float64) * bandwidth
    head.extend(f'<link id="l{j}" bandwidth="{bw!r}Bps" latency="{latency!r}s" sharing_policy="{sharing}"/>\n'
                for j, bw in enumerate(bws.tolist()))
    yield "".join(head)
    link = topology.arc_link
    if sharing == "SPLITDUPLEX":
        up = np.asarray(topology.arc_source) == np.asarray(topology.link_u)[link]
        ctn = [f'<link_ctn id="l{j}" direction="{"UP" if u else "DOWN"}"/>'
               for j, u in zip(link.tolist(), up.tolist())]
    else:
        ctn = [f'<link_ctn id="l{j}"/>' for j in link.tolist()]
    ctn_of = np.asarray(ctn + [""], dtype=object)   # index -1: nothing
    for t in hv.tolist():
        srcs, paths = _paths_to(topology, name, hv, t)
        dst = attr[t]
        heads = [f'<route src={attr[s]} dst={dst} symmetrical="NO">' for s in srcs.tolist()]
        if isinstance(paths, np.ndarray):   # one vectorised join per destination
            cells = np.empty((srcs.size, paths.shape[1] + 2), dtype=object)
            cells[:, 0] = heads
            cells[:, 1:-1] = ctn_of[paths]
            cells[:, -1] = "</route>\n"
            yield "".join(cells.ravel().tolist())
        else:
            yield "".join(h + "".join([ctn[a] for a in p.tolist()]) + "</route>\n" for h, p in zip(heads, paths))
    yield "</zone>\n</platform>\n"


def _prepare(topology, routing, bandwidth, latency, hosts, sharing, speed, zone, max_routes):
    from ..simulate import parse_latency, unit_bandwidth

    bw = unit_bandwidth(topology, bandwidth)
    lat = parse_latency(latency)
    if sharing not in SHARING_POLICIES:
        raise ArgumentError(f"sharing must be one of {', '.join(SHARING_POLICIES)}, got {sharing!r}")
    sp = _speed(speed)
    if zone == "table":
        raise ArgumentError("the table zone is a platform library, not XML: write a .so (format='so' / -o P.so)")
    name, hv, cluster = _plan(topology, routing, hosts, zone, max_routes)
    hostnames = cluster["hostnames"] if cluster else tuple(topology.names[v] for v in hv.tolist())
    chunks = _chunks(topology, name, hv, cluster, bandwidth=bw, latency=lat, sharing=sharing, speed=sp)
    n_routes = 0 if cluster else int(hv.size) * (int(hv.size) - 1)
    return chunks, name, hostnames, n_routes, (cluster["kind"] if cluster else "Full")


def platform(topology, *, routing=None, bandwidth=None, latency="100ns", hosts=None, sharing="SPLITDUPLEX",
             speed="100Gf", zone="auto", max_routes=None):
    """A SimGrid 3.32 platform (XML text, DTD 4.1) of ``topology`` whose routes are those of ``routing``.

    Parameters
    ----------
    topology : Topology
        Generated, ingested or read from a file.
    routing : str or Routing, optional
        A single-path model of :data:`SINGLE_PATH_ROUTINGS` (``"lft:PATH"`` included), or ``"native"``.
        Default: the topology's native routing when single-path, else ``dimension-order`` on generated
        tori, meshes and hypercubes, ``dmodk`` on generated fat trees and ``table`` elsewhere.
    bandwidth : float or str, optional
        Bandwidth of a link of capacity 1, per direction (bytes/s or e.g. ``"100Gbps"``); link ``j``
        gets ``bandwidth x capacity[j]``.  Default (:func:`libtopomap.simulate.unit_bandwidth`): 1 Gb/s
        where the capacities are link rates in Gb/s (an ingested InfiniBand fabric: each link gets its
        cables' rate, 4x QDR 40 Gb/s, 4x EDR 100), else 100 Gb/s (capacity 1 = one 4x EDR link).
    latency : float or str
        Latency of every link (seconds or e.g. ``"100ns"``).
    hosts : sequence of str or int, optional
        The allocation: explicit routes only between these hosts (names or vertex indices), listed in
        this order.  A cluster zone always holds every host.
    sharing : {"SPLITDUPLEX", "SHARED", "FATPIPE"}
        SimGrid's link sharing; ``SPLITDUPLEX`` (full-duplex fabrics) gives each direction its own
        bandwidth.
    speed : str or float
        Flop/s of each core (``"100Gf"``).
    zone : {"auto", "full", "cluster"}
        ``auto``: a SimGrid cluster zone where it provably routes as the model (``TORUS`` for
        generated tori and hypercubes under ``dimension-order`` when no ring has an even length >= 4),
        else explicit routes; ``full``: explicit routes; ``cluster``: a cluster zone or an error.
    max_routes : int, optional
        Most explicit routes allowed (default :data:`DEFAULT_MAX_ROUTES`), checked before building.

    Returns
    -------
    str

    Raises
    ------
    ArgumentError
        A multipath or unknown routing, a bad value, a platform above ``max_routes``.
    TopologyError
        The model cannot route on this topology, or an unknown host.

    Examples
    --------
    >>> import libtopomap as ltm
    >>> xml = platform(ltm.torus("3x3"), routing="dimension-order")
    >>> 'topology="TORUS"' in xml
    True
    """
    chunks, *_ = _prepare(topology, routing, bandwidth, latency, hosts, sharing, speed, zone, max_routes)
    out = io.StringIO()
    for c in chunks:
        out.write(c)
    return out.getvalue()


def _format(path, fmt):
    if fmt is None:
        return "so" if os.fspath(path).endswith(".so") else "xml"
    if fmt not in FORMATS:
        raise ArgumentError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return fmt


def _write_xml(chunks, path):
    size = 0
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            for c in chunks:
                data = c.encode("utf-8")
                size += len(data)
                f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return size


def write_platform(topology, path, *, routing=None, bandwidth=None, latency="100ns", hosts=None,
                   sharing="SPLITDUPLEX", speed="100Gf", zone="auto", max_routes=None, format=None,
                   max_table_bytes=None, outdir=None):
    """Write a platform of ``topology`` to ``path``: XML (streamed: one destination's routes in memory at a
    time), or a platform library and its next-hop table (``P.so`` and ``P.so.table``).

    Parameters
    ----------
    topology : Topology
    path : str or os.PathLike
        With ``format="auto"`` a ``.xml``/``.so`` suffix is replaced by the one the zone needs.
    routing, bandwidth, latency, hosts, sharing, speed, max_routes
        As :func:`platform`.
    zone : {"auto", "full", "cluster", "table"}
        As :func:`platform`, plus ``table``: libtopomap's next-hop table zone (a platform library,
        :mod:`libtopomap.smpi.zone`), exact for destination-based routings (a vertex forwards each
        destination's messages on one arc whatever their source: dimension-order, ``table``, ``dmodk``...),
        ``hosts x vertices`` bytes instead of ``hosts^2`` explicit routes.  ``auto`` picks a cluster zone
        where one provably matches, else (when writing a library) the table zone for destination-based
        routings, else explicit routes.
    format : {"xml", "so", "auto"}, optional
        Default from ``path``: ``so`` when it ends in ``.so``, else ``xml``.  ``auto``: XML for a cluster
        zone and for explicit routes, a library for the table zone (what ``libtopomap smpi run`` uses).
    max_table_bytes : int, optional
        Most bytes of a next-hop table (default :data:`libtopomap.smpi.zone.DEFAULT_MAX_TABLE_BYTES`).
    outdir : str, optional
        Where the platform library is compiled once (default :func:`libtopomap.smpi.default_outdir`).

    Returns
    -------
    PlatformInfo

    Raises
    ------
    ArgumentError
        As :func:`platform`; also a table zone asked of XML, explicit routes asked of a library, a routing
        that is not destination-based under ``zone="table"``, a table above ``max_table_bytes``.
    SmpiError, SmpiUnavailable
        The platform library could not be compiled (no g++ or no SimGrid headers).
    """
    from ..simulate import parse_latency, unit_bandwidth
    from .zone import NotDestinationBased, write_table_platform

    t0 = time.perf_counter()
    fmt = _format(path, format)
    path = os.fspath(path)
    if fmt == "xml":
        chunks, name, hostnames, n_routes, kind = _prepare(topology, routing, bandwidth, latency, hosts, sharing,
                                                           speed, zone, max_routes)
        size = _write_xml(chunks, path)
        return PlatformInfo(path, tuple(hostnames), n_routes, size, time.perf_counter() - t0, kind, name)
    if fmt == "so" and zone in ("full", "cluster"):
        raise ArgumentError(f"a platform library (.so) holds the table zone, not zone {zone!r}: write XML")
    bw, lat = unit_bandwidth(topology, bandwidth), parse_latency(latency)
    if sharing not in SHARING_POLICIES:
        raise ArgumentError(f"sharing must be one of {', '.join(SHARING_POLICIES)}, got {sharing!r}")
    sp = _speed(speed)
    name, hv, cluster = _plan(topology, routing, hosts, zone, max_routes, check_routes=False)
    if fmt == "so":
        cluster = None   # a library holds the table zone only
    base = path[:-4] if path.endswith(".xml") else path[:-3] if path.endswith(".so") else path
    if cluster is None and zone in ("auto", "table"):
        lib = path if fmt == "so" else base + ".so"
        try:
            size = write_table_platform(topology, lib, routing=name, hv=hv, bandwidth=bw, latency=lat,
                                        sharing=sharing, speed=sp, max_table_bytes=max_table_bytes, outdir=outdir)
        except NotDestinationBased:
            if fmt == "so" or zone == "table":
                raise
        else:
            from .zone import TABLE_SUFFIX

            table = lib + TABLE_SUFFIX
            return PlatformInfo(lib, tuple(topology.names[v] for v in hv.tolist()), 0, size,
                                time.perf_counter() - t0, "table", name, table, os.path.getsize(table))
    # XML: a cluster zone, or explicit routes (the route limit is checked now)
    chunks, name, hostnames, n_routes, kind = _prepare(topology, routing, bandwidth, latency, hosts, sharing, speed,
                                                       "cluster" if cluster else "full", max_routes)
    out = base + ".xml"
    size = _write_xml(chunks, out)
    return PlatformInfo(out, tuple(hostnames), n_routes, size, time.perf_counter() - t0, kind, name)
