"""Fake-names files and host resolution of the MPI layer's "where am I" step (no mpiexec needed)."""

import subprocess
import sys

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.mpi.location import host_of, read_fake_names, resolve_vertices


def test_import_does_not_initialise_mpi(tmp_path):
    """The MPI-free part loads (and works) without mpi4py; ``locate`` stays the function."""
    p = _write(tmp_path, "0 n1\n1 n0\n")
    code = ("import sys, libtopomap, libtopomap.mpi\n"
            "from libtopomap.mpi.location import read_fake_names, resolve_vertices\n"
            f"names = read_fake_names({str(p)!r}, n_ranks=2)\n"
            "assert resolve_vertices(libtopomap.torus('2'), [names[0], names[1]]).tolist() == [1, 0]\n"
            "assert callable(libtopomap.mpi.locate) and libtopomap.mpi.locate.__name__ == 'locate'\n"
            "print(sorted(m for m in sys.modules if m.startswith('mpi4py')))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def _write(tmp_path, text, name="job.names"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_host_of_cuts_at_first_dot():
    assert host_of("node17.cluster.example.org") == "node17"
    assert host_of("n3") == "n3"
    assert host_of("  n3.x \n") == "n3"


def test_read_fake_names(tmp_path):
    p = _write(tmp_path, "# rank host\n\n2 n0.site   # trailing comment\n0 n2\n1 n1.a.b\n7 n5\n")
    assert read_fake_names(p) == {2: "n0", 0: "n2", 1: "n1", 7: "n5"}
    # extra ranks (a file for a larger job) are fine; every rank of the job must be there
    assert read_fake_names(p, n_ranks=3) == {2: "n0", 0: "n2", 1: "n1", 7: "n5"}


@pytest.mark.parametrize("text,where,msg", [
    ("0 n0\n1\n", ":2:", "expected '<rank> <hostname>', got '1'"),
    ("0 n0\n1 n1 n2\n", ":2:", "expected '<rank> <hostname>'"),
    ("0 n0\none n1\n", ":2:", "rank 'one' is not an integer"),
    ("0 n0\n-1 n1\n", ":2:", "rank -1 is negative"),
    ("0 n0\n\n# c\n0 n1\n", ":4:", "rank 0 listed twice (first on line 1)"),
    ("0 .n0\n", ":1:", "empty hostname '.n0'"),
])
def test_bad_fake_names_file_names_file_and_line(tmp_path, text, where, msg):
    p = _write(tmp_path, text)
    with pytest.raises(ltm.FormatError) as e:
        read_fake_names(p)
    assert str(e.value).startswith(f"{p}{where} ") and msg in str(e.value)
    assert e.value.path == str(p) and e.value.line == int(where.strip(":"))


def test_fake_names_missing_rank(tmp_path):
    p = _write(tmp_path, "0 n0\n2 n2\n")
    with pytest.raises(ltm.FormatError, match=r"job\.names: no line for rank\(s\) 1, 3 of a job with 4 ranks"):
        read_fake_names(p, n_ranks=4)


def test_fake_names_unreadable(tmp_path):
    with pytest.raises(OSError):
        read_fake_names(tmp_path / "nope.names")


def _two_slot_ring():
    t = ltm.torus("4")
    return ltm.Topology(t.names, np.stack([t.link_u, t.link_v], 1), slots=[2, 2, 2, 2], name="ring4x2")


def test_resolve_several_processes_per_host():
    topo = _two_slot_ring()
    v = resolve_vertices(topo, ["n1", "n1", "n0", 3, "n3"])
    assert v.dtype == np.int32 and v.tolist() == [1, 1, 0, 3, 3]


def test_resolve_errors():
    topo = _two_slot_ring()
    with pytest.raises(ltm.MappingError, match=r"host 'n1' \(from job\.names\) runs 3 processes "
                                                r"\(ranks 0, 1, 4\) but has only 2 slot\(s\)"):
        resolve_vertices(topo, ["n1", "n1", "n0", "n2", "n1"], source="job.names")
    with pytest.raises(ltm.TopologyError, match=r"rank 2: host 'ghost' is not in the topology 'ring4x2'"):
        resolve_vertices(topo, ["n1", "n0", "ghost"])
    with pytest.raises(ltm.TopologyError, match=r"rank 0: vertex 9 is outside 0\.\.3"):
        resolve_vertices(topo, [9])
    fat = ltm.concentrate(ltm.torus("2"), 1)  # routers (switches) have no slots
    switch = next(n for n, k in zip(fat.names, fat.kinds) if k == "switch")
    with pytest.raises(ltm.TopologyError, match="has no process slots"):
        resolve_vertices(fat, [switch])


def test_resolve_respects_given_slots():
    topo = _two_slot_ring()
    with pytest.raises(ltm.MappingError, match="has only 1 slot"):
        resolve_vertices(topo, ["n0", "n0"], slots=[1, 1, 1, 1])


# ------------------------------------------------------------------------- fake-names files that are not text
def test_fake_names_not_utf8_or_not_a_file(tmp_path):
    from libtopomap.mpi.location import read_fake_names

    (tmp_path / "names").write_bytes(b"0 n0\n1 n\xe91\n")
    with pytest.raises(ltm.FormatError, match=r"names:2: not UTF-8 text \(byte 0xe9\)"):
        read_fake_names(tmp_path / "names")
    with pytest.raises(ltm.FormatError, match="/dev/zero: not a regular file"):
        read_fake_names("/dev/zero")
