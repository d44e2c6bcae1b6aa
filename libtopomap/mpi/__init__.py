"""The MPI layer of libtopomap (imports mpi4py).

Drop-in replacements for mpi4py's ``Create_dist_graph_adjacent`` / ``Create_dist_graph`` that really
reorder ranks onto the physical network, the low-level :func:`topomap` (like LibTopoMap's
``TPM_Topomap``), locating processes on the topology, and the collective helpers of the parallel
mapping portfolio.
"""

from .race import collective_call, select_best

__all__ = ["collective_call", "select_best"]
