"""``njit`` for libtopomap's kernels: compiled as usual (one process at a time per kernel), or run
as plain Python on tiny problems.

Numba compiles a kernel the first time it meets new argument types: on a fresh install, the
kernels of one 8-process mapping took a minute of CPU (issue 29, cold start), while the work itself
takes milliseconds.  Inside :func:`python_kernels`, a kernel called from Python runs its original
Python function instead, and the kernels that function calls do the same: the same code, so the
same results.  That holds for the kernels that draw random numbers too: numba's ``np.random.seed``,
``random`` and ``randint`` are numpy's legacy generator's algorithms (same Mersenne Twister seeding,
same doubles, same masked integers), so the plain-Python run draws the same numbers from numpy's
global generator, whose state is put back afterwards.

Where several processes share numba's cache (the ranks of an MPI job on a fresh install), a kernel
missing from the cache is compiled by one process while the others wait on a lock file beside its
cache index, then load it: ranks compiled the same kernels at once before, on 2 cores the cost of
each compilation times the ranks.  Every module that defines kernels imports ``njit`` from here;
:mod:`._numba_cache` comes with it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time

import numba
import numpy as np
from numba.core import sigutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

from . import _numba_cache  # noqa: F401  (an unreadable cache file is a miss, not an error)

__all__ = ["PYTHON_MAX_PROCESSES", "PYTHON_MAX_VERTICES", "compiled_kernels", "njit", "python_kernels",
           "small_enough_for_python"]

#: Seconds a process waits for another one to compile a kernel before compiling it itself (a safety
#: net: the lock of a process that dies is released by the system).
COMPILE_WAIT = 600.0

#: A job of at most this many processes, on a topology of at most PYTHON_MAX_VERTICES vertices, runs its
#: kernels as plain Python in the MPI layer (:func:`small_enough_for_python`).
PYTHON_MAX_PROCESSES = 64
PYTHON_MAX_VERTICES = 256


def small_enough_for_python(n_processes, n_vertices):
    """True if a mapping of ``n_processes`` onto ``n_vertices`` is better run as plain Python than
    compiled: on a fresh install, compiling the kernels of one mapping takes about a minute."""
    return n_processes <= PYTHON_MAX_PROCESSES and n_vertices <= PYTHON_MAX_VERTICES


_KERNELS = []  # every kernel made by njit, for compiled_kernels
# How many python_kernels blocks are open (in any thread: kernels give the same results either way).
_depth = 0
_compiled_call = CPUDispatcher.__call__


class _Kernel(CPUDispatcher):
    """A numba dispatcher that runs its Python function inside :func:`python_kernels`, and compiles
    under a lock shared by the processes of one numba cache."""

    def __call__(self, *args, **kwargs):
        if _depth:
            return _interpret(self, args, kwargs)
        return _compiled_call(self, *args, **kwargs)  # the common case: one test more than numba's call

    def compile(self, sig):
        lock = _lock_path(self)
        if lock is None or lock in _held:
            return super().compile(sig)
        # numba's (reentrant) lock first, then the file: a thread never waits on a file that another
        # thread of its own process holds while waiting for numba's lock
        with global_compiler_lock:
            args, _ = sigutils.normalize_signature(sig)
            if tuple(args) in self.overloads:
                return super().compile(sig)
            with _file_lock(lock):
                return super().compile(sig)  # loads what another process compiled meanwhile


_held = set()  # the lock files this process holds (a kernel compiling a kernel it calls: nested)
_inside = threading.local()  # True while a kernel runs as Python in this thread
_numpy_random = threading.Lock()  # one interpreted kernel at a time uses numpy's global generator


def _interpret(kernel, args, kwargs):
    """``kernel``'s Python function; the outermost call of one that draws random numbers keeps numpy's
    global generator as it found it (numba's generator is its own, apart from the caller's)."""
    if getattr(_inside, "on", False) or not _draws_random(kernel):
        return kernel.py_func(*args, **kwargs)
    with _numpy_random:
        state = np.random.get_state()
        _inside.on = True
        try:
            return kernel.py_func(*args, **kwargs)
        finally:
            _inside.on = False
            np.random.set_state(state)


def _called_kernels(kernel):
    """The kernels that ``kernel``'s code names as globals."""
    g = kernel.py_func.__globals__
    return [g[name] for name in kernel.py_func.__code__.co_names if isinstance(g.get(name), _Kernel)]


def _draws_random(kernel, _seen=None):
    """True if ``kernel`` or a kernel it calls draws random numbers (``np.random``)."""
    known = kernel.__dict__.get("_libtopomap_random")
    if known is not None:
        return known
    seen = set() if _seen is None else _seen
    seen.add(id(kernel))
    draws = "random" in kernel.py_func.__code__.co_names or any(
        _draws_random(k, seen) for k in _called_kernels(kernel) if id(k) not in seen)
    kernel._libtopomap_random = draws
    return draws


def _lock_path(kernel):
    """The lock file beside ``kernel``'s numba cache index, or None (no cache, or no such folder)."""
    cache_file = getattr(getattr(kernel, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return None if index is None else index + ".lock"


@contextlib.contextmanager
def _file_lock(path):
    """Hold an exclusive lock on ``path`` (waiting, asleep, at most :data:`COMPILE_WAIT` seconds);
    without ``fcntl`` or a writable folder, go on without it."""
    try:
        import fcntl

        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except (ImportError, OSError):
        yield
        return
    try:
        end = time.monotonic() + COMPILE_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > end:
                    break
                time.sleep(0.05)
        _held.add(path)
        try:
            yield
        finally:
            _held.discard(path)
    finally:
        os.close(fd)  # releases the lock


def njit(*args, **options):
    """:func:`numba.njit` (same arguments), returning a dispatcher that :func:`python_kernels` can
    run as plain Python."""
    if args and callable(args[0]):
        return njit(**options)(args[0])

    def wrap(func):
        disp = numba.njit(*args, **options)(func)
        if isinstance(disp, CPUDispatcher):  # not under NUMBA_DISABLE_JIT, where it is func itself
            disp.__class__ = _Kernel
            _KERNELS.append(disp)
        return disp
    return wrap


def compiled_kernels():
    """The names (``module.function``) of the kernels this process has compiled or loaded from
    numba's cache so far, sorted."""
    return sorted(f"{k.py_func.__module__}.{k.py_func.__qualname__}" for k in _KERNELS if k.signatures)


@contextlib.contextmanager
def python_kernels(enabled=True):
    """Run kernels called from Python as plain Python while the block runs (if ``enabled``).

    Process-wide: a kernel that another thread calls meanwhile runs as Python too (same results)."""
    global _depth
    if not enabled:
        yield
        return
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
