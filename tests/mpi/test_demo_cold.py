"""``libtopomap demo`` under real MPI (run by tests/test_mpi_suite.py with 4 and 8 ranks) runs its kernels as
plain Python (issue 29, cold start: compiling them took a minute of CPU on a fresh install).  No rank
compiles, or loads from numba's cache, any kernel: with 8 ranks (the README's first command) greedy reaches
the lower bound; with 4 ranks multisection runs too, and its swap search (``local_search._walk``), which
draws numba's random numbers, runs as Python as well (it used to stay compiled: 29 kernels, 245 s of a
262-s first demo at load 9-16)."""

from libtopomap._jit import compiled_kernels
from libtopomap.cli import main
from _helpers import COMM, P


def test_the_demo_compiles_no_kernel(capsys):
    rc = main(["demo", "--sizes", "8", "--iterations", "1"])
    out = capsys.readouterr().out
    assert COMM.allgather(rc) == [0] * P
    assert COMM.allgather(compiled_kernels()) == [[]] * P
    assert "winner: " in COMM.bcast(out)   # rank 0 printed the result
