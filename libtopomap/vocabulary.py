"""The names a user can give: strategies, objectives, collectives, allocations, optimizers, routings.

Each table is defined here once and imported from here by the module that implements it
(:mod:`libtopomap.mappers`, :mod:`libtopomap.collectives`, :mod:`libtopomap.simulate`,
:mod:`libtopomap.adapters`) and by the command line for its ``choices=``.  This module imports nothing
but :mod:`importlib.util`, so building a command's parser (``libtopomap map --help``) loads neither
numba, scipy, networkx, mpi4py nor matplotlib.
"""

import importlib.util

__all__ = ["HAVE_SCOTCH", "STRATEGIES", "TWISTED_STRATEGIES", "REFINEMENTS", "OBJECTIVES", "COLLECTIVES",
           "BCAST_ALGORITHMS", "COLLECTIVE_OBJECTIVES",
           "OPTIMIZERS", "ALLOCATIONS", "ROUTINGS", "FABRIC_FORMATS", "ROUTING_MODELS", "DEFAULT_ROUTING",
           "MULTIPATH_ROUTINGS", "SOURCES"]

try:  # pragma: no cover - depends on the environment
    HAVE_SCOTCH = importlib.util.find_spec("scotchpy") is not None
except ValueError:  # pragma: no cover - scotchpy already in sys.modules without a __spec__
    HAVE_SCOTCH = False

#: Mapping strategies of :func:`libtopomap.map_processes` (``"scotch"`` where scotchpy is installed).
STRATEGIES = ("identity", "random", "greedy", "rcm", "recursive", "multisection") + (("scotch",) if HAVE_SCOTCH else ())
#: Strategies for a 2D process torus on RT(a)/RTT(a) only (seed 004): not in :data:`STRATEGIES`, which
#: every topology accepts.  ``identity`` with a ``concentration`` is the paper's ``id`` after it.
TWISTED_STRATEGIES = ("diagonal-shift",)
#: Refinements of a mapping: two-opt swaps and threshold accepting.
REFINEMENTS = ("two-opt", "ta", "hb-swap")
#: What a mapping minimises (:mod:`libtopomap.mappers.objectives`).
OBJECTIVES = ("congestion", "dilation", "hopbytes")
#: Collectives with a built-in schedule (:mod:`libtopomap.collectives.schedules`).
COLLECTIVES = ("bcast", "allreduce", "alltoall", "allgather")
#: Broadcast schedules on a dragonfly (seed 002, :mod:`libtopomap.collectives.dorier`).
BCAST_ALGORITHMS = ("tree", "llf", "glf", "forest")
#: What a collective rank placement minimises (:mod:`libtopomap.collectives.objectives`).
COLLECTIVE_OBJECTIVES = ("hops", "contention", "step")
#: Rank-placement optimizers (:mod:`libtopomap.collectives.rank_placement`).
OPTIMIZERS = ("none", "two-opt", "greedy", "anneal")
#: Allocation methods: which hosts a job gets, in allocation order (:mod:`libtopomap.collectives.allocation`).
ALLOCATIONS = ("ascending", "random", "tree", "ring", "circulant")
#: SimGrid routing choices (:mod:`libtopomap.simulate`).
ROUTINGS = ("auto", "dijkstra", "floyd", "explicit", "minimal")
#: Routing models of the metrics (:mod:`libtopomap.routing`); ``"native"`` also selects the topology's own;
#: ``lft`` is named with its forwarding tables, ``"lft:PATH"``.
ROUTING_MODELS = ("ecmp", "table", "oblivious", "dimension-order", "rt", "rtt", "minimal", "valiant", "hybrid",
                  "dmodk", "lft")
#: The routing of every metric unless told otherwise.
DEFAULT_ROUTING = "ecmp"
#: Routing models that split a pair's messages over several paths (SimGrid platforms and
#: :func:`libtopomap.fluid.phase_time` need one path per pair).
MULTIPATH_ROUTINGS = ("ecmp", "oblivious", "valiant")
#: How a topology was found: values of ``attrs["source"]`` (:mod:`libtopomap.autotopo`).
SOURCES = ("file", "ibnetdiscover", "slurm", "xname", "single-switch")
#: Fabric description formats read by :mod:`libtopomap.adapters`.
FABRIC_FORMATS = ("ibnetdiscover", "ibnetdiscover-ports", "slurm", "ibdiagnet-lst")
