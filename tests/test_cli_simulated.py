"""The "simulated" lines of ``libtopomap demo`` and ``bench`` (libtopomap/cli/_simulated.py), without MPI.

On the bundled demo torus (8 hosts, 12 links, 100 Gbps and 100 ns per link) the halo exchange of the
demo's fake-names layout and of the identity placement (every neighbour one hop away) is simulated; both
simulators are deterministic, so the times are exact.  Under the s4u replay (CM02) a lone message takes
``hops x 100 ns + bytes / 12.5 GB/s``: the identity's 8-byte exchange is 100.64 ns.
"""

import contextlib
import shutil

import pytest

from libtopomap import errors, simulate
from libtopomap.cli import _simulated as sim
from libtopomap.cli._demo import _DEMO_LAYOUT, DEMO_TOPOLOGY, _bundled
from libtopomap.formats import read
from libtopomap.mpi.bench import halo_graph
from libtopomap.smpi import source_digest

HAS_SMPI = bool(shutil.which("smpicc") and shutil.which("smpirun"))
HAS_S4U = simulate.simgrid_available()

# (P, size) -> (launcher's placement, identity) in seconds
SMPI_HALO = {(4, 8): (6.132e-07, 2.132e-07), (4, 16384): (5.55928e-06, 1.52328e-06),
             (8, 8): (6.132e-07, 2.132e-07), (8, 16384): (9.49528e-06, 1.52584e-06)}
S4U_HALO = {(4, 8): (3.0064e-07, 1.0064e-07), (4, 16384): (5.34288e-06, 1.41072e-06),
            (8, 8): (3.0128e-07, 1.0064e-07), (8, 16384): (9.27504e-06, 1.41072e-06)}


def _topology():
    with contextlib.ExitStack() as stack:
        return read(str(_bundled(DEMO_TOPOLOGY, stack)))


def _halo(p):
    return [sim.Exchange("Neighbor_alltoall", halo_graph(p), _DEMO_LAYOUT[:p], range(p))]


def _no_smpi(monkeypatch):
    monkeypatch.setenv("SMPICC", "/nonexistent/smpicc")


@pytest.mark.skipif(not HAS_SMPI, reason="SMPI (smpicc, smpirun from libsimgrid-dev) is not installed")
@pytest.mark.parametrize("p", [4, 8])
def test_smpi_halo_times_are_exact(p, tmp_path, monkeypatch):
    monkeypatch.setenv("LIBTOPOMAP_SMPI_DIR", str(tmp_path / "cache"))
    out = sim.simulate_exchanges(_topology(), _halo(p), [8, 16384])
    assert out["error"] is None and out["backend"] == "SMPI, CM02 model, table routing"
    (r,) = out["results"]
    for k, size in enumerate((8, 16384)):
        assert (r["launcher_s"][k], r["libtopomap_s"][k]) == pytest.approx(SMPI_HALO[p, size], rel=1e-9)
    # the proxy is built once, in a folder named by its source's hash, and reused
    assert [x.name for x in (tmp_path / "cache").iterdir()] == [f"replay-{source_digest('replay')}"]
    again = sim.simulate_exchanges(_topology(), _halo(p), [8])
    assert again["results"][0]["launcher_s"] == r["launcher_s"][:1]


@pytest.mark.skipif(not HAS_S4U, reason="SimGrid's Python module is not installed")
@pytest.mark.parametrize("p", [4, 8])
def test_s4u_halo_times_are_exact(p, monkeypatch):
    _no_smpi(monkeypatch)
    out = sim.simulate_exchanges(_topology(), _halo(p), [8, 16384])
    assert out["error"] is None and out["backend"].startswith("SimGrid s4u replay")
    (r,) = out["results"]
    for k, size in enumerate((8, 16384)):
        assert (r["launcher_s"][k], r["libtopomap_s"][k]) == pytest.approx(S4U_HALO[p, size], rel=1e-9)
    assert r["libtopomap_s"][0] == pytest.approx(100e-9 + 8 / 12.5e9, rel=1e-12)


@pytest.mark.skipif(not HAS_S4U, reason="SimGrid's Python module is not installed")
def test_collectives_replay_the_mapped_schedule():
    # identity placement on the torus: recursive doubling's partners are 1, 2 and 1 hops away; each
    # of its 3 steps moves 8 bytes one message at a time along the path
    out = sim.simulate_exchanges(_topology(), [sim.Exchange("allreduce", "allreduce", _DEMO_LAYOUT, range(8))], [8])
    (r,) = out["results"]
    assert r["exchange"] == "allreduce (recursive doubling)" and r["backend"].startswith("SimGrid s4u replay")
    assert r["libtopomap_s"][0] < r["launcher_s"][0]
    lines = sim.format_simulated(out)
    assert lines[2].split() == ["allreduce", "(recursive", "doubling)", "8",
                                f"{r['launcher_s'][0] * 1e6:.4g}", f"{r['libtopomap_s'][0] * 1e6:.4g}",
                                f"{r['speedup'][0]:.2f}x"]


def test_no_simulator_is_one_line(monkeypatch):
    _no_smpi(monkeypatch)
    monkeypatch.setattr(simulate, "simgrid_available", lambda: False)
    out = sim.simulate_exchanges(_topology(), _halo(8), [8])
    assert out["results"] == [] and "neither SMPI" in out["error"]
    assert sim.format_simulated(out) == [f"simulated on the modelled network: not available ({out['error']})"]


@pytest.mark.skipif(not HAS_SMPI, reason="SMPI (smpicc, smpirun from libsimgrid-dev) is not installed")
def test_a_failing_simulation_is_one_line(monkeypatch):
    from libtopomap import smpi

    def fail(*a, **k):
        raise errors.SmpiError("smpicc replay.c failed (exit 1): no space left\nsecond line")
    monkeypatch.setattr(smpi, "build", fail)
    out = sim.simulate_exchanges(_topology(), _halo(8), [8])
    assert out["error"] == "SMPI failed: SmpiError: smpicc replay.c failed (exit 1): no space left"
    (line,) = sim.format_simulated(out)
    assert line.startswith("simulated on the modelled network: not available (SMPI failed")


def test_too_many_ranks_are_not_simulated():
    big = sim.MAX_SIMULATED_RANKS + 1
    out = sim.simulate_exchanges(None, [sim.Exchange("x", "bcast", range(big), range(big))], [8])
    assert out["error"] == f"{big} ranks; the commands simulate up to {sim.MAX_SIMULATED_RANKS}"


@pytest.mark.skipif(not (HAS_SMPI or HAS_S4U), reason="neither SMPI nor SimGrid's Python module is installed")
def test_labels():
    out = sim.simulate_exchanges(_topology(), _halo(8), [8, 1024])
    lines = sim.format_simulated(out)
    assert lines[0].startswith("simulated on the modelled network (")
    assert "simulated time, not measured here" in lines[0]
    assert lines[1].split() == ["exchange", "size", "launcher", "libtopomap", "speed-up"]
    assert [ln.split()[:2] for ln in lines[2:]] == [["Neighbor_alltoall", "8"], ["Neighbor_alltoall", "1K"]]


@pytest.mark.skipif(not HAS_SMPI, reason="SMPI (smpicc, smpirun from libsimgrid-dev) is not installed")
def test_collectives_under_smpi_without_the_s4u_module(monkeypatch):
    # the colls proxy with SMPI's recursive-doubling Allreduce (rdb), read from its LTM_COLL lines
    monkeypatch.setattr(simulate, "simgrid_available", lambda: False)
    out = sim.simulate_exchanges(_topology(), [sim.Exchange("allreduce", "allreduce", _DEMO_LAYOUT, range(8))],
                                 [8, 1024])
    (r,) = out["results"]
    assert out["error"] is None and r["backend"] == "SMPI, CM02 model, table routing"
    assert r["launcher_s"] == pytest.approx([9.1704e-07, 1.16088e-06], rel=1e-9)
