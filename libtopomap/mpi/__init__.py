"""The MPI layer of libtopomap (imports mpi4py).

Drop-in replacements for mpi4py's ``Create_dist_graph_adjacent`` / ``Create_dist_graph`` that really
reorder ranks onto the physical network, the low-level :func:`topomap` (like LibTopoMap's
``TPM_Topomap``), locating processes on the topology, :func:`reorder_for_collective`, and the
communication of the parallel mapping portfolio (Hoefler & Snir, ICS'11, section 4 and Figure 4):
everything else of the race (candidates, budgets, scores, memory plan, selection order) lives in the
MPI-free :mod:`libtopomap.portfolio`.  This package is the only part of libtopomap that imports mpi4py,
and only when one of its names is used.
"""

import importlib

# Public name -> submodule that defines it.  Importing this package imports none of them (PEP 562), so
# the MPI-free parts (the fake-names and host checks of .location) load without initialising MPI; the
# first use of a name imports its submodule, and with it mpi4py.  No submodule is named like a public
# name: the import system binds each submodule it loads on this package, which would hide the name.
_LAZY = {
    "Create_dist_graph_adjacent": ".distgraph",
    "Create_dist_graph": ".distgraph",
    "topomap": ".distgraph",
    "TopomapReport": "._report",
    "TopomapDistgraphcomm": "._report",
    "report": "._report",
    "last_report": "._report",
    "DEFAULT_STRATEGIES": ".pipeline",
    "locate": ".location",
    "select_best": ".agreement",
    "collective_call": ".agreement",
    "reorder_for_collective": ".collective",
    "CollectiveReport": ".collective",
    "TopomapIntracomm": ".collective",
    "race": ".driver",
    "Create_cart": ".cart",
    "apply_mapping": ".apply",
    "bcast": ".broadcast",
    "trace": ".tracing",
    "reorder": ".tracing",
    "TracedComm": ".tracing",
}

__all__ = list(_LAZY)


def __getattr__(name):
    if name == "TopomapDistgraphcomm":
        import warnings

        warnings.warn("TopomapDistgraphcomm is deprecated: the dist-graph calls return mpi4py's plain "
                      "Distgraphcomm; read the report with libtopomap.report(comm)", DeprecationWarning, stacklevel=2)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

