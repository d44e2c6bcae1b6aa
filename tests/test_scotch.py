"""The Scotch peer through scotchpy (PyPI ``scotchpy64``): a bijection into the allocation, the same
mapping for the same seed (in one process and in fresh ones), and nothing on the terminal."""

import os
import subprocess
import sys

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.errors import MappingError
from libtopomap.mappers.scotch import HAVE_SCOTCH, map_scotch
from libtopomap.patterns import scrambled_torus

pytestmark = pytest.mark.skipif(not HAVE_SCOTCH, reason="scotchpy not installed (extra 'scotch')")

_RUN = ("import hashlib, libtopomap as ltm\n"
        "from libtopomap.mappers.scotch import map_scotch\n"
        "t = ltm.{topo}\n"
        "g = ltm.load_graph('torus-scrambled:8x8x8:1')\n"
        "print(hashlib.sha1(map_scotch(t, g, seed={seed}).vertices.tobytes()).hexdigest())\n")


def _fresh(topo, seed, env=None):
    out = subprocess.run([sys.executable, "-c", _RUN.format(topo=topo, seed=seed)], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stderr == ""  # no banner, no warning: library code stays silent
    return out.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize("topo", ["torus('8x8x8')", "fattree(8, 3)"])
def test_same_seed_same_mapping_in_fresh_processes(topo):
    # with Scotch's threads (even under SCOTCH_DETERMINISTIC) the mapping varied from run to run
    a, b, c = _fresh(topo, 3), _fresh(topo, 3), _fresh(topo, 4)
    assert a == b
    assert c != a  # the seed matters
    # the caller's own Scotch settings do not change the result
    env = dict(os.environ, SCOTCH_PTHREAD_NUMBER="2", SCOTCH_DETERMINISTIC="0")
    assert _fresh(topo, 3, env) == a


def test_same_seed_same_mapping_in_one_process_and_environment_restored():
    t = ltm.torus("8x8x8")
    g = ltm.load_graph("torus-scrambled:8x8x8:1")
    before = {k: os.environ.get(k) for k in ("SCOTCH_DETERMINISTIC", "SCOTCH_PTHREAD_NUMBER")}
    runs = {tuple(map_scotch(t, g, seed=3).vertices.tolist()) for _ in range(3)}
    assert len(runs) == 1
    assert sorted(next(iter(runs))) == list(range(512))  # a bijection onto the hosts
    assert {k: os.environ.get(k) for k in before} == before


@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("make", [
    lambda: (ltm.fattree(4, 3), scrambled_torus("8x8", 0), None),                      # switches merged
    lambda: (ltm.dragonfly(9, 4, 2, 2), scrambled_torus("8x8", 1), None),              # partial: 64 of 72
    lambda: (ltm.torus("4x4"), scrambled_torus("4x8", 2), np.full(16, 2)),             # 2 slots per vertex
    lambda: (ltm.fattree(4, 2), scrambled_torus("4x5", 3), None),                      # 20 on 16 hosts x 2
])
def test_bijection_into_the_allocation_repeatable_per_seed(make, seed, capfd):
    t, g, slots = make()
    if slots is None and g.n > int(np.count_nonzero(np.asarray(t.slots))):
        slots = np.where(np.asarray(t.slots) > 0, 2, 0)
    cap = np.asarray(t.slots if slots is None else slots)
    a = map_scotch(t, g, slots=slots, seed=seed)
    b = map_scotch(t, g, slots=slots, seed=seed)
    assert a.strategy == "scotch"
    assert np.array_equal(a.vertices, b.vertices)
    v = np.asarray(a.vertices)
    assert v.shape == (g.n,)
    used = np.bincount(v, minlength=t.n_vertices)
    assert (used <= cap).all()  # every process in a slot of the allocation, none over a vertex's slots
    assert (cap[v] > 0).all()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_scotch_errors_are_mapping_errors():
    import scotchpy

    from libtopomap.mappers.scotch import _scotch_graph

    with pytest.raises(MappingError, match="Scotch rejected a graph"):  # an arc without its reverse
        _scotch_graph(scotchpy, np.array([0, 1, 1]), np.array([1]), np.array([1]))
