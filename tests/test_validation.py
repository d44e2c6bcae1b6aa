"""libtopomap.validation: one checker per kind of input, one exception class per kind of error, and the
public doors (map_processes, MappingProblem/run_portfolio) reject the same bad input with the same class and
a message naming the value.  The MPI doors are in tests/mpi/test_arguments.py and test_errors.py, the command
line's in tests/test_cli_options.py."""

import math
import pathlib

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.errors import (ArgumentError, ArgumentTypeError, ChoiceError, CommGraphError, FormatError,
                               MappingError)
from libtopomap.loading import as_topology
from libtopomap.validation import (SEED_LIMIT, check_bytes, check_choice, check_choices, check_count, check_graph,
                                   check_mapping, check_moves, check_seconds, check_seed)


# ----------------------------------------------------------------------------------------- each checker
@pytest.mark.parametrize("seed", [None, 0, 7, np.int64(3), SEED_LIMIT - 1])
def test_check_seed_takes_non_negative_integers(seed):
    assert check_seed(seed) == (None if seed is None else int(seed))


def test_check_seed_passes_a_seed_sequence():
    s = np.random.SeedSequence(5)
    assert check_seed(s) is s


@pytest.mark.parametrize("seed, cls, shown", [
    (-1, ArgumentError, "got -1"), (SEED_LIMIT, ArgumentError, str(SEED_LIMIT)), (1.5, ArgumentTypeError, "got 1.5"),
    ("7", ArgumentTypeError, "got '7'"), (True, ArgumentTypeError, "got True")])
def test_check_seed_rejects(seed, cls, shown):
    with pytest.raises(cls, match="seed must be a non-negative integer") as e:
        check_seed(seed)
    assert shown in str(e.value)


@pytest.mark.parametrize("value, finite, want", [(None, True, None), (0.5, True, 0.5), (3, True, 3.0),
                                                 (math.inf, False, math.inf), (np.float64(2), True, 2.0)])
def test_check_seconds_takes_positive_numbers(value, finite, want):
    assert check_seconds(value, name="time_budget", finite=finite) == want


@pytest.mark.parametrize("value, finite, cls, msg", [
    (0, True, ArgumentError, "time_budget must be a finite number of seconds > 0, got 0"),
    (-1.0, False, ArgumentError, "time_budget must be a number of seconds > 0, got -1.0"),
    (math.nan, False, ArgumentError, "got nan"),
    (math.inf, True, ArgumentError, "got inf"),
    ("5", True, ArgumentTypeError, "time_budget must be a number of seconds, got '5'"),
    (False, True, ArgumentTypeError, "got False"),
])
def test_check_seconds_rejects(value, finite, cls, msg):
    with pytest.raises(cls, match=msg.replace("(", r"\(").replace(")", r"\)")):
        check_seconds(value, name="time_budget", finite=finite)


def test_check_count():
    assert check_count(None, name="iterations") is None and check_count(np.int32(4), name="iterations") == 4
    with pytest.raises(ArgumentError, match="iterations must be >= 0 and below 2\\*\\*62, got -2"):
        check_count(-2, name="iterations")
    with pytest.raises(ArgumentTypeError, match="iterations must be an integer, got 2.5"):
        check_count(2.5, name="iterations")


def test_check_moves_wants_at_least_one():
    # iterations= counts a refinement's moves down to zero: zero moves would be no refinement (refine=None says so)
    assert check_moves(None) is None and check_moves(np.int64(1)) == 1
    for bad in (0, -1, 2**62):
        with pytest.raises(ArgumentError, match=f"iterations must be a positive integer below 2\\*\\*62, got {bad}$"):
            check_moves(bad)
    with pytest.raises(ArgumentTypeError, match="iterations must be an integer, got 2.5"):
        check_moves(2.5)


def test_cli_and_api_refuse_the_same_iterations_with_the_same_message(capsys):
    from libtopomap.cli import main

    with pytest.raises(ArgumentError) as api:
        ltm.map_processes(ltm.torus("4"), ltm.as_commgraph([(0, 1)]), refine="ta", iterations=0)
    with pytest.raises(SystemExit) as cli:
        main(["map", "--topology", "torus:4", "--graph", "stencil:4", "--refine", "ta", "--iterations", "0"])
    assert cli.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(f"error: argument --iterations: {api.value}"), last
    assert str(api.value) == "iterations must be a positive integer below 2**62, got 0"


def test_check_bytes():
    assert check_bytes(4e9, name="max_memory") == 4_000_000_000 and check_bytes(7, name="max_memory") == 7
    for bad in (0, -1, 1.5, math.inf, math.nan):
        with pytest.raises(ArgumentError, match=f"max_memory must be a positive number of bytes, got {bad!r}"):
            check_bytes(bad, name="max_memory")
    with pytest.raises(ArgumentTypeError, match="got 'lots'"):
        check_bytes("lots", name="max_memory")


def test_check_choice_and_choices():
    assert check_choice("refinement", "ta") == "ta"
    assert check_choices("strategy", "greedy", default=("rcm",)) == ("greedy",)
    assert check_choices("strategy", None, default=("rcm", "greedy")) == ("rcm", "greedy")
    with pytest.raises(ChoiceError, match="unknown strategy 'fast'; expected one of"):
        check_choices("strategy", ["greedy", "fast"], default=())
    with pytest.raises(ChoiceError, match="no strategy given; expected one or more of identity"):
        check_choices("strategy", [], default=())
    assert issubclass(ChoiceError, MappingError)  # what earlier versions raised for unknown names


@pytest.mark.filterwarnings("ignore:libtopomap auto:RuntimeWarning")  # this machine has no network description
def test_as_topology_takes_an_object_a_path_or_auto(tmp_path):
    t = ltm.torus("3x3")
    assert as_topology(t) is t
    path = tmp_path / "t.ltm"
    ltm.save(str(path), t)
    for given in (str(path), path):
        got = as_topology(given)
        assert got.n_vertices == t.n_vertices and got.n_links == t.n_links
    assert len(as_topology("auto").hosts) >= 1  # this machine (libtopomap.autotopo)


def test_as_topology_rejects(tmp_path):
    with pytest.raises(ArgumentTypeError, match="topology must be a Topology, a file path or 'auto', got int 3"):
        as_topology(3)
    bad = tmp_path / "bad.ltm"
    bad.write_text("num: x\n")
    with pytest.raises(FormatError, match=f"{bad}:1: bad vertex count"):
        as_topology(bad)


def test_check_graph():
    g = ltm.as_commgraph([(0, 1), (1, 2)])
    assert check_graph(g) is g
    assert check_graph([(0, 1)]).n == 2
    with pytest.raises(CommGraphError, match="cannot make a communication graph from int"):
        check_graph(5)
    with pytest.raises(CommGraphError):
        check_graph(np.array([[0, -1], [1, 0]]))


def test_check_mapping_is_the_mapping_modules():
    assert check_mapping is ltm.check_mapping
    with pytest.raises(MappingError, match="process 1 is mapped to vertex 9, outside 0..3"):
        check_mapping(ltm.torus("4"), [0, 9])


# ----------------------------------------------------------------------------------------- the public doors
def _doors():
    """Each public door, called with one keyword argument changed."""
    t, g = ltm.torus("4"), ltm.as_commgraph([(0, 1), (1, 2)])

    def map_processes(**kw):
        return ltm.map_processes(t, g, strategy="greedy", refine="two-opt", **kw)

    def portfolio(**kw):
        from libtopomap.portfolio import MappingProblem, make_candidates, run_portfolio

        seed = kw.pop("seed", 0)
        max_memory = kw.pop("max_memory", None)
        cands = make_candidates(["greedy"], seed=seed, refine="two-opt")
        return run_portfolio(MappingProblem(t, g, **kw), cands, max_memory=max_memory)

    return {"map_processes": map_processes, "portfolio": portfolio}


@pytest.mark.parametrize("door", ["map_processes", "portfolio"])
@pytest.mark.parametrize("kw, cls, shown", [
    ({"objective": "speed"}, ChoiceError, "unknown objective 'speed'"),
    ({"time_budget": 0}, ArgumentError, "time_budget must be a finite number of seconds > 0, got 0"),
    ({"time_budget": "1"}, ArgumentTypeError, "time_budget must be a number of seconds, got '1'"),
    ({"iterations": 0}, ArgumentError, "iterations must be a positive integer below 2**62, got 0"),
    ({"iterations": 1.5}, ArgumentTypeError, "iterations must be an integer, got 1.5"),
    ({"seed": -3}, ArgumentError, "seed must be a non-negative integer below 2**63, got -3"),
    ({"seed": 1.5}, ArgumentTypeError, "seed must be a non-negative integer or None, got 1.5"),
])
def test_the_doors_reject_the_same_input_with_the_same_class(door, kw, cls, shown):
    with pytest.raises(cls) as e:
        _doors()[door](**kw)
    assert shown in str(e.value)


@pytest.mark.parametrize("bad, cls", [(0, ArgumentError), (-1.0, ArgumentError), ("x", ArgumentTypeError)])
def test_total_budget_and_max_memory(bad, cls):
    from libtopomap.portfolio import MappingProblem, run_portfolio

    with pytest.raises(cls, match=f"total_budget must be a number of seconds.*got {bad!r}"):
        MappingProblem(ltm.torus("4"), ltm.as_commgraph([(0, 1)]), total_budget=bad)
    with pytest.raises(cls, match=f"max_memory must be a positive number of bytes, got {bad!r}"):
        run_portfolio(MappingProblem(ltm.torus("4"), ltm.as_commgraph([(0, 1)])), [], max_memory=bad)


def test_a_bad_placement_is_refused_at_the_door():
    from libtopomap.portfolio import MappingProblem

    with pytest.raises(MappingError, match="mapping has 3 entries for 2 processes"):
        MappingProblem(ltm.torus("4"), ltm.as_commgraph([(0, 1)]), placement=[0, 1, 2])
    with pytest.raises(MappingError, match="vertex 'n1' hosts 2 processes"):
        MappingProblem(ltm.torus("4"), ltm.as_commgraph([(0, 1)]), placement=[1, 1])


def test_map_processes_takes_a_topology_path(tmp_path):
    t = ltm.torus("4x4")
    path = tmp_path / "t.ltm"
    ltm.save(str(path), t)
    g = ltm.patterns.stencil((4, 4))
    a = ltm.map_processes(str(path), g, strategy="greedy", seed=1)
    b = ltm.map_processes(t, g, strategy="greedy", seed=1)
    assert a.vertices.tolist() == b.vertices.tolist()
    with pytest.raises(ArgumentTypeError, match="topology must be a Topology"):
        ltm.map_processes(None, g)


# ----------------------------------------------------------------------------------------- one refinement chain
def test_one_refinement_chain():
    from libtopomap.mappers import apply_refinement, refinement_chain

    assert refinement_chain("ta", "hopbytes") == ("hb-swap", "ta")
    assert refinement_chain("hb-swap", "hopbytes") == ("hb-swap",)
    assert refinement_chain("two-opt", "congestion") == ("two-opt",)
    t, g = ltm.torus("4x4"), ltm.patterns.scrambled_torus("4x4", seed=3)
    start = ltm.map_processes(t, g, strategy="identity")
    for refine in ("two-opt", "ta", "hb-swap"):
        m = ltm.map_processes(t, g, strategy="identity", refine=refine, objective="hopbytes", seed=2, iterations=200)
        r = apply_refinement(t, g, start.vertices, t.slots.astype(np.int64), refine=refine, objective="hopbytes",
                             rng=np.random.default_rng(2), iterations=200)
        assert np.array_equal(np.asarray(r), m.vertices), refine  # the same chain, the same moves
    # a deadline already past runs nothing
    r = apply_refinement(t, g, start.vertices, t.slots.astype(np.int64), refine="ta", objective="congestion",
                         rng=np.random.default_rng(0), iterations=200, deadline=0.0)
    assert r is start.vertices


def test_the_race_refines_with_the_same_chain():
    """Under MappingProblem (so under the MPI race too) the refinement of a candidate is map_processes'
    chain run on its construction with the candidate's seed."""
    from libtopomap.portfolio import MappingProblem, make_candidates

    t, g = ltm.torus("4x4"), ltm.patterns.scrambled_torus("4x4", seed=3)
    p = MappingProblem(t, g, objective="hopbytes", iterations=300, total_budget=math.inf)
    c = make_candidates(["rcm"], seed=5, refine="ta")[1]
    built = p.construct(c)
    out = p.refine(c, built)
    m = ltm.map_processes(t, g, strategy="rcm", refine="ta", objective="hopbytes", seed=c.seed, iterations=300,
                          start=c.start)
    kept = "kept the construction" in out.note
    assert np.array_equal(out.payload, built.payload if kept else m.vertices), out.note


def test_validation_module_is_small_and_public():
    import libtopomap.validation as v

    assert set(v.__all__) == {"check_choice", "check_choices", "check_seed", "check_seconds", "check_count",
                              "check_moves", "check_bytes", "check_slots", "check_graph", "check_mapping", "SEED_LIMIT"}
    assert pathlib.Path(v.__file__).name == "validation.py"


def test_validation_is_a_bottom_layer():
    """validation imports (anywhere in the module, functions included) only the error classes, the vocabulary and
    the data types it checks, none of which imports it back: so generators and patterns can check their seeds."""
    import ast

    import libtopomap.validation as v

    tree = ast.parse(pathlib.Path(v.__file__).read_text(encoding="utf-8"))
    local = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level}
    assert local == {"commgraph", "errors", "mapping", "topology", "vocabulary"}


@pytest.mark.parametrize("make", [
    lambda seed: ltm.generators.ldr(16, 3, seed=seed),
    lambda seed: ltm.generators.percs(2, 1, seed=seed),
    lambda seed: ltm.generators.random_shortcut_ring(16, 3, seed=seed),
    lambda seed: ltm.generators.hybrid(16, 4, component="ldr", degree=2, seed=seed),
    lambda seed: ltm.patterns.scrambled_torus("4x4", seed=seed),
    lambda seed: ltm.patterns.random_graph(8, 2, seed=seed),
    lambda seed: ltm.patterns.uniform_traffic(8, seed=seed),
    lambda seed: ltm.patterns.local_global_traffic("4x4", 0.5, seed=seed),
])
def test_generators_and_patterns_check_their_seeds(make):
    make(3)
    with pytest.raises(ArgumentError, match=r"^seed must be a non-negative integer below 2\*\*63, got -1$"):
        make(-1)
    with pytest.raises(ArgumentTypeError, match=r"^seed must be a non-negative integer or None, got 1.5$"):
        make(1.5)


def test_a_race_checks_its_inputs_once(monkeypatch):
    """The race's door (MappingProblem) checks the graph and the slots; its candidates' constructions trust them
    (each strategy's ``trusted`` face), however many candidates run."""
    import libtopomap.mappers._common as common
    from libtopomap.portfolio import MappingProblem, make_candidates, run_portfolio

    calls = {"graph": 0, "slots": 0}

    def counted(name, check):
        def counting(*args, **kwargs):
            calls[name] += 1
            return check(*args, **kwargs)
        return counting

    monkeypatch.setattr(common, "check_graph", counted("graph", common.check_graph))
    monkeypatch.setattr(common, "check_slots", counted("slots", common.check_slots))
    t, g = ltm.torus("4x4"), ltm.load_graph("random:16:4:1")
    names = ["greedy", "recursive", "multisection", "dual-bisection", "rcm", "random", "identity"]
    problem = MappingProblem(t, g, total_budget=math.inf)
    result = run_portfolio(problem, make_candidates(names, seed=0, refine="ta"))
    assert len(result.outcomes) == 8 and not result.skipped
    assert calls == {"graph": 1, "slots": 1}
    ltm.map_processes(t, g, strategy="greedy")  # the public function checks at its door, once
    assert calls == {"graph": 2, "slots": 2}
