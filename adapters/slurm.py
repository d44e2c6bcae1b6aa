"""Slurm ``topology.conf`` (the topology/tree plugin; topology/block ``BlockName=`` lines too).

::

    # comments
    SwitchName=s0 Nodes=tux[0-3,12]
    SwitchName=s1 Nodes=tux[4-7]
    SwitchName=s2 Switches=s[0-1] LinkSpeed=...

Each ``SwitchName`` (or ``BlockName``) line is a switch vertex (0 slots) linked to every switch in
its ``Switches=`` list and every node in its ``Nodes=`` list; nodes are hosts.  Names are hostlist
expressions (``node[01-16]``, ``n[1-3,5]``, ``rack[1-2]-n[1-4]``; zero padding follows the lower
bound).  Parameter names are case-insensitive; a trailing ``\\`` joins the next line (its leading
blanks removed).  The file says
nothing about bandwidth, so every link has capacity 1 (``LinkSpeed`` is ignored), and a pair of
vertices listed more than once (``s1 Switches=s2`` and ``s2 Switches=s1``) is one link.
"""

from __future__ import annotations

import re

from ..errors import FormatError

from ._fabric import Diagnostics, Fabric, read_text

__all__ = ["read_slurm", "sniff_slurm", "expand_hostlist", "build_switches", "MAX_HOSTLIST"]

#: Largest number of names one hostlist expression may expand to (guards against ``n[0-999999999]``).
MAX_HOSTLIST = 1_000_000
_KEYS = {"switchname": "switch", "blockname": "switch", "switches": "switches", "nodes": "nodes",
         "linkspeed": None, "blocksizes": None}
_NAME_OK = re.compile(r"^[^\s\[\],=]+$")


def expand_hostlist(expr, limit=MAX_HOSTLIST):
    """Expand a Slurm hostlist expression.

    Parameters
    ----------
    expr : str
        ``"node[01-03],login1"``, ``"n[1-3,5]"``, ``"r[1-2]-n[1-2]"``.
    limit : int
        Maximum number of names.

    Returns
    -------
    list of str

    Raises
    ------
    FormatError
        (a :class:`ValueError`) Unbalanced brackets, a bad range (``[5-1]``, ``[a-b]``), or more than ``limit`` names.

    Examples
    --------
    >>> expand_hostlist("node[01-03],n[7,9]")
    ['node01', 'node02', 'node03', 'n7', 'n9']
    """
    out = []
    for part in _split_top(expr):
        if not part:
            raise FormatError(f"empty name in {expr!r}")
        names = [""]
        pos = 0
        for m in re.finditer(r"\[([^\[\]]*)\]", part):
            prefix = part[pos:m.start()]
            if "[" in prefix or "]" in prefix:
                raise FormatError(f"unbalanced brackets in {part!r}")
            items = _expand_range(m.group(1), part)
            if len(names) * len(items) + len(out) > limit:
                raise FormatError(f"{expr[:40]!r} expands to more than {limit} names")
            names = [n + prefix + it for n in names for it in items]
            pos = m.end()
        tail = part[pos:]
        if "[" in tail or "]" in tail:
            raise FormatError(f"unbalanced brackets in {part!r}")
        out.extend(n + tail for n in names)
        if len(out) > limit:
            raise FormatError(f"{expr[:40]!r} expands to more than {limit} names")
    return out


def _split_top(expr):
    parts, depth, cur = [], 0, []
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise FormatError(f"unbalanced brackets in {expr!r}")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise FormatError(f"unbalanced brackets in {expr!r}")
    parts.append("".join(cur))
    return parts


def _expand_range(body, part):
    items = []
    for r in body.split(","):
        r = r.strip()
        if re.fullmatch(r"\d+", r):
            items.append(r)
            continue
        m = re.fullmatch(r"(\d+)-(\d+)", r)
        if not m:
            raise FormatError(f"bad range {r!r} in {part!r}")
        lo_s, hi_s = m.groups()
        lo, hi = int(lo_s), int(hi_s)
        if hi < lo:
            raise FormatError(f"empty range {r!r} in {part!r}")
        if hi - lo + 1 > MAX_HOSTLIST:
            raise FormatError(f"range {r!r} has more than {MAX_HOSTLIST} names")
        width = len(lo_s) if lo_s.startswith("0") and len(lo_s) > 1 else 0
        items.extend(f"{i:0{width}d}" for i in range(lo, hi + 1))
    return items


def read_slurm(file, *, path="<stream>", strict=False, slots=1, name=None, **ignored):
    """Read a Slurm ``topology.conf``.

    Parameters
    ----------
    file : text stream
    path : str
        For messages.
    strict : bool
        Raise :class:`~libtopomap.FormatError` at the first problem instead of warning.
    slots : int or dict
        Slots per host (default 1).
    name : str, optional
        Topology name (default: the file name).
    **ignored
        InfiniBand-only options (``hostmap``, ``unknown_capacity``, ``rates``) are accepted and
        ignored, so one call can read any fabric format.

    Returns
    -------
    Topology
        Switch vertices (0 slots) named as in the file, host vertices, links of capacity 1; the
        ingest report is in ``attrs``.

    Raises
    ------
    FormatError
        No switch line or no node, or any problem when ``strict``.
    """
    diag = Diagnostics(path, strict)
    fab = Fabric(diag, slots=slots)
    logical = []  # (first line number, text) after joining '\' continuations
    pending, start = "", None
    for lineno, raw in enumerate(read_text(file), 1):
        s = raw.split("#", 1)[0].rstrip()
        if start is None:
            start = lineno
        else:
            s = s.lstrip()  # a continued line joins the previous one directly
        if s.endswith("\\"):
            pending += s[:-1]
            continue
        text = (pending + s).strip()
        if text:
            logical.append((start, text))
        pending, start = "", None
    if pending.strip():
        logical.append((start, pending.strip()))

    switch_lines = {}
    edges = []  # (switch, other, is_switch, line)
    for lineno, text in logical:
        params = {}
        for tok in text.split():
            key, eq, value = tok.partition("=")
            k = key.lower()
            if not eq or k not in _KEYS:
                diag.warn(lineno, f"unknown parameter {tok[:40]!r} ignored")
                continue
            if _KEYS[k] is None:
                continue
            if _KEYS[k] in params:
                diag.warn(lineno, f"parameter {key} given twice; the last one is used")
            params[_KEYS[k]] = value
        sw = params.get("switch")
        if sw is None:
            diag.warn(lineno, "line without SwitchName= ignored")
            continue
        if not _NAME_OK.match(sw):
            diag.warn(lineno, f"bad switch name {sw!r}; line ignored")
            continue
        if sw in switch_lines:
            diag.warn(lineno, f"switch {sw!r} defined again (first on line {switch_lines[sw]}); merging")
        else:
            switch_lines[sw] = lineno
        for what in ("switches", "nodes"):
            if what not in params:
                continue
            try:
                names = expand_hostlist(params[what]) if params[what] else []
            except FormatError as e:
                diag.warn(lineno, f"bad {what} list: {e}")
                continue
            for nm in names:
                edges.append((sw, nm, what == "switches", lineno))
    if not switch_lines:
        raise FormatError("no SwitchName= line found: not a Slurm topology.conf", path=path, line=1)
    return build_switches(diag, fab, switch_lines, edges, name=name, path=path, fmt="slurm")


def build_switches(diag, fab, switch_lines, edges, *, name, path, fmt):
    """The topology of Slurm switch (or block) definitions, shared by ``topology.conf`` and
    ``topology.yaml``.

    Parameters
    ----------
    diag : Diagnostics
    fab : Fabric
    switch_lines : dict
        Switch name -> line that defines it.
    edges : list of (switch, other, other_is_switch, line)
        One entry per name of a ``Switches=`` / ``children`` or ``Nodes=`` / ``nodes`` list.
    name, path, fmt : str
        Topology name (default: the file name), file (messages), format label.
    """
    node_of = {}
    for sw, ln in switch_lines.items():
        fab.node(sw, "switch", None, desc=sw, line=ln)
    seen = set()
    for sw, other, is_switch, ln in edges:
        if is_switch and other not in switch_lines:
            if other not in fab.nodes:
                diag.warn(ln, f"switch {other!r} is used but never defined with SwitchName=")
                fab.node(other, "switch", None, desc=other, line=ln, define=False)
            elif fab.nodes[other].kind != "switch":
                diag.warn(ln, f"{other!r} is listed as a node and as a switch; link ignored")
                continue
        if not is_switch:
            if other in switch_lines or (other in fab.nodes and fab.nodes[other].kind == "switch"):
                diag.warn(ln, f"{other!r} is listed as a node and as a switch; link ignored")
                continue
            if other not in fab.nodes:
                fab.node(other, "ca", None, desc=other, line=ln, define=False).host = other
            node_of[other] = ln
        pair = (sw, other) if sw <= other else (other, sw)
        if pair in seen:
            continue  # listed from both ends, or twice: one link
        seen.add(pair)
        # Ports are invented (a running number per vertex) so the fabric sees distinct cables.
        fab.half_link(sw, len(seen), other, -len(seen), "1", None, ln)
    fab.unknown_capacity = 1.0
    if name is None and path not in (None, "<stream>"):
        import os
        name = os.path.basename(str(path))
    return fab.build(name=name, fmt=fmt)


_SNIFF = re.compile(r"^[ \t]*(SwitchName|BlockName)[ \t]*=[ \t]*\S", re.IGNORECASE | re.MULTILINE)


def sniff_slurm(head):
    """True when a line of the head starts with ``SwitchName=`` or ``BlockName=``."""
    return bool(_SNIFF.search(head))

