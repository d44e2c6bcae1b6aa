"""Compiled inner loops (numba) shared by metrics and mappers.

Per-source shortest-path counting is a graph traversal whose work per source is proportional to the
part of the network it reaches; numpy cannot express the early exit, so these loops are compiled.
Measured on a 16x16x16 torus with a 7-point stencil: see ``benchmarks/bench_core.py``.

One module per kernel family: :mod:`.ecmp` (Brandes ECMP flows by search), :mod:`.alg3` (Hoefler &
Snir's Algorithm 3), :mod:`.bfs` (chunked breadth-first searches), :mod:`.oracle` (distance-oracle
kernels), :mod:`.grid_ecmp` and :mod:`.fattree_ecmp` (closed-form ECMP loads on grids and fat trees).
Callers import a kernel from its own module (``from libtopomap._kernels.bfs import k_nearest``):
this package re-exports nothing.
"""

__all__ = []
