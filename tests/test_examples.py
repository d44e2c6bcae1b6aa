"""The examples run under ``mpiexec`` and give the same answer with and without reordering."""

import re
import sys

import pytest

from _helpers import TESTS, run_under

EXAMPLES = TESTS.parent / "examples"


def _run(mpi, script, *args, nprocs=4):
    return run_under(mpi, nprocs, [sys.executable, str(EXAMPLES / script), *args], timeout=180,
                     what=" ".join([script, *args]))


@pytest.mark.parametrize("nprocs", [4, pytest.param(8, marks=pytest.mark.slow)])
def test_halo_exchange_checksum_is_the_same_with_and_without_reordering(mpi, nprocs):
    pattern = r"checksum: (\S+)"
    with_reorder = _run(mpi, "halo_exchange.py", nprocs=nprocs)
    plain = _run(mpi, "halo_exchange.py", "--no-reorder", nprocs=nprocs)
    assert re.search(pattern, with_reorder).group(1) == re.search(pattern, plain).group(1)
    assert "max congestion" in with_reorder  # the report was printed


def test_spmv_matches_the_serial_power_iteration(mpi):
    out = _run(mpi, "spmv.py", nprocs=4)
    err = float(re.search(r"max \|x - serial x\| = (\S+)", out).group(1))
    assert err < 1e-12
