"""libtopomap: topology-aware MPI rank reordering.

Map an MPI job's communication graph onto the machine's physical network, and get back an mpi4py
communicator whose ranks sit where their messages travel fewer, less loaded links.
"""

from .commgraph import CommGraph, as_commgraph
from .errors import CommError, CommGraphError, FormatError, LibTopoMapError, MappingError, TopologyError
from .formats import read as load, read_buffer, register_format, write as save, write_buffer
from .generators import (circulant, concentrate, dragonfly, fattree, hypercube, ldr, mesh, percs,
                         random_shortcut_ring, rt, rtt, torus)
from .mapping import Mapping, check_mapping
from .metrics import (average_dilation, congestion, congestion_estimate, dilation, evaluate, hop_bytes,
                      link_traffic, max_congestion, max_dilation, properties)
from .topology import Topology

__version__ = "0.1.0"

# The MPI layer imports mpi4py; it is loaded on first use so the core stays MPI-free.
_MPI_NAMES = {
    "Create_dist_graph_adjacent": "libtopomap.mpi",
    "Create_dist_graph": "libtopomap.mpi",
    "topomap": "libtopomap.mpi",
    "reorder_for_collective": "libtopomap.mpi",
}


def __getattr__(name):
    mod = _MPI_NAMES.get(name)
    if mod is None:
        raise AttributeError(f"module 'libtopomap' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod), name)

__all__ = [
    "Topology", "CommGraph", "as_commgraph", "Mapping", "check_mapping",
    "load", "save", "read_buffer", "write_buffer", "register_format",
    "torus", "mesh", "hypercube", "concentrate", "fattree", "dragonfly", "percs", "ldr", "rt", "rtt",
    "random_shortcut_ring", "circulant",
    "dilation", "average_dilation", "max_dilation", "hop_bytes", "link_traffic", "congestion",
    "max_congestion", "congestion_estimate", "evaluate", "properties",
    "LibTopoMapError", "TopologyError", "FormatError", "CommGraphError", "MappingError", "CommError",
]

# Mapping strategies and communication-graph sources (mapping issue).
from .mappers import (OBJECTIVES, STRATEGIES, map_greedy, map_identity, map_multicore, map_processes,  # noqa: E402
                      map_random, map_rcm, map_recursive, map_scotch, objective_value,
                      refine_threshold_accepting, refine_two_opt)
from .patterns import load_graph, random_graph, scrambled_torus, stencil  # noqa: E402

__all__ += ["map_processes", "objective_value", "STRATEGIES", "OBJECTIVES", "map_identity", "map_random",
            "map_greedy", "map_rcm", "map_recursive", "map_multicore", "map_scotch", "refine_two_opt",
            "refine_threshold_accepting", "load_graph", "stencil", "scrambled_torus", "random_graph"]

# Collective-aware rank placement (collective issue, Cui 2024).
from .collectives import CollectivePlacement, collective_placement  # noqa: E402

__all__ += ["collective_placement", "CollectivePlacement"]
