"""Classic ``ibnetdiscover`` topology files (with or without ``-g`` and ``-f``), ibdiagnet's
``.ibnetdiscover`` dialect and ibsim's hand-written net files.

Nodes are keyed by the GUID of their node line; every cable is counted once.  An example and the
rules: docs/formats.rst, "ibnetdiscover" (the grammar: ``shared/notes/ibnetdiscover_format.md``).
"""

from __future__ import annotations

import re

from ..errors import FormatError

from ._fabric import ROUTER, Diagnostics, Fabric, finish_fabric, parse_rate_token, read_hostmap, read_text
from .ibnetdiscover_ports import looks_like_ports, parse_ports_lines, sniff_ibnetdiscover_ports

__all__ = ["read_ibnetdiscover", "sniff_ibnetdiscover", "parse_ibnetdiscover_lines", "read_ibnetdiscover_ports",
           "sniff_ibnetdiscover_ports"]

_ID_LINE = re.compile(r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)\s*=\s*(\S*)")
_NODE_LINE = re.compile(r'^(Switch|Ca|Rt|Hca)\s+(\d{1,9})\s+"([^"]*)"(.*)$')
_PORT_LINE = re.compile(r'^\[(\d{1,9})\](?:\[ext \d+\])?(?:\(([^)]*)\))?\s*"([^"]*)"\[(\d{1,9})\](?:\[ext \d+\])?'
                        r'\s*(?:\(([^)]*)\))?(.*)$')
_GUID_ID = re.compile(r"^([SHR?])-(?:0x)?([0-9a-fA-F]{1,16})$")
_HEX = re.compile(r"^(?:0x)?([0-9a-fA-F]{1,16})$")
_SKIP = re.compile(r"^(DR path|Chassis|Non-Chassis|Hostname:|#)")
_SWITCH_TAIL = re.compile(r"(?:enhanced|base)\s+port\s+0\s+lid\s+(\S*)\s+lmc\s+(\S*)")
_OWN_LID = re.compile(r"^\s*lid\s+(\S*)\s+lmc\s+(\S*)")
_KINDS = {"Switch": "switch", "Ca": "ca", "Hca": "ca", "Rt": ROUTER}
_PREFIX_KIND = {"S": "switch", "H": "ca", "R": ROUTER, "?": "?"}
_MAX_PORT = 255
# Every width x speed word the classic writer prints, for a dictionary lookup before the regex.
_TOKENS = {f"{w}{x}{sp}": (w.rstrip("x"), sp)
           for w in ("1", "2", "4", "8", "12", "??") for x in (("x",) if w != "??" else ("", "x"))
           for sp in ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR", "???")}
_MAX_LID = 0xBFFF  # unicast LIDs are 1..0xBFFF


def _node_key(ident):
    """``(key, kind-from-prefix or None, guid or None)`` of a quoted node id."""
    m = _GUID_ID.match(ident)
    if m:
        kind = _PREFIX_KIND[m.group(1)]
        guid = int(m.group(2), 16)
        # Routers get an 'rtr-' name so that the LTM reader's switch rule keeps them switch-like.
        prefix = {"S": "S-", "H": "H-", "R": "rtr-", "?": "X-"}[m.group(1)]
        return f"{prefix}{guid:016x}", kind, guid
    return ident, None, None  # ibsim's free-form ids ("Switch1", "Hca1")


def _split_comment(rest):
    """``(before, desc, after)`` of a ``# ... "desc" ...`` comment; desc None when unquoted."""
    k = rest.find("#")
    if k < 0:
        return rest, None, ""
    c = rest[k + 1:]
    first = c.find('"')
    last = c.rfind('"')
    if first < 0 or last == first:
        return c, None, c
    return c[:first], c[first + 1:last], c[last + 1:]


def _lid(tok, fab, key, line):
    if tok is None:
        return
    try:
        lid = int(tok)
    except ValueError:
        fab.diag.warn(line, f"bad LID {tok!r} of {key}")
        return
    if not 0 <= lid <= _MAX_LID:
        fab.diag.warn(line, f"LID {lid} of {key} out of the unicast range 0..{_MAX_LID}")
        return
    fab.lid(lid, key, line)


def parse_ibnetdiscover_lines(lines, fab):
    """Feed the lines of a classic ibnetdiscover file into ``fab`` (a :class:`~libtopomap.adapters._fabric.Fabric`).

    Returns
    -------
    int
        Number of node lines seen (0 means this was not classic ibnetdiscover output).
    """
    diag = fab.diag
    nodes = fab.nodes
    ids = {}
    current = None  # (key, kind, numports) of the block being read
    n_nodes = 0
    key_cache = {}  # remote id -> _node_key(id): ids repeat on every port line
    for lineno, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s:
            continue
        if s[0] == "[":
            m = _PORT_LINE.match(s)
            if not m:
                diag.warn(lineno, f"malformed port line ignored: {s[:80]!r}")
                continue
            if current is None:
                diag.warn(lineno, "port line outside a node block ignored")
                continue
            key, kind, numports = current
            lport, lparen, rid, rport, rparen, rest = m.groups()
            lport, rport = int(lport), int(rport)
            if not 0 < lport <= _MAX_PORT or not 0 < rport <= _MAX_PORT:
                diag.warn(lineno, f"port number out of range 1..{_MAX_PORT} ignored")
                continue
            if numports and lport > numports:
                diag.warn(lineno, f"port {lport} of {key} is beyond its {numports} ports")
            if not rid:
                diag.warn(lineno, "empty remote node id; link ignored")
                continue
            rk = key_cache.get(rid)
            if rk is None:
                rk = key_cache[rid] = _node_key(rid)
            rkey, rkind, rguid = rk
            before, rdesc, after = _split_comment(rest)
            if kind != "switch" and lparen is not None:
                pm = _HEX.match(lparen.strip())
                if pm is None:
                    diag.warn(lineno, f"bad port GUID ({lparen}) of {key}[{lport}]")
                else:
                    nodes[key].port_guids[lport] = int(pm.group(1), 16)
                om = _OWN_LID.match(before)
                if om:
                    _lid(om.group(1), fab, key, lineno)
            width = speed = None
            for word in reversed(after.split()):
                t = _TOKENS.get(word)
                if t is not None:
                    width, speed = t
                    break
            else:
                width, speed = parse_rate_token(after)
            rnode = nodes.get(rkey)
            if rnode is None:
                rnode = fab.node(rkey, rkind or "?", rguid, desc=rdesc, line=lineno, define=False)
            elif rnode.kind == "?" and rkind is not None:
                rnode.kind = rkind
            if rparen is not None and rnode.kind == "ca":
                pm = _HEX.match(rparen.strip())
                if pm is None:
                    diag.warn(lineno, f"bad port GUID ({rparen}) of {rkey}[{rport}]")
                else:
                    rnode.port_guids.setdefault(rport, int(pm.group(1), 16))
            fab.half_link(key, lport, rkey, rport, width, speed, lineno)
            continue
        if s[0] == "#" or _SKIP.match(s):
            continue
        m = _ID_LINE.match(s)
        if m:
            name, value = m.groups()
            hm = _HEX.match(value.split("(")[0])
            if hm is None:
                diag.warn(lineno, f"bad {name} value {value[:40]!r}")
            else:
                ids[name] = int(hm.group(1), 16)
            current = None
            continue
        m = _NODE_LINE.match(s)
        if m:
            typ, numports, ident, rest = m.groups()
            n_nodes += 1
            kind = _KINDS[typ]
            key, pkind, guid = _node_key(ident)
            if not ident:
                diag.warn(lineno, "node line with an empty id ignored")
                current, ids = None, {}
                continue
            if pkind is not None and pkind != "?" and pkind != kind:
                diag.warn(lineno, f"{typ} node has id {ident!r} of another type; taken as {typ}")
            _, desc, after = _split_comment(rest)
            if desc is None and pkind is None:
                desc = ident  # ibsim: the id is the only name
            fab.node(key, kind, guid, desc=desc, line=lineno, sysimg=ids.get("sysimgguid"))
            if kind == "switch":
                tm = _SWITCH_TAIL.search(after)
                if tm:
                    _lid(tm.group(1), fab, key, lineno)
            current = (key, kind, int(numports))
            ids = {}
            continue
        diag.warn(lineno, f"unrecognised line ignored: {s[:80]!r}")
    return n_nodes


def read_ibnetdiscover(file, *, path="<stream>", strict=False, hostmap=None, slots=1, unknown_capacity=None,
                       rates="linux", name=None):
    """Read classic ``ibnetdiscover`` output (or ibdiagnet's ``.ibnetdiscover``, or an ibsim net file).

    Parameters
    ----------
    file, path, strict, slots
        The options of every fabric reader (:mod:`libtopomap.adapters._fabric`): the text stream,
        its name for messages, raise at the first problem, slots per host.
    hostmap : str, os.PathLike or dict, optional
        GUID -> hostname map (see :func:`libtopomap.adapters._fabric.read_hostmap`).
    unknown_capacity : float, optional
        Capacity of cables of unknown speed (default: the fabric's most common capacity).
    rates : {"linux", "signal", "effective"}
        Per-lane rate table.
    name : str, optional
        Topology name (default: the file name).

    Returns
    -------
    Topology
        Hosts (kind ``"host"``), switches ``S-<guid>`` and routers ``rtr-<guid>`` (0 slots).  The
        ingest report is in ``attrs`` (see :func:`libtopomap.adapters.ingest_report`).

    Raises
    ------
    FormatError
        Nothing usable in the file (no host), or any problem when ``strict``.
    """
    diag = Diagnostics(path, strict)
    hm = read_hostmap(hostmap, diag=diag) if hostmap is not None else None
    fab = Fabric(diag, hostmap=hm, slots=slots, unknown_capacity=unknown_capacity, rates=rates)
    lines = read_text(file)
    if not any(_NODE_LINE.match(s.strip()) for s in lines):
        if looks_like_ports(lines):  # a ports report named (or sniffed) as classic output
            parse_ports_lines(lines, fab)
            return finish_fabric(fab, path, name, "ibnetdiscover-ports")
    n_nodes = parse_ibnetdiscover_lines(lines, fab)
    if n_nodes == 0:
        raise FormatError("no node line (Switch/Ca/Rt ...) found: not ibnetdiscover output", path=path,
                          line=1)
    return finish_fabric(fab, path, name, "ibnetdiscover")


def read_ibnetdiscover_ports(file, *, path="<stream>", strict=False, hostmap=None, slots=1, unknown_capacity=None,
                             rates="linux", name=None):
    """Read an ``ibnetdiscover -p`` / ``-s -p`` ports report.

    Parameters and return value are those of :func:`libtopomap.adapters.ibnetdiscover.read_ibnetdiscover`.
    The hostmap is looked up with the port GUID and with ``port GUID - port number`` (the node GUID
    of ConnectX-3 and older HCAs).

    Raises
    ------
    FormatError
        Nothing usable (no host), or any problem when ``strict``.
    """
    diag = Diagnostics(path, strict)
    hm = read_hostmap(hostmap, diag=diag) if hostmap is not None else None
    fab = Fabric(diag, hostmap=hm, slots=slots, unknown_capacity=unknown_capacity, rates=rates)
    lines = read_text(file)
    if not looks_like_ports(lines):
        # -s output is sniffed from its 'DR path' lines alone; they also precede classic output.
        if parse_ibnetdiscover_lines(lines, fab):
            return finish_fabric(fab, path, name, "ibnetdiscover")
        raise FormatError("no port line ('SW|CA|RT <lid> <port> 0x<guid> ...') found: not an ibnetdiscover "
                          "ports report", path=path, line=1)
    parse_ports_lines(lines, fab)
    return finish_fabric(fab, path, name, "ibnetdiscover-ports")


_SNIFF = re.compile(r'^[ \t]*(?:(?:Switch|Ca|Rt|Hca)[ \t]+\d+[ \t]+"|(?:switchguid|caguid|rtguid)=|'
                    r"# This database file was automatically generated by IBDIAG|# Topology file:)", re.MULTILINE)


def sniff_ibnetdiscover(head):
    """True when the start of a file looks like classic ibnetdiscover output."""
    return bool(_SNIFF.search(head))

