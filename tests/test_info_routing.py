"""``libtopomap info --routing``: diameter and ASPL of the model's routes, equal to brute force over every
pair of hosts (dragonfly minimal and valiant), the hop distances for shortest-path models; bad values fail."""

import json

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.cli import main
from libtopomap.metrics import properties
from libtopomap.routing import route_hops


def _info(capsys, path, *extra):
    assert main(["info", str(path), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("args", [(9, 4, 2, 2), (5, 4, 2, 1)])
def test_dragonfly_routes_against_every_host_pair(tmp_path, capsys, args):
    t = ltm.dragonfly(*args)
    path = tmp_path / "df.json"
    ltm.save(str(path), t)
    hosts = np.flatnonzero(np.asarray(t.slots) > 0)
    s, d = np.meshgrid(hosts, hosts, indexing="ij")
    off = s != d
    plain = _info(capsys, path)
    assert plain["routing"] == "minimal"    # native, without --routing
    for model in ("minimal", "valiant", "native"):
        h = route_hops(t, s[off], d[off], routing=model)
        got = _info(capsys, path, "--routing", model)
        assert got["routing"] == ("minimal" if model == "native" else model)
        assert got["diameter"] == pytest.approx(h.max()) and got["aspl"] == pytest.approx(h.mean(), rel=1e-12)
    # minimal routes are longer than shortest paths for some pairs of this dragonfly: the ASPL says so
    assert _info(capsys, path, "--routing", "minimal")["aspl"] >= plain["aspl"]
    assert _info(capsys, path, "--routing", "ecmp")["aspl"] == plain["aspl"]


def test_shortest_path_models_keep_the_hop_distances(tmp_path, capsys):
    path = tmp_path / "t.json"
    ltm.save(str(path), ltm.torus("4x6"))
    p = properties(ltm.torus("4x6"))
    for model in ("ecmp", "dimension-order", "table", "oblivious"):
        got = _info(capsys, path, "--routing", model)
        assert (got["routing"], got["diameter"], got["aspl"]) == (model, p["diameter"], p["aspl"])


def test_bad_routing(tmp_path, capsys):
    path = tmp_path / "t.json"
    ltm.save(str(path), ltm.torus("4x6"))
    with pytest.raises(SystemExit) as e:
        main(["info", str(path), "--routing", "shortest"])
    assert e.value.code == 2 and "invalid choice: 'shortest'" in capsys.readouterr().err
    assert main(["info", str(path), "--routing", "valiant"]) != 0
    err = capsys.readouterr().err
    assert "not a dragonfly" in err and len(err.strip().splitlines()) == 1
