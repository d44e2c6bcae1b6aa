"""Objective functions of a mapping (Hoefler & Snir, ICS'11, section 2.4): the table, their values, checks.

``congestion`` (maximum arc congestion under ECMP routing, section 2.5, as
:func:`libtopomap.max_congestion`), ``dilation`` (``sum(w * hops) / sum(w)``) and ``hopbytes``
(``sum(w * hops)``); the engine that minimises them is :mod:`libtopomap.mappers.local_search`.
"""

from __future__ import annotations

from ..vocabulary import OBJECTIVES, check_choice
from .. import metrics

__all__ = ["OBJECTIVES", "objective_value", "check_objective"]


def check_objective(objective):
    """Return ``objective`` if it is one of :data:`OBJECTIVES`.

    Raises
    ------
    ChoiceError
        Unknown objective.
    """
    return check_choice("objective", objective)


def objective_value(topology, graph, vertices, objective="congestion"):
    """Value of one objective for a mapping (lower is better).

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    vertices : Mapping or array_like of int
        ``vertices[p]`` is the vertex of process ``p``.
    objective : {"congestion", "dilation", "hopbytes"}
        Maximum ECMP congestion, weighted average dilation, or hop-bytes.

    Returns
    -------
    float

    Raises
    ------
    MappingError
        Unknown objective or invalid mapping.

    Examples
    --------
    >>> from libtopomap import torus
    >>> objective_value(torus("4"), [(0, 1), (1, 2)], [0, 1, 3], "hopbytes")
    3.0
    """
    check_objective(objective)
    if objective == "congestion":
        return metrics.max_congestion(topology, graph, vertices)
    if objective == "dilation":
        return metrics.average_dilation(topology, graph, vertices)
    return metrics.hop_bytes(topology, graph, vertices)
