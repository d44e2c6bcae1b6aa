"""The public side of every refinement schedule: validate, start, search, wrap as a Mapping."""

from __future__ import annotations

import time

import numpy as np

from ._common import finish, prepare
from .baselines import initial_vertices
from .objectives import check_objective

__all__ = ["run_refinement"]


def run_refinement(search, label, topology, graph, mapping, *, slots, seed, objective, **options):
    """The public side of a refinement schedule: validate the input, start from ``mapping`` (default:
    the usable slots filled in vertex order), run ``search(topology, g, start, slots, objective,
    rng=..., t_start=..., **options)`` (which returns ``(vertices, start_value, best_value, stats)``)
    and wrap the result as a :class:`~libtopomap.Mapping` named ``label``."""
    t0 = time.perf_counter()
    topology, g, slots, seed = prepare(topology, graph, slots, seed)
    rng = np.random.default_rng(seed)
    check_objective(objective)
    start = initial_vertices(topology, g, slots, mapping)
    best, _, _, _ = search(topology, g, start, slots, objective, rng=rng, t_start=t0, **options)
    return finish(topology, best, slots, label)
