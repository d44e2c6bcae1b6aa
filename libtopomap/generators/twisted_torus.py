"""Rectangular torus RT(a) and rectangular twisted torus RTT(a) over R_{2a,a} (Camarero et al.).

Node ``(x, y)`` with ``0 <= x < 2a``, ``0 <= y < a`` is vertex ``y * 2a + x`` (``x`` fastest), named
``n<i>``; every node is a host with one slot.  ``attrs["coords"]`` is not stored; use
``divmod(i, 2a)`` -> ``(y, x)``.

Their native routing (``Topology.routing``, used by the metrics with ``routing="native"``) is the
routing record of Algorithm 1 (RT) or 2 (RTT): :func:`libtopomap.routing.rt_routing_record` and
:func:`libtopomap.routing.rtt_routing_record`.

Mapping a logical 2D torus onto these networks (identity, diagonal shift, concentrations) and the
paper's performance model are in :mod:`libtopomap.mappers.twisted_mappings`.
"""

from __future__ import annotations

import numpy as np

from .grid import check_vertex_count

from ..errors import TopologyError
from ..topology import Topology

__all__ = ["rt", "rtt"]


def _check(a):
    a = int(a)
    if a < 2:
        raise TopologyError(f"RT(a) and RTT(a) need a >= 2, got {a}")
    return a


def _mesh_links(a):
    w = 2 * a
    idx = np.arange(w * a).reshape(a, w)  # idx[y, x]
    horiz = np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1)
    vert = np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], 1)
    wrap_x = np.stack([idx[:, 0], idx[:, w - 1]], 1)  # (0, y) - (2a-1, y)
    return idx, [horiz, vert, wrap_x]


def rt(a, *, name=None):
    """Rectangular torus RT(a): the 2a x a torus (horizontal rings of 2a nodes, vertical rings of a).

    Parameters
    ----------
    a : int
        ``a >= 2``; RT(a) has ``2a**2`` nodes of degree 4 (degree 3 when ``a = 2``: a 2-ring is one link).

    Returns
    -------
    Topology

    Notes
    -----
    Diameter ``a + floor(a/2)`` (``3a/2`` for even ``a``, Table 1 of Camarero et al.).  Average distance
    over all ordered pairs including a node and itself is exactly ``3a/4`` for even ``a`` (Table 1),
    ``a/2 + (a**2 - 1)/(4a)`` for odd ``a``.

    References
    ----------
    C. Camarero, C. Martinez, R. Beivide, "Task Mapping in Rectangular Twisted Tori", section 2 and
    Table 1 (Camarero et al.).
    """
    check_vertex_count(lambda: 2 * int(a) * int(a), f"rt({a})")
    a = _check(a)
    idx, parts = _mesh_links(a)
    if a > 2:
        parts.append(np.stack([idx[0, :], idx[a - 1, :]], 1))  # (x, 0) - (x, a-1)
    return Topology([f"n{i}" for i in range(2 * a * a)], np.concatenate(parts), name=name or f"rt-{a}",
                    attrs={"generator": "rt", "a": a, "width": 2 * a, "height": a})


def rtt(a, *, name=None):
    """Rectangular twisted torus RTT(a) (Camarero et al., Definition 2.1).

    Inner links form the 2a x a mesh; wraparound links join ``(x, 0)`` to ``(x + a, a - 1)`` for
    ``x < a`` and to ``(x - a, a - 1)`` for ``x >= a`` (twisted vertical wrap), and ``(0, y)`` to
    ``(2a - 1, y)`` (horizontal wrap).

    Parameters
    ----------
    a : int
        ``a >= 2``; RTT(a) has ``2a**2`` nodes of degree 4.

    Returns
    -------
    Topology

    Notes
    -----
    RTT(a) is Z^2 modulo the lattice spanned by ``(a, a)`` and ``(a, -a)`` (the routing of Algorithm
    2 works in those coordinates), whose L1 Voronoi cell is the diamond ``|x| + |y| <= a``.  Hence
    ``4d`` nodes lie at distance ``d`` for ``1 <= d < a`` and the remaining ``2a - 1`` at distance
    ``a``: diameter ``a`` and average distance (over all ordered pairs, self included)
    ``(4a**2 - 1) / (6a)``, which Table 1 rounds to ``2a/3``.

    References
    ----------
    C. Camarero, C. Martinez, R. Beivide, "Task Mapping in Rectangular Twisted Tori", Definition 2.1,
    Algorithm 2 and Table 1 (Camarero et al.).

    Examples
    --------
    >>> t = rtt(4)
    >>> t.n_vertices, t.n_links
    (32, 64)
    """
    check_vertex_count(lambda: 2 * int(a) * int(a), f"rtt({a})")
    a = _check(a)
    idx, parts = _mesh_links(a)
    x = np.arange(2 * a)
    partner = np.where(x < a, x + a, x - a)
    twist = np.stack([idx[0, x], idx[a - 1, partner]], 1)
    parts.append(twist[x < a])  # each twisted link once: (x,0)-(x+a,a-1) for x<a ...
    parts.append(twist[x >= a])  # ... and (x,0)-(x-a,a-1) for x>=a (distinct links)
    return Topology([f"n{i}" for i in range(2 * a * a)], np.concatenate(parts), name=name or f"rtt-{a}",
                    attrs={"generator": "rtt", "a": a, "width": 2 * a, "height": a})
