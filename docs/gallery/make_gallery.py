"""Draw the gallery's pictures with ``libtopomap plot`` (run by the documentation build).

``make_gallery(outdir)`` writes ``adjacency.png``, ``loads.png``, ``hops.png`` and ``times.png`` (and
their SVGs) into ``outdir``, each by the command line that the gallery page shows, on small inputs so
that the whole gallery takes a few seconds.  The ``times`` picture needs a ``libtopomap simulate
--json`` result; SimGrid is not needed to build the documentation, so it is made from the SimGrid runs
recorded in ``benchmarks/results/simulate.json`` (the first shortcut-network allreduce there).

Run by hand: ``python docs/gallery/make_gallery.py [OUTDIR]``.
"""

import contextlib
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RECORDED = os.path.join(REPO, "benchmarks", "results", "simulate.json")

#: picture -> the ``libtopomap`` arguments that draw it ({d}: the output folder).
COMMANDS = {
    "adjacency": ["plot", "adjacency", "--topology", "{d}/torus8x8.json", "--graph", "stencil:8x8", "-o",
                  "{d}/adjacency", "--title", "stencil:8x8 on an 8x8 torus, before/after RCM"],
    "loads": ["plot", "loads", "--topology", "{d}/torus8x8.json", "--graph", "torus-scrambled:8x8:1",
              "--strategy", "greedy", "-o", "{d}/loads"],
    "hops": ["plot", "hops", "--topology", "{d}/rsr256.ltm", "--collective", "alltoall", "--procs", "64",
             "--placement", "random", "--iterations", "20000", "-o", "{d}/hops"],
    "times": ["plot", "times", "--from", "{d}/simulate.json", "-o", "{d}/times"],
}
#: inputs made first, by ``libtopomap generate``
GENERATE = [
    ["generate", "torus", "--dims", "8x8", "--format", "json", "-o", "{d}/torus8x8.json"],
    ["generate", "shortcut", "--nodes", "256", "--degree", "7", "--seed", "0", "-o", "{d}/rsr256.ltm"],
]
_SOURCES = ("libtopomap/plot.py", "libtopomap/cli/_plot.py", "docs/gallery/make_gallery.py",
            "benchmarks/results/simulate.json")


def command_line(args, outdir="_generated"):
    """The shell command of ``args`` as the gallery shows it."""
    return "libtopomap " + " ".join(a.format(d=outdir) for a in args)


def _recorded_simulation(path):
    """A ``libtopomap simulate --json`` result from the first shortcut run of ``benchmarks/results``."""
    with open(RECORDED, encoding="utf-8") as f:
        rec = json.load(f)
    run = rec["shortcut"][0]
    out = {"topology": run["topology"], "communication": f"{run['collective']} ({run['nodes']} allocation)",
           "sizes": run["sizes"],
           "placements": {"original": f"{run['baseline']} ranks", "mapped": run["improved"]},
           "original": {"times": run["baseline_s"]}, "mapped": {"times": run["improved_s"]},
           "speedup": run["speedup"], "recorded": f"SimGrid {rec['simgrid']}, benchmarks/results/simulate.json"}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f)


def _up_to_date(outdir):
    pngs = [os.path.join(outdir, f"{k}.png") for k in COMMANDS]
    if not all(os.path.exists(p) for p in pngs):
        return False
    oldest = min(os.path.getmtime(p) for p in pngs)
    return all(os.path.getmtime(os.path.join(REPO, s)) < oldest for s in _SOURCES
               if os.path.exists(os.path.join(REPO, s)))


def make_gallery(outdir, *, force=False):
    """Draw every picture of :data:`COMMANDS` into ``outdir`` (skipped when up to date)."""
    from libtopomap.cli import main

    os.makedirs(outdir, exist_ok=True)
    if not force and _up_to_date(outdir):
        return
    for args in GENERATE:
        _run(main, args, outdir)
    _recorded_simulation(os.path.join(outdir, "simulate.json"))
    for args in COMMANDS.values():
        _run(main, args, outdir)


def _run(main, args, outdir):
    argv = [a.format(d=outdir) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    if rc:
        raise RuntimeError(f"{command_line(args, outdir)} failed (exit {rc}): {err.getvalue().strip()}")


if __name__ == "__main__":
    make_gallery(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "_generated"), force=True)
