"""The one size limit of every reader and generator: the largest number of vertices (topology vertices,
graph processes, names of a hostlist) that an input may make the library allocate.

Order of precedence: :func:`vertex_limit` (the command line's ``--max-vertices N``), then the
environment variable ``LIBTOPOMAP_MAX_VERTICES`` (the deprecated ``LIBTOPOMAP_MAX_PROCESSES`` too, with
a :class:`DeprecationWarning`), then :data:`MAX_VERTICES`.  Readers and generators call
:func:`check_vertex_count` with a count computed from the input *before* they allocate for it, so a
31-byte file that names 10**9 hosts fails at once with a message naming the limit and how to raise it.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import warnings

from .errors import ArgumentError, FormatError, TopologyError

__all__ = ["MAX_VERTICES", "max_vertices", "vertex_limit", "check_vertex_count", "HOW_TO_RAISE"]

#: Default limit: 16 times the 262,144 processes the library is designed for.  A text reader that
#: builds Python objects per vertex (the fabric adapters) needs about 1.7 KB per vertex, so the default
#: keeps one such read under about 7 GB; a user with a bigger machine raises it.
MAX_VERTICES = 1 << 22

#: The end of every limit message.
HOW_TO_RAISE = "raise it with --max-vertices N or $LIBTOPOMAP_MAX_VERTICES"

_OVERRIDE = contextvars.ContextVar("libtopomap_max_vertices", default=None)


def max_vertices():
    """The current vertex limit (module docstring).

    Raises
    ------
    ArgumentError
        ``$LIBTOPOMAP_MAX_VERTICES`` is not a positive integer.
    """
    value = _OVERRIDE.get()
    if value is not None:
        return value
    name = "LIBTOPOMAP_MAX_VERTICES"
    text = os.environ.get(name, "").strip()
    if not text and os.environ.get("LIBTOPOMAP_MAX_PROCESSES", "").strip():
        name = "LIBTOPOMAP_MAX_PROCESSES"
        text = os.environ[name].strip()
        warnings.warn("LIBTOPOMAP_MAX_PROCESSES is deprecated; set LIBTOPOMAP_MAX_VERTICES", DeprecationWarning,
                      stacklevel=2)
    if not text:
        return MAX_VERTICES
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ArgumentError(f"{name} must be a positive integer, got {text!r}")
    return value


@contextlib.contextmanager
def vertex_limit(n):
    """Use ``n`` as the vertex limit inside the ``with`` block (``None``: no change).

    Parameters
    ----------
    n : int or None
        A positive integer.
    """
    if n is None:
        yield
        return
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(f"the vertex limit must be a positive integer, got {n!r}")
    token = _OVERRIDE.set(n)
    try:
        yield
    finally:
        _OVERRIDE.reset(token)


def check_vertex_count(n, what, *, path=None, line=None, error=TopologyError, unit="vertices"):
    """Raise before allocating for ``n`` vertices beyond :func:`max_vertices`.

    Parameters
    ----------
    n : int, float or callable
        The count, or a function computing it from arguments not validated yet (a ``TypeError`` /
        ``ValueError`` / ``OverflowError`` there means "not checked here": the caller's own checks
        name the bad argument).  A float is an upper bound (e.g. ``2.0 ** 80``).
    what : str
        Names what has ``n`` vertices (``"4x4"``, ``"fattree(2, 3)"``, ``"the hostlist 'n[0-9]'"``).
    path, line : optional
        The file and line: the error is then a :class:`~libtopomap.FormatError` naming them.
    error : type
        The exception type otherwise (default :class:`~libtopomap.TopologyError`).
    unit : str
        What is counted, for the message (``"processes"`` for a communication graph).

    Returns
    -------
    int or None
        ``n`` as an int (None when ``n`` could not be computed).
    """
    if callable(n):
        try:
            n = n()
        except (TypeError, ValueError, OverflowError):
            return None
    limit = max_vertices()
    if isinstance(n, float):
        if not math.isnan(n) and n <= limit:
            return int(n)
        shown = f"more than {limit}"  # an estimate (k**n by logarithms): say no more than we know
    else:
        n = int(n)
        if n <= limit:
            return n
        shown = str(n)
    message = f"{what} has {shown} {unit}, above the limit of {limit} ({HOW_TO_RAISE})"
    if path is not None or line is not None:
        raise FormatError(message, path=path, line=line)
    raise error(message)
