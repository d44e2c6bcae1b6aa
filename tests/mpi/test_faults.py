"""Fault injection (issue 12): a fault on one rank -- first, middle or last -- ends with the same clear error
on every rank, never a hang and never an abort.

Faults: a bad argument, an exception inside a strategy, a ``KeyboardInterrupt`` or ``SystemExit`` inside
a strategy, while waiting for the other ranks or while rank 0 compiles the kernels, a failure while
selecting the winner, and an argument on which one rank disagrees.  Every rank raises the same
:class:`~libtopomap.CommError`, the interrupted rank included (its ``__cause__`` is the interruption;
issue 29 item 4 replaced issue 12 item 10, where that rank re-raised its own interruption).

Run under real MPI by tests/test_mpi_suite.py (MPICH and Open MPI, ``-n 4`` and ``-n 8``).  A hang fails
the test after ``HANG`` seconds on the ranks that still run Python, and the harness's timeout catches
the rest.
"""

import sys
import time

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
import libtopomap._jit
import libtopomap.mappers
import libtopomap.portfolio
from libtopomap.mpi import collective_call
from _helpers import COMM, P, RANK

race = sys.modules["libtopomap.mpi.agreement"]

WHERE = {"first": 0, "middle": P // 2, "last": P - 1}
# A hang detector, not a performance target: every fault below ends in a few seconds when nothing hangs.
HANG = 120

pytestmark = pytest.mark.timeout(HANG)
at_ranks = pytest.mark.parametrize("where", list(WHERE))


def _torus():
    return ltm.torus(f"{P // 2}x2")


def _ring(rank):
    nb = [(rank + 1) % P, (rank - 1) % P]
    return nb, nb


def _web(rank):
    """The ring plus its chords of length 2: more partners than a vertex of the torus has links, so no
    mapping reaches the lower bounds and the race runs every strategy (on a plain ring greedy would
    reach them first and end the race before the other ranks construct anything)."""
    nb = sorted({(rank + k) % P for k in (1, -1, 2, -2)} - {rank})
    return nb, nb


def _reorder(sources=None, destinations=None, **kw):
    """A reordering of :func:`_web` on the torus (reversed placement), as a callable."""
    s, d = _web(RANK)
    args = dict(topology=_torus(), placement=list(np.arange(P)[::-1]), seed=1, strategies=("greedy", "rcm"))
    args.update(kw)
    return lambda: ltm.Create_dist_graph_adjacent(COMM, s if sources is None else sources,
                                                  d if destinations is None else destinations, **args)


def _outcome(fn):
    """(exception type name, agreed message, seconds) of ``fn()`` on this rank; (None, None, s) without error."""
    t = time.monotonic()
    try:
        out = fn()
    except ltm.CommError as e:
        return "CommError", str(e), time.monotonic() - t
    except (KeyboardInterrupt, SystemExit) as e:
        notes = getattr(e, "__notes__", None)
        return type(e).__name__, (notes[-1] if notes else None), time.monotonic() - t
    if isinstance(out, MPI.Comm) and out != MPI.COMM_NULL:
        out.Free()
    return None, None, time.monotonic() - t


def _waiting_in(caller):
    """Whether the running ``time.sleep`` is ``wait_quietly``'s, called (through the agreement of
    ``libtopomap.mpi.agreement.agreed``) from ``caller``."""
    f = sys._getframe(2)
    if f.f_code.co_name != "wait_quietly":
        return False
    for _ in range(4):
        f = f.f_back
        if f is None:
            return False
        if f.f_code.co_name == caller:
            return True
    return False


def _check(outcome, bad, *needles):
    """Every rank failed with the same message naming ``bad``; the communicator still works."""
    kinds, msgs, secs = zip(*COMM.allgather(outcome))
    assert all(k == "CommError" for k in kinds), kinds  # the failing rank too (issue 29 item 4)
    assert len(set(msgs)) == 1 and msgs[0] is not None, msgs
    for n in needles:
        assert n in msgs[0], msgs[0]
    assert COMM.allreduce(1) == P  # nobody is stuck in a collective
    return msgs[0], max(secs)


@at_ranks
def test_bad_argument_on_one_rank(where):
    bad = WHERE[where]
    s, d = _ring(RANK)
    if RANK == bad:
        d = d + [P + 3]
    _check(_outcome(_reorder(destinations=d, sources=s)), bad,
           f"checking the arguments of Create_dist_graph_adjacent failed on rank {bad} of {P}",
           f"destinations[2] = {P + 3}")


@at_ranks
def test_exception_in_a_strategy_on_one_rank(where, monkeypatch):
    bad = WHERE[where]
    real = libtopomap.portfolio.MappingProblem.construct

    def evaluate(self, cand):
        if RANK == bad:
            raise RuntimeError(f"injected on rank {bad}")
        return real(self, cand)
    monkeypatch.setattr(libtopomap.portfolio.MappingProblem, "construct", evaluate)
    _check(_outcome(_reorder()), bad, f"mapping failed on rank {bad} of {P}", f"RuntimeError: injected on rank {bad}")


@at_ranks
@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_interrupt_in_a_strategy_on_one_rank(where, exc, monkeypatch):
    bad = WHERE[where]
    real = libtopomap.portfolio.MappingProblem.construct

    def evaluate(self, cand):
        if RANK == bad:
            raise exc()
        return real(self, cand)
    monkeypatch.setattr(libtopomap.portfolio.MappingProblem, "construct", evaluate)
    _check(_outcome(_reorder()), bad, f"mapping failed on rank {bad} of {P}: {exc.__name__}")


@at_ranks
@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_interrupt_in_a_collective_placement_on_one_rank(where, exc, monkeypatch):
    bad = WHERE[where]
    real = libtopomap.portfolio.CollectiveProblem.evaluate

    def evaluate(self, cand):
        if RANK == bad:
            raise exc()
        return real(self, cand)
    monkeypatch.setattr(libtopomap.portfolio.CollectiveProblem, "evaluate", evaluate)
    out = _outcome(lambda: ltm.reorder_for_collective(COMM, _torus(), "allreduce", iterations=200, seed=1,
                                                      placement=list(np.arange(P)[::-1])))
    _check(out, bad, f"collective placement failed on rank {bad} of {P}: {exc.__name__}")


def test_keyboard_interrupt_while_rank0_compiles(monkeypatch):
    # only rank 0 compiles the kernels, while the others wait: its interruption must reach them
    def compile_kernels(*args, **kw):
        raise KeyboardInterrupt
    monkeypatch.setattr(libtopomap.mappers, "compile_kernels", compile_kernels)
    monkeypatch.setattr(libtopomap._jit, "PYTHON_MAX_PROCESSES", 0)  # a big job's path: compiled kernels
    _check(_outcome(_reorder()), 0, f"compiling the kernels failed on rank 0 of {P}: KeyboardInterrupt")


@at_ranks
@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_interrupt_while_waiting_on_one_rank(where, exc, monkeypatch):
    # the bad rank is interrupted in wait_quietly's sleep while the others still work: it must finish
    # the wait and pass the interruption through the agreement, not leave the others in the allgather
    bad = WHERE[where]
    real = time.sleep
    interrupted = []

    def sleep(s):
        if not interrupted and _waiting_in("collective_call"):
            interrupted.append(s)
            raise exc()
        real(s)
    if RANK == bad:
        monkeypatch.setattr(race.time, "sleep", sleep)

    def work():
        if RANK != bad:
            real(0.5)  # the bad rank waits meanwhile
        return RANK
    out = _outcome(lambda: collective_call(COMM, work, what="waiting", quiet=True))
    assert COMM.allgather(bool(interrupted))[bad]
    _check(out, bad, f"waiting failed on rank {bad} of {P}: {exc.__name__}")


@at_ranks
def test_interrupt_while_waiting_in_a_reordering(where, monkeypatch):
    # the same, inside the race: the bad rank's strategies end first and it is interrupted while waiting
    bad = WHERE[where]
    real_sleep, real_eval = time.sleep, libtopomap.portfolio.MappingProblem.construct
    interrupted = []

    def sleep(s):
        if not interrupted and _waiting_in("collective_call"):
            interrupted.append(s)
            raise KeyboardInterrupt
        real_sleep(s)

    def evaluate(self, cand):
        if RANK != bad:
            real_sleep(0.2)
        return real_eval(self, cand)
    monkeypatch.setattr(libtopomap.portfolio.MappingProblem, "construct", evaluate)
    if RANK == bad:
        monkeypatch.setattr(race.time, "sleep", sleep)
    out = _outcome(_reorder())
    _check(out, bad, f"mapping failed on rank {bad} of {P}: KeyboardInterrupt")
    assert COMM.allgather(bool(interrupted))[bad]


@pytest.mark.parametrize("where,step", [("first", "sort_key"), ("first", "from_record"), ("middle", "from_record"),
                                        ("last", "from_record")])
@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_failure_while_selecting_the_winner_on_one_rank(where, step, exc, monkeypatch):
    # the winner selection after the race runs local code between its collectives: the selection key
    # (on the ranks that ran candidates; rank 0 does) and the outcomes received (on every rank)
    bad = WHERE[where]
    Outcome = libtopomap.portfolio.Outcome
    real = getattr(Outcome, step)
    if step == "sort_key":
        def fake(self, *args, **kw):
            if RANK == bad:
                raise exc("injected in selection")
            return real(self, *args, **kw)
    else:
        real = real.__func__

        def fake(cls, *args, **kw):
            if RANK == bad and sys._getframe(1).f_code.co_name == "outcomes_of":
                raise exc("injected in selection")
            return real(cls, *args, **kw)
        fake = classmethod(fake)
    monkeypatch.setattr(Outcome, step, fake)
    _check(_outcome(_reorder()), bad, f"selecting the mapping failed on rank {bad} of {P}: "
           f"{exc.__name__}: injected in selection")

@pytest.mark.parametrize("where", ["middle", "last"])
def test_interrupt_while_waiting_for_rank0_to_compile(where, monkeypatch):
    bad = WHERE[where]
    real = time.sleep
    interrupted = []

    def sleep(s):
        if not interrupted and _waiting_in("_compile_on_rank0"):
            interrupted.append(s)
            raise KeyboardInterrupt
        real(s)
    if RANK == bad:
        monkeypatch.setattr(race.time, "sleep", sleep)
    monkeypatch.setattr(libtopomap._jit, "PYTHON_MAX_PROCESSES", 0)  # a big job's path: compiled kernels
    out = _outcome(_reorder())
    assert COMM.allgather(bool(interrupted))[bad]
    _check(out, bad, f"compiling the kernels failed on rank {bad} of {P}: KeyboardInterrupt")


@at_ranks
def test_disagreement_on_one_rank(where):
    bad = WHERE[where]
    other = 1 if bad == 0 else 0
    _check(_outcome(_reorder(seed=2 if RANK == bad else 1)), bad,
           f"the argument(s) seed differ between ranks: rank(s) {bad} "
           f"disagree with rank {other}")
    placement = list(np.arange(P)[::-1]) if RANK != bad else list(range(P))
    _check(_outcome(_reorder(placement=placement)), bad,
           f"the process placement differs between ranks: rank(s) {bad} disagree with rank {other}")


@at_ranks
def test_disagreement_in_a_collective_placement_on_one_rank(where):
    bad = WHERE[where]
    other = 1 if bad == 0 else 0

    def run(**kw):
        args = dict(iterations=200, seed=1, placement=list(np.arange(P)[::-1]))
        args.update(kw)
        return _outcome(lambda: ltm.reorder_for_collective(COMM, _torus(), "allreduce", **args))
    _check(run(optimizers=("anneal", "two-opt", "anneal") if RANK == bad else ("anneal", "two-opt")), bad,
           f"the options (collective, objective, optimizers, iterations, seed, root, max_memory) differ between "
           f"ranks: rank(s) {bad} disagree with rank {other}")
    _check(run(placement=list(range(P)) if RANK == bad else list(np.arange(P)[::-1])), bad,
           f"the process placement differs between ranks: rank(s) {bad} disagree with rank {other}")
    _check(_outcome(lambda: ltm.reorder_for_collective(COMM, ltm.torus(str(P)) if RANK == bad else _torus(),
                                                       "bcast", iterations=200, seed=1, placement=list(range(P)))),
           bad, f"the topology differs between ranks: rank(s) {bad} disagree with rank {other}")
