"""Long fuzz run of the fabric adapters: N mutated inputs, every adapter, strict and not.

Usage: ``python benchmarks/fuzz_ingest.py [-n 100000] [--seed 0] [--jobs 2]``

Inputs are windows (1-150 lines) of the shared dumps (``../shared/topologies``, extras included) and
of ``topology_files/``, mutated 0-5 times by line swaps, deletions, duplications, truncation, random
bytes, random lines, CRLF/BOM/TAB changes.  Each input is read by ``ibnetdiscover``,
``ibnetdiscover-ports``, ``slurm`` and ``ibdiagnet-lst`` (strict and not) and by the sniffed format.  Any exception
other than :class:`~libtopomap.FormatError` is a failure: the script prints it with the input and
exits 1.  It prints the number of inputs, how they ended, and the slowest read.
"""

import argparse
import multiprocessing as mp
import pathlib
import sys
import time
import traceback
from collections import Counter

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
FORMATS = ("ibnetdiscover", "ibnetdiscover-ports", "slurm", "ibdiagnet-lst")


def corpus():
    paths = sorted((ROOT / "topology_files").glob("small_fabric*"))
    shared = ROOT.parent / "shared" / "topologies"
    paths += sorted(shared.glob("*.txt")) + sorted(shared.glob("extras/*.txt"))
    return [p.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True) for p in paths]


def mutate(rng, docs):
    lines = docs[rng.integers(len(docs))]
    start = int(rng.integers(len(lines)))
    lines = list(lines[start:start + int(rng.integers(1, 151))])
    for _ in range(int(rng.integers(0, 6))):
        if not lines:
            break
        op = rng.integers(8)
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
            lines = [s.replace("\n", "\r\n") for s in lines]
            lines[0] = "\ufeff" + lines[0]
        else:
            lines[i] = lines[i].replace("\t", " ") if rng.random() < 0.5 else lines[i].replace(" ", "\t")
    return "".join(lines)


def check(text):
    """Outcome counts of reading ``text`` every way; raises on an undocumented exception."""
    from libtopomap.errors import FormatError
    from libtopomap.formats import read_buffer, sniff

    out = Counter()
    try:
        fmt = sniff(text[:65536])
    except FormatError:
        fmt = None
    names = FORMATS + ((fmt,) if fmt and fmt not in FORMATS else ())
    for name in names:
        for strict in ((False, True) if name in FORMATS else (None,)):
            opts = {"strict": strict} if strict is not None else {}
            try:
                t = read_buffer(text, name, path="fuzz", **opts)
                assert t.hosts.size >= 1
                out["ok"] += 1
            except FormatError:
                out["FormatError"] += 1
    return out


def worker(args):
    seed, count = args

    docs = corpus()
    rng = np.random.default_rng(seed)
    totals = Counter()
    slowest = (0.0, "")
    for _ in range(count):
        text = mutate(rng, docs)
        t0 = time.perf_counter()
        try:
            totals.update(check(text))
        except Exception:  # noqa: BLE001  (the point of the fuzzer)
            return totals, slowest, (text, traceback.format_exc())
        dt = time.perf_counter() - t0
        if dt > slowest[0]:
            slowest = (dt, text[:200])
        totals["inputs"] += 1
    return totals, slowest, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=100_000, help="number of inputs (default 100000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    chunks = 50
    per = [args.n // chunks + (1 if i < args.n % chunks else 0) for i in range(chunks)]
    t0 = time.perf_counter()
    totals, slowest, failure = Counter(), (0.0, ""), None
    with mp.Pool(args.jobs) as pool:
        for tot, slow, fail in pool.imap_unordered(worker, [(args.seed * 1000 + i, c) for i, c in enumerate(per)]):
            totals.update(tot)
            slowest = max(slowest, slow)
            if fail is not None:
                failure = fail
                break
    wall = time.perf_counter() - t0
    print(f"inputs: {totals['inputs']} (seed {args.seed}), reads: {totals['ok'] + totals['FormatError']} "
          f"-> {totals['ok']} topologies, {totals['FormatError']} FormatError, "
          f"{0 if failure is None else 1} other exceptions; {wall:.0f} s; slowest input {slowest[0] * 1000:.1f} ms")
    if failure is not None:
        text, tb = failure
        print("FAILURE on input:\n" + repr(text[:2000]) + "\n" + tb)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
