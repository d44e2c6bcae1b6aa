"""libtopomap: topology-aware MPI rank reordering.

Map an MPI job's communication graph onto the machine's physical network, and get back an mpi4py
communicator whose ranks sit where their messages travel fewer, less loaded links.

The core (topologies, formats, generators, metrics, mappers, collective placement) never imports
mpi4py; the MPI layer (:mod:`libtopomap.mpi`: ``Create_dist_graph_adjacent``, ``Create_dist_graph``,
``topomap``, ``reorder_for_collective``) is loaded on first use of one of its names.
"""

from .collectives import CollectivePlacement, collective_placement
from .commgraph import CommGraph, as_commgraph
from .errors import CommError, CommGraphError, FormatError, LibTopoMapError, MappingError, TopologyError
from .formats import read as load, read_buffer, register_format, write as save, write_buffer
from .generators import (circulant, concentrate, dragonfly, fattree, hypercube, ldr, mesh, percs,
                         random_shortcut_ring, rt, rtt, torus)
from .mappers import (OBJECTIVES, STRATEGIES, map_greedy, map_identity, map_multicore, map_processes,
                      map_random, map_rcm, map_recursive, map_scotch, objective_value,
                      refine_threshold_accepting, refine_two_opt)
from .mapping import Mapping, check_mapping
from .metrics import (average_dilation, congestion, congestion_estimate, dilation, evaluate, hop_bytes,
                      link_traffic, max_congestion, max_dilation, properties)
from .patterns import load_graph, random_graph, scrambled_torus, stencil
from .topology import Topology

__version__ = "0.1.0"

_MPI_NAMES = ("Create_dist_graph_adjacent", "Create_dist_graph", "topomap", "reorder_for_collective")


def __getattr__(name):
    # The MPI layer imports mpi4py; load it only when one of its names is used.
    if name in _MPI_NAMES:
        from . import mpi

        return getattr(mpi, name)
    raise AttributeError(f"module 'libtopomap' has no attribute {name!r}")


__all__ = [
    # model and I/O
    "Topology", "CommGraph", "as_commgraph", "Mapping", "check_mapping",
    "load", "save", "read_buffer", "write_buffer", "register_format",
    # generators
    "torus", "mesh", "hypercube", "concentrate", "fattree", "dragonfly", "percs", "ldr", "rt", "rtt",
    "random_shortcut_ring", "circulant",
    # communication graphs
    "load_graph", "stencil", "scrambled_torus", "random_graph",
    # metrics
    "dilation", "average_dilation", "max_dilation", "hop_bytes", "link_traffic", "congestion",
    "max_congestion", "congestion_estimate", "evaluate", "properties",
    # mapping
    "map_processes", "objective_value", "STRATEGIES", "OBJECTIVES", "map_identity", "map_random",
    "map_greedy", "map_rcm", "map_recursive", "map_multicore", "map_scotch", "refine_two_opt",
    "refine_threshold_accepting",
    # collective placement
    "collective_placement", "CollectivePlacement",
    # MPI layer (lazy)
    *_MPI_NAMES,
    # errors
    "LibTopoMapError", "TopologyError", "FormatError", "CommGraphError", "MappingError", "CommError",
]
