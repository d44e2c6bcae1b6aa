"""``dimension-order``: tori, meshes and hypercubes, one dimension at a time.

On generated tori and meshes (verified by :attr:`~libtopomap.Topology.distances`) the coordinates are
corrected dimension 0 first (the first number of ``"8x4x2"``), the shorter way round a ring, *up* on a
tie; on hypercubes this is e-cube routing, lowest differing bit first (bit 0 is the last dimension).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..errors import TopologyError
from ._common import label, no_log, put, strip_leaves
from ._models import Model

__all__ = ["dimension_order_route", "DIMENSION_ORDER"]


def _context(name, topology):
    shape = topology.distances.grid_shape
    if shape is None:
        raise TopologyError(f"topology{label(topology)}: dimension-order routing needs a generated torus, "
                            "mesh or hypercube")
    dims, wrap = shape
    dims = np.asarray(dims, np.int64)
    order = np.arange(dims.size, dtype=np.int64)
    if topology.distances.kind == "hypercube":
        order = order[::-1].copy()  # e-cube: bit 0 (the last grid dimension) first
    return dims, np.asarray(wrap, np.bool_), order


@njit(cache=True)
def dimension_order_route(arcs, indices, dims, wrap, dorder, strides, s, t, w, traffic, log_arc, log_val, log_n):
    """One demand dimension by dimension (``dorder``), the shorter way round (up on a tie); its hops."""
    v = s
    h = 0
    for jj in range(dims.size):
        j = dorder[jj]
        k = dims[j]
        cs = (v // strides[j]) % k
        ct = (t // strides[j]) % k
        d = ct - cs
        if wrap[j]:
            d = d % k
            if 2 * d > k:
                d -= k
        col = 2 * j if d > 0 else 2 * j + 1
        for _ in range(abs(d)):
            a = arcs[v, col]
            put(traffic, a, w, log_arc, log_val, log_n)
            v = indices[a]
            h += 1
    return h


@njit(cache=True)
def _dimension_order_walk(arcs, indices, dims, wrap, dorder, s, t, w, traffic, hops):
    """:func:`dimension_order_route` of every demand."""
    nd = dims.size
    strides = np.ones(nd, np.int64)
    for j in range(nd - 2, -1, -1):
        strides[j] = strides[j + 1] * dims[j + 1]
    log_arc, log_val, log_n = no_log()
    for i in range(s.size):
        hops[i] = dimension_order_route(arcs, indices, dims, wrap, dorder, strides, s[i], t[i], w[i], traffic,
                                        log_arc, log_val, log_n)


def _traffic(topology, name, ctx, s, t, w):
    traffic = np.zeros(topology.n_arcs)
    s, t, w = strip_leaves(topology, s, t, w, traffic)
    if s.size == 0:
        return traffic
    dims, wrap, dorder = ctx
    _dimension_order_walk(topology.distances.grid_arcs(), topology.indices, dims, wrap, dorder, s, t, w, traffic,
                          np.zeros(s.size))
    return traffic


#: The ``dimension-order`` model.
DIMENSION_ORDER = Model("dimension-order", _traffic, context=_context)
