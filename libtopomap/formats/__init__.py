"""Reading and writing topologies: one reader/writer pair per format, registered in one table.

``read(path)`` sniffs the format from the file's first lines unless ``format=`` names it;
``read_buffer(file, format)`` reads from an open text stream.  Adapters for other formats
(ibnetdiscover, Slurm topology.conf, ...) register themselves with :func:`register_format`; the
``adapters`` package is imported on first use so ``read`` accepts its formats too.
"""

from __future__ import annotations

import importlib
import io
import os
from dataclasses import dataclass, field
from typing import Callable

from ..errors import FormatError

__all__ = ["register_format", "read", "read_buffer", "write", "write_buffer", "formats", "sniff"]


@dataclass
class _Format:
    name: str
    reader: Callable | None
    writer: Callable | None
    sniff: Callable | None
    extensions: tuple = field(default_factory=tuple)
    description: str = ""


_FORMATS: dict[str, _Format] = {}
_plugins_loaded = False


def register_format(name, *, reader=None, writer=None, sniff=None, extensions=(), description=""):
    """Register a topology format.

    Parameters
    ----------
    name : str
        Format name used by ``format=`` and the CLI (``ltm``, ``json``, ``ibnetdiscover`` ...).
    reader : callable(file, *, path, **options) -> Topology
        Reads from an open text stream; ``path`` is only for error messages.
    writer : callable(topology, file, **options)
    sniff : callable(head: str) -> bool
        Given the first few KiB of a file, says whether it is in this format.
    extensions : tuple of str
        File name suffixes tried when sniffing fails.
    """
    _FORMATS[name] = _Format(name, reader, writer, sniff, tuple(extensions), description)


def _load_plugins():
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    try:
        importlib.import_module("adapters")
    except ImportError:  # the adapters package is optional for the core
        pass


def formats():
    """Registered format names mapped to their descriptions."""
    _load_plugins()
    return {k: f.description for k, f in _FORMATS.items()}


def _get(name, *, need):
    _load_plugins()
    f = _FORMATS.get(name)
    if f is None:
        raise FormatError(f"unknown format {name!r}; known formats: {', '.join(sorted(_FORMATS))}")
    if getattr(f, need) is None:
        raise FormatError(f"format {name!r} cannot be {'read' if need == 'reader' else 'written'}")
    return f


def sniff(head, path=None):
    """Name of the format whose sniffer accepts ``head`` (the start of a file), else by extension."""
    _load_plugins()
    text = head.lstrip("\ufeff")
    for f in _FORMATS.values():
        if f.sniff is not None and f.sniff(text):
            return f.name
    if path is not None:
        p = str(path).lower()
        for f in _FORMATS.values():
            if any(p.endswith(ext) for ext in f.extensions):
                return f.name
    raise FormatError("cannot tell the format of this file; name it with format=", path=path, line=1)


def _open_text(path):
    try:
        return open(path, encoding="utf-8", errors="replace", newline=None)
    except OSError as e:
        raise FormatError(f"cannot open: {e.strerror}", path=path) from None


def read(path, format=None, **options):
    """Read a topology file.

    Parameters
    ----------
    path : str or os.PathLike
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
    with _open_text(path) as fh:
        if format is None:
            head = fh.read(65536)
            format = sniff(head, path)
            fh.seek(0)
        return read_buffer(fh, format, path=path, **options)


def read_buffer(file, format, *, path=None, **options):
    """Read a topology from an open text stream in the named format."""
    f = _get(format, need="reader")
    if isinstance(file, str):
        file = io.StringIO(file)
    return f.reader(file, path=path if path is not None else "<stream>", **options)


def write(path, topology, format=None, **options):
    """Write a topology; the format defaults from the extension (``.json`` -> json, else ltm)."""
    path = os.fspath(path)
    if format is None:
        _load_plugins()
        format = next((f.name for f in _FORMATS.values() if f.writer and any(path.lower().endswith(e) for e in f.extensions)),
                      "ltm")
    f = _get(format, need="writer")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        f.writer(topology, fh, **options)


def write_buffer(file, topology, format, **options):
    """Write a topology to an open text stream."""
    _get(format, need="writer").writer(topology, file, **options)


from . import ltm as _ltm  # noqa: E402,F401  (registers itself)
from . import json_format as _json  # noqa: E402,F401
