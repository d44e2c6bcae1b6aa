"""Issue 12 without MPI: each defect found by probing the landed code as a user and as an attacker
would, with a test that failed before its fix (the MPI ones are in tests/mpi/test_hardening.py)."""

import subprocess
import sys

import numpy as np
import pytest

import libtopomap as ltm


def _run(code, tmp_path):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)


# ----------------------------------------------------------------------------- item 2
@pytest.mark.parametrize("data", [
    b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.0\r",
    b"%%MatrixMarket matrix coordinate real general\r2 2 1\r1 2 3.0\r",
    b"%%MatrixMarket matrix coordinate real general\r\n2 2 1\r\n1 2 3.0\r\n",
])
def test_item2_matrix_market_with_cr_line_ends_cannot_crash(tmp_path, data):
    # scipy's native reader segfaulted on the first one; run in a subprocess so a crash fails the test
    (tmp_path / "a.mtx").write_bytes(data)
    p = _run("import libtopomap as l; g = l.load_graph('a.mtx'); print(g.n, g.n_edges)", tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["2", "1"]


def test_item2_matrix_market_reader_matches_its_definition(tmp_path):
    (tmp_path / "s.mtx").write_text("%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 3\n2 1\n3 2\n3 3\n")
    g = ltm.load_graph(tmp_path / "s.mtx")
    assert g.n == 3 and sorted(zip(g.src.tolist(), g.dst.tolist())) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    (tmp_path / "d.mtx").write_text("%%MatrixMarket matrix array real general\n2 2\n0\n5\n0\n0\n")
    g = ltm.load_graph(tmp_path / "d.mtx")  # column-major: A[1, 0] = 5, process 0 sends to 1
    assert g.n == 2 and list(zip(g.src.tolist(), g.dst.tolist())) == [(0, 1)]


@pytest.mark.parametrize("text, needle", [
    ("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n", "announces 2 entries"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 9 1\n", "outside 1..2"),
    ("%%MatrixMarket matrix coordinate real general\n2 3 0\n", "square"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 nan\n", "finite"),
    ("%%MatrixMarket tensor coordinate real general\n2 2 0\n", "unsupported Matrix Market header"),
    ("%%MatrixMarket matrix coordinate real general\n9999999999 9999999999 0\n", "above the limit"),
])
def test_item2_bad_matrix_market_files_name_file_and_line(tmp_path, text, needle):
    (tmp_path / "b.mtx").write_text(text)
    with pytest.raises(ltm.FormatError, match=needle) as e:
        ltm.load_graph(tmp_path / "b.mtx")
    assert str(e.value).startswith(str(tmp_path / "b.mtx"))


# ----------------------------------------------------------------------------- items 6 and 7: graph files
def test_item6_an_edge_list_naming_a_huge_id_hits_the_limit_before_allocating(tmp_path, monkeypatch):
    (tmp_path / "e.txt").write_text("0 300000000\n")
    with pytest.raises(ltm.FormatError, match=r"e.txt:1: the graph has 300000001 processes, above the limit of "
                                              r"4194304 \(raise it with --max-vertices N or \$LIBTOPOMAP_MAX_VERTICES"):
        ltm.load_graph(tmp_path / "e.txt")
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "2")
    (tmp_path / "f.txt").write_text("0 1\n1 2\n")
    with pytest.raises(ltm.FormatError, match="f.txt:2: the graph has 3 processes, above the limit of 2"):
        ltm.load_graph(tmp_path / "f.txt")


def test_item6_dev_zero_is_not_read(tmp_path):
    with pytest.raises(ltm.FormatError, match="/dev/zero: not a regular file"):
        ltm.load_graph("/dev/zero")


@pytest.mark.parametrize("data, needle", [
    (b"0 1\n\xff\xfe 2\n", r"u.txt:2: not UTF-8 text \(byte 0xff\)"),
    (b"0 99999999999999999999999\n", "u.txt:1: the graph has 100000000000000000000000 processes, above the limit"),
])
def test_item7_edge_lists_give_one_line_errors(tmp_path, data, needle):
    (tmp_path / "u.txt").write_bytes(data)
    with pytest.raises(ltm.FormatError, match=needle):
        ltm.load_graph(tmp_path / "u.txt")


@pytest.mark.parametrize("make", [lambda: ltm.torus("100000x100000"), lambda: ltm.mesh([2] * 40),
                                  lambda: ltm.circulant(10**9), lambda: ltm.rtt(10**6),
                                  lambda: ltm.dragonfly(1000, 1000, 1000, 1)])
def test_item6_generators_check_their_size_before_allocating(make):
    with pytest.raises(ltm.TopologyError, match=r"above the limit of 4194304 \(raise it with --max-vertices N or "
                                                r"\$LIBTOPOMAP_MAX_VERTICES\)"):
        make()


@pytest.mark.parametrize("k, n", [(2, 10**9), (10**6, 10**6), (2, 10**5)])
def test_item6_fat_tree_of_absurd_depth_fails_before_computing_k_to_the_n(k, n, monkeypatch):
    # the fuzzer found fattree(2, 10**9): k**n is a huge integer (MemoryError, or ValueError when printed)
    with pytest.raises(ltm.TopologyError, match=rf"fattree\({k}, {n}\) has more than 4194304 vertices, above"):
        ltm.fattree(k, n)
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "100")
    with pytest.raises(ltm.TopologyError, match=r"fattree\(4, 3\) has 112 vertices, above the limit of 100"):
        ltm.fattree(4, 3)


def test_item6_the_generator_limit_can_be_raised_or_lowered(monkeypatch):
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "15")
    with pytest.raises(ltm.TopologyError, match="4x4 has 16 vertices, above the limit of 15"):
        ltm.torus("4x4")
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "16")
    assert ltm.torus("4x4").n_vertices == 16


def test_item7_fake_names_not_utf8_or_not_a_file(tmp_path):
    from libtopomap.mpi.location import read_fake_names

    (tmp_path / "names").write_bytes(b"0 n0\n1 n\xe91\n")
    with pytest.raises(ltm.FormatError, match=r"names:2: not UTF-8 text \(byte 0xe9\)"):
        read_fake_names(tmp_path / "names")
    with pytest.raises(ltm.FormatError, match="/dev/zero: not a regular file"):
        read_fake_names("/dev/zero")


def test_item7_cli_argument_with_a_nul_byte_is_a_usage_error(capsys):
    from libtopomap.cli import main

    assert main(["generate", "torus", "--dims", "2x2", "-o", "a\x00b"]) == 2
    assert "contains a NUL byte" in capsys.readouterr().err


# ----------------------------------------------------------------------------- item 8
@pytest.mark.parametrize("slots, needle", [([2**31, 1], "2147483648 slots, more than 2147483647"),
                                           ([2**32 + 1, 1], "4294967297 slots"),
                                           ([10**30, 1], "slots, more than"),
                                           (["x", 1], "slots must be integers")])
def test_item8_slot_counts_do_not_wrap_at_int32(slots, needle):
    with pytest.raises(ltm.TopologyError, match=needle):
        ltm.Topology(["a", "b"], np.array([[0, 1]]), slots=slots)
    assert ltm.Topology(["a", "b"], np.array([[0, 1]]), slots=[2**31 - 1, 0]).slots.tolist() == [2**31 - 1, 0]


# ----------------------------------------------------------------------------- item 11
@pytest.mark.parametrize("seed, exc", [(-1, ltm.ArgumentError), (1.5, ltm.ArgumentTypeError),
                                       ("x", ltm.ArgumentTypeError), (True, ltm.ArgumentTypeError)])
@pytest.mark.parametrize("strategy", ["random", "greedy", "rcm"])
def test_item11_bad_seeds_are_library_errors(seed, exc, strategy):
    with pytest.raises(exc, match="seed must be a non-negative integer"):
        ltm.map_processes(ltm.torus("4"), ltm.as_commgraph([(0, 1), (1, 2)]), strategy=strategy, seed=seed)
    with pytest.raises(ValueError if exc is ltm.ArgumentError else TypeError):
        ltm.map_processes(ltm.torus("4"), ltm.as_commgraph([(0, 1)]), strategy=strategy, seed=seed)


# ----------------------------------------------------------------------------- item 13
def test_item13_slots_on_switches_are_rejected():
    ft = ltm.fattree(4, 2)
    slots = np.ones(ft.n_vertices, dtype=int)
    with pytest.raises(ltm.MappingError, match=r"process\(es\) on switch 'sw-"):
        ltm.map_processes(ft, ltm.as_commgraph([(0, 1)]), slots=slots)
    hosts_only = np.where(np.asarray(ft.kinds) == "switch", 0, 1)
    m = ltm.map_processes(ft, ltm.as_commgraph([(0, 1)]), slots=hosts_only)
    assert all(ft.kinds[v] != "switch" for v in m.vertices)


# ----------------------------------------------------------------------------- item 14
def test_item14_a_square_array_is_a_matrix_even_2x2():
    g = ltm.as_commgraph(np.array([[0, 5], [0, 0]]))  # as an edge list it was 0 -> 5 and 0 -> 0
    assert g.n == 2 and list(zip(g.src.tolist(), g.dst.tolist(), g.weights.tolist())) == [(0, 1, 5.0)]


@pytest.mark.parametrize("edges", [[(0.5, 1)], [(0, 1), (1, 2.25)], np.array([[0.5, 1.0], [1.0, 2.0], [2.0, 0.0]])])
def test_item14_fractional_ids_are_rejected_not_truncated(edges):
    with pytest.raises(ltm.CommGraphError, match="process ids must be integers"):
        ltm.as_commgraph(edges)
    assert ltm.as_commgraph([(0.0, 1.0)]).n == 2  # integral floats are ids


def test_item14_huge_ids_hit_the_process_limit():
    with pytest.raises(ltm.CommGraphError, match="above the limit"):
        ltm.as_commgraph([(0, 2**40)])


def test_item5_a_corrupt_numba_cache_is_recompiled_not_fatal(tmp_path):
    # a cached kernel's index (*.nbi) and entries (*.nbc) overwritten with garbage: the next run warns,
    # compiles again and rewrites them; the run after it is silent.  A one-line kernel in its own module
    # keeps the three compilations short.
    import os
    import subprocess
    import sys

    kernel = tmp_path / "kernel.py"
    kernel.write_text("import libtopomap._numba_cache\nimport numba\n\n"
                      "@numba.njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    code = ("import importlib.util, warnings; warnings.simplefilter('always'); "
            f"spec = importlib.util.spec_from_file_location('kernel', {str(kernel)!r}); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); print(m.twice(21))")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run():
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                              cwd=tmp_path)
    first = run()
    assert first.returncode == 0 and first.stdout == "42\n", first.stderr
    files = list((tmp_path / "cache").rglob("*.nb[ic]"))
    assert {f.suffix for f in files} == {".nbi", ".nbc"}
    for f in files:
        f.write_bytes(b"\x80\x04garbage")
    second = run()
    assert second.returncode == 0 and second.stdout == "42\n", second.stderr
    assert "numba cache index" in second.stderr and "compiling again" in second.stderr
    third = run()
    assert third.returncode == 0 and third.stdout == "42\n" and "numba cache" not in third.stderr, third.stderr


# ----------------------------------------------------------------------------- item 6: one vertex limit
from libtopomap._limits import vertex_limit  # noqa: E402
from libtopomap.cli import main as cli_main  # noqa: E402

LIMIT_HINT = r"above the limit of {} \(raise it with --max-vertices N or \$LIBTOPOMAP_MAX_VERTICES\)"


def test_item6_a_31_byte_topology_conf_is_refused_before_its_names_are_made(tmp_path):
    # a billion names: counted from the brackets, never expanded (the old reader made 150,000 nodes of
    # 'n[0-149999]' and its per-expression cap allowed 10**6 per line, any number of lines)
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=s Nodes=n[0-999999999]\n")
    with pytest.raises(ltm.FormatError, match=r"topology.conf:1: this file, up to here, has 1000000000 host and "
                                              r"switch names, " + LIMIT_HINT.format(4194304)):
        ltm.load(conf)


def test_item6_topology_conf_names_are_summed_over_lines(tmp_path):
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=a Nodes=n[0-9]\nSwitchName=b Nodes=m[0-9]\nSwitchName=c Switches=a,b Nodes=x[1-6]\n")
    with vertex_limit(25):
        with pytest.raises(ltm.FormatError, match=r"topology.conf:3: this file, up to here, has 28 host and switch "
                                                  r"names, " + LIMIT_HINT.format(25)):
            ltm.load(conf)
    with vertex_limit(29):  # 28 names, 29 vertices (26 hosts, 3 switches)
        assert ltm.load(conf).hosts.size == 26


def test_item6_topology_yaml_names_are_checked_before_expanding(tmp_path):
    doc = tmp_path / "topology.yaml"
    doc.write_text("- topology: t\n  tree:\n    switches:\n    - switch: s\n      nodes: n[0-9]\n"
                   "    - switch: r\n      children: s\n      nodes: m[0-999999999999]\n")
    with pytest.raises(ltm.FormatError, match=r"topology.yaml:8: this file, up to here, has 1000000000011 host and "
                                              r"switch names, " + LIMIT_HINT.format(4194304)):
        ltm.load(doc)


def test_item6_hostlists_are_sized_without_expanding():
    from libtopomap.adapters.slurm import expand_hostlist, hostlist_size
    from libtopomap.rankfiles import read_allocation

    assert hostlist_size("n[0-149999],login[1-2],r[1-2]-n[01-03]") == 150008
    assert expand_hostlist("r[1-2]-n[08-10],x") == ["r1-n08", "r1-n09", "r1-n10", "r2-n08", "r2-n09", "r2-n10", "x"]
    with vertex_limit(6):
        with pytest.raises(ltm.FormatError, match=r"the hostlist 'r\[1-2\]-n\[08-10\],x' has 7 names, "
                                                  + LIMIT_HINT.format(6)):
            expand_hostlist("r[1-2]-n[08-10],x")
        with pytest.raises(ltm.FormatError, match="has 7 names, above the limit of 6"):
            read_allocation("r[1-2]-n[08-10],x")


def test_item6_fabric_readers_stop_at_the_limit():
    path = "tests/data/fabrics/jabl__ibtopotool__1.topo.txt"
    n = ltm.load(path).n_vertices
    with vertex_limit(5):
        with pytest.raises(ltm.FormatError, match=r"ibtopotool__1.topo.txt:\d+: this fabric, up to here, has 6 nodes, "
                                                  + LIMIT_HINT.format(5)):
            ltm.load(path)
    with vertex_limit(n + 10):
        assert ltm.load(path).n_vertices == n


def test_item6_ltm_header_and_json_vertices_hit_the_limit(tmp_path):
    ltm.save(str(tmp_path / "t.ltm"), ltm.torus("4x4"))
    ltm.save(str(tmp_path / "t.json"), ltm.torus("4x4"))
    (tmp_path / "huge.ltm").write_text("num: 999999999999\n")
    with pytest.raises(ltm.FormatError, match=r"huge.ltm:1: the header has 999999999999 vertices, "
                                              + LIMIT_HINT.format(4194304)):
        ltm.load(tmp_path / "huge.ltm")
    with vertex_limit(15):
        with pytest.raises(ltm.FormatError, match=r"t.ltm:1: the header has 16 vertices, above the limit of 15"):
            ltm.load(tmp_path / "t.ltm")
        with pytest.raises(ltm.FormatError, match=r"t.json: 'vertices' has 16 vertices, above the limit of 15"):
            ltm.load(tmp_path / "t.json")
    with vertex_limit(16):
        assert ltm.load(tmp_path / "t.ltm").n_vertices == ltm.load(tmp_path / "t.json").n_vertices == 16


def test_item6_graph_specs_and_concentration_hit_the_limit():
    with pytest.raises(ltm.CommGraphError, match=r"random graph\(1000000000, 3\) has 1000000000 processes, "
                                                 + LIMIT_HINT.format(4194304)):
        ltm.load_graph("random:1000000000:3:1")
    with pytest.raises(ltm.CommGraphError, match="needs 0 <= degree <= 2P"):
        ltm.load_graph("random:10:1000000000:1")
    with pytest.raises(ltm.CommGraphError, match=r"uniform traffic\(1000\) with 1000000000 messages per process "
                                                 r"has 1000000000000 messages, above the limit of 268435456 "
                                                 r"\(.*--max-edges"):
        ltm.load_graph("uniform:1000:1000000000")
    with pytest.raises(ltm.TopologyError, match=r"concentrate\(torus-4x4, 1000000\) has 16000016 vertices"):
        ltm.concentrate(ltm.torus("4x4"), 1000000)


def test_item6_the_old_process_variable_still_works_with_a_deprecation_warning(tmp_path, monkeypatch):
    (tmp_path / "e.txt").write_text("0 1\n1 2\n")
    monkeypatch.delenv("LIBTOPOMAP_MAX_VERTICES", raising=False)
    monkeypatch.setenv("LIBTOPOMAP_MAX_PROCESSES", "2")
    with pytest.warns(DeprecationWarning, match="LIBTOPOMAP_MAX_PROCESSES is deprecated"):
        with pytest.raises(ltm.FormatError, match="e.txt:2: the graph has 3 processes, above the limit of 2"):
            ltm.load_graph(tmp_path / "e.txt")
    monkeypatch.setenv("LIBTOPOMAP_MAX_VERTICES", "x")
    with pytest.raises(ltm.ArgumentError, match="LIBTOPOMAP_MAX_VERTICES must be a positive integer, got 'x'"):
        ltm.load_graph(tmp_path / "e.txt")


def test_item6_cli_max_vertices(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # generate: a size over the limit is a usage error (exit 2) naming the limit and how to raise it
    assert cli_main(["generate", "torus", "--dims", "4x4", "-o", "t.ltm", "--max-vertices", "15"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("libtopomap generate: error: 4x4 has 16 vertices, above the limit of 15 (raise it with "
                           "--max-vertices N or $LIBTOPOMAP_MAX_VERTICES)")
    assert cli_main(["generate", "torus", "--dims", "4x4", "-o", "t.ltm", "--max-vertices", "16"]) == 0
    for bad in ("0", "-3", "x", "1e3"):
        with pytest.raises(SystemExit) as e:
            cli_main(["info", "t.ltm", "--max-vertices", bad])
        assert e.value.code == 2
        assert "argument --max-vertices: expected a positive integer" in capsys.readouterr().err
    capsys.readouterr()
    # readers: exit 1 with file, line and limit; the default applies without the option
    assert cli_main(["info", "t.ltm", "--max-vertices", "15"]) == 1
    assert "t.ltm:1: the header has 16 vertices, above the limit of 15" in capsys.readouterr().err
    (tmp_path / "topology.conf").write_text("SwitchName=s Nodes=n[0-149999]\n")  # 31 bytes
    assert cli_main(["info", "topology.conf", "--max-vertices", "100000"]) == 1
    assert ("topology.conf:1: this file, up to here, has 150000 host and switch names, above the limit of 100000"
            in capsys.readouterr().err)
    assert cli_main(["map", "--topology", "t.ltm", "--graph", "stencil:4x4", "--max-vertices", "15"]) == 1
    assert "above the limit of 15" in capsys.readouterr().err
    (tmp_path / "e.txt").write_text("0 300000000\n")
    assert cli_main(["map", "--topology", "t.ltm", "--graph", "e.txt"]) == 1
    assert "e.txt:1: the graph has 300000001 processes, above the limit of 4194304" in capsys.readouterr().err
    for cmd in (["collective", "--topology", "t.ltm", "--collective", "bcast", "--procs", "4"],
                ["ingest", "topology.conf", "-o", "o.ltm"], ["simulate", "--help"], ["plot", "--help"]):
        if cmd[-1] == "--help":
            with pytest.raises(SystemExit):
                cli_main(cmd)
            assert "--max-vertices N" in capsys.readouterr().out
        else:
            assert cli_main(cmd + ["--max-vertices", "3"]) == 1
            assert "above the limit of 3" in capsys.readouterr().err


def test_item6_devices_and_fifos_are_not_read(tmp_path):
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


def test_item6_bench_sizes_are_checked_against_a_per_rank_buffer_limit(tmp_path):
    # in a subprocess: importing libtopomap.mpi.bench initialises MPI
    code = ("import libtopomap as l\nfrom libtopomap.mpi import bench\ng = bench.halo_graph(4)\n"
            "bench._check_buffers([8, 1 << 20], bench.COLLECTIVES, 4, g)\n"
            "try:\n    bench._check_buffers([8, 1 << 30], bench.COLLECTIVES, 4, g)\n"
            "except l.ArgumentError as e:\n    print(e)\n")
    p = _run(code, tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == ("--sizes 1G needs about 16G bytes of buffers per rank (bcast, allreduce, alltoall, "
                                "neighbor_alltoall on 4 ranks), above the limit of 1G (set LIBTOPOMAP_BENCH_MAX_BYTES "
                                "to raise it)")


# ----------------------------------------------------------------------------- item 7 from the command line
def _one_line_error(capsys, argv, code=1):
    rc = cli_main(argv)
    err = capsys.readouterr().err
    assert rc == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


_JSON_HEAD = '{"format": "libtopomap-topology", "version": 1, '


@pytest.mark.parametrize("text, needle", [
    ("[" * 100_000, "t.json: invalid JSON: nested too deeply"),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1, NaN]]}',
     "t.json: invalid JSON: NaN is not a JSON number"),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1, Infinity]]}',
     "t.json: invalid JSON: Infinity is not a JSON number"),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1, 1e999]]}',
     "t.json: link 0: capacity must be a finite positive number, got inf"),
    (_JSON_HEAD + '"vertices": [{"name": "a", "slots": "2"}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: \"slots\" must be a non-negative integer, got '2'"),
    (_JSON_HEAD + '"vertices": [{"name": "a", "slots": 1.5}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: \"slots\" must be a non-negative integer, got 1.5"),
    (_JSON_HEAD + '"vertices": [{"name": "a", "slots": true}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: \"slots\" must be a non-negative integer, got True"),
    (_JSON_HEAD + '"vertices": [{"name": "a", "kind": 3}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: \"kind\" must be a string"),
    (_JSON_HEAD + '"vertices": [{"name": 7}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: expected an object with a string \"name\""),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1, "2"]]}',
     "t.json: link 0: capacity must be a finite positive number, got '2'"),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, true]]}',
     "t.json: link 0: endpoints must be vertex indices"),
    (_JSON_HEAD + '"name": 5, "vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: 'name' must be a string, got 5"),
    (_JSON_HEAD + '"attrs": [1], "vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: 'attrs' must be an object, got [1]"),
])
def test_item7_bad_json_topologies_give_one_line_errors(tmp_path, capsys, text, needle):
    (tmp_path / "t.json").write_text(text)
    line = _one_line_error(capsys, ["info", str(tmp_path / "t.json"), "--format", "json"])
    assert line.startswith("libtopomap info: error: ") and line.endswith(needle) or needle in line, line


@pytest.mark.parametrize("data, needle", [
    (bytes(range(256)) * 4, r"b.json:2: not UTF-8 text \(byte 0x80\)"),  # byte 10 ends line 1
    (b'{"sizes": [1, 2]}\xff', r"b.json:1: not UTF-8 text \(byte 0xff\)"),
    (b"[" * 100_000, "b.json: invalid JSON: nested too deeply"),
    (b'{"sizes": [1], "original": {"times": [NaN]}, "mapped": {"times": [1]}}',
     "b.json: invalid JSON: NaN is not a JSON number"),
    (b'{"sizes": [1], "original": {"times": ["x"]}, "mapped": {"times": [1]}}',
     r'b.json: "original": \{"times"\} must be a non-empty list of non-negative numbers'),
    (b'{"sizes": [1, 2], "original": {"times": [1]}, "mapped": {"times": [1, 2]}}',
     r'b.json: "original" has 1 times for 2 sizes'),
    (b'{"sizes": "1K"}', r'b.json: "sizes" must be a non-empty list of positive numbers'),
    (b"[1, 2]", "b.json: expected an object"),
])
def test_item7_plot_from_a_bad_file_is_one_line(tmp_path, capsys, data, needle):
    import re

    (tmp_path / "b.json").write_bytes(data)
    line = _one_line_error(capsys, ["plot", "times", "--from", str(tmp_path / "b.json"), "-o", str(tmp_path / "p")])
    assert re.search(needle, line), line
    assert not list(tmp_path.glob("p.*"))


def test_item7_plot_paths_that_do_not_exist(tmp_path, capsys):
    t = str(tmp_path / "t.ltm")
    ltm.save(t, ltm.torus("2x2"))
    out = ["-o", str(tmp_path / "p")]
    assert _one_line_error(capsys, ["plot", "times", "--from", str(tmp_path / "no.json"), *out]).endswith(
        "no.json: no such file")
    assert _one_line_error(capsys, ["plot", "times", "--from", str(tmp_path), *out]).endswith(
        f"{tmp_path}: not a regular file")
    assert "no.ltm: cannot open: No such file or directory" in _one_line_error(
        capsys, ["plot", "adjacency", "--topology", str(tmp_path / "no.ltm"), *out])
    assert "no.txt no such file" in _one_line_error(capsys, ["plot", "adjacency", "--graph", str(tmp_path / "no.txt"),
                                                             *out])
    assert "no.map" in _one_line_error(capsys, ["plot", "hops", "--topology", t, "--graph", "stencil:2x2",
                                                "--mapping", str(tmp_path / "no.map"), *out])


def test_item7_plot_without_matplotlib_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    line = _one_line_error(capsys, ["plot", "adjacency", "--graph", "stencil:2x2", "-o", str(tmp_path / "p")])
    assert line == "libtopomap plot: error: plots need matplotlib: pip install 'libtopomap[plot]'"
    with pytest.raises(ltm.LibTopoMapError, match=r"pip install 'libtopomap\[plot\]'"):
        from libtopomap.plot import plot_adjacency

        plot_adjacency(None, ltm.load_graph("stencil:2x2"))


def test_item7_graph_files_from_the_command_line(tmp_path, capsys):
    t = str(tmp_path / "t.ltm")
    ltm.save(t, ltm.torus("2x2"))
    (tmp_path / "u.txt").write_bytes(b"0 1\n\xff\xfe 2\n")
    assert _one_line_error(capsys, ["map", "--topology", t, "--graph", str(tmp_path / "u.txt")]).endswith(
        "u.txt:2: not UTF-8 text (byte 0xff)")
    (tmp_path / "h.txt").write_bytes(b"0 99999999999999999999999\n")
    assert "h.txt:1: the graph has 100000000000000000000000 processes, above the limit" in _one_line_error(
        capsys, ["map", "--topology", t, "--graph", str(tmp_path / "h.txt")])


# ----------------------------------------------------------------------------- item 16
def test_item16_plot_into_a_missing_folder_is_an_error_not_a_mkdir(tmp_path, capsys):
    from libtopomap.plot import plot_times, save

    line = _one_line_error(capsys, ["plot", "adjacency", "--graph", "stencil:2x2", "-o", str(tmp_path / "no/p")],
                           code=2)
    assert line == (f"libtopomap plot: error: -o {tmp_path}/no/p: folder '{tmp_path}/no' does not exist "
                    "(create it first)")
    fig = plot_times([1024], {"original": [1.0], "mapped": [0.5]})
    with pytest.raises(ltm.ArgumentError, match="folder '.*/no' does not exist"):
        save(fig, tmp_path / "no" / "p")
    assert not (tmp_path / "no").exists()


def test_item16_self_loops_in_graph_files_warn_with_file_and_line(tmp_path, capsys):
    (tmp_path / "e.txt").write_text("0 1\n1 1\n# c\n2 2\n")
    with pytest.warns(ltm.LibTopoMapWarning, match=r"e.txt:2: process 1 sends to itself: a self loop \(2 in all\)"):
        g = ltm.load_graph(tmp_path / "e.txt")
    assert g.n == 3 and g.src.tolist() == [0, 1, 2]  # accepted
    (tmp_path / "f.txt").write_text("0 1\n1 1\n")  # the bulk reader hands it to the line reader
    with pytest.warns(ltm.LibTopoMapWarning, match=r"f.txt:2: process 1 sends to itself: a self loop, "):
        ltm.load_graph(tmp_path / "f.txt")
    (tmp_path / "c.mat").write_text("0 1 0\n1 0 0\n0 0 5\n")
    with pytest.warns(ltm.LibTopoMapWarning, match=r"c.mat:3: process 2 sends to itself"):
        ltm.load_graph(tmp_path / "c.mat")
    t = str(tmp_path / "t.ltm")
    ltm.save(t, ltm.torus("2x2"))
    assert cli_main(["map", "--topology", t, "--graph", str(tmp_path / "e.txt"), "--strategy", "greedy"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"libtopomap map: warning: {tmp_path}/e.txt:2: process 1 sends to itself: a self loop (2 in all), "
                   "which costs nothing on the network"]


def test_item16_dubious_fabric_input_warns(tmp_path, capsys):
    # a switch listing itself (a self loop) and a node listed twice: accepted, with a warning per line
    (tmp_path / "topology.conf").write_text("SwitchName=s Switches=s Nodes=n[1-2]\nSwitchName=s Nodes=n2\n")
    with pytest.warns(ltm.LibTopoMapWarning) as caught:
        topo = ltm.load(tmp_path / "topology.conf")
    assert topo.hosts.size == 2
    messages = [str(w.message) for w in caught]
    assert any(m.startswith(f"{tmp_path}/topology.conf:2: switch 's' defined again") for m in messages), messages
    assert any(m.startswith(f"{tmp_path}/topology.conf:1: self-loop cable s[") for m in messages), messages
    # one hostname under two switches
    (tmp_path / "two.conf").write_text("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\nSwitchName=r Switches=a,b\n")
    with pytest.warns(ltm.LibTopoMapWarning, match=r"two.conf:2: node 'n2' is listed by switch 'b' and by switch 'a' "
                                                   r"\(line 1\): a duplicate hostname\?"):
        assert ltm.load(tmp_path / "two.conf").hosts.size == 2
    assert cli_main(["info", str(tmp_path / "topology.conf")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err and all(e.startswith("libtopomap info: warning: ") for e in err), err


def test_item16_at_most_ten_fabric_warnings_are_issued(tmp_path):
    (tmp_path / "topology.conf").write_text("".join(f"SwitchName=s Nodes=n{i} Bogus=1\n" for i in range(30)))
    with pytest.warns(ltm.LibTopoMapWarning) as caught:
        topo = ltm.load(tmp_path / "topology.conf")
    assert len(caught) == 10 and "further warnings: see the ingest report" in str(caught[-1].message)
    from libtopomap.adapters import ingest_report

    assert len(ingest_report(topo).warnings) > 30


def test_item7_mapping_file_with_an_infinite_vertex_is_one_line(tmp_path, capsys):
    # found by the fuzzer: int(1e999) raised OverflowError in read_mapping_file
    t = str(tmp_path / "t.ltm")
    ltm.save(t, ltm.torus("2x2"))
    (tmp_path / "m.json").write_text('["n0", "n1", 2e99999, 2]\n')
    line = _one_line_error(capsys, ["plot", "hops", "--topology", t, "--graph", "stencil:2x2", "--mapping",
                                    str(tmp_path / "m.json"), "-o", str(tmp_path / "p")])
    assert line.endswith("m.json: unknown vertex inf"), line


def test_bench_iterations_are_bounded(capsys):
    # found by the fuzzer: `bench --iterations 1000000000` ran for hours instead of a usage error
    from libtopomap.cli import main
    from libtopomap.cli._bench import MAX_ITERATIONS

    with pytest.raises(SystemExit) as e:
        main(["bench", "--topology", "t.ltm", "--iterations", str(MAX_ITERATIONS + 1)])
    assert e.value.code == 2 and f"at most {MAX_ITERATIONS} timed calls per size" in capsys.readouterr().err


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_one_utf8_reader_names_the_line(tmp_path, end):
    # libtopomap._textio.read_text serves the edge-list, Matrix Market, fake-names, mapping and plot readers
    p = tmp_path / "a.mtx"
    p.write_bytes(end.join([b"%%MatrixMarket matrix coordinate real general", b"2 2 1", b"1 2 \xff", b""]))
    with pytest.raises(ltm.FormatError, match=r"a\.mtx:3: not UTF-8 text \(byte 0xff\): not a Matrix Market file"):
        ltm.load_graph(p)
    e = tmp_path / "e.txt"
    e.write_bytes(end.join([b"0 1", b"1 2", b"2 \xe9", b""]))
    with pytest.raises(ltm.FormatError, match=r"e\.txt:3: not UTF-8 text \(byte 0xe9\)"):
        ltm.load_graph(e)
