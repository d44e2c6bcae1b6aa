"""One door per input: the checks a public function runs once on what it is given.

One checker per kind of input, one exception class per kind of error: an unknown name is a
:class:`~libtopomap.ChoiceError` (:func:`check_choice`), a value of the wrong type an
:class:`~libtopomap.ArgumentTypeError`, a value out of range (seed, seconds, count, bytes) an
:class:`~libtopomap.ArgumentError`, a bad communication graph a :class:`~libtopomap.CommGraphError`,
a bad mapping a :class:`~libtopomap.MappingError` (:func:`check_mapping`), an unreadable topology file a
:class:`~libtopomap.FormatError`.  The public functions (:func:`~libtopomap.map_processes`,
:class:`~libtopomap.portfolio.MappingProblem`, :func:`~libtopomap.portfolio.run_portfolio`, the MPI
calls, the command line) call them first; the layers below trust their inputs (scipy's pattern:
``scipy.sparse.csgraph._validation.validate_graph`` first, then the kernels).  Every message names
the bad value.
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

from .errors import ArgumentError, ArgumentTypeError, ChoiceError, CommGraphError, MappingError
from .mapping import check_mapping
from .vocabulary import REGISTRY, check_choice

__all__ = ["check_choice", "check_choices", "check_seed", "check_seconds", "check_count", "check_bytes",
           "check_slots", "as_topology", "check_graph", "check_mapping", "SEED_LIMIT"]

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
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ArgumentTypeError(f"seed must be a non-negative integer or None, got {seed!r}")
    if not 0 <= seed < SEED_LIMIT:
        raise ArgumentError(f"seed must be a non-negative integer below 2**63, got {seed}")
    return int(seed)


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
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name} must be a number of seconds, got {value!r}")
    if finite and not (math.isfinite(value) and value > 0):
        raise ArgumentError(f"{name} must be a finite number of seconds > 0, got {value!r}")
    if not value > 0:  # NaN too
        raise ArgumentError(f"{name} must be a number of seconds > 0, got {value!r}")
    return float(value)


def check_count(value, *, name):
    """A count (moves, iterations) as an ``int`` >= 0 (None passes through).

    Raises
    ------
    ArgumentTypeError
        Not an integer.
    ArgumentError
        Negative, or not below ``2**62``.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name} must be an integer, got {value!r}")
    if not 0 <= value < _COUNT_LIMIT:
        raise ArgumentError(f"{name} must be >= 0 and below 2**62, got {value}")
    return int(value)


def check_bytes(value, *, name):
    """A positive whole number of bytes (a memory bound) as an ``int``; floats such as ``4e9`` are taken.

    Raises
    ------
    ArgumentTypeError
        Not a number.
    ArgumentError
        Zero, negative, fractional, NaN or infinite.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name} must be a positive number of bytes, got {value!r}")
    if not (math.isfinite(value) and value > 0 and value == int(value)):
        raise ArgumentError(f"{name} must be a positive number of bytes, got {value!r}")
    return int(value)


def check_slots(topology, slots):
    """Per-vertex usable slots (default ``topology.slots``) as an ``int64`` array.

    Raises
    ------
    MappingError
        Not one integer per vertex, a negative count, or slots on a switch.
    """
    from .topology import SWITCH

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


def as_topology(topology):
    """The :class:`~libtopomap.Topology` given as an object, a file path, or ``"auto"``: the only place
    where a path is read (:func:`libtopomap.load`; under MPI, ``"auto"`` is discovered collectively
    before, by :func:`libtopomap.mpi.auto.resolve`).

    Raises
    ------
    ArgumentTypeError
        Neither a Topology nor a path.
    FormatError
        An unreadable file, naming it and the line.
    """
    from .topology import Topology

    if isinstance(topology, Topology):
        return topology
    if isinstance(topology, (str, os.PathLike)):
        from .loading import load

        return load(topology)
    raise ArgumentTypeError(f"topology must be a Topology, a file path or 'auto', got {type(topology).__name__} "
                            f"{topology!r:.60}")


def check_graph(graph):
    """Any communication graph :func:`~libtopomap.as_commgraph` accepts, as a
    :class:`~libtopomap.CommGraph`.

    Raises
    ------
    CommGraphError
        An unsupported type, or bad weights or ids, with the bad value.
    """
    from .commgraph import CommGraph, as_commgraph

    if isinstance(graph, CommGraph):
        return graph
    try:
        return as_commgraph(graph)
    except CommGraphError:
        raise
    except (TypeError, ValueError) as e:
        raise CommGraphError(f"invalid communication graph: {e}") from None
