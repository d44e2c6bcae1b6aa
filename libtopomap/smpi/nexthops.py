"""Each vertex's next arc toward a destination, read off a single-path routing model's flows."""

from __future__ import annotations

import numpy as np

__all__ = ["next_arcs"]


def next_arcs(topology, flow):
    """Each vertex's single outgoing arc with flow (-1: none), or None when a vertex has several or a
    flow is not a whole number of demands."""
    pos = np.flatnonzero(flow > 0.5)
    if np.abs(flow - np.rint(flow)).max(initial=0.0) > 1e-6:
        return None
    src = topology.arc_source[pos]
    if np.bincount(src, minlength=topology.n_vertices).max(initial=0) > 1:
        return None
    nxt = np.full(topology.n_vertices, -1, dtype=np.int64)
    nxt[src] = pos
    return nxt
