"""Mehta 2005 (MS thesis), Figures 4.4-4.8 in the flow model (``benchmarks/bench_ldr.py``): exact small cases
of the uniform traffic, the hop averages and the link loads the benchmark compares."""

import importlib.util
import pathlib

import numpy as np
import pytest

import libtopomap as ltm

_SPEC = importlib.util.spec_from_file_location(
    "bench_ldr", pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "bench_ldr.py")
bench_ldr = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_ldr)


def test_uniform_pairs_every_pair_once_or_seeded_samples():
    g = bench_ldr.uniform_pairs(8)
    assert g.n_edges == 56 and set(zip(g.src.tolist(), g.dst.tolist())) == {(u, v) for u in range(8)
                                                                            for v in range(8) if u != v}
    a, b = bench_ldr.uniform_pairs(100, pairs=500, seed=3), bench_ldr.uniform_pairs(100, pairs=500, seed=3)
    assert a.weights.sum() == 500 and np.array_equal(a.indices, b.indices)
    assert not np.any(a.src == a.dst)


@pytest.mark.parametrize("d", [3, 4, 6])
def test_ecube_spreads_all_pairs_evenly_on_the_hypercube(d):
    """All ordered pairs under e-cube routing: every arc carries exactly 2^(d-1) pairs, and the average is
    d/2 hops over the N^2 pairs (d N / (2 (N - 1)) over distinct pairs)."""
    n = 1 << d
    load = ltm.link_traffic(ltm.hypercube(d), bench_ldr.uniform_pairs(n), np.arange(n), routing="dimension-order")
    assert np.all(load == 2 ** (d - 1)) and load.size == n * d
    assert load.sum() / (n * (n - 1)) == pytest.approx(d * n / (2 * (n - 1)))


def test_ldr_rows_hops_are_its_aspl_and_fixed_routing_saturates_first():
    rows = bench_ldr.saturation_rows(64)
    assert [r["routing"] for r in rows] == ["fixed", "oblivious", "adaptive"]
    aspl = ltm.properties(ltm.ldr(64, 6, seed=0))["aspl"]
    for r in rows:
        assert r["ldr"]["avg_hops"] == pytest.approx(aspl) and r["hypercube"]["avg_hops"] == pytest.approx(3 * 64 / 63)
        assert r["hypercube"]["max_link_load"] == pytest.approx(32.0)
    fixed, oblivious, adaptive = rows
    # the thesis' Figure 4.4: fixed shortest-path routing piles traffic on some LDR links
    assert fixed["ldr"]["max_link_load"] > oblivious["ldr"]["max_link_load"] >= adaptive["ldr"]["max_link_load"] - 1e-9
    assert fixed["ldr"]["saturation_vs_hc_fixed"] < 0.5
