"""The MPI layer of libtopomap (imports mpi4py).

Drop-in replacements for mpi4py's ``Create_dist_graph_adjacent`` / ``Create_dist_graph`` that really
reorder ranks onto the physical network, the low-level :func:`topomap` (like LibTopoMap's
``TPM_Topomap``), locating processes on the topology, and the collective helpers of the parallel
mapping portfolio (Hoefler & Snir, ICS'11, section 4 and Figure 4).
"""

from .distgraph import (DEFAULT_STRATEGIES, Create_dist_graph, Create_dist_graph_adjacent, TopomapDistgraphcomm,
                        TopomapReport, last_report, topomap)
from .collective import reorder_for_collective
from .locate import locate
from .race import collective_call, select_best

__all__ = ["Create_dist_graph_adjacent", "Create_dist_graph", "topomap", "TopomapReport", "TopomapDistgraphcomm",
           "last_report", "DEFAULT_STRATEGIES", "locate", "select_best", "collective_call",
           "reorder_for_collective"]
