"""The fabric model shared by the InfiniBand and Slurm adapters: nodes and half-links in, a
:class:`~libtopomap.Topology` with its ingest report out (:class:`Fabric`, :class:`Diagnostics`).

Cables, hosts, exclusions, components and link capacities: docs/formats.rst, "The fabric model".

The options of every fabric reader (``read_<format>(file, *, path="<stream>", strict=False, slots=1,
...)``): ``file`` a text stream, ``path`` its name in messages, ``strict`` (bool) to raise
:class:`~libtopomap.FormatError` at the first problem instead of warning, ``slots`` (int, or dict
hostname -> int) the slots per host, default 1.
"""

from __future__ import annotations

import os
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .._limits import check_vertex_count, max_vertices
from ..errors import FormatError, LibTopoMapWarning, TopologyError
from ..topology import HOST, SWITCH, Topology

__all__ = [
    "LANE_RATES", "LANE_RATES_SIGNAL", "LANE_RATES_EFFECTIVE", "WIDTH_LANES", "RATE_TOKEN", "parse_rate_token",
    "link_capacity", "hostname_from_description", "read_hostmap", "Diagnostics", "Fabric",
    "IngestReport", "ingest_report", "ROUTER", "finish_fabric",
]

ROUTER = "router"

#: Per-lane rate in Gb/s, Linux ``ib_speed_attrs`` / ``ibstat`` column.
LANE_RATES = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0, "EDR": 25.0,
              "HDR": 50.0, "NDR": 100.0, "XDR": 200.0}
#: Per-lane signalling rate in Gb/s (rdma-core ``libibmad/dump.c``).
LANE_RATES_SIGNAL = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.3125, "FDR": 14.0625,
                     "EDR": 25.78125, "HDR": 53.125, "NDR": 106.25, "XDR": 212.5}
#: Per-lane payload rate in Gb/s after 8b/10b, 64b/66b or RS-FEC encoding.
LANE_RATES_EFFECTIVE = {"SDR": 2.0, "DDR": 4.0, "QDR": 8.0, "FDR10": 10.0, "FDR": 13.64, "EDR": 25.0,
                        "HDR": 50.0, "NDR": 100.0, "XDR": 200.0}
_RATE_TABLES = {"linux": LANE_RATES, "signal": LANE_RATES_SIGNAL, "effective": LANE_RATES_EFFECTIVE}
WIDTH_LANES = {"1": 1, "2": 2, "4": 4, "8": 8, "12": 12}

#: Width x speed token, ``4xQDR`` (classic) or ``4x QDR`` (``-p`` report); ``??``/``???`` unknown.
#: An unknown width prints as ``??`` with no ``x`` (``??QDR``, ``?????``).
RATE_TOKEN = re.compile(r"(?<![0-9A-Za-z?])(?:(1|2|4|8|12)[xX]|(\?\?)[xX]?) ?"
                        r"(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR|\?\?\?)(?![0-9A-Za-z?])")


def parse_rate_token(text):
    """``(width, speed)`` of the first width/speed token in ``text``, or ``(None, None)``."""
    m = RATE_TOKEN.search(text)
    if m is None:
        return None, None
    return m.group(1) or m.group(2), m.group(3)

_HOST_DEV = re.compile(r"^(?P<host>\S+)\s+(?P<dev>HCA-\d+|mlx\d+_\d+|mthca\d+|qib\d+|hfi\d+_\d+|bnxt_re\d+|"
                       r"irdma\d+|rxe\d+|ehca\d+|ipath\d+|cxgb\d+|siw\d+)\s*$")
_UNNAMED = re.compile(r"^MT\d+\b.*Mellanox Technologies$|InfiniHost|^Mellanox Technologies\b|^\s*$",
                      re.IGNORECASE)
_AGGREGATION_NODE = re.compile(r"Aggregation Node", re.IGNORECASE)


def link_capacity(width, speed, rates="linux"):
    """Capacity in Gb/s of a link whose width token is ``width`` (``"4"``) and speed ``speed``
    (``"EDR"``); ``None`` when either is unknown (``??``, ``???``, missing).

    Examples
    --------
    >>> link_capacity("4", "EDR"), link_capacity("1", "XDR"), link_capacity("??", "QDR")
    (100.0, 200.0, None)
    """
    table = _RATE_TABLES[rates]
    lanes = WIDTH_LANES.get(width)
    rate = table.get(speed)
    if lanes is None or rate is None:
        return None
    return lanes * rate


def hostname_from_description(desc):
    """The hostname in a CA NodeDescription, or ``None`` when the text names no host.

    ``"node0254 HCA-1"`` and ``"stage114 mlx4_0"`` give the first word; firmware defaults
    (``"MT25408 ConnectX Mellanox Technologies"``, ``"... InfiniHost ..."``) and empty text give
    ``None``; any other text gives its first whitespace-separated word (``"atlas35"``).
    """
    if desc is None:
        return None
    m = _HOST_DEV.match(desc.strip())
    if m:
        return m.group("host")
    if _UNNAMED.search(desc.strip()):
        return None
    words = desc.split()
    return words[0] if words else None


def _parse_guid(tok):
    """GUID of ``H-<hex>``, ``0x<hex>`` or 16 bare hex digits; None otherwise (``bad`` is no GUID)."""
    t = tok.strip().strip('"')
    prefixed = False
    for prefix in ("H-", "S-", "R-", "h-", "s-", "r-"):
        if t.startswith(prefix):
            t, prefixed = t[2:], True
            break
    if t[:2] in ("0x", "0X"):
        t, prefixed = t[2:], True
    if not t or len(t) > 16 or not re.fullmatch(r"[0-9a-fA-F]+", t) or (not prefixed and len(t) != 16):
        return None
    return int(t, 16)


def read_hostmap(source, *, diag=None):
    """Read a GUID -> hostname map.

    Parameters
    ----------
    source : str, os.PathLike or dict
        A file with lines ``H-<guid> host``, ``0x<guid> host`` or opensm node-name-map lines
        ``0x<guid> "node01 HCA-1"`` (the hostname rule of :func:`hostname_from_description` is applied
        to quoted text); ``#`` comments and blank lines are skipped.  A dict maps GUIDs (int or hex
        str) to hostnames.
    diag : Diagnostics, optional
        Receives ``map:line: message`` warnings for bad lines (strict mode raises).

    Returns
    -------
    dict of int -> str
    """
    out = {}
    if isinstance(source, dict):
        for k, v in source.items():
            g = k if isinstance(k, int) else _parse_guid(str(k))
            if g is None or not str(v).split():
                raise FormatError(f"hostmap entry {k!r}: {v!r} is not '<guid>: <host>'")
            out[g] = str(v).split()[0]
        return out
    path = os.fspath(source)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as e:
        raise FormatError(f"cannot open hostmap: {e.strerror}", path=path) from None
    local = diag.child(path) if diag is not None else Diagnostics(path)
    for lineno, raw in enumerate(_split_lines(text), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split(None, 1)
        g = _parse_guid(parts[0])
        if g is None or len(parts) < 2:
            local.warn(lineno, f"hostmap line ignored: expected '<guid> <host>', got {s[:60]!r}")
            continue
        text_part = parts[1].strip()
        if text_part.startswith('"'):
            end = text_part.rfind('"')
            name = text_part[1:end] if end > 0 else text_part[1:]
            host = hostname_from_description(name) or (name.split() or [None])[0]
        else:
            host = text_part.split()[0]
        if not host:
            local.warn(lineno, f"hostmap line ignored: empty hostname for GUID {parts[0]}")
            continue
        out[g] = host
    if diag is not None and local is not diag:
        diag.warnings.extend(local.warnings)
    return out


def _split_lines(text):
    if text.startswith("\ufeff"):
        text = text[1:]
    return re.split(r"\r\n|\r|\n", text)


def read_text(file):
    """All lines of an open text stream, BOM stripped, split on CRLF, CR or LF."""
    return _split_lines(file.read())


#: Diagnostics of one read that are also issued as :class:`~libtopomap.LibTopoMapWarning`.
_WARN_FIRST = 10


class Diagnostics:
    """Collects ``file:line: message`` warnings; in strict mode the first one raises FormatError."""

    def __init__(self, path, strict=False):
        self.path = str(path)
        self.strict = bool(strict)
        self.warnings = []

    def warn(self, line, message):
        if self.strict:
            raise FormatError("strict mode: " + message, path=self.path, line=line)
        text = str(FormatError(message, path=self.path, line=line))
        self.warnings.append(text)
        # the first few as Python warnings too (the command line prints each on one line); all of them
        # are in the ingest report
        if len(self.warnings) <= _WARN_FIRST:
            warnings.warn(text if len(self.warnings) < _WARN_FIRST else text + " (further warnings: see the ingest "
                          "report, ingest_report(topology).warnings)", LibTopoMapWarning, stacklevel=3)

    def child(self, path):
        return Diagnostics(path, self.strict)


@dataclass
class _Node:
    key: str
    kind: str  # "switch", "ca", "router", or "?" for a placeholder of unknown type
    guid: int | None
    desc: str | None = None
    line: int | None = None
    sysimg: int | None = None
    defined: bool = False
    port_guids: dict = field(default_factory=dict)  # port -> port GUID (CAs)
    host: str | None = None  # hostname given by the format itself (Slurm)
    guid_is_port: bool = False  # the key GUID is a port GUID (-p reports)


class _Cable:
    """One cable: its two ends ``(node key, port)``, first line, halves seen, per-half (capacity, token)."""

    __slots__ = ("a", "b", "line", "halves", "caps")

    def __init__(self, a, b, line, halves, caps):
        self.a, self.b, self.line, self.halves, self.caps = a, b, line, halves, caps


class Fabric:
    """Nodes and half-links collected by a parser; :meth:`build` makes the Topology.

    Parameters
    ----------
    diag : Diagnostics
    hostmap : dict of int -> str, optional
        GUID -> hostname; wins over the NodeDescription.
    slots : int or dict, optional
        Slots per host vertex (default 1); a dict maps hostnames to slots (missing: 1).
    unknown_capacity : float, optional
        Capacity of cables whose width or speed is unknown on both ends.  Default: the most common
        known cable capacity of the fabric, or 1.0 when no cable has a known speed.
    rates : {"linux", "signal", "effective"}
        Per-lane rate table (module docstring).
    """

    def __init__(self, diag, *, hostmap=None, slots=1, unknown_capacity=None, rates="linux"):
        if rates not in _RATE_TABLES:
            raise FormatError(f"rates must be one of {sorted(_RATE_TABLES)}, got {rates!r}")
        if unknown_capacity is not None:
            try:
                unknown_capacity = float(unknown_capacity)
            except (TypeError, ValueError):
                raise FormatError(f"unknown_capacity must be a positive number, got {unknown_capacity!r}") from None
            if not np.isfinite(unknown_capacity) or unknown_capacity <= 0:
                raise FormatError(f"unknown_capacity must be a positive number, got {unknown_capacity!r}")
        if isinstance(slots, dict):
            bad = [k for k, v in slots.items() if not isinstance(v, (int, np.integer)) or v < 1]
            if bad:
                raise FormatError(f"slots for host {bad[0]!r} must be a positive integer, got {slots[bad[0]]!r}")
        elif not isinstance(slots, (int, np.integer)) or isinstance(slots, bool) or slots < 1:
            raise FormatError(f"slots must be a positive integer, got {slots!r}")
        self.diag = diag
        self.hostmap = hostmap or {}
        self.slots = slots
        self.unknown_capacity = unknown_capacity
        self.rates = rates
        self.nodes: dict[str, _Node] = {}
        self.cables: dict[tuple, _Cable] = {}
        self.port_owner: dict[tuple, tuple] = {}
        self.loops: set = set()
        self.lids: dict[int, tuple] = {}
        self.excluded: list = []
        self._rate_cache: dict = {}
        self._limit = max_vertices()  # nodes (each a vertex of the topology) before check_vertex_count

    # ------------------------------------------------------------------ input
    def node(self, key, kind, guid, *, desc=None, line=None, sysimg=None, define=True):
        """Create or update a node; ``define=False`` only makes a placeholder (far end of a link)."""
        n = self.nodes.get(key)
        if n is None:
            if len(self.nodes) >= self._limit:
                check_vertex_count(len(self.nodes) + 1, "this fabric, up to here,", path=self.diag.path, line=line,
                                   unit="nodes")
            n = _Node(key, kind, guid, desc, line, sysimg, define)
            self.nodes[key] = n
            return n
        if define:
            if n.defined:
                self.diag.warn(line, f"node {key} defined again (first on line {n.line}); merging")
            n.defined = True
            n.kind = kind if kind != "?" else n.kind
            n.desc = desc if desc is not None else n.desc
            n.line = line
            n.sysimg = sysimg if sysimg is not None else n.sysimg
        else:
            if n.kind == "?" and kind != "?":
                n.kind = kind
            if n.desc is None:
                n.desc = desc
        return n

    def lid(self, lid, key, line):
        """Record a LID (0 = unassigned is ignored); warn when another node already uses it."""
        if not lid:
            return
        prev = self.lids.get(lid)
        if prev is None:
            self.lids[lid] = (key, line)
        elif prev[0] != key:
            self.diag.warn(line, f"duplicate LID {lid}: also used by {prev[0]} (line {prev[1]})")

    def half_link(self, a, pa, b, pb, width, speed, line):
        """One end's view of a cable ``a[pa] -- b[pb]``; width/speed tokens may be None."""
        rate = self._rate_cache.get((width, speed))
        if rate is None:
            rate = self._rate_cache[(width, speed)] = (
                link_capacity(width, speed, self.rates) if width is not None else None,
                f"{width}x{speed}" if width is not None and speed is not None else None)
        ea, eb = (a, pa), (b, pb)
        key = (ea, eb) if ea <= eb else (eb, ea)
        c = self.cables.get(key)
        if c is not None:
            c.halves += 1
            c.caps.append(rate)
            if c.halves > 2:
                self.diag.warn(line, f"cable {a}[{pa}] -- {b}[{pb}] listed more than twice")
            return
        if a == b:
            if key not in self.loops:
                self.loops.add(key)
                self.diag.warn(line, f"self-loop cable {a}[{pa}] -- [{pb}] dropped")
            return
        port_owner = self.port_owner
        for end, other in ((ea, eb), (eb, ea)):
            owner = port_owner.get(end)
            if owner is not None:  # never this cable: it is not in self.cables yet
                c0 = self.cables[owner]
                far = c0.b if c0.a == end else c0.a
                self.diag.warn(line, f"port {end[0]}[{end[1]}] is already cabled to {far[0]}[{far[1]}] "
                                     f"(line {c0.line}); link to {other[0]}[{other[1]}] ignored")
                return
        self.cables[key] = _Cable(key[0], key[1], line, 1, [rate])
        port_owner[ea] = key
        port_owner[eb] = key

    def warn_one_sided(self):
        """One warning for the cables printed by one end only although both ends have a block of
        their own (every ibnetdiscover dialect prints each cable from both ends)."""
        nodes = self.nodes
        odd = [c for c in self.cables.values()
               if c.halves == 1 and nodes[c.a[0]].defined and nodes[c.b[0]].defined]
        if odd:
            c = odd[0]
            self.diag.warn(c.line, f"{len(odd)} cables are listed by one end only (e.g. {c.a[0]}[{c.a[1]}] -- "
                                   f"{c.b[0]}[{c.b[1]}]): the dump is inconsistent or was edited")

    # ------------------------------------------------------------------ output
    def _host_of(self, n):
        """(hostname or None, reason-if-excluded or None) of a CA node."""
        if n.host is not None:
            return n.host, None
        if n.desc is not None and _AGGREGATION_NODE.search(n.desc):
            return None, "SHARP Aggregation Node"
        if n.sysimg is not None and n.sysimg in self._switch_sysimg:
            return None, f"part of switch system {self._switch_sysimg[n.sysimg]} (same sysimgguid)"
        candidates = [n.guid] if n.guid is not None else []
        candidates += [pg for _, pg in sorted(n.port_guids.items())]
        for g in candidates:
            h = self.hostmap.get(g)
            if h is not None:
                return h, None
        h = hostname_from_description(n.desc)
        if h is None and n.guid_is_port:
            # -p reports give only port GUIDs; ConnectX-3 and older have node GUID = port GUID - port.
            # Only a fallback for CAs whose description names no host: a neighbouring device's GUID
            # could match too.
            for port, pg in sorted(n.port_guids.items()):
                h = self.hostmap.get(pg - port)
                if h is not None:
                    break
        return h, None

    def build(self, *, name=None, fmt=None):
        """Make the Topology (see the class docstring); raises FormatError when no host remains.

        The steps: switch and router vertices, host vertices (CAs grouped by hostname, non-hosts
        excluded), one link per cable, capacities of unknown cables, the connected component with
        the most hosts, then the topology with the ingest report in ``attrs``.
        """
        self._switch_sysimg = {n.sysimg: n.key for n in self.nodes.values()
                               if n.kind == "switch" and n.sysimg is not None}
        vertex_of, kinds = self._switch_vertices()
        hcas, unnamed = self._host_vertices(vertex_of, kinds)
        names = list(kinds)
        us, vs, caps, tokens, mismatches = self._cable_links(vertex_of, {nm: i for i, nm in enumerate(names)})
        caps, unknown_mask, fill = self._capacities(caps)
        self._check_hosts(names, hcas)
        u = np.asarray(us, dtype=np.int64)
        v = np.asarray(vs, dtype=np.int64)
        keep = self._largest_host_component(names, kinds, u, v)
        all_names = names
        names, links, lk = _keep_vertices(names, keep, u, v)
        kinds_list = [kinds[nm] for nm in names]
        tokens = [t for t, k in zip(tokens, lk) if k]
        attrs = self._report(fmt, names, kinds_list, hcas, unnamed, tokens, mismatches, fill,
                             int(unknown_mask[lk].sum()))
        if fmt != "slurm":
            attrs["fabric"] = self._addresses(vertex_of, all_names, keep)
        attrs.update(_capacity_unit(unknown_mask[lk]))
        try:
            return Topology(names, links, capacities=caps[lk], slots=self._slots(names, kinds_list), kinds=kinds_list,
                            name=name, attrs=attrs)
        except TopologyError as e:  # defensive: the checks above should make this unreachable
            raise FormatError(str(e), path=self.diag.path) from None

    def _switch_vertices(self):
        """``vertex_of`` (node key -> vertex name) and ``kinds`` (vertex name -> kind) of the switches
        and routers, each a vertex named by its key."""
        vertex_of, kinds = {}, {}
        for n in self.nodes.values():
            if n.kind == "switch":
                vertex_of[n.key] = n.key
                kinds[n.key] = SWITCH
            elif n.kind == ROUTER:
                vertex_of[n.key] = n.key
                kinds[n.key] = ROUTER
        return vertex_of, kinds

    def _host_vertices(self, vertex_of, kinds):
        """Add a host vertex per hostname to ``vertex_of`` and ``kinds``; CAs that are not hosts go
        to ``self.excluded``, nodes of unknown type are dropped with a warning.

        Returns
        -------
        (collections.Counter, int)
            CAs per host, and the number of CAs named after their GUID (no hostname found).
        """
        switch_keys = {n.key for n in self.nodes.values() if n.kind in ("switch", ROUTER)}
        cabled = set()
        for c in self.cables.values():
            cabled.add(c.a[0])
            cabled.add(c.b[0])
        hcas = Counter()
        unnamed = 0
        for n in self.nodes.values():
            if n.kind == "?":
                self.diag.warn(n.line, f"node {n.key} is only named by links and its type is unknown; dropped")
            if n.kind != "ca":
                continue
            host, reason = self._host_of(n)
            if reason is None and n.key not in cabled:
                reason = "no cabled port"
            if reason is not None:
                self.excluded.append({"node": n.key, "description": n.desc, "reason": reason, "line": n.line})
                continue
            unnamed += host is None
            host = self._host_vertex_name(n, host, switch_keys, kinds)
            vertex_of[n.key] = host
            kinds[host] = HOST
            hcas[host] += 1
        return hcas, unnamed

    def _host_vertex_name(self, n, host, switch_keys, kinds):
        """The vertex name of CA ``n`` of hostname ``host``: ``H-<key>`` when no hostname was found,
        the CA's key (with a warning) when the hostname is a switch's name."""
        if host is None:
            host = n.key if n.key.startswith("H-") else "H-" + n.key
        if host in switch_keys or kinds.get(host, HOST) != HOST:
            self.diag.warn(n.line, f"hostname {host!r} of {n.key} clashes with a switch name; using {n.key}")
            host = n.key if n.key not in kinds else "H-" + n.key
        return host

    def _cable_links(self, vertex_of, index):
        """One link per cable between two kept vertices: ``(us, vs, caps, tokens, mismatches)``, a
        capacity None where neither end knows the speed, and the number of cables whose ends disagree."""
        us, vs, caps, tokens = [], [], [], []
        mismatches = 0
        for c in self.cables.values():
            va, vb = vertex_of.get(c.a[0]), vertex_of.get(c.b[0])
            if va is None or vb is None:
                continue  # an end is excluded (SHARP AN ...) or of unknown type
            if va == vb:
                self.diag.warn(c.line, f"cable {c.a[0]}[{c.a[1]}] -- {c.b[0]}[{c.b[1]}] joins two CAs of host "
                                       f"{va!r}; dropped")
                continue
            cap, tok, mismatch = _cable_capacity(c)
            mismatches += mismatch
            us.append(index[va])
            vs.append(index[vb])
            caps.append(cap)
            tokens.append(tok)
        return us, vs, caps, tokens, mismatches

    def _addresses(self, vertex_of, names, keep):
        """The fabric's addresses for the routing models of real fabrics (``dmodk``, ``lft``), in vertex
        indices of the kept ``names``: ``ports``: ``[u, port of u, v, port of v]`` per cable; ``guid``:
        ``[vertex, node GUID]`` per switch; ``lid``: ``[vertex, LID, port GUID or 0]`` per CA LID.
        ``O(links)``."""
        new = np.cumsum(keep) - 1
        pos = {nm: i for i, nm in enumerate(names)}
        vert = {}
        for key, nm in vertex_of.items():
            i = pos.get(nm)
            if i is not None and keep[i]:
                vert[key] = int(new[i])
        cables = [c for c in self.cables.values() if c.a[0] in vert and c.b[0] in vert
                  and vertex_of[c.a[0]] != vertex_of[c.b[0]]]
        out_ports = [[vert[c.a[0]], int(c.a[1]), vert[c.b[0]], int(c.b[1])] for c in cables]
        guids = [[vert[n.key], int(n.guid)] for n in self.nodes.values()
                 if n.kind == "switch" and n.guid is not None and n.key in vert]
        lids = []
        for lid, (key, _) in sorted(self.lids.items()):
            n = self.nodes.get(key)
            if n is not None and n.kind == "ca" and key in vert:
                pg = next(iter(n.port_guids.values())) if len(n.port_guids) == 1 else 0
                lids.append([vert[key], int(lid), int(pg)])
        return {"ports": out_ports, "guid": guids, "lid": lids}

    def _capacities(self, caps):
        """``(capacities, unknown mask, fill)``: the cables of unknown speed (None) get ``fill``, which
        is ``unknown_capacity``, else the most common known capacity, else 1."""
        known = [c for c in caps if c is not None]
        if self.unknown_capacity is not None:
            fill = self.unknown_capacity
        else:
            fill = Counter(known).most_common(1)[0][0] if known else 1.0
        unknown = np.array([c is None for c in caps], dtype=bool)
        return np.array([fill if c is None else c for c in caps], dtype=np.float64), unknown, fill

    def _check_hosts(self, names, hcas):
        """FormatError when no vertex or no host is left."""
        if names and hcas:
            return
        raise FormatError("no host found: the input names no channel adapter with a cabled port"
                          if not self.excluded else
                          f"no host found: all {len(self.excluded)} channel adapters were excluded "
                          f"({self.excluded[0]['reason']}, ...)", path=self.diag.path)

    def _largest_host_component(self, names, kinds, u, v):
        """Mask of the vertices in the connected component with the most hosts (then the most
        vertices); the hosts left out go to ``self.excluded``, with one warning for all."""
        nv = len(names)
        adj = coo_matrix((np.ones(u.size), (u, v)), shape=(nv, nv))
        ncomp, labels = connected_components(adj, directed=False)
        is_host = np.array([kinds[nm] == HOST for nm in names])
        host_count = np.bincount(labels[is_host], minlength=ncomp)
        size = np.bincount(labels, minlength=ncomp)
        main = int(np.lexsort((-size, -host_count))[0])
        keep = labels == main
        if keep.all():
            return keep
        dropped_hosts = [names[i] for i in np.flatnonzero(~keep & is_host)]
        dropped_other = int((~keep & ~is_host).sum())
        if dropped_hosts or dropped_other:
            msg = (f"fabric is not connected: kept the component with {int(host_count[main])} hosts; dropped "
                   f"{len(dropped_hosts)} hosts and {dropped_other} switches/routers not connected to it")
            if dropped_hosts:
                msg += f" (e.g. {dropped_hosts[0]!r})"
            self.diag.warn(None, msg)
        for h in dropped_hosts:
            self.excluded.append({"node": h, "description": None,
                                  "reason": "not connected to the largest host component", "line": None})
        return keep

    def _slots(self, names, kinds_list):
        """Slots per vertex: ``self.slots`` (or its per-hostname dict, default 1) on hosts, 0 elsewhere."""
        if isinstance(self.slots, dict):
            return [self.slots.get(nm, 1) if k == HOST else 0 for nm, k in zip(names, kinds_list)]
        return [int(self.slots) if k == HOST else 0 for k in kinds_list]

    def _report(self, fmt, names, kinds_list, hcas, unnamed, tokens, mismatches, fill, unknown_speed):
        """The ingest report kept in the topology's ``attrs`` (read back by :func:`ingest_report`)."""
        return {
            "source": self.diag.path,
            "format": fmt,
            "switches": sum(k == SWITCH for k in kinds_list),
            "routers": sum(k == ROUTER for k in kinds_list),
            "hosts": sum(k == HOST for k in kinds_list),
            "cas": int(sum(hcas[nm] for nm, k in zip(names, kinds_list) if k == HOST)),
            "unnamed_cas": unnamed,
            "cables": len(tokens),
            "self_loops": len(self.loops),
            "speed_mismatches": mismatches,
            "unknown_speed_cables": unknown_speed,
            "unknown_capacity": float(fill),
            "rates": self.rates,
            "link_speeds": dict(sorted(Counter(tokens).items())),
            "excluded": self.excluded,
            "warnings": self.diag.warnings,
        }


def _capacity_unit(unknown_speed):
    """``{"capacity_unit": "Gb/s"}`` when a kept cable has a known speed (the capacities are then the cables'
    rates, which a platform export gives its links), else nothing."""
    return {} if unknown_speed.all() else {"capacity_unit": "Gb/s"}


def _keep_vertices(names, keep, u, v):
    """The kept vertex names, the links ``(u, v)`` between kept vertices renumbered, and the mask of
    the links kept."""
    new_index = np.full(len(names), -1, dtype=np.int64)
    new_index[keep] = np.arange(int(keep.sum()))
    lk = keep[u]
    links = np.stack([new_index[u[lk]], new_index[v[lk]]], axis=1)
    return [nm for nm, k in zip(names, keep) if k], links, lk


def _cable_capacity(cable):
    """``(capacity, token, mismatch)`` of a cable: the smaller end when both ends know the speed
    (``mismatch`` when they disagree), the one known end, or ``(None, a token or "unknown", False)``."""
    known = [(cap, tok) for cap, tok in cable.caps if cap is not None]
    if not known:
        return None, next((t for _, t in cable.caps if t is not None), "unknown"), False
    cap, tok = min(known)
    return cap, tok, len({cap for cap, _ in known}) > 1


def finish_fabric(fab, path, name, fmt):
    """The last step of the InfiniBand readers: warn about one-sided links, then build the topology of
    ``fab``, named after the file's base name unless ``name`` is given."""
    fab.warn_one_sided()
    if name is None and path not in (None, "<stream>"):
        name = os.path.basename(str(path))
    return fab.build(name=name, fmt=fmt)


@dataclass
class IngestReport:
    """What an adapter read: counts, excluded CAs, link-speed histogram, warnings.

    Built from a Topology's ``attrs`` by :func:`ingest_report`.
    """

    source: str
    format: str | None
    switches: int
    routers: int
    hosts: int
    cas: int
    unnamed_cas: int
    cables: int
    links: int
    self_loops: int
    speed_mismatches: int
    unknown_speed_cables: int
    unknown_capacity: float
    link_speeds: dict
    excluded: list
    warnings: list

    def summary(self):
        """Human-readable multi-line summary (what ``libtopomap ingest`` prints)."""
        lines = [
            f"source        {self.source} ({self.format})",
            f"switches      {self.switches}" + (f" (+{self.routers} routers)" if self.routers else ""),
            f"hosts         {self.hosts}" + ("" if self.format == "slurm" else f" ({self.cas} CAs" + (
                f", {self.unnamed_cas} named by GUID" if self.unnamed_cas else "") + ")"),
            f"cables        {self.cables} (distinct links {self.links}; self-loops dropped {self.self_loops})",
        ]
        speeds = ", ".join(f"{k}: {v}" for k, v in self.link_speeds.items()) or "-"
        lines.append(f"link speeds   {speeds}")
        if self.unknown_speed_cables:
            lines.append(f"              {self.unknown_speed_cables} cables of unknown speed get capacity "
                         f"{self.unknown_capacity:g}")
        if self.speed_mismatches:
            lines.append(f"              {self.speed_mismatches} cables whose ends disagree (slower end used)")
        reasons = Counter(e["reason"] for e in self.excluded)
        lines.append(f"excluded      {len(self.excluded)}" + ("" if not reasons else " (" + "; ".join(
            f"{n} {r}" for r, n in reasons.most_common()) + ")"))
        lines.append(f"warnings      {len(self.warnings)}")
        lines.extend("  " + w for w in self.warnings[:50])
        if len(self.warnings) > 50:
            lines.append(f"  ... {len(self.warnings) - 50} more")
        return "\n".join(lines)


def ingest_report(topology):
    """The :class:`IngestReport` of a topology read by one of the adapters.

    Raises
    ------
    FormatError
        The topology was not read by an adapter (its ``attrs`` carry no ingest data).
    """
    a = topology.attrs
    if "cables" not in a or "warnings" not in a:
        raise FormatError("this topology was not read by an ingest adapter (no ingest report in attrs)")
    return IngestReport(source=a.get("source"), format=a.get("format"), switches=a.get("switches", 0),
                        routers=a.get("routers", 0), hosts=a.get("hosts", 0), cas=a.get("cas", 0),
                        unnamed_cas=a.get("unnamed_cas", 0), cables=a["cables"], links=topology.n_links,
                        self_loops=a.get("self_loops", 0), speed_mismatches=a.get("speed_mismatches", 0),
                        unknown_speed_cables=a.get("unknown_speed_cables", 0),
                        unknown_capacity=a.get("unknown_capacity", 1.0), link_speeds=a.get("link_speeds", {}),
                        excluded=list(a.get("excluded", [])), warnings=list(a["warnings"]))
