"""Long fuzz run of every reader and of the command line: N mutated inputs, zero crashes allowed.

Usage: ``python benchmarks/fuzz_ingest.py [-n 200000] [--seed 0] [--jobs 2] [--memory 3] [--out PREFIX] [--family F]``

Each input goes to one family, in turn:

* ``topology``: a window (1-60 lines) of the shared fabric dumps, ``topology_files/`` and the bundled
  LTM/JSON topologies, mutated 0-5 times (line swaps, deletions, duplications, truncation, random
  bytes, random lines, CRLF/CR/BOM/TAB changes), read by every topology format (``ltm``, ``json``,
  ``ibnetdiscover``, ``ibnetdiscover-ports``, ``slurm``, ``ibdiagnet-lst``, ``slurm-yaml``; the
  adapters strict and not) and by the sniffed one;
* ``slurm-yaml``: mutated ``topology.yaml`` documents, read as ``slurm-yaml``;
* ``graph``: mutated edge lists, dense matrices (``.mat``), Matrix Market files and Open MPI
  monitoring ``.prof`` files, written to a file and read by :func:`libtopomap.load_graph` and by
  the reader of their kind;
* ``hosts``: mutated hostfiles and Slurm hostlists (:func:`libtopomap.rankfiles.read_allocation`)
  and fake-names files (:func:`libtopomap.mpi.location.read_fake_names`);
* ``misc``: the other readers, each on a mutated sample: GUID -> hostname maps
  (:func:`~libtopomap.adapters.read_hostmap`), saved mappings (:func:`libtopomap.mapping.read_saved_mapping`),
  ``--mapping`` files (:func:`libtopomap.cli._simulate.read_mapping_file`), hwloc XML
  (:func:`libtopomap.nodeinside.parse_hwloc_xml`), ``scontrol show topology`` output
  (:func:`libtopomap.autotopo.parse_scontrol`), CPU lists and ``plot times --from`` JSON;
* ``cli``: the argument paths of ``libtopomap generate / info / ingest / map / collective / simulate /
  plot`` (``--max-vertices`` and ``--max-edges`` included) with option values replaced by hostile ones (sizes, NaN, huge
  dimensions, binary files, ``/dev/zero``, a FIFO, a folder that does not exist), run in-process by
  :func:`libtopomap.cli.main`;
* ``bench``: the argument paths of ``libtopomap bench`` (``--topology``, ``--fake-names``, ``--graph``,
  ``--collectives``, ``--sizes``, ``--iterations``, ``--strategies``, ``--seed``, ``--max-vertices``,
  ``--max-edges``) with hostile values, each run in a fresh ``mpiexec -n 1`` or ``-n 2`` (the venv's
  MPI; a singleton without ``mpiexec`` when there is none) under the hang limit: it needs MPI, and an
  MPI abort must show as a failure, not kill the worker.  Exit status 0, 1 or 2 only, no traceback.

Every :class:`~libtopomap.LibTopoMapWarning` an input raises is counted (``warnings``); on the command
line each must be one line on stderr.

A reader may only return or raise a :class:`~libtopomap.LibTopoMapError` (or ``OSError`` for a
missing file named on the command line); the command line may only return or exit with a code
(argparse's ``SystemExit``).  Anything else is a failure: a raw exception, ``MemoryError`` (each
worker runs under an address-space limit, ``--memory`` GiB, the declared allocation limit) or a
hang (an input taking more than ``--hang`` seconds).  Failures are counted and the first ones
printed with their input; the exit status is 1 if there was any.  It prints a table of the counts
per family and, with ``--out``, writes ``PREFIX.md`` and ``PREFIX.json``.
"""

import argparse
import contextlib
import io
import json
import multiprocessing as mp
import os
import pathlib
import platform
import resource
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
ADAPTERS = ("ibnetdiscover", "ibnetdiscover-ports", "slurm", "ibdiagnet-lst")
FAMILIES = ("topology", "slurm-yaml", "graph", "hosts", "misc", "cli", "bench")
# Inputs per family in every 1000 (the expensive ones less often: a bench input starts MPI, 2-4 s).
SCHEDULE = [f for f, k in (("topology", 180), ("slurm-yaml", 250), ("graph", 150), ("hosts", 250), ("misc", 140),
                           ("cli", 29), ("bench", 1)) for _ in range(k)]
# The input being read, for the failure report.
LAST = {"input": ""}
_PROFS = {}
_MISC = {}
# the topology.yaml sample of the tests (tests/test_slurm_yaml.py reads the same file)
SLURM_YAML = (ROOT / "tests" / "data" / "slurm" / "topology.yaml").read_text()
HOSTS = ["node[01-04]\n", "n1 slots=4\nn2 slots=4\n", "a:2\nb:2\n# c\n", "x\nx\ny\n", "nid[0001-0004,0010]",
         "0 n0\n1 n1\n2 n2\n3 n3\n"]
HOSTILE = ["", "-1", "0", "1", "1G", "1e308", "nan", "inf", "-inf", "99999999999999999999", "x", "\x00", "4x4",
           "100000x100000", "1000000000", "2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2",
           "1.5", "--", "-", "/dev/zero", "/nonexistent/file", "@BIN", "@DIR", "@TOPO", "@GRAPH", "0x0",
           "3x-3", "65536x65536x65536", "\u00e9\u00e9", "@FIFO", "@NODIR", "@JSON", "@MAPPING", "2147483648",
           "local-global:8x8:0.5:10000000000", "uniform:100:100000000000", "random:1000000:1999999"]
MISC = {
    "hostmap": ("# GUID map\nH-0002c90300a1b2c3 node01\n0x0002c90300a1b2c4 node02\n"
                "0x0002c90300a1b2c5 \"node03 HCA-1\"\n"),
    "mapping-lines": "0 n0\n1 n1\n2 n3\n3 n2\n",
    "mapping-json": '["n0", "n1", 3, 2]\n',
    "scontrol": "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=tux[0-3]\nSwitchName=s2 Level=0 LinkSpeed=1 Nodes=tux[4-7]\n"
                "SwitchName=s0 Level=1 LinkSpeed=1 Switches=s[1-2] Nodes=tux[0-7]\n",
    "cpulist": "0-3,8,10-11\n",
    "times": '{"sizes": [1024, 65536], "original": {"times": [1.0, 2.0]}, "mapped": {"times": [0.5, 1.5]}, '
             '"placements": {"original": "block", "mapped": "greedy"}, "communication": "x", "topology": "t"}\n',
}


class Hang(Exception):
    """An input took longer than the hang limit."""


# ----------------------------------------------------------------------------- corpora and mutations
def corpus():
    paths = sorted((ROOT / "topology_files").glob("*"))
    shared = ROOT.parent / "shared" / "topologies"
    paths += sorted(shared.glob("*.txt")) + sorted(shared.glob("extras/*.txt"))
    docs = []
    for p in paths:
        if p.is_file() and p.stat().st_size < 4 << 20:
            docs.append(p.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True))
    return docs


def graph_docs(rng):
    """A fresh well-formed document of each graph kind (mutated afterwards)."""
    n = int(rng.integers(1, 12))
    edges = [(int(rng.integers(n)), int(rng.integers(n))) for _ in range(int(rng.integers(1, 20)))]
    mat = rng.integers(0, 5, (n, n))
    if not _PROFS:
        for p in sorted((ROOT / "tests" / "data" / "ompi_monitoring").glob("run.*.prof")):
            _PROFS[p.name] = p.read_text(errors="replace")
    profs = list(_PROFS.values())
    return {
        "edges.txt": "".join(f"{u} {v} {int(rng.integers(1, 9))}\n" for u, v in edges),
        "comm.mat": "".join(" ".join(map(str, row)) + "\n" for row in mat),
        "a.mtx": "%%MatrixMarket matrix coordinate real general\n% c\n" + f"{n} {n} {len(edges)}\n"
                 + "".join(f"{u + 1} {v + 1} {rng.random():.3f}\n" for u, v in edges),
        "run.0.prof": profs[int(rng.integers(len(profs)))] if profs else "",
    }


def mutate_lines(rng, lines, window=60):
    start = int(rng.integers(len(lines))) if lines else 0
    lines = list(lines[start:start + int(rng.integers(1, window + 1))])
    for _ in range(int(rng.integers(0, 6))):
        if not lines:
            break
        op = rng.integers(9)
        i = int(rng.integers(len(lines)))
        if op == 0:
            j = int(rng.integers(len(lines)))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 1:
            del lines[i]
        elif op == 2:
            lines.insert(i, lines[i])
        elif op == 3:
            s = lines[i]
            k = int(rng.integers(len(s) + 1))
            junk = bytes(rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8)).decode("latin-1")
            lines[i] = s[:k] + junk + s[k + int(rng.integers(0, 4)):]
        elif op == 4:
            lines[i] = lines[i][:int(rng.integers(len(lines[i]) + 1))]
            del lines[i + 1:]
        elif op == 5:
            lines.insert(i, "".join(chr(int(c)) for c in rng.integers(1, 0x3000, int(rng.integers(0, 40)))) + "\n")
        elif op == 6:
            end = "\r\n" if rng.random() < 0.5 else "\r"
            lines = [s.replace("\n", end) for s in lines]
            lines[0] = "\ufeff" + lines[0]
        elif op == 7:
            s = lines[i]
            digits = [k for k, ch in enumerate(s) if ch.isdigit()]
            if digits:  # a number grows huge, negative or fractional
                k = digits[int(rng.integers(len(digits)))]
                junk = ["99999999999999999999", "-", "0.5", "2147483648", "e9"][int(rng.integers(5))]
                lines[i] = s[:k] + junk + s[k:]
        else:
            lines[i] = lines[i].replace("\t", " ") if rng.random() < 0.5 else lines[i].replace(" ", "\t")
    return "".join(lines)


def mutate_text(rng, text, window=60):
    return mutate_lines(rng, text.splitlines(keepends=True), window)


def write(path, text, rng):
    data = text.encode("utf-8", errors="surrogatepass") if rng.random() < 0.9 else \
        text.encode("utf-8", errors="surrogatepass") + bytes(rng.integers(0, 256, 16, dtype=np.uint8))
    path.write_bytes(data)
    return path


# ----------------------------------------------------------------------------- families
def _read(out, fn, *args, **kw):
    from libtopomap.errors import LibTopoMapError

    try:
        fn(*args, **kw)
        out["ok"] += 1
    except LibTopoMapError as e:
        out[type(e).__name__] += 1


def fam_topology(rng, docs, tmp):
    from libtopomap.errors import FormatError
    from libtopomap.formats import read_buffer, sniff

    text = mutate_lines(rng, docs[int(rng.integers(len(docs)))])
    LAST["input"] = text
    out = Counter()
    try:
        fmt = sniff(text[:65536])
    except FormatError:
        fmt = None
    strict = bool(rng.random() < 0.5)
    for name in ("ltm", "json", "slurm-yaml") + ADAPTERS:
        opts = {"strict": strict} if name in ADAPTERS else {}
        _read(out, read_buffer, text, name, path="fuzz", **opts)
    if fmt is not None:
        _read(out, read_buffer, text, fmt, path="fuzz")
    return out


def fam_slurm_yaml(rng, docs, tmp):
    from libtopomap.formats import read_buffer

    out = Counter()
    LAST["input"] = text = mutate_text(rng, SLURM_YAML, window=40)
    _read(out, read_buffer, text, "slurm-yaml", path="topology.yaml")
    return out


def fam_graph(rng, docs, tmp):
    from libtopomap import graphfiles, load_graph, patterns

    kinds = graph_docs(rng)
    name = list(kinds)[int(rng.integers(len(kinds)))]
    LAST["input"] = text = mutate_text(rng, kinds[name], window=200)
    path = write(tmp / name, text, rng)
    out = Counter()
    _read(out, load_graph, str(path))
    reader = {"edges.txt": patterns.read_edge_list, "comm.mat": graphfiles.read_comm_matrix,
              "a.mtx": patterns.read_matrix_market, "run.0.prof": graphfiles.read_ompi_monitoring}[name]
    _read(out, reader, str(tmp / "run") if name == "run.0.prof" else str(path))
    return out


def fam_hosts(rng, docs, tmp):
    from libtopomap.mpi.location import read_fake_names
    from libtopomap.rankfiles import read_allocation

    LAST["input"] = text = mutate_text(rng, HOSTS[int(rng.integers(len(HOSTS)))])
    out = Counter()
    path = write(tmp / "hosts", text, rng)
    _read(out, read_allocation, str(path), nprocs=int(rng.integers(1, 64)), environ={})
    if "\n" not in text.strip() and "\x00" not in text and text.strip():
        _read(out, read_allocation, text.strip(), environ={})
    _read(out, read_fake_names, str(path), n_ranks=int(rng.integers(0, 5)))
    return out


def fam_misc(rng, docs, tmp):
    from libtopomap import load
    from libtopomap.adapters import read_hostmap
    from libtopomap.autotopo import parse_scontrol
    from libtopomap.cli._plot import _read_times
    from libtopomap.cli._simulate import read_mapping_file
    from libtopomap.mapping import read_saved_mapping
    from libtopomap.nodeinside import parse_cpulist, parse_hwloc_xml

    samples = _misc_samples()
    kind = list(samples)[int(rng.integers(len(samples)))]
    LAST["input"] = text = mutate_text(rng, samples[kind], window=400)
    path = write(tmp / f"misc.{kind}", text, rng)
    out = Counter()
    if kind == "hostmap":
        _read(out, read_hostmap, str(path))
    elif kind == "saved-mapping":
        _read(out, read_saved_mapping, str(path))
    elif kind.startswith("mapping"):
        _read(out, read_mapping_file, str(path), load(str(tmp / "t.ltm")), nprocs=int(rng.integers(1, 6)))
    elif kind.startswith("hwloc"):
        _read(out, parse_hwloc_xml, text, path="hwloc.xml")
    elif kind == "scontrol":
        _read(out, parse_scontrol, text)
    elif kind == "cpulist":
        _read(out, parse_cpulist, text.strip())
    else:
        _read(out, _read_times, str(path))
    return out


def _misc_samples():
    if "saved-mapping" not in _MISC:
        import libtopomap as ltm

        _MISC.update(MISC)
        for p in sorted((ROOT / "tests" / "data" / "auto").glob("*.xml")):
            _MISC["hwloc-" + p.stem] = p.read_text(errors="replace")
        with tempfile.TemporaryDirectory() as d:
            m = ltm.map_processes(ltm.torus("2x2"), ltm.load_graph("stencil:2x2"), strategy="greedy", seed=1)
            m.save(os.path.join(d, "m.json"))
            _MISC["saved-mapping"] = pathlib.Path(d, "m.json").read_text()
    return _MISC


CLI = [
    ["generate", "torus", "--dims", "4x4", "-o", "@OUT"],
    ["generate", "mesh", "--dims", "3x3", "-o", "@OUT", "--format", "json"],
    ["generate", "hypercube", "--dim", "3", "-o", "@OUT"],
    ["generate", "fattree", "--k", "2", "--n", "2", "-o", "@OUT"],
    ["generate", "circulant", "--n", "8", "-o", "@OUT"],
    ["info", "@TOPO"],
    ["ingest", "@TOPO", "-o", "@OUT"],
    ["map", "--topology", "@TOPO", "--graph", "@GRAPH", "--strategy", "greedy", "--seed", "1"],
    ["map", "--topology", "@TOPO", "--graph", "stencil:2x2", "--time-budget", "0.1", "--iterations", "10"],
    ["collective", "--topology", "@TOPO", "--collective", "allreduce", "--iterations", "10"],
    ["info", "@TOPO", "--max-vertices", "100"],
    ["generate", "torus", "--dims", "4x4", "-o", "@OUT", "--max-vertices", "16"],
    ["map", "--topology", "@TOPO", "--graph", "@GRAPH", "--max-vertices", "8", "--strategy", "greedy"],
    ["map", "--topology", "@TOPO", "--graph", "local-global:2x2:0.5:3", "--max-edges", "12", "--strategy", "greedy"],
    ["generate", "dragonfly", "--groups", "3", "--routers", "2", "--terminals", "1", "--global", "1", "-o", "@OUT",
     "--max-edges", "100"],
    ["generate", "ldr", "--nodes", "8", "--degree", "3", "-o", "@OUT", "--max-edges", "12"],
    ["simulate", "--topology", "@TOPO", "--graph", "@GRAPH", "--sizes", "1K"],
    ["plot", "adjacency", "--topology", "@TOPO", "--graph", "@GRAPH", "-o", "@PLOT"],
    ["plot", "hops", "--topology", "@TOPO", "--graph", "@GRAPH", "--mapping", "@MAPPING", "-o", "@PLOT"],
    ["plot", "times", "--from", "@JSON", "-o", "@PLOT"],
]


def fam_cli(rng, docs, tmp):
    from libtopomap.cli import main

    argv = list(CLI[int(rng.integers(len(CLI)))])
    for _ in range(int(rng.integers(1, 3))):
        i = int(rng.integers(1, len(argv)))
        if argv[i].startswith("-") and rng.random() < 0.5:
            continue
        argv[i] = HOSTILE[int(rng.integers(len(HOSTILE)))]
    subst = {"@OUT": str(tmp / "out.topo"), "@BIN": str(tmp / "bin"), "@DIR": str(tmp),
             "@TOPO": str(tmp / "t.ltm"), "@GRAPH": str(tmp / "g.txt"), "@FIFO": str(tmp / "fifo"),
             "@NODIR": str(tmp / "no" / "such" / "dir" / "x"), "@JSON": str(tmp / "times.json"),
             "@MAPPING": str(tmp / "m.txt"), "@PLOT": str(tmp / "plot")}
    argv = [subst.get(a, a) for a in argv]
    LAST["input"] = argv
    out = Counter()
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            code = main(argv)
    except SystemExit as e:
        code = e.code
    except OSError:
        code = "OSError"
    if sink.getvalue().count("Traceback (most recent call last)"):
        raise AssertionError(f"a traceback was printed for {argv!r}:\n{sink.getvalue()[-1500:]}")
    for line in sink.getvalue().splitlines():  # a warning is one line: "libtopomap CMD: warning: ..."
        if ": warning: " in line:
            out["warnings"] += 1
        elif "Warning:" in line or line.startswith("  warnings.warn"):
            raise AssertionError(f"a warning not on one line for {argv!r}:\n{sink.getvalue()[-1500:]}")
    out[f"exit {code}"] += 1
    return out


BENCH = [
    ["--topology", "@TOPO", "--fake-names", "@FAKE", "--sizes", "8", "--iterations", "2"],
    ["--topology", "@TOPO", "--fake-names", "@FAKE", "--graph", "@GRAPH", "--collectives", "neighbor_alltoall",
     "--sizes", "8,1K", "--iterations", "2", "--seed", "3"],
    ["--topology", "@TOPO", "--fake-names", "@FAKE", "--graph", "stencil:2x2", "--collectives", "bcast,allreduce",
     "--strategies", "identity,greedy", "--sizes", "64", "--iterations", "1"],
    ["--topology", "@TOPO", "--fake-names", "@FAKE", "--collectives", "alltoall", "--sizes", "1K", "--iterations",
     "1", "--max-vertices", "16", "--max-edges", "64", "--json"],
]


def fam_bench(rng, docs, tmp):
    """One ``libtopomap bench`` run with 1-2 hostile option values, in a fresh MPI job (module docstring)."""
    import subprocess

    argv = list(BENCH[int(rng.integers(len(BENCH)))])
    for _ in range(int(rng.integers(1, 3))):
        i = int(rng.integers(len(argv)))
        if argv[i].startswith("-") and rng.random() < 0.5:
            continue
        argv[i] = HOSTILE[int(rng.integers(len(HOSTILE)))]
    subst = {"@BIN": str(tmp / "bin"), "@DIR": str(tmp), "@TOPO": str(tmp / "t.ltm"), "@GRAPH": str(tmp / "g.txt"),
             "@FIFO": str(tmp / "fifo"), "@NODIR": str(tmp / "no" / "such" / "dir" / "x"),
             "@JSON": str(tmp / "times.json"), "@MAPPING": str(tmp / "m.txt"), "@FAKE": str(tmp / "fake.txt")}
    argv = [subst.get(a, a) for a in argv]
    nprocs = int(rng.integers(1, 3))
    mpiexec = pathlib.Path(sys.executable).parent / "mpiexec"
    launch = [str(mpiexec), "-n", str(nprocs)] if mpiexec.exists() else []
    cmd = launch + [sys.executable, "-m", "libtopomap", "bench"] + argv
    LAST["input"] = cmd
    if any("\x00" in a for a in cmd):  # exec() refuses it: the in-process cli family covers a NUL argument
        return Counter({"skipped (NUL byte)": 1})
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, cwd=tmp)
    try:
        output, _ = proc.communicate(timeout=max(1, BENCH_TIMEOUT[0]))
    except subprocess.TimeoutExpired:
        raise Hang(f"bench took more than {BENCH_TIMEOUT[0]} s") from None
    finally:
        if proc.poll() is None:  # timed out, or the worker's own hang alarm: end the whole MPI job
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    text = output.decode("utf-8", "replace")
    if "Traceback (most recent call last)" in text or "MemoryError" in text:
        raise AssertionError(f"a traceback was printed:\n{text[-1500:]}")
    if proc.returncode not in (0, 1, 2):
        raise AssertionError(f"exit status {proc.returncode} (an abort or a signal):\n{text[-1500:]}")
    out = Counter({f"exit {proc.returncode}": 1, f"-n {nprocs}": 1})
    for line in text.splitlines():
        if ": warning: " in line:
            out["warnings"] += 1
        elif "Warning:" in line or line.startswith("  warnings.warn"):
            raise AssertionError(f"a warning not on one line:\n{text[-1500:]}")
    return out


#: Seconds a bench run may take (a little under the hang limit, so that the run is killed, not the worker).
BENCH_TIMEOUT = [55]


def _cli_files(tmp):
    import libtopomap as ltm

    ltm.save(str(tmp / "t.ltm"), ltm.torus("2x2"))
    (tmp / "g.txt").write_text("0 1\n1 2\n2 3\n3 0\n")
    (tmp / "bin").write_bytes(bytes(range(256)) * 8)
    (tmp / "times.json").write_text(MISC["times"])
    (tmp / "m.txt").write_text(MISC["mapping-lines"].replace("n", "n"))
    (tmp / "fake.txt").write_text("0 n0\n1 n1\n2 n2\n3 n3\n")
    if not (tmp / "fifo").exists():
        os.mkfifo(tmp / "fifo")  # no writer ever opens it: reading it would block for ever


def warm_up(tmp):
    """Compile (or load) the numba kernels the command line uses, and load matplotlib (its font cache),
    untimed: a compilation interrupted by the hang alarm would start again at every input (a machine
    under load takes minutes for it)."""
    from libtopomap.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for argv in (["info", str(tmp / "t.ltm")],
                     ["map", "--topology", str(tmp / "t.ltm"), "--graph", str(tmp / "g.txt"), "--seed", "1"],
                     ["map", "--topology", str(tmp / "t.ltm"), "--graph", "stencil:2x2", "--iterations", "10"],
                     ["collective", "--topology", str(tmp / "t.ltm"), "--collective", "allreduce",
                      "--iterations", "10"],
                     ["plot", "adjacency", "--topology", str(tmp / "t.ltm"), "--graph", str(tmp / "g.txt"),
                      "-o", str(tmp / "plot")]):
            try:
                main(argv)
            except BaseException:  # noqa: BLE001 - only warming up; the fuzzed runs are checked
                pass


# ----------------------------------------------------------------------------- driver
def worker(args):
    seed, count, memory_gib, hang_s, only = args
    BENCH_TIMEOUT[0] = max(1, hang_s - 5)
    resource.setrlimit(resource.RLIMIT_AS, (memory_gib << 30, memory_gib << 30))

    def alarm(signum, frame):
        raise Hang(f"input took more than {hang_s} s")
    signal.signal(signal.SIGALRM, alarm)
    from libtopomap.errors import LibTopoMapWarning

    docs = corpus()
    rng = np.random.default_rng(seed)
    totals = {f: Counter() for f in FAMILIES}
    failures = []
    slowest = (0.0, "", "")
    with tempfile.TemporaryDirectory(prefix="ltmfuzz") as d:
        tmp = pathlib.Path(d)
        os.chdir(tmp)  # files the command line writes under hostile names stay in the temporary folder
        _cli_files(tmp)
        warm_up(tmp)
        funcs = {"topology": fam_topology, "slurm-yaml": fam_slurm_yaml, "graph": fam_graph, "hosts": fam_hosts,
                 "misc": fam_misc, "cli": fam_cli, "bench": fam_bench}
        for k in range(count):
            fam = SCHEDULE[int(rng.integers(len(SCHEDULE)))] if not only else only[int(rng.integers(len(only)))]
            t0 = time.perf_counter()
            signal.alarm(hang_s)
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    totals[fam].update(funcs[fam](rng, docs, tmp))
                n_warn = sum(issubclass(w.category, LibTopoMapWarning) for w in caught)
                if n_warn:
                    totals[fam]["warnings"] += n_warn
                kind = None
            except Hang:
                kind, tb = "hang", traceback.format_exc()
            except MemoryError:
                kind, tb = "MemoryError", traceback.format_exc()
            except BaseException as e:  # noqa: BLE001 - the point of the fuzzer
                kind, tb = type(e).__name__, traceback.format_exc()
            finally:
                signal.alarm(0)
            dt = time.perf_counter() - t0
            totals[fam]["inputs"] += 1
            if kind is not None:
                totals[fam]["FAILURE " + kind] += 1
                if len(failures) < 5:
                    failures.append((fam, kind, repr(LAST["input"])[:600], tb[-2500:]))
                _cli_files(tmp)
            if dt > slowest[0]:
                slowest = (dt, fam, "")
    return totals, slowest, failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200_000, help="number of inputs (default 200000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--memory", type=int, default=3, help="address-space limit per worker in GiB (default 3)")
    ap.add_argument("--hang", type=int, default=60, help="seconds after which an input counts as a hang")
    ap.add_argument("--out", help="write PREFIX.md and PREFIX.json")
    ap.add_argument("--family", action="append", choices=FAMILIES,
                    help="fuzz only this family (repeatable; default: all, in the fixed proportions)")
    args = ap.parse_args(argv)
    chunks = max(50, args.n // 500)
    per = [args.n // chunks + (1 if i < args.n % chunks else 0) for i in range(chunks)]
    t0 = time.perf_counter()
    totals = {f: Counter() for f in FAMILIES}
    slowest, failures = (0.0, ""), []
    n_fail = 0
    with mp.Pool(args.jobs) as pool:
        jobs = [(args.seed * 100_000 + i, c, args.memory, args.hang, args.family) for i, c in enumerate(per)]
        for done, (tot, slow, fails) in enumerate(pool.imap_unordered(worker, jobs), 1):
            for f in FAMILIES:
                totals[f].update(tot[f])
            slowest = max(slowest, slow[:2])
            failures += fails
            # the summary so far, rewritten after every chunk: a run stopped early still reports its counts
            n_fail = report(args, totals, slowest, failures, time.perf_counter() - t0, done == len(jobs),
                            quiet=done != len(jobs))
    return 1 if n_fail else 0


def report(args, totals, slowest, failures, wall, finished, *, quiet):
    """Print (unless ``quiet``) and write (with ``--out``) the counts; returns the number of failures."""
    n_fail = sum(v for t in totals.values() for k, v in t.items() if k.startswith("FAILURE"))
    rows = []
    for f in FAMILIES:
        t = totals[f]
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(t.items()) if k != "inputs")
        rows.append((f, t["inputs"], outcomes))
    lines = ["| family | inputs | outcomes (reads or runs) |", "|---|---:|---|"]
    lines += [f"| {f} | {n} | {o} |" for f, n, o in rows]
    total = sum(r[1] for r in rows)
    state = "finished" if finished else f"stopped early: {total} of {args.n} inputs done"
    summary = (f"inputs: {total} (seed {args.seed}, {args.jobs} jobs, {args.memory} GiB address space per worker, "
               f"hang limit {args.hang} s; {state}); failures (raw exceptions, MemoryError, hangs): {n_fail}; "
               f"{wall:.0f} s wall; slowest input {slowest[0] * 1000:.0f} ms ({slowest[1]})")
    if not quiet:
        print("\n".join(lines))
        print(summary)
        for fam, kind, what, tb in failures[:8]:
            print(f"FAILURE in {fam} ({kind}) on input {what}:\n{tb}")
    else:
        print(f"... {total} inputs, {n_fail} failures, {wall:.0f} s", file=sys.stderr, flush=True)
    if args.out:
        doc = {"inputs": total, "requested": args.n, "finished": finished, "failures": n_fail, "seed": args.seed,
               "jobs": args.jobs, "memory_limit_gib": args.memory, "hang_limit_s": args.hang, "wall_s": round(wall, 1),
               "slowest_input_s": round(slowest[0], 3), "slowest_family": slowest[1],
               "families": {f: dict(totals[f]) for f in FAMILIES},
               "first_failures": [{"family": f, "kind": k, "input": i, "traceback": tb}
                                  for f, k, i, tb in failures[:5]],
               "machine": f"{platform.node()} {os.cpu_count()} cores, python {platform.python_version()}"}
        pathlib.Path(args.out + ".json").write_text(json.dumps(doc, indent=1) + "\n")
        pathlib.Path(args.out + ".md").write_text(
            "# Fuzz run of every reader and the command line (benchmarks/fuzz_ingest.py)\n\n"
            f"`python benchmarks/fuzz_ingest.py -n {args.n} --seed {args.seed} --jobs {args.jobs} "
            f"--memory {args.memory}`\n\n" + "\n".join(lines) + "\n\n" + summary + "\n")
    return n_fail


if __name__ == "__main__":
    sys.exit(main())
