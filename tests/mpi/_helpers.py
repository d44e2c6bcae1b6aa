"""What the MPI test files share: the world communicator, verdicts that every rank agrees on, errors caught
for comparison across ranks, and files that rank 0 writes for every rank (fake host names, topologies).

Imported by the test files of this folder (pytest puts the folder on ``sys.path``); every function is
collective over ``COMM`` unless it says otherwise.
"""

from mpi4py import MPI

from libtopomap import save
from libtopomap.mpi import collective_call

__all__ = ["COMM", "RANK", "P", "agree", "raised", "all_same", "shared_dir", "shared_file", "fake_names_file",
           "topology_and_names"]

COMM = MPI.COMM_WORLD
RANK = COMM.Get_rank()
P = COMM.Get_size()


def agree(ok):
    """True on every rank when ``ok`` holds on every rank (so that all ranks fail together)."""
    return all(COMM.allgather(bool(ok)))


def raised(fn):
    """``(exception type name, message)`` of what ``fn()`` raises, else None (a communicator it returns is
    freed).  Local."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    if isinstance(out, MPI.Comm) and out != MPI.COMM_NULL:
        out.Free()
    return None


def all_same(got, kind, *needles):
    """Assert that every rank got the same error (``raised``'s result), of type ``kind``, naming ``needles``;
    returns its message."""
    msgs = COMM.allgather(got)
    assert all(m is not None and m == msgs[0] for m in msgs), msgs
    assert msgs[0][0] == kind, msgs[0]
    for n in needles:
        assert n in msgs[0][1], msgs[0]
    assert COMM.allreduce(1) == P  # nobody is stuck
    return msgs[0][1]


def shared_dir(tmp_path_factory, name="shared"):
    """A fresh directory made by rank 0, its path on every rank."""
    return COMM.bcast(str(tmp_path_factory.mktemp(name)) if RANK == 0 else None, root=0)


def shared_file(tmp_path_factory, text, name, what="writing a test file"):
    """A file holding ``text``, written by rank 0 (an error there is raised on every rank); its path on
    every rank."""
    def write():
        if RANK == 0:
            p = tmp_path_factory.mktemp("shared") / name
            p.write_text(text)
            return str(p)
    return COMM.bcast(collective_call(COMM, write, what=what), root=0)


def fake_names_file(tmp_path_factory, hosts, name="fake.names", suffix=""):
    """A fake-names file (``rank host`` lines, the ``fake_names=`` argument of the MPI calls) putting rank
    ``r`` on ``hosts[r] + suffix``; its path on every rank."""
    return shared_file(tmp_path_factory, "".join(f"{r} {h}{suffix}\n" for r, h in enumerate(hosts)), name,
                       what="writing fake names")


def topology_and_names(tmp_path_factory, topology, placement, name="files"):
    """``topology`` saved as ``t.topo`` and a fake-names file ``t.names`` putting rank ``r`` on vertex
    ``placement[r]``, written by rank 0 in one new folder (an error there is raised on every rank);
    the folder's path on every rank."""
    def write():
        if RANK == 0:
            d = tmp_path_factory.mktemp(name)
            save(str(d / "t.topo"), topology)
            (d / "t.names").write_text("".join(f"{r} {topology.names[v]}\n" for r, v in enumerate(placement)))
            return str(d)
    return COMM.bcast(collective_call(COMM, write, what="writing files"), root=0)
