"""The MPI layer of libtopomap (imports mpi4py).

Drop-in replacements for mpi4py's ``Create_dist_graph_adjacent`` / ``Create_dist_graph`` that really
reorder ranks onto the physical network, the low-level :func:`topomap` (like LibTopoMap's
``TPM_Topomap``), locating processes on the topology, :func:`reorder_for_collective`, and the
communication of the parallel mapping portfolio (Hoefler & Snir, ICS'11, section 4 and Figure 4):
everything else of the race (candidates, budgets, scores, memory plan, selection order) lives in the
MPI-free :mod:`libtopomap.portfolio`.  This package is the only part of libtopomap that imports mpi4py.
"""

from .distgraph import (DEFAULT_STRATEGIES, Create_dist_graph, Create_dist_graph_adjacent, TopomapDistgraphcomm,
                        TopomapReport, last_report, topomap)
from .collective import CollectiveReport, TopomapIntracomm, reorder_for_collective
from .driver import race
from .locate import locate
from .race import collective_call, select_best

__all__ = ["Create_dist_graph_adjacent", "Create_dist_graph", "topomap", "TopomapReport", "TopomapDistgraphcomm",
           "last_report", "DEFAULT_STRATEGIES", "locate", "select_best", "collective_call",
           "reorder_for_collective", "CollectiveReport", "TopomapIntracomm", "race"]
