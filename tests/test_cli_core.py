"""CLI: ``libtopomap generate`` for every generator and ``libtopomap info``; exit codes 0/2/1."""

import json
import subprocess
import sys

import pytest

import libtopomap as ltm
from libtopomap import load, properties
from libtopomap.cli import main

GENERATE = [
    ("torus --dims 4x4x2", 32, 32),
    ("mesh --dims 4x4", 16, 16),
    ("hypercube --dim 4", 16, 16),
    ("fattree --k 4 --n 3", 112, 64),
    ("dragonfly --groups 9 --routers 4 --terminals 2 --global 2", 108, 72),
    ("percs --supernodes 4 --dlinks 3 --seed 1", 128, 128),
    ("shortcut --nodes 64 --degree 5 --seed 1", 64, 64),
    ("circulant --nodes 64", 64, 64),
    ("circulant --nodes 16 --jumps 1,3", 16, 16),
    ("ldr --nodes 32 --degree 5 --seed 1", 32, 32),
    ("rtt --a 4", 32, 32),
    ("rt --a 4", 32, 32),
    ("torus --dims 4x4 --concentration 2", 48, 32),
]


@pytest.mark.parametrize("fmt", ["ltm", "json"])
@pytest.mark.parametrize("cmd, vertices, hosts", GENERATE)
def test_generate_every_kind_then_info(tmp_path, capsys, cmd, vertices, hosts, fmt):
    out = tmp_path / f"t.{fmt}"
    assert main(["generate", *cmd.split(), "-o", str(out), "--format", fmt]) == 0
    t = load(out)
    assert (t.n_vertices, t.hosts.size) == (vertices, hosts)
    capsys.readouterr()
    assert main(["info", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    for key in ("vertices", "hosts", "slots", "switches", "links", "degree_min", "degree_max", "diameter", "aspl"):
        assert key in info
    assert info["vertices"] == vertices and info["hosts"] == hosts
    assert {k: v for k, v in info.items() if k != "moore_bound"} == properties(t)


def test_generate_is_deterministic_with_seed(tmp_path):
    a, b = tmp_path / "a.ltm", tmp_path / "b.ltm"
    for p in (a, b):
        assert main(["generate", "percs", "--supernodes", "3", "--dlinks", "1", "--seed", "5", "-o", str(p)]) == 0
    assert a.read_text() == b.read_text()


def test_format_from_extension(tmp_path):
    p = tmp_path / "x.json"
    assert main(["generate", "rtt", "--a", "3", "-o", str(p)]) == 0
    assert p.read_text().startswith('{"format":"libtopomap-topology"')


def test_info_plain_text(tmp_path, capsys):
    p = tmp_path / "h.ltm"
    main(["generate", "hypercube", "--dim", "3", "-o", str(p)])
    capsys.readouterr()
    assert main(["info", str(p)]) == 0
    out = capsys.readouterr().out
    assert "diameter" in out and "aspl" in out and "1.7143" in out


@pytest.mark.parametrize("argv", [
    ["generate"],
    ["generate", "torus", "-o", "x.ltm"],              # missing --dims
    ["generate", "torus", "--dims", "4x4"],            # missing -o
    ["generate", "fattree", "--k", "two", "--n", "3", "-o", "x"],
    ["generate", "circulant", "--nodes", "16", "--jumps", "1,x", "-o", "x"],
    ["generate", "bogus", "-o", "x"],
    ["generate", "torus", "--dims", "4", "-o", "x", "--format", "xml"],
    ["info"],
])
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2


@pytest.mark.parametrize("argv, match", [
    (["generate", "torus", "--dims", "0x4", "-o", "{d}/x.ltm"], "dimensions"),
    (["generate", "dragonfly", "--groups", "20", "--routers", "2", "--terminals", "1", "--global", "1",
      "-o", "{d}/x.ltm"], "global ports"),
    (["generate", "ldr", "--nodes", "9", "--degree", "3", "-o", "{d}/x.ltm"], "even"),
    (["generate", "fattree", "--k", "1", "--n", "2", "-o", "{d}/x.ltm"], "k >= 2"),
])
def test_bad_generator_parameters_are_usage_errors(tmp_path, capsys, argv, match):
    # every number of a generated topology comes from an option: exit 2, one line, nothing written
    argv = [a.replace("{d}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1 and err.startswith("libtopomap generate: error: ")
    assert not (tmp_path / "x.ltm").exists()


@pytest.mark.parametrize("argv, match", [
    (["generate", "torus", "--dims", "4", "-o", "{d}/no/such/dir/x.ltm"], "No such file"),
    (["info", "{d}/missing.ltm"], "cannot open"),
    (["info", "{d}/bad.ltm"], "bad.ltm:3: vertex id 7 out of range"),
])
def test_bad_input_exits_1_with_one_line(tmp_path, capsys, argv, match):
    (tmp_path / "bad.ltm").write_text("num: 2\n0 a\n7 b\n0 1\n1 0\n")
    argv = [a.replace("{d}", str(tmp_path)) for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1 and "Traceback" not in err


def test_console_entry_point_help_and_exit_codes(tmp_path):
    def run(*a):
        return subprocess.run([sys.executable, "-m", "libtopomap", *a], capture_output=True, text=True)

    r = run("generate", "--help")
    assert r.returncode == 0 and "dragonfly" in r.stdout
    r = run("generate", "torus", "--dims", "2x2", "-o", str(tmp_path / "t.ltm"))
    assert r.returncode == 0
    r = run("info", str(tmp_path / "nope.ltm"))
    assert r.returncode == 1 and "Traceback" not in r.stderr


# ----------------------------------------------------------------------------- devices and FIFOs are not read
@pytest.mark.slow
def test_devices_and_fifos_are_not_read(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo")
    for argv in (["info", "/dev/zero"], ["info", "fifo"], ["info", "fifo", "--format", "ltm"],
                 ["map", "--topology", "/dev/zero", "--graph", "stencil:2x2"],
                 ["map", "--topology", "fifo", "--graph", "stencil:2x2"]):
        # a subprocess: before the fix a FIFO blocked in open() for ever and /dev/zero with a format
        # read until memory ran out
        p = subprocess.run([sys.executable, "-m", "libtopomap", *argv], capture_output=True, text=True,
                           cwd=tmp_path, timeout=60)
        assert p.returncode == 1, (argv, p.stderr)
        assert p.stderr.strip().endswith(f"error: {argv[-1] if argv[0] == 'info' else argv[2]}: not a regular file") \
            or "not a regular file" in p.stderr, (argv, p.stderr)
        assert "Traceback" not in p.stderr
    # found by the fuzzer: ingest sniffed the FIFO with its own open(); -o FIFO blocked in open() for writing
    for argv, needle in ((["ingest", "fifo", "-o", "o.ltm"], "fifo: not a regular file"),
                         (["generate", "circulant", "--n", "8", "-o", "fifo"],
                          "fifo: a FIFO that no process reads: writing would block")):
        p = subprocess.run([sys.executable, "-m", "libtopomap", *argv], capture_output=True, text=True,
                           cwd=tmp_path, timeout=60)
        assert p.returncode == 1 and p.stderr.strip().endswith(needle), (argv, p.stderr)
    with pytest.raises(ltm.FormatError, match="fifo: not a regular file"):
        ltm.load_graph(str(tmp_path / "fifo"))
    from libtopomap.graphfiles import read_comm_matrix

    with pytest.raises(ltm.FormatError, match="fifo: not a regular file"):
        read_comm_matrix(str(tmp_path / "fifo"))
