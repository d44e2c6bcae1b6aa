"""SMPI proxies and ``libtopomap smpi run``: real smpirun simulations on small rings and tori.

SMPI's simulated times are deterministic (CM02, no computation), so optimal placements are pinned to
the number SimGrid 3.32 gives and compared for equality, and bad placements are checked against the
factor the model derives.
"""

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess

import numpy as np
import pytest

import libtopomap as ltm

pytestmark = pytest.mark.skipif(shutil.which("smpirun") is None or shutil.which("smpicc") is None,
                                reason="SimGrid's SMPI (smpicc, smpirun) is not installed: "
                                       "apt-get install libsimgrid-dev")

HALO_1D = ["1", "65536", "10", "0"]  # 1-D halo, 64 KiB, 10 iterations, no Allreduce
HALO_2D = ["2", "65536", "10", "1"]  # 2-D halo + one-double Allreduce per iteration
# SimGrid 3.32, CM02, 100 Gb/s and 100 ns per link: every message of the halo alone on its link
RING_OPT = 5.426312e-05
TORUS_OPT = 6.286872e-05


@pytest.fixture(scope="module")
def bins(tmp_path_factory):
    from libtopomap.smpi import build

    return build(outdir=str(tmp_path_factory.mktemp("smpi-bin")))


@pytest.fixture(scope="module")
def platforms(tmp_path_factory):
    from libtopomap.smpi.platform import write_platform

    d = tmp_path_factory.mktemp("smpi-plat")
    ring, torus = ltm.torus((16,)), ltm.torus((4, 4))
    return {"ring": (ring, write_platform(ring, str(d / "ring.xml"))),
            "torus": (torus, write_platform(torus, str(d / "torus.xml")))}


def _time(binary, args, info, hosts, tmp_path):
    from libtopomap.smpi import run_once

    hf = tmp_path / "hosts"
    hf.write_text("".join(f"{h}\n" for h in hosts))
    return run_once(binary, args, platform=info.path, hostfile=str(hf), nprocs=len(hosts)).time


def _scrambled(tmp_path, n, seed=1):
    hosts = [f"n{i}" for i in range(n)]
    random.Random(seed).shuffle(hosts)
    path = tmp_path / "allocation"
    path.write_text("".join(f"{h}\n" for h in hosts))
    return str(path)


def test_build_and_result_line(bins, platforms, tmp_path):
    assert set(bins) >= {"halo", "cg", "fft", "colls", "replay"}
    from libtopomap.smpi import run_once

    topo, info = platforms["torus"]
    hf = tmp_path / "hosts"
    hf.write_text("".join(f"n{i}\n" for i in range(16)))
    for name, args in (("cg", ["16x16x16", "2"]), ("fft", ["16", "2"]), ("colls", ["bcast,alltoall", "1K", "2"])):
        sim = run_once(bins[name], args, platform=info.path, hostfile=str(hf), nprocs=16)
        assert sim.result["proxy"] == name and sim.result["ranks"] == 16 and sim.time > 0


def test_smpirun_puts_rank_i_on_line_i(bins, platforms, tmp_path):
    _, info = platforms["torus"]
    hosts = [f"n{i}" for i in range(16)]
    random.Random(3).shuffle(hosts)
    hf = tmp_path / "hosts"
    hf.write_text("".join(f"{h}\n" for h in hosts))
    out = subprocess.run(["smpirun", "-np", "16", "-map", "-platform", info.path, "-hostfile", str(hf),
                          "--cfg=smpi/simulate-computation:0", bins["halo"], "2", "8", "1"],
                         capture_output=True, text=True, timeout=120)
    import re

    where = dict((int(r), h) for r, h in re.findall(r"\[rank (\d+)\] -> (\S+)", out.stderr))
    assert [where[i] for i in range(16)] == hosts


def test_ring_optimum_and_derived_factor(bins, platforms, tmp_path):
    """16-host ring, 1-D halo: in order each message has a link direction to itself; stride 3 puts 3
    messages of 3 hops on every link direction: (3 lat + 3 S / B) / (lat + S / B) = 3, diluted by SMPI's
    per-message overhead."""
    _, info = platforms["ring"]
    opt = _time(bins["halo"], HALO_1D, info, [f"n{i}" for i in range(16)], tmp_path)
    bad = _time(bins["halo"], HALO_1D, info, [f"n{3 * i % 16}" for i in range(16)], tmp_path)
    assert opt == pytest.approx(RING_OPT, rel=1e-9)
    assert 2.9 < bad / opt <= 3.0
    from libtopomap.smpi import run

    res = run(bins["halo"], HALO_1D, topology=platforms["ring"][0], nprocs=16,
              allocation=_scrambled(tmp_path, 16), proxies_dir=os.path.dirname(bins["halo"]))
    assert res.after.time == pytest.approx(RING_OPT, rel=1e-12)  # the mapping reaches the optimum exactly
    assert res.before.time > res.after.time and res.speedup > 1
    # every halo message one hop; the traced graph (SMPI's Paje trace) also holds the 8-byte MPI_Reduce of the
    # timing to rank 0, and a 4-byte binomial broadcast from rank 0 that SMPI sends in no traced MPI call (when
    # MPI_Cart_create makes its communicator, which the time-independent trace does not show)
    assert 1.0 < res.metrics_after["avg_dilation"] < 1.0001
    assert res.graph["source"] == "smpi-trace-paje"
    assert res.graph["collectives"]["reduce"] == 16 and res.graph["collective_bytes"] == 15 * 8 + 15 * 4


def test_torus_optimum_and_bad_placement(bins, platforms, tmp_path):
    topo, info = platforms["torus"]
    ident = [f"n{i}" for i in range(16)]
    transpose = [f"n{(i % 4) * 4 + i // 4}" for i in range(16)]
    stride5 = [f"n{5 * i % 16}" for i in range(16)]
    t_id = _time(bins["halo"], HALO_2D, info, ident, tmp_path)
    assert t_id == pytest.approx(TORUS_OPT, rel=1e-9)
    assert _time(bins["halo"], HALO_2D, info, transpose, tmp_path) == t_id  # a torus automorphism: same time
    # stride 5: the x-neighbours are 2 hops apart and share links; SMPI's slow-down follows the model's
    # max congestion (routes of the platform's model) within the Allreduce's and latencies' share
    halo_only = ["2", "65536", "10", "0"]
    t0 = _time(bins["halo"], halo_only, info, ident, tmp_path)
    t5 = _time(bins["halo"], halo_only, info, stride5, tmp_path)
    g = ltm.stencil("4x4")
    v5 = np.array([topo.index(h) for h in stride5])
    c5 = ltm.evaluate(topo, g, v5, routing=info.routing)["max_congestion"]
    c0 = ltm.evaluate(topo, g, np.arange(16), routing=info.routing)["max_congestion"]
    assert 0.95 * (c5 / c0) < t5 / t0 <= c5 / c0
    from libtopomap.smpi import run

    res = run(bins["halo"], HALO_2D, topology=topo, nprocs=16, allocation=_scrambled(tmp_path, 16),
              proxies_dir=os.path.dirname(bins["halo"]))
    # the traced graph holds the Allreduce's messages too (binomial tree from rank 0), so the mapping may beat
    # the halo's own optimum (it does: 6.285016e-05 s, SimGrid 3.32)
    assert res.after.time <= TORUS_OPT * (1 + 1e-12)
    assert res.speedup > 3


FFT_BEFORE = 1.193079217e-05  # fft 32 2 on the 4x4 torus, allocation scrambled with seed 1 (SimGrid 3.32)
FFT_ROWS = 8.690175309e-06    # the same with the process grid's rows on the torus' rows (rank i on n<i>)


def test_pencil_fft_maps_from_its_sub_communicators(bins, platforms, tmp_path):
    """The fft proxy's only traffic is MPI_Alltoall in row and column communicators (4 x 4 grid, blocks of
    32^3 / 16 / 4 x 16 = 8 KiB, 2 iterations).  SMPI's Paje trace, which smpi run reads by default, has their
    messages where they went: 16 KiB between every two ranks of a row or a column and nothing else but a
    few bytes to and from rank 0 (MPI_Comm_split's and the timing's MPI_Reduce), so the mapping is faster.
    The time-independent trace takes both Alltoalls over all ranks: a uniform graph, mapped 1.000x."""
    from libtopomap.smpi import read_paje_trace, run

    topo, info = platforms["torus"]
    alloc = _scrambled(tmp_path, 16)
    args = ["32", "2"]
    assert _time(bins["fft"], args, info, [f"n{i}" for i in range(16)], tmp_path) == pytest.approx(FFT_ROWS, rel=1e-9)
    res = run(bins["fft"], args, topology=topo, nprocs=16, allocation=alloc, workdir=str(tmp_path / "paje"),
              proxies_dir=os.path.dirname(bins["fft"]))
    assert res.graph["source"] == "smpi-trace-paje" and res.graph["messages"] == 0
    assert res.before.time == pytest.approx(FFT_BEFORE, rel=1e-9)
    assert res.after.time <= FFT_ROWS * (1 + 1e-9) and res.speedup > 1.3  # 1.97x here (multisection)

    g, summary = read_paje_trace(str(tmp_path / "paje" / "trace" / "paje.trace"), 16)
    sent = {(u, int(v)): float(w) for u in range(16)
            for v, w in zip(g.indices[g.indptr[u]:g.indptr[u + 1]], g.weights[g.indptr[u]:g.indptr[u + 1]])}
    groups = {(a, b) for a in range(16) for b in range(16) if a != b and (a // 4 == b // 4 or a % 4 == b % 4)}
    block = 2 * 32 ** 3 // 16 // 4 * 16
    assert {k for k, w in sent.items() if w >= block} == groups
    assert all(block <= sent[k] <= block + 24 for k in groups)
    assert all(0 in k and w <= 24 for k, w in sent.items() if k not in groups)
    assert summary["collectives"]["alltoall"] == 2 * 2 * 16 and summary["collective_bytes"] == g.weights.sum()

    ti = run(bins["fft"], args, topology=topo, nprocs=16, allocation=alloc, trace="ti",
             proxies_dir=os.path.dirname(bins["fft"]))
    assert ti.graph["edges"] == 16 * 15 and ti.before.time == ti.after.time == res.before.time


def test_replay_trace_equals_edge_list(bins, platforms, tmp_path):
    from libtopomap.smpi import read_ti_trace, run_once, write_edge_list
    from libtopomap.smpi.runner import datatype_sizes

    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 12, 60), rng.integers(0, 12, 60)
    g = ltm.CommGraph(12, src, dst, rng.integers(1, 100_000, 60).astype(float))
    edges = tmp_path / "edges.txt"
    n_written = write_edge_list(g, str(edges))
    assert n_written == int(np.count_nonzero(g.src != g.dst))
    _, info = platforms["torus"]
    hf = tmp_path / "hosts"
    hf.write_text("".join(f"n{i}\n" for i in range(12)))
    index = tmp_path / "trace" / "ti.txt"
    index.parent.mkdir()
    sim = run_once(bins["replay"], [str(edges), "2"], platform=info.path, hostfile=str(hf), nprocs=12, trace=str(index))
    assert sim.result["edges"] == n_written and sim.result["iters"] == 2
    sizes = datatype_sizes(os.path.dirname(bins["replay"]))
    traced, summary = read_ti_trace(str(index), 12, sizes, collectives=False)
    keep = g.src != g.dst
    expected = ltm.CommGraph(12, g.src[keep], g.dst[keep], 2 * g.weights[keep])
    assert (traced.to_scipy() != expected.to_scipy()).nnz == 0
    # with its collectives: the replay's timing, one double reduced to rank 0 (linear)
    traced, _ = read_ti_trace(str(index), 12, sizes)
    timing = ltm.CommGraph(12, np.arange(1, 12), np.zeros(11, np.int64), np.full(11, 8.0))
    assert (traced.to_scipy() != (expected.to_scipy() + timing.to_scipy())).nnz == 0
    assert summary["messages"] == 2 * n_written and not summary["unknown_datatypes"]


def test_cli_run_end_to_end(bins, tmp_path, capsys, monkeypatch):
    from libtopomap.cli import main

    monkeypatch.setenv("LIBTOPOMAP_SMPI_DIR", os.path.dirname(bins["halo"]))
    topo = tmp_path / "t.topo"
    ltm.save(str(topo), ltm.torus((4, 4)))
    rc = main(["smpi", "run", "--topology", str(topo), "-n", "16", "--allocation", _scrambled(tmp_path, 16, seed=7),
               "--json", "--", bins["halo"], *HALO_2D])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["speedup"] > 1
    assert out["after"]["time"] < out["before"]["time"]
    assert out["metrics_after"]["hop_bytes"] < out["metrics_before"]["hop_bytes"]
    assert set(out["phases"]) == {"platform", "run_before", "trace", "mapping", "run_after", "total"}
    # CPU seconds per phase: the smpiruns' own (children of this process) count in theirs
    cpu = out["phases_cpu"]
    assert set(cpu) == set(out["phases"]) and cpu["run_before"] > 0 and cpu["run_after"] > 0
    assert 0 < out["before"]["cpu"] <= cpu["run_before"] + 1e-6 and 0 < out["after"]["cpu"] <= cpu["run_after"] + 1e-6
    assert cpu["total"] >= sum(v for k, v in cpu.items() if k != "total") - 1e-6
    # no candidate was cut by the wall-clock budget (the winner does not depend on the load); with the halo's
    # timing Reduce in the traced graph no candidate reaches the lower bound, so every one runs
    assert all("reached the lower bound" in r for r in out["skipped"])


def _one_line_error(capsys, argv, rc_expected):
    from libtopomap.cli import main

    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == rc_expected and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_bad_inputs_one_line(bins, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LIBTOPOMAP_SMPI_DIR", os.path.dirname(bins["halo"]))
    topo = tmp_path / "t.topo"
    ltm.save(str(topo), ltm.torus((2, 2)))
    base = ["smpi", "run", "--topology", str(topo), "-n", "4"]
    assert "no such program" in _one_line_error(capsys, base + ["--", str(tmp_path / "nope")], 2)
    assert "unknown routing" in _one_line_error(capsys, base + ["--routing", "bogus", "--", bins["halo"]], 2)
    err = _one_line_error(capsys, base + ["--", bins["halo"], "7"], 1)  # halo aborts: NDIMS must be 1..3
    assert "MPI_Abort" in err and "NDIMS must be 1, 2 or 3" in err
    src = tmp_path / "fail.c"
    src.write_text('#include <mpi.h>\n#include <stdio.h>\n#include <stdlib.h>\nint main(int c, char **v) {\n'
                   'MPI_Init(&c, &v); int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);\n'
                   'if (r == 1) { fprintf(stderr, "rank 1 gives up\\n"); exit(3); }\nMPI_Finalize(); return 0; }\n')
    subprocess.run(["smpicc", "-o", str(tmp_path / "fail"), str(src)], check=True, capture_output=True)
    err = _one_line_error(capsys, base + ["--", str(tmp_path / "fail")], 1)
    assert "exit status 3" in err and "rank 1 gives up" in err
    src = tmp_path / "quiet.c"  # a barrier only: no byte between ranks
    src.write_text('#include <mpi.h>\nint main(int c, char **v) {\n'
                   'MPI_Init(&c, &v); MPI_Barrier(MPI_COMM_WORLD); MPI_Finalize(); return 0; }\n')
    subprocess.run(["smpicc", "-o", str(tmp_path / "quiet"), str(src)], check=True, capture_output=True)
    err = _one_line_error(capsys, base + ["--", str(tmp_path / "quiet")], 1)
    assert "sent no message between ranks (collective calls: barrier x4)" in err and "--graph" in err
    monkeypatch.setenv("SMPIRUN", str(tmp_path / "no-smpirun"))
    assert "install libsimgrid-dev" in _one_line_error(capsys, base + ["--", bins["halo"]], 1)
    monkeypatch.setenv("SMPICC", str(tmp_path / "no-smpicc"))
    assert "install libsimgrid-dev" in _one_line_error(capsys, ["smpi", "build", "-o", str(tmp_path / "b")], 1)


@pytest.fixture(scope="module")
def spin(tmp_path_factory):
    """An SMPI program whose rank 0 never returns from computing."""
    d = tmp_path_factory.mktemp("spin")
    src = d / "spin.c"
    src.write_text("#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); volatile long x = 0;\n"
                   "for (;;) x++; MPI_Finalize(); return 0; }\n")
    exe = d / "spin-forever"
    subprocess.run(["smpicc", "-o", str(exe), str(src)], check=True, capture_output=True)
    return str(exe)


def _processes_of(exe, pgids=()):
    """{pid: pgid} of the live processes that run ``exe`` (on their command line) or sit in a group of
    ``pgids`` (a /proc scan)."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state, _, pgid = f.read().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue  # gone meanwhile
        if state != "Z" and (exe.encode() in cmdline or int(pgid) in pgids):
            out[int(pid)] = int(pgid)
    return out


def _none_left(exe, pgids=()):
    import time

    for _ in range(50):  # SIGKILL is delivered at once; the kernel reaps within moments
        if not _processes_of(exe, pgids):
            return True
        time.sleep(0.1)
    return False


def test_timeout_kills_the_simulation(tmp_path, platforms, spin):
    """smpirun is a script that starts smpimain: a timeout must end the simulation too, not leave it orphaned."""
    from libtopomap.smpi import run_once
    from libtopomap.smpi.build import SmpiError

    _, info = platforms["ring"]
    hf = tmp_path / "hosts"
    hf.write_text("n0\nn1\n")
    with pytest.raises(SmpiError, match="did not finish within 3 s"):
        run_once(spin, platform=info.path, hostfile=str(hf), nprocs=2, timeout=3)
    assert _none_left(spin)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_to_smpi_run_ends_the_simulation(bins, spin, tmp_path, signum):
    """SIGTERM or SIGINT to ``libtopomap smpi run`` while it simulates: the simulation (smpirun, smpimain, in
    their own process group) ends with it, and the command says so in one line, exit status 128 + signal."""
    import sys
    import time

    topo = tmp_path / "ring.ltm"
    ltm.save(str(topo), ltm.torus((4,)))
    env = {**os.environ, "LIBTOPOMAP_SMPI_DIR": os.path.dirname(bins["halo"])}
    proc = subprocess.Popen([sys.executable, "-m", "libtopomap", "smpi", "run", "--topology", str(topo), "-n", "2",
                             "--", spin], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:  # (the command's own line names spin too)
            if running := {p: g for p, g in _processes_of(spin).items() if p != proc.pid}:
                break
            time.sleep(0.1)
        assert running, "the simulation did not start"
        pgids = set(running.values())
        assert proc.pid not in pgids  # the simulation runs in its own group: a signal to it does not reach it
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    try:
        assert proc.returncode == 128 + signum, err
        assert err.strip() == (f"libtopomap smpi: {signal.Signals(signum).name} received: spin-forever under smpirun "
                               "stopped")
        assert _none_left(spin, pgids)
    finally:  # a failed test leaves no simulation behind either
        for g in pgids:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(g, signal.SIGKILL)
