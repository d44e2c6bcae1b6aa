"""Routing models: which links a message from one vertex to another crosses, and with what share.

A model is named by a string of :data:`ROUTING_MODELS` (or a :class:`Routing`; ``"native"`` is the
topology's own, :func:`native_routing`) and gives, for a batch of demands ``(source vertex,
destination vertex, weight)``, the load on every arc (:func:`route_traffic`) and the hops of each
demand (:func:`route_hops`).  Every metric keeps ``routing="ecmp"`` as its default.  The models, their
defaults and their costs are described on the routing page of the documentation (``docs/routing.rst``).

Each model is a :class:`~libtopomap.routing._models.Model` in its own module of this package, entered
in the registry below; the local-search engine's compiled per-pair kernels are in :mod:`.pairs`.
"""

from __future__ import annotations

from ..topology import native_routing
from ..vocabulary import DEFAULT_ROUTING, ROUTING_MODELS as _MODELS
from . import dmodk, dragonfly, ecmp, grid, hybrid, lft, table, twisted
from ._common import demand_arrays
from ._models import MODELS, Routing, get_routing, register
from .ecmp import ecmp_vertex_traffic
from .pairs import pair_context, pair_flows, pair_hops, pair_hops_batch
from .twisted import rt_routing_record, rtt_routing_record

__all__ = ["ROUTING_MODELS", "DEFAULT_ROUTING", "Routing", "get_routing", "native_routing", "route_traffic",
           "route_hops", "rt_routing_record", "rtt_routing_record", "pair_context", "pair_flows",
           "pair_hops", "pair_hops_batch", "ecmp_vertex_traffic"]

#: Names of the routing models (defined in :mod:`libtopomap.vocabulary` for the command line).
ROUTING_MODELS = _MODELS

# The registry, in the order of ROUTING_MODELS.  A new model is one module of this package defining a
# Model, one entry here, and its name in libtopomap.vocabulary.ROUTING_MODELS (the command line's choices).
register(ecmp.ECMP, table.TABLE, table.OBLIVIOUS, grid.DIMENSION_ORDER, twisted.RT, twisted.RTT, dragonfly.MINIMAL,
         dragonfly.VALIANT, hybrid.HYBRID, dmodk.DMODK, lft.LFT)


def route_traffic(topology, src, dst, weights=None, *, routing=None):
    """Per-arc load of vertex demands under a routing model.

    Parameters
    ----------
    topology : Topology
    src, dst : array_like of int
        Source and destination vertex of each demand (equal ones carry nothing).
    weights : array_like of float, optional
        Volume of each demand (default 1).
    routing : str or Routing, optional
        A model of :data:`ROUTING_MODELS`, ``"lft:PATH"``, ``"native"``, or None for
        :data:`DEFAULT_ROUTING`.

    Returns
    -------
    numpy.ndarray of float64, one entry per arc (CSR order of ``topology.indices``).

    Raises
    ------
    TopologyError
        The model cannot route on this topology, a vertex index is out of range, or a demand's
        vertices are not connected.
    """
    r = get_routing(routing, topology)
    model = MODELS[r.model]
    ctx = model.context(r.name, topology)
    s, t, w = demand_arrays(topology, src, dst, weights)
    return model.traffic(topology, r.name, ctx, s, t, w)


def route_hops(topology, src, dst, *, routing=None):
    """Links crossed by each demand ``src[i] -> dst[i]`` under a routing model.

    Returns
    -------
    numpy.ndarray
        ``int64`` hop counts; for ``valiant`` the expected hops over the intermediate group
        (``float64``).  Shortest-path models (all but ``minimal`` and ``valiant``) answer from
        ``topology.distances``.
    """
    r = get_routing(routing, topology)
    model = MODELS[r.model]
    ctx = model.context(r.name, topology)
    s, t, _ = demand_arrays(topology, src, dst, None)
    if model.shortest:
        return topology.distances.pairs(s, t)
    return model.hops(topology, r.name, ctx, s, t)
