"""routing= of map_processes' refinements and refine_two_opt: the congestion objective under the model."""

import importlib

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap import mappers
from libtopomap.mappers import map_processes, refine_two_opt
from libtopomap.errors import ArgumentError, TopologyError
from libtopomap.metrics import evaluate


def _case(seed):
    t = ltm.dragonfly(5, 4, 2, 2)   # 40 terminals; minimal routing differs from shortest paths here
    rng = np.random.default_rng(seed)
    n = 24
    src = rng.integers(0, n, 80)
    dst = rng.integers(0, n, 80)
    keep = src != dst
    g = ltm.CommGraph(n, src[keep], dst[keep], rng.integers(1, 10, keep.sum()).astype(float))
    start = rng.choice(t.hosts, n, replace=False)
    return t, g, start


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_refine_two_opt_never_worse_under_minimal_routing(seed):
    t, g, start = _case(seed)
    before = evaluate(t, g, start, routing="minimal")["max_congestion"]
    m = refine_two_opt(t, g, start, seed=seed, iterations=400, routing="minimal")
    after = evaluate(t, g, m, routing="minimal")["max_congestion"]
    assert after <= before + 1e-9


@pytest.mark.parametrize("refine", ["two-opt", "ta"])
def test_map_processes_refinement_never_worse_under_minimal_routing(refine):
    t, g, start = _case(3)
    built = map_processes(t, g, strategy="random", seed=3)
    m = map_processes(t, g, strategy="random", seed=3, refine=refine, iterations=300, routing="minimal")
    assert m.strategy == f"random+{refine}"
    assert evaluate(t, g, m, routing="minimal")["max_congestion"] <= \
        evaluate(t, g, built, routing="minimal")["max_congestion"] + 1e-9


def test_routing_reaches_the_search(monkeypatch):
    t, g, start = _case(4)
    seen = []

    def spy(*args, **kw):
        seen.append(kw.get("routing"))
        return np.asarray(args[2]), 0.0, 0.0, {}

    monkeypatch.setitem(mappers._SEARCH, "two-opt", spy)
    monkeypatch.setitem(mappers._SEARCH, "hb-swap", lambda *a, **kw: (np.asarray(a[2]), 0.0, 0.0, {}))
    map_processes(t, g, strategy="random", seed=0, refine="two-opt", routing="minimal")
    map_processes(t, g, strategy="random", seed=0, refine="two-opt", objective="hopbytes", routing="valiant")
    map_processes(t, g, strategy="random", seed=0, refine="two-opt")
    assert seen == ["minimal", "valiant", None]

    calls = []
    two_opt_module = importlib.import_module("libtopomap.mappers.two_opt")  # the package shadows it with a function
    real = two_opt_module.local_search

    def spy_search(*args, **kw):
        calls.append(kw.get("routing"))
        return real(*args, **kw)

    monkeypatch.setattr(two_opt_module, "local_search", spy_search)
    refine_two_opt(t, g, start, seed=0, iterations=50, routing="minimal")
    assert calls == ["minimal"]


def test_bad_routing_is_a_clear_error():
    t, g, start = _case(5)
    with pytest.raises(ArgumentError, match="routing"):
        refine_two_opt(t, g, start, seed=0, iterations=10, routing="bogus")
    with pytest.raises(TopologyError, match="not a dragonfly"):
        refine_two_opt(ltm.torus("4x4"), ltm.CommGraph(4, [0], [1], [1.0]), [0, 1, 2, 3], iterations=10,
                       routing="minimal")
