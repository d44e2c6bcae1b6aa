"""Run every ``tests/mpi/test_*.py`` under real MPI (``mpiexec -n 4`` and ``-n 8``, oversubscribed).

Each run has a hard timeout, so a hang fails the test instead of stalling CI.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
MPI_FILES = sorted((HERE / "mpi").glob("test_*.py"))
TIMEOUT = 240


def _mpiexec():
    exe = shutil.which("mpiexec", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    if exe is None:
        pytest.fail("mpiexec not found: install the test extra (pip install -e '.[test]'), which brings the mpich wheel")
    return exe


@pytest.mark.parametrize("nprocs", [4, 8])
@pytest.mark.parametrize("path", MPI_FILES, ids=[p.stem for p in MPI_FILES])
def test_under_mpiexec(path, nprocs):
    cmd = [_mpiexec(), "-n", str(nprocs), sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
           "-o", "addopts=", "--timeout", str(TIMEOUT - 20), str(path)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=HERE.parent)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"")[-4000:] if isinstance(e.stdout, bytes) else (e.stdout or "")[-4000:]
        pytest.fail(f"{path.name} under mpiexec -n {nprocs} timed out after {TIMEOUT}s (a hang):\n{out}")
    if proc.returncode != 0:
        pytest.fail(f"{path.name} under mpiexec -n {nprocs} failed (exit {proc.returncode}):\n"
                    f"{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}")
