"""The "simulated" lines of ``libtopomap demo`` and ``bench``: the same exchange on the modelled network.

All ranks of those commands share one machine, where the reordered communicator can look slower, so
:func:`simulate_exchanges` also times each exchange on a simulated copy of the topology with the
launcher's placement and with libtopomap's mapping.  A neighbour exchange runs under SMPI where
``smpicc``/``smpirun`` are installed (:mod:`libtopomap.smpi`, the ``replay`` proxy, built once into the
user's cache per source hash), a collective as the s4u replay of the very schedule that was mapped
(:mod:`libtopomap.simulate`); either falls back on the other simulator when only that one is installed
(collectives under SMPI: the ``colls`` proxy with the same algorithms).  Rank 0 simulates while the
other ranks sleep in :func:`wait_for_root`; a simulation that is unavailable, fails or runs past its
budget becomes one line saying why, never an error of the command.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time

import numpy as np

from ..errors import LibTopoMapError

__all__ = ["Exchange", "simulate_exchanges", "format_simulated", "wait_for_root", "SMPI_ALGORITHMS",
           "MAX_SIMULATED_RANKS", "SIMULATION_BUDGET_S"]

#: SMPI's collective algorithms that are the explicit schedules the bench maps (binomial-tree Bcast,
#: recursive-doubling Allreduce, Bruck Alltoall; :mod:`libtopomap.collectives.schedules`).
SMPI_ALGORITHMS = {"bcast": "binomial_tree", "allreduce": "rdb", "alltoall": "bruck"}
_SCHEDULE_NAMES = {"bcast": "binomial", "allreduce": "recursive doubling", "alltoall": "Bruck"}
#: Above this many ranks the commands print why they do not simulate (explicit routes grow as hosts^2).
MAX_SIMULATED_RANKS = 1024
#: Wall seconds all simulations of one command may take together.
SIMULATION_BUDGET_S = 120.0

_COLL_LINE = re.compile(r"^LTM_COLL op=\S+ bytes=(\d+) iters=\d+ avg=(\S+)$", re.M)   # proxies/colls.c


class Exchange:
    """One exchange to simulate.

    Parameters
    ----------
    label : str
        What the output calls it (``"Neighbor_alltoall"``, ``"bcast"``...).
    communication : str or CommGraph
        A collective of :data:`SMPI_ALGORITHMS`, or a graph whose every edge carries one message of the
        size (what ``Neighbor_alltoall`` sends).
    before, after : array_like of int
        Topology vertex of each rank: the launcher's placement and libtopomap's mapping.
    """

    def __init__(self, label, communication, before, after):
        self.label = label
        self.communication = communication
        self.before = np.asarray(before, dtype=np.int64)
        self.after = np.asarray(after, dtype=np.int64)

    @property
    def what(self):
        c = self.communication
        return f"{c} ({_SCHEDULE_NAMES[c]})" if isinstance(c, str) else self.label


def _unit_graph(graph, p):
    """The graph with one message per edge (weight 1), self edges dropped: what Neighbor_alltoall sends."""
    from ..commgraph import CommGraph, as_commgraph

    g = as_commgraph(graph)
    keep = g.src != g.dst
    return CommGraph(p, g.src[keep], g.dst[keep], np.ones(int(keep.sum())))


def _smpi_backend(topology, exchanges, sizes, *, routing, deadline, workdir):
    from .. import smpi
    from ..smpi.platform import SINGLE_PATH_ROUTINGS

    def remaining():
        left = deadline - time.monotonic()
        if left <= 0:
            raise LibTopoMapError(f"the simulation ran past its budget of {SIMULATION_BUDGET_S:g} s")
        return left

    # built once into the user's cache (LIBTOPOMAP_SMPI_DIR or $XDG_CACHE_HOME/libtopomap/smpi), one folder per
    # source hash, so that two versions of libtopomap never rebuild over each other's binaries
    exe = {name: smpi.build([name], helpers=False, outdir=os.path.join(smpi.default_outdir(),
                                                                         f"{name}-{smpi.source_digest(name)}"))[name]
           for name in {"colls" if isinstance(e.communication, str) else "replay" for e in exchanges}}
    used = np.unique(np.concatenate([np.concatenate([e.before, e.after]) for e in exchanges]))
    info = smpi.write_platform(topology, os.path.join(workdir, "platform.xml"), format="xml",
                               routing=routing if routing in SINGLE_PATH_ROUTINGS else None,
                               hosts=[int(v) for v in used])
    names = topology.names
    results = []
    for k, ex in enumerate(exchanges):
        p = ex.before.size
        times = {}
        for side, verts in (("before", ex.before), ("after", ex.after)):
            hostfile = os.path.join(workdir, f"hosts.{k}.{side}")
            with open(hostfile, "w") as f:
                f.write("".join(f"{names[int(v)]}\n" for v in verts))
            if isinstance(ex.communication, str):
                c = ex.communication
                sim = smpi.run_once(exe["colls"], [c, ",".join(map(str, sizes)), "1"], platform=info.path,
                                    hostfile=hostfile, nprocs=p, timeout=remaining(),
                                    extra_config=[f"--cfg=smpi/{c}:{SMPI_ALGORITHMS[c]}"])
                avg = {int(b): float(t) for b, t in _COLL_LINE.findall(sim.stdout)}
                times[side] = [avg[s] for s in sizes]
            else:
                g = _unit_graph(ex.communication, p)
                times[side] = []
                for s in sizes:
                    edges = os.path.join(workdir, f"edges.{k}.{s}")
                    smpi.write_edge_list(g, edges, scale=float(s))
                    sim = smpi.run_once(exe["replay"], [edges, "1"], platform=info.path, hostfile=hostfile,
                                        nprocs=p, timeout=remaining())
                    times[side].append(sim.time)
        results.append((ex, times["before"], times["after"]))
    return f"SMPI, CM02 model, {info.routing} routing", results


def _s4u_backend(topology, exchanges, sizes, *, deadline):
    from ..simulate import compare

    results = []
    for ex in exchanges:
        c = ex.communication if isinstance(ex.communication, str) else _unit_graph(ex.communication, ex.before.size)
        left = deadline - time.monotonic()
        if left <= 0:
            raise LibTopoMapError(f"the simulation ran past its budget of {SIMULATION_BUDGET_S:g} s")
        r = compare(topology, c, ex.before, ex.after, sizes=list(sizes), timeout=left)
        results.append((ex, r["original"].times, r["mapped"].times))
    return f"SimGrid s4u replay, CM02 model, {r['original'].routing} routes", results


def simulate_exchanges(topology, exchanges, sizes, *, routing=None, budget=SIMULATION_BUDGET_S):
    """Simulated seconds of each exchange with the launcher's placement and with the mapping.

    Parameters
    ----------
    topology : Topology
    exchanges : list of Exchange
    sizes : sequence of int
        Bytes per message (per block for alltoall, the whole buffer for bcast and allreduce).
    routing : str, optional
        The command's routing model; SMPI's platform uses it when it is single-path, else the
        topology's default single-path routing.
    budget : float
        Wall seconds for all simulations together.

    Returns
    -------
    dict
        ``backend`` (a description, or ``None``), ``error`` (why nothing was simulated, or ``None``),
        ``wall_s`` and ``results``: per exchange ``exchange, backend, sizes, launcher_s, libtopomap_s,
        speedup``.
        Never raises for a missing or failing simulator.
    """
    from .._jit import python_kernels, small_enough_for_python

    p = max((e.before.size for e in exchanges), default=0)
    # a job small enough for plain-Python kernels (the demo) compiles nothing here either
    with python_kernels(topology is not None and small_enough_for_python(p, topology.n_vertices)):
        return _simulate_exchanges(topology, exchanges, sizes, routing=routing, budget=budget)


def _simulate_exchanges(topology, exchanges, sizes, *, routing, budget):
    from ..simulate import simgrid_available

    t0 = time.monotonic()
    out = {"backend": None, "error": None, "wall_s": 0.0, "results": []}
    sizes = [int(s) for s in sizes]
    p = max((e.before.size for e in exchanges), default=0)
    if p > MAX_SIMULATED_RANKS:
        out["error"] = f"{p} ranks; the commands simulate up to {MAX_SIMULATED_RANKS}"
        return out
    deadline = t0 + float(budget)
    has_smpi = all(shutil.which(os.environ.get(t.upper(), t)) for t in ("smpicc", "smpirun"))
    has_s4u = simgrid_available()
    if not (has_smpi or has_s4u):
        out["error"] = ("neither SMPI (smpicc, smpirun: apt-get install libsimgrid-dev) nor SimGrid's Python "
                        "module (apt-get install python3-simgrid) is installed")
        return out
    # A neighbour exchange runs under SMPI where installed.  A collective is the s4u replay of the very schedule
    # that was mapped where SimGrid's module is installed: the colls proxy times each rank between barriers (OSU
    # style), which under SMPI leaves out most of a Bcast's tree (8 ranks, 8 B: 6.2x, against 1.5x replayed).
    graphs = [e for e in exchanges if not isinstance(e.communication, str)]
    colls = [e for e in exchanges if isinstance(e.communication, str)]
    by_smpi = (graphs if has_smpi else []) + (colls if not has_s4u else [])
    by_s4u = [e for e in exchanges if not any(e is x for x in by_smpi)]
    found, backends = {}, []
    what = "SMPI"
    try:
        if by_smpi:
            workdir = tempfile.mkdtemp(prefix="ltm-demo-smpi-")
            try:
                backend, results = _smpi_backend(topology, by_smpi, sizes, routing=routing, deadline=deadline,
                                                 workdir=workdir)
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
            backends.append((by_smpi, backend))
            found.update((id(ex), (backend, b, a)) for ex, b, a in results)
        what = "s4u replay"
        if by_s4u:
            backend, results = _s4u_backend(topology, by_s4u, sizes, deadline=deadline)
            backends.append((by_s4u, backend))
            found.update((id(ex), (backend, b, a)) for ex, b, a in results)
    # a simulation is an extra: whatever stops it (a failed build, a timeout, an unwritable cache) is reported
    except (LibTopoMapError, OSError, subprocess.SubprocessError, KeyError, ValueError) as e:
        out["error"] = f"{what} failed: {type(e).__name__}: {e}".splitlines()[0]
        out["wall_s"] = time.monotonic() - t0
        return out
    out["backend"] = (backends[0][1] if len(backends) == 1 else
                      "; ".join(f"{', '.join(e.what.split(' (')[0] for e in exs)}: {b}" for exs, b in backends))
    out["wall_s"] = time.monotonic() - t0
    for ex in exchanges:
        backend, before, after = found[id(ex)]
        out["results"].append({"exchange": ex.what, "backend": backend, "sizes": sizes,
                               "launcher_s": [float(x) for x in before], "libtopomap_s": [float(x) for x in after],
                               "speedup": [float(b / a) if a > 0 else float("nan") for b, a in zip(before, after)]})
    return out


def format_simulated(sim):
    """The lines the commands print (labelled "simulated"; microseconds per call)."""
    from ..mpi.bench import format_size

    if sim["error"]:
        return [f"simulated on the modelled network: not available ({sim['error']})"]
    out = [(f"simulated on the modelled network ({sim['backend']}; simulated time, not measured here; "
            f"{sim['wall_s']:.1f} s to simulate), microseconds per call:"),
           f"{'exchange':32}{'size':>8}{'launcher':>12}{'libtopomap':>12}{'speed-up':>10}"]
    for r in sim["results"]:
        for s, b, a, x in zip(r["sizes"], r["launcher_s"], r["libtopomap_s"], r["speedup"]):
            out.append(f"{r['exchange']:32}{format_size(s):>8}{b * 1e6:12.4g}{a * 1e6:12.4g}{x:9.2f}x")
    return out


@contextlib.contextmanager
def wait_for_root(comm, root=0):
    """Run the block on every rank, then every rank but ``root`` sleeps until ``root`` is through it (a polled
    ``Ibarrier``, entered on ``root`` even when its block raised): the waiting ranks must not busy-poll the
    cores the simulation on ``root`` needs, as a blocking MPI call does in MPICH."""
    if comm.Get_rank() == root:
        try:
            yield
        finally:
            comm.Ibarrier().Wait()
        return
    yield
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(0.02)
