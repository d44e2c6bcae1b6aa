"""The edge limit (``--max-edges``, ``$LIBTOPOMAP_MAX_EDGES``, :data:`libtopomap._limits.MAX_EDGES`):
every pattern, generator and schedule whose edge count comes from a number in its input checks it
before allocating, names the limit and how to raise it, and accepts a count equal to the limit.

Each case runs twice: under a small ``edge_limit`` (the count is computed exactly: one above it fails,
the count itself passes) and, where the count is astronomic, under the default limit, where the old
code raised MemoryError (or allocated for minutes) instead of the one-line error.
"""

import pytest

from libtopomap._limits import MAX_EDGES, MAX_VERTICES, check_edge_count, edge_limit, max_edges
from libtopomap.cli import main
from libtopomap.collectives.schedules import ring_allgather
from libtopomap.errors import ArgumentError, CommGraphError, FormatError, TopologyError
from libtopomap.generators.circulant import circulant
from libtopomap.generators.dragonfly import dragonfly
from libtopomap.generators.hybrid import hybrid
from libtopomap.generators.ldr import ldr
from libtopomap.generators.shortcut import random_shortcut_ring
from libtopomap.patterns import load_graph, local_global_traffic, random_graph, uniform_traffic

HOW = "raise it with --max-edges N or $LIBTOPOMAP_MAX_EDGES"


def test_default_and_environment(monkeypatch):
    monkeypatch.delenv("LIBTOPOMAP_MAX_EDGES", raising=False)
    assert max_edges() == MAX_EDGES == 64 * MAX_VERTICES == 1 << 28
    monkeypatch.setenv("LIBTOPOMAP_MAX_EDGES", " 123 ")
    assert max_edges() == 123
    with edge_limit(7):  # the option wins over the environment
        assert max_edges() == 7
    assert max_edges() == 123
    for bad in ("0", "-5", "1e9", "many"):
        monkeypatch.setenv("LIBTOPOMAP_MAX_EDGES", bad)
        with pytest.raises(ArgumentError, match="LIBTOPOMAP_MAX_EDGES must be a positive integer"):
            max_edges()


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_edge_limit_rejects_non_positive_integers(bad):
    with pytest.raises(ArgumentError, match="edge limit must be a positive integer"):
        with edge_limit(bad):
            pass


def test_check_edge_count_message_and_file():
    with edge_limit(10):
        assert check_edge_count(10, "x") == 10
        with pytest.raises(TopologyError, match=r"^x has 11 edges, above the limit of 10 \(" + HOW.replace("$", r"\$")):
            check_edge_count(11, "x")
        with pytest.raises(FormatError, match=r"f\.txt:3:.*11 links"):
            check_edge_count(11, "the file", path="f.txt", line=3, unit="links")
        assert check_edge_count(lambda: int("x"), "x") is None  # not computable here: the caller's checks say why


# (function, its exact edge count, error class); each count is reached exactly at the limit
CASES = [
    (lambda: local_global_traffic("4x4", 0.5, 5, seed=0), 16 * 5, CommGraphError),
    (lambda: uniform_traffic(10, 7, seed=0), 70, CommGraphError),
    (lambda: random_graph(20, 5, seed=0), 20 * 6, CommGraphError),
    (lambda: load_graph("local-global:4x4:0.5:5"), 80, CommGraphError),
    (lambda: load_graph("uniform:10:7"), 70, CommGraphError),
    (lambda: load_graph("random:20:5"), 120, CommGraphError),
    (lambda: dragonfly(5, 4, 2, 1), 5 * 6 + 10 + 40, TopologyError),
    (lambda: ldr(16, 4, seed=0, trials=1), 32, TopologyError),
    (lambda: random_shortcut_ring(16, 4, seed=0), 32, TopologyError),
    (lambda: circulant(16, [1, 3, 5]), 48, TopologyError),
    (lambda: hybrid(16, 8, component="ldr", degree=3, seed=0, trials=1), 16 * 3 // 2 + 8 * 1 * 2, TopologyError),
    (lambda: ring_allgather(9), 9 * 8, CommGraphError),
]


@pytest.mark.parametrize("make, edges, error", CASES)
def test_small_limit_exact(make, edges, error):
    with edge_limit(edges):
        make()
    with edge_limit(edges - 1), pytest.raises(error, match=f"has {edges} [a-z]+, above the limit of {edges - 1}"):
        make()


@pytest.mark.parametrize("make, error", [
    (lambda: load_graph("local-global:8x8:0.5:10000000000"), CommGraphError),  # issue 12: a huge MESSAGES
    (lambda: load_graph("uniform:100:100000000000"), CommGraphError),
    (lambda: load_graph("random:1000000:1999999"), CommGraphError),
    (lambda: dragonfly(2, 1, 0, 10 ** 12), TopologyError),  # global links per router
    (lambda: dragonfly(1, 4_000_000, 0, 0), TopologyError),  # the all-to-all inside one group
    (lambda: ldr(1_000_000, 999_998, seed=0), TopologyError),
    (lambda: random_shortcut_ring(1_000_000, 999_999, seed=0), TopologyError),
    (lambda: circulant(4_000_000, list(range(1, 200))), TopologyError),
    (lambda: ring_allgather(1_000_000), CommGraphError),
])
def test_default_limit_refuses_before_allocating(make, error, monkeypatch):
    monkeypatch.delenv("LIBTOPOMAP_MAX_EDGES", raising=False)
    with pytest.raises(error, match=f"above the limit of {MAX_EDGES} .*--max-edges"):
        make()


def test_cli_max_edges(tmp_path, capsys):
    out = tmp_path / "d.ltm"
    args = ["generate", "dragonfly", "--groups", "5", "--routers", "4", "--terminals", "2", "--global", "1",
            "-o", str(out)]
    assert main(args + ["--max-edges", "79"]) == 2  # generate: a parameter error is a usage error
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has 80 links, above the limit of 79" in err and "--max-edges" in err
    assert not out.exists()
    assert main(args + ["--max-edges", "80"]) == 0 and out.exists()
    with pytest.raises(SystemExit) as e:
        main(args + ["--max-edges", "0"])
    assert e.value.code == 2


def test_cli_map_graph_spec_over_the_limit(tmp_path, capsys):
    topo = tmp_path / "t.ltm"
    assert main(["generate", "torus", "--dims", "4x4", "-o", str(topo)]) == 0
    rc = main(["map", "--topology", str(topo), "--graph", "local-global:4x4:0.5:10000000000", "--strategy", "identity"])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and "160000000000 messages" in err and "--max-edges" in err
