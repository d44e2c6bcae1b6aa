"""``njit`` for libtopomap's kernels: compiled as usual, or run as plain Python on tiny problems.

Numba compiles a kernel the first time it meets new argument types: on a fresh install, the
kernels of one 8-process mapping took a minute of CPU (issue 29, cold start), while the work itself
takes milliseconds.  Inside :func:`python_kernels`, a kernel called from Python runs its original
Python function instead, and the kernels that function calls do the same: the same code, so the
same results, and nothing is compiled.  A kernel that draws from numba's random generator, or calls
one that does, stays compiled there (numpy's generator would give other numbers).  Every module
that defines kernels imports ``njit`` from here; :mod:`._numba_cache` comes with it.
"""

from __future__ import annotations

import contextlib

import numba
from numba.core.registry import CPUDispatcher

from . import _numba_cache  # noqa: F401  (an unreadable cache file is a miss, not an error)

__all__ = ["PYTHON_MAX_PROCESSES", "PYTHON_MAX_VERTICES", "compiled_kernels", "njit", "python_kernels",
           "small_enough_for_python"]

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
    """A numba dispatcher that runs its Python function inside :func:`python_kernels`."""

    def __call__(self, *args, **kwargs):
        if _depth and _interpretable(self):
            return self.py_func(*args, **kwargs)
        return _compiled_call(self, *args, **kwargs)  # the common case: one test more than numba's call


def _called_kernels(kernel):
    """The kernels that ``kernel``'s code names as globals."""
    g = kernel.py_func.__globals__
    return [g[name] for name in kernel.py_func.__code__.co_names if isinstance(g.get(name), _Kernel)]


def _interpretable(kernel, _seen=None):
    """False if ``kernel`` or a kernel it calls draws random numbers (``np.random``), else True."""
    known = kernel.__dict__.get("_libtopomap_interpretable")
    if known is not None:
        return known
    seen = set() if _seen is None else _seen
    seen.add(id(kernel))
    ok = "random" not in kernel.py_func.__code__.co_names and all(
        _interpretable(k, seen) for k in _called_kernels(kernel) if id(k) not in seen)
    kernel._libtopomap_interpretable = ok
    return ok


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
