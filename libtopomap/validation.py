"""One door per input: the checks a public function runs once on what it is given, one exception class per
kind of error, every message naming the bad value.  The public functions (``map_processes``, ``MappingProblem``,
the MPI calls, the command line) call them first and the layers below trust their inputs (scipy's
``validate_graph``, then the kernels).  A bottom layer: it imports only the errors, the vocabulary and the
types it checks (scipy's on first use), so generators and patterns check their seeds here too; a topology
given as an object, a path or ``"auto"`` is read by :func:`libtopomap.loading.as_topology`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import ArgumentError, ArgumentTypeError, ChoiceError, CommGraphError, MappingError
from .mapping import check_mapping
from .vocabulary import REGISTRY, check_choice

__all__ = ["check_choice", "check_choices", "check_seed", "check_seconds", "check_count", "check_moves", "check_bytes",
           "check_slots", "check_graph", "check_mapping", "SEED_LIMIT"]

#: Seeds are ``0 <= seed < SEED_LIMIT``: they travel between MPI ranks as ``int64``.
SEED_LIMIT = 2**63
_COUNT_LIMIT = 2**62


def check_choices(kind, values, *, default, choices=None):
    """A tuple of registered names of ``kind`` from one name, a sequence of names, or None (``default``).

    Raises
    ------
    ChoiceError
        An unknown name (:func:`check_choice`), or no name at all.

    Examples
    --------
    >>> check_choices("objective", "hopbytes", default=())
    ('hopbytes',)
    """
    names = tuple(default) if values is None else (values,) if isinstance(values, str) else tuple(values)
    if not names:
        accepted = tuple(REGISTRY[kind]) if choices is None else tuple(choices)
        raise ChoiceError(f"no {kind} given; expected one or more of {', '.join(accepted)}")
    for name in names:
        check_choice(kind, name, choices=choices)
    return names


def _check_number(value, *, name, kind, what, within, expected):
    """The one shape of the scalar checkers: ``value`` of ``kind`` (a bool is not a number here), else an
    :class:`~libtopomap.ArgumentTypeError` "NAME must be WHAT"; then ``within(value)``, else an
    :class:`~libtopomap.ArgumentError` "NAME must be EXPECTED"; both messages end with the value."""
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ArgumentTypeError(f"{name} must be {what}, got {value!r}")
    if not within(value):
        shown = value if isinstance(value, numbers.Integral) else repr(value)
        raise ArgumentError(f"{name} must be {expected}, got {shown}")
    return value


def check_seed(seed):
    """``seed`` as an ``int`` (None and :class:`numpy.random.SeedSequence` pass through).

    Raises
    ------
    ArgumentTypeError
        Not an integer (``1.5``, ``"7"``, ``True``).
    ArgumentError
        Negative, or not below :data:`SEED_LIMIT`.

    Examples
    --------
    >>> check_seed(7)
    7
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    libtopomap.errors.ArgumentError: seed must be a non-negative integer below 2**63, got -1
    """
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return seed
    return int(_check_number(seed, name="seed", kind=numbers.Integral, what="a non-negative integer or None",
                             within=lambda v: 0 <= v < SEED_LIMIT, expected="a non-negative integer below 2**63"))


def check_seconds(value, *, name, finite=True):
    """A duration in seconds as a ``float`` > 0 (None passes through); ``finite=False`` also takes
    ``math.inf`` (no limit, as ``total_budget`` does).

    Raises
    ------
    ArgumentTypeError
        Not a number.
    ArgumentError
        NaN, zero, negative, or infinite where ``finite``.
    """
    if value is None:
        return None
    if finite:
        within, expected = (lambda v: math.isfinite(v) and v > 0), "a finite number of seconds > 0"
    else:
        within, expected = (lambda v: v > 0), "a number of seconds > 0"  # NaN fails too
    return float(_check_number(value, name=name, kind=numbers.Real, what="a number of seconds", within=within,
                               expected=expected))


def check_count(value, *, name):
    """A count (swaps, moves) as an ``int`` >= 0 (None passes through).

    Raises
    ------
    ArgumentTypeError
        Not an integer.
    ArgumentError
        Negative, or not below ``2**62``.
    """
    if value is None:
        return None
    return int(_check_number(value, name=name, kind=numbers.Integral, what="an integer",
                             within=lambda v: 0 <= v < _COUNT_LIMIT, expected=">= 0 and below 2**62"))


def check_moves(value, *, name="iterations"):
    """The moves of a refinement (``iterations=`` of :func:`~libtopomap.map_processes`,
    :class:`~libtopomap.portfolio.MappingProblem` and the MPI calls, ``map --iterations``) as an ``int`` >= 1
    (None passes through: the refinement's own budget).  Every search counts its moves down to zero and
    stops there, so zero moves would be a refinement that does nothing: ask for none (``refine=None``).

    Raises
    ------
    ArgumentTypeError
        Not an integer.
    ArgumentError
        Zero, negative, or not below ``2**62``.

    Examples
    --------
    >>> check_moves(0)
    Traceback (most recent call last):
    ...
    libtopomap.errors.ArgumentError: iterations must be a positive integer below 2**62, got 0
    """
    if value is None:
        return None
    return int(_check_number(value, name=name, kind=numbers.Integral, what="an integer",
                             within=lambda v: 0 < v < _COUNT_LIMIT, expected="a positive integer below 2**62"))


def check_bytes(value, *, name):
    """A positive whole number of bytes (a memory bound) as an ``int``; floats such as ``4e9`` are taken.

    Raises
    ------
    ArgumentTypeError
        Not a number.
    ArgumentError
        Zero, negative, fractional, NaN or infinite.
    """
    return int(_check_number(value, name=name, kind=numbers.Real, what="a positive number of bytes",
                             within=lambda v: math.isfinite(v) and v > 0 and v == int(v),
                             expected="a positive number of bytes"))


def check_slots(topology, slots):
    """Per-vertex usable slots (default ``topology.slots``) as an ``int64`` array.

    Raises
    ------
    MappingError
        Not one integer per vertex, a negative count, or slots on a switch.
    """
    from .topology import SWITCH  # topology and commgraph import scipy: on first use, so the CLI's parsers stay light

    if slots is None:
        return topology.slots.astype(np.int64)
    s = np.asarray(slots)
    if s.shape != (topology.n_vertices,):
        raise MappingError(f"slots must have one entry per vertex ({topology.n_vertices}), got shape {s.shape}")
    sf = s.astype(np.float64)
    if not np.all(np.isfinite(sf)) or np.any(sf != np.round(sf)):
        raise MappingError("slots must be integers")
    neg = np.flatnonzero(sf < 0)
    if neg.size:
        raise MappingError(f"vertex {topology.names[neg[0]]!r} has negative slots {s[neg[0]]}")
    switch = np.flatnonzero((sf > 0) & (np.asarray(topology.kinds) == SWITCH))
    if switch.size:
        raise MappingError(f"slots put {s[switch[0]]} process(es) on switch {topology.names[switch[0]]!r}; "
                           "processes run on hosts only")
    return s.astype(np.int64)


def check_graph(graph):
    """Any communication graph :func:`~libtopomap.as_commgraph` accepts, as a
    :class:`~libtopomap.CommGraph`.

    Raises
    ------
    CommGraphError
        An unsupported type, or bad weights or ids, with the bad value.
    """
    from .commgraph import CommGraph, as_commgraph  # scipy, on first use (see check_slots)

    if isinstance(graph, CommGraph):
        return graph
    try:
        return as_commgraph(graph)
    except CommGraphError:
        raise
    except (TypeError, ValueError) as e:
        raise CommGraphError(f"invalid communication graph: {e}") from None
