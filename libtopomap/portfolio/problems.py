"""The two kinds of race: how a candidate is run within its budget and scored.

:class:`MappingProblem` maps processes (the dist-graph calls and ``libtopomap map``);
:class:`CollectiveProblem` orders the ranks of a collective's schedule.  The drivers only call
``estimate``, ``evaluate`` (or ``construct``, ``refine`` and ``polish``) and read ``order``.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from .._deprecation import renamed_keyword
from ..errors import MappingError
from ..validation import check_choice, check_mapping, check_moves, check_seconds
from .budget import (CONSTRUCTION_SHARE, DEFAULT_TOTAL_BUDGET, collective_memory, default_iterations, estimate_memory,
                     estimate_seconds)
from .selection import STRATEGY_ORDER, Outcome, rounded_key

__all__ = ["MappingProblem", "CollectiveProblem", "CAPPED_PASSES", "PARTITIONING", "REFINE_GAIN"]

#: Passes of the congestion winner's capped hop-bytes clean-up at the most (:meth:`MappingProblem.polish`);
#: a pass that moves nothing ends it first (a local optimum), and so does its move budget.
CAPPED_PASSES = 50


#: The most a refinement may divide a construction's score by, per strategy and entry of the score (objective,
#: tie-break, hop-bytes): :meth:`MappingProblem.refine_reach`.  Measured: threshold accepting (with its capped
#: hop-bytes clean-up, the default move budget) on every construction of ``map --strategy all --refine ta`` on
#: bench_quality's --quick instances that refine (no construction at the lower bounds; 64 to 280 processes),
#: bench_speed's fat tree and dragonflies (512 and 4,096) and the 32-ary 3-tree at 32,768
#: (benchmarks/refine_gain.py, results/refine_gain_s11.md; scale_32768_peers_fix_race for 32,768).  The largest
#: quotients built / refined seen: greedy 2.44, 1.029, 1.029; recursive 2.31, 1.12, 1.12; multisection 1.60,
#: 1.00, 1.003; dual-bisection 2.51, 1.021, 1.035; scotch 1.89, 1.054, 1.054; rcm 12.97, 2.11, 2.11; random
#: 2.85, 2.26, 2.26; identity 3.03, 2.27, 2.27.  Structured constructions end near a local optimum, a scrambled
#: start or a bandwidth order far from one.  The table keeps a margin: about 1.3x the objective's quotient
#: and twice the tie-break's and hop-bytes' excess over 1.  A strategy not listed is never cut.
REFINE_GAIN = {"greedy": (3.0, 1.06, 1.06), "recursive": (3.0, 1.25, 1.25), "multisection": (2.0, 1.02, 1.02),
               "dual-bisection": (3.0, 1.07, 1.07), "scotch": (2.5, 1.11, 1.11), "rcm": (16.0, 2.5, 2.5),
               "random": (4.0, 2.8, 2.8), "identity": (4.0, 2.8, 2.8)}


#: Constructions that map by partitioning the communication graph along the machine's hierarchy
#: (recursive bisection and multisection with METIS, dual bisection, Scotch's dual recursive
#: bipartitioning).  On a dense graph the race runs only the cheapest of them
#: (:meth:`MappingProblem.dominated_by`).
PARTITIONING = ("recursive", "multisection", "dual-bisection", "scotch")


def _at_bound(value, bound):
    return bound > 0 and value <= bound * (1 + 1e-9)


class MappingProblem:
    """Run and score mapping candidates (the dist-graph calls and ``libtopomap map``).

    Parameters
    ----------
    topology : Topology
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts
    slots : array_like of int, optional
        Slots this job may use per vertex (default ``topology.slots``).
    placement : array_like of int, optional
        Current placement of the processes, candidate 0 of the race (default: the usable slots
        filled in vertex order).  Its old name ``current=`` still works, with a
        :class:`DeprecationWarning`.
    objective : {"congestion", "dilation", "hopbytes"}
    time_budget : float, optional
        Seconds for each candidate's refinement.
    iterations : int, optional
        Moves of each candidate's refinement.  Default (when no ``time_budget`` either):
        :func:`default_iterations` of the number of processes, so small races stay fast and the result
        does not depend on timing.
    total_budget : float, optional
        Seconds for the whole race on this process, counted from :meth:`start_clock` (the first
        construction when nobody called it): constructions whose :func:`estimate_seconds` exceeds
        what is left of their share (:data:`CONSTRUCTION_SHARE`) are skipped by
        :func:`run_portfolio`, and refinements stop at the budget (threshold accepting through a
        deadline that leaves its moves alone when it does not bind, so small races stay
        reproducible).  Default :data:`DEFAULT_TOTAL_BUDGET`; ``math.inf`` for none.
    routing : str or Routing, optional
        Routing model (:mod:`libtopomap.routing`; ``"native"``: the topology's own) of the scores
        and of the refinements (threshold accepting and two-opt move the loads of that model; the
        hop-bytes refinements count its hops).  Default ``ecmp``.  Constructions are routing-blind.
    concentration : str, optional
        Seed 004's concentration functions, for the strategies ``identity`` and ``diagonal-shift``
        (:func:`~libtopomap.mappers.map_processes`).

    Notes
    -----
    Score: ``(objective, tie-break, hop_bytes)`` from :func:`libtopomap.evaluate` under ``routing``; the tie-break is
    :func:`libtopomap.fluid.phase_time` (all traffic at once, links shared max-min with SimGrid CM02's latency
    weights) under a single-path routing model, the average congestion under a multipath one (``ecmp``,
    ``oblivious``, ``valiant``).  The current placement wins ties of those two
    (:data:`~libtopomap.portfolio.selection.CURRENT_WINS`); hop-bytes orders the other candidates.  The metrics add
    ``phase_time`` (None under a multipath model).  A candidate whose construction already reaches
    :func:`~libtopomap.metrics.lower_bounds` on both the objective and hop-bytes is
    not refined (nothing can beat it).
    """

    kind = "mapping"
    order = STRATEGY_ORDER
    key_length = 3

    @renamed_keyword("current", "placement")
    def __init__(self, topology, graph, *, slots=None, placement=None, objective="congestion", time_budget=None,
                 iterations=None, total_budget=None, routing=None, concentration=None):
        # the door of every mapping race: checked here once, trusted by construct, refine and polish
        from ..mappers._common import prepare
        from ..routing import get_routing

        # the strategies' door (graph, slots, more processes than slots): the candidates' constructions trust it
        topology, graph, self.slots, _ = prepare(topology, graph, slots, None)
        self.topology = topology
        self.graph = graph
        self.objective = check_choice("objective", objective)
        r = get_routing(routing, topology)
        r.check(topology)
        self.routing = r.name
        if placement is None:
            from ..mappers.baselines import map_identity

            placement = map_identity.trusted(topology, graph, slots=self.slots, seed=None).vertices
        self.placement = check_mapping(topology, placement, graph.n, slots=self.slots).astype(np.int64)
        self.time_budget = check_seconds(time_budget, name="time_budget")
        self.concentration = concentration
        iterations = check_moves(iterations)
        self.iterations = (default_iterations(graph.n) if iterations is None and time_budget is None
                           else iterations)
        self._bounds = None
        self.total_budget = check_seconds(DEFAULT_TOTAL_BUDGET if total_budget is None else total_budget,
                                          name="total_budget", finite=False)
        self._t0 = None
        self._slowdown = 1.0
        self._score_seconds = 0.0
        self._baseline_seconds = 0.0
        self._baseline_score = None

    @property
    def current(self):
        """Deprecated name of :attr:`placement` (the current placement)."""
        warnings.warn("MappingProblem.current is deprecated; use MappingProblem.placement", DeprecationWarning,
                      stacklevel=2)
        return self.placement

    # ------------------------------------------------------------------ budget
    def start_clock(self):
        """Start the race's clock (the overall budget counts from here)."""
        self._t0 = time.perf_counter()
        self._slowdown = 1.0
        self._baseline_seconds = 0.0

    def elapsed(self):
        """Seconds since :meth:`start_clock` (which this starts when nobody has)."""
        if self._t0 is None:
            self.start_clock()
        return time.perf_counter() - self._t0

    def remaining(self):
        """Seconds left of the overall budget (``inf`` without one)."""
        return self.total_budget - self.elapsed()

    def construction_time_left(self):
        """Seconds left of the constructions' share of the overall budget, never more than is left of
        the budget.  Scoring the current placement is not charged to the share: on a large scrambled
        torus it takes 7 s on an idle machine and over 90 s on a loaded one, and it used to leave no
        time for greedy, the cheapest construction that reaches the optimum there."""
        elapsed = self.elapsed()
        return min(CONSTRUCTION_SHARE * self.total_budget - (elapsed - self._baseline_seconds),
                   self.total_budget - elapsed)

    def estimate_seconds(self, candidate):
        """:func:`estimate_seconds` of a candidate's construction, scaled by how much slower than
        their estimates the earlier constructions of this race ran (a loaded machine)."""
        if candidate.baseline:
            return estimate_seconds("identity", self.topology, self.graph, slowdown=self._slowdown)
        return estimate_seconds(candidate.strategy, self.topology, self.graph, slowdown=self._slowdown)

    def dominated_by(self, candidate, strategies):
        """The construction of ``strategies`` (those of the race) that makes ``candidate``'s not worth
        running, or ``None``.

        On a dense graph (more than :data:`~libtopomap.mappers.local_search.WORK_DEGREE` stored
        edges per process) a graph partition has little to find that another one misses: a random
        graph has no good cut, and a graph of dense blocks should be cut along its blocks by any of
        them (expected, not measured: the evidence is the random graph below).  So only the
        cheapest partitioning construction (:data:`PARTITIONING`, by :func:`estimate_seconds`:
        ``recursive`` first) runs; the others are dominated.  On
        ``random:1000:437:1`` (mean degree 355) on dragonfly(17, 8, 8, 2), ``recursive`` took 0.15 s
        of CPU for a maximum congestion of 2083 and hop-bytes of 1.9995e6; ``scotch`` 1.1-1.8 s for
        2137 and 1.9980e6, ``multisection`` 1.0-1.2 s for 2258-2294 and 1.985e6-1.989e6
        (``benchmarks/results/dense_profile.md``).  Sparse graphs race them all.
        """
        from ..mappers.local_search import WORK_DEGREE

        if (candidate.baseline or candidate.strategy not in PARTITIONING
                or self.graph.n_edges <= WORK_DEGREE * max(self.graph.n, 1)):
            return None
        rivals = [s for s in PARTITIONING if s in set(strategies)]
        cheapest = min(rivals, key=lambda s: estimate_seconds(s, self.topology, self.graph))
        return None if cheapest == candidate.strategy else cheapest

    def _state_seconds(self):
        """Rough seconds of one search state of a refinement (a refinement builds two or three): the
        scoring time of a mapping, or for congestion where the distance oracle cannot prune the ECMP
        searches (switches outside its table), one breadth-first search of the whole topology per
        used vertex (about 2 ns per vertex or arc visited, idle), times the machine's slowdown.  A fat
        tree from :func:`libtopomap.fattree` has its loads in closed form (no search)."""
        secs = self._score_seconds
        if (self.objective == "congestion" and not self.topology.distances.covers_all
                and self.topology.distances.fattree_arcs() is None):
            t = self.topology
            secs = max(secs, 2e-9 * self._slowdown * int(np.count_nonzero(self.slots)) * (t.n_vertices + t.n_arcs))
        return secs

    def _calibrate(self, strategy, seconds):
        if seconds >= 0.5:
            ratio = seconds / estimate_seconds(strategy, self.topology, self.graph)
            self._slowdown = float(min(max(self._slowdown, ratio), 10.0))

    @property
    def bounds(self):
        """:func:`~libtopomap.metrics.lower_bounds` of this instance (computed once)."""
        if self._bounds is None:
            from ..metrics import lower_bounds

            self._bounds = lower_bounds(self.topology, self.graph, self.slots)
        return self._bounds

    def refine_reach(self, built):
        """The best score a refinement could bring the construction ``built`` (an :class:`Outcome`) to: each
        entry of its score divided by its strategy's :data:`REFINE_GAIN`, the objective and hop-bytes not below
        their lower bounds (:func:`~libtopomap.metrics.lower_bounds`).
        :func:`~libtopomap.portfolio.refinement_choice` refines only constructions whose reach is no worse
        than the best construction's score.

        A strategy without measured gains, and any refinement budgeted in seconds (``time_budget``: it may
        walk further than measured), may reach 0 on every entry."""
        gain = REFINE_GAIN.get(built.candidate.strategy)
        if gain is None or self.time_budget is not None:
            return tuple(0.0 for _ in built.key)
        b = self.bounds
        floors = (b[self.objective], 0.0, b["hopbytes"])
        return tuple(max(float(k) / g, f) for k, g, f in zip(built.key, gain, floors))

    def estimate(self, candidate):
        """:func:`estimate_memory` of a candidate (0 extra for the current placement's scoring is not
        assumed: it is estimated as ``identity``)."""
        return estimate_memory(candidate.strategy, self.topology, self.graph, candidate.refine,
                               objective=self.objective, slots=self.slots)

    def score(self, vertices):
        """``(key, metrics)`` of a placement."""
        from ..fluid import phase_time
        from ..mapping import Mapping
        from ..metrics import evaluate

        t0 = time.perf_counter()
        vertices = Mapping(self.topology, vertices, slots=self.slots)  # checked once for both scores
        m = evaluate(self.topology, self.graph, vertices, routing=self.routing)
        # the tie-break of single-path routings: how long the traffic takes when links are shared as SMPI's
        # CM02 shares them (equal maximum congestion, different times: the 4-ary 3-tree under dmodk).  Bounded
        # by work, not by the clock, so a loaded machine does not change the winner.
        fluid = phase_time(self.topology, self.graph, vertices, routing=self.routing)
        self._score_seconds = max(self._score_seconds, time.perf_counter() - t0)
        obj = {"congestion": m["max_congestion"], "dilation": m["avg_dilation"],
               "hopbytes": m["hop_bytes"]}[self.objective]
        metrics = {"objective": float(obj), **m, "phase_time": fluid}
        tie = m["avg_congestion"] if fluid is None else fluid
        return (float(obj), float(tie), float(m["hop_bytes"])), metrics

    def can_reach_bound(self):
        """Whether a placement can be at the lower bounds (:meth:`at_lower_bound`): both the objective's
        and the hop-bytes' bounds are positive (they are 0 with several slots on a vertex)."""
        b = self.bounds
        return b[self.objective] > 0 and b["hopbytes"] > 0

    def at_lower_bound(self, metrics):
        """Whether nothing can beat these metrics (objective and hop-bytes at their lower bounds)."""
        b = self.bounds
        return _at_bound(metrics["objective"], b[self.objective]) and _at_bound(metrics["hop_bytes"], b["hopbytes"])

    def validate(self, vertices):
        """Raise MappingError unless ``vertices`` is a placement of this job into its slots (for a
        placement from outside the race, such as a winner received from another rank)."""
        check_mapping(self.topology, vertices, self.graph.n, slots=self.slots)

    def _outcome(self, c, verts, label, t0, note="", scored=None):
        # verts is trusted: the placement checked at the door, a Mapping of map_processes, or a search's result
        if scored is None:
            scored = self.score(verts)
        key, metrics = scored
        return Outcome(c, label, key, metrics, verts, time.perf_counter() - t0, note=note,
                       at_bound=self.at_lower_bound(metrics))

    def _where(self, c):
        return f"strategy {c.strategy!r} (seed {c.seed}" + (
            f", start vertex {self.topology.names[c.start]!r})" if c.start is not None else ")")

    def construct(self, candidate):
        """Run a candidate's construction (no refinement) and score it; returns an :class:`Outcome`
        whose ``at_bound`` says whether it reaches :func:`~libtopomap.metrics.lower_bounds`."""
        from .. import mappers

        self.elapsed()  # the clock starts with the first construction when nobody started it
        t0 = time.perf_counter()
        c = candidate
        if c.baseline:
            out = self._outcome(c, self.placement.copy(), "current", t0)
            self._baseline_seconds += out.seconds
            self._baseline_score = (out.key, out.metrics)
            return out
        if self.graph.n_edges == 0:  # nothing to place: every placement is as good as the current one
            return self._outcome(c, self.placement.copy(), c.label, t0, "no communication: current placement")
        from ..mappers.local_search import deadline_scope, past

        try:
            # constructions that search (multisection's swap searches, greedy's loop) stop at the end of the
            # constructions' share with their best so far, rather than overrun it
            deadline = t0 + max(self.construction_time_left(), 0.0) if math.isfinite(self.total_budget) else None
            with deadline_scope(deadline):
                # the inputs were checked at this problem's door; only the candidate's strategy is new
                mappers.check_strategy(c.strategy, concentration=self.concentration)
                m = mappers.map_processes.trusted(self.topology, self.graph, strategy=c.strategy, slots=self.slots,
                                                  placement=self.placement, objective=self.objective, seed=c.seed,
                                                  start=c.start, concentration=self.concentration)
            verts = np.asarray(m.vertices, dtype=np.int64)
            scored = None
            if self._baseline_score is not None and np.array_equal(verts, self.placement):
                # the current placement again (identity): its score is known, scoring it again could
                # take seconds on a large scrambled start
                scored = (self._baseline_score[0], dict(self._baseline_score[1]))
            # a construction that honours the deadline (greedy, multisection, dual-bisection) has
            # then been cut short and returned its best so far
            note = "cut short at the constructions' deadline" if past(deadline) else ""
            out = self._outcome(c, verts, m.strategy or c.strategy, t0, note=note, scored=scored)
        except Exception as e:
            raise MappingError(f"{self._where(c)}: {type(e).__name__}: {e}") from e
        self._calibrate(c.strategy, out.seconds)
        if c.refine and out.at_bound:
            out.note = f"{c.refine} skipped: at the lower bound"
        return out

    def refine(self, candidate, built, *, share=None):
        """Refine the construction ``built`` (an :class:`Outcome` of :meth:`construct`) of a candidate
        within the refinement budget; the construction is kept when the refinement does not beat it on the
        race's score (:func:`selection_key`: the objective, then the tie-break, then hop-bytes).

        The refinement (and its final scoring) ends within ``share`` seconds (default: all that is
        left of the overall budget); it is skipped, with a note, when that is less than three times
        the estimated cost of one search state (:meth:`_state_seconds`).
        """
        from ..mappers import apply_refinement, spare_weakest_hosts

        c = candidate
        if not c.refine or built.at_bound or c.baseline or self.graph.n_edges == 0:
            return built
        t0 = time.perf_counter()
        left = self.remaining() if share is None else min(share, self.remaining())
        if left < 3 * self._state_seconds() + 0.05:
            built.note = _joined(built.note, f"{c.refine} skipped: {max(left, 0.0):.3g} s left of the "
                                             f"{self.total_budget:.3g} s budget")
            return built
        deadline = t0 + left - self._score_seconds  # the result is scored after the search
        try:
            # Refine the construction in the slots map_processes used for it (the spare slots of a
            # congestion mapping are those behind the weakest host links).
            used = self.slots
            if c.strategy != "identity" and self.objective == "congestion":
                used = spare_weakest_hosts(self.topology, self.slots, self.graph.n)
            # the chain of map_processes(refine=...), with the race's deadline
            r = apply_refinement(self.topology, self.graph, built.payload, used, refine=c.refine,
                                 objective=self.objective, rng=np.random.default_rng(c.seed), routing=self.routing,
                                 time_budget=self.time_budget, iterations=self.iterations, deadline=deadline)
            out = self._outcome(c, np.asarray(r, dtype=np.int64), f"{built.label}+{c.refine}", t0, note=built.note)
        except Exception as e:
            raise MappingError(f"{self._where(c)}: {type(e).__name__}: {e}") from e
        out.seconds += built.seconds
        # the one rule of the race: a refinement that does not beat its construction on the whole
        # score (objective, then the tie-break, then hop-bytes) gives it back, so a refinement
        # that keeps the objective but adds traffic never wins over its own start
        if rounded_key(out.key) >= rounded_key(built.key) and not (out.at_bound and not built.at_bound):
            out = Outcome(c, out.label, built.key, built.metrics, built.payload, out.seconds,
                          note=_joined(built.note, f"{c.refine} kept the construction"), at_bound=built.at_bound)
        return out

    def polish(self, winner):
        """The race winner polished on hop-bytes, or ``winner`` itself when that does not beat it.

        * Under the hop-bytes (and dilation) objective, the winner's mapping gets an iterated local
          search on hop-bytes (:func:`~libtopomap.mappers.hopbytes_ils.hopbytes_ils`) with a move
          budget that shrinks with the job (:func:`~libtopomap.mappers.hopbytes_ils.ils_moves`),
          whether or not the race refined: the constructions and their refinements stop at local
          optima of their own neighbourhoods, which a few hundred kicks on a small job leave
          (label ``+ils``).
        * Under the congestion objective, a winner refined by threshold accepting gets its capped
          hop-bytes clean-up (:func:`~libtopomap.mappers.threshold_accepting.capped_hopbytes_descent`,
          which never raises the maximum congestion) continued towards a local optimum: up to
          :data:`CAPPED_PASSES` passes, at most
          :func:`~libtopomap.mappers.threshold_accepting.capped_moves` moves played (label
          ``+capped``).  Every threshold-accepting result gets three passes; only the winner gets
          more, so the race pays for one.

        Nothing is done at the lower bound, without communication, or when what is left of the race's
        budget is less than three search states; both searches also stop at the budget (which binds
        only on races that have nearly spent it: large jobs on a loaded machine).  The polished mapping
        replaces the winner only when it beats it on the whole score (:func:`selection_key`), so the tie
        rule is unchanged; it keeps the winner's candidate (and so its place in the strategy order) and
        its note gives the hop-bytes before and after.  Deterministic: the search's seed is the candidate's, and its
        budget counts moves, not seconds.

        Under MPI the winner's rank polishes before it broadcasts (:func:`libtopomap.mpi.driver.race`).
        """
        from ..mappers import spare_weakest_hosts
        from ..mappers.hopbytes_ils import hopbytes_ils, ils_moves
        from ..mappers.threshold_accepting import capped_hopbytes_descent, capped_moves

        c = winner.candidate
        hop = self.objective in ("hopbytes", "dilation")
        if (winner.at_bound or winner.payload is None or self.graph.n_edges == 0
                or not (hop or (c.refine == "ta" and not c.baseline))):
            return winner
        if self.remaining() < 3 * self._state_seconds() + 0.05:
            return winner
        t0 = time.perf_counter()
        rng = np.random.default_rng([0 if c.seed is None else int(c.seed), int(c.index), 1])
        g = self.graph
        try:
            # the race's budget binds only where it is nearly spent (as for the refinements)
            deadline = t0 + self.remaining() - self._score_seconds
            if hop:
                v, before, after, stats = hopbytes_ils(self.topology, g, winner.payload, self.slots, rng=rng,
                                                       moves=ils_moves(g.n), routing=self.routing, deadline=deadline)
                label, note = "ils", f"hop-bytes polish {before:.6g} -> {after:.6g} ({stats['kicks']} kicks)"
            else:
                # the slots the refinement used (as refine: the spares behind the weakest host links)
                used = self.slots if c.strategy == "identity" else spare_weakest_hosts(self.topology, self.slots, g.n)
                v, stats = capped_hopbytes_descent(self.topology, g, winner.payload, used, rng=rng,
                                                   passes=CAPPED_PASSES, moves=capped_moves(g.n),
                                                   routing=self.routing, deadline=deadline)
                before, after = stats["start_hopbytes"], stats["hopbytes"]
                label, note = "capped", (f"capped hop-bytes descent {before:.6g} -> {after:.6g} ({stats['passes']} "
                                         f"passes, {stats['stopped']})")
            if not after < before:
                return winner
            out = self._outcome(c, np.asarray(v, dtype=np.int64), f"{winner.label}+{label}", t0, note=note)
        except Exception as e:
            raise MappingError(f"{self._where(c)}, polish: {type(e).__name__}: {e}") from e
        out.seconds += winner.seconds
        out.rank = winner.rank
        if rounded_key(out.key) >= rounded_key(winner.key) and not (out.at_bound and not winner.at_bound):
            return winner
        return out

    def evaluate(self, candidate):
        """Run one candidate (construction, then refinement) and score it; returns an :class:`Outcome`."""
        return self.refine(candidate, self.construct(candidate))


class CollectiveProblem:
    """Run and score rank orders for a collective's schedule (:func:`libtopomap.reorder_for_collective`).

    Parameters
    ----------
    topology : Topology
    current : array_like of int
        Vertex of each rank now.
    steps : list
        The collective's schedule (:func:`libtopomap.collectives.schedule`).
    objective : {"hops", "contention", "step"}
    iterations : int
        Swaps per candidate.

    Notes
    -----
    The payload of an outcome is the permutation ``perm`` (new rank ``r`` runs on
    ``current[perm[r]]``); the score is ``(objective, total hops)``.
    """

    kind = "collective"
    order = ("none", "two-opt", "greedy", "anneal")
    key_length = 2

    def __init__(self, topology, current, steps, *, objective="hops", iterations=200_000):
        check_choice("collective-objective", objective)
        self.topology = topology
        self.current = np.asarray(current, dtype=np.int64)
        self.steps = steps
        self.objective = objective
        self.iterations = int(iterations)
        self._messages = sum(len(s) for s in steps) if steps is not None else 0

    def estimate(self, candidate):
        """Conservative bytes of one rank search (see :func:`estimate_memory` for the conventions)."""
        return collective_memory(self.topology, self.current.size, self.objective, self._messages)

    def score(self, perm):
        from ..collectives.objectives import evaluate_schedule

        v = self.current[np.asarray(perm, dtype=np.int64)]
        m = evaluate_schedule(self.topology, self.steps, v, paths=self.objective != "hops")
        obj = m[self.objective]
        if obj is None:
            raise MappingError(f"the {self.objective} of this schedule cannot be evaluated (route table too large)")
        return (float(obj), float(m["hops"])), {"objective": float(obj), **m}

    def validate(self, perm):
        p = np.asarray(perm, dtype=np.int64)
        if p.size != self.current.size or not np.array_equal(np.sort(p), np.arange(self.current.size)):
            raise MappingError("the chosen rank order is not a permutation of the ranks")

    def evaluate(self, candidate):
        from ..collectives.rank_placement import optimize_ranks

        t0 = time.perf_counter()
        c = candidate
        if c.baseline:
            perm, label = np.arange(self.current.size, dtype=np.int64), "current"
        else:
            try:
                res = optimize_ranks(self.topology, self.current, self.steps, objective=self.objective,
                                     optimizer=c.strategy, iterations=self.iterations, seed=c.seed)
            except Exception as e:
                raise MappingError(f"collective placement (optimizer {c.strategy!r}, seed {c.seed}): "
                                   f"{type(e).__name__}: {e}") from e
            perm, label = np.asarray(res.permutation, dtype=np.int64), c.strategy
        self.validate(perm)
        key, metrics = self.score(perm)
        return Outcome(c, label, key, metrics, perm, time.perf_counter() - t0)


def _joined(*notes):
    """Notes of one outcome, in order (a construction cut at its deadline keeps saying so after its
    refinement)."""
    return "; ".join(n for n in notes if n)
