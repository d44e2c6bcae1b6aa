"""The candidates of a portfolio race: the current placement, then strategy x seed x refinement."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MappingError
from ..validation import check_seed

__all__ = ["Candidate", "candidate_seed", "make_candidates"]


@dataclass(frozen=True)
class Candidate:
    """One entry of the portfolio.

    Attributes
    ----------
    index : int
        Position in the list; 0 is the current placement.
    strategy : str
        Mapping strategy (or collective optimizer); ``"identity"`` for candidate 0.
    seed : int or None
    refine : str or None
        Refinement after the construction (mappings only).
    start : int or None
        Greedy's start vertex (mappings only).
    """

    index: int
    strategy: str
    seed: int | None = None
    refine: str | None = None
    start: int | None = None

    @property
    def baseline(self):
        """Whether this is the current placement (candidate 0)."""
        return self.index == 0

    @property
    def label(self):
        """``"current"`` for candidate 0, else ``strategy[+refine]``."""
        if self.baseline:
            return "current"
        return self.strategy + (f"+{self.refine}" if self.refine else "")


def candidate_seed(base, k, salt=None):
    """Seed of raced candidate ``k`` (0-based, candidate index ``k + 1``) from the base seed.

    Examples
    --------
    >>> candidate_seed(1, 0) == candidate_seed(1, 0) != candidate_seed(1, 1)
    True
    """
    entropy = [int(base), int(k)] + ([] if salt is None else [int(salt)])
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint32)[0])


def make_candidates(strategies, *, seed, refine=None, count=None, starts=None, salt=None):
    """The portfolio: candidate 0 is the current placement, then ``count`` raced candidates.

    Parameters
    ----------
    strategies : sequence of str
        Raced candidate ``k`` (index ``k + 1``) runs ``strategies[k % S]``.
    seed : int
        Base seed; candidate ``k + 1`` gets :func:`candidate_seed` ``(seed, k, salt)``.
    refine : str, optional
        Refinement of every raced candidate.
    count : int, optional
        Number of raced candidates, at least ``S`` (default ``S``).  The MPI layer passes the number
        of mapping ranks, so larger jobs try more seeds and start vertices.
    starts : sequence of int, optional
        Start vertices; round ``k // S`` uses ``starts[(k // S) % len(starts)]``.
    salt : int, optional
        Mixed into the seeds (the collective race uses its own seed stream).

    Returns
    -------
    list of Candidate

    Examples
    --------
    >>> [c.label for c in make_candidates(["greedy", "rcm"], seed=0, refine="ta", count=3)]
    ['current', 'greedy+ta', 'rcm+ta', 'greedy+ta']
    """
    seed = check_seed(seed)
    strategies = tuple(strategies)
    if not strategies:
        raise MappingError("the portfolio has no strategies")
    n = len(strategies) if count is None else max(int(count), len(strategies))
    starts = None if starts is None or len(starts) == 0 else [int(s) for s in starts]
    out = [Candidate(0, "identity")]
    for k in range(n):
        rnd = k // len(strategies)
        out.append(Candidate(k + 1, strategies[k % len(strategies)], candidate_seed(seed, k, salt), refine,
                             None if starts is None else starts[rnd % len(starts)]))
    return out
