"""Slurm ``topology.conf`` (the topology/tree plugin; topology/block ``BlockName=`` lines too).

Each ``SwitchName`` (or ``BlockName``) line is a switch linked to its ``Switches=`` and ``Nodes=``
(hostlist expressions, :func:`expand_hostlist`); every link has capacity 1.  An example and the rules:
docs/formats.rst, "Slurm topology.conf".
"""

from __future__ import annotations

import re

from .._limits import MAX_VERTICES, check_vertex_count
from ..errors import FormatError

from ._fabric import Diagnostics, Fabric, read_text

__all__ = ["read_slurm", "sniff_slurm", "expand_hostlist", "hostlist_size", "build_switches", "MAX_HOSTLIST"]

#: Kept for compatibility: a hostlist may expand to at most :func:`~libtopomap._limits.max_vertices`
#: names (``--max-vertices``, ``$LIBTOPOMAP_MAX_VERTICES``); this is that limit's default.
MAX_HOSTLIST = MAX_VERTICES
_KEYS = {"switchname": "switch", "blockname": "switch", "switches": "switches", "nodes": "nodes",
         "linkspeed": None, "blocksizes": None}
_NAME_OK = re.compile(r"^[^\s\[\],=]+$")


def expand_hostlist(expr, limit=None):
    """Expand a Slurm hostlist expression.

    Parameters
    ----------
    expr : str
        ``"node[01-03],login1"``, ``"n[1-3,5]"``, ``"r[1-2]-n[1-2]"``.
    limit : int, optional
        Maximum number of names (default: the vertex limit, ``--max-vertices``); checked with
        :func:`hostlist_size` before any name is made.

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
    parts = _parse(expr)
    count = _count(parts)
    if limit is None:
        check_vertex_count(count, f"the hostlist {expr[:40]!r}", error=FormatError, unit="names")
    elif count > limit:
        raise FormatError(f"{expr[:40]!r} expands to {count} names, more than the limit of {limit}")
    out = []
    for segments in parts:
        names = [""]
        for seg in segments:
            if isinstance(seg, str):
                names = [n + seg for n in names]
            else:
                names = [n + it for n in names for it in _items(seg)]
        out.extend(names)
    return out


def hostlist_size(expr):
    """The number of names :func:`expand_hostlist` makes of ``expr``, without making them.

    Raises
    ------
    FormatError
        A malformed expression (as :func:`expand_hostlist`).

    Examples
    --------
    >>> hostlist_size("n[0-149999],login[1-2]")
    150002
    """
    return _count(_parse(expr))


def _parse(expr):
    """Parts of ``expr``, each a list of segments: a literal string or a list of ``(lo, hi)`` digit
    strings (a bracketed range list)."""
    parts = []
    for part in _split_top(expr):
        if not part:
            raise FormatError(f"empty name in {expr[:60]!r}")
        segments = []
        pos = 0
        for m in re.finditer(r"\[([^\[\]]*)\]", part):
            prefix = part[pos:m.start()]
            if "[" in prefix or "]" in prefix:
                raise FormatError(f"unbalanced brackets in {part[:60]!r}")
            if prefix:
                segments.append(prefix)
            segments.append(_ranges(m.group(1), part))
            pos = m.end()
        tail = part[pos:]
        if "[" in tail or "]" in tail:
            raise FormatError(f"unbalanced brackets in {part[:60]!r}")
        if tail:
            segments.append(tail)
        parts.append(segments)
    return parts


def _count(parts):
    total = 0
    for segments in parts:
        k = 1
        for seg in segments:
            if not isinstance(seg, str):
                k *= sum(int(hi) - int(lo) + 1 for lo, hi in seg)
        total += k
    return total


def _split_top(expr):
    parts, depth, cur = [], 0, []
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise FormatError(f"unbalanced brackets in {expr[:60]!r}")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise FormatError(f"unbalanced brackets in {expr[:60]!r}")
    parts.append("".join(cur))
    return parts


def _ranges(body, part):
    ranges = []
    for r in body.split(","):
        r = r.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", r)
        if not m:
            raise FormatError(f"bad range {r[:40]!r} in {part[:60]!r}")
        lo_s, hi_s = m.group(1), m.group(2) or m.group(1)
        if len(lo_s) > 30 or len(hi_s) > 30:
            raise FormatError(f"range {r[:40]!r} in {part[:60]!r}: numbers of more than 30 digits")
        if int(hi_s) < int(lo_s):
            raise FormatError(f"empty range {r[:40]!r} in {part[:60]!r}")
        ranges.append((lo_s, hi_s))
    return ranges


def _items(ranges):
    for lo_s, hi_s in ranges:
        if lo_s == hi_s:
            yield lo_s
            continue
        width = len(lo_s) if lo_s.startswith("0") and len(lo_s) > 1 else 0
        yield from (f"{i:0{width}d}" for i in range(int(lo_s), int(hi_s) + 1))


def read_slurm(file, *, path="<stream>", strict=False, slots=1, name=None, **ignored):
    """Read a Slurm ``topology.conf``.

    Parameters
    ----------
    file, path, strict, slots
        The options of every fabric reader (:mod:`libtopomap.adapters._fabric`): the text stream,
        its name for messages, raise at the first problem, slots per host.
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
    listed = 0  # names in the Switches= and Nodes= lists so far
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
                size = hostlist_size(params[what]) if params[what] else 0
            except FormatError as e:
                diag.warn(lineno, f"bad {what} list: {e}")
                continue
            listed += size  # checked before the names are made: `Nodes=n[0-999999999]` is 31 bytes
            check_vertex_count(listed, "this file, up to here,", path=path, line=lineno, unit="host and switch names")
            names = expand_hostlist(params[what], limit=size) if size else []
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
            elif other in node_of and node_of[other][0] != sw:
                first_sw, first_ln = node_of[other]
                diag.warn(ln, f"node {other!r} is listed by switch {sw!r} and by switch {first_sw!r} "
                              f"(line {first_ln}): a duplicate hostname? it hangs off both")
            node_of.setdefault(other, (sw, ln))
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

