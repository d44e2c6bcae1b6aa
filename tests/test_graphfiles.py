"""Communication graphs from other tools: Open MPI monitoring files and dense N x N matrices."""

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from libtopomap import FormatError, load_graph
from libtopomap.errors import ArgumentError
from libtopomap.graphfiles import monitoring_files, read_comm_matrix, read_ompi_monitoring

from _helpers import openmpi_env, openmpi_or_skip

DATA = pathlib.Path(__file__).parent / "data" / "ompi_monitoring"

# The bytes traffic.py sends (its docstring): a ring of 1000 * (r + 1) bytes, twice, and 3 x 64 bytes 0 -> 2.
EXPECTED = np.zeros((4, 4))
for _r in range(4):
    EXPECTED[_r, (_r + 1) % 4] = 2 * 1000 * (_r + 1)
EXPECTED[0, 2] += 3 * 64


def _dense(g):
    return g.to_scipy().toarray()


def _check_run(prefix):
    ext = load_graph(prefix)
    assert ext.n == 4
    np.testing.assert_array_equal(_dense(ext), EXPECTED)
    internal = _dense(read_ompi_monitoring(prefix, messages="internal"))
    # the 4096-byte broadcast from rank 0 reaches every other rank exactly once, whatever the tree
    np.testing.assert_array_equal(internal.sum(axis=0), [0, 4096, 4096, 4096])
    both = _dense(load_graph(prefix, messages="all"))
    np.testing.assert_array_equal(both, EXPECTED + internal)


def test_monitoring_files_committed():
    assert [os.path.basename(f) for f in monitoring_files(DATA / "run")] == [f"run.{r}.prof" for r in range(4)]
    assert monitoring_files(DATA) == monitoring_files(DATA / "run")  # the directory holds one run
    _check_run(str(DATA / "run"))
    _check_run(str(DATA))


def test_monitoring_real_run(tmp_path):
    found = openmpi_or_skip()
    mpirun, lib = found
    prefix = tmp_path / "run"
    cmd = [mpirun, "-n", "4", "--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
           "--mca", "pml_monitoring_filename", str(prefix), sys.executable, str(DATA / "traffic.py")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=openmpi_env(lib), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    _check_run(str(prefix))


def _write_run(folder, texts, prefix="run"):
    folder.mkdir(exist_ok=True)
    for r, text in enumerate(texts):
        (folder / f"{prefix}.{r}.prof").write_text(text)
    return folder / prefix


GOOD = ["# POINT TO POINT\nE\t0\t1\t10 bytes\t1 msgs sent\t0,1\n", "E\t1\t0\t20 bytes\t2 msgs sent\n"]


@pytest.mark.parametrize("line, message", [
    ("E\t0\t1\t10 byte\t1 msgs sent", "expected 'E <src> <dst>"),
    ("E\t0\t1\t10 bytes", "expected 'E <src> <dst>"),
    ("E\t0\t1\t-10 bytes\t1 msgs sent", "byte count must be a non-negative integer"),
    ("E\t0\t1\t1.5 bytes\t1 msgs sent", "byte count must be a non-negative integer"),
    ("E\t0\tx\t10 bytes\t1 msgs sent", "destination must be a non-negative integer"),
    ("I\t1\t0\t10 bytes\t1 msgs sent", "source 1 in the file of rank 0"),
    ("E\t0\t2\t10 bytes\t1 msgs sent", "destination 2 outside 0..1"),
])
def test_monitoring_bad_line(tmp_path, line, message):
    prefix = _write_run(tmp_path, ["# POINT TO POINT\n" + line + "\n", GOOD[1]])
    with pytest.raises(FormatError, match=message) as e:
        load_graph(prefix)
    assert str(e.value).startswith(f"{prefix}.0.prof:2: ")
    assert "\n" not in str(e.value)


def test_monitoring_missing_rank_and_two_runs(tmp_path):
    prefix = _write_run(tmp_path, GOOD)
    np.testing.assert_array_equal(_dense(load_graph(prefix)), [[0, 10], [20, 0]])
    os.rename(f"{prefix}.1.prof", f"{prefix}.2.prof")
    with pytest.raises(FormatError, match=r"no file for rank 1 \(run.1.prof\)"):
        load_graph(prefix)
    os.rename(f"{prefix}.2.prof", f"{prefix}.1.prof")
    _write_run(tmp_path, GOOD, prefix="other")
    np.testing.assert_array_equal(_dense(load_graph(prefix)), [[0, 10], [20, 0]])  # a prefix picks its run
    with pytest.raises(FormatError, match="files of 2 monitored runs here"):
        load_graph(tmp_path)
    with pytest.raises(ArgumentError, match="messages must be one of"):
        read_ompi_monitoring(prefix, messages="E")
    with pytest.raises(FileNotFoundError):
        load_graph(tmp_path / "nothing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="directory without monitoring files"):
        load_graph(empty)


def test_matrix_exact_and_sniffed(tmp_path):
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 5, 17):
        m = rng.integers(0, 4, size=(n, n)) * (rng.random((n, n)) < 0.4) * 2.5
        p = tmp_path / f"m{n}.txt"
        p.write_text("".join(" ".join(f"{x:g}" for x in row) + "\n" for row in m))
        np.testing.assert_array_equal(_dense(read_comm_matrix(p)), m)
        np.testing.assert_array_equal(_dense(load_graph(f"matrix:{p}")), m)
        if n > 3:  # a row of more than three entries is a matrix, not an edge list
            np.testing.assert_array_equal(_dense(load_graph(p)), m)
        q = tmp_path / f"m{n}.mat"
        shutil.copy(p, q)
        np.testing.assert_array_equal(_dense(load_graph(q)), m)
    # comments, blank lines, tabs
    p = tmp_path / "c.mat"
    p.write_text("# treematch input\n0\t3 0 0\n\n1 0 0 0 # row 1\n0 0 0 2e3\n0 0 7 0\n")
    np.testing.assert_array_equal(_dense(load_graph(p)), [[0, 3, 0, 0], [1, 0, 0, 0], [0, 0, 0, 2000], [0, 0, 7, 0]])


@pytest.mark.parametrize("text, where, message", [
    ("0 1 2 3\n1 0 2\n0 0 0 0\n0 0 0 0\n", 2, "row 1 has 3 entries, expected 4"),
    ("0 1 2 3\n1 0 x 3\n0 0 0 0\n0 0 0 0\n", 2, "entry 2 is not a number: 'x'"),
    ("0 1 2 3\n1 0 -2 3\n0 0 0 0\n0 0 0 0\n", 2, "entry 2 is '-2'; volumes must be finite and >= 0"),
    ("0 1 2 3\n1 0 nan 3\n0 0 0 0\n0 0 0 0\n", 2, "entry 2 is 'nan'"),
    ("0 1 2 3\n1 0 inf 3\n0 0 0 0\n0 0 0 0\n", 2, "entry 2 is 'inf'"),
    ("0 1 2 3\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n", 5, "more than 4 rows"),
    ("0 1 2 3\n0 0 0 0\n0 0 0 0\n", None, "3 rows, expected 4"),
    ("0 " * 1000 + "\n", 1, "a 1000 x 1000 matrix needs at least 1000000 bytes, the file has 2001"),
    ("# nothing\n\n", None, "empty matrix file"),
])
def test_matrix_errors(tmp_path, text, where, message):
    p = tmp_path / "bad.mat"
    p.write_text(text)
    with pytest.raises(FormatError) as e:
        load_graph(p)
    head = f"{p}:{where}: " if where else f"{p}: "
    assert str(e.value) == head + message or (str(e.value).startswith(head) and message in str(e.value))
