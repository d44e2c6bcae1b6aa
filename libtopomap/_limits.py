"""The size limits of every reader and generator: the largest number of vertices (topology vertices,
graph processes, names of a hostlist), and the largest number of edges (links, messages, graph edges),
that an input may make the library allocate.

Order of precedence, for each limit: the command line's option (``--max-vertices N``, ``--max-edges N``;
in Python :func:`vertex_limit` / :func:`edge_limit`), then the environment variable
(``LIBTOPOMAP_MAX_VERTICES``, the deprecated ``LIBTOPOMAP_MAX_PROCESSES`` too with a
:class:`DeprecationWarning`; ``LIBTOPOMAP_MAX_EDGES``), then the default (:data:`MAX_VERTICES`,
:data:`MAX_EDGES`).  Readers and generators call :func:`check_vertex_count` / :func:`check_edge_count`
with a count computed from the input *before* they allocate for it, so a 31-byte file that names 10**9
hosts, or a spec ``local-global:8x8:0.5:10000000000`` asking for 6.4e11 messages, fails at once with a
message naming the limit and how to raise it.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import warnings

from .errors import ArgumentError, FormatError, TopologyError

__all__ = ["MAX_VERTICES", "MAX_EDGES", "max_vertices", "max_edges", "vertex_limit", "edge_limit", "check_vertex_count",
           "check_edge_count", "HOW_TO_RAISE", "HOW_TO_RAISE_EDGES"]

#: Default limit: 16 times the 262,144 processes the library is designed for.  A text reader that
#: builds Python objects per vertex (the fabric adapters) needs about 1.7 KB per vertex, so the default
#: keeps one such read under about 7 GB; a user with a bigger machine raises it.
MAX_VERTICES = 1 << 22

#: Default edge limit: 64 edges per vertex of the default vertex limit (2**28).  An edge list in memory
#: costs 24 bytes an edge (two int64 ends and a float64 weight), so the default bounds one graph at 6 GiB.
MAX_EDGES = 64 * MAX_VERTICES

#: The end of every vertex-limit message.
HOW_TO_RAISE = "raise it with --max-vertices N or $LIBTOPOMAP_MAX_VERTICES"
#: The end of every edge-limit message.
HOW_TO_RAISE_EDGES = "raise it with --max-edges N or $LIBTOPOMAP_MAX_EDGES"

_OVERRIDE = contextvars.ContextVar("libtopomap_max_vertices", default=None)
_EDGE_OVERRIDE = contextvars.ContextVar("libtopomap_max_edges", default=None)


def _positive_env(name, text):
    """``text`` (the value of ``$name``) as a positive int, or ArgumentError."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ArgumentError(f"{name} must be a positive integer, got {text!r}")
    return value


def max_vertices():
    """The current vertex limit (module docstring).

    Returns
    -------
    int
        The override of :func:`vertex_limit`, else ``$LIBTOPOMAP_MAX_VERTICES`` (or the deprecated
        ``$LIBTOPOMAP_MAX_PROCESSES``, with a :class:`DeprecationWarning`), else :data:`MAX_VERTICES`.

    Raises
    ------
    ArgumentError
        ``$LIBTOPOMAP_MAX_VERTICES`` is not a positive integer.
    """
    return _current_limit(_OVERRIDE, "LIBTOPOMAP_MAX_VERTICES", MAX_VERTICES, deprecated="LIBTOPOMAP_MAX_PROCESSES")


def max_edges():
    """The current edge limit (module docstring).

    Raises
    ------
    ArgumentError
        ``$LIBTOPOMAP_MAX_EDGES`` is not a positive integer.
    """
    return _current_limit(_EDGE_OVERRIDE, "LIBTOPOMAP_MAX_EDGES", MAX_EDGES)


def _current_limit(override, name, default, *, deprecated=None):
    """The override in the context variable ``override``, else ``$name`` (else ``$deprecated``, with a
    warning to the caller of the public function), else ``default``."""
    value = override.get()
    if value is not None:
        return value
    text = os.environ.get(name, "").strip()
    if not text and deprecated and os.environ.get(deprecated, "").strip():
        warnings.warn(f"{deprecated} is deprecated; set {name}", DeprecationWarning, stacklevel=3)
        name, text = deprecated, os.environ[deprecated].strip()
    return _positive_env(name, text) if text else default


def vertex_limit(n):
    """Context manager: ``n`` (a positive int; ``None``: no change) is the vertex limit inside the block."""
    return _override(_OVERRIDE, n, "vertex")


def edge_limit(n):
    """Context manager: ``n`` (a positive int; ``None``: no change) is the edge limit inside the block."""
    return _override(_EDGE_OVERRIDE, n, "edge")


@contextlib.contextmanager
def _override(var, n, what):
    if n is None:
        yield
        return
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(f"the {what} limit must be a positive integer, got {n!r}")
    token = var.set(n)
    try:
        yield
    finally:
        var.reset(token)


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
    return _check(n, max_vertices(), HOW_TO_RAISE, what, path, line, error, unit)


def check_edge_count(n, what, *, path=None, line=None, error=TopologyError, unit="edges"):
    """Raise before allocating for ``n`` edges beyond :func:`max_edges`.

    Parameters
    ----------
    n : int, float or callable
        The count (as for :func:`check_vertex_count`).
    what : str
        Names what has ``n`` edges (``"local-global traffic 8x8 with 10**10 messages each"``).
    path, line : optional
        The file and line: the error is then a :class:`~libtopomap.FormatError` naming them.
    error : type
        The exception type otherwise (default :class:`~libtopomap.TopologyError`).
    unit : str
        What is counted, for the message (``"messages"``, ``"links"``).

    Returns
    -------
    int or None
        ``n`` as an int (None when ``n`` could not be computed).
    """
    return _check(n, max_edges(), HOW_TO_RAISE_EDGES, what, path, line, error, unit)


def _check(n, limit, how, what, path, line, error, unit):
    if callable(n):
        try:
            n = n()
        except (TypeError, ValueError, OverflowError):
            return None
    if isinstance(n, float):
        if not math.isnan(n) and n <= limit:
            return int(n)
        shown = f"more than {limit}"  # an estimate (k**n by logarithms): say no more than we know
    else:
        n = int(n)
        if n <= limit:
            return n
        shown = str(n)
    message = f"{what} has {shown} {unit}, above the limit of {limit} ({how})"
    if path is not None or line is not None:
        raise FormatError(message, path=path, line=line)
    raise error(message)
