"""Synthetic traffic sources: Mehta 2005 section 3.5.4 patterns and Camarero et al. section 5.1 local/global traffic."""

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.errors import CommGraphError
from libtopomap.patterns import (bit_complement_traffic, bit_reversal_traffic, bit_transpose_traffic,
                                 load_graph, local_global_traffic, ring_traffic, shift_traffic, uniform_traffic)


def pairs(g):
    return sorted((int(s), int(d), float(w)) for s, d, w in zip(g.src, g.indices, g.weights))


def test_shift_and_ring_exact():
    assert pairs(shift_traffic(4, 1)) == [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (3, 0, 1.0)]
    assert pairs(ring_traffic(4)) == pairs(shift_traffic(4, 1)) == pairs(load_graph("ring:4"))
    assert pairs(shift_traffic(6, -2)) == [(i, (i - 2) % 6, 1.0) for i in range(6)]
    assert pairs(load_graph("k-shift:6:4")) == pairs(shift_traffic(6, 4)) == pairs(shift_traffic(6, -2))
    assert shift_traffic(5, 10).n_edges == 0 and shift_traffic(5, 10).n == 5


def test_bit_permutations_exact_on_8_and_16():
    # 3-bit reversal: 001 <-> 100, 011 <-> 110; 000, 010, 101, 111 are palindromes (left out)
    assert pairs(bit_reversal_traffic(8)) == [(1, 4, 1.0), (3, 6, 1.0), (4, 1, 1.0), (6, 3, 1.0)]
    assert pairs(bit_complement_traffic(8)) == [(i, 7 - i, 1.0) for i in range(8)]
    # 4-bit transpose swaps the 2-bit halves: 0b0001 -> 0b0100, 0b0110 -> 0b1001, 0b0101 stays
    t = dict((s, d) for s, d, _ in pairs(bit_transpose_traffic(16)))
    assert t == {s: ((s & 3) << 2) | (s >> 2) for s in range(16) if ((s & 3) << 2) | (s >> 2) != s}
    assert len(t) == 12 and t[1] == 4 and t[6] == 9 and 5 not in t
    assert pairs(load_graph("bit-transpose:16")) == pairs(bit_transpose_traffic(16))
    assert pairs(load_graph("bit-reversal:8")) == pairs(bit_reversal_traffic(8))
    assert pairs(load_graph("bit-complement:8")) == pairs(bit_complement_traffic(8))


@pytest.mark.parametrize("b", [2, 4, 6, 10])
def test_bit_permutations_are_involutions_brute_force(b):
    n = 1 << b
    def bits(s):
        return format(s, f"0{b}b")

    for make, f in ((bit_reversal_traffic, lambda s: int(bits(s)[::-1], 2)),
                    (bit_complement_traffic, lambda s: int("".join("1" if c == "0" else "0" for c in bits(s)), 2)),
                    (bit_transpose_traffic, lambda s: int(bits(s)[b // 2:] + bits(s)[:b // 2], 2))):
        got = {s: d for s, d, _ in pairs(make(n))}
        assert got == {s: f(s) for s in range(n) if f(s) != s}
        assert all(got[d] == s for s, d in got.items())  # each is its own inverse


def test_bit_patterns_reject_bad_sizes():
    with pytest.raises(CommGraphError, match="power of two"):
        bit_reversal_traffic(12)
    with pytest.raises(CommGraphError, match="even number of address bits"):
        bit_transpose_traffic(8)
    with pytest.raises(CommGraphError, match="expected k-shift:N:K"):
        load_graph("k-shift:8")
    with pytest.raises(CommGraphError, match="N must be an integer"):
        load_graph("ring:x")


def test_uniform_traffic_sampled_and_seeded():
    g = uniform_traffic(50, 20, seed=3)
    assert g == uniform_traffic(50, 20, seed=3) and g != uniform_traffic(50, 20, seed=4)
    assert g.weights.sum() == 1000 and np.all(g.src != g.indices)  # never to itself
    assert np.all(np.bincount(g.src, weights=g.weights, minlength=50) == 20)
    assert load_graph("uniform:50:20:3") == g
    # destinations are uniform over the other 49: chi-square well inside its 5-sigma range
    big = uniform_traffic(50, 4000, seed=0)
    counts = np.bincount(big.indices, weights=big.weights, minlength=50)
    e = 50 * 4000 / 50
    chi2 = ((counts - e) ** 2 / e).sum()
    assert chi2 < 49 + 5 * np.sqrt(2 * 49)


def test_local_global_alpha_one_and_zero_exact():
    # alpha = 1: every message to one of the 4 torus neighbours
    g = local_global_traffic("4x6", 1.0, messages=40, seed=1)
    ref = ltm.stencil("4x6")
    nb = set(zip(ref.src.tolist(), ref.indices.tolist()))
    assert set(zip(g.src.tolist(), g.indices.tolist())) <= nb and g.weights.sum() == 24 * 40
    # alpha = 0: no neighbour structure, and the graph equals the seeded global draws
    g0 = local_global_traffic("4x6", 0.0, messages=5, seed=2)
    rng = np.random.default_rng(2)
    dst = rng.integers(0, 24, size=120)
    assert pairs(g0) == pairs(ltm.CommGraph(24, np.repeat(np.arange(24), 5), dst))
    assert load_graph("local-global:4x6:0:5:2") == g0


def test_local_global_local_fraction_and_direction_balance():
    alpha, P, m = 0.3, 8 * 16, 2000
    g = local_global_traffic("8x16", alpha, messages=m, seed=5)
    ref = ltm.stencil("8x16")
    nb = set(zip(ref.src.tolist(), ref.indices.tolist()))
    w_nb = sum(w for s, d, w in pairs(g) if (s, d) in nb)
    # expected neighbour weight: alpha (all local) + (1 - alpha) * 4/P (global draws hitting a neighbour)
    p = alpha + (1 - alpha) * 4 / P
    n = P * m
    assert abs(w_nb - n * p) < 5 * np.sqrt(n * p * (1 - p))
    # each of the 4 directions gets a quarter of the neighbour traffic
    coords = np.array(np.unravel_index(np.arange(P), (8, 16))).T
    per_dir = np.zeros(4)
    for s, d, w in pairs(g):
        dy, dx = (coords[d] - coords[s] + [4, 8]) % [8, 16] - [4, 8]
        k = {(1, 0): 0, (-1, 0): 1, (0, 1): 2, (0, -1): 3}.get((int(dy), int(dx)))
        if k is not None:
            per_dir[k] += w
    q = w_nb / 4
    assert np.all(np.abs(per_dir - q) < 5 * np.sqrt(q))


def test_local_global_validates():
    with pytest.raises(CommGraphError, match=r"alpha must be in \[0, 1\]"):
        local_global_traffic("4x4", 1.5)
    with pytest.raises(CommGraphError, match="ALPHA must be a number"):
        load_graph("local-global:4x4:half")
    with pytest.raises(CommGraphError, match="expected local-global"):
        load_graph("local-global:4x4")
    g = local_global_traffic("1x5", 1.0, messages=3, seed=0)  # size-1 dimension skipped
    assert set(pairs(g)) <= {(s, (s + k) % 5, w) for s in range(5) for k in (1, 4) for w in (1.0, 2.0, 3.0)}


def test_local_global_maps_with_self_edges():
    g = local_global_traffic("4x8", 0.5, messages=8, seed=0)
    m = ltm.map_processes(ltm.rtt(4), g, strategy="greedy", seed=0)
    assert len(m) == 32 and ltm.average_dilation(ltm.rtt(4), g, m) >= 0
