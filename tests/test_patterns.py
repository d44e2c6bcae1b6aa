"""Communication-graph sources: generated patterns, edge lists, Matrix Market, ``as_commgraph``, error messages
and warnings."""

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import libtopomap as ltm
from libtopomap import CommGraphError, FormatError
from libtopomap.cli import main
from libtopomap.patterns import load_graph, random_graph, scrambled_torus, stencil, stencil_dims

from _helpers import run_python


def test_stencil_3d_degree_and_size():
    g = load_graph("stencil:4x4x4")
    assert g.n == 64
    assert np.all(np.diff(g.indptr) == 6)  # 7-point: 6 neighbours, periodic
    assert g.n_edges == 64 * 6


def test_stencil_2d_nonperiodic():
    g = stencil("3x3", periodic=False)
    assert g.n_edges == 2 * 12  # 12 mesh links, both directions
    assert sorted(np.diff(g.indptr).tolist()) == [2, 2, 2, 2, 3, 3, 3, 3, 4]


def test_stencil_size_two_dimension_has_one_neighbour():
    assert np.all(np.diff(stencil("2x5").indptr) == 3)


def test_scrambled_torus_is_a_relabelled_stencil():
    a = stencil("4x4").to_scipy()
    g = load_graph("torus-scrambled:4x4:9")
    assert g == scrambled_torus("4x4", 9)
    assert g != stencil("4x4")
    perm = np.random.default_rng(9).permutation(16)
    b = g.to_scipy()[perm][:, perm]
    assert (a != b).nnz == 0


def test_random_graph_spec():
    g = load_graph("random:50:4:2")
    assert g.n == 50 and g == random_graph(50, 4, 2)
    assert np.all(g.src != g.dst)
    assert (g.to_scipy() != g.to_scipy().T).nnz == 0


def test_edge_list(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("# comment\n0 1 2.5\n1 2\n\n2 0 1 # trailing\n")
    g = load_graph(str(p))
    assert g.n == 3 and g.n_edges == 3
    assert g.weights.tolist() == [2.5, 1.0, 1.0]


@pytest.mark.parametrize("text,msg,line", [
    ("0 1\n1\n", "expected 'src dst", 2),
    ("0 1\n0 x\n", "integers", 2),
    ("0 1 -3\n", "finite and >= 0", 1),
    ("0 1 nan\n", "finite and >= 0", 1),
    ("0 -1\n", "non-negative", 1),
])
def test_edge_list_errors_name_file_and_line(tmp_path, text, msg, line):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(FormatError, match=msg) as e:
        load_graph(str(p))
    assert str(e.value).startswith(f"{p}:{line}:")


def test_matrix_market_spmv_pattern(tmp_path):
    a = sp.coo_matrix(([1.0, 2.0, 3.0, 4.0], ([0, 0, 1, 2], [0, 2, 0, 1])), shape=(3, 3))
    p = tmp_path / "m.mtx"
    scipy.io.mmwrite(str(p), a)
    g = load_graph(str(p))
    # A[0,2] != 0: process 2 sends x_2 to row owner 0; A[1,0]: 0 -> 1; A[2,1]: 1 -> 2; diagonal ignored
    assert sorted(zip(g.src.tolist(), g.dst.tolist())) == [(0, 1), (1, 2), (2, 0)]


def test_bad_specs():
    with pytest.raises(CommGraphError, match="stencil:DIMS"):
        load_graph("stencil:")
    with pytest.raises(CommGraphError, match="SEED must be an integer"):
        load_graph("torus-scrambled:4x4:x")
    with pytest.raises(CommGraphError, match="random:P:DEGREE"):
        load_graph("random:5")
    with pytest.raises(FileNotFoundError):
        load_graph("/nonexistent/graph.txt")


def test_scrambled_torus_is_exactly_a_relabelled_stencil_3d():
    # the edge set of the scrambled torus is the stencil's edge set under perm, weights included
    dims, seed = "3x4x5", 7
    s, g = stencil(dims), scrambled_torus(dims, seed)
    perm = np.random.default_rng(seed).permutation(s.n)
    assert g.n == s.n and g.n_edges == s.n_edges
    want = sorted(zip(perm[s.src].tolist(), perm[s.dst].tolist(), s.weights.tolist()))
    assert sorted(zip(g.src.tolist(), g.dst.tolist(), g.weights.tolist())) == want
    assert load_graph(f"torus-scrambled:{dims}:{seed}") == g


@pytest.mark.parametrize("P,ndim,dims", [
    (1, 3, (1, 1, 1)), (7, 3, (7, 1, 1)), (12, 3, (3, 2, 2)), (24, 2, (6, 4)), (4096, 3, (16, 16, 16)),
    (32768, 3, (32, 32, 32)), (65536, 3, (64, 32, 32)), (262144, 3, (64, 64, 64)), (1000, 3, (10, 10, 10)),
    (97 * 89, 3, (97, 89, 1)), (64, 1, (64,)),
])
def test_stencil_dims(P, ndim, dims):
    assert stencil_dims(P, ndim) == dims


def test_stencil_dims_is_the_most_cubic_factorisation():
    import itertools
    import math

    for P in range(1, 49):
        for k in (2, 3):
            cands = {tuple(sorted(c, reverse=True)) for c in itertools.product(range(1, P + 1), repeat=k)
                     if math.prod(c) == P}
            assert stencil_dims(P, k) == min(cands)


def test_stencil_dims_errors_and_large_prime():
    with pytest.raises(CommGraphError):
        stencil_dims(0)
    with pytest.raises(CommGraphError):
        stencil_dims(8, 0)
    assert stencil_dims(1_000_000_007) == (1_000_000_007, 1, 1)


def test_large_generated_graphs_are_edge_linear():
    # 32,768 processes: CSR arrays only, sized by the edges (no P x P array)
    g = scrambled_torus("32x32x32", 1)
    assert g.n_edges == 6 * 32768 and g.indptr.size == 32769
    r = random_graph(32768, 6, 1)
    assert r.n_edges <= 6 * 32768


@pytest.mark.parametrize("text", ["0 1\n1 2\n", "0 1 2.5\n1 2 1e3\n\n", " 0  1 \r\n\r\n  2 3\r\n", "5 0 0\n",
                                  "0 1\n1 2 3\n", "0 1 1_0\n", "# c\n0 1\n"])
def test_edge_list_bulk_and_line_readers_agree(tmp_path, monkeypatch, text):
    import libtopomap.patterns as pt

    p = tmp_path / "g.txt"
    p.write_text(text)
    bulk = load_graph(str(p))
    monkeypatch.setattr(pt, "_read_edge_list_fast", lambda path: None)
    line = load_graph(str(p))
    assert bulk == line and bulk.n == line.n


def test_edge_list_bulk_reader_large(tmp_path):
    g = scrambled_torus("16x16x16", 3)
    p = tmp_path / "big.txt"
    np.savetxt(p, np.stack([g.src, g.dst, g.weights * 2], 1), fmt=["%d", "%d", "%.1f"])
    h = load_graph(str(p))
    assert h.n == g.n and (h.to_scipy() != 2 * g.to_scipy()).nnz == 0


# -------------------- edge lists, Matrix Market, as_commgraph: one-line errors naming file and line, warnings
@pytest.mark.parametrize("data", [
    b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.0\r",
    b"%%MatrixMarket matrix coordinate real general\r2 2 1\r1 2 3.0\r",
    b"%%MatrixMarket matrix coordinate real general\r\n2 2 1\r\n1 2 3.0\r\n",
])
def test_matrix_market_with_cr_line_ends_cannot_crash(tmp_path, data):
    # scipy's native reader segfaulted on the first one; run in a subprocess so a crash fails the test
    (tmp_path / "a.mtx").write_bytes(data)
    p = run_python("import libtopomap as l; g = l.load_graph('a.mtx'); print(g.n, g.n_edges)", tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["2", "1"]


def test_matrix_market_reader_matches_its_definition(tmp_path):
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
def test_bad_matrix_market_files_name_file_and_line(tmp_path, text, needle):
    (tmp_path / "b.mtx").write_text(text)
    with pytest.raises(ltm.FormatError, match=needle) as e:
        ltm.load_graph(tmp_path / "b.mtx")
    assert str(e.value).startswith(str(tmp_path / "b.mtx"))


def test_dev_zero_is_not_read_as_a_graph(tmp_path):
    with pytest.raises(ltm.FormatError, match="/dev/zero: not a regular file"):
        ltm.load_graph("/dev/zero")


@pytest.mark.parametrize("data, needle", [
    (b"0 1\n\xff\xfe 2\n", r"u.txt:2: not UTF-8 text \(byte 0xff\)"),
    (b"0 99999999999999999999999\n", "u.txt:1: the graph has 100000000000000000000000 processes, above the limit"),
])
def test_bad_edge_lists_give_one_line_errors(tmp_path, data, needle):
    (tmp_path / "u.txt").write_bytes(data)
    with pytest.raises(ltm.FormatError, match=needle):
        ltm.load_graph(tmp_path / "u.txt")


def test_as_commgraph_takes_a_square_array_as_a_matrix_even_2x2():
    g = ltm.as_commgraph(np.array([[0, 5], [0, 0]]))  # as an edge list it was 0 -> 5 and 0 -> 0
    assert g.n == 2 and list(zip(g.src.tolist(), g.dst.tolist(), g.weights.tolist())) == [(0, 1, 5.0)]


@pytest.mark.parametrize("edges", [[(0.5, 1)], [(0, 1), (1, 2.25)], np.array([[0.5, 1.0], [1.0, 2.0], [2.0, 0.0]])])
def test_as_commgraph_rejects_fractional_ids_not_truncates(edges):
    with pytest.raises(ltm.CommGraphError, match="process ids must be integers"):
        ltm.as_commgraph(edges)
    assert ltm.as_commgraph([(0.0, 1.0)]).n == 2  # integral floats are ids


def test_self_loops_in_graph_files_warn_with_file_and_line(tmp_path, capsys):
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
    assert main(["map", "--topology", t, "--graph", str(tmp_path / "e.txt"), "--strategy", "greedy"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"libtopomap map: warning: {tmp_path}/e.txt:2: process 1 sends to itself: a self loop (2 in all), "
                   "which costs nothing on the network"]


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
