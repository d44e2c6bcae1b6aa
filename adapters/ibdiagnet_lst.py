"""OpenSM / ibdiagnet ``.lst`` link lists (``subnet.lst``, ``ibdiagnet.lst``, ``ibdiagnet2.lst``).

::

    { CA Ports:02 SystemGUID:... NodeGUID:0002c90109768ea0 PortGUID:... VenID:000002C9 DevID:5A440000
      Rev:000000A1 {swlab229 HCA-1} LID:0038 PN:01 } { SW Ports:08 ... {MT43132 Mellanox Technologies}
      LID:0026 PN:03 } PHY=4x LOG=ACT SPD=5

(one line per link direction).  Nodes are keyed by NodeGUID (``S-<guid>``, ``H-<guid>``,
``rtr-<guid>``); the type may carry an ``-SM`` suffix.  ``PHY`` is the width, ``SPD`` the per-lane
rate in Gb/s (2.5 when missing, as in ibutils' ``Fabric.cpp`` ``parseSubnetLine``).  The model is
that of :mod:`libtopomap.adapters._fabric`.
"""

from __future__ import annotations

import re

from ..errors import FormatError

from ._fabric import ROUTER, Diagnostics, Fabric, finish_fabric, read_hostmap, read_text

__all__ = ["read_ibdiagnet_lst", "sniff_ibdiagnet_lst"]

_END = (r"\{\s*(SW|CA|RT)(?:-SM)?\s+Ports:\s*([0-9A-Fa-f]+)\s+SystemGUID:\s*([0-9A-Fa-f]{1,16})\s+"
        r"NodeGUID:\s*([0-9A-Fa-f]{1,16})\s+PortGUID:\s*([0-9A-Fa-f]{1,16})\s+[^{}]*\{(.{0,128}?)\}\s+"
        r"LID:\s*([0-9A-Fa-f]+)\s+PN:\s*([0-9A-Fa-f]+)\s*\}")
# Bounded pieces ([^{}]*, a description of at most 128 characters) keep garbage lines linear.
_LINE = re.compile(r"^\s*" + _END + r"\s*" + _END + r"(.*)$")
_PHY = re.compile(r"PHY=(\d+)[xX]")
_SPD = re.compile(r"SPD=([0-9.]+)")
_SPEED_OF_RATE = {2.5: "SDR", 5.0: "DDR", 10.0: "QDR", 14.0: "FDR", 25.0: "EDR", 50.0: "HDR", 100.0: "NDR",
                  200.0: "XDR"}
_KIND = {"SW": "switch", "CA": "ca", "RT": ROUTER}
_PREFIX = {"SW": "S-", "CA": "H-", "RT": "rtr-"}


def read_ibdiagnet_lst(file, *, path="<stream>", strict=False, hostmap=None, slots=1, unknown_capacity=None,
                       rates="linux", name=None):
    """Read an OpenSM/ibdiagnet ``.lst`` link list.

    Parameters and return value are those of :func:`libtopomap.adapters.ibnetdiscover.read_ibnetdiscover`.

    Raises
    ------
    FormatError
        No link line, nothing usable (no host), or any problem when ``strict``.
    """
    diag = Diagnostics(path, strict)
    hm = read_hostmap(hostmap, diag=diag) if hostmap is not None else None
    fab = Fabric(diag, hostmap=hm, slots=slots, unknown_capacity=unknown_capacity, rates=rates)
    n = 0
    for lineno, raw in enumerate(read_text(file), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        m = _LINE.match(s)
        if m is None:
            diag.warn(lineno, f"unrecognised line ignored: {s[:80]!r}")
            continue
        g = m.groups()
        ends = []
        for typ, _ports, sysimg, node, port_guid, desc, lid, pn in (g[0:8], g[8:16]):
            key = f"{_PREFIX[typ]}{int(node, 16):016x}"
            nd = fab.nodes.get(key)
            if nd is None:
                nd = fab.node(key, _KIND[typ], int(node, 16), desc=desc, line=lineno, sysimg=int(sysimg, 16),
                              define=False)
            if nd.kind == "ca":
                nd.port_guids.setdefault(int(pn, 16), int(port_guid, 16))
            ends.append((key, int(pn, 16), int(lid, 16)))
        (a, pa, la), (b, pb, lb) = ends
        if not 0 < pa <= 255 or not 0 < pb <= 255:
            diag.warn(lineno, "port number out of range 1..255 ignored")
            continue
        fab.lid(la, a, lineno)
        tail = g[16]
        wm = _PHY.search(tail)
        sm = _SPD.search(tail)
        try:
            rate = float(sm.group(1)) if sm else 2.5
        except ValueError:
            rate = None
        speed = _SPEED_OF_RATE.get(rate, "???")
        fab.half_link(a, pa, b, pb, wm.group(1) if wm else "??", speed, lineno)
        n += 1
    if n == 0:
        raise FormatError("no link line ('{ SW Ports:... } { CA Ports:... } PHY=...') found: not an .lst file",
                          path=path, line=1)
    return finish_fabric(fab, path, name, "ibdiagnet-lst")


def sniff_ibdiagnet_lst(head):
    """True when a line starts with ``{ SW|CA|RT Ports:``."""
    return bool(re.search(r"^[ \t]*\{[ \t]*(SW|CA|RT)(-SM)?[ \t]+Ports:", head, re.MULTILINE))

