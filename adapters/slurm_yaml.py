"""Slurm ``topology.yaml`` (Slurm 25.05+; read in place of ``topology.conf`` when present).

A list of topologies, each a ``tree`` (read like ``topology.conf``), a ``block`` topology (one switch
per block, joined as Slurm aggregates them) or ``flat``.  PyYAML is not a dependency: the reader parses
strictly the YAML subset that Slurm writes.  The format and the block aggregation: docs/internals.rst,
"Reading Slurm's topology.yaml".
"""

from __future__ import annotations

import re

from ..errors import FormatError
from ._fabric import Diagnostics, Fabric, read_text
from .._limits import check_vertex_count
from .slurm import build_switches, expand_hostlist, hostlist_size

__all__ = ["read_slurm_yaml", "sniff_slurm_yaml", "parse_yaml_subset"]

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:(?:\s+(.*)|)$")
_SWITCH_NAME_MAX = 64


class _Map(dict):
    """A mapping with the line of each key (``lines``) and its own first line (``line``)."""

    def __init__(self, line):
        super().__init__()
        self.line = line
        self.lines = {}


class _Seq(list):
    """A sequence with the line of each item (``lines``) and its own first line (``line``)."""

    def __init__(self, line):
        super().__init__()
        self.line = line
        self.lines = []


def parse_yaml_subset(text, *, path="<stream>"):
    """Parse the YAML subset of Slurm's ``topology.yaml`` into dicts, lists and strings.

    Returns
    -------
    list or dict
        Mappings are ``dict`` subclasses and sequences ``list`` subclasses with the line of every
        entry in ``.lines``; scalars are ``str`` (quotes removed).

    Raises
    ------
    FormatError
        ``file:line:`` at the first construct outside the subset (tabs for indentation, anchors,
        multi-line scalars, flow mappings, a duplicate key, bad indentation...).

    Examples
    --------
    >>> parse_yaml_subset("- a: 1\\n  b: [x, 'y']\\n")
    [{'a': '1', 'b': ['x', 'y']}]
    """
    lines = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        body = _strip_comment(raw, path, lineno).rstrip()
        if not body.strip() or body.strip() in ("---", "..."):
            continue
        stripped = body.lstrip(" ")
        if stripped.startswith("\t"):
            raise FormatError("tab in the indentation (YAML allows spaces only)", path=path, line=lineno)
        lines.append([len(body) - len(stripped), lineno, stripped])
    if not lines:
        raise FormatError("empty file", path=path, line=1)
    value, i = _block(lines, 0, lines[0][0], path)
    if i < len(lines):
        raise FormatError(f"unexpected indentation: {lines[i][2][:40]!r}", path=path, line=lines[i][1])
    return value


def _strip_comment(raw, path, lineno):
    quote = None
    for k, ch in enumerate(raw):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or raw[k - 1] in " \t"):
            return raw[:k]
    return raw


def _block(lines, i, indent, path):
    """Parse the block (sequence or mapping) whose lines start at ``lines[i]`` with ``indent``."""
    if lines[i][2] == "-" or lines[i][2].startswith("- "):
        return _sequence(lines, i, indent, path)
    return _mapping(lines, i, indent, path)


def _sequence(lines, i, indent, path):
    seq = _Seq(lines[i][1])
    while i < len(lines) and lines[i][0] == indent and (lines[i][2] == "-" or lines[i][2].startswith("- ")):
        ind, lineno, text = lines[i]
        rest = text[1:].lstrip(" ")
        if not rest:  # "-" alone: the item is the block below
            if i + 1 >= len(lines) or lines[i + 1][0] <= indent:
                raise FormatError("empty list item", path=path, line=lineno)
            value, i = _block(lines, i + 1, lines[i + 1][0], path)
        elif _KEY.match(rest) or rest.startswith("- "):  # "- key: value": a mapping at the item's column
            lines[i] = [ind + len(text) - len(rest), lineno, rest]
            value, i = _block(lines, i, lines[i][0], path)
        else:
            value, i = _scalar(rest, path, lineno), i + 1
        seq.append(value)
        seq.lines.append(lineno)
    if i < len(lines) and lines[i][0] > indent:
        raise FormatError(f"unexpected indentation: {lines[i][2][:40]!r}", path=path, line=lines[i][1])
    return seq, i


def _mapping(lines, i, indent, path):
    m = _Map(lines[i][1])
    while i < len(lines) and lines[i][0] == indent:
        _, lineno, text = lines[i]
        if text == "-" or text.startswith("- "):
            raise FormatError("a list item where a key was expected", path=path, line=lineno)
        km = _KEY.match(text)
        if km is None:
            raise FormatError(f"expected 'key: value', got {text[:40]!r}", path=path, line=lineno)
        key, value = km.group(1), km.group(2)
        if key in m:
            raise FormatError(f"key {key!r} given twice (first on line {m.lines[key]})", path=path, line=lineno)
        i += 1
        if value is None or not value.strip():
            nxt = lines[i] if i < len(lines) else None
            if nxt is not None and (nxt[0] > indent
                                    or (nxt[0] == indent and (nxt[2] == "-" or nxt[2].startswith("- ")))):
                value, i = _block(lines, i, nxt[0], path)
            else:
                value = ""
        else:
            value = _scalar(value.strip(), path, lineno)
        m[key] = value
        m.lines[key] = lineno
    if i < len(lines) and lines[i][0] > indent:
        raise FormatError(f"unexpected indentation: {lines[i][2][:40]!r}", path=path, line=lines[i][1])
    return m, i


def _scalar(text, path, lineno):
    if text[0] in "&*!|>{%@`":
        raise FormatError(f"YAML feature outside what Slurm writes: {text[:40]!r}", path=path, line=lineno)
    if text[0] == "[":
        if not text.endswith("]"):
            raise FormatError(f"unterminated list {text[:40]!r}", path=path, line=lineno)
        inner = text[1:-1].strip()
        seq = _Seq(lineno)
        for item in (inner.split(",") if inner else []):
            item = item.strip()
            if not item or item[0] in "[{":
                raise FormatError(f"bad list {text[:40]!r}", path=path, line=lineno)
            seq.append(_scalar(item, path, lineno))
            seq.lines.append(lineno)
        return seq
    if text[0] in "'\"":
        if len(text) < 2 or text[-1] != text[0]:
            raise FormatError(f"unterminated quoted string {text[:40]!r}", path=path, line=lineno)
        return text[1:-1].replace("''", "'") if text[0] == "'" else text[1:-1]
    if ": " in text:
        raise FormatError(f"a mapping inside a value: {text[:40]!r}", path=path, line=lineno)
    return text


def _bool(value, key, path, line):
    if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no"):
        return value.lower() in ("true", "yes")
    raise FormatError(f"{key} must be true or false, got {value!r}", path=path, line=line)


def read_slurm_yaml(file, *, path="<stream>", strict=False, slots=1, name=None, topology=None, **ignored):
    """Read a Slurm ``topology.yaml``.

    Parameters
    ----------
    file, path, strict, slots
        The options of every fabric reader (:mod:`libtopomap.adapters._fabric`): the text stream,
        its name for messages, raise at the first problem (unknown keys,
        switches used but not defined...), slots per host.
    name : str, optional
        Topology name (default: the ``topology`` name in the file).
    topology : str, optional
        Which topology of the file (default: the first with ``cluster_default: true``, else the
        first that is not flat).
    **ignored
        Options of other formats.

    Returns
    -------
    Topology

    Raises
    ------
    FormatError
        ``file:line:`` for YAML outside the subset, a topology without a name or with no or two
        types, a missing ``switch``/``block`` name, a bad hostlist, bad ``block_sizes``, a flat or
        unknown chosen topology, or no node at all.
    """
    diag = Diagnostics(path, strict)
    doc = parse_yaml_subset("\n".join(read_text(file)), path=path)
    if not isinstance(doc, list):
        raise FormatError("expected a list of topologies ('- topology: NAME')", path=path, line=doc.line)
    entries = []
    for item, line in zip(doc, doc.lines):
        if not isinstance(item, dict) or not item:
            raise FormatError("expected a topology ('- topology: NAME')", path=path, line=line)
        first = next(iter(item))
        if first != "topology" or not isinstance(item["topology"], str) or not item["topology"]:
            raise FormatError("a topology starts with 'topology: NAME'", path=path, line=line)
        kinds = [k for k in ("tree", "block", "flat") if k in item]
        if len(kinds) != 1:
            raise FormatError(f"topology {item['topology']!r} must have exactly one of tree, block, flat "
                              f"(has {', '.join(kinds) or 'none'})", path=path, line=line)
        for key in item:
            if key not in ("topology", "cluster_default", "tree", "block", "flat"):
                diag.warn(item.lines[key], f"unknown key {key!r} ignored")
        default = _bool(item["cluster_default"], "cluster_default", path, item.lines["cluster_default"]) \
            if "cluster_default" in item else False
        entries.append((item, kinds[0], default))
    if topology is not None:
        chosen = next((e for e in entries if e[0]["topology"] == topology), None)
        if chosen is None:
            raise FormatError(f"no topology {topology!r}; the file has "
                              f"{', '.join(e[0]['topology'] for e in entries)}", path=path)
    else:
        chosen = next((e for e in entries if e[2]), None) or next((e for e in entries if e[1] != "flat"), entries[0])
    item, kind, _ = chosen
    if kind == "flat":
        raise FormatError(f"topology {item['topology']!r} is flat: it describes no network",
                          path=path, line=item.lines["flat"])
    body, body_line = item[kind], item.lines[kind]
    if not isinstance(body, dict):
        raise FormatError(f"{kind} must be a mapping", path=path, line=body_line)
    fab = Fabric(diag, slots=slots)
    if kind == "tree":
        switch_lines, edges = _tree(body, body_line, diag, path)
    else:
        switch_lines, edges = _blocks(body, body_line, item["topology"], diag, path)
    if name is None:
        name = item["topology"]
    return build_switches(diag, fab, switch_lines, edges, name=name, path=path, fmt="slurm-yaml")


def _names(value, what, line, diag, path):
    if isinstance(value, list):
        value = ",".join(value)
    if not isinstance(value, str):
        raise FormatError(f"{what} must be a hostlist", path=path, line=line)
    try:
        size = hostlist_size(value) if value else 0
    except FormatError as e:
        raise FormatError(f"bad {what} list: {e}", path=path, line=line) from None
    # the names of every list so far, checked before they are made (`nodes: n[0-999999999]`)
    diag.listed = getattr(diag, "listed", 0) + size
    check_vertex_count(diag.listed, "this file, up to here,", path=path, line=line, unit="host and switch names")
    return expand_hostlist(value, limit=size) if size else []


def _entries(body, key, body_line, path):
    seq = body.get(key)
    if not isinstance(seq, list) or not seq:
        raise FormatError(f"expected a non-empty list '{key}:'", path=path, line=body.lines.get(key, body_line))
    for entry, line in zip(seq, seq.lines):
        if not isinstance(entry, dict):
            raise FormatError(f"an entry of '{key}' must be a mapping", path=path, line=line)
    return seq


def _tree(body, body_line, diag, path):
    for key in body:
        if key != "switches":
            diag.warn(body.lines[key], f"unknown key {key!r} ignored")
    switch_lines, edges = {}, []
    for sw in _entries(body, "switches", body_line, path):
        name = sw.get("switch")
        if not isinstance(name, str) or not name:
            raise FormatError("a switch needs 'switch: NAME'", path=path, line=sw.line)
        line = sw.lines["switch"]
        if len(name) > _SWITCH_NAME_MAX or not re.fullmatch(r"[^\s\[\],=]+", name):
            raise FormatError(f"bad switch name {name[:70]!r} (at most {_SWITCH_NAME_MAX} characters, no blanks, "
                              "brackets, commas)", path=path, line=line)
        if name in switch_lines:
            raise FormatError(f"switch {name!r} defined again (first on line {switch_lines[name]})", path=path,
                              line=line)
        switch_lines[name] = line
        for key in sw:
            if key not in ("switch", "children", "nodes", "link_speed"):
                diag.warn(sw.lines[key], f"unknown key {key!r} ignored")
        for key, is_switch in (("children", True), ("nodes", False)):
            if key in sw:
                for other in _names(sw[key], key, sw.lines[key], diag, path):
                    edges.append((name, other, is_switch, sw.lines[key]))
    return switch_lines, edges


def _blocks(body, body_line, topo_name, diag, path):
    for key in body:
        if key not in ("blocks", "block_sizes"):
            diag.warn(body.lines[key], f"unknown key {key!r} ignored")
    sizes = []
    if "block_sizes" in body:
        raw, line = body["block_sizes"], body.lines["block_sizes"]
        if not isinstance(raw, list) or not raw:
            raw = [raw] if isinstance(raw, str) and raw else None
        if raw is None or not all(isinstance(x, str) and x.isdigit() and int(x) > 0 for x in raw):
            raise FormatError(f"block_sizes must be a list of positive integers, got {body['block_sizes']!r}",
                              path=path, line=line)
        sizes = [int(x) for x in raw]
        for a, b in zip(sizes, sizes[1:]):
            if b <= a or b % a or (b // a) & (b // a - 1):
                raise FormatError(f"block_sizes {sizes}: each size must be a power-of-two multiple of the one "
                                  "before", path=path, line=line)
    switch_lines, edges, blocks = {}, [], []
    for blk in _entries(body, "blocks", body_line, path):
        name = blk.get("block")
        if not isinstance(name, str) or not name or not re.fullmatch(r"[^\s\[\],=]+", name):
            raise FormatError("a block needs 'block: NAME' (no blanks, brackets, commas)", path=path,
                              line=blk.lines.get("block", blk.line))
        line = blk.lines["block"]
        if name in switch_lines:
            raise FormatError(f"block {name!r} defined again (first on line {switch_lines[name]})", path=path,
                              line=line)
        switch_lines[name] = line
        blocks.append(name)
        for key in blk:
            if key not in ("block", "nodes"):
                diag.warn(blk.lines[key], f"unknown key {key!r} ignored")
        nodes = _names(blk["nodes"], "nodes", blk.lines["nodes"], diag, path) if "nodes" in blk else []
        if sizes and len(nodes) < sizes[0]:
            diag.warn(line, f"block {name!r} has {len(nodes)} nodes, fewer than the base block size {sizes[0]}")
        edges.extend((name, n, False, blk.lines.get("nodes", line)) for n in nodes)
    # consecutive blocks join at one switch per higher block size, then at a root
    level, line = blocks, body.lines.get("block_sizes", body_line)
    for lo, hi in zip(sizes, sizes[1:]):
        k = hi // lo
        groups = [level[j:j + k] for j in range(0, len(level), k)]
        level = []
        for g in groups:
            agg = f"{g[0]}..{g[-1]}" if len(g) > 1 else f"{g[0]}..{hi}"
            switch_lines[agg] = line
            edges.extend((agg, child, True, line) for child in g)
            level.append(agg)
    if len(level) > 1:
        root = f"{topo_name}-root"
        switch_lines[root] = line
        edges.extend((root, child, True, line) for child in level)
    return switch_lines, edges


_SNIFF = re.compile(r"^-[ \t]+topology[ \t]*:", re.MULTILINE)


def sniff_slurm_yaml(head):
    """True when a line starts with ``- topology:``."""
    return bool(_SNIFF.search(head))
