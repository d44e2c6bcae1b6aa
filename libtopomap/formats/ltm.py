"""LibTopoMap's text topology format (the format of ``TPM_Read_topo`` in LibTopoMap 0.9b).

The format has no switches or slots: a vertex whose name matches ``DEFAULT_SWITCH_PATTERN`` (or
``switches=``) is a switch, every other a host with ``slots`` slots.  A generated topology's attributes
(``generator``, ``dims``...) travel in a ``# libtopomap: {JSON}`` line after the vertex lines, so a torus
read back is routed as a torus.  The grammar and the rule: docs/formats.rst, "LibTopoMap's text format".
"""

from __future__ import annotations

import json
import os
import re

import numpy as np

from .._limits import check_vertex_count
from ..errors import FormatError, TopologyError
from ..topology import HOST, SWITCH, Topology

__all__ = ["read_ltm", "write_ltm", "DEFAULT_SWITCH_PATTERN"]

DEFAULT_SWITCH_PATTERN = r"^(S-|sw|switch|router|rtr)"
_ENTRY = re.compile(r"^(-?\d+)(?:\(([^()]*)\))?$")
_ATTRS = re.compile(r"^#\s*libtopomap:\s*(.*)$")


def _switch_rule(switches):
    if switches is None:
        rx = re.compile(DEFAULT_SWITCH_PATTERN, re.IGNORECASE)
        return lambda name, deg: bool(rx.search(name))
    if isinstance(switches, str):
        rx = re.compile(switches)
        return lambda name, deg: bool(rx.search(name))
    if callable(switches):
        return switches
    names = set(switches)
    return lambda name, deg: name in names


def read_ltm(file, *, path="<stream>", switches=None, slots=1):
    """Read a LibTopoMap topology from a text stream.

    Parameters
    ----------
    file : text stream
    path : str
        Used in error messages.
    switches : str, collection of str, or callable, optional
        Which vertices are switches (see module docstring).
    slots : int
        Slots of every host vertex.

    Returns
    -------
    Topology

    Raises
    ------
    FormatError
        ``path:line: message`` on a bad header, wrong counts, ids out of range or repeated,
        adjacency to unknown ids, a link listed in one direction only, bad capacities, or
        trailing garbage.
    """
    lines = []
    attrs, attrs_line = {}, None
    for lineno, raw in enumerate(file, 1):
        s = raw.strip().lstrip("\ufeff")
        if s.startswith("#"):  # a comment; "# libtopomap: {...}" carries the attributes
            m = _ATTRS.match(s)
            if m:
                if attrs_line is not None:
                    raise FormatError(f"attributes given twice (first on line {attrs_line})", path=path, line=lineno)
                attrs, attrs_line = _read_attrs(m.group(1), path, lineno), lineno
        elif s:
            lines.append((lineno, s))
    if not lines:
        raise FormatError("empty file: expected 'num: <N>'", path=path, line=1)
    lineno, head = lines[0]
    m = re.match(r"^num:\s*(\S*)", head)
    if not m:
        raise FormatError(f"bad header {head[:40]!r}: expected 'num: <N> [w]'", path=path, line=lineno)
    # Like topoparser.cpp: the count is the leading integer; a 'w' anywhere after it means weighted.
    cm = re.match(r"^(-?\d+)(.*)$", m.group(1))
    if not cm:
        raise FormatError(f"bad vertex count {m.group(1)[:20]!r} in header {head[:40]!r}: expected 'num: <N> [w]'",
                          path=path, line=lineno)
    n = int(cm.group(1))
    if n <= 0:
        raise FormatError(f"vertex count must be positive, got {n}", path=path, line=lineno)
    check_vertex_count(n, "the header", path=path, line=lineno)
    weighted = "w" in head[m.start(1) + len(cm.group(1)):].lower()
    body = lines[1:]
    if len(body) < 2 * n:
        where = body[-1][0] + 1 if body else lineno + 1
        raise FormatError(f"header says {n} vertices: expected {2 * n} lines of names and adjacency, "
                          f"found {len(body)}", path=path, line=where)
    if len(body) > 2 * n:
        raise FormatError(f"trailing garbage after {2 * n} vertex lines: {body[2 * n][1][:40]!r}",
                          path=path, line=body[2 * n][0])
    names = [None] * n
    for lineno, s in body[:n]:
        parts = s.split()
        if len(parts) != 2:
            raise FormatError(f"expected '<id> <hostname>', got {s[:60]!r}", path=path, line=lineno)
        vid = _parse_id(parts[0], n, path, lineno)
        if names[vid] is not None:
            raise FormatError(f"vertex {vid} named twice", path=path, line=lineno)
        names[vid] = parts[1]
    seen_adj = [None] * n
    arcs = {}  # (u, v) -> (capacity, line)
    for lineno, s in body[n:]:
        parts = s.split()
        u = _parse_id(parts[0], n, path, lineno)
        if seen_adj[u] is not None:
            raise FormatError(f"adjacency of vertex {u} given twice (first on line {seen_adj[u]})", path=path,
                              line=lineno)
        seen_adj[u] = lineno
        for tok in parts[1:]:
            em = _ENTRY.match(tok)
            if not em:
                raise FormatError(f"bad adjacency entry {tok!r}", path=path, line=lineno)
            v = _parse_id(em.group(1), n, path, lineno)
            if v == u:
                raise FormatError(f"vertex {u} lists itself as a neighbour", path=path, line=lineno)
            cap = 1.0
            if em.group(2) is not None:
                if not weighted:
                    raise FormatError(f"entry {tok!r} has a capacity but the header has no 'w'", path=path, line=lineno)
                try:
                    cap = float(em.group(2))
                except ValueError:
                    raise FormatError(f"bad capacity in {tok!r}", path=path, line=lineno) from None
                if not np.isfinite(cap) or cap <= 0:
                    raise FormatError(f"capacity in {tok!r} must be positive", path=path, line=lineno)
            elif weighted:
                raise FormatError(f"entry {tok!r} has no capacity but the header says weighted ('w')",
                                  path=path, line=lineno)
            old = arcs.get((u, v))
            arcs[(u, v)] = ((old[0] if old else 0.0) + cap, lineno)
    missing_names = [i for i, x in enumerate(names) if x is None]
    if missing_names:
        raise FormatError(f"no name line for vertex {missing_names[0]}", path=path, line=body[n - 1][0])
    missing_adj = [i for i, x in enumerate(seen_adj) if x is None]
    if missing_adj:
        raise FormatError(f"no adjacency line for vertex {missing_adj[0]}", path=path, line=body[-1][0])
    links, caps = [], []
    for (u, v), (cap, lineno) in arcs.items():
        back = arcs.get((v, u))
        if back is None:
            raise FormatError(f"link {u}-{v} is listed by vertex {u} but not by vertex {v}", path=path, line=lineno)
        if abs(back[0] - cap) > 1e-9 * max(cap, back[0]):
            raise FormatError(f"link {u}-{v} has capacity {cap:g} here but {back[0]:g} on line {back[1]}",
                              path=path, line=lineno)
        if u < v:
            links.append((u, v))
            caps.append(cap)
    deg = np.zeros(n, dtype=np.int64)
    for u, v in links:
        deg[u] += 1
        deg[v] += 1
    is_switch = _switch_rule(switches)
    kinds = [SWITCH if is_switch(names[i], int(deg[i])) else HOST for i in range(n)]
    sl = [0 if k == SWITCH else int(slots) for k in kinds]
    try:
        return Topology(names, np.array(links, dtype=np.int64).reshape(-1, 2), capacities=caps, slots=sl,
                        kinds=kinds, name=_name_from_path(path), attrs={**attrs, "source": str(path)})
    except TopologyError as e:
        raise FormatError(str(e), path=path) from None


def _read_attrs(text, path, lineno):
    """The JSON object of a ``# libtopomap:`` line."""
    try:
        attrs = json.loads(text)
    except (ValueError, RecursionError):
        raise FormatError(f"the attributes after '# libtopomap:' are not JSON: {text[:40]!r}", path=path,
                          line=lineno) from None
    if not isinstance(attrs, dict):
        raise FormatError(f"the attributes after '# libtopomap:' must be a JSON object, got {text[:40]!r}",
                          path=path, line=lineno)
    return attrs


def _attrs_text(attrs):
    """``attrs`` as one line of JSON: the values JSON can hold (numpy ones as lists), not ``source``
    (where the topology was read from), the others left out."""
    keep = {}
    for k, v in attrs.items():
        if k == "source" or not isinstance(k, str):
            continue
        try:
            text = json.dumps(v, default=lambda x: x.tolist() if hasattr(x, "tolist") else None, allow_nan=False)
        except (TypeError, ValueError):
            continue
        if text != "null" or v is None:  # not an object that turned into null
            keep[k] = json.loads(text)
    return json.dumps(keep, separators=(", ", ": ")) if keep else None


def _name_from_path(path):
    """The file's base name without its extension (``None`` for streams)."""
    if path is None or str(path).startswith("<"):
        return None
    base = os.path.basename(str(path))
    stem, ext = os.path.splitext(base)
    return stem or base


def _parse_id(tok, n, path, lineno):
    try:
        v = int(tok)
    except ValueError:
        raise FormatError(f"bad vertex id {tok!r}", path=path, line=lineno) from None
    if not 0 <= v < n:
        raise FormatError(f"vertex id {v} out of range 0..{n - 1}", path=path, line=lineno)
    return v


def write_ltm(topology, file):
    """Write a topology in LibTopoMap's format (weighted when any capacity differs from 1).

    Slots and kinds are not part of the format; see the module docstring for how they are read
    back.  The attributes JSON can hold go in a last line ``# libtopomap: {...}``, after the lines
    LibTopoMap reads.
    """
    weighted = bool(np.any(topology.capacity != 1.0))
    n = topology.n_vertices
    file.write(f"num: {n}{' w' if weighted else ''}\n")
    for i, nm in enumerate(topology.names):
        file.write(f"{i} {nm}\n")
    indptr, indices, cap = topology.indptr, topology.indices, topology.arc_capacity
    for v in range(n):
        lo, hi = indptr[v], indptr[v + 1]
        if weighted:
            ents = " ".join(f"{w}({_number(c)})" for w, c in zip(indices[lo:hi].tolist(), cap[lo:hi].tolist()))
        else:
            ents = " ".join(map(str, indices[lo:hi].tolist()))
        file.write(f"{v} {ents}\n".replace(" \n", "\n"))
    text = _attrs_text(topology.attrs)
    if text:
        file.write(f"# libtopomap: {text}\n")


def _number(c):
    """Shortest text that reads back as exactly ``c`` ("24", "2.5", "0.3333333333333333")."""
    s = f"{c:g}"
    return s if float(s) == c else repr(c)


def sniff_ltm(head):
    """True when the start of a file looks like this format."""
    return head.lstrip().startswith("num:")


_sniff = sniff_ltm  # the old private name
