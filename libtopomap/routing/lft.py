"""``lft:PATH``: the routes the subnet manager installed, read from the fabric's forwarding tables.

``PATH`` is a ``dump_lfts``/``dump_fts``/``ibroute`` dump, OpenSM's ``opensm-lfts.dump`` or ibdiagnet's
``.fdbs``, matched to the ingested ``ibnetdiscover`` fabric by switch GUID, host LID and port number.
The dumps, the matching and the errors: docs/routing.rst, "``dmodk`` and ``lft`` in detail".
"""

from __future__ import annotations

import os
import re

import numpy as np

from .._jit import njit
from ..errors import ArgumentError, TopologyError
from ._common import cached, find_arc, label, no_log, put
from ._models import Model

__all__ = ["LftContext", "read_lfts", "lft_context", "lft_route", "lft_hops", "LFT"]

_UNSET = 255
_HEADER = re.compile(r"^\s*Unicast lids \[[^\]]*\] of switch .*?guid 0x([0-9a-fA-F]{1,16})")
_FDBS_HEADER = re.compile(r"^\s*\S*dump_ucast_routes:\s*Switch\s+0x([0-9a-fA-F]{1,16})")
_ENTRY = re.compile(r"^\s*0x([0-9a-fA-F]{1,4})(?:\s*:\s*|\s+)(UNREACHABLE|\d{1,3})(?=\s|$)(.*)$")
_CA_GUID = re.compile(r"Channel Adapter portguid 0x([0-9a-fA-F]{1,16})")
_VALID = re.compile(r"^\s*(\d+) valid lids dumped")
_SKIP = re.compile(r"^\s*(?:$|Lid\s+Out|Port\s+Info|LID\s*:\s*Port|\d+ lids dumped|\*\*\*|#)")


class LftContext:
    """What :func:`lft_route` needs: ``lft`` (``uint8``, switch row x LID: the out-port, 255 unset),
    ``swrow`` (vertex -> row, -1 for non-switches), ``hostlid`` (vertex -> destination LID, 0 for
    non-hosts), ``hostarc`` (host -> arc of its first CA port, -1 elsewhere) and ``hosthead`` (the vertex
    at its other end), ``portarc`` (``[0]``: row x port -> arc, -1 where the port is not cabled; ``[1]``:
    the vertex at its other end); plus ``path`` and, per row, the table's first ``line``."""

    __slots__ = ("lft", "swrow", "hostlid", "hostarc", "hosthead", "portarc", "path", "line")

    def __init__(self, lft, swrow, hostlid, hostarc, hosthead, portarc, path, line):
        self.lft, self.swrow, self.hostlid, self.hostarc, self.portarc = lft, swrow, hostlid, hostarc, portarc
        self.hosthead, self.path, self.line = hosthead, path, line


def _fabric(topology):
    fab = topology.attrs.get("fabric") if isinstance(topology.attrs, dict) else None
    if not fab or not fab.get("guid") or not fab.get("lid"):
        raise TopologyError(f"topology{label(topology)}: lft routing needs a fabric read from ibnetdiscover output "
                            "(switch GUIDs, host LIDs and port numbers in attrs['fabric']); this one has none")
    return fab


def read_lfts(path, topology):
    """Parse the dump at ``path`` and match it to ``topology``: an :class:`LftContext`.

    Raises
    ------
    TopologyError
        ``path:line: ...`` for a line that is not part of such a dump, an unknown switch GUID, a port
        not cabled, a LID of another CA; ``path: ...`` when no table is found.
    ArgumentError
        The file cannot be read.
    """
    fab = _fabric(topology)
    n = topology.n_vertices
    names = topology.names
    guid_vertex = {int(g): int(v) for v, g in fab["guid"]}
    hostlid = np.zeros(n, np.int64)
    lid_host = {}
    lid_guid = {}
    for v, lid, pg in sorted(fab["lid"], key=lambda r: r[1]):
        if hostlid[v] == 0:
            hostlid[v] = lid
        lid_host[int(lid)] = int(v)
        lid_guid[int(lid)] = int(pg)
    maxlid = int(hostlid.max())
    ports = np.asarray(fab.get("ports") or np.zeros((0, 4)), np.int64).reshape(-1, 4)
    maxport = int(ports[:, [1, 3]].max()) if ports.size else 0
    # the arc out of each (vertex, port)
    port_arc = {}
    for u, pu, v, pv in ports.tolist():
        for a, pa, b in ((u, pu, v), (v, pv, u)):
            arc = find_arc(topology.indptr, topology.indices, a, b)
            if arc >= 0:
                port_arc[(a, pa)] = int(arc)
    hostarc = np.full(n, -1, np.int64)
    host_port = {}
    for u, pu, v, pv in ports.tolist():
        for a, pa, b in ((u, pu, v), (v, pv, u)):
            if hostlid[a] > 0 and (a, pa) in port_arc:
                host_port.setdefault(a, []).append(pa)
    for a, ps in host_port.items():
        hostarc[a] = port_arc[(a, min(ps))]
    swrow = np.full(n, -1, np.int64)
    rows, lines, tables = [], [], []
    text_path = os.fspath(path)
    try:
        fh = open(text_path, encoding="utf-8", errors="replace")
    except OSError as e:
        raise ArgumentError(f"lft routing: cannot open {text_path}: {e.strerror}") from None
    cur = None
    expect = None
    count = 0
    footers = 0
    lineno = 0

    def where(lineno):
        return f"{text_path}:{lineno}"

    def close(lineno):
        if cur is not None and expect is not None and count != expect:
            raise TopologyError(f"{where(lineno)}: the table of switch {names[rows[-1]]!r} has {count} entries but "
                                f"says {expect} valid lids dumped (truncated or edited dump)")

    with fh:
        for lineno, raw in enumerate(fh, 1):
            m = _HEADER.match(raw) or _FDBS_HEADER.match(raw)
            if m:
                close(lineno)
                g = int(m.group(1), 16)
                v = guid_vertex.get(g)
                if v is None:
                    raise TopologyError(f"{where(lineno)}: switch guid 0x{g:016x} is not in the fabric "
                                        f"{label(topology).strip() or 'topology'} (a dump of another fabric?)")
                if swrow[v] >= 0:
                    raise TopologyError(f"{where(lineno)}: second table of switch {names[v]!r} (first on line "
                                        f"{lines[swrow[v]]})")
                swrow[v] = len(rows)
                rows.append(v)
                lines.append(lineno)
                cur = np.full(maxlid + 1, _UNSET, np.uint8)
                tables.append(cur)
                expect, count = None, 0
                continue
            m = _ENTRY.match(raw)
            if m:
                if cur is None:
                    raise TopologyError(f"{where(lineno)}: LID entry before any 'Unicast lids ... of switch' or "
                                        "'dump_ucast_routes: Switch' header")
                count += 1
                lid = int(m.group(1), 16)
                if lid > maxlid or lid not in lid_host or m.group(2) == "UNREACHABLE":
                    continue
                port = int(m.group(2))
                sw = rows[-1]
                ca = _CA_GUID.search(m.group(3))
                if ca is not None and lid_guid.get(lid) and int(ca.group(1), 16) != lid_guid[lid]:
                    raise TopologyError(f"{where(lineno)}: LID {lid} is CA port guid 0x{int(ca.group(1), 16):016x} "
                                        f"here but 0x{lid_guid[lid]:016x} ({names[lid_host[lid]]!r}) in the fabric"
                                        f"{label(topology)}")
                if port == 0 or port > 254 or (sw, port) not in port_arc:
                    raise TopologyError(f"{where(lineno)}: switch {names[sw]!r} sends LID {lid} "
                                        f"({names[lid_host[lid]]!r}) to port {port}, which is not cabled in the "
                                        f"fabric{label(topology)}")
                cur[lid] = port
                continue
            m = _VALID.match(raw)
            if m:
                footers += 1
                expect = int(m.group(1))
                close(lineno)
                cur, expect = None, None
                continue
            if _SKIP.match(raw):
                continue
            raise TopologyError(f"{where(lineno)}: not a line of a forwarding-table dump (dump_lfts, "
                                f"opensm-lfts.dump, ibdiagnet .fdbs): {raw.strip()[:60]!r}")
    if cur is not None and footers:
        raise TopologyError(f"{where(lineno)}: the file ends inside the table of switch {names[rows[-1]]!r} "
                            "(no 'valid lids dumped' line: truncated dump?)")
    if not rows:
        raise TopologyError(f"{text_path}: no forwarding table found (expected dump_lfts, opensm-lfts.dump or "
                            "ibdiagnet .fdbs output)")
    indices = topology.indices
    portarc = np.full((2, len(rows), max(maxport, 1) + 1), -1, np.int64)
    for (a, pa), arc in port_arc.items():
        r = swrow[a]
        if r >= 0:
            portarc[0, r, pa] = arc
            portarc[1, r, pa] = indices[arc]
    hosthead = np.where(hostarc >= 0, indices[np.maximum(hostarc, 0)], -1).astype(np.int64)
    lft = np.stack(tables) if tables else np.zeros((0, maxlid + 1), np.uint8)
    return LftContext(lft, swrow, hostlid, hostarc, hosthead, portarc, text_path, np.asarray(lines, np.int64))


@njit(cache=True, inline="always")
def _entry_port(lft, portarc, r, lid):
    """The port of table row ``r``'s entry for ``lid``; -1 when the entry is unset or the port uncabled."""
    p = lft[r, lid] if lid < lft.shape[1] else _UNSET
    if p == _UNSET or p >= portarc.shape[2] or portarc[1, r, p] < 0:
        return -1
    return np.int64(p)


@njit(cache=True, inline="always")
def _next_node(lft, swrow, portarc, u, lid):
    """The node after ``u`` on the way to ``lid`` and the arc there: ``(-1, -1)`` when ``u`` has no
    table (not a switch), ``(-2, -1)`` when its entry is unset or its port uncabled."""
    r = swrow[u]
    if r < 0:
        return -1, -1
    p = _entry_port(lft, portarc, r, lid)
    if p < 0:
        return -2, -1
    return portarc[1, r, p], portarc[0, r, p]


@njit(cache=True)
def lft_route(lft, swrow, hostlid, hostarc, hosthead, portarc, s, t, w, traffic, log_arc, log_val, log_n):
    """Walk the tables from host ``s`` to host ``t``, ``w`` added to every arc; its hops, or ``-1 -
    row`` (``row`` the switch whose entry failed, ``-1`` for the source) when the walk finds no entry,
    an uncabled port, another node, or loops."""
    if s == t:
        return 0
    lid = hostlid[t]
    a = hostarc[s]
    if lid <= 0 or a < 0:
        return -1
    put(traffic, a, w, log_arc, log_val, log_n)
    u = hosthead[s]
    h = 1
    n = swrow.size
    while u != t:
        v, arc = _next_node(lft, swrow, portarc, u, lid)
        if v == -1:
            return -1
        if v == -2 or h > n:
            return -2 - swrow[u]
        put(traffic, arc, w, log_arc, log_val, log_n)
        u = v
        h += 1
    return h


@njit(cache=True)
def lft_hops(lft, swrow, hostlid, hosthead, portarc, s, t):
    """Links crossed from host ``s`` to host ``t`` along the tables (-1 when the walk fails)."""
    if s == t:
        return 0
    lid, u, h = hostlid[t], hosthead[s], 1
    if lid <= 0:
        return -1
    while u != t:
        if u < 0 or h > swrow.size:  # no link, no entry, an uncabled port, or a loop
            return -1
        u = _next_node(lft, swrow, portarc, u, lid)[0]
        h += 1
    return h


@njit(cache=True)
def _check_all(lft, swrow, hostlid, hosthead, portarc, hosts):
    """Walk every host pair once per destination, each switch resolved once (``O(hosts x switches)``):
    ``(-1, -1, 0, -1, -1)`` when every route arrives, else ``(s, t, code, prev, u)`` of the first that
    does not: ``code`` -1 when it reaches node ``u`` that has no table (or another host) from the entry
    of row ``prev`` (-1: the source's own link), ``-2 - row`` when the entry of ``row`` fails or loops."""
    n = swrow.size
    state = np.zeros(n, np.int64)  # per destination: 0 unknown, 1 arrives, 2 on the current walk
    for t in hosts:
        lid = hostlid[t]
        state[:] = 0
        state[t] = 1
        for s in hosts:
            if s == t:
                continue
            u = hosthead[s]
            if u < 0:
                return s, t, -1, -1, u
            prev = -1
            while state[u] != 1:
                r = swrow[u]
                if state[u] == 2:
                    return s, t, -2 - r, prev, u
                if r < 0:
                    return s, t, -1, prev, u
                p = _entry_port(lft, portarc, r, lid)
                if p < 0:
                    return s, t, -2 - r, prev, u
                state[u] = 2
                u = portarc[1, r, p]
                prev = r
            u = hosthead[s]  # mark the walk as arriving
            while state[u] == 2:
                state[u] = 1
                u = portarc[1, swrow[u], lft[swrow[u], lid]]
    return -1, -1, 0, -1, -1


def _entry_line(ctx, row, lid):
    """The line of ``row``'s entry for ``lid`` (its table's first line when there is none)."""
    start = int(ctx.line[row])
    try:
        with open(ctx.path, encoding="utf-8", errors="replace") as fh:
            for lineno, raw in enumerate(fh, 1):
                if lineno <= start:
                    continue
                if _HEADER.match(raw) or _FDBS_HEADER.match(raw):
                    break
                m = _ENTRY.match(raw)
                if m and int(m.group(1), 16) == lid:
                    return lineno
    except OSError:  # the file went away after it was read: its table's first line still points the user there
        return start
    return start


def _validate(topology, ctx):
    hosts = np.flatnonzero(ctx.hostlid > 0).astype(np.int64)
    s, t, code, prev, u = _check_all(ctx.lft, ctx.swrow, ctx.hostlid, ctx.hosthead, ctx.portarc, hosts)
    if s < 0:
        return
    names = topology.names
    lid = int(ctx.hostlid[t])
    route = f"the route from {names[s]!r} to {names[t]!r} (LID {lid})"
    if code == -1:
        where = f"{ctx.path}:{_entry_line(ctx, prev, lid)}" if prev >= 0 else ctx.path
        what = ("switch " + repr(names[u]) + ", which has no table in this file (truncated dump?)"
                if int(topology.slots[u]) == 0 else f"host {names[u]!r} instead")
        raise TopologyError(f"{where}: {route} reaches {what}")
    row = -2 - code
    sw = int(np.flatnonzero(ctx.swrow == row)[0])
    p = int(ctx.lft[row, lid]) if lid < ctx.lft.shape[1] else _UNSET
    what = ("has no entry for it" if p == _UNSET else
            f"sends it to port {p}, which is not cabled" if p >= ctx.portarc.shape[2] or ctx.portarc[0, row, p] < 0 else
            f"sends it round a loop (port {p})")
    raise TopologyError(f"{ctx.path}:{_entry_line(ctx, row, lid)}: {route} does not reach it: switch {names[sw]!r} "
                        f"{what}")


def lft_context(topology, path):
    """The checked :class:`LftContext` of the dump at ``path`` on ``topology`` (cached per file version)."""
    path = os.path.expanduser(str(path))
    try:
        st = os.stat(path)
    except OSError as e:
        raise ArgumentError(f"lft routing: cannot open {path}: {e.strerror}") from None

    def build():
        ctx = read_lfts(path, topology)
        _validate(topology, ctx)
        return ctx

    return cached(topology, ("lft", os.path.abspath(path), st.st_mtime_ns, st.st_size), build)


def _context(name, topology):
    return lft_context(topology, name.partition(":")[2].strip())


@njit(cache=True)
def _lft_batch(lft, swrow, hostlid, hostarc, hosthead, portarc, s, t, w, traffic, hops):
    log_arc, log_val, log_n = no_log()
    for i in range(s.size):
        if s[i] == t[i]:
            hops[i] = 0
            continue
        h = lft_route(lft, swrow, hostlid, hostarc, hosthead, portarc, s[i], t[i], w[i], traffic, log_arc, log_val,
                      log_n)
        if h < 0:
            return i
        hops[i] = h
    return -1


def _run(topology, ctx, s, t, w):
    traffic = np.zeros(topology.indices.size)
    hops = np.zeros(s.size, np.int64)
    bad = _lft_batch(ctx.lft, ctx.swrow, ctx.hostlid, ctx.hostarc, ctx.hosthead, ctx.portarc, s, t, w, traffic, hops)
    if bad >= 0:
        end = int(s[bad]) if ctx.hostarc[s[bad]] < 0 else int(t[bad])
        raise TopologyError(f"topology{label(topology)}: lft routes between the hosts of the tables only; demand "
                            f"{bad} ({s[bad]} -> {t[bad]}) has {topology.names[end]!r} as an end")
    return traffic, hops


def _traffic(topology, name, ctx, s, t, w):
    return _run(topology, ctx, s, t, w)[0]


def _hops(topology, name, ctx, s, t):
    return _run(topology, ctx, s, t, np.ones(s.size))[1]


#: The subnet manager's routes, ``routing="lft:PATH"``.
LFT = Model("lft", _traffic, context=_context, hops=_hops, shortest=False)
