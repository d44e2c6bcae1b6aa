"""Options of the command line: old names still work, with a warning naming the new one; arguments the
parser refuses (a NUL byte, bench's iteration and buffer bounds)."""

import pathlib

import pytest

from libtopomap.cli import build_parser

from _helpers import run_python


@pytest.mark.parametrize("command", ["bench", "demo"])
def test_fake_hosts_is_the_deprecated_name_of_fake_names(command, capsys):
    parser = build_parser([command])
    extra = ["--topology", "t.topo"]
    args = parser.parse_args([command, *extra, "--fake-names", "job.names"])
    assert args.fake_names == "job.names" and capsys.readouterr().err == ""
    with pytest.warns(DeprecationWarning, match="--fake-hosts is deprecated; use --fake-names"):
        args = parser.parse_args([command, *extra, "--fake-hosts", "old.names"])
    assert args.fake_names == "old.names" and not hasattr(args, "fake_hosts")
    assert "--fake-hosts is deprecated; use --fake-names" in capsys.readouterr().err
    assert parser.parse_args([command, *extra]).fake_names is None


@pytest.mark.parametrize("command, new, old", [("bench", "--fake-names", "--fake-hosts"),
                                               ("demo", "--fake-names", "--fake-hosts"),
                                               ("collective", "--allocation", "--placement")])
def test_help_shows_only_the_new_name(command, new, old, capsys):
    with pytest.raises(SystemExit):
        build_parser([command]).parse_args([command, "--help"])
    out = capsys.readouterr().out
    assert new in out and old not in out


# ---------------------------------------------------------------- numbers out of range: usage errors (exit 2)
ROOT = pathlib.Path(__file__).resolve().parent.parent
TOPO = str(ROOT / "libtopomap" / "data" / "demo_torus_4x2.topo")
FABRIC = str(ROOT / "topology_files" / "small_fabric.ibnetdiscover")


@pytest.mark.parametrize("argv, option, expected", [
    (["ingest", FABRIC, "-o", "x.ltm", "--slots", "0"], "--slots", "a positive integer"),
    (["ingest", FABRIC, "-o", "x.ltm", "--slots", "-2"], "--slots", "a positive integer"),
    (["ingest", FABRIC, "-o", "x.ltm", "--unknown-capacity", "0"], "--unknown-capacity", "a positive number"),
    (["ingest", FABRIC, "-o", "x.ltm", "--unknown-capacity", "nan"], "--unknown-capacity", "a positive number"),
    (["map", "--topology", TOPO, "--graph", "stencil:8", "--seed", "-1"], "--seed", "a non-negative integer"),
    (["map", "--topology", TOPO, "--graph", "stencil:8", "--seed", "1.5"], "--seed", "a non-negative integer"),
    (["map", "--topology", TOPO, "--graph", "stencil:8", "--seed", "x"], "--seed", "a non-negative integer"),
    # > 0, as time_budget= of the Python API and the MPI calls (libtopomap.validation.check_seconds)
    (["map", "--topology", TOPO, "--graph", "stencil:8", "--time-budget", "-1"], "--time-budget", "a positive number"),
    (["map", "--topology", TOPO, "--graph", "stencil:8", "--time-budget", "0"], "--time-budget", "a positive number"),
    (["map", "--topology", TOPO, "--graph", "stencil:8", "--ranks-per-host", "0"], "--ranks-per-host",
     "a positive integer"),
    (["generate", "torus", "--dims", "4x4", "-o", "x.ltm", "--concentration", "0"], "--concentration",
     "a positive integer"),
    (["generate", "hypercube", "--dim", "-1", "-o", "x.ltm"], "--dim", "a non-negative integer"),
    (["generate", "fattree", "--k", "0", "--n", "2", "-o", "x.ltm"], "--k", "a positive integer"),
    (["generate", "percs", "--supernodes", "1", "--dlinks", "1", "--seed", "-1", "-o", "x.ltm"], "--seed",
     "a non-negative integer"),
    (["generate", "ldr", "--nodes", "8", "--degree", "3", "--trials", "0", "-o", "x.ltm"], "--trials",
     "a positive integer"),
    (["collective", "--topology", TOPO, "--procs", "0"], "--procs", "a positive integer"),
    (["collective", "--topology", TOPO, "--procs", "4", "--seed", "-1"], "--seed", "a non-negative integer"),
    (["collective", "--topology", TOPO, "--procs", "4", "--root", "-1"], "--root", "a non-negative integer"),
    (["simulate", "--topology", TOPO, "--collective", "bcast", "--procs", "4", "--repeat", "0"], "--repeat",
     "a positive integer"),
    (["plot", "hops", "--topology", TOPO, "--collective", "bcast", "--procs", "4", "--iterations", "-1"],
     "--iterations", "a non-negative integer"),
    (["bench", "--topology", TOPO, "--iterations", "0"], "--iterations", "a positive integer"),
    (["demo", "--seed", "-1"], "--seed", "a non-negative integer"),
])
def test_numbers_out_of_range_are_usage_errors(argv, option, expected, capsys):
    from libtopomap.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"libtopomap {argv[0]}") and f"error: argument {option}" in last
    assert f"expected {expected}, got '{argv[argv.index(option) + 1]}'" in last


@pytest.mark.parametrize("argv", [
    ["collective", "--topology", TOPO, "--procs", "4", "--collective", "bcast", "--root", "4"],
    ["simulate", "--topology", TOPO, "--collective", "bcast", "--procs", "4", "--root", "9"],
])
def test_root_outside_the_processes_is_a_usage_error(argv, capsys):
    from libtopomap.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--root" in err and "is outside 0..3 (--procs 4)" in err


def test_number_types_accept_their_range():
    import argparse

    from libtopomap.cli._options import non_negative_float, non_negative_int, positive_float, positive_int

    assert positive_int("1") == 1 and non_negative_int("0") == 0 and non_negative_int(" 7 ") == 7
    assert positive_float("1e-3") == 1e-3 and non_negative_float("0") == 0.0
    for fn, bad in [(positive_int, "0"), (non_negative_int, "-1"), (positive_float, "0"), (positive_float, "inf"),
                    (non_negative_float, "-0.5"), (non_negative_float, "nan"), (positive_int, "2.0")]:
        with pytest.raises(argparse.ArgumentTypeError, match=f"got '{bad}'"):
            fn(bad)


# ----------------------------------------------------------- arguments the parser refuses, and bench's bounds
def test_an_argument_with_a_nul_byte_is_a_usage_error(capsys):
    from libtopomap.cli import main

    assert main(["generate", "torus", "--dims", "2x2", "-o", "a\x00b"]) == 2
    assert "contains a NUL byte" in capsys.readouterr().err


def test_bench_sizes_are_checked_against_a_per_rank_buffer_limit(tmp_path):
    # in a subprocess: importing libtopomap.mpi.bench initialises MPI
    code = ("import libtopomap as l\nfrom libtopomap.mpi import bench\ng = bench.halo_graph(4)\n"
            "bench._check_buffers([8, 1 << 20], bench.COLLECTIVES, 4, g)\n"
            "try:\n    bench._check_buffers([8, 1 << 30], bench.COLLECTIVES, 4, g)\n"
            "except l.ArgumentError as e:\n    print(e)\n")
    p = run_python(code, tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == ("--sizes 1G needs about 16G bytes of buffers per rank (bcast, allreduce, alltoall, "
                                "neighbor_alltoall on 4 ranks), above the limit of 1G (set LIBTOPOMAP_BENCH_MAX_BYTES "
                                "to raise it)")


def test_bench_iterations_are_bounded(capsys):
    # found by the fuzzer: `bench --iterations 1000000000` ran for hours instead of a usage error
    from libtopomap.cli import main
    from libtopomap.cli._bench import MAX_ITERATIONS

    with pytest.raises(SystemExit) as e:
        main(["bench", "--topology", "t.ltm", "--iterations", str(MAX_ITERATIONS + 1)])
    assert e.value.code == 2 and f"at most {MAX_ITERATIONS} timed calls per size" in capsys.readouterr().err
