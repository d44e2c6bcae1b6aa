"""How a race picks its winner: outcomes, the total order of scores, and which constructions are refined."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import MappingError
from .candidates import Candidate

__all__ = ["STRATEGY_ORDER", "CURRENT_WINS", "Outcome", "Skipped", "PortfolioResult", "rounded_key", "selection_key",
           "select", "REFINE_BEST", "refinement_choice"]

#: Tie order of raced strategies after equal scores, by how structured their result is.  The current
#: placement (candidate 0) comes before all of them (a full tie moves nothing); ``identity`` here is a
#: *refined* current placement.
STRATEGY_ORDER = ("greedy", "recursive", "multisection", "dual-bisection", "scotch", "rcm", "random", "identity")

# Scores are compared after rounding to this many significant digits, so two placements whose values
# are mathematically equal but were summed in another order tie (and the next key decides).
_DIGITS = 12

#: The current placement (candidate 0) wins every tie of the first this many entries of a score; the entries
#: after them (a mapping's hop-bytes) only order the other candidates.  A mapping that neither lowers the
#: objective nor the phase time moves ranks for no modelled gain, and what the graph leaves out runs in rank order:
#: on SMPI's 2-level 2:1 tree the CG proxy's winner tied the launcher's order on both, had 8% fewer hop-bytes and
#: was 0.8% slower (benchmarks/results/smpi_ties.md).
CURRENT_WINS = 2


@dataclass
class Outcome:
    """A candidate that ran: its result, score and cost.

    Attributes
    ----------
    candidate : Candidate
    label : str
        What ran (e.g. ``"greedy+ta"``, ``"multicore(greedy)"``, ``"current"``).
    key : tuple of float
        The score, lower is better (for mappings ``(objective, tie-break, hop_bytes)``, the tie-break being
        :func:`libtopomap.fluid.phase_time` under a single-path routing, ``avg_congestion`` under a multipath one:
        :class:`~libtopomap.portfolio.MappingProblem`; the current placement wins ties of the first two,
        :func:`selection_key`).
    metrics : dict
        Numbers for the report (for mappings: ``objective`` and the keys of
        :func:`libtopomap.evaluate`).
    payload : numpy.ndarray or None
        The result: topology vertex per process (mappings) or the rank permutation (collectives).
    seconds : float
    rank : int or None
        Rank that ran it (MPI), else None.
    note : str
        E.g. why a refinement was skipped.
    at_bound : bool
        The result reaches the problem's lower bounds (nothing can beat it): it wins before every
        candidate that does not (see :func:`selection_key`).
    """

    candidate: Candidate
    label: str
    key: tuple
    metrics: dict
    payload: np.ndarray | None = field(default=None, repr=False)
    seconds: float = 0.0
    rank: int | None = None
    note: str = ""
    at_bound: bool = False

    def record(self):
        """A small JSON-ready dict (no payload)."""
        c = self.candidate
        return {"index": c.index, "strategy": c.strategy, "label": self.label, "seed": c.seed, "refine": c.refine,
                "start": c.start, "key": [float(x) for x in self.key], "metrics": dict(self.metrics),
                "seconds": float(self.seconds), "rank": self.rank, "note": self.note, "at_bound": self.at_bound}

    @classmethod
    def from_record(cls, candidate, rec, payload=None):
        """The outcome of :meth:`record` (``payload`` given separately)."""
        return cls(candidate, rec["label"], tuple(rec["key"]), rec["metrics"], payload, rec["seconds"], rec["rank"],
                   rec["note"], bool(rec.get("at_bound", False)))

    def sort_key(self, order=STRATEGY_ORDER):
        """:func:`selection_key` of this outcome."""
        c = self.candidate
        return selection_key(self.key, c.strategy, c.index, order, at_bound=self.at_bound)


@dataclass(frozen=True)
class Skipped:
    """A candidate that was not run, and why."""

    candidate: Candidate
    reason: str


def _round(x):
    x = float(x)
    if not math.isfinite(x):
        return math.inf
    return float(f"{x:.{_DIGITS}g}")


def rounded_key(key):
    """``key`` rounded entry by entry to 12 significant digits (NaN and infinities: ``inf``), as scores compare."""
    return tuple(_round(x) for x in key)


def _order_index(strategy, index, order=STRATEGY_ORDER):
    if index == 0:
        return -1
    return order.index(strategy) if strategy in order else len(order)


def selection_key(key, strategy, index, order=STRATEGY_ORDER, *, at_bound=False):
    """The total order of the race: ``(*rounded score[:2], challenger, *rounded score[2:], strategy order,
    candidate index)``.

    ``challenger`` is 0 for the current placement (index 0) and 1 for the others, so the current placement wins
    every tie of the score's first :data:`CURRENT_WINS` entries (for a mapping: the objective and the phase time;
    hop-bytes only orders the others).  The current placement comes first in the strategy order too, then
    ``order``, then unknown strategies.  NaN and infinite scores count as ``+inf``.  A result at the problem's
    lower bounds (``at_bound``) comes before all others, the lowest candidate index first: ``(-1, ..., -1,
    index)``; the serial driver stops at the first one, so the MPI race, which runs every candidate,
    picks the same.  Every entry is a float, so the key can be reduced component by component with
    ``MPI.MIN``.

    Examples
    --------
    >>> selection_key((1.0, 2.0), "random", 3) > selection_key((1.0, 2.0), "greedy", 7)
    True
    >>> selection_key((5.0, 9.0), "rcm", 4, at_bound=True) < selection_key((1.0, 2.0), "greedy", 1)
    True
    """
    if at_bound:
        return (-1.0,) * (len(key) + 2) + (float(index),)
    k = rounded_key(key)
    return (k[:CURRENT_WINS] + (0.0 if index == 0 else 1.0,) + k[CURRENT_WINS:]
            + (float(_order_index(strategy, index, order)), float(index)))


def select(outcomes, order=STRATEGY_ORDER):
    """The winning outcome: lowest :func:`selection_key`."""
    outcomes = list(outcomes)
    if not outcomes:
        raise MappingError("no candidate ran")
    return min(outcomes, key=lambda o: o.sort_key(order))


#: Refinements start from the best constructions only: this many per round of strategies (a round
#: is one candidate of every strategy; the MPI layer races more rounds on more ranks).
REFINE_BEST = 2


def refinement_choice(constructions, candidates, order=STRATEGY_ORDER, *, reach=None):
    """Indices of the candidates whose construction is refined: none when a construction (or the
    current placement) is at the lower bound, else the ``REFINE_BEST x rounds`` best constructions
    of candidates with a refinement, by :func:`selection_key`, less those that cannot win.

    A construction cannot win when even the most a refinement was measured to gain (``reach``)
    leaves its score worse than the best construction's (the current placement included): a
    refinement never makes its own start worse, so the best construction is a score the race
    already has.

    Parameters
    ----------
    constructions : iterable of Outcome
        Scored constructions (or their records via :meth:`Outcome.from_record`), the current placement
        included; the same on every rank.
    candidates : list of Candidate
    order : sequence of str
    reach : callable, optional
        ``reach(outcome)``: the best score a refinement could bring that construction to
        (:meth:`MappingProblem.refine_reach`); a construction is refined only when its reach is no
        worse than the best construction's score (compared as tuples after :func:`rounded_key`, so
        a tie keeps it).  Default: no such cut.

    Returns
    -------
    set of int

    Examples
    --------
    >>> from libtopomap.portfolio import make_candidates
    >>> cands = make_candidates(["greedy", "rcm", "random"], seed=0, refine="ta")
    >>> outs = [Outcome(c, c.label, (float(k),), {}) for k, c in zip([9, 3, 1, 2], cands)]
    >>> sorted(refinement_choice(outs, cands))
    [2, 3]
    >>> sorted(refinement_choice(outs, cands, reach=lambda o: (o.key[0] / 1.5,)))  # 2 / 1.5 > 1: cut
    [2]
    """
    constructions = list(constructions)
    if any(o.at_bound for o in constructions):
        return set()
    raced = [c for c in candidates if not c.baseline]
    rounds = -(-len(raced) // max(1, len({c.strategy for c in raced})))
    ranked = sorted((o for o in constructions if not o.candidate.baseline and o.candidate.refine),
                    key=lambda o: o.sort_key(order))
    chosen = ranked[:REFINE_BEST * rounds]
    if reach is not None and chosen:
        best = rounded_key(min(constructions, key=lambda o: o.sort_key(order)).key)
        chosen = [o for o in chosen if rounded_key(reach(o)) <= best]
    return {o.candidate.index for o in chosen}


@dataclass
class PortfolioResult:
    """The result of a race.

    Attributes
    ----------
    winner, baseline : Outcome
        The chosen candidate and the current placement (the same object when nothing beat it).
    outcomes : list of Outcome
        Every candidate that ran, in index order (payloads only on the rank that ran them under MPI).
    skipped : list of Skipped
    plan : dict
        Who ran what: ``max_memory``, ``mapping_ranks``, ``threads`` (MPI) and the estimates.
    """

    winner: Outcome
    baseline: Outcome
    outcomes: list
    skipped: list
    plan: dict = field(default_factory=dict)

    @property
    def improved(self):
        return not self.winner.candidate.baseline
