"""libtopomap's JSON topology format, version 1: everything a :class:`~libtopomap.Topology` holds
round-trips.  The schema: docs/formats.rst, "libtopomap's JSON format, version 1".
"""

from __future__ import annotations

import json
import math

from .._limits import check_vertex_count
from ..errors import ArgumentTypeError, FormatError, TopologyError
from ..topology import Topology

__all__ = ["read_json", "write_json", "load_json", "FORMAT_TAG", "VERSION"]

FORMAT_TAG = "libtopomap-topology"
VERSION = 1


def read_json(file, *, path="<stream>"):
    """Read a topology in libtopomap's JSON format; errors name the file and (for syntax) line.

    Raises
    ------
    FormatError
        Invalid JSON (``NaN``/``Infinity`` included, or nested too deeply), not this format, or an
        entry of the wrong type: a vertex ``name`` that is not a string, ``slots`` that are not a
        non-negative integer, a ``kind`` that is not a string, a link that is not
        ``[u, v]`` or ``[u, v, capacity]`` with vertex indices and a finite positive capacity,
        ``name`` not a string or ``attrs`` not an object.
    """
    doc = load_json(file.read(), path=path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_TAG:
        raise FormatError(f"not a libtopomap topology: expected \"format\": \"{FORMAT_TAG}\"", path=path)
    if doc.get("version") != VERSION:
        raise FormatError(f"unsupported version {doc.get('version')!r:.40} (this library reads {VERSION})", path=path)
    verts = doc.get("vertices")
    links = doc.get("links")
    if not isinstance(verts, list) or not isinstance(links, list):
        raise FormatError("'vertices' and 'links' must be lists", path=path)
    check_vertex_count(len(verts), "'vertices'", path=path)
    name = doc.get("name")
    if name is not None and not isinstance(name, str):
        raise FormatError(f"'name' must be a string, got {name!r:.40}", path=path)
    attrs = doc.get("attrs")
    if attrs is not None and not isinstance(attrs, dict):
        raise FormatError(f"'attrs' must be an object, got {attrs!r:.40}", path=path)
    names, slots, kinds = [], [], []
    for k, v in enumerate(verts):
        if not isinstance(v, dict) or not isinstance(v.get("name"), str):
            raise FormatError(f"vertex {k}: expected an object with a string \"name\", got {v!r:.60}", path=path)
        s = v.get("slots", 1)
        if not _is_int(s) or s < 0:
            raise FormatError(f"vertex {k}: \"slots\" must be a non-negative integer, got {s!r:.40}", path=path)
        kind = v.get("kind")
        if kind is not None and not isinstance(kind, str):
            raise FormatError(f"vertex {k}: \"kind\" must be a string (\"host\", \"switch\", ...), got {kind!r:.40}",
                              path=path)
        names.append(v["name"])
        slots.append(int(s))
        kinds.append(kind or ("host" if s > 0 else "switch"))
    pairs, caps = [], []
    for k, e in enumerate(links):
        if not isinstance(e, list) or len(e) not in (2, 3):
            raise FormatError(f"link {k}: expected [u, v] or [u, v, capacity], got {e!r:.60}", path=path)
        if not all(_is_int(x) for x in e[:2]):
            raise FormatError(f"link {k}: endpoints must be vertex indices, got {e[:2]!r:.60}", path=path)
        if not all(0 <= x < len(names) for x in e[:2]):
            raise FormatError(f"link {k}: vertex index out of range 0..{len(names) - 1} in {e!r:.60}", path=path)
        c = e[2] if len(e) == 3 else 1.0
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) or c <= 0:
            raise FormatError(f"link {k}: capacity must be a finite positive number, got {c!r:.40}", path=path)
        pairs.append((e[0], e[1]))
        caps.append(float(c))
    try:
        return Topology(names, pairs, capacities=caps, slots=slots, kinds=kinds, name=name, attrs=attrs or {})
    except TopologyError as e:
        raise FormatError(str(e), path=path) from None


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def load_json(text, *, path="<stream>"):
    """Strict JSON: the document of ``text``, every problem a one-line :class:`~libtopomap.FormatError`.

    Used for every JSON document the library reads from a user (topologies, ``plot times --from``).

    Parameters
    ----------
    text : str
    path : str
        The file, for messages.

    Raises
    ------
    FormatError
        ``file:line: invalid JSON: ...`` for a syntax error; ``NaN``, ``Infinity`` and ``-Infinity``
        (not JSON, although Python's parser takes them); nesting too deep for the parser.
    """
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise FormatError(f"invalid JSON: {e.msg}", path=path, line=e.lineno) from None
    except RecursionError:
        raise FormatError("invalid JSON: nested too deeply", path=path) from None
    except FormatError as e:  # _no_constant
        raise FormatError(f"invalid JSON: {e.reason}", path=path) from None


def _no_constant(text):
    raise FormatError(f"{text} is not a JSON number")


def write_json(topology, file):
    """Write a topology as JSON (version 1)."""
    doc = {
        "format": FORMAT_TAG,
        "version": VERSION,
        "name": topology.name,
        "attrs": topology.attrs,
        "vertices": [{"name": n, "slots": int(s), "kind": k}
                     for n, s, k in zip(topology.names, topology.slots.tolist(), topology.kinds)],
        "links": [[int(u), int(v), float(c)] for u, v, c in
                  zip(topology.link_u.tolist(), topology.link_v.tolist(), topology.capacity.tolist())],
    }
    json.dump(doc, file, separators=(",", ":"), default=_plain)
    file.write("\n")


def _plain(x):
    """numpy scalars and arrays in ``attrs`` as plain JSON values."""
    if hasattr(x, "tolist"):
        return x.tolist()
    raise ArgumentTypeError(f"attrs value {x!r} is not JSON serialisable")


def sniff_json(head):
    """True when the start of a file looks like this format."""
    return head.lstrip().startswith("{") and FORMAT_TAG in head[:4096]


_sniff = sniff_json  # the old private name
