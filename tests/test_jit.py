"""libtopomap._jit (issue 29, cold start): inside ``python_kernels`` the kernels run as plain Python with the
compiled kernels' exact results, and a demo-sized mapping race compiles (or loads) no kernel at all."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from libtopomap._jit import _interpretable, python_kernels, small_enough_for_python
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
    current = np.array(_DEMO_LAYOUT, dtype=np.int64)
    slots = np.bincount(current, minlength=topo.n_vertices).astype(np.int64)
    with python_kernels():
        problem = MappingProblem(topo, halo_graph(8), slots=slots, placement=current)
        result = run_portfolio(problem, make_candidates(DEFAULT_STRATEGIES, seed=0, count=len(DEFAULT_STRATEGIES),
                                                        starts=np.flatnonzero(slots)))
    inside = compiled_kernels()
    from libtopomap._kernels.bfs import bfs_scratch
    bfs_scratch(4)
    print(json.dumps({"inside": inside, "after": compiled_kernels(), "winner": result.winner.label,
                      "value": result.winner.key[0]}))
""")


def test_a_demo_sized_race_compiles_no_kernel(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    proc = subprocess.run([sys.executable, "-c", _DEMO_RACE], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["inside"] == []
    assert out["after"] == ["libtopomap._kernels.bfs.bfs_scratch"]   # the check sees a compiled kernel
    assert (out["winner"], out["value"]) == ("greedy", 1.0)           # the demo's result: congestion 3.33 -> 1


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


def test_kernels_drawing_numbas_random_numbers_stay_compiled():
    from libtopomap.mappers import greedy, local_search

    assert not _interpretable(local_search._walk)        # np.random.seed in numba is not numpy's generator
    assert not _interpretable(local_search._accepts)
    assert _interpretable(greedy._greedy)


def test_only_small_jobs_run_as_python():
    assert small_enough_for_python(8, 8)
    assert not small_enough_for_python(65, 8)
    assert not small_enough_for_python(8, 100_000)     # 8 ranks on a big machine: searches over the whole network
