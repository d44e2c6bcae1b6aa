"""``libtopomap map``: output, JSON records, --output file, errors."""

import json

import pytest

import libtopomap as ltm
from libtopomap.cli import main


@pytest.fixture()
def torus_file(tmp_path):
    p = tmp_path / "t.ltm"
    ltm.save(str(p), ltm.torus("4x4"))
    return str(p)


def test_map_all_json(torus_file, capsys):
    assert main(["map", "--topology", torus_file, "--graph", "torus-scrambled:4x4:2", "--strategy", "all",
                 "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [r["strategy"] for r in recs] == list(ltm.STRATEGIES)
    for r in recs:
        assert {"strategy", "congestion", "dilation", "hopbytes", "seconds", "chosen"} <= set(r)
    chosen = [r for r in recs if r["chosen"]]
    assert len(chosen) == 1 and chosen[0]["congestion"] == min(r["congestion"] for r in recs)
    greedy = next(r for r in recs if r["strategy"] == "greedy")
    assert greedy["hopbytes"] == 64 and greedy["dilation"] == 1.0


def test_map_refine_output_file(torus_file, tmp_path, capsys):
    out = tmp_path / "m.txt"
    assert main(["map", "--topology", torus_file, "--graph", "stencil:4x4", "--strategy", "random", "--refine",
                 "two-opt", "--objective", "hopbytes", "--time-budget", "0.2", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "random+two-opt" in text and "chosen (lowest hopbytes)" in text
    lines = out.read_text().split("\n")[:-1]
    assert len(lines) == 16
    assert sorted(line.split()[1] for line in lines) == sorted(f"n{i}" for i in range(16))


def test_map_errors(torus_file, capsys):
    assert main(["map", "--topology", torus_file, "--graph", "stencil:8x8"]) == 1
    assert "64 processes but only 16 usable slots" in capsys.readouterr().err
    assert main(["map", "--topology", torus_file, "--graph", "nope.txt"]) == 1
    assert "nope.txt" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["map", "--topology", torus_file, "--graph", "stencil:4x4", "--strategy", "magic"])
    assert e.value.code == 2
