"""The registry of every name a user can give: strategies, refinements, objectives, routings, collectives,
collective orders, allocations...

:data:`REGISTRY` holds each kind once, name -> what it is.  The command line's ``choices=`` and help, the
Python API's checks (:func:`check_choice`, one error class), the error messages and the documentation's
tables (``docs/choices.rst``) are generated from it; ``tests/test_registry.py`` checks that every Python
choice is a command-line choice.  This module imports nothing heavy (building ``libtopomap map --help``
loads neither numba, scipy, networkx, mpi4py nor matplotlib).
"""

import importlib.util

from .errors import ChoiceError

__all__ = ["REGISTRY", "check_choice", "describe", "HAVE_SCOTCH", "STRATEGIES", "TWISTED_STRATEGIES",
           "REFINEMENTS", "OBJECTIVES", "COLLECTIVES", "BCAST_ALGORITHMS", "COLLECTIVE_OBJECTIVES", "OPTIMIZERS",
           "ALLOCATIONS", "ROUTINGS", "FABRIC_FORMATS", "ROUTING_MODELS", "DEFAULT_ROUTING", "MULTIPATH_ROUTINGS",
           "SOURCES", "LAUNCHER_FORMATS", "SMPI_TRACES"]

try:  # pragma: no cover - depends on the environment
    HAVE_SCOTCH = importlib.util.find_spec("scotchpy") is not None
except ValueError:  # pragma: no cover - scotchpy already in sys.modules without a __spec__
    HAVE_SCOTCH = False

#: kind -> {name: what it is}.  Order is the order of the command line's choices and of the docs.
REGISTRY = {
    "strategy": {  # :func:`libtopomap.map_processes` and the portfolio (``all`` races every general one)
        "identity": "the current placement (the launcher's order), optionally refined",
        "random": "a random bijection into the usable slots",
        "greedy": "greedy growth from a start vertex (Hoefler & Snir 2011, Algorithm 1)",
        "rcm": "Reverse Cuthill-McKee orders of graph and topology zipped (Hoefler & Snir 2011, section 3.3)",
        "recursive": "recursive bisection of graph and topology with METIS (Hoefler & Snir 2011, Algorithm 2)",
        "multisection": "hierarchical multisection down the machine's tree (SharedMap: Schulz & Woydt 2025)",
        "dual-bisection": "dual recursive bipartitioning of graph and machine, as Scotch does (Pellegrini 1994)",
        "scotch": "Scotch's dual recursive bipartitioning (scotchpy64; the 'scotch' extra)",
        "diagonal-shift": "2-D process torus onto a twisted torus RT(a)/RTT(a) only (Camarero et al.)",
    },
    "refinement": {
        "two-opt": "swaps kept only when they lower the objective (Cui 2024, section 3.3.2)",
        "ta": "threshold accepting (Hoefler & Snir 2011, section 3.5; Dueck & Scheuer 1990)",
        "hb-swap": "swaps over the communication graph's neighbourhood on hop-bytes (VieM: Schulz & Träff 2017)",
    },
    "objective": {  # what a mapping minimises (:mod:`libtopomap.mappers.objectives`)
        "congestion": "the most loaded link's traffic over its capacity, under the routing model",
        "dilation": "the average number of hops per message",
        "hopbytes": "the sum over messages of bytes x hops",
    },
    "routing": {  # routing models of the metrics (:mod:`libtopomap.routing`)
        "ecmp": "equal-cost multipath: traffic split evenly over all shortest paths",
        "table": "one path per pair: the lowest-index next hop one hop closer at every vertex",
        "oblivious": "an even split among the next hops one hop closer at every vertex",
        "dimension-order": "dimension-order routing on tori and meshes",
        "rt": "minimal routing on the rectangular twisted torus RT(a)",
        "rtt": "minimal routing on the rectangular twisted torus RTT(a)",
        "minimal": "dragonfly minimal routing (local, global, local)",
        "valiant": "dragonfly Valiant routing through a random intermediate group",
        "hybrid": "the hybrid networks' routing (Mehta 2005, section 5.3)",
        "dmodk": "d-mod-k fat-tree routing: the up-port from the destination's index (OpenSM ftree, SimGrid)",
        "lft": "the fabric's own forwarding tables, given as lft:PATH (ibroute/dump_lfts, ibdiagnet)",
    },
    "collective": {  # built-in schedules (:mod:`libtopomap.collectives.schedules`)
        "bcast": "binomial-tree broadcast",
        "allreduce": "recursive-doubling allreduce",
        "alltoall": "Bruck's alltoall",
        "allgather": "ring allgather",
    },
    "collective-order": {  # rank placements of a collective (:mod:`libtopomap.collectives.rank_placement`)
        "none": "the allocation's ascending order (Cui 2024, section 3.3.1)",
        "two-opt": "two-opt rank placement (Cui 2024, section 3.3.2)",
        "greedy": "greedy construction from the most central node",
        "anneal": "greedy, then simulated annealing with guided swaps",
        "cco": "chain concatenation order: breadth-first from the root (Cui 2024, section 3.4.4)",
    },
    "collective-objective": {
        "hops": "total hops of the collective's messages",
        "contention": "messages of a step sharing a link direction, summed over steps",
        "step": "sum over steps of the step's most loaded link (bulk-synchronous model)",
    },
    "bcast-algorithm": {  # broadcasts on a dragonfly (Dorier et al., :mod:`libtopomap.collectives.dorier`)
        "tree": "MPICH's binomial tree, blind to the topology",
        "llf": "local links first (section III-B)",
        "glf": "global links first (section III-C)",
        "forest": "local links first, with one binomial tree per holder (section III-D)",
    },
    "allocation": {  # which hosts a job gets (:mod:`libtopomap.collectives.allocation`)
        "ascending": "the first hosts by vertex index",
        "random": "hosts drawn at random, in draw order (Cui 2024, section 3.2.1)",
        "tree": "breadth-first from a root host (Cui 2024, section 3.2.2)",
        "ring": "consecutive hosts along the ring (Cui 2024, section 3.2.3)",
        "circulant": "stride n/P (Cui 2024, Algorithm 4.1)",
    },
    "simgrid-routing": {  # how :mod:`libtopomap.simulate` routes in SimGrid
        "auto": "minimal on a dragonfly, else shortest paths",
        "dijkstra": "SimGrid's Dijkstra zone",
        "floyd": "SimGrid's Floyd zone",
        "explicit": "explicit routes along the table routing",
        "minimal": "explicit routes along the dragonfly's minimal routes",
    },
    "launcher-format": {  # files of ``map --emit`` (:mod:`libtopomap.rankfiles`)
        "mpich-rank-order": "MPICH_RANK_ORDER file (MPICH_RANK_REORDER_METHOD=3)",
        "openmpi-rankfile": "Open MPI 5 rankfile (mpirun --map-by rankfile:file=FILE)",
        "slurm-hostfile": ("one host per rank: SLURM_HOSTFILE for srun --distribution=arbitrary, smpirun -hostfile "
                           "FILE, MPICH Hydra's mpiexec -f FILE (one node per run of equal lines)"),
        "hydra-config": ("MPICH Hydra's -hosts and -rankmap in a configuration file (mpiexec -configfile FILE): "
                         "one node per host"),
    },
    "smpi-trace": {  # how ``smpi run`` takes the program's graph (:func:`libtopomap.smpi.run`)
        "paje": ("SMPI's Paje trace: every message SMPI sent, collectives on any communicator and with any "
                 "algorithm (bigger, slower to write)"),
        "ti": ("SMPI's time-independent trace: point-to-point messages, and every collective as the messages "
               "of its modelled algorithm over all ranks"),
    },
    "fabric-format": {  # read by :mod:`libtopomap.adapters`
        "ibnetdiscover": "ibnetdiscover's topology dump",
        "ibnetdiscover-ports": "ibnetdiscover -p (one port per line)",
        "slurm": "Slurm's topology.conf",
        "ibdiagnet-lst": "ibdiagnet's .lst link list",
    },
}

#: The kinds' names in error messages and the command line's options.
_WHAT = {"strategy": "strategy", "refinement": "refinement", "objective": "objective", "routing": "routing model",
         "collective": "collective", "collective-order": "optimizer", "collective-objective": "objective",
         "bcast-algorithm": "broadcast algorithm", "allocation": "allocation", "simgrid-routing": "routing",
         "launcher-format": "launcher format", "fabric-format": "format", "smpi-trace": "trace"}

#: Mapping strategies every topology accepts (``"scotch"`` where scotchpy is installed); ``all`` races them.
STRATEGIES = tuple(s for s in REGISTRY["strategy"] if s != "diagonal-shift" and (s != "scotch" or HAVE_SCOTCH))
#: Strategies for a 2D process torus on RT(a)/RTT(a) only (Camarero et al.): not in :data:`STRATEGIES`.
#: ``identity`` with a ``concentration`` is the paper's ``id`` after it.
TWISTED_STRATEGIES = ("diagonal-shift",)
REFINEMENTS = tuple(REGISTRY["refinement"])
OBJECTIVES = tuple(REGISTRY["objective"])
COLLECTIVES = tuple(REGISTRY["collective"])
BCAST_ALGORITHMS = tuple(REGISTRY["bcast-algorithm"])
COLLECTIVE_OBJECTIVES = tuple(REGISTRY["collective-objective"])
OPTIMIZERS = tuple(REGISTRY["collective-order"])
ALLOCATIONS = tuple(REGISTRY["allocation"])
ROUTINGS = tuple(REGISTRY["simgrid-routing"])
#: ``"native"`` also selects the topology's own; ``lft`` is named with its forwarding tables, ``"lft:PATH"``.
ROUTING_MODELS = tuple(REGISTRY["routing"])
#: The routing of every metric unless told otherwise.
DEFAULT_ROUTING = "ecmp"
#: Routing models that split a pair's messages over several paths (SimGrid platforms and
#: :func:`libtopomap.fluid.phase_time` need one path per pair).
MULTIPATH_ROUTINGS = ("ecmp", "oblivious", "valiant")
#: How a topology was found: values of ``attrs["source"]`` (:mod:`libtopomap.autotopo`).
SOURCES = ("file", "ibnetdiscover", "slurm", "xname", "single-switch")
FABRIC_FORMATS = tuple(REGISTRY["fabric-format"])
SMPI_TRACES = tuple(REGISTRY["smpi-trace"])
LAUNCHER_FORMATS = tuple(REGISTRY["launcher-format"])


def check_choice(kind, value, *, choices=None):
    """``value`` if it is a registered name of ``kind`` (or one of ``choices``), else :class:`ChoiceError`.

    Parameters
    ----------
    kind : str
        A key of :data:`REGISTRY`.
    value : object
    choices : sequence of str, optional
        The names accepted here, when a caller takes fewer or more than the registry's (e.g. ``all``).

    Raises
    ------
    ChoiceError
        ``unknown <kind> <value>; expected one of <choices>``.

    Examples
    --------
    >>> check_choice("objective", "hopbytes")
    'hopbytes'
    >>> check_choice("objective", "speed")
    Traceback (most recent call last):
    ...
    libtopomap.errors.ChoiceError: unknown objective 'speed'; expected one of congestion, dilation, hopbytes
    """
    names = tuple(REGISTRY[kind]) if choices is None else tuple(choices)
    if not isinstance(value, str) or value not in names:
        raise ChoiceError(f"unknown {_WHAT[kind]} {value!r}; expected one of {', '.join(names)}")
    return value


def describe(kind, names=None):
    """``"a: what a; b: what b"``: the command line's help of a choice (``names`` default: all of ``kind``)."""
    table = REGISTRY[kind]
    return "; ".join(f"{n}: {table[n]}" for n in (table if names is None else names))
