"""``ibnetdiscover -p`` (and ``-s -p``) ports reports: one line per port.

An example and the rules: docs/formats.rst, "ibnetdiscover -p" (the grammar:
``shared/notes/ibnetdiscover_format.md`` section 8).
"""  # noqa: E501 (a verbatim report line above)

from __future__ import annotations

import re

from ._fabric import ROUTER

__all__ = ["parse_ports_lines", "looks_like_ports", "sniff_ibnetdiscover_ports"]

_TYPES = {"SW": "switch", "CA": "ca", "RT": ROUTER}
_PREFIX = {"SW": "S-", "CA": "H-", "RT": "rtr-"}
_END = r"(SW|CA|RT)\s+(\d{1,9})\s+(\d{1,9})\s+0x([0-9a-fA-F]{1,16})"
_PORT = re.compile(r"^\s*" + _END + r"\s+(\S+)\s+(\S+)(.*)$")
_REMOTE = re.compile(r"^\s*-\s+" + _END + r"\s*\(\s?'(.*)'\s?\)\s*$")
_UNCONNECTED = re.compile(r"^\s*'(.*)'\s*$")
_WIDTH = re.compile(r"^(?:(1|2|4|8|12)[xX]|(\?\?)[xX]?)$")
_SPEED = re.compile(r"^(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR|\?\?\?)$")
# [ \t] rather than \s: a MULTILINE ^\s* rescans runs of blank lines (quadratic on a file of newlines)
_LINE_START = re.compile(r"^[ \t]*(SW|CA|RT)[ \t]+\d+[ \t]+\d+[ \t]+0x[0-9a-fA-F]+[ \t]", re.MULTILINE)
_MAX_PORT = 255
_MAX_LID = 0xFFFF


def looks_like_ports(lines):
    """True when a line of ``lines`` is a port line of a ports report."""
    return any(_LINE_START.match(s) for s in lines)


def parse_ports_lines(lines, fab):
    """Feed the lines of a ports report into ``fab``; returns the number of port lines read."""
    diag = fab.diag
    n_ports = 0
    for lineno, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s.startswith("DR path") or s.startswith("#"):
            continue
        m = _PORT.match(s)
        if not m:
            diag.warn(lineno, f"unrecognised line ignored: {s[:80]!r}")
            continue
        typ, lid, port, guid, width, speed, rest = m.groups()
        n_ports += 1
        wm, sm = _WIDTH.match(width), _SPEED.match(speed)
        if wm is None or sm is None:
            diag.warn(lineno, f"bad width/speed {width} {speed!r}; speed taken as unknown")
        w = (wm.group(1) or wm.group(2)) if wm else None
        sp = sm.group(1) if sm else None
        port, lid = int(port), int(lid)
        if rest.strip().startswith("'") or not rest.strip():
            um = _UNCONNECTED.match(rest)
            if rest.strip() and um is None:
                diag.warn(lineno, f"malformed description ignored: {rest.strip()[:60]!r}")
            continue  # an unconnected port
        rm = _REMOTE.match(rest)
        if rm is None:
            diag.warn(lineno, f"malformed remote end ignored: {rest.strip()[:80]!r}")
            continue
        rtyp, rlid, rport, rguid, descs = rm.groups()
        rport, rlid = int(rport), int(rlid)
        if not 0 < port <= _MAX_PORT or not 0 < rport <= _MAX_PORT:
            diag.warn(lineno, f"port number out of range 1..{_MAX_PORT} ignored")
            continue
        if lid > _MAX_LID or rlid > _MAX_LID:
            diag.warn(lineno, f"LID out of range 0..{_MAX_LID}")
        # "'local' - 'remote'": the quote is never escaped, so split at the last "' - '".
        k = descs.rfind("' - '")
        if k < 0:
            diag.warn(lineno, "descriptions not in the form ( 'local' - 'remote' ); link ignored")
            continue
        ldesc, rdesc = descs[:k], descs[k + 5:]
        a = _endpoint(fab, typ, guid, port, ldesc, lineno, define=True)
        b = _endpoint(fab, rtyp, rguid, rport, rdesc, lineno, define=False)
        if typ == "CA" or typ == "RT":
            fab.lid(lid, a, lineno)
        fab.half_link(a, port, b, rport, w, sp, lineno)
    return n_ports


def _endpoint(fab, typ, guid_hex, port, desc, lineno, *, define):
    guid = int(guid_hex, 16)
    key = f"{_PREFIX[typ]}{guid:016x}"
    kind = _TYPES[typ]
    n = fab.nodes.get(key)
    if n is None:
        n = fab.node(key, kind, guid, desc=desc, line=lineno, define=False)
    if define and not n.defined:
        n.defined, n.desc, n.line = True, desc, lineno
    elif n.desc is None:
        n.desc = desc
    if kind == "ca":
        n.guid_is_port = True
        n.port_guids.setdefault(port, guid)
    return key


def sniff_ibnetdiscover_ports(head):
    """True for a ports report, or a head made only of ``-s`` progress lines (``DR path ...``)."""
    if _LINE_START.search(head):
        return True
    lines = [s for s in head.splitlines()[:-1] if s.strip()]  # the last line may be cut
    return bool(lines) and all(s.startswith("DR path") for s in lines)

