"""``libtopomap demo`` under real MPI (run by tests/test_mpi_suite.py with 4 and 8 ranks) runs its kernels as
plain Python (issue 29, cold start: compiling them took a minute of CPU on a fresh install).  With 8 ranks
(the README's first command) greedy reaches the lower bound and no rank compiles, or loads from numba's
cache, any kernel.  With 4 ranks multisection runs too, and its swap search (``local_search._walk``) draws
numba's random numbers, so it stays compiled, with the kernels it calls: the only compiled ones."""

from libtopomap._jit import compiled_kernels
from libtopomap.cli import main
from _helpers import COMM, P

WALK = "libtopomap.mappers.local_search._walk"


def test_the_demo_compiles_no_kernel_but_the_random_walk(capsys):
    rc = main(["demo", "--sizes", "8", "--iterations", "1"])
    out = capsys.readouterr().out
    assert COMM.allgather(rc) == [0] * P
    compiled = COMM.allgather(compiled_kernels())
    if P == 8:
        assert compiled == [[]] * P
    else:
        assert all(not names or WALK in names for names in compiled), compiled
    assert "winner: " in COMM.bcast(out)   # rank 0 printed the result
