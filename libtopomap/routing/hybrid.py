"""``hybrid``: the hybrid networks of :func:`~libtopomap.hybrid` (Mehta 2005, section 5.3).

Inside the source's component to the destination's position (e-cube on hypercube components, the
lowest-index next hop of ``table`` on LDR components), then up-down through the fat tree of that
position (:func:`~libtopomap.generators.hybrid.hybrid_route`).  Shortest paths, one per pair, walked
by the per-pair kernels (:func:`libtopomap.routing.pairs.routes_batch`).
"""

from __future__ import annotations

import numpy as np

from ..errors import TopologyError
from ..generators.hybrid import hybrid_layout
from ._common import label, strip_leaves
from ._models import Model
from .pairs import pair_context, routes_batch

__all__ = ["HYBRID"]


def _context(name, topology):
    if topology.attrs.get("generator") != "hybrid":
        raise TopologyError(f"topology{label(topology)}: hybrid routing needs a topology from "
                            f"libtopomap.hybrid() (generator {topology.attrs.get('generator')!r})")
    return hybrid_layout(topology) + (int(topology.attrs["component"] == "hypercube"),)


def _traffic(topology, name, ctx, s, t, w):
    traffic = np.zeros(topology.n_arcs)
    s, t, w = strip_leaves(topology, s, t, w, traffic)
    if s.size == 0:
        return traffic
    meta, packed, table = topology.distances.fast_arrays
    ok = routes_batch(pair_context(topology, name), s, t, w, topology.indptr, topology.indices, topology.arc_reverse,
                      meta, packed, table, bool(topology.distances.covers_all), traffic)
    if not ok:
        raise TopologyError(f"topology{label(topology)} lacks a link of its hybrid routes")
    return traffic


#: The ``hybrid`` model.
HYBRID = Model("hybrid", _traffic, context=_context)
