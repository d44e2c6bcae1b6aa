"""The baselines: the current placement (identity) and a uniformly random placement."""

from __future__ import annotations

import numpy as np

from .._deprecation import renamed_keyword
from ..mapping import Mapping, check_mapping
from ._common import finish, slot_list, validated

__all__ = ["map_identity", "map_random", "default_placement"]


def default_placement(slots, n_processes):
    """Fill the usable slots in vertex order: process ``p`` goes to the ``p``-th slot."""
    return slot_list(slots)[:n_processes]


def initial_vertices(topology, g, slots, mapping):
    """Vertex of each process in ``mapping`` (a Mapping or an array), validated against ``slots``;
    the default placement (:func:`default_placement`) when ``mapping`` is None."""
    if mapping is None:
        return default_placement(slots, g.n)
    if isinstance(mapping, Mapping):
        mapping = mapping.vertices
    return check_mapping(topology, mapping, g.n, slots=slots)


@renamed_keyword("current", "placement")
@validated
def map_identity(topology, graph, *, slots=None, seed=None, placement=None):
    """The current placement, unchanged: the baseline every other strategy must beat.

    Parameters
    ----------
    topology, graph, slots
        As for :func:`~libtopomap.mappers.map_processes`.
    seed : ignored
    placement : array_like of int, optional
        Where each process runs now; default fills the usable slots in vertex order.  Its old name
        ``current=`` still works, with a :class:`DeprecationWarning`.

    Returns
    -------
    Mapping
        Strategy ``"identity"``: process ``p`` on ``placement[p]``.

    Raises
    ------
    MappingError
        ``placement`` has the wrong length or overfills a vertex.
    """
    return finish(topology, initial_vertices(topology, graph, slots, placement), slots, "identity")


@validated
def map_random(topology, graph, *, slots=None, seed=None):
    """A uniformly random placement of the processes into the usable slots.

    Returns
    -------
    Mapping
    """
    sl = slot_list(slots)
    return finish(topology, sl[np.random.default_rng(seed).permutation(sl.size)[:graph.n]], slots, "random")
