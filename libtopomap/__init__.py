"""libtopomap: topology-aware MPI rank reordering.

Map an MPI job's communication graph onto the machine's physical network, and get back an mpi4py
communicator whose ranks sit where their messages travel fewer, less loaded links.

``import libtopomap`` is cheap: every public name is listed in :data:`_LAZY` with the submodule that
defines it, and that submodule is imported on first use of the name (PEP 562).  The core
(topologies, formats, generators, metrics, mappers, collective placement) never imports mpi4py; the
MPI layer (:mod:`libtopomap.mpi`: ``Create_dist_graph_adjacent``, ``Create_dist_graph``, ``topomap``,
``reorder_for_collective``) and numba are loaded only when a name that needs them is used.
"""

import importlib
import importlib.util

from ._version import __version__ as __version__  # re-exported

# Public name -> "submodule" (same name there) or "submodule:name there".  To add a public name, add
# one line here; __all__ and dir() follow, and tests/test_package.py resolves every entry.
_LAZY = {
    # model and I/O
    "Topology": ".topology",
    "CommGraph": ".commgraph",
    "as_commgraph": ".commgraph",
    "Mapping": ".mapping",
    "check_mapping": ".mapping",
    "read_saved_mapping": ".mapping",
    "DistanceOracle": ".distances",
    "estimate_memory": ".portfolio",
    "load": ".loading",
    "save": ".formats:write",
    "read_buffer": ".formats",
    "write_buffer": ".formats",
    "register_format": ".formats",
    # generators
    "torus": ".generators",
    "mesh": ".generators",
    "hypercube": ".generators",
    "concentrate": ".generators",
    "fattree": ".generators",
    "dragonfly": ".generators",
    "percs": ".generators",
    "ldr": ".generators",
    "hybrid": ".generators",
    "rt": ".generators",
    "rtt": ".generators",
    "random_shortcut_ring": ".generators",
    "circulant": ".generators",
    # communication graphs
    "load_graph": ".patterns",
    "stencil": ".patterns",
    "scrambled_torus": ".patterns",
    "random_graph": ".patterns",
    "Compute_dims": ".cartesian",
    "cart_graph": ".cartesian",
    # metrics
    "dilation": ".metrics",
    "average_dilation": ".metrics",
    "max_dilation": ".metrics",
    "hop_bytes": ".metrics",
    "link_traffic": ".metrics",
    "congestion": ".metrics",
    "max_congestion": ".metrics",
    "congestion_estimate": ".metrics",
    "evaluate": ".metrics",
    "properties": ".metrics",
    # routing models
    "Routing": ".routing",
    "ROUTING_MODELS": ".routing",
    "route_traffic": ".routing",
    "route_hops": ".routing",
    "rt_routing_record": ".routing",
    "rtt_routing_record": ".routing",
    # mapping
    "map_processes": ".mappers",
    "objective_value": ".mappers",
    "STRATEGIES": ".mappers",
    "OBJECTIVES": ".mappers",
    "map_identity": ".mappers",
    "map_random": ".mappers",
    "map_greedy": ".mappers",
    "map_rcm": ".mappers",
    "map_recursive": ".mappers",
    "map_multisection": ".mappers",
    "map_dual_bisection": ".mappers",
    "map_multicore": ".mappers",
    "map_scotch": ".mappers",
    "refine_two_opt": ".mappers",
    "refine_threshold_accepting": ".mappers",
    "refine_hopbytes_swap": ".mappers",
    # collective placement
    "collective_placement": ".collectives",
    "CollectivePlacement": ".collectives",
    # MPI layer (imports mpi4py)
    "Create_dist_graph_adjacent": ".mpi",
    "Create_dist_graph": ".mpi",
    "topomap": ".mpi",
    "reorder_for_collective": ".mpi",
    "Create_cart": ".mpi",
    "apply_mapping": ".mpi",
    "bcast": ".mpi",
    "trace": ".mpi",
    "reorder": ".mpi",
    "report": ".mpi",
    # errors
    "LibTopoMapError": ".errors",
    "TopologyError": ".errors",
    "FormatError": ".errors",
    "CommGraphError": ".errors",
    "MappingError": ".errors",
    "CommError": ".errors",
    "ArgumentError": ".errors",
    "ArgumentTypeError": ".errors",
    "SimulationError": ".errors",
    "LibTopoMapWarning": ".errors",
    "SimGridUnavailable": ".errors",
}

_MPI_NAMES = tuple(k for k, v in _LAZY.items() if v == ".mpi")

__all__ = list(_LAZY)


def __getattr__(name):
    target = _LAZY.get(name)
    if target is not None:
        module, _, attr = target.partition(":")
        value = getattr(importlib.import_module(module, __name__), attr or name)
        globals()[name] = value  # later look-ups skip __getattr__
        return value
    # a submodule used as an attribute (libtopomap.metrics) without importing it first
    if name.isidentifier() and not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
