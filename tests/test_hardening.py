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
    from libtopomap.mpi.locate import read_fake_names

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
