"""Measure, map, rerun: an SMPI program in the launcher's order, then where libtopomap maps it.

:func:`run` exports the platform, runs the program with ``smpirun`` while SMPI traces it (its Paje trace by
default: every message, collectives on any communicator), maps the traced graph under the platform's routing
and runs it again with the mapping's hostfile, under CM02 with cross-traffic off (:data:`SMPI_CONFIG`).
:func:`run_once` is the one place that builds an smpirun command line.  The steps, why that model and
which trace: docs/simulation.rst, "Measure, map, rerun: ``smpi run``".
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from ..errors import ArgumentError, MappingError
from ..loading import as_topology
from ..vocabulary import check_choice
from .build import SmpiError, build, parse_result, require_tool, tail
from .collectives import algorithms_of
from .traces import rank_files, read_paje_trace, read_ti_trace

__all__ = ["run", "run_once", "SmpiRunResult", "Simulation", "datatype_sizes", "SMPI_CONFIG"]

#: smpirun options of every run (see the module docstring).  No speed option is added: on a scrambled halo
#: SimGrid spends ~90% in its max-min solver, and of the options measured (benchmarks/results/smpi_s11_perf.md)
#: those that save CPU there change the simulated times (``surf/precision``) or cost 6x on an ordered torus
#: (``network/optim:Full``); context factories and stack sizes change nothing measurable.
SMPI_CONFIG = ("--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--cfg=smpi/display-timing:1")

_SIMTIME = re.compile(r"Simulated time: ([0-9.eE+-]+) seconds")
# SimGrid's log lines, smpirun's echo of the command and its "Execution failed" line
_NOISE = re.compile(r"^(\[[^\]]*\] .*\[[\w./-]+/(INFO|WARNING|CRITICAL|ERROR|VERBOSE|DEBUG)\]"
                    r"|\S+ --cfg=|Execution failed with code|The simulation took "
                    r"|[0-9.e+-]+ seconds were actual computation)")


@dataclass
class Simulation:
    """One smpirun of the program.

    Attributes
    ----------
    time : float
        Simulated seconds: the program's own ``LTM_RESULT ... time=`` when it prints one (the proxies
        do), else SMPI's end of simulation.
    simulated_end : float or None
        SMPI's ``Simulated time`` (end of the simulation, 6 digits).
    wall : float
        Wall seconds of the smpirun.
    hostfile : str
    result : dict or None
        The program's ``LTM_RESULT`` fields.
    stdout : str
    cpu : float
        CPU seconds (user + system) of the smpirun and its simulation.
    """

    time: float
    simulated_end: float | None
    wall: float
    hostfile: str
    result: dict | None = None
    stdout: str = ""
    cpu: float = 0.0


@dataclass
class SmpiRunResult:
    """What :func:`run` measured.

    Attributes
    ----------
    before, after : Simulation
        The launcher's order and the mapping.
    speedup : float
        ``before.time / after.time``.
    strategy : str
        The portfolio's winner (``identity`` when nothing beat the launcher's order).
    routing : str
        The routing model of the platform and of the metrics.
    metrics_before, metrics_after : dict
        :func:`libtopomap.metrics.evaluate` of both placements under ``routing`` (max congestion,
        hop-bytes, dilation...).
    graph : dict
        The traced graph: ``processes, edges, bytes, messages, collectives, collective_bytes,
        not_expanded, unknown_datatypes`` (:class:`~libtopomap.smpi.TraceSummary`), and ``source``: the
        trace read (``smpi-trace-paje``, ``smpi-trace-ti``) or ``given``.
    phases : dict
        Wall seconds of ``platform``, ``run_before``, ``trace``, ``mapping``, ``run_after``, ``total``.
    phases_cpu : dict
        CPU seconds (user + system) of the same phases, this process's and its smpirun children's: on a
        shared machine the wall time grows with the load, the CPU time does not.
    skipped : list of str
        Why candidates of the race did not run: one reached the lower bound (nothing can beat it), or the
        race's wall-clock budget ran out (on a loaded machine, or while numba compiles on a first run): then
        the winner can differ from run to run.
    placement_before, placement_after : list of str
        Host of every rank.
    platform : dict
        :class:`~libtopomap.smpi.PlatformInfo` fields but the host names.
    """

    before: Simulation
    after: Simulation
    speedup: float
    strategy: str
    routing: str
    metrics_before: dict
    metrics_after: dict
    graph: dict
    phases: dict
    placement_before: list
    placement_after: list
    platform: dict = field(default_factory=dict)
    phases_cpu: dict = field(default_factory=dict)
    skipped: list = field(default_factory=list)

    def to_dict(self, *, with_output=False):
        """JSON-ready dict (``with_output``: keep each run's stdout)."""
        d = asdict(self)
        if not with_output:
            for k in ("before", "after"):
                d[k].pop("stdout", None)
        return d

    def summary(self):
        """A few human-readable lines."""
        mb, ma = self.metrics_before, self.metrics_after
        p = self.phases
        return "\n".join([
            f"simulated time (SMPI, CM02, routing {self.routing}): launcher order {self.before.time:.6e} s, "
            f"mapped ({self.strategy}) {self.after.time:.6e} s, speed-up {self.speedup:.3f}x",
            f"model ({self.routing}): max congestion {mb['max_congestion']:.6g} -> {ma['max_congestion']:.6g}, "
            f"hop-bytes {mb['hop_bytes']:.6g} -> {ma['hop_bytes']:.6g}, "
            f"avg dilation {mb['avg_dilation']:.4g} -> {ma['avg_dilation']:.4g}",
            f"graph ({_SOURCES.get(self.graph.get('source'), 'given')}): {self.graph['processes']} processes, "
            f"{self.graph['edges']} edges, "
            f"{self.graph['bytes']:.6g} bytes: {self.graph['messages']} point-to-point messages, "
            f"{self.graph.get('collective_bytes', 0):.6g} bytes of collectives",
            "wall time: " + ", ".join(f"{k} {v:.2f} s" for k, v in p.items()),
            "CPU time: " + ", ".join(f"{k} {v:.2f} s" for k, v in self.phases_cpu.items()),
        ] + [f"not run: {r}" for r in self.skipped])


_SOURCES = {"smpi-trace-paje": "from SMPI's Paje trace", "smpi-trace-ti": "from SMPI's time-independent trace"}


def _children_cpu():
    """User + system seconds of this process's finished children (the smpiruns)."""
    t = os.times()
    return t.children_user + t.children_system


def _cpu_seconds():
    """User + system seconds of this process and of its finished children (the smpiruns)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class _Phases:
    """Wall and CPU seconds of consecutive phases: ``start(name)`` ends the previous one."""

    def __init__(self):
        self.wall, self.cpu = {}, {}
        self._t0, self._c0 = time.perf_counter(), _cpu_seconds()
        self._name = None

    def start(self, name):
        self.stop()
        self._name, self._start = name, (time.perf_counter(), _cpu_seconds())

    def stop(self):
        if self._name is not None:
            self.wall[self._name] = time.perf_counter() - self._start[0]
            self.cpu[self._name] = _cpu_seconds() - self._start[1]
        self._name = None

    def total(self):
        self.stop()
        self.wall["total"] = time.perf_counter() - self._t0
        self.cpu["total"] = _cpu_seconds() - self._c0


def _clean_stderr(text):
    return "\n".join(x for x in str(text).splitlines() if not _NOISE.match(x))


def run_once(binary, args=(), *, platform, hostfile, nprocs, trace=None, paje=None, compute=False, timeout=None,
             extra_config=()):
    """One ``smpirun`` of ``binary`` -> :class:`Simulation`.

    Parameters
    ----------
    binary : str
    args : sequence of str
    platform, hostfile : str
        Platform (XML, or a platform library ``.so`` of :func:`libtopomap.smpi.write_platform`) and
        hostfile (line ``i``: the host of rank ``i``).
    nprocs : int
    trace : str, optional
        Write SMPI's time-independent trace with this index file (:func:`~libtopomap.smpi.read_ti_trace`).
    paje : str, optional
        Write SMPI's Paje trace to this file, with the messages of the collectives and their sizes
        (:func:`~libtopomap.smpi.read_paje_trace`).  One run writes one trace: not with ``trace``.
    compute : bool
        Simulate the time spent between MPI calls (not deterministic).
    timeout : float, optional
    extra_config : sequence of str
        More ``--cfg=...`` options (e.g. ``--cfg=smpi/bcast:binomial_tree``).

    Raises
    ------
    SmpiUnavailable
        No smpirun.
    SmpiError
        The program failed: its exit status and last stderr lines.
    """
    smpirun = require_tool("smpirun")
    cmd = [smpirun, "-np", str(int(nprocs)), "-platform", os.fspath(platform), "-hostfile", os.fspath(hostfile)]
    cmd += _trace_options(trace, paje)
    cmd += list(SMPI_CONFIG)
    if not compute:
        cmd.append("--cfg=smpi/simulate-computation:0")
    cmd += list(extra_config)
    cmd += [binary, *map(str, args)]
    t0, c0 = time.perf_counter(), _children_cpu()
    res = _run_group(cmd, timeout, os.path.basename(binary))
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    # smpirun exits 0 when the program calls MPI_Abort or a rank never reaches MPI_Finalize
    status = (f"exit status {res.returncode}" if res.returncode != 0 else
              "called MPI_Abort" if "MPI_Abort was called" in res.stderr else
              "deadlocked" if "Deadlock detected" in res.stderr else
              "a rank did not call MPI_Finalize" if "Stalling SMPI instance" in res.stderr else None)
    if status is not None:
        err = tail(_clean_stderr(res.stderr)) or tail(res.stdout) or tail(res.stderr) or "no output"
        raise SmpiError(f"{os.path.basename(binary)} failed under smpirun ({status}): {err}")
    m = _SIMTIME.findall(res.stderr)
    end = float(m[-1]) if m else None
    result = parse_result(res.stdout)
    t = result.get("time") if result else None
    if not isinstance(t, float):
        t = end
    if t is None:
        raise SmpiError(f"{os.path.basename(binary)}: no simulated time in smpirun's output: {tail(res.stderr)}")
    return Simulation(float(t), end, wall, os.fspath(hostfile), result, res.stdout, cpu)


def _trace_options(trace, paje):
    """smpirun's options for the time-independent trace (index file ``trace``) or the Paje trace ``paje``.

    SimGrid writes one trace format per run (``tracing/smpi/format``).  The Paje trace needs
    ``internals`` for the messages of the collective algorithms (without it only the program's own
    point-to-point messages are links) and ``display-sizes`` for their bytes.
    """
    if trace and paje:
        raise ArgumentError("SMPI writes one trace per run: the time-independent trace or the Paje trace, not both")
    if trace:
        return ["-trace-ti", f"--cfg=tracing/filename:{os.path.abspath(trace)}"]
    if paje:
        return ["-trace", f"--cfg=tracing/filename:{os.path.abspath(paje)}", "--cfg=tracing/smpi/internals:yes",
                "--cfg=tracing/smpi/display-sizes:yes"]
    return []


def _run_group(cmd, timeout, what):
    """Run ``cmd`` in its own process group -> CompletedProcess; on timeout or a signal kill the whole group.

    smpirun is a shell script that starts ``smpimain``: killing smpirun alone (what
    ``subprocess.run(timeout=)`` does) leaves the simulation running, orphaned, for as long as it takes.
    Its own group keeps it from the terminal's Ctrl-C, so SIGTERM, SIGHUP and SIGINT to this process
    raise :class:`~libtopomap.errors.Interrupted` while it runs (:func:`_signals_raise`), which ends
    the group before it propagates.
    """
    import signal

    with _signals_raise(what):
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
        except OSError as e:
            raise SmpiError(f"cannot start smpirun: {e}") from None
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException as e:  # the timeout, or a signal: no simulation outlives its run
            with contextlib.suppress(ProcessLookupError):  # the group ended on its own meanwhile
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            if isinstance(e, subprocess.TimeoutExpired):
                raise SmpiError(f"{what} did not finish within {timeout:g} s under smpirun") from None
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@contextlib.contextmanager
def _signals_raise(what):
    """While the block runs, SIGTERM, SIGHUP and SIGINT raise :class:`~libtopomap.errors.Interrupted`
    (their default actions end the process at once, with no chance to end its children); the handlers
    before are restored after.  Only the main thread can set handlers: elsewhere nothing changes."""
    import signal
    import threading

    from ..errors import Interrupted

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Interrupted(signum, f"{what} under smpirun")

    saved = {}
    try:
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            if signal.getsignal(s) is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored
                saved[s] = signal.signal(s, handler)
        yield
    finally:
        for s, h in saved.items():
            signal.signal(s, h)


_DTYPE_CACHE = {}


def datatype_sizes(outdir=None, *, workdir=None):
    """SMPI's datatype number -> bytes, as its time-independent trace writes them, measured by the
    ``dtypes`` helper (one 1-rank run, cached per output folder in ``dtypes.json``)."""
    import json

    exe = build(["dtypes"], outdir=outdir, helpers=False)["dtypes"]
    cache = exe + ".json"
    if exe in _DTYPE_CACHE:
        return _DTYPE_CACHE[exe]
    if os.path.exists(cache) and os.path.getmtime(cache) >= os.path.getmtime(exe):
        with open(cache) as f:
            sizes = {int(k): int(v) for k, v in json.load(f).items()}
        _DTYPE_CACHE[exe] = sizes
        return sizes

    tmp = tempfile.mkdtemp(prefix="ltm-dtypes-", dir=workdir)
    try:
        plat = os.path.join(tmp, "one.xml")
        with open(plat, "w") as f:
            f.write("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                    '<platform version="4.1"><zone id="z" routing="Full"><host id="h" speed="1Gf"/></zone>'
                    "</platform>\n")
        hf = os.path.join(tmp, "hosts")
        with open(hf, "w") as f:
            f.write("h\n")
        index = os.path.join(tmp, "ti.txt")
        sim = run_once(exe, platform=plat, hostfile=hf, nprocs=1, trace=index)
        size_of_tag = {int(k): int(v) for k, v in re.findall(r"^LTM_DTYPE (\d+) (\d+)$", sim.stdout, re.M)}
        sizes = {}
        for path in rank_files(index):
            with open(path) as f:
                for line in f:
                    p = line.split()
                    if len(p) >= 6 and p[1] == "isend":
                        sizes[int(p[5])] = size_of_tag[int(p[3])]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not sizes:
        raise SmpiError("the datatype calibration found no message in SMPI's trace")
    with open(cache, "w") as f:
        json.dump({str(k): v for k, v in sorted(sizes.items())}, f)
    _DTYPE_CACHE[exe] = sizes
    return sizes


def _program(app):
    path = app if os.sep in app else (shutil.which(app) or app)
    if not os.path.isfile(path):
        raise ArgumentError(f"no such program: {app}")
    if not os.access(path, os.X_OK):
        raise ArgumentError(f"program {app} is not executable")
    return os.path.abspath(path)


def _write_hostfile(path, hosts):
    with open(path, "w") as f:
        f.write("".join(f"{h}\n" for h in hosts))


def run(app, args=(), *, topology, nprocs, allocation=None, ranks_per_host=None, strategy="all", routing=None,
        objective="congestion", refine=None, seed=0, graph=None, trace="paje", bandwidth=None, latency="100ns",
        compute=False, workdir=None, timeout=None, extra_config=(), proxies_dir=None):
    """Run an SMPI program in the launcher's order, map its traced graph, rerun it mapped.

    Parameters
    ----------
    app : str
        The program, built with ``smpicc`` (a path, or a name on ``PATH``).
    args : sequence of str
        Its arguments.
    topology : Topology or str
        The machine (a topology file is read with :func:`libtopomap.load`).
    nprocs : int
        Ranks (``smpirun -np``).
    allocation : str or Allocation, optional
        The job's hosts in launch order (a hostfile or a Slurm node list, see
        :func:`libtopomap.rankfiles.read_allocation`); default every host of the topology in vertex order
        with its slots.
    ranks_per_host : int, optional
        Slots per allocation host that the allocation does not size (default ``ceil(nprocs / hosts)``).
    strategy : str
        A mapping strategy, or ``"all"`` (the portfolio: every strategy raced).
    routing : str, optional
        Routing model of the platform and of the mapping's scores (a single-path model; default the
        platform's: the topology's native routing, ``dimension-order`` on tori, ``table`` elsewhere).
    objective : {"congestion", "dilation", "hopbytes"}
    refine : str, optional
        Refinement of the best constructions (``ta``, ``two-opt``, ``hb-swap``).
    seed : int
    graph : CommGraph or str, optional
        Map this graph instead of the traced one.
    trace : {"paje", "ti"}
        Which SMPI trace gives the graph (``REGISTRY["smpi-trace"]``): ``paje`` (default,
        :func:`~libtopomap.smpi.read_paje_trace`) has every message SMPI sent, collectives on any
        communicator and with any algorithm; ``ti`` (:func:`~libtopomap.smpi.read_ti_trace`) is 6-30
        times smaller and its run costs 15-45% less CPU, but takes every collective over all ranks
        as its modelled algorithm (a program's collectives on sub-communicators map 1.00x) and cannot see
        ``MPI_Startall``'s messages.  Measured in docs/simulation.rst, "Which trace".
    bandwidth, latency : str or float
        Of a link of capacity 1 (:func:`libtopomap.smpi.write_platform`; default bandwidth: an ingested
        fabric's own link rates, else 100 Gb/s).
    compute : bool
        Simulate the computation between MPI calls (``False``: deterministic times).
    workdir : str, optional
        Keep the platform, hostfiles and trace there (default: a temporary folder, removed).
    timeout : float, optional
        Seconds per smpirun.
    extra_config : sequence of str
        More smpirun ``--cfg=`` options.
    proxies_dir : str, optional
        Where the ``dtypes`` calibration helper of ``trace="ti"`` and the next-hop zone are built (default
        :func:`libtopomap.smpi.default_outdir`).

    Returns
    -------
    SmpiRunResult

    Raises
    ------
    SmpiUnavailable
        No smpirun or smpicc ("install libsimgrid-dev").
    SmpiError
        The program failed (exit status, last stderr lines), or no traffic was traced.
    ArgumentError, MappingError, TopologyError
        Bad inputs: unknown routing, more ranks than slots, a host not in the topology...
    """
    from ..commgraph import as_commgraph
    from ..metrics import evaluate
    from ..rankfiles import Allocation, allocation_topology, read_allocation
    from .platform import write_platform

    phases = _Phases()
    trace = check_choice("smpi-trace", trace)
    require_tool("smpirun")
    binary = _program(app)
    nprocs = int(nprocs)
    if nprocs < 1:
        raise ArgumentError(f"the number of ranks must be >= 1, got {nprocs}")
    topology = as_topology(topology)
    if allocation is None:
        hv = [int(v) for v in topology.hosts]
        alloc = Allocation(tuple(topology.names[v] for v in hv),
                           tuple(int(ranks_per_host or topology.slots[v]) for v in hv))
    elif isinstance(allocation, Allocation):
        alloc = allocation
    else:
        alloc = read_allocation(os.fspath(allocation), ranks_per_host=ranks_per_host, nprocs=nprocs)
    restricted, launch = allocation_topology(topology, alloc)
    if nprocs > launch.size:
        raise MappingError(f"{nprocs} ranks but the allocation has {launch.size} slots ({len(alloc.hosts)} hosts); "
                           "raise --ranks-per-host")
    launch = launch[:nprocs]
    names = topology.names
    before_hosts = [names[int(v)] for v in launch]

    own = workdir is None
    wd = tempfile.mkdtemp(prefix="ltm-smpi-") if own else os.path.abspath(workdir)
    os.makedirs(wd, exist_ok=True)
    try:
        phases.start("platform")
        # format auto: a TORUS cluster (XML) where it provably matches, else the next-hop table zone (a
        # platform library: hosts x vertices bytes) for destination-based routings, else explicit routes (XML)
        info = write_platform(topology, os.path.join(wd, "platform"), routing=routing, bandwidth=bandwidth,
                              latency=latency, hosts=list(alloc.hosts), format="auto", outdir=proxies_dir)
        phases.stop()
        ti = graph is None and trace == "ti"
        sizes = datatype_sizes(proxies_dir) if ti else None
        algorithms = algorithms_of(extra_config) if ti else None  # refuses collectives it does not model
        hf_before = os.path.join(wd, "hostfile.launcher")
        _write_hostfile(hf_before, before_hosts)
        index = os.path.join(wd, "trace", "ti.txt") if ti else None
        paje = os.path.join(wd, "trace", "paje.trace") if graph is None and not ti else None
        if graph is None:
            os.makedirs(os.path.join(wd, "trace"), exist_ok=True)
        phases.start("run_before")
        before = run_once(binary, args, platform=info.path, hostfile=hf_before, nprocs=nprocs, trace=index,
                          paje=paje, compute=compute, timeout=timeout, extra_config=extra_config)
        phases.start("trace")
        if graph is None:
            g, tr = (read_ti_trace(index, nprocs, sizes, algorithms=algorithms) if ti
                     else read_paje_trace(paje, nprocs))
            if g.n_edges == 0:
                calls = ", ".join(f"{k} x{v}" for k, v in sorted(tr["collectives"].items())) or "none"
                raise SmpiError(f"{os.path.basename(binary)} sent no message between ranks (collective calls: "
                                f"{calls}): give the graph to map (--graph)")
        else:
            from ..patterns import load_graph

            g = load_graph(graph) if isinstance(graph, str) else as_commgraph(graph)
            if g.n != nprocs:
                raise ArgumentError(f"the graph has {g.n} processes but the run has {nprocs} ranks")
            tr = {"messages": None, "bytes": float(g.weights.sum()), "collectives": {}, "unknown_datatypes": []}

        phases.start("mapping")
        from ..portfolio import STRATEGY_ORDER, MappingProblem, make_candidates, run_portfolio
        from ..vocabulary import STRATEGIES

        if strategy == "all":
            strategies = [x for x in STRATEGY_ORDER if x in STRATEGIES]
        else:
            strategies = [check_choice("strategy", strategy, choices=("all",) + STRATEGIES)]
        problem = MappingProblem(restricted, g, placement=launch, objective=objective, routing=info.routing)
        cands = make_candidates(strategies, seed=seed, refine=refine, starts=np.flatnonzero(problem.slots))
        result = run_portfolio(problem, cands)
        mapped = np.asarray(result.winner.payload, dtype=np.int64)
        after_hosts = [names[int(v)] for v in mapped]
        m_before = evaluate(restricted, g, launch, routing=info.routing)
        m_after = evaluate(restricted, g, mapped, routing=info.routing)
        phases.stop()

        from ..rankfiles import emit_slurm_hostfile

        hf_after = os.path.join(wd, "hostfile.mapped")
        with open(hf_after, "w") as f:
            f.write(emit_slurm_hostfile(after_hosts, alloc))
        phases.start("run_after")
        after = run_once(binary, args, platform=info.path, hostfile=hf_after, nprocs=nprocs, compute=compute,
                         timeout=timeout, extra_config=extra_config)
    finally:
        if own:
            shutil.rmtree(wd, ignore_errors=True)
    phases.total()
    if own:
        before.hostfile = after.hostfile = None
    gsum = {"processes": g.n, "edges": g.n_edges, "bytes": float(g.weights.sum()), "messages": tr["messages"],
            "collectives": tr["collectives"], "collective_bytes": tr.get("collective_bytes", 0),
            "not_expanded": tr.get("not_expanded", {}), "unknown_datatypes": tr["unknown_datatypes"],
            "source": f"smpi-trace-{trace}" if graph is None else "given"}
    plat = {"path": None if own else info.path, "routes": info.routes, "bytes": info.bytes, "seconds": info.seconds,
            "zone": info.zone, "routing": info.routing, "hosts": len(info.hostnames), "table_bytes": info.table_bytes}
    return SmpiRunResult(before, after, before.time / after.time if after.time > 0 else float("inf"),
                         result.winner.label, info.routing, m_before, m_after, gsum, phases.wall, before_hosts,
                         after_hosts, plat, phases.cpu, [s.reason for s in result.skipped])
