"""``libtopomap map --budget SECONDS``: the portfolio's total budget from the command line."""

import json

import pytest

import libtopomap as ltm
from libtopomap.cli import main


@pytest.fixture()
def torus_file(tmp_path):
    p = tmp_path / "t.ltm"
    ltm.save(str(p), ltm.torus("4x4"))
    return str(p)


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf", "soon"])
def test_budget_must_be_a_positive_number(torus_file, bad, capsys):
    with pytest.raises(SystemExit) as e:
        main(["map", "--topology", torus_file, "--graph", "stencil:4x4", "--budget", bad])
    assert e.value.code == 2
    assert f"argument --budget: expected a positive number, got {bad!r}" in capsys.readouterr().err


@pytest.mark.slow
def test_tiny_budget_skips_every_construction_with_the_reason(torus_file, capsys):
    assert main(["map", "--topology", torus_file, "--graph", "torus-scrambled:4x4:2", "--strategy", "all",
                 "--json", "--budget", "1e-6"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert recs[0]["strategy"] == "current" and recs[0]["chosen"]
    skipped = recs[1:]
    assert [r["strategy"] for r in skipped] == [x for x in ltm.portfolio.STRATEGY_ORDER if x in ltm.STRATEGIES]
    assert all("s left of the constructions' share of the 1e-06 s budget" in r["skipped"] for r in skipped)


def test_budget_reaches_the_problem(torus_file):
    import argparse

    from libtopomap.cli import _map

    ns = argparse.Namespace(topology=torus_file, graph="stencil:4x4", strategy="greedy", refine=None,
                            objective="congestion", seed=0, time_budget=None, iterations=None, max_memory=None,
                            budget=7.5)
    assert _map._prepare(ns)[1].total_budget == 7.5
    del ns.budget  # a Namespace made before the option existed: the default budget
    from libtopomap.portfolio import DEFAULT_TOTAL_BUDGET

    assert _map._prepare(ns)[1].total_budget == DEFAULT_TOTAL_BUDGET
