"""``libtopomap map``: output, JSON records, --output file, errors."""

import json

import pytest

import libtopomap as ltm
from libtopomap.cli import main

from _helpers import one_line_cli_error


@pytest.fixture()
def torus_file(tmp_path):
    p = tmp_path / "t.ltm"
    ltm.save(str(p), ltm.torus("4x4"))
    return str(p)


def test_map_all_json(torus_file, capsys):
    assert main(["map", "--topology", torus_file, "--graph", "torus-scrambled:4x4:2", "--strategy", "all",
                 "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    # 'all' runs in the race's strategy order: structured constructions first
    order = [x for x in ltm.portfolio.STRATEGY_ORDER if x in ltm.STRATEGIES]
    assert [r["strategy"] for r in recs] == ["current"] + order
    ran = recs[:2]
    for r in ran:
        assert {"strategy", "congestion", "dilation", "hopbytes", "seconds", "chosen"} <= set(r)
    chosen = [r for r in recs if r["chosen"]]
    assert len(chosen) == 1 and chosen[0]["congestion"] == min(r["congestion"] for r in ran)
    greedy = next(r for r in recs if r["strategy"] == "greedy")
    assert greedy["hopbytes"] == 64 and greedy["dilation"] == 1.0
    # greedy recovers the torus (congestion 1, 64 hop-bytes: the lower bounds), so the race ends there
    assert chosen[0]["strategy"] == "greedy"
    assert [r["skipped"] for r in recs[2:]] == [f"{s} skipped: greedy (candidate 1) reached the lower bound"
                                                for s in order[1:]]
    assert not recs[0]["chosen"]


def test_map_refine_output_file(torus_file, tmp_path, capsys):
    out = tmp_path / "m.txt"
    assert main(["map", "--topology", torus_file, "--graph", "stencil:4x4", "--strategy", "random", "--refine",
                 "two-opt", "--objective", "hopbytes", "--time-budget", "0.2", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "random+two-opt" in text and "chosen (lowest hopbytes, then avg congestion, hop-bytes)" in text
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


def test_tie_on_max_congestion_goes_to_lower_hopbytes(tmp_path, capsys):
    """Issue 13: the old driver chose the first lowest max congestion (random) even when its hop-bytes
    were the worst; now the choice is the lexicographic minimum of (objective, avg congestion, hop-bytes)."""
    topo = tmp_path / "ring.ltm"
    ltm.save(str(topo), ltm.torus("8"))
    # two cliques of 4: every placement has max congestion >= 2; hop-bytes decide among ties
    edges = tmp_path / "g.txt"
    edges.write_text("".join(f"{a} {b}\n" for grp in ((0, 1, 2, 3), (4, 5, 6, 7)) for a in grp for b in grp if a != b))
    assert main(["map", "--topology", str(topo), "--graph", str(edges), "--strategy", "all", "--json"]) == 0
    recs = [r for r in json.loads(capsys.readouterr().out) if "skipped" not in r]
    keys = [(r["objective"], r["avg_congestion"], r["hopbytes"]) for r in recs]
    chosen = next(r for r in recs if r["chosen"])
    assert (chosen["objective"], chosen["avg_congestion"], chosen["hopbytes"]) == min(keys)
    worst = max(r["hopbytes"] for r in recs if r["congestion"] == chosen["congestion"])
    assert chosen["hopbytes"] <= worst


def test_map_skips_strategies_over_max_memory(torus_file, capsys):
    from libtopomap.portfolio import estimate_memory

    # a graph no construction maps at the lower bound (the stencil's current placement is): every
    # strategy within the bound runs
    t, g = ltm.load(torus_file), ltm.load_graph("random:16:3:5")
    budget = estimate_memory("rcm", t, g)
    assert estimate_memory("recursive", t, g) > budget >= estimate_memory("random", t, g)
    assert main(["map", "--topology", torus_file, "--graph", "random:16:3:5", "--strategy", "all",
                 "--max-memory", str(budget), "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    skipped = {r["strategy"]: r["skipped"] for r in recs if "skipped" in r}
    assert set(skipped) == {"recursive", "multisection", "dual-bisection", "scotch"} & set(ltm.STRATEGIES)
    assert skipped["recursive"].startswith("recursive skipped: estimated ")
    assert skipped["recursive"].endswith(f"> max_memory {ltm.portfolio.format_bytes(budget)} per node")
    ran = [r["strategy"] for r in recs if "skipped" not in r]
    assert ran == ["current", "greedy", "rcm", "random", "identity"]


def test_serial_map_does_not_import_mpi4py(torus_file):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "OMPI_", "PMIX_", "MPI_LOCAL"))}
    code = ("import sys; from libtopomap.cli import main; "
            f"rc = main(['map', '--topology', {torus_file!r}, '--graph', 'stencil:4x4']); "
            "assert rc == 0; assert 'mpi4py' not in sys.modules, 'mpi4py imported'")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "greedy" in out.stdout


def test_map_max_memory_and_iterations_usage_errors(torus_file):
    for bad in (["--max-memory", "lots"], ["--max-memory", "0"]):
        with pytest.raises(SystemExit) as e:
            main(["map", "--topology", torus_file, "--graph", "stencil:4x4"] + bad)
        assert e.value.code == 2


# ---------------------------------------------------------------------- bad graph files from the command line
def test_bad_graph_files_give_one_line_errors(tmp_path, capsys):
    t = str(tmp_path / "t.ltm")
    ltm.save(t, ltm.torus("2x2"))
    (tmp_path / "u.txt").write_bytes(b"0 1\n\xff\xfe 2\n")
    assert one_line_cli_error(capsys, ["map", "--topology", t, "--graph", str(tmp_path / "u.txt")]).endswith(
        "u.txt:2: not UTF-8 text (byte 0xff)")
    (tmp_path / "h.txt").write_bytes(b"0 99999999999999999999999\n")
    assert "h.txt:1: the graph has 100000000000000000000000 processes, above the limit" in one_line_cli_error(
        capsys, ["map", "--topology", t, "--graph", str(tmp_path / "h.txt")])
