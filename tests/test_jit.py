"""libtopomap._jit (issue 29, cold start): inside ``python_kernels`` the kernels run as plain Python with the
compiled kernels' exact results (those drawing random numbers included), a demo-sized mapping race compiles
(or loads) no kernel at all, and processes sharing a fresh numba cache compile each kernel once."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from libtopomap._jit import _draws_random, python_kernels, small_enough_for_python
from libtopomap.generators import fattree, torus
from libtopomap.mappers import STRATEGIES, map_processes
from libtopomap.metrics import evaluate
from libtopomap.patterns import stencil

# A fresh interpreter with an empty numba cache runs the 8-process demo's race (bundled 4x2 torus, the
# demo's bad placement, every default strategy) inside python_kernels, then one kernel outside it.
_DEMO_RACE = textwrap.dedent("""
    import contextlib, json
    import numpy as np
    from libtopomap._jit import compiled_kernels, python_kernels
    from libtopomap.cli._demo import DEMO_TOPOLOGY, _DEMO_LAYOUT, _bundled
    from libtopomap.formats import read
    from libtopomap.mpi.bench import halo_graph
    from libtopomap.mpi.pipeline import DEFAULT_STRATEGIES
    from libtopomap.portfolio import MappingProblem, make_candidates, run_portfolio

    with contextlib.ExitStack() as stack:
        topo = read(str(_bundled(DEMO_TOPOLOGY, stack)))
    current = np.array(_DEMO_LAYOUT[:SIZE], dtype=np.int64)
    slots = np.bincount(current, minlength=topo.n_vertices).astype(np.int64)
    with python_kernels():
        problem = MappingProblem(topo, halo_graph(SIZE), slots=slots, placement=current)
        result = run_portfolio(problem, make_candidates(DEFAULT_STRATEGIES, seed=0, count=len(DEFAULT_STRATEGIES),
                                                        starts=np.flatnonzero(slots)))
    inside = compiled_kernels()
    from libtopomap._kernels.bfs import bfs_scratch
    bfs_scratch(4)
    print(json.dumps({"inside": inside, "after": compiled_kernels(), "winner": result.winner.label,
                      "value": result.winner.key[0]}))
""")


@pytest.mark.parametrize("size,value", [(8, 1.0), (4, 4 / 3)])
def test_a_demo_sized_race_compiles_no_kernel(tmp_path, size, value):
    """At -n 4, multisection's swap walk (numba's random numbers) used to be compiled: 29 kernels, 245 s
    of a 262-s first demo at load 9-16."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    proc = subprocess.run([sys.executable, "-c", f"SIZE = {size}\n" + _DEMO_RACE], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["inside"] == []
    assert out["after"] == ["libtopomap._kernels.bfs.bfs_scratch"]   # the check sees a compiled kernel
    assert (out["winner"], out["value"]) == ("greedy", pytest.approx(value))  # the demo's results


@pytest.mark.parametrize("case", ["torus-4x2", "fattree-4-2"])
def test_python_kernels_give_the_compiled_results(case):
    if case == "torus-4x2":
        topo, graph = torus((4, 2)), stencil((4, 2))
    else:
        topo, graph = fattree(4, 2), stencil((4, 4))
    for strategy in STRATEGIES:
        compiled = map_processes(topo, graph, strategy=strategy, seed=3)
        with python_kernels():
            interpreted = map_processes(topo, graph, strategy=strategy, seed=3)
            metrics = evaluate(topo, graph, interpreted)
        np.testing.assert_array_equal(interpreted.vertices, compiled.vertices, err_msg=strategy)
        assert metrics == evaluate(topo, graph, compiled), strategy


@pytest.mark.parametrize("refine", ["ta", "two-opt", "hb-swap"])
def test_random_walks_as_python_draw_numbas_numbers_and_leave_numpys_generator_alone(refine):
    """numba's np.random is numpy's legacy algorithms on a generator of its own: the walks give the
    compiled results, and the caller's numpy global generator is where it was."""
    from libtopomap.generators import dragonfly
    from libtopomap.mappers import greedy, local_search
    from libtopomap.patterns import random_graph

    assert _draws_random(local_search._walk) and _draws_random(local_search._accepts)
    assert not _draws_random(greedy._greedy)
    topo, graph = dragonfly(9, 4, 2, 2), random_graph(40, 6, seed=1)
    for objective in ("congestion", "hopbytes"):
        compiled = map_processes(topo, graph, strategy="random", refine=refine, seed=3, objective=objective)
        np.random.seed(11)
        with python_kernels():
            interpreted = map_processes(topo, graph, strategy="random", refine=refine, seed=3, objective=objective)
        assert np.random.randint(1 << 30) == np.random.RandomState(11).randint(1 << 30)
        np.testing.assert_array_equal(interpreted.vertices, compiled.vertices, err_msg=objective)


_COMPILE_ONE = textwrap.dedent("""
    import sys, time
    import numpy as np
    from libtopomap._jit import njit

    @njit(cache=True)
    def smallest(x):  # seconds to compile (numpy's sort), so that without the lock all three would
        return np.sort(x)[0]

    while time.time() < float(sys.argv[1]):  # start together
        time.sleep(0.01)
    smallest(np.arange(3.0))
    print(sum(smallest.stats.cache_misses.values()))
""")


@pytest.mark.slow
def test_processes_sharing_a_fresh_cache_compile_a_kernel_once(tmp_path):
    """Ranks on a fresh install: one process compiles a kernel, the others wait and load it (without
    the lock, three processes started together each compiled it: 3 misses)."""
    import time

    script = tmp_path / "kernel_once.py"
    script.write_text(_COMPILE_ONE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    start = str(time.time() + 5)
    procs = [subprocess.Popen([sys.executable, str(script), start], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(3)]
    misses = sorted(int(p.communicate(timeout=300)[0]) for p in procs)
    assert misses == [0, 0, 1]


def test_only_small_jobs_run_as_python():
    assert small_enough_for_python(8, 8)
    assert not small_enough_for_python(65, 8)
    assert not small_enough_for_python(8, 100_000)     # 8 ranks on a big machine: searches over the whole network
