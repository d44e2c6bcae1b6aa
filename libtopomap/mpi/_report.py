"""The report of a reordering: :class:`TopomapReport`, and the MPI attribute (a keyval of this module)
that carries it on the communicator a libtopomap call built or reordered (:func:`report`,
:func:`attach_report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

__all__ = ["TopomapReport", "TopomapDistgraphcomm", "report", "last_report", "attach_report"]


@dataclass
class TopomapReport:
    """What a reordering did; the same on every rank except ``old_rank``, ``new_rank`` and ``timings``.

    Attributes
    ----------
    strategy : str
        The winning strategy; ``"identity"`` when the current placement was kept.
    winner_rank : int or None
        Rank (in the input communicator) whose candidate won; ``None`` when the current placement
        was kept because no candidate beat it.
    objective : str
        ``"congestion"``, ``"dilation"`` or ``"hopbytes"``.
    before, after : dict
        Metrics of the current and the chosen placement: ``objective`` plus the keys of
        :func:`libtopomap.evaluate` (``max_congestion, avg_congestion, avg_dilation, max_dilation,
        hop_bytes``).
    improved : bool
        Whether the chosen placement is strictly better than the current one on
        ``(objective, tie-break, hop-bytes)`` (:class:`~libtopomap.portfolio.MappingProblem`).
    old_rank, new_rank : int
        This process's rank before and after.
    new_rank_of : numpy.ndarray
        ``new_rank_of[r]``: the new rank of old rank ``r``.
    vertices_before, vertices_after : numpy.ndarray
        Topology vertex of each logical vertex (= rank of the input communicator) before, and of
        each new rank after.
    candidates : list of dict
        Per candidate that ran (the current placement excluded), in portfolio order: ``index,
        rank`` (who ran it), ``strategy`` (what ran, e.g. ``"greedy+ta"``), ``seed, refine, start,
        value`` (objective), ``tiebreak`` (hop-bytes), ``key`` (the score), ``metrics, seconds`` and
        ``note`` (e.g. a refinement skipped at the lower bound).
    timings : dict
        Seconds measured on this rank: ``locate, gather, kernels`` (rank 0 compiles or loads the
        numba kernels, the others wait), ``strategies, selection, build`` (``build`` only
        when a communicator was built, not for :func:`topomap`) and ``total``.
    seed : int
        The base seed (per-candidate seeds derive from it), for reproducing the run.
    skipped : list of str
        Candidates not run and why, e.g. ``"scotch skipped: estimated 3.2 GB > max_memory 1 GB per
        node"``.
    plan : dict
        ``max_memory`` (bytes per node), ``mapping_ranks`` (the ranks allowed to map),
        ``assignment`` (rank -> candidate indices), ``threads`` (rank -> numba threads) and
        ``estimates`` (``"strategy[+refine]"`` -> bytes).
    """

    strategy: str
    winner_rank: int | None
    objective: str
    before: dict
    after: dict
    improved: bool
    old_rank: int
    new_rank: int
    new_rank_of: np.ndarray
    vertices_before: np.ndarray
    vertices_after: np.ndarray
    candidates: list
    timings: dict
    seed: int
    n_processes: int = 0
    topology: str | None = None
    extra: dict = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    plan: dict = field(default_factory=dict)

    def summary(self):
        """A few human-readable lines (what the demo prints)."""
        who = "current placement kept" if self.winner_rank is None else f"found on rank {self.winner_rank}"
        b, a = self.before, self.after
        lines = [
            f"strategy: {self.strategy} ({who}); objective {self.objective}: "
            f"{b['objective']:.4g} -> {a['objective']:.4g}",
            f"max congestion {b['max_congestion']:.4g} -> {a['max_congestion']:.4g}, "
            f"avg dilation {b['avg_dilation']:.4g} -> {a['avg_dilation']:.4g}, "
            f"max dilation {b['max_dilation']} -> {a['max_dilation']}",
            "timings (s): " + ", ".join(f"{k} {v:.4f}" for k, v in self.timings.items()),
        ]
        if self.candidates:
            lines.append("candidates: " + ", ".join(f"{c['strategy']} on rank {c['rank']}" for c in self.candidates))
        lines += self.skipped
        return "\n".join(lines)


class TopomapDistgraphcomm(MPI.Distgraphcomm):
    """Deprecated: what the dist-graph calls returned before 0.4.  They now return the plain
    :class:`mpi4py.MPI.Distgraphcomm` (so that ``type(MPI.Comm.fromint(c.toint())) is type(c)``, as
    mpi4py's own tests require) and the report is read with :func:`report`."""

    report: TopomapReport


_keyval = None


def _report_keyval():
    global _keyval
    if _keyval is None:
        _keyval = MPI.Comm.Create_keyval()
    return _keyval


def report(comm):
    """The report of a communicator built (or reordered) by libtopomap, or ``None``.

    The dist-graph calls, :func:`libtopomap.Create_cart` and :func:`~libtopomap.mpi.topomap` attach their
    :class:`TopomapReport` to the communicator as an MPI attribute (a keyval of this module), and
    :func:`libtopomap.reorder_for_collective` its :class:`~libtopomap.mpi.CollectiveReport`; the
    communicators themselves are mpi4py's plain types.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> report(MPI.COMM_SELF) is None
    True
    """
    if _keyval is None or comm == MPI.COMM_NULL:
        return None
    return comm.Get_attr(_keyval)


def last_report(comm):
    """The same as :func:`report` (the name before 0.4)."""
    rep = report(comm)
    if rep is None:  # a TopomapIntracomm of reorder_for_collective before it attached a keyval
        rep = getattr(comm, "report", None)
    return rep


def attach_report(comm, report):
    """Attach ``report`` to ``comm`` as an MPI attribute, where :func:`report` reads it."""
    comm.Set_attr(_report_keyval(), report)
