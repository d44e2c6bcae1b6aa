"""Reading and writing topologies: one table of formats, each loaded on first use.

``read(path)`` sniffs the format unless ``format=`` names it; ``read_buffer(file, format)`` reads a text
stream.  Each format is a row of :data:`BUILTIN_FORMATS` naming its module, imported only when used;
third-party formats come from :func:`register_format` or the entry-point group ``libtopomap.formats``.
The table and the plugins: docs/formats.rst, "The format table and plugins".
"""

from __future__ import annotations

import importlib
import io
import os
import warnings
from dataclasses import dataclass, field

from .._textio import open_text
from ..errors import FormatError

__all__ = ["register_format", "read", "read_buffer", "write", "write_buffer", "formats", "sniff",
           "BUILTIN_FORMATS", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "libtopomap.formats"

#: name -> (module, reader, writer, sniffer, extensions, description).  Order matters: sniffers are
#: tried in this order, and so are extensions when no sniffer accepts a file.
BUILTIN_FORMATS = {
    "ltm": ("libtopomap.formats.ltm", "read_ltm", "write_ltm", "sniff_ltm", (".topo", ".ltm", ".txt"),
            "LibTopoMap text format (num: N [w], names, adjacency)"),
    "json": ("libtopomap.formats.json_format", "read_json", "write_json", "sniff_json", (".json",),
             "libtopomap JSON (versioned, round-trips slots and kinds)"),
    "ibdiagnet-lst": ("libtopomap.adapters.ibdiagnet_lst", "read_ibdiagnet_lst", None, "sniff_ibdiagnet_lst",
                      (".lst",), "OpenSM / ibdiagnet .lst link list (subnet.lst, ibdiagnet.lst)"),
    "ibnetdiscover": ("libtopomap.adapters.ibnetdiscover", "read_ibnetdiscover", None, "sniff_ibnetdiscover",
                      (".ibnetdiscover", ".ibnd"),
                      "InfiniBand ibnetdiscover output (classic, -g, -f, ibdiagnet .ibnetdiscover, ibsim)"),
    "ibnetdiscover-ports": ("libtopomap.adapters.ibnetdiscover", "read_ibnetdiscover_ports", None,
                            "sniff_ibnetdiscover_ports", (".ports", ".ports.txt"),
                            "InfiniBand 'ibnetdiscover -p' / '-s -p' ports report"),
    "slurm": ("libtopomap.adapters.slurm", "read_slurm", None, "sniff_slurm", ("topology.conf", ".conf"),
              "Slurm topology.conf (topology/tree; BlockName lines of topology/block)"),
    "slurm-yaml": ("libtopomap.adapters.slurm_yaml", "read_slurm_yaml", None, "sniff_slurm_yaml",
                   ("topology.yaml", ".yaml", ".yml"), "Slurm topology.yaml (tree and block topologies)"),
}

_ROLES = ("reader", "writer", "sniff")


@dataclass
class _Format:
    """One row of the table; ``reader``/``writer``/``sniff`` are callables, ``"module:attr"`` or None."""

    name: str
    reader: object = None
    writer: object = None
    sniff: object = None
    extensions: tuple = field(default_factory=tuple)
    description: str = ""
    entry_point: object = None  # an importlib.metadata.EntryPoint not loaded yet

    def resolve(self, role):
        """The callable for ``role``, importing its module on first use (FormatError naming the format)."""
        if self.entry_point is not None:
            _load_entry_point(self)
        obj = getattr(self, role)
        if isinstance(obj, str):
            obj = _import_attr(obj, self.name, role)
            setattr(self, role, obj)
        return obj


def _import_attr(spec, fmt, role):
    module, _, attr = spec.partition(":")
    what = {"reader": "reader", "writer": "writer", "sniff": "sniffer"}[role]
    try:
        mod = importlib.import_module(module)
    except Exception as e:  # any failure to import the module is an error about this format
        raise FormatError(f"format {fmt!r}: cannot import its {what} module {module!r}: "
                          f"{type(e).__name__}: {e}") from e
    try:
        obj = getattr(mod, attr) if attr else mod
    except AttributeError:
        raise FormatError(f"format {fmt!r}: module {module!r} has no {what} {attr!r}") from None
    if not callable(obj):
        raise FormatError(f"format {fmt!r}: {what} {spec!r} is not callable")
    return obj


def _load_entry_point(f):
    ep, f.entry_point = f.entry_point, None
    try:
        obj = ep.load()
    except Exception as e:
        f.entry_point = ep  # stays broken: every use reports it
        raise FormatError(f"format {f.name!r}: cannot load entry point {ep.value!r} of group "
                          f"{ENTRY_POINT_GROUP!r}: {type(e).__name__}: {e}") from e
    if callable(obj):
        obj = {"reader": obj}
    if not isinstance(obj, dict) or not set(obj) <= {*_ROLES, "extensions", "description"}:
        f.entry_point = ep
        raise FormatError(f"format {f.name!r}: entry point {ep.value!r} must give a reader callable or a dict "
                          "with keys reader, writer, sniff, extensions, description")
    for role in _ROLES:
        setattr(f, role, obj.get(role))
    f.extensions = tuple(obj.get("extensions", ()))
    f.description = obj.get("description", f.description)


def _builtin_table():
    return {name: _Format(name, f"{mod}:{r}", f"{mod}:{w}" if w else None, f"{mod}:{s}" if s else None, ext, desc)
            for name, (mod, r, w, s, ext, desc) in BUILTIN_FORMATS.items()}


_FORMATS: dict[str, _Format] = _builtin_table()
_entry_points_listed = False


def register_format(name, *, reader=None, writer=None, sniff=None, extensions=(), description=""):
    """Register a topology format (replaces a format of the same name).

    Parameters
    ----------
    name : str
        Format name used by ``format=`` and the CLI (``ltm``, ``json``, ``ibnetdiscover`` ...).
    reader : callable or str
        ``reader(file, *, path, **options) -> Topology`` (or its ``"module:attr"``): reads from an open
        text stream; ``path`` is only for error messages.
    writer : callable or str
        ``writer(topology, file, **options)`` (or its ``"module:attr"``).
    sniff : callable or str
        ``sniff(head) -> bool`` (or its ``"module:attr"``): given the first few KiB of a file as a
        ``str``, says whether it is in this format.
    extensions : tuple of str
        File name suffixes tried when sniffing fails.
    description : str
    """
    if not isinstance(name, str) or not name:
        raise FormatError(f"format name must be a non-empty string, got {name!r}")
    for role, obj in (("reader", reader), ("writer", writer), ("sniff", sniff)):
        if obj is not None and not callable(obj) and not (isinstance(obj, str) and obj.partition(":")[0]):
            raise FormatError(f"format {name!r}: {role} must be a callable or 'module:attr', got {obj!r}")
    _FORMATS.pop(name, None)  # a replaced format moves to the end of the sniffing order
    _FORMATS[name] = _Format(name, reader, writer, sniff, tuple(extensions), description)


def _list_entry_points():
    """Add the formats of the ``libtopomap.formats`` entry points (not loaded yet) to the table, once."""
    global _entry_points_listed
    if _entry_points_listed:
        return
    _entry_points_listed = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _FORMATS:
            warnings.warn(f"entry point {ep.value!r} of group {ENTRY_POINT_GROUP!r} ignored: format {ep.name!r} "
                          "is already defined", RuntimeWarning, stacklevel=3)
            continue
        _FORMATS[ep.name] = _Format(ep.name, description=f"third-party format ({ep.value})", entry_point=ep)


def formats():
    """Known format names mapped to their descriptions (imports nothing but the entry-point list)."""
    _list_entry_points()
    return {k: f.description for k, f in _FORMATS.items()}


def _get(name, *, need):
    f = _FORMATS.get(name)
    if f is None:
        _list_entry_points()
        f = _FORMATS.get(name)
    if f is None:
        raise FormatError(f"unknown format {name!r}; known formats: {', '.join(sorted(_FORMATS))}")
    fn = f.resolve(need)
    if fn is None:
        raise FormatError(f"format {name!r} cannot be {'read' if need == 'reader' else 'written'}")
    return fn


def sniff(head, path=None):
    """Name of the format whose sniffer accepts ``head`` (the start of a file), else by extension."""
    _list_entry_points()
    text = head.lstrip("\ufeff")
    for f in list(_FORMATS.values()):
        fn = f.resolve("sniff")
        if fn is not None and fn(text):
            return f.name
    if path is not None:
        p = str(path).lower()
        for f in _FORMATS.values():
            if any(p.endswith(ext) for ext in f.extensions):
                return f.name
    raise FormatError("cannot tell the format of this file; name it with format=", path=path, line=1)


def read(path, format=None, **options):
    """Read a topology file.

    Parameters
    ----------
    path : str or os.PathLike
        A file (``libtopomap.load`` also takes ``"auto"``: :func:`libtopomap.loading.load`).
    format : str, optional
        A registered format name; sniffed from the content when omitted.
    **options
        Passed to the format's reader (e.g. ``switches=`` for ``ltm``, ``slots=`` for ibnetdiscover).

    Returns
    -------
    Topology

    Raises
    ------
    FormatError
        ``path:line: message`` for unreadable or malformed input.
    """
    path = os.fspath(path)
    with open_text(path) as fh:
        if format is None:
            head = fh.read(65536)
            format = sniff(head, path)
            fh.seek(0)
        return read_buffer(fh, format, path=path, **options)


def read_buffer(file, format, *, path=None, **options):
    """Read a topology from an open text stream in the named format."""
    reader = _get(format, need="reader")
    if isinstance(file, str):
        file = io.StringIO(file)
    return reader(file, path=path if path is not None else "<stream>", **options)


def write(path, topology, format=None, **options):
    """Write a topology; the format defaults from the extension (``.json`` -> json, else ltm)."""
    path = os.fspath(path)
    if format is None:
        format = next((f.name for f in _FORMATS.values()
                       if f.writer is not None and any(path.lower().endswith(e) for e in f.extensions)), "ltm")
    writer = _get(format, need="writer")
    with _open_for_writing(path) as fh:
        writer(topology, fh, **options)


def _open_for_writing(path):
    """``open(path, "w")``, except that a FIFO nobody reads is an error instead of blocking for ever
    (a FIFO with a reader, such as ``-o /dev/stdout`` piped into another program, is written)."""
    import stat

    try:
        fifo = stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        fifo = False
    if fifo:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            raise FormatError("a FIFO that no process reads: writing would block", path=path) from None
        os.set_blocking(fd, True)
        return os.fdopen(fd, "w", encoding="utf-8", newline="\n")
    return open(path, "w", encoding="utf-8", newline="\n")


def write_buffer(file, topology, format, **options):
    """Write a topology to an open text stream."""
    _get(format, need="writer")(topology, file, **options)
