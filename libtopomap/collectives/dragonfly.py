"""Topology queries on a dragonfly network (Dorier et al., sections II-A and III-A.2).

:class:`Dragonfly` (router, group, gate and minimal-route queries) and :func:`dragonfly_queries` are
defined with the generator, in :mod:`libtopomap.generators.dragonfly`, and used from here by the
collectives (:mod:`libtopomap.collectives.dorier`).
"""

from ..generators.dragonfly import Dragonfly, dragonfly_queries

__all__ = ["Dragonfly", "dragonfly_queries"]
