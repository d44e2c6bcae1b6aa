"""``rt`` / ``rtt``: rectangular (twisted) tori walked along their routing records.

The routing record ``(x', y')`` of Algorithm 1 (RT) or Algorithm 2 (RTT) of Camarero, Martinez and
Beivide, "Task Mapping in Rectangular Twisted Tori" (:func:`rt_routing_record`,
:func:`rtt_routing_record`), walked horizontally first (``|x'|`` hops along ``x``), then vertically
(``|y'|`` hops along ``y``; a vertical step off the edge of RTT(a) takes the twisted wrap link).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..errors import ArgumentError, TopologyError
from ._common import label, load_link, no_log, strip_leaves
from ._models import Model

__all__ = ["rt_routing_record", "rtt_routing_record", "twisted_route", "RT", "RTT"]


def rt_routing_record(dx, dy, a):
    """Routing record of RT(a) (Camarero et al., Algorithm 1).

    Parameters
    ----------
    dx, dy : int or array_like of int
        Destination minus source, any integers (coordinates are taken modulo the torus).
    a : int
        ``a >= 2``; RT(a) is the ``2a x a`` torus.

    Returns
    -------
    (x', y') : ints or int64 arrays
        ``x' = rem(x + a, 2a) - a`` in ``[-a, a)`` and ``y' = rem(y + floor(a/2), a) - floor(a/2)``;
        ``|x'| + |y'|`` is the hop distance.

    References
    ----------
    C. Camarero, C. Martinez, R. Beivide, "Task Mapping in Rectangular Twisted Tori", Algorithm 1.

    Examples
    --------
    >>> rt_routing_record(5, -1, 4)
    (-3, -1)
    """
    a, x, y = _record_input(dx, dy, a)
    h = a // 2
    xr = np.mod(x + a, 2 * a) - a
    yr = np.mod(y + h, a) - h
    return _out(xr, yr, dx, dy)


def rtt_routing_record(dx, dy, a):
    """Routing record of RTT(a) (Camarero et al., Algorithm 2).

    Parameters
    ----------
    dx, dy : int or array_like of int
        Destination minus source, any integers.
    a : int
        ``a >= 2``.

    Returns
    -------
    (x', y') : ints or int64 arrays
        With ``p = rem(x + y + a, 2a)`` and ``q = rem(y - x + a, 2a)``: ``x' = (p - q)/2``,
        ``y' = (p + q - 2a)/2``; ``(x', y') - (x, y)`` lies in the lattice spanned by ``(a, a)`` and
        ``(a, -a)`` and ``|x'| + |y'|`` is the hop distance.

    References
    ----------
    C. Camarero, C. Martinez, R. Beivide, "Task Mapping in Rectangular Twisted Tori", Algorithm 2.

    Examples
    --------
    >>> rtt_routing_record([5, 0], [-1, 3], 4)  # arrays: element-wise
    (array([-3,  0]), array([-1,  3]))
    """
    a, x, y = _record_input(dx, dy, a)
    p = np.mod(x + y + a, 2 * a)
    q = np.mod(y - x + a, 2 * a)
    return _out((p - q) // 2, (p + q - 2 * a) // 2, dx, dy)


def _record_input(dx, dy, a):
    """``a`` checked, ``dx`` and ``dy`` as int64 arrays."""
    if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or int(a) < 2:
        raise ArgumentError(f"a must be an integer >= 2, got {a!r}")
    return int(a), np.asarray(dx, dtype=np.int64), np.asarray(dy, dtype=np.int64)


def _out(xr, yr, dx, dy):
    if np.ndim(dx) == 0 and np.ndim(dy) == 0:
        return int(xr), int(yr)
    return xr, yr


def _context(name, topology):
    attrs = topology.attrs
    if attrs.get("generator") != name or "a" not in attrs:
        raise TopologyError(f"topology{label(topology)}: {name} routing needs a topology from "
                            f"libtopomap.{name}() (generator {attrs.get('generator')!r})")
    return int(attrs["a"])


@njit(cache=True)
def twisted_route(indptr, indices, a, twisted, s, t, w, traffic, log_arc, log_val, log_n):
    """One demand along its routing record (Alg. 1 or 2 of Camarero et al.): x first, then y.  Its hops, or
    -1 when the topology lacks a link of the record."""
    W = 2 * a
    hh = a // 2
    x, y = s % W, s // W
    dx, dy = t % W - x, t // W - y
    if twisted:
        p = (dx + dy + a) % W
        q = (dy - dx + a) % W
        rx, ry = (p - q) // 2, (p + q - W) // 2
    else:
        rx = (dx + a) % W - a
        ry = (dy + hh) % a - hh
    u = s
    for _ in range(abs(rx)):
        x = (x + (1 if rx > 0 else -1)) % W
        v = y * W + x
        if not load_link(indptr, indices, u, v, w, traffic, log_arc, log_val, log_n):
            return -1
        u = v
    for _ in range(abs(ry)):
        y2 = y + (1 if ry > 0 else -1)
        if y2 < 0 or y2 >= a:
            if twisted:  # (x, -1) = (x + a, a - 1) and (x, a) = (x - a, 0) modulo the lattice
                x = (x + a) % W
            y2 = y2 % a
        y = y2
        v = y * W + x
        if not load_link(indptr, indices, u, v, w, traffic, log_arc, log_val, log_n):
            return -1
        u = v
    return abs(rx) + abs(ry)


@njit(cache=True)
def _twisted_walk(indptr, indices, a, twisted, s, t, w, traffic, hops):
    """:func:`twisted_route` of every demand; False when a link is missing."""
    log_arc, log_val, log_n = no_log()
    for i in range(s.size):
        h = twisted_route(indptr, indices, a, twisted, s[i], t[i], w[i], traffic, log_arc, log_val, log_n)
        if h < 0:
            return False
        hops[i] = h
    return True


def _traffic(topology, name, ctx, s, t, w):
    traffic = np.zeros(topology.n_arcs)
    s, t, w = strip_leaves(topology, s, t, w, traffic)
    if s.size == 0:
        return traffic
    ok = _twisted_walk(topology.indptr, topology.indices, ctx, name == "rtt", s, t, w, traffic, np.zeros(s.size))
    if not ok:
        raise TopologyError(f"topology{label(topology)} lacks a link of {name.upper()}({ctx})")
    return traffic


#: The ``rt`` model (RT(a), Algorithm 1).
RT = Model("rt", _traffic, context=_context)
#: The ``rtt`` model (RTT(a), Algorithm 2).
RTT = Model("rtt", _traffic, context=_context)
