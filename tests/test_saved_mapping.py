"""Mapping.save / Mapping.load / read_saved_mapping, and `libtopomap map -o FILE.json`."""

import json

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.cli import main

from _helpers import one_line_cli_error


def test_round_trip(tmp_path):
    t = ltm.torus("4x2")
    m = ltm.Mapping(t, [3, 0, 7, 1, 2, 4, 6, 5], strategy="greedy")
    m.save(tmp_path / "m.json", metrics={"max_congestion": np.float64(2.0)})
    saved = ltm.read_saved_mapping(tmp_path / "m.json")
    assert saved.hosts == ["n3", "n0", "n7", "n1", "n2", "n4", "n6", "n5"]
    assert saved.n_processes == 8 and saved.topology == "torus-4x2" and saved.strategy == "greedy"
    assert saved.metrics == {"max_congestion": 2.0}
    back = ltm.Mapping.load(tmp_path / "m.json", t)
    assert back == m and back.strategy == "greedy"


@pytest.mark.parametrize("text, needle", [
    ('{"format": "libtopomap-mapping",\n "hosts": [1,}', "m.json:2: not JSON"),
    ('{"format": "other"}', "not a saved mapping"),
    ('{"format": "libtopomap-mapping", "version": 9, "hosts": []}', "unsupported mapping version 9"),
    ('{"format": "libtopomap-mapping", "version": 1, "hosts": ["a", 2]}', '"hosts" must be a list'),
    ('{"format": "libtopomap-mapping", "version": 1, "n_processes": 3, "hosts": ["a"]}', '"n_processes" is 3'),
])
def test_bad_files(tmp_path, text, needle):
    p = tmp_path / "m.json"
    p.write_text(text)
    with pytest.raises(ltm.FormatError) as e:
        ltm.read_saved_mapping(p)
    assert needle in str(e.value) and str(e.value).startswith(str(p))
    assert "\n" not in str(e.value)


def test_load_onto_a_topology_without_the_host(tmp_path):
    ltm.Mapping(ltm.torus("4x2"), [7, 0]).save(tmp_path / "m.json")
    with pytest.raises(ltm.MappingError, match="host 'n7' of the mapping is not in the topology"):
        ltm.Mapping.load(tmp_path / "m.json", ltm.torus("2x2"))


def test_cli_map_o_json_and_text(tmp_path):
    topo = tmp_path / "t.topo"
    ltm.save(str(topo), ltm.torus("4x4"))
    args = ["map", "--topology", str(topo), "--graph", "torus-scrambled:4x4:3", "--strategy", "greedy"]
    assert main(args + ["-o", str(tmp_path / "m.json")]) == 0
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["format"] == "libtopomap-mapping" and doc["n_processes"] == 16
    assert sorted(doc["hosts"]) == sorted(f"n{i}" for i in range(16))
    # the saved mapping is the optimum of a scrambled torus: every stencil pair on neighbouring hosts
    t = ltm.load(str(topo))
    m = ltm.Mapping.load(tmp_path / "m.json", t)
    g = ltm.load_graph("torus-scrambled:4x4:3")
    assert ltm.max_congestion(t, g, m.vertices) == doc["metrics"]["max_congestion"]
    assert main(args + ["--output", str(tmp_path / "m.txt")]) == 0
    lines = (tmp_path / "m.txt").read_text().split("\n")
    assert lines[:16] == [f"{p} {h}" for p, h in enumerate(doc["hosts"])]


# ------------------------------------------------------------------------------------------ bad mapping files
def test_mapping_file_with_an_infinite_vertex_is_one_line(tmp_path, capsys):
    # found by the fuzzer: int(1e999) raised OverflowError in read_mapping_file
    t = str(tmp_path / "t.ltm")
    ltm.save(t, ltm.torus("2x2"))
    (tmp_path / "m.json").write_text('["n0", "n1", 2e99999, 2]\n')
    line = one_line_cli_error(capsys, ["plot", "hops", "--topology", t, "--graph", "stencil:2x2", "--mapping",
                                    str(tmp_path / "m.json"), "-o", str(tmp_path / "p")])
    assert line.endswith("m.json: unknown vertex inf"), line
