"""``--routing`` on ``libtopomap plot`` and ``routing=`` on the hop histogram: the drawn loads and hops are
the routing model's (dimension-order against ECMP on a small torus, minimal against shortest paths on a
dragonfly), and a bad or inapplicable model is a one-line error."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import libtopomap as ltm  # noqa: E402
from libtopomap import plot as P  # noqa: E402
from libtopomap.cli import main  # noqa: E402
from libtopomap.errors import ArgumentError  # noqa: E402
from libtopomap.metrics import link_traffic  # noqa: E402
from libtopomap.patterns import load_graph  # noqa: E402
from libtopomap.routing import route_hops  # noqa: E402


@pytest.fixture
def captured(monkeypatch):
    """What the CLI hands to the plot functions (the figures are still drawn)."""
    got = {}
    for name in ("plot_link_loads", "plot_hops"):
        real = getattr(P, name)

        def spy(*a, _real=real, _name=name, **kw):
            got[_name] = (a, kw)
            return _real(*a, **kw)
        monkeypatch.setattr(P, name, spy)
    return got


def _torus_file(tmp_path):
    path = tmp_path / "t.json"
    ltm.save(str(path), ltm.torus("4x4"))
    return str(path)


def test_plot_loads_follow_the_routing_model(tmp_path, captured):
    """On the 4x4 torus the drawn loads are ``link_traffic`` under the model; dimension-order puts a
    neighbour pair two links apart on one path (load 1 on a link), ECMP splits it over two (0.5)."""
    topo = _torus_file(tmp_path)
    graph = load_graph("torus-scrambled:4x4:2")
    loads = {}
    for routing in ("ecmp", "dimension-order"):
        stem = tmp_path / routing
        argv = ["plot", "loads", "--topology", topo, "--graph", "torus-scrambled:4x4:2", "--strategy", "greedy",
                "-o", str(stem)]
        if routing != "ecmp":
            argv += ["--routing", routing]
        assert main(argv) == 0
        (t, got, *_), kw = captured["plot_link_loads"]
        pl = kw["placements"]
        for drawn, v in zip(got, pl):
            np.testing.assert_allclose(drawn, link_traffic(t, graph, v, routing=routing) / t.arc_capacity)
        assert kw["label"].startswith("ECMP" if routing == "ecmp" else "dimension-order routing")
        loads[routing] = got
    # the original (identity of a scrambled stencil) has messages between non-aligned hosts: the models differ
    assert not np.allclose(loads["ecmp"][0], loads["dimension-order"][0])
    assert loads["dimension-order"][0].max() > loads["ecmp"][0].max()
    assert loads["ecmp"][0].sum() == pytest.approx(loads["dimension-order"][0].sum())   # same hops, shortest paths
    assert set(np.unique(loads["dimension-order"][0])) <= set(range(100))   # one path: whole messages


def test_plot_hops_under_minimal_dragonfly_routing(tmp_path, captured):
    """The dragonfly's minimal routes are longer than shortest paths for some router pairs: the drawn
    histogram is ``route_hops`` under minimal, not the hop distance."""
    t = ltm.dragonfly(9, 4, 2, 2)
    path = tmp_path / "df.json"
    ltm.save(str(path), t)
    base = ["plot", "hops", "--topology", str(path), "--collective", "alltoall", "--procs", "72",
            "--placement", "random", "--iterations", "10"]
    hops = {}
    for routing in ("ecmp", "minimal", "native"):
        assert main(base + ["--routing", routing, "-o", str(tmp_path / routing)]) == 0
        (topo, msgs, placements), kw = captured["plot_hops"]
        h, _ = P.hop_counts(topo, msgs, placements["original"], routing=kw["routing"])
        hops[routing] = h
    src = np.concatenate([np.asarray(s)[:, 0] for s in msgs])
    dst = np.concatenate([np.asarray(s)[:, 1] for s in msgs])
    v = np.asarray(placements["original"])
    np.testing.assert_array_equal(hops["minimal"], route_hops(topo, v[src], v[dst], routing="minimal"))
    np.testing.assert_array_equal(hops["ecmp"], topo.distances.pairs(v[src], v[dst]))
    np.testing.assert_array_equal(hops["native"], hops["minimal"])   # a generated dragonfly routes minimally
    assert (hops["minimal"] >= hops["ecmp"]).all() and (hops["minimal"] > hops["ecmp"]).any()


def test_valiant_hops_are_not_a_histogram():
    t = ltm.dragonfly(9, 4, 2, 2)
    with pytest.raises(ArgumentError, match="valiant"):
        P.plot_hops(t, [np.array([[0, 1]])], {"a": [0, 40]}, routing="valiant")
    h, _ = P.hop_counts(t, [np.array([[0, 1]])], [0, 40], routing="valiant")
    assert h.dtype == np.float64 and h[0] > 3


def test_plot_routing_errors(tmp_path, capsys):
    topo = _torus_file(tmp_path)
    loads = ["plot", "loads", "--topology", topo, "--graph", "stencil:4x4", "-o", str(tmp_path / "x")]
    with pytest.raises(SystemExit) as e:
        main(loads + ["--routing", "shortest"])
    assert e.value.code == 2 and "--routing: invalid choice: 'shortest'" in capsys.readouterr().err
    # a model the topology cannot route: one line naming it
    assert main(loads + ["--routing", "minimal"]) != 0
    err = capsys.readouterr().err
    assert "not a dragonfly" in err and len(err.strip().splitlines()) == 1
    # kinds that do not draw routed quantities refuse a model
    assert main(["plot", "adjacency", "--topology", topo, "--routing", "dimension-order",
                 "-o", str(tmp_path / "a")]) != 0
    assert "--routing dimension-order: plot adjacency" in capsys.readouterr().err
    assert main(loads + ["--load", "simgrid", "--routing", "dimension-order"]) != 0
    assert "--load simgrid" in capsys.readouterr().err
    t = tmp_path / "df.json"
    ltm.save(str(t), ltm.dragonfly(9, 4, 2, 2))
    assert main(["plot", "hops", "--topology", str(t), "--graph", "stencil:4x4", "--routing", "valiant",
                 "-o", str(tmp_path / "v")]) != 0
    assert "valiant" in capsys.readouterr().err
