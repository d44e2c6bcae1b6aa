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
    ("%%MatrixMarket matrix coordinate real general\n9999999999 9999999999 0\n", "exceed the limit"),
])
def test_item2_bad_matrix_market_files_name_file_and_line(tmp_path, text, needle):
    (tmp_path / "b.mtx").write_text(text)
    with pytest.raises(ltm.FormatError, match=needle) as e:
        ltm.load_graph(tmp_path / "b.mtx")
    assert str(e.value).startswith(str(tmp_path / "b.mtx"))


# ----------------------------------------------------------------------------- items 6 and 7: graph files
def test_item6_an_edge_list_naming_a_huge_id_hits_the_limit_before_allocating(tmp_path, monkeypatch):
    (tmp_path / "e.txt").write_text("0 300000000\n")
    with pytest.raises(ltm.FormatError, match=r"e.txt:1: 300000001 processes exceed the limit of 4194304 "
                                              r"\(set LIBTOPOMAP_MAX_PROCESSES"):
        ltm.load_graph(tmp_path / "e.txt")
    monkeypatch.setenv("LIBTOPOMAP_MAX_PROCESSES", "2")
    (tmp_path / "f.txt").write_text("0 1\n1 2\n")
    with pytest.raises(ltm.FormatError, match="f.txt:2: 3 processes exceed the limit of 2"):
        ltm.load_graph(tmp_path / "f.txt")


def test_item6_dev_zero_is_not_read(tmp_path):
    with pytest.raises(ltm.FormatError, match="/dev/zero: not a regular file"):
        ltm.load_graph("/dev/zero")


@pytest.mark.parametrize("data, needle", [
    (b"0 1\n\xff\xfe 2\n", r"u.txt:2: not UTF-8 text \(byte 0xff\)"),
    (b"0 99999999999999999999999\n", "u.txt:1: 100000000000000000000000 processes exceed the limit"),
])
def test_item7_edge_lists_give_one_line_errors(tmp_path, data, needle):
    (tmp_path / "u.txt").write_bytes(data)
    with pytest.raises(ltm.FormatError, match=needle):
        ltm.load_graph(tmp_path / "u.txt")
