"""The registry of names (:mod:`libtopomap.vocabulary`): every Python choice is a command-line choice,
the Python API accepts every registered name, and an unknown name gets one error class listing them."""

import argparse

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.cli import build_parser
from libtopomap.cli._options import routing_name
from libtopomap.errors import ArgumentError, ChoiceError, CommGraphError, MappingError
from libtopomap.vocabulary import HAVE_SCOTCH, REGISTRY, check_choice, describe


def _subparsers(parser):
    """{"map": parser, "smpi run": parser, ...} of every (sub)command."""
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[name] = sub
                out.update({f"{name} {k}": v for k, v in _subparsers(sub).items()})
    return out


def _choices(command, option):
    parser = _subparsers(build_parser())[command]
    for action in parser._actions:
        if option in action.option_strings:
            return action.choices
    raise AssertionError(f"{command} has no {option}")


def _available(kind):
    """The names of ``kind`` this installation offers (``scotch`` only with scotchpy)."""
    return [n for n in REGISTRY[kind] if n != "scotch" or HAVE_SCOTCH]


# (command, option, registry kind, extra CLI names)
CLI_CHOICES = [
    ("map", "--strategy", "strategy", {"all"}),
    ("map", "--refine", "refinement", set()),
    ("map", "--objective", "objective", set()),
    ("map", "--emit", "launcher-format", {"mapping"}),
    ("collective", "--collective", "collective", set()),
    ("collective", "--allocation", "allocation", set()),
    ("collective", "--optimizer", "collective-order", set()),
    ("collective", "--objective", "collective-objective", set()),
    ("collective", "--algorithm", "bcast-algorithm", set()),
    ("simulate", "--routing", "simgrid-routing", set()),
    ("ingest", "--format", "fabric-format", set()),
    ("smpi run", "--trace", "smpi-trace", set()),
]


@pytest.mark.parametrize("command,option,kind,extra", CLI_CHOICES, ids=[f"{c} {o}" for c, o, _, _ in CLI_CHOICES])
def test_every_python_choice_is_a_cli_choice(command, option, kind, extra):
    assert set(_choices(command, option)) == set(_available(kind)) | extra


def test_every_routing_model_is_a_routing_option():
    for name in REGISTRY["routing"]:
        value = "lft:tables.txt" if name == "lft" else name
        assert routing_name(value) == value
    with pytest.raises(argparse.ArgumentTypeError, match="invalid choice: 'bogus'"):
        routing_name("bogus")


def test_smpi_run_offers_the_general_strategies():
    general = [s for s in _available("strategy") if s != "diagonal-shift"]
    assert set(_choices("smpi run", "--strategy")) == set(general) | {"all"}
    assert set(_choices("smpi run", "--refine")) == set(REGISTRY["refinement"])
    assert set(_choices("smpi run", "--objective")) == set(REGISTRY["objective"])


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_unknown_names_get_one_error_listing_the_choices(kind):
    for name in REGISTRY[kind]:
        assert check_choice(kind, name) == name
    with pytest.raises(ChoiceError) as e:
        check_choice(kind, "nonesuch")
    msg = str(e.value)
    assert "'nonesuch'" in msg and msg.endswith(", ".join(REGISTRY[kind]))
    # one class, which is also each class earlier versions raised for an unknown name
    assert isinstance(e.value, ArgumentError) and isinstance(e.value, MappingError)
    assert isinstance(e.value, CommGraphError) and isinstance(e.value, ValueError)
    assert all(describe(kind).count(f"{n}: ") >= 1 for n in REGISTRY[kind])


def test_the_api_raises_the_registry_error():
    t, g = ltm.torus("4x4"), ltm.patterns.stencil((4, 4))
    cases = [
        lambda: ltm.map_processes(t, g, strategy="nonesuch"),
        lambda: ltm.map_processes(t, g, refine="nonesuch"),
        lambda: ltm.map_processes(t, g, objective="nonesuch"),
        lambda: ltm.collectives.schedule("nonesuch", 4),
        lambda: ltm.collectives.collective_placement(t, "nonesuch", "bcast", nprocs=4),
        lambda: ltm.collectives.collective_placement(t, "ascending", "bcast", nprocs=4, optimizer="nonesuch"),
        lambda: ltm.collectives.collective_placement(t, "ascending", "bcast", nprocs=4, objective="nonesuch"),
    ]
    for call in cases:
        with pytest.raises(ChoiceError, match="unknown .*'nonesuch'; expected one of"):
            call()


@pytest.mark.parametrize("strategy", [s for s in _available("strategy") if s != "diagonal-shift"])
def test_map_processes_accepts_every_general_strategy(strategy):
    t, g = ltm.torus("4x4"), ltm.patterns.stencil((4, 4))
    m = ltm.map_processes(t, g, strategy=strategy, seed=0)
    assert sorted(m.vertices.tolist()) == list(range(16))


def test_cli_diagonal_shift_and_concentration(tmp_path, capsys):
    """``map --strategy diagonal-shift`` and ``--concentration``: the choices Python's map_processes offers,
    with the same mappings, on RTT(4) files written by ``generate`` (plain, and 2 hosts per router)."""
    import json

    from libtopomap.cli import main
    from libtopomap.patterns import stencil

    for conc, hosts, grid in ((None, 0, (4, 8)), ("v", 2, (8, 8))):
        topo = tmp_path / f"rtt{hosts}.json"
        argv = ["generate", "rtt", "--a", "4", "-o", str(topo)] + (["--concentration", str(hosts)] if hosts else [])
        assert main(argv) == 0, capsys.readouterr().err
        capsys.readouterr()
        g = stencil(grid)  # the paper's R(M, N) for this concentration
        graph = tmp_path / "g.mtx"
        import scipy.io

        scipy.io.mmwrite(str(graph), g.to_scipy())
        for strategy in ("diagonal-shift", "identity"):
            argv = ["map", "--topology", str(topo), "--graph", str(graph), "--strategy", strategy, "--json"]
            assert main(argv + (["--concentration", conc] if conc else [])) == 0, capsys.readouterr().err
            chosen = [r for r in json.loads(capsys.readouterr().out) if r["chosen"]]
            py = ltm.map_processes(ltm.load(str(topo)), g, strategy=strategy, concentration=conc)
            want = ltm.evaluate(ltm.load(str(topo)), g, py)
            assert chosen[0]["hopbytes"] <= want["hop_bytes"]
    assert main(["map", "--topology", str(topo), "--graph", str(graph), "--strategy", "greedy",
                 "--concentration", "v"]) != 0
    assert "--concentration applies to --strategy identity or diagonal-shift" in capsys.readouterr().err


def test_cco_order_is_a_collective_order():
    """``optimizer="cco"`` places rank i on the i-th node of the breadth-first order from rank 0's node."""
    t = ltm.torus("8x8")
    res = ltm.collectives.collective_placement(t, "random", "bcast", nprocs=12, optimizer="cco", seed=3)
    nodes = np.asarray(res.nodes)
    order = ltm.collectives.cco_order(t, nodes, root=int(nodes[0]))
    assert np.array_equal(np.asarray(res.vertices), nodes[order])
    assert res.as_dict()["iterations"] == 0
