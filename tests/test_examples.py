"""The examples run under ``mpiexec`` and give the same answer with and without reordering."""

import os
import re
import subprocess
import sys

import pytest

from test_mpi_suite import HERE, _mpiexec

EXAMPLES = HERE.parent / "examples"


def _run(script, *args, nprocs=4):
    cmd = [_mpiexec(), "-n", str(nprocs), sys.executable, str(EXAMPLES / script), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=HERE.parent,
                          env=dict(os.environ, PYTHONUNBUFFERED="1"))
    assert proc.returncode == 0, f"{script} {args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.mark.parametrize("nprocs", [4, 8])
def test_halo_exchange_checksum_is_the_same_with_and_without_reordering(nprocs):
    pattern = r"checksum: (\S+)"
    with_reorder = _run("halo_exchange.py", nprocs=nprocs)
    plain = _run("halo_exchange.py", "--no-reorder", nprocs=nprocs)
    assert re.search(pattern, with_reorder).group(1) == re.search(pattern, plain).group(1)
    assert "max congestion" in with_reorder  # the report was printed


def test_spmv_matches_the_serial_power_iteration():
    out = _run("spmv.py", nprocs=4)
    err = float(re.search(r"max \|x - serial x\| = (\S+)", out).group(1))
    assert err < 1e-12
