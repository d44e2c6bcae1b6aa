"""Mapping strategies: place the processes of a communication graph onto a topology's slots.

Every strategy is a pure function ``map_<name>(topology, graph, *, slots=None, seed=None, ...)``
returning a :class:`~libtopomap.Mapping` that is a bijection from processes into usable slots.
:func:`map_processes` composes them as in Hoefler & Snir (ICS'11), section 4.2 / Figure 4: optional
multicore partitioning, one construction, optional refinement.
"""

from __future__ import annotations

import time

import numpy as np

from .._deprecation import renamed_keyword
from ..errors import MappingError
from ..mapping import Mapping
from ..loading import as_topology
from ..validation import check_choice, check_moves, check_seconds
from ..vocabulary import REFINEMENTS, STRATEGIES, TWISTED_STRATEGIES
from ._common import prepare
from .baselines import map_identity, map_random
from .dual_bisection import map_dual_bisection
from .greedy import map_greedy
from .hopbytes_swap import hopbytes_swap, refine_hopbytes_swap
from .multicore import map_multicore, multicore_slots
from .multisection import map_multisection
from .objectives import OBJECTIVES, objective_value
from .rcm import map_rcm
from .recursive import map_recursive
from .scotch import HAVE_SCOTCH, map_scotch
from .threshold_accepting import refine_threshold_accepting, threshold_accepting
from .twisted_mappings import map_diagonal_shift, map_twisted_identity
from .two_opt import refine_two_opt, two_opt
from .two_level import map_two_level, split_node_levels

__all__ = [
    "STRATEGIES", "OBJECTIVES", "REFINEMENTS", "map_processes", "objective_value",
    "map_identity", "map_random", "map_greedy", "map_rcm", "map_recursive", "map_multisection", "map_dual_bisection",
    "map_multicore",
    "map_scotch", "map_diagonal_shift", "map_twisted_identity", "TWISTED_STRATEGIES",
    "refine_two_opt", "refine_threshold_accepting", "refine_hopbytes_swap", "compile_kernels",
    "refinement_chain", "apply_refinement", "check_strategy",
]

_SEARCH = {"two-opt": two_opt, "ta": threshold_accepting, "hb-swap": hopbytes_swap}

_CONSTRUCT = {
    "identity": map_identity,
    "random": map_random,
    "greedy": map_greedy,
    "rcm": map_rcm,
    "recursive": map_recursive,
    "multisection": map_multisection,
    "dual-bisection": map_dual_bisection,
    "scotch": map_scotch,
    "diagonal-shift": map_diagonal_shift,
}


def spare_weakest_hosts(topology, slots, n_processes):
    """Slots with the spare ones taken from the hosts with the least link capacity.

    When the job has fewer processes than usable slots, the idle slots should be those behind the
    weakest host links: one process on a host with a thinner link sets the maximum congestion no
    matter how well the rest is placed (seen on real fabrics where a single host has a 20 Gb/s link
    and the others 40 Gb/s).  Hosts whose links all have the largest injection capacity keep their
    slots, so on homogeneous machines nothing changes.

    Parameters
    ----------
    topology : Topology
    slots : numpy.ndarray of int
        Usable slots per vertex (already validated).
    n_processes : int

    Returns
    -------
    numpy.ndarray of int
        ``slots`` with up to ``sum(slots) - n_processes`` slots removed, weakest hosts first.
    """
    spare = int(slots.sum()) - int(n_processes)
    if spare <= 0:
        return slots
    injection = np.bincount(topology.arc_source, weights=topology.arc_capacity, minlength=topology.n_vertices)
    usable = np.flatnonzero(slots > 0)
    best = injection[usable].max()
    out = slots.copy()
    for v in usable[np.argsort(injection[usable], kind="stable")]:
        if spare == 0 or injection[v] >= best:
            break
        take = min(int(out[v]), spare)
        out[v] -= take
        spare -= take
    return out


@renamed_keyword("current", "placement")
def map_processes(topology, graph, *, strategy="greedy", slots=None, placement=None, objective="congestion",
                  refine=None, seed=None, start=None, time_budget=None, iterations=None, multicore=None,
                  concentration=None, routing=None):
    """Map the processes of ``graph`` onto ``topology`` with one strategy (and optional refinement).

    Parameters
    ----------
    topology : Topology, path or "auto"
        The network (:func:`libtopomap.loading.as_topology`).
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    strategy : str
        A strategy of :data:`~libtopomap.vocabulary.REGISTRY`: ``"identity"``, ``"random"``, ``"greedy"``,
        ``"rcm"``, ``"recursive"``, ``"multisection"``, ``"dual-bisection"``, ``"scotch"`` or
        ``"diagonal-shift"`` (Camarero et al.), the last only on RT(a)/RTT(a) targets, for a 2D process torus
        (:mod:`libtopomap.mappers.twisted_mappings`).
    slots : array_like of int, optional
        Slots available to this job per vertex (length ``n_vertices``); default ``topology.slots``.
    placement : array_like of int, optional
        Where the processes run now (process -> vertex); what ``identity`` returns.  Default: fill
        the usable slots in vertex order.  Its old name ``current=`` still works, with a
        :class:`DeprecationWarning`.
    objective : {"congestion", "dilation", "hopbytes"}
        What the refinement minimises (and what a refinement must beat to replace the construction).
    refine : {None, "two-opt", "ta", "hb-swap"}
        Refinement after the construction.  With ``objective="hopbytes"``, ``two-opt`` and ``ta``
        start from the local optimum of ``hb-swap`` (the budget applies to each).
    seed : int, optional
        For ``random``, greedy's default start vertex, the partitioners and the refinements.
    start : int or str, optional
        Greedy's start vertex.
    time_budget : float, optional
        Seconds of wall time for the refinement (its setup and final evaluation included).
    iterations : int, optional
        Moves for the refinement.
    routing : str or Routing, optional
        Routing model (:mod:`libtopomap.routing`: ``"minimal"`` on a dragonfly, ``"native"``...) of
        the objective of the refinements (``two-opt``, ``ta``, ``hb-swap``: the model's loads, and
        its hops under dragonfly ``minimal``/``valiant``); default ``ecmp``.  The constructions
        work on hop distances and ignore it.
    concentration : str, optional
        Camarero et al.'s concentration functions for a 2D process torus on RT(a)/RTT(a), outermost
        first: ``"v"``, ``"h"``, ``"t"``, ``"t+h"``, ...
        (:func:`~libtopomap.mappers.twisted_mappings.parse_concentration`);
        only with ``strategy="identity"`` (the paper's ``id`` after the concentration) or
        ``"diagonal-shift"``.
    multicore : bool, optional
        The section 3.4 step (partition G into groups of ``p`` processes, map the quotient graph,
        one group per host).  ``None`` applies it when every usable host has the same ``p >= 2``
        slots and ``p`` divides the number of processes; ``False`` never; ``True`` requires it.
        Not used by ``identity``, ``random``, ``multisection`` (hosts are a level of its own
        hierarchy), ``dual-bisection`` (which splits down to each host's slots) and ``scotch``.  On a
        topology with node levels (``attrs["node_levels"]``), every strategy but ``identity`` and
        ``random`` maps onto the network first, each host offering its cores' slots, then each host's
        processes onto its node's tree
        (:func:`~libtopomap.mappers.two_level.map_two_level`); ``False`` maps the whole topology at once.

    Returns
    -------
    Mapping
        ``mapping.strategy`` names the construction (and refinement, e.g. ``"greedy+ta"``).

    Raises
    ------
    ChoiceError
        Unknown strategy, objective or refinement (also a :class:`MappingError`).
    ArgumentError, ArgumentTypeError
        A bad ``seed``, ``time_budget`` or ``iterations`` (:mod:`libtopomap.validation`).
    MappingError
        More processes than slots, an empty graph, or ``multicore=True`` where hosts differ in slots.
    CommGraphError
        Negative, NaN or infinite weights.

    Examples
    --------
    >>> from libtopomap import torus
    >>> from libtopomap.patterns import scrambled_torus
    >>> m = map_processes(torus("4x4"), scrambled_torus("4x4", seed=1), strategy="greedy")
    >>> len(m)
    16

    References
    ----------
    T. Hoefler and M. Snir, ICS'11, sections 3 and 4.2 (Figure 4).
    """
    check_strategy(strategy, concentration=concentration)
    check_choice("objective", objective)
    if refine is not None:
        check_choice("refinement", refine)
    topology = as_topology(topology)
    time_budget = check_seconds(time_budget, name="time_budget")
    iterations = check_moves(iterations)
    topology, g, slots, seed = prepare(topology, graph, slots, seed)
    return _map_processes(topology, g, strategy=strategy, slots=slots, placement=placement, objective=objective,
                          refine=refine, seed=seed, start=start, time_budget=time_budget, iterations=iterations,
                          multicore=multicore, concentration=concentration, routing=routing)


def check_strategy(strategy, *, concentration=None):
    """Raise unless ``strategy`` can run: a registered strategy (:class:`~libtopomap.ChoiceError`), installed
    (``scotch``), and ``concentration=`` only with ``identity`` or ``diagonal-shift``; the rule of
    :func:`map_processes` and of each candidate of a race (:meth:`libtopomap.portfolio.MappingProblem.construct`).
    """
    check_choice("strategy", strategy)
    if strategy == "scotch" and not HAVE_SCOTCH:
        raise MappingError("strategy 'scotch' needs scotchpy (pip install 'libtopomap[scotch]')")
    if concentration is not None and strategy not in ("identity",) + TWISTED_STRATEGIES:
        raise MappingError(f"concentration= applies to the strategies identity and diagonal-shift, not {strategy!r}")
    return strategy


def _map_processes(topology, g, *, strategy="greedy", slots, placement=None, objective="congestion", refine=None,
                   seed=None, start=None, time_budget=None, iterations=None, multicore=None, concentration=None,
                   routing=None):
    """:func:`map_processes` on checked inputs (its door's results: a Topology, a CommGraph with processes,
    ``int64`` slots that hold them, an ``int`` or None seed, names that :func:`check_strategy` and the
    registry accept); ``map_processes.trusted``, for the portfolio's race and the two-level step."""
    twisted = strategy in TWISTED_STRATEGIES or concentration is not None
    if not twisted and strategy != "identity" and objective == "congestion":
        slots = spare_weakest_hosts(topology, slots, g.n)
    # nodes with their inside (node levels): the network first, then each host's tree, same strategy
    split = None if twisted or strategy in ("identity", "random") or multicore is False else split_node_levels(topology)
    if twisted:
        twist = map_twisted_identity if strategy == "identity" else _CONSTRUCT[strategy]
        m = twist.trusted(topology, g, concentration=concentration, slots=slots, seed=seed)
    elif strategy == "identity":
        m = map_identity.trusted(topology, g, slots=slots, seed=seed, placement=placement)
    elif split is not None:
        def construct(t, sub, s):
            return _map_processes(t, sub, strategy=strategy, slots=s, seed=seed, objective=objective).vertices

        m = Mapping(topology, map_two_level(topology, g, construct, slots=slots, split=split), strategy=strategy,
                    slots=slots)
    elif strategy == "multisection":
        m = map_multisection.trusted(topology, g, slots=slots, seed=seed, objective=objective)
    elif strategy in ("random", "scotch", "dual-bisection"):
        m = _CONSTRUCT[strategy].trusted(topology, g, slots=slots, seed=seed)
    else:
        p = multicore_slots(slots, g.n)
        if multicore is True and p is None:
            raise MappingError("multicore=True needs every usable host to have the same p >= 2 slots, "
                               "with p dividing the number of processes")
        kw = {"start": start} if strategy == "greedy" else {}
        if p is not None and multicore is not False:
            m = map_multicore.trusted(topology, g, slots=slots, seed=seed, inner=strategy, **kw)
        else:
            m = _CONSTRUCT[strategy].trusted(topology, g, slots=slots, seed=seed, **kw)
    if refine is not None:
        # the refinement evaluates its start and its result itself (exactly, within its time budget)
        # and never returns a worse mapping, so no second evaluation is needed here
        r = apply_refinement(topology, g, m.vertices, slots, refine=refine, objective=objective,
                             rng=np.random.default_rng(seed), routing=routing, time_budget=time_budget,
                             iterations=iterations)
        m = Mapping(topology, r, strategy=f"{m.strategy}+{refine}", slots=slots)
    return m


map_processes.trusted = _map_processes


def refinement_chain(refine, objective):
    """The searches that the refinement ``refine`` runs, in order: under the hop-bytes objective,
    ``two-opt`` and ``ta`` start from the local optimum of ``hb-swap``."""
    return (("hb-swap",) if objective == "hopbytes" and refine != "hb-swap" else ()) + (refine,)


def apply_refinement(topology, graph, vertices, slots, *, refine, objective, rng, routing=None, time_budget=None,
                     iterations=None, deadline=None):
    """Run the refinement chain :func:`refinement_chain` of ``refine`` on a placement; the one chain of
    :func:`map_processes`, :meth:`libtopomap.portfolio.MappingProblem.refine` and so of the MPI race.

    The inputs are trusted (checked by the public caller): ``graph`` a :class:`~libtopomap.CommGraph`,
    ``vertices`` a placement of its processes in ``slots``, ``refine`` and ``objective`` registered names.

    Parameters
    ----------
    topology : Topology
    graph : CommGraph
    vertices : numpy.ndarray of int
        The placement to refine (process -> vertex).
    slots : numpy.ndarray of int
        Usable slots per vertex.
    refine, objective : str
    rng : numpy.random.Generator
        Shared by the searches of the chain, in order.
    routing : str or Routing, optional
        Routing model of the searches' objective.
    time_budget : float, optional
        Seconds of each search (its setup and final evaluation included).
    iterations : int, optional
        Moves of each search.
    deadline : float, optional
        A :func:`time.perf_counter` value that ends the chain: no search starts after it, threshold
        accepting stops at it and hb-swap's budget is cut to it (two-opt is a plain descent bounded by its
        moves and its stall limit).

    Returns
    -------
    numpy.ndarray of int
        The refined placement, never worse than ``vertices`` on ``objective``.
    """
    r = vertices
    for name in refinement_chain(refine, objective):
        now = time.perf_counter()
        budget, kw = time_budget, {"routing": routing}
        if deadline is not None:
            if now >= deadline:
                break
            if name == "ta":
                kw["deadline"] = deadline
            elif name == "hb-swap":  # its moves do not depend on the clock until the budget binds
                budget = deadline - now if budget is None else min(budget, deadline - now)
        r, _, _, _ = _SEARCH[name](topology, graph, r, slots, objective, rng=rng, time_budget=budget,
                                   iterations=iterations, t_start=now, **kw)
    return r


def compile_kernels(strategies=None, *, objective="congestion", refine=None):
    """Run ``strategies`` once on a tiny instance so their numba kernels are compiled and cached.

    The MPI layer calls this on one rank before the portfolio: numba writes its on-disk cache, and
    the other ranks then load the kernels instead of all compiling the same code at once (on a fresh
    install, 8 ranks on 2 cores spent 30 s compiling; a warm cache loads in well under a second).

    Parameters
    ----------
    strategies : sequence of str, optional
        Default: all of :data:`STRATEGIES`.
    objective, refine
        As for :func:`map_processes`.
    """
    from ..generators import torus
    from ..metrics import evaluate
    from ..patterns import stencil

    topo = torus((3, 3))
    g = stencil((3, 3))
    for name in STRATEGIES if strategies is None else strategies:
        m = map_processes(topo, g, strategy=name, objective=objective, refine=refine, seed=0, iterations=4)
        objective_value(topo, g, m, objective)
    evaluate(topo, g, m)
