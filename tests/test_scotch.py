"""The Scotch peer is repeatable: same seed, same mapping (it runs in a deterministic context)."""

import pytest

import libtopomap as ltm
from libtopomap.mappers.scotch import HAVE_SCOTCH, map_scotch

pytestmark = pytest.mark.skipif(not HAVE_SCOTCH, reason="pyscotch not installed (extra 'scotch')")


def test_same_seed_same_mapping():
    t = ltm.torus("8x8x8")
    g = ltm.load_graph("torus-scrambled:8x8x8:1")
    runs = {tuple(map_scotch(t, g, seed=3).vertices.tolist()) for _ in range(3)}
    assert len(runs) == 1
    m = map_scotch(t, g, seed=3)
    assert sorted(m.vertices.tolist()) == list(range(512))  # a bijection onto the hosts
