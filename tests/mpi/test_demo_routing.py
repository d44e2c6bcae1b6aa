"""``libtopomap demo --routing`` under real MPI (run by tests/test_mpi_suite.py with 4 and 8 ranks): the
printed congestion is that of the routing model, for the placements the demo prints; a model the
bundled torus file cannot route (it has no generator attributes) is an error on every rank."""

import numpy as np

from libtopomap.cli import main
from libtopomap.cli._demo import DEMO_TOPOLOGY, _bundled
from libtopomap.formats import read
from libtopomap.metrics import max_congestion
from libtopomap.mpi.bench import halo_graph
from _helpers import COMM, P, RANK


def _run(capsys, *extra):
    rc = main(["demo", "--sizes", "8", "--iterations", "1", *extra])
    out = capsys.readouterr().out
    assert COMM.allgather(rc) == [0] * P
    return out


def test_demo_reports_the_routing_models_congestion(capsys):
    import contextlib

    outs = {r: _run(capsys, "--routing", r) for r in ("ecmp", "table")}
    if RANK != 0:
        assert all(o == "" for o in outs.values())
        return
    with contextlib.ExitStack() as stack:
        topo = read(str(_bundled(DEMO_TOPOLOGY, stack)))
    graph = halo_graph(P)
    for routing, out in outs.items():
        assert ("routing: table" in out) == (routing == "table")
        lines = {ln.split(" (")[0]: ln.split(": ", 1)[1] for ln in out.splitlines() if ln.startswith("placement ")}
        rows = {ln[:16].strip(): ln[16:].split() for ln in out.splitlines()
                if ln.startswith(("max congestion", "avg dilation"))}
        for i, key in enumerate(("placement before", "placement after")):
            names = dict(pair.split(":") for pair in lines[key].split())
            v = np.array([topo.index(names[str(r)]) for r in range(P)])
            want = max_congestion(topo, graph, v, routing=routing)
            assert float(rows["max congestion"][i]) == float(f"{want:.3g}"), (routing, key, rows, want)


def test_demo_refuses_a_model_the_topology_cannot_route(capsys):
    rc = main(["demo", "--sizes", "8", "--iterations", "1", "--routing", "dimension-order"])
    err = capsys.readouterr().err
    assert COMM.allgather(rc != 0) == [True] * P
    assert any(COMM.allgather("dimension-order routing needs a generated torus" in err))   # one rank prints it
