"""Scale benchmark: every strategy, threshold accepting and the portfolio at 4,096 to 262,144
processes, each measurement in its own child process with a wall-clock timeout and an optional
memory cap; Markdown table on stdout, JSON in ``benchmarks/results/scale.json``.

Usage::

    python benchmarks/bench_scale.py --quick                          # 4,096 processes, 3 machines
    python benchmarks/bench_scale.py --sizes 4096,32768 --timeout 300
    python benchmarks/bench_scale.py --sizes 262144 --instances torus --strategies rcm,greedy

Instances, for each size P (``--instances torus,fattree,dragonfly``):

* ``torus``: tori 16^3, 32^3, 64x32x32, 64^3 with the periodic 7-point stencil of the same dims,
  process labels scrambled (``scrambled_torus(dims, seed=1)``, spec ``torus-scrambled:DIMS:1``);
  the optimum puts every pair on neighbouring vertices: avg dilation 1, max congestion 1;
* ``fattree``: a k-ary n-tree with exactly P hosts (16^3, 32^3, 16^4, 64^3 hosts);
* ``dragonfly``: ``dragonfly(g, a, p, h)`` with exactly P hosts and ``g - 1 <= a h`` (one global
  link per pair of groups at least): (64, 8, 8, 8), (128, 16, 16, 8), (256, 16, 16, 16),
  (512, 32, 16, 16);

the last two carry a scrambled 3-D periodic stencil on ``stencil_dims(P)``.

Measurements (``--strategies``; default all): the constructions of ``map_processes`` (identity,
random, greedy, rcm, recursive, multisection, scotch when scotchpy is installed), ``greedy+ta`` (greedy, then
threshold accepting on congestion) and ``portfolio`` ("strategy all + refine ta": every strategy
refined by threshold accepting, the best by max congestion, as ``libtopomap map --strategy all
--refine ta`` does; the driver of ``libtopomap.portfolio`` when that module has one, see
:func:`run_portfolio`).  Threshold accepting runs the library's default number of moves, or
``--ta-budget`` seconds per run.  Each runs in a fresh ``spawn`` child that
loads the numba caches (untimed), builds the topology and the graph ("setup"), runs the strategy
("strategy s", the topology's distance data included, as a fresh call would), checks that the
mapping is a bijection into slots and calls ``evaluate`` ("evaluate s").  Peak RSS is the child's
``VmHWM`` (``/proc/self/status``; read by the parent just before it kills a child that ran out of
time).  A child past ``--timeout`` is killed and reported ``timeout``; one that hits the
``--mem-cap`` address-space limit (``RLIMIT_AS``) or is killed by the kernel is ``OOM/over cap``.
``portfolio-hopbytes`` is ``map --strategy all --objective hopbytes``; ``--race-budget`` sets the
races' ``total_budget`` (``inf``: every candidate runs, whatever the load); the portfolio rows' JSON
holds wall and CPU seconds of every phase of every candidate (``portfolio_phases``).

Peers (``--peers``, fat trees only; ``pip install -e '.[peers]'``, a missing one is skipped with a
note): KaHIP's ``process_mapping`` (fast, eco, strong) and SharedMap (fast, eco, strong;
``--peer-threads``), run by ``peer_mappers.py`` as ``bench_quality.py`` runs them (hierarchy and
distances from the tree) in the same kind of child, evaluated by the same ``evaluate``; a peer whose
estimated memory exceeds what the machine has free is skipped with the reason.  Columns "x best
peer" (hop-bytes over the best of KaHIP and SharedMap) and "time x faster peer" (strategy seconds
over the faster of them, each tool counted with its run of least hop-bytes); "cpu s" is the child's
CPU seconds in the strategy (all threads), the fairer clock on a shared machine.

The JSON and Markdown files are rewritten after every measurement, so an interrupted run keeps what
it measured.  At the end, one line per target of the scale issue (issue 11) says PASS, FAIL or why
it could not be decided.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import multiprocessing as mp
import os
import pathlib
import platform
import resource
import signal
import subprocess
import sys
import time
import traceback

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
SIZES = (4096, 32768, 65536, 262144)
TORUS = {4096: "16x16x16", 32768: "32x32x32", 65536: "64x32x32", 262144: "64x64x64"}
FATTREE = {4096: (16, 3), 32768: (32, 3), 65536: (16, 4), 262144: (64, 3)}          # k, n: k**n hosts
DRAGONFLY = {4096: (64, 8, 8, 8), 32768: (128, 16, 16, 8), 65536: (256, 16, 16, 16),  # g, a, p, h
             262144: (512, 32, 16, 16)}
FAMILIES = ("torus", "fattree", "dragonfly")
CONSTRUCTIONS = ("identity", "random", "greedy", "rcm", "recursive", "multisection", "scotch")
EXTRA = ("greedy+ta", "portfolio", "portfolio-hopbytes")
# --peers: KaHIP process mapping and SharedMap (benchmarks/peer_mappers.py), fat trees only (hierarchies)
PEER_RUNS = {"kahip-fast": "KaHIP fast", "kahip-eco": "KaHIP eco", "kahip-strong": "KaHIP strong",
             "sharedmap-fast": "SharedMap fast", "sharedmap-eco": "SharedMap eco",
             "sharedmap-strong": "SharedMap strong"}
PEER_MODULES = {"KaHIP": "kahip", "SharedMap": "chszlablib"}
PEER_TARGET = 0.97        # issue 29: hop-bytes <= 0.97x the best of KaHIP and SharedMap, no slower than the faster
PEER_MIB_PER_PROC = 0.05  # MiB per process when no smaller size ran (SharedMap strong: 2.5 GiB at 65,536)
SCRAMBLE_SEED = 1
SEED = 0


# ----------------------------------------------------------------------------------------- child

def _proc_mib(path, key):
    """The ``key:`` line of a /proc file (kB) in MiB, or None when /proc does not say."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _hwm_mib(pid="self"):
    """Peak resident set (VmHWM) of a process in MiB, or None when /proc does not say."""
    return _proc_mib(f"/proc/{pid}/status", "VmHWM")


def build_instance(inst):
    """Topology and communication graph of an instance description (public API only)."""
    import libtopomap as ltm
    from libtopomap.patterns import scrambled_torus, stencil_dims

    fam, P = inst["family"], inst["P"]
    if fam == "torus":
        topo = ltm.torus(TORUS[P])
        g = ltm.load_graph(f"torus-scrambled:{TORUS[P]}:{SCRAMBLE_SEED}")
    elif fam == "fattree":
        topo = ltm.fattree(*FATTREE[P])
        g = scrambled_torus(stencil_dims(P), seed=SCRAMBLE_SEED)
    elif fam == "dragonfly":
        topo = ltm.dragonfly(*DRAGONFLY[P])
        g = scrambled_torus(stencil_dims(P), seed=SCRAMBLE_SEED)
    else:
        raise ValueError(f"unknown family {fam!r}")
    return topo, g


def _portfolio_driver():
    """``libtopomap.portfolio`` when it has the serial race driver, else None.

    HOOK: the portfolio driver is being written concurrently with this benchmark (issue 11).  The
    adapter in :func:`run_portfolio` follows the API seen in its work in progress
    (``MappingProblem``, ``make_candidates``, ``run_portfolio(problem, candidates)`` returning a
    result whose ``winner.payload`` is the vertex per process); check it when the module lands.
    """
    try:
        mod = importlib.import_module("libtopomap.portfolio")
    except ImportError:
        return None
    if all(callable(getattr(mod, n, None)) for n in ("MappingProblem", "make_candidates", "run_portfolio")):
        return mod
    return None


def run_portfolio(topo, g, strategies, seed, ta_budget, race_budget=None, objective="congestion", on_phase=None):
    """The portfolio: every construction refined by threshold accepting, the best by max congestion;
    with ``objective="hopbytes"``, what ``map --strategy all --objective hopbytes`` runs (no
    refinement, the winner polished for hop-bytes by the race).

    Returns ``(mapping, info)``.  Uses ``libtopomap.portfolio`` when it has a driver (see
    :func:`_portfolio_driver`); otherwise the same steps through the public API, as
    ``libtopomap map --strategy all --refine ta`` runs them today: ``map_processes(strategy=s,
    refine="ta")`` for each ``s`` (the refinement's own budget: ``ta_budget`` seconds, or the
    library's default number of moves when None), each scored by ECMP max congestion.
    ``on_phase(phases)`` gets the list of timed phases after each one (a race killed at the
    timeout still reports where its time went).
    """
    import numpy as np

    import libtopomap as ltm

    pf = _portfolio_driver()
    if pf is not None:  # HOOK: adapter for the portfolio driver (see _portfolio_driver)
        problem = pf.MappingProblem(topo, g, objective=objective, time_budget=ta_budget,
                                    total_budget=race_budget)
        cands = pf.make_candidates([s for s in strategies if s != "identity"], seed=seed,
                                   refine="ta" if objective == "congestion" else None)
        phases, started = [], {}

        def progress(phase, cand, outcome):  # wall and CPU seconds of every phase of every candidate
            if outcome is None:
                started[phase, cand.index] = (time.perf_counter(), _cpu_s())
                return
            t0, c0 = started.pop((phase, cand.index))
            phases.append({"phase": phase, "label": cand.label, "wall_s": round(time.perf_counter() - t0, 3),
                           "cpu_s": round(_cpu_s() - c0, 3)})
            if on_phase is not None:
                on_phase(phases)

        t0, c0 = time.perf_counter(), _cpu_s()
        res = pf.run_portfolio(problem, cands, progress=progress)
        phases.append({"phase": "whole race", "label": "", "wall_s": round(time.perf_counter() - t0, 3),
                       "cpu_s": round(_cpu_s() - c0, 3)})
        m = ltm.Mapping(topo, np.asarray(res.winner.payload), strategy=res.winner.label)
        return m, {"portfolio_impl": "libtopomap.portfolio.run_portfolio", "portfolio_winner": res.winner.label,
                   "portfolio_skipped": [f"{x.candidate.label}: {x.reason}" for x in res.skipped],
                   "portfolio_outcomes": [{"label": o.label, "seconds": round(o.seconds, 3),
                                           "max_congestion": o.metrics.get("max_congestion"),
                                           "hop_bytes": o.metrics.get("hop_bytes"), "note": o.note}
                                          for o in res.outcomes],
                   "portfolio_phases": phases, "race_budget_s": problem.total_budget}
    if objective != "congestion":
        raise RuntimeError("portfolio-hopbytes needs the libtopomap.portfolio driver")
    best, best_val, per = None, math.inf, {}
    for s in strategies:
        t0 = time.perf_counter()
        m = ltm.map_processes(topo, g, strategy=s, refine="ta", objective="congestion", seed=seed,
                              time_budget=ta_budget)
        val = ltm.objective_value(topo, g, m, "congestion")
        per[s] = {"seconds": time.perf_counter() - t0, "congestion": float(val)}
        if val < best_val:
            best, best_val = m, val
    return best, {"portfolio_impl": "fallback: map_processes(strategy=s, refine='ta') for every strategy",
                  "portfolio_steps": per, "portfolio_winner": best.strategy}


def _cpu_s():
    """CPU seconds of this process, all its threads, user and system."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_peer(topo, g, label, opts):
    """A peer's mapping (``label`` from :data:`PEER_RUNS`): ``(mapping, info)``.

    The hierarchy and level distances come from the fat tree (``peer_mappers.machine_hierarchy``,
    as ``bench_quality.py`` computes them); that step is timed apart (``hierarchy_s``), as a user
    of KaHIP or SharedMap would write "16:16:16" and "2:4:6" by hand.  KaHIP and SharedMap run
    with seed 0 and no imbalance; SharedMap with ``opts["peer_threads"]`` threads."""
    import numpy as np

    import libtopomap as ltm
    import peer_mappers as pm

    tool, mode = label.split()
    slots = np.asarray(topo.slots, np.int64)
    t0, c0 = time.perf_counter(), _cpu_s()
    hier = pm.machine_hierarchy(topo, slots) if g.n == int(slots.sum()) else None
    info = {"hierarchy_s": time.perf_counter() - t0, "hierarchy_cpu_s": _cpu_s() - c0}
    if hier is None:
        raise ValueError(f"{tool} needs a uniform hierarchy that the job fills")
    info["hierarchy"] = ":".join(map(str, hier[0])) + " distances " + ":".join(map(str, hier[1]))
    t0 = time.perf_counter()
    if tool == "KaHIP":
        v = pm.run_kahip(pm.kahip_lib(), topo, g, slots, hier, pm.KAHIP_MODES[mode])
    else:
        info["threads"] = opts["peer_threads"]
        v = pm.run_sharedmap(topo, g, slots, hier, mode, threads=opts["peer_threads"])
    info["strategy_s"] = time.perf_counter() - t0
    return ltm.Mapping(topo, np.asarray(v, np.int64), strategy=label), info


def _check_bijection(topo, g, m):
    import numpy as np

    v = np.asarray(m.vertices, dtype=np.int64)
    if v.shape != (g.n,):
        return f"{v.size} entries for {g.n} processes"
    if v.size and (v.min() < 0 or v.max() >= topo.n_vertices):
        return "vertex index out of range"
    over = np.bincount(v, minlength=topo.n_vertices) > np.asarray(topo.slots)
    if over.any():
        return f"{int(over.sum())} vertices over their slots"
    return "ok"


def _child(conn, inst, what, opts):
    """One measurement; sends ('event', dict) messages and finally ('done', dict) or ('error', dict)."""
    def send(kind, **kw):
        kw["hwm_mib"] = _hwm_mib()
        conn.send((kind, kw))

    try:
        try:  # die with the parent (Linux): a killed benchmark leaves no child running
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except Exception:  # noqa: BLE001
            pass
        if opts.get("mem_cap_gib"):
            cap = int(opts["mem_cap_gib"] * 2 ** 30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        t0 = time.perf_counter()
        import numpy as np  # noqa: F401
        import libtopomap as ltm
        from libtopomap.mappers import compile_kernels

        compile_kernels(refine="ta")  # load the numba caches (the parent compiled them): untimed
        send("event", phase="loaded", load_s=time.perf_counter() - t0)
        t0 = time.perf_counter()
        topo, g = build_instance(inst)
        send("event", phase="setup", setup_s=time.perf_counter() - t0, n_vertices=topo.n_vertices,
             n_links=topo.n_links, P=g.n, edges=g.n_edges)
        extra = {}
        t0, c0 = time.perf_counter(), _cpu_s()
        if what in PEER_RUNS.values():
            m, extra = run_peer(topo, g, what, opts)
        elif what == "greedy+ta":
            m = ltm.map_processes(topo, g, strategy="greedy", refine="ta", objective="congestion", seed=SEED,
                                  time_budget=opts["ta_budget"])
        elif what in ("portfolio", "portfolio-hopbytes"):
            m, extra = run_portfolio(topo, g, opts["portfolio_strategies"], SEED, opts["ta_budget"],
                                     opts.get("race_budget"),
                                     objective="hopbytes" if what == "portfolio-hopbytes" else "congestion",
                                     on_phase=lambda phases: send("event", portfolio_phases=list(phases)))
        else:
            m = ltm.map_processes(topo, g, strategy=what, seed=SEED)
            # --repeat: the construction again on the same instance; the least time counts (timings on a
            # loaded machine are noisy upwards), every time is kept.  Repeats reuse the topology's distance
            # data (built in the first run): use them for growth on tori (closed form), not for first-call cost
            runs = [time.perf_counter() - t0]
            for _ in range(opts.get("repeat", 1) - 1):
                t0 = time.perf_counter()
                m = ltm.map_processes(topo, g, strategy=what, seed=SEED)
                runs.append(time.perf_counter() - t0)
            if len(runs) > 1:
                extra["strategy_runs_s"] = runs
                extra["strategy_s"] = min(runs)
        extra.setdefault("strategy_s", time.perf_counter() - t0)
        extra["strategy_cpu_s"] = _cpu_s() - c0 - extra.get("hierarchy_cpu_s", 0.0)
        send("event", phase="strategy", **extra)
        bij = _check_bijection(topo, g, m)
        t0 = time.perf_counter()
        q = ltm.evaluate(topo, g, m)
        send("done", phase="evaluate", evaluate_s=time.perf_counter() - t0, bijection=bij,
             max_congestion=q["max_congestion"], avg_dilation=q["avg_dilation"], hop_bytes=q["hop_bytes"],
             max_dilation=q["max_dilation"], chosen=getattr(m, "strategy", None))
    except MemoryError:
        send("error", status="OOM/over cap", error="MemoryError")
    except BaseException as e:  # noqa: BLE001 - reported to the parent, never raised there
        oom = isinstance(e, MemoryError) or "memory" in str(e).lower() or "alloc" in str(e).lower()
        send("error", status="OOM/over cap" if oom and opts.get("mem_cap_gib") else "error",
             error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc(limit=3))
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------- parent

def measure(inst, what, opts, timeout):
    """Run one measurement in a spawn child; never hangs longer than ``timeout`` (+ a few s)."""
    ctx = mp.get_context("spawn")
    rx, tx = ctx.Pipe(duplex=False)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    p = ctx.Process(target=_child, args=(tx, inst, what, opts), daemon=True)
    t_start = time.perf_counter()
    p.start()
    tx.close()
    try:
        return _collect(p, rx, inst, what, timeout, t_start, before)
    finally:
        if p.is_alive():  # interrupted (Ctrl-C): do not leave the child running
            p.kill()
            p.join(5)


def _collect(p, rx, inst, what, timeout, t_start, before):
    row = {"instance": inst["name"], "family": inst["family"], "P": inst["P"], "strategy": what,
           "status": "running", "load_before": round(os.getloadavg()[0], 2)}
    peak = None
    deadline = t_start + timeout
    done = False
    while not done:
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        try:
            if not rx.poll(min(left, 1.0)):
                if not p.is_alive() and not rx.poll(0):
                    break
                continue
            kind, msg = rx.recv()
        except (EOFError, OSError):
            break
        peak = msg.pop("hwm_mib", None) or peak
        row.update(msg)
        if kind == "done":
            row["status"] = "ok" if msg.get("bijection") == "ok" else f"bad mapping: {msg.get('bijection')}"
            done = True
        elif kind == "error":
            done = True
    if p.is_alive() and not done:
        peak = _hwm_mib(p.pid) or peak
        row["status"] = "timeout"
        p.kill()
    p.join(10)
    if p.is_alive() and done:  # its result is in; on a heavily loaded machine exiting can take longer
        p.kill()
        p.join(10)
    if p.is_alive():  # pragma: no cover - kill() did not take: do not hang, report it
        row["status"] += " (child did not exit)"
    elif row["status"] == "running":
        code = p.exitcode
        if code is not None and code < 0 and -code == signal.SIGKILL:
            row["status"] = "OOM/over cap"
            row["error"] = "killed by SIGKILL (kernel OOM killer?)"
        else:
            row["status"] = "error"
            row["error"] = f"child exited with code {code} without a result"
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if peak is None and after > before:  # a child that died before reporting: ru_maxrss of children
        peak = after
    row["peak_rss_mib"] = peak
    row["wall_s"] = time.perf_counter() - t_start
    row["load_after"] = round(os.getloadavg()[0], 2)   # 1-minute load averages: how loaded the machine was
    return row


def warm_caches():
    """Compile (or load) the numba kernels once, in a child, so no measurement pays compile time."""
    code = "from libtopomap.mappers import compile_kernels; compile_kernels(); compile_kernels(refine='ta')"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t0


def machine_info():
    import numba
    import numpy

    info = {"cpus": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count(), "load_average_at_start": list(os.getloadavg()),
            "python": platform.python_version(), "numpy": numpy.__version__, "numba": numba.__version__,
            "numba_threads": numba.config.NUMBA_NUM_THREADS, "platform": platform.platform()}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(("MemTotal:", "MemAvailable:")):
                    k, v = line.split(":")
                    info[k.strip().lower() + "_gib"] = round(int(v.split()[0]) / 2 ** 20, 2)
    except OSError:
        pass
    for mod in ("scipy", "scotchpy64", "libtopomap", "kahip", "chszlablib"):
        try:
            from importlib.metadata import version
            info[mod] = version(mod)
        except Exception:  # noqa: BLE001
            info[mod] = None
    try:
        repo = pathlib.Path(__file__).resolve().parents[1]
        info["git_commit"] = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                                            capture_output=True, text=True).stdout.strip() or None
        info["git_dirty"] = bool(subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--",
                                                 "libtopomap"], capture_output=True, text=True).stdout.strip())
    except OSError:
        pass
    return info


def instances(sizes, families):
    out = []
    for P in sizes:
        for fam in families:
            if fam == "torus":
                name = f"torus {TORUS[P]} scrambled"
            elif fam == "fattree":
                name = "fattree k{} n{} ".format(*FATTREE[P]) + "stencil " + _dims(P)
            else:
                name = "dragonfly {}x{}x{}x{} ".format(*DRAGONFLY[P]) + "stencil " + _dims(P)
            out.append({"name": name, "family": fam, "P": P})
    return out


def _dims(P):
    from libtopomap.patterns import stencil_dims

    return "x".join(map(str, stencil_dims(P)))


# ------------------------------------------------------------------------------ report and targets

def _f(x, fmt):
    return "" if x is None else format(x, fmt)


def _is_peer(r):
    return r["strategy"] in PEER_RUNS.values()


def peer_reference(rows, inst):
    """``(best, faster)`` of KaHIP and SharedMap on an instance, or ``(None, None)`` when neither ran.

    Each tool counts with its run of least hop-bytes (its best setting among those run);
    ``best`` is the one of them with the least hop-bytes, ``faster`` the one with the least
    strategy seconds (the issue's "the best of KaHIP and SharedMap" and "the faster of them")."""
    tools = {}
    for r in rows:
        if r["instance"] == inst and _is_peer(r) and _ok(r):
            tool = r["strategy"].split()[0]
            if tool not in tools or r["hop_bytes"] < tools[tool]["hop_bytes"]:
                tools[tool] = r
    if not tools:
        return None, None
    return (min(tools.values(), key=lambda r: r["hop_bytes"]),
            min(tools.values(), key=lambda r: r["strategy_s"]))


def markdown(rows):
    scotch = {r["instance"]: r.get("max_congestion") for r in rows
              if r["strategy"] == "scotch" and _ok(r)}
    lines = ["| instance | P | strategy | status | setup s | strategy s | cpu s | evaluate s | peak RSS MiB | "
             "max congestion | / scotch | avg dilation | hop-bytes | x best peer | time x faster peer | load |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        sc = scotch.get(r["instance"])
        ratio = r["max_congestion"] / sc if sc and r.get("max_congestion") is not None else None
        best, faster = peer_reference(rows, r["instance"])
        hb = r["hop_bytes"] / best["hop_bytes"] if best and r.get("hop_bytes") is not None else None
        tx = r["strategy_s"] / faster["strategy_s"] if faster and r.get("strategy_s") is not None else None
        status = _status(r)
        lines.append(
            f"| {r['instance']} | {r['P']} | {r['strategy']} | {status} | {_f(r.get('setup_s'), '.2f')} | "
            f"{_f(r.get('strategy_s'), '.2f')} | {_f(r.get('strategy_cpu_s'), '.1f')} | "
            f"{_f(r.get('evaluate_s'), '.2f')} | "
            f"{_f(r.get('peak_rss_mib'), '.0f')} | {_f(r.get('max_congestion'), '.3f')} | {_f(ratio, '.3f')} | "
            f"{_f(r.get('avg_dilation'), '.3f')} | {_f(r.get('hop_bytes'), '.0f')} | {_f(hb, '.3f')} | "
            f"{_f(tx, '.2f')} | "
            f"{_f(r.get('load_before'), '.1f')}-{_f(r.get('load_after'), '.1f')} |")
    return "\n".join(lines)


def growth_table(rows):
    """Markdown table of the construction seconds of rcm and greedy on the tori by P, with the
    exponent between consecutive sizes and the least-squares exponent over all of them (the
    ``P^1.3`` target); empty when fewer than two torus sizes were measured."""
    lines = []
    for s in ("rcm", "greedy"):
        pts = sorted((r["P"], r["strategy_s"]) for r in rows if r["strategy"] == s and r["family"] == "torus"
                     and r.get("strategy_s") is not None)
        if len(pts) < 2:
            continue
        if not lines:
            lines = ["| strategy | P | torus | strategy s | exponent from the previous P |", "|---|---:|---|---:|---:|"]
        for i, (P, t) in enumerate(pts):
            k = math.log(max(t, 1e-6) / max(pts[i - 1][1], 1e-6)) / math.log(P / pts[i - 1][0]) if i else None
            lines.append(f"| {s} | {P} | {TORUS[P]} | {t:.3f} | {_f(k, '.2f')} |")
        lines.append(f"| {s} | fit | {pts[0][0]}..{pts[-1][0]} | | **{_fit_exponent(pts):.2f}** |")
    return "\n".join(lines)


def _status(r):
    """Status with the timeout and the phase that was running, e.g. ``timeout (300 s) in evaluate``."""
    st = r["status"]
    if st.startswith("ok"):
        return st
    if st == "timeout":
        st += f" ({r['timeout_s']:.0f} s)"
    where = {"strategy": "evaluate", "setup": "strategy", "loaded": "setup"}.get(r.get("phase"), "start-up")
    return f"{st} in {where}"


def _ok(r):
    """A measurement with a result (a child that then did not exit in time still gave one)."""
    return r is not None and r["status"].startswith("ok")


def _fit_exponent(points):
    """Least-squares slope of log t over log P."""
    xs = [math.log(p) for p, _ in points]
    ys = [math.log(max(t, 1e-6)) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den


def targets(rows, sizes, strategies):
    """One (target, verdict, detail) per acceptance target of the scale issue."""
    by = {(r["instance"], r["strategy"]): r for r in rows}
    inst_at = {}
    for r in rows:
        inst_at.setdefault(r["P"], [])
        if r["instance"] not in inst_at[r["P"]]:
            inst_at[r["P"]].append(r["instance"])
    out = []

    def verdict(conds):
        if not conds:
            return "not measured"
        if any(c is False for c in conds):
            return "FAIL"
        if any(c is None for c in conds):
            return "undecided"
        return "PASS"

    def secs(r, key):
        if r is None:
            return None, "not run"
        if _ok(r) or (key == "strategy_s" and r.get("strategy_s") is not None):
            return r.get(key), f"{r.get(key):.1f} s"
        return math.inf, _status(r)

    # --- 32,768
    P = 32768
    if P in inst_at:
        conds, bad = [], []
        constr = [s for s in strategies if s in CONSTRUCTIONS]
        for inst in inst_at[P]:
            for s in constr:
                t, txt = secs(by.get((inst, s)), "strategy_s")
                if t is None:
                    continue
                conds.append(t <= 60)
                if t > 60:
                    bad.append(f"{inst} {s}: {txt}")
        out.append(("32,768: each strategy <= 60 s", verdict(conds), "; ".join(bad) or "all within"))
        conds, bad = [], []
        for inst in inst_at[P]:
            for s in strategies:
                r = by.get((inst, s))
                if r is None or r.get("strategy_s") is None:
                    continue  # evaluate never started
                t, txt = secs(r, "evaluate_s")
                conds.append(t <= 30)
                if t > 30:
                    bad.append(f"{inst} after {s}: {txt}")
        out.append(("32,768: evaluate <= 30 s", verdict(conds), "; ".join(bad) or "all within"))
        conds, det = [], []
        for inst in inst_at[P]:
            r = by.get((inst, "portfolio"))
            if r is None:
                continue
            t, txt = secs(r, "strategy_s")
            conds.append(t <= 120)
            det.append(f"{inst}: {txt}")
        out.append(("32,768: strategy all + refine ta <= 120 s", verdict(conds), "; ".join(det)))
        peaks = [r for r in rows if r["P"] == P and r.get("peak_rss_mib")]
        conds = [r["peak_rss_mib"] <= 2048 for r in peaks]
        worst = max(peaks, key=lambda r: r["peak_rss_mib"]) if peaks else None
        out.append(("32,768: peak RSS <= 2 GB (every measurement)", verdict(conds),
                    f"max {worst['peak_rss_mib']:.0f} MiB ({worst['instance']}, {worst['strategy']}, "
                    f"{worst['status']})" if worst else "no RSS"))
        conds, det = [], []
        for inst in inst_at[P]:
            best = _best(rows, inst)
            sc = by.get((inst, "scotch"))
            if not _ok(sc):
                conds.append(None)
                det.append(f"{inst}: scotch {'not run' if sc is None else sc['status']}")
                continue
            if best is None:
                conds.append(False)
                det.append(f"{inst}: nothing of ours finished")
                continue
            conds.append(best["max_congestion"] <= sc["max_congestion"] + 1e-9)
            det.append(f"{inst}: ours {best['max_congestion']:.3f} ({best['strategy']}) vs scotch "
                       f"{sc['max_congestion']:.3f}")
        out.append(("32,768: quality >= Scotch's on every instance (max congestion)", verdict(conds), "; ".join(det)))
        inst = next((i for i in inst_at[P] if i.startswith("torus")), None)
        if inst:
            best = _best(rows, inst, key="avg_dilation")
            ok = best is not None and best["avg_dilation"] <= 1 + 1e-9 and best["max_congestion"] <= 1 + 1e-9
            out.append(("32,768: optimum on the scrambled torus (avg dilation 1, max congestion 1)",
                        "PASS" if ok else "FAIL",
                        f"best {best['strategy']}: dilation {best['avg_dilation']:.3f}, congestion "
                        f"{best['max_congestion']:.3f}" if best else "nothing finished"))
    # --- 65,536
    P = 65536
    if P in inst_at:
        conds, det = [], []
        for inst in inst_at[P]:
            r = by.get((inst, "portfolio"))
            if r is None:
                continue
            t, txt = secs(r, "strategy_s")
            mem = r.get("peak_rss_mib")
            conds += [t <= 300, None if mem is None else mem <= 4096]
            det.append(f"{inst}: {txt}, {_f(mem, '.0f') or '?'} MiB")
        out.append(("65,536: whole portfolio <= 300 s and <= 4 GB", verdict(conds), "; ".join(det)))
    # --- peers at scale (issue 29): the portfolio against KaHIP and SharedMap on the fat trees
    for P in (32768, 65536):
        insts = [i for i in inst_at.get(P, []) if i.startswith("fattree")
                 and any(_is_peer(r) for r in rows if r["instance"] == i)]
        if not insts:
            continue
        for label in ("portfolio", "portfolio-hopbytes"):
            if not any((i, label) in by for i in insts):
                continue
            conds, det = [], []
            for inst in insts:
                best, faster = peer_reference(rows, inst)
                r = by.get((inst, label))
                if best is None:
                    conds.append(None)
                    det.append(f"{inst}: no peer finished")
                    continue
                if not _ok(r):
                    conds.append(None if r is None else False)
                    det.append(f"{inst}: {label} {'not run' if r is None else _status(r)}")
                    continue
                hb, tx = r["hop_bytes"] / best["hop_bytes"], r["strategy_s"] / faster["strategy_s"]
                conds += [hb <= PEER_TARGET + 1e-12, tx <= 1.0]
                det.append(f"{inst}: {label} {r['hop_bytes']:,.0f} = {hb:.3f}x {best['strategy']} "
                           f"{best['hop_bytes']:,.0f}; {r['strategy_s']:.1f} s = {tx:.2f}x {faster['strategy']} "
                           f"{faster['strategy_s']:.1f} s (cpu {_f(r.get('strategy_cpu_s'), '.0f')} s vs "
                           f"{_f(faster.get('strategy_cpu_s'), '.0f')} s)")
            out.append((f"{P:,} fat tree: {label} hop-bytes <= {PEER_TARGET}x best of KaHIP/SharedMap, "
                        "time <= the faster", verdict(conds), "; ".join(det)))
    # --- 262,144
    P = 262144
    inst = f"torus {TORUS[P]} scrambled"
    if P in inst_at and inst in inst_at[P]:
        conds, det, total = [], [], 0.0
        for s in ("rcm", "greedy"):
            r = by.get((inst, s))
            if r is None:
                conds.append(None)
                det.append(f"{s}: not run")
                continue
            ok = _ok(r)
            conds.append(ok)
            if ok:
                total += r["strategy_s"] + r["evaluate_s"]
                conds.append(r["peak_rss_mib"] is None or r["peak_rss_mib"] <= 8192)
                det.append(f"{s} {r['strategy_s']:.0f} s + evaluate {r['evaluate_s']:.0f} s, "
                           f"{_f(r['peak_rss_mib'], '.0f')} MiB")
            else:
                det.append(f"{s}: {_status(r)}" + (f" after {s} took {r['strategy_s']:.1f} s"
                                                   if r.get("strategy_s") is not None else ""))
        if all(c for c in conds):
            conds.append(total <= 600)
        out.append(("262,144 (64^3 torus): rcm, greedy and evaluate complete, <= 10 min in all, <= 8 GB",
                    verdict(conds), "; ".join(det)))
    # --- growth exponent on the tori
    for s in ("rcm", "greedy"):
        pts, timed_out = [], []
        for P in sorted(sizes):
            r = by.get((f"torus {TORUS[P]} scrambled", s))
            if r is None:
                continue
            if r.get("strategy_s") is not None:
                pts.append((P, r["strategy_s"]))
            elif r["status"] == "timeout":
                timed_out.append((P, r["timeout_s"]))
        label = f"{s} time grows <= P^1.3 (tori, 4,096..262,144)"
        span = f"{pts[0][0]}..{pts[-1][0]}" if pts else ""
        if len(pts) >= 2:
            k = _fit_exponent(pts)
            v = "PASS" if k <= 1.3 else "FAIL"
            det = f"fitted exponent {k:.2f} over P = {', '.join(str(p) for p, _ in pts)}"
            if timed_out:
                lb = math.log(timed_out[0][1] / pts[0][1]) / math.log(timed_out[0][0] / pts[0][0])
                det += f"; timed out at P = {timed_out[0][0]}: exponent >= {lb:.2f} from {pts[0][0]}"
                if lb > 1.3:
                    v = "FAIL"
            if pts[-1][0] < max(SIZES) and v == "PASS":
                v = "PASS (partial range)"
            out.append((label, v, det + f" (measured {span})"))
        elif len(pts) == 1 and timed_out:
            lb = math.log(timed_out[0][1] / pts[0][1]) / math.log(timed_out[0][0] / pts[0][0])
            out.append((label, "FAIL" if lb > 1.3 else "undecided",
                        f"{pts[0][1]:.1f} s at {pts[0][0]}, timeout at {timed_out[0][0]}: exponent >= {lb:.2f}"))
        else:
            out.append((label, "not measured", "needs two torus sizes"))
    return out


def _best(rows, inst, key="max_congestion"):
    ours = [r for r in rows
            if r["instance"] == inst and _ok(r) and r["strategy"] not in ("identity", "random", "scotch")
            and not _is_peer(r)]
    if not ours:
        return None
    return min(ours, key=lambda r: (r[key], r["max_congestion"] if key != "max_congestion" else r["avg_dilation"]))


def write(args, meta, rows, sizes, strategies, final):
    res = targets(rows, sizes, strategies)
    md = [markdown(rows), "", "| target | verdict | detail |", "|---|---|---|"]
    md += [f"| {a} | {b} | {c} |" for a, b, c in res]
    growth = growth_table(rows)
    if growth:
        md += ["", growth]
    m = meta["machine"]
    md.append(f"\n{m['cpus']} CPUs, {m.get('memtotal_gib', '?')} GiB, load {m['load_average_at_start'][0]:.2f} at start"
              + (f", {m['load_average_at_end'][0]:.2f} at end" if "load_average_at_end" in m else "")
              + f"; Python {m['python']}, numpy {m['numpy']}, numba {m['numba']}, scotchpy64 {m.get('scotchpy64')}; "
              f"libtopomap {m.get('git_commit')}{' (dirty)' if m.get('git_dirty') else ''}; timeout "
              f"{args.timeout:.0f} s, memory cap {args.mem_cap or 'none'} GiB, threshold accepting "
              + (f"{args.ta_budget:g} s per run" if args.ta_budget else "library default moves")
              + ("" if final else " (run in progress)"))
    text = "\n".join(md)
    for path, data in ((args.md, text + "\n"),
                       (args.json, json.dumps({**meta, "rows": rows, "final": final,
                                               "targets": [{"target": a, "verdict": b, "detail": c}
                                                           for a, b, c in res]}, indent=1, default=str))):
        pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(path).write_text(data)
    return text, res


def select_peers(spec, ap):
    """``(labels, notes)``: the peer runs of ``--peers`` whose package is installed, and a note for
    each one skipped because it is not."""
    names = list(PEER_RUNS) if spec.strip() == "all" else [x.strip() for x in spec.split(",") if x.strip()]
    unknown = [x for x in names if x not in PEER_RUNS]
    if unknown:
        ap.error(f"unknown peers {unknown}; choose from {','.join(PEER_RUNS)} or all")
    labels, notes = [], []
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import peer_mappers as pm

    for x in names:
        label = PEER_RUNS[x]
        module = PEER_MODULES[label.split()[0]]
        ok = pm.kahip_lib() is not None if module == "kahip" else pm.have(module)
        if ok:
            labels.append(label)
        else:
            notes.append(f"{label} skipped: {module} is not installed (pip install -e '.[peers]')")
    return labels, notes


def _mem_available_mib():
    return _proc_mib("/proc/meminfo", "MemAvailable")


def memory_skip(inst, label, rows):
    """Why a peer run should not start (the machine's free memory cannot hold it), or None.

    Needed: 1.25x its peak RSS at the largest smaller size of this run scaled by the process
    count, else :data:`PEER_MIB_PER_PROC` per process; the machine is shared, so what counts is
    ``MemAvailable`` now, less 1 GiB for everybody else."""
    prev = [r for r in rows if r["strategy"] == label and r.get("peak_rss_mib") and r["P"] < inst["P"]
            and _ok(r)]
    if prev:
        r = max(prev, key=lambda r: r["P"])
        need = 1.25 * r["peak_rss_mib"] * inst["P"] / r["P"]
        basis = f"1.25x {r['peak_rss_mib']:.0f} MiB at {r['P']:,} scaled"
    else:
        need = PEER_MIB_PER_PROC * inst["P"]
        basis = f"{PEER_MIB_PER_PROC} MiB per process"
    free = _mem_available_mib()
    if free is not None and free - 1024 < need:
        return f"not run: needs ~{need:.0f} MiB ({basis}), {free:.0f} MiB available less 1 GiB kept free"
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", help=f"comma-separated process counts from {','.join(map(str, SIZES))} (default all)")
    ap.add_argument("--strategies", help=f"comma-separated from {','.join(CONSTRUCTIONS + EXTRA)} (default all; "
                                         "scotch only with scotchpy)")
    ap.add_argument("--instances", default="torus,fattree,dragonfly", help="families (default all three)")
    ap.add_argument("--timeout", type=float, default=600.0, help="wall-clock seconds per measurement (default 600)")
    ap.add_argument("--mem-cap", type=float, default=None,
                    help="GiB of address space per child (RLIMIT_AS); default: 3/4 of physical memory, 0: none")
    ap.add_argument("--ta-budget", type=float, default=None,
                    help="seconds of each threshold accepting run in greedy+ta and the portfolio "
                         "(default: none, the library's default number of moves)")
    ap.add_argument("--race-budget", type=float, default=None,
                    help="the portfolio's total_budget in seconds (default: the library's; 'inf': none, every "
                         "candidate runs whatever the load)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each construction this many times in its child and report the least time "
                         "(default 1; the portfolio and greedy+ta always run once)")
    ap.add_argument("--peers", default="",
                    help=f"comma-separated peer runs on the fat trees, from {','.join(PEER_RUNS)}, or 'all' "
                         "(default none; needs the peers extra: pip install -e '.[peers]')")
    ap.add_argument("--peer-threads", type=int, default=1, help="SharedMap's threads (default 1)")
    ap.add_argument("--quick", action="store_true", help="only 4,096 processes (torus, fat tree and dragonfly)")
    ap.add_argument("--json", default=str(RESULTS / "scale.json"))
    ap.add_argument("--md", default=str(RESULTS / "scale.md"))
    ap.add_argument("--render", metavar="JSON", help="no measurements: rewrite the table and targets of a "
                                                     "previous run's JSON (to --md, and the JSON in place)")
    args = ap.parse_args(argv)
    if args.render:
        old = json.loads(pathlib.Path(args.render).read_text())
        o = old["options"]
        args.json, args.timeout = args.render, o["timeout_s"]
        args.mem_cap, args.ta_budget = o["mem_cap_gib"], o["ta_budget_s"]
        meta = {k: v for k, v in old.items() if k not in ("rows", "final", "targets")}
        text, res = write(args, meta, old["rows"], o["sizes"], o["strategies"], final=old["final"])
        print(text)
        return 0

    from libtopomap.mappers import HAVE_SCOTCH  # noqa: F401 - via the public package
    from libtopomap.mappers import STRATEGIES

    sizes = [4096] if args.quick else ([int(x) for x in args.sizes.split(",")] if args.sizes else list(SIZES))
    bad = [P for P in sizes if P not in TORUS]
    if bad:
        ap.error(f"sizes must be among {SIZES}, got {bad}")
    families = [f.strip() for f in args.instances.split(",") if f.strip()]
    if any(f not in FAMILIES for f in families):
        ap.error(f"instances must be among {FAMILIES}")
    available = [s for s in CONSTRUCTIONS if s in STRATEGIES] + list(EXTRA)
    wanted = [s.strip() for s in args.strategies.split(",")] if args.strategies else available
    unknown = [s for s in wanted if s not in CONSTRUCTIONS + EXTRA]
    if unknown:
        ap.error(f"unknown strategies {unknown}")
    skipped = [s for s in wanted if s not in available]
    if skipped:
        print(f"note: {', '.join(skipped)} not available (scotchpy missing): skipped", file=sys.stderr)
    strategies = [s for s in wanted if s in available]
    peers, peer_skips = select_peers(args.peers, ap)
    for why in peer_skips:
        print(f"note: {why}", file=sys.stderr)
    if args.mem_cap is None:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
        args.mem_cap = round(0.75 * total, 1)
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    opts = {"mem_cap_gib": args.mem_cap or None, "ta_budget": args.ta_budget, "repeat": args.repeat,
            "portfolio_strategies": list(STRATEGIES), "peer_threads": args.peer_threads,
            "race_budget": args.race_budget}
    meta = {"machine": machine_info(), "options": {"sizes": sizes, "instances": families, "strategies": strategies,
                                                  "timeout_s": args.timeout, "mem_cap_gib": args.mem_cap or None,
                                                  "ta_budget_s": args.ta_budget, "quick": args.quick,
                                                  "repeat": args.repeat, "peers": peers,
                                                  "race_budget_s": args.race_budget,
                                                  "peer_threads": args.peer_threads, "peers_skipped": peer_skips,
                                                  "scramble_seed": SCRAMBLE_SEED, "seed": SEED,
                                                  "portfolio_impl": "libtopomap.portfolio" if _portfolio_driver()
                                                  else "fallback (no libtopomap.portfolio driver)"}}
    meta["warm_compile_s"] = warm_caches()
    print(f"numba kernels compiled/loaded in {meta['warm_compile_s']:.1f} s", file=sys.stderr)
    rows = []
    t_all = time.perf_counter()
    for inst in instances(sizes, families):
        for s in strategies + (peers if inst["family"] == "fattree" else []):
            why = memory_skip(inst, s, rows) if s in peers else None
            r = measure(inst, s, opts, args.timeout) if why is None else {
                "instance": inst["name"], "family": inst["family"], "P": inst["P"], "strategy": s,
                "status": "skipped", "error": why, "load_before": round(os.getloadavg()[0], 2)}
            r["timeout_s"] = args.timeout
            r["load_average"] = os.getloadavg()[0]
            rows.append(r)
            print(f"  {r['instance']:<36} {s:<10} {r['status']:<12} strategy {_f(r.get('strategy_s'), '8.2f'):>8} s"
                  f"  evaluate {_f(r.get('evaluate_s'), '7.2f'):>7} s  peak {_f(r.get('peak_rss_mib'), '6.0f'):>6} MiB"
                  f"  cong {_f(r.get('max_congestion'), '.3f')}  dil {_f(r.get('avg_dilation'), '.3f')}"
                  + (f"  [{r['error']}]" if r.get("error") else ""), file=sys.stderr, flush=True)
            write(args, meta, rows, sizes, strategies, final=False)
    meta["machine"]["load_average_at_end"] = list(os.getloadavg())
    meta["total_s"] = time.perf_counter() - t_all
    text, res = write(args, meta, rows, sizes, strategies, final=True)
    print(text)
    print()
    for a, b, c in res:
        print(f"TARGET {a}: {b} -- {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
