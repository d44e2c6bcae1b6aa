"""ltm.apply_mapping: a mapping saved with its hosts (``libtopomap map ... -o FILE.json``) reorders a job
without recomputing, and is refused on other hosts or another process count (tests/test_mpi_suite.py).

Every rank runs these tests; verdicts are ``allgather``-ed so all ranks fail together.
"""

import numpy as np
import pytest
from mpi4py import MPI

import libtopomap as ltm
from _helpers import COMM, P, RANK, agree, raised, shared_dir
from libtopomap.cli import main
from libtopomap.mpi import collective_call


def _topo():
    """P/2 hosts with 2 slots each on a ring (torus P/2)."""
    t = ltm.torus(str(P // 2))
    return ltm.Topology(t.names, np.stack([t.link_u, t.link_v], 1), slots=np.full(t.n_vertices, 2), name="ring2")


def _save(path, vertices):
    def write():
        if RANK == 0:
            ltm.Mapping(_topo(), vertices, strategy="test").save(path, metrics={"max_congestion": np.float64(1.5)})
    collective_call(COMM, write, what="writing the mapping")


def test_apply_puts_rank_k_on_the_host_of_process_k(tmp_path_factory):
    topo = _topo()
    rng = np.random.default_rng(5)
    vertices = np.repeat(np.arange(P // 2), 2)[rng.permutation(P)]  # the mapping: process k -> host
    path = shared_dir(tmp_path_factory, "apply") + "/m.json"
    _save(path, vertices)
    # the job runs 2 processes per host in another order (host names with a domain, cut at '.')
    job = {r: f"{topo.names[r % (P // 2)]}.site" for r in range(P)}
    new = ltm.apply_mapping(COMM, path, fake_names=job)
    ok = type(new) is MPI.Intracomm and new.Get_size() == P
    ok &= new.allgather(job[RANK].split(".")[0]) == [topo.names[v] for v in vertices]
    # processes already on their host keep their rank
    ok &= vertices[RANK] != RANK % (P // 2) or new.Get_rank() == RANK
    new.Free()
    assert agree(ok)


def test_cli_map_output_then_apply(tmp_path_factory):
    d = shared_dir(tmp_path_factory, "apply")

    def write_topo():
        if RANK == 0:
            ltm.save(d + "/t.topo", ltm.torus(f"{P // 2}x2"))
    collective_call(COMM, write_topo, what="writing the topology")
    # `libtopomap map` under mpiexec races over COMM_WORLD; rank 0 writes the file
    code = main(["map", "--topology", d + "/t.topo", "--graph", f"torus-scrambled:{P // 2}x2:7",
                 "--strategy", "greedy", "-o", d + "/m.json"])
    saved = COMM.bcast(ltm.read_saved_mapping(d + "/m.json") if RANK == 0 else None, root=0)
    ok = code == 0 and saved.n_processes == P and saved.strategy in ("greedy", "current") and saved.topology == "t"
    ok &= "max_congestion" in saved.metrics
    hosts = [f"n{(3 * r + 1) % P}" for r in range(P)]  # any order of the same hosts
    new = ltm.apply_mapping(COMM, d + "/m.json", placement=hosts)
    ok &= new.allgather(hosts[RANK]) == saved.hosts
    new.Free()
    assert agree(ok)


@pytest.mark.parametrize("case", ["other-host", "other-count-per-host", "other-size"])
def test_refused_on_other_hosts_or_size(tmp_path_factory, case):
    path = shared_dir(tmp_path_factory, "apply") + "/m.json"
    topo = _topo()
    _save(path, np.repeat(np.arange(P // 2), 2))
    hosts = [topo.names[r // 2] for r in range(P)]
    comm = COMM
    if case == "other-host":
        hosts[-1] = "elsewhere"
    elif case == "other-count-per-host":
        hosts[-1] = hosts[0]
    else:
        comm = COMM.Split(0 if RANK < P - 1 else MPI.UNDEFINED, key=RANK)
        hosts = hosts[:P - 1]
    if comm == MPI.COMM_NULL:
        got = ("skip", "")
    else:
        got = raised(lambda: ltm.apply_mapping(comm, path, placement=hosts))
    msgs = [m for m in COMM.allgather(got) if m != ("skip", "")]
    assert all(m is not None and m == msgs[0] for m in msgs), msgs
    name, text = msgs[0]
    assert name == "MappingError" and issubclass(ltm.MappingError, ValueError)
    needle = {"other-host": "'elsewhere' runs 1 process(es) of this job but is not in the mapping",
              "other-count-per-host": "other hosts",
              "other-size": f"for {P} processes but the communicator has {P - 1}"}[case]
    assert needle in text and text.startswith(path), text
    if comm is not COMM and comm != MPI.COMM_NULL:
        comm.Free()
    assert COMM.allreduce(1) == P


def test_unreadable_file_is_a_comm_error_everywhere(tmp_path_factory):
    path = shared_dir(tmp_path_factory, "apply") + "/bad.json"

    def write():
        if RANK == 0:
            with open(path, "w") as f:
                f.write('{"format": "libtopomap-mapping",\n "version": 1, "hosts": [1, 2}\n')
    collective_call(COMM, write, what="writing a file")
    msgs = COMM.allgather(raised(lambda: ltm.apply_mapping(COMM, path, placement=["n0"] * P)))
    assert all(m is not None and m == msgs[0] and m[0] == "CommError" for m in msgs), msgs
    assert f"{path}:2:" in msgs[0][1]
    assert COMM.allreduce(1) == P
