"""A compact, exact SimGrid platform for destination-based routings: a platform library and its next-hop table.

:func:`write_table_platform` writes ``P.so`` (a copy of the compiled ``ltm_zone.cpp``) and ``P.so.table``
(``hosts x vertices`` ports) in place of ``hosts^2`` explicit routes.  Why it is exact and what it costs:
docs/simulation.rst, "The next-hop-table zone".
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from importlib import resources

import numpy as np

from ..errors import ArgumentError
from . import nexthops
from .build import SmpiError, default_outdir, tail

__all__ = ["DEFAULT_MAX_TABLE_BYTES", "NotDestinationBased", "build_zone_library", "zone_source", "table_bytes",
           "write_table_platform", "TABLE_SUFFIX"]

#: Most bytes a next-hop table may hold (``hosts x vertices x port bytes``), checked before building.
DEFAULT_MAX_TABLE_BYTES = 1 << 30
#: The table of platform library ``P.so`` is ``P.so`` + this suffix.
TABLE_SUFFIX = ".table"
_MAGIC = b"LTMZONE1"
_SHARING_CODE = {"FATPIPE": 0, "SHARED": 1, "SPLITDUPLEX": 2}


class NotDestinationBased(ArgumentError):
    """The routing sends some destination's messages from one vertex over several arcs (its path depends on
    the source): a next-hop table cannot hold it; explicit routes can."""


def zone_source():
    """Path of the platform library's C++ source (package data)."""
    return str(resources.files(__package__).joinpath("ltm_zone.cpp"))


def build_zone_library(outdir=None, *, force=False):
    """Compile ``ltm_zone.cpp`` into a platform library (``g++ -O2 -shared -fPIC ... -lsimgrid``), once per source.

    Parameters
    ----------
    outdir : str, optional
        Default :func:`libtopomap.smpi.default_outdir`; the library is ``ltm_zone-<source hash>.so`` there.
    force : bool
        Recompile even when the library of this source exists.

    Returns
    -------
    str
        Path of the library.

    Raises
    ------
    SmpiUnavailable
        No C++ compiler (``$CXX``, else ``g++``).
    SmpiError
        The compilation failed (e.g. no SimGrid headers: install libsimgrid-dev), with its last lines.
    """
    from .build import INSTALL_HINT, SmpiUnavailable

    with open(zone_source(), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    outdir = os.path.abspath(outdir or default_outdir())
    lib = os.path.join(outdir, f"ltm_zone-{digest}.so")
    if os.path.exists(lib) and not force:
        return lib
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None:
        raise SmpiUnavailable(f"no C++ compiler ({os.environ.get('CXX', 'g++')}) to build the platform library: "
                              f"install g++ and {INSTALL_HINT}")
    os.makedirs(outdir, exist_ok=True)
    tmp = f"{lib}.tmp{os.getpid()}"
    cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-o", tmp, zone_source(), "-lsimgrid"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SmpiError(f"g++ ltm_zone.cpp: {e}") from None
    if res.returncode != 0:
        if os.path.exists(tmp):
            os.unlink(tmp)
        hint = f" ({INSTALL_HINT})" if "simgrid" in (res.stderr or "") else ""
        raise SmpiError(f"g++ ltm_zone.cpp failed (exit {res.returncode}){hint}: {tail(res.stderr or res.stdout, 3)}")
    os.replace(tmp, lib)
    return lib


def _port_dtype(topology):
    deg = int(np.diff(np.asarray(topology.indptr)).max(initial=0))
    for dt in (np.uint8, np.uint16, np.uint32):
        if deg < np.iinfo(dt).max:   # all ones is "no route"
            return np.dtype(dt)
    raise ArgumentError(f"a vertex of degree {deg} is too many ports for the table")


def table_bytes(topology, n_hosts):
    """Bytes of the next-hop table of ``n_hosts`` destinations (the bulk of the table file)."""
    return int(n_hosts) * int(topology.n_vertices) * _port_dtype(topology).itemsize


def _forest_to(topology, nxt, srcs, t, flow):
    """Whether ``flow`` (whole numbers, at most one arc with flow out of each vertex: ``nxt``) is one unit
    from each of ``srcs`` to ``t`` along ``nxt``: conservation at every vertex (out - in = the sources
    there; ``t`` absorbs them all) and every source reaches ``t`` (pointer doubling, ``O(V log V)``), so
    each pair's path is the walk along ``nxt`` (what the per-source walk of the XML export checks, without
    walking every source)."""
    n = topology.n_vertices
    pos = np.flatnonzero(flow > 0.5)
    f = np.rint(flow[pos])
    net = (np.bincount(topology.arc_source[pos], f, minlength=n) - np.bincount(topology.indices[pos], f, minlength=n))
    supply = np.bincount(srcs, minlength=n).astype(np.float64)
    supply[t] = -float(srcs.size)
    if not np.array_equal(net, supply) or nxt[t] >= 0:
        return False
    succ = np.where(nxt >= 0, topology.indices[np.maximum(nxt, 0)], np.arange(n))
    for _ in range(max(1, int(n).bit_length())):
        succ = succ[succ]
    return bool((succ[srcs] == t).all())


def _ports_to(topology, routing, hv, t, indptr, none):
    """Row of the table for destination ``t``: each vertex's port toward ``t`` (``none``: not on a route)."""
    from ..routing import route_traffic

    srcs = hv[hv != t]
    row = np.full(topology.n_vertices, none, dtype=none.dtype)
    if srcs.size == 0:
        return row
    flow = route_traffic(topology, srcs, np.full(srcs.size, t, dtype=np.int64), routing=routing)
    nxt = nexthops.next_arcs(topology, flow)
    if nxt is None or not _forest_to(topology, nxt, srcs, t, flow):
        raise NotDestinationBased(f"routing {routing!r} is not destination-based on this topology (toward "
                                  f"{topology.names[t]} a vertex forwards over several arcs or a path depends on "
                                  "its source): it needs explicit routes")
    on = np.flatnonzero(nxt >= 0)
    row[on] = (nxt[on] - indptr[on]).astype(none.dtype)
    return row


def _pad(f, pos):
    pad = (-pos) % 8
    if pad:
        f.write(b"\0" * pad)
    return pos + pad


def write_table_platform(topology, path, *, routing, hv, bandwidth, latency, sharing, speed, max_table_bytes=None,
                         outdir=None):
    """Write the platform library ``path`` (a ``.so``) and its next-hop table ``path + ".table"``.

    Parameters
    ----------
    topology : Topology
    path : str
        The platform library to write (a copy of :func:`build_zone_library`'s).
    routing : str
        A single-path routing model (checked by the caller).
    hv : numpy.ndarray
        Vertex indices of the platform's hosts, in order.
    bandwidth, latency : float
        Bytes/s of a link of capacity 1 and seconds per link.
    sharing : str
        ``SPLITDUPLEX``, ``SHARED`` or ``FATPIPE``.
    speed : str
        Flop/s of a core, SimGrid syntax (``"100Gf"``).
    max_table_bytes : int, optional
        Refuse tables above this size (default :data:`DEFAULT_MAX_TABLE_BYTES`), before building.
    outdir : str, optional
        Where the library is compiled (:func:`build_zone_library`).

    Returns
    -------
    int
        Bytes written (library and table).

    Raises
    ------
    NotDestinationBased
        The routing's path toward some destination depends on the source.
    ArgumentError
        The table is above ``max_table_bytes``.
    """
    limit = DEFAULT_MAX_TABLE_BYTES if max_table_bytes is None else max_table_bytes
    need = table_bytes(topology, hv.size)
    if need > limit:
        raise ArgumentError(f"a next-hop table of {hv.size:,} hosts x {topology.n_vertices:,} vertices is "
                            f"{need:,} bytes, above the limit of {int(limit):,} (max_table_bytes); export an "
                            "allocation (hosts= / --allocation) or raise the limit")
    path = os.fspath(path)
    table = path + TABLE_SUFFIX
    dtype = _port_dtype(topology)
    none = np.array(np.iinfo(dtype).max, dtype=dtype)
    indptr = np.asarray(topology.indptr, dtype=np.int64)
    n_arcs = int(topology.n_arcs)
    up = np.asarray(topology.arc_source) == np.asarray(topology.link_u)[topology.arc_link]
    names = b"".join(topology.names[v].encode("utf-8") + b"\0" for v in hv.tolist())
    if any(b"\0" in topology.names[v].encode("utf-8") for v in hv.tolist()):
        raise ArgumentError("a host name holds a NUL character")
    sp = speed.encode("ascii") + b"\0"
    head = np.array([hv.size, topology.n_vertices, n_arcs, topology.n_links, _SHARING_CODE[sharing], dtype.itemsize,
                     len(names), len(sp)], dtype="<i8")
    sections = [np.asarray(indptr, dtype="<i4"), np.asarray(topology.indices, dtype="<i4"),
                np.asarray(topology.arc_link, dtype="<i4"), up.astype(np.uint8),
                np.asarray(topology.capacity, dtype="<f8") * float(bandwidth),
                np.full(topology.n_links, float(latency), dtype="<f8"),
                np.asarray(hv, dtype="<i4"), np.asarray(topology.slots, dtype="<i4")[hv]]
    lib = build_zone_library(outdir)
    tmp_t, tmp_l = f"{table}.tmp{os.getpid()}", f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp_t, "wb") as f:
            f.write(_MAGIC + head.tobytes())
            pos = len(_MAGIC) + head.nbytes
            for arr in sections:
                pos = _pad(f, pos)
                f.write(arr.tobytes())
                pos += arr.nbytes
            for blob in (names, sp):
                pos = _pad(f, pos)
                f.write(blob)
                pos += len(blob)
            pos = _pad(f, pos)
            rows = []
            for t in hv.tolist():   # one destination's row in memory at a time, written in blocks
                rows.append(_ports_to(topology, routing, hv, t, indptr, none).astype(dtype.newbyteorder("<")))
                if len(rows) >= 64:
                    f.write(b"".join(r.tobytes() for r in rows))
                    rows = []
            f.write(b"".join(r.tobytes() for r in rows))
        shutil.copyfile(lib, tmp_l)
        os.chmod(tmp_l, 0o755)
        os.replace(tmp_t, table)
        os.replace(tmp_l, path)
    finally:
        for p in (tmp_t, tmp_l):
            if os.path.exists(p):
                os.unlink(p)
    return os.path.getsize(path) + os.path.getsize(table)
