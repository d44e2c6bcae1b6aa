"""Compiled inner loops (numba) shared by metrics and mappers.

Per-source shortest-path counting is a graph traversal whose work per source is proportional to the
part of the network it reaches; numpy cannot express the early exit, so these loops are compiled.
Measured on a 16x16x16 torus with a 7-point stencil: see ``benchmarks/bench_core.py``.

One module per kernel family: :mod:`.ecmp` (Brandes ECMP flows by search), :mod:`.alg3` (Hoefler &
Snir's Algorithm 3), :mod:`.bfs` (chunked breadth-first searches), :mod:`.oracle` (distance-oracle
kernels), :mod:`.grid_ecmp` and :mod:`.fattree_ecmp` (closed-form ECMP loads on grids and fat trees).
This package re-exports their names, so ``_kernels.X`` and ``from ._kernels import X`` work.
"""

from .alg3 import alg3_levels, alg3_traffic
from .bfs import (bfs_balls, bfs_distance_rows, bfs_scratch, bfs_start, bfs_targets, bfs_visit, grouped_pair_search,
                  k_nearest, leafless_csr, multi_source_levels, multi_source_owners, source_sums)
from .ecmp import ecmp_pair_flows, ecmp_traffic, ecmp_traffic_parallel, sigma_reset, sigma_search
from .fattree_ecmp import fattree_ecmp_traffic, fattree_up_arcs
from .grid_ecmp import grid_arc_table, grid_demand_costs, grid_ecmp_traffic
from .oracle import (KIND_CUBE, KIND_GRID, KIND_SEARCH, KIND_TABLE, NEEDS_SEARCH, grid3_dims, grid3_hops,
                     grid3_target, hop_distance, hop_distance_search, new_search_scratch, pair_search,
                     vertex_distance, vertex_distances)

__all__ = ["ecmp_traffic", "ecmp_traffic_parallel", "alg3_traffic", "ecmp_pair_flows", "bfs_distance_rows",
           "alg3_levels", "hop_distance", "grid3_dims", "grid3_target", "grid3_hops", "hop_distance_search",
           "NEEDS_SEARCH", "vertex_distance",
           "vertex_distances", "pair_search", "new_search_scratch",
           "grouped_pair_search", "source_sums", "k_nearest", "bfs_balls", "multi_source_levels", "multi_source_owners",
           "KIND_SEARCH", "KIND_GRID", "KIND_CUBE", "KIND_TABLE", "leafless_csr",
           "grid_arc_table", "grid_demand_costs", "grid_ecmp_traffic",
           "fattree_up_arcs", "fattree_ecmp_traffic",
           "bfs_scratch", "bfs_start", "bfs_targets", "bfs_visit", "sigma_reset", "sigma_search"]

