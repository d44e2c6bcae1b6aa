"""Launch-time rank files: allocations, the three emitters (checked by parsers written here from the
launchers' documentation, not by the emitters' code), ``libtopomap map --emit``, and Open MPI really
binding ranks where an emitted rankfile says."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import libtopomap as ltm
from libtopomap.cli import main
from libtopomap.errors import ArgumentError, FormatError, MappingError
from libtopomap.rankfiles import EMITTERS, Allocation, allocation_topology, emit, launch_placement, read_allocation

from _helpers import openmpi_env, openmpi_or_skip

# ---------------------------------------------------------------- independent parsers


def parse_mpich_rank_order(text, allocation):
    """Host of each rank under MPICH_RANK_REORDER_METHOD=3: the listed ranks fill the slots in order."""
    order = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        for tok in filter(None, (t.strip() for t in line.split(","))):
            a, _, b = tok.partition("-")
            order.extend(range(int(a), int(b or a) + 1))
    positions = [h for h, s in zip(allocation.hosts, allocation.slots) for _ in range(s)]
    assert sorted(order) == list(range(len(order))), "every rank exactly once"
    hosts = [None] * len(order)
    for pos, rank in enumerate(order):
        hosts[rank] = positions[pos]
    return hosts


def parse_openmpi_rankfile(text):
    """{rank: (host, slot)} of 'rank N=HOST slot=S' lines."""
    out = {}
    for line in text.splitlines():
        m = re.fullmatch(r"rank\s+(\d+)\s*=\s*(\S+)\s+slot=(\d+)", line.strip())
        assert m, line
        assert int(m.group(1)) not in out
        out[int(m.group(1))] = (m.group(2), int(m.group(3)))
    return out


def parse_slurm_hostfile(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


def parse_hydra_config(text):
    """Host of each rank of a Hydra configuration line '-hosts H0,H1,... -rankmap (vector,BLOCKS)', BLOCKS
    read as MPL_rankmap_str_to_array does: 'X' (one rank on node X) or '(X,Y,Z)' (Y nodes from X, Z each)."""
    lines = [x for x in text.splitlines() if x.strip() and not x.lstrip().startswith("#")]
    assert len(lines) == 1, "Hydra takes a new line of a configuration file for a new executable"
    m = re.fullmatch(r"-hosts (\S+) -rankmap \(vector,(\S+)\)", lines[0].strip())
    assert m, lines[0]
    hosts = m.group(1).split(",")
    ids = []
    for block in re.findall(r"\(\d+,\d+,\d+\)|\d+", m.group(2)):
        x, y, z = (int(v) for v in block.strip("()").split(",")) if block.startswith("(") else (int(block), 1, 1)
        for node in range(x, x + y):
            ids += [node] * z
    assert re.sub(r"\(\d+,\d+,\d+\)|\d+", "", m.group(2)).strip(",") == "", m.group(2)
    return [hosts[i] for i in ids]


def _check_roundtrip(placement, allocation, fill_in_order):
    rf = parse_openmpi_rankfile(emit("openmpi-rankfile", placement, allocation))
    assert [rf[r][0] for r in range(len(placement))] == placement
    for h, s in zip(allocation.hosts, allocation.slots):  # distinct slots on a host, within its slots
        used = sorted(slot for host, slot in rf.values() if host == h)
        assert used == list(range(len(used))) and len(used) <= s
    assert parse_slurm_hostfile(emit("slurm-hostfile", placement, allocation)) == placement
    assert parse_hydra_config(emit("hydra-config", placement, allocation)) == placement
    if fill_in_order:
        assert parse_mpich_rank_order(emit("mpich-rank-order", placement, allocation), allocation) == placement


@st.composite
def _jobs(draw):
    nh = draw(st.integers(1, 6))
    slots = draw(st.lists(st.integers(1, 4), min_size=nh, max_size=nh))
    alloc = Allocation(tuple(f"h{i:02d}" for i in draw(st.permutations(range(nh)))), tuple(slots))
    n = draw(st.integers(1, alloc.total_slots))
    positions = launch_placement(alloc, alloc.total_slots)
    if draw(st.booleans()):  # a permutation of the first n launch positions: hosts filled in order
        perm = draw(st.permutations(range(n)))
        return [positions[i] for i in perm], alloc, True
    chosen = draw(st.permutations(range(alloc.total_slots)))[:n]  # any placement within the slots
    return [positions[i] for i in chosen], alloc, sorted(chosen) == list(range(n))


@settings(max_examples=150, deadline=None)
@given(_jobs())
def test_emitters_roundtrip(job):
    placement, alloc, fill_in_order = job
    _check_roundtrip(placement, alloc, fill_in_order)


def test_emitter_texts():
    alloc = Allocation(("a", "b", "c"), (4, 4, 2))
    placement = ["b", "b", "a", "a", "a", "b", "b", "a", "c"]
    assert emit("mpich-rank-order", placement, alloc) == "2-4,7\n0-1,5-6\n8\n"
    assert emit("openmpi-rankfile", placement, alloc).splitlines()[:3] == [
        "rank 0=b slot=0", "rank 1=b slot=1", "rank 2=a slot=0"]
    assert emit("slurm-hostfile", placement, alloc) == "b\nb\na\na\na\nb\nb\na\nc\n"


def test_emitter_errors():
    alloc = Allocation(("a", "b"), (2, 2))
    with pytest.raises(MappingError, match="host 'a' gets 1 of its 2 slots but a later host 'b' is used"):
        emit("mpich-rank-order", ["a", "b", "b"], alloc)
    assert emit("openmpi-rankfile", ["a", "b", "b"], alloc)  # other formats place anywhere
    with pytest.raises(MappingError, match="3 ranks placed on host 'a', which has 2 slots"):
        emit("slurm-hostfile", ["a", "a", "a"], alloc)
    with pytest.raises(MappingError, match="rank 1 is placed on 'z', which is not in the allocation"):
        emit("openmpi-rankfile", ["a", "z"], alloc)
    with pytest.raises(ArgumentError, match="unknown launcher format"):
        emit("lsf", ["a"], alloc)
    with pytest.raises(ArgumentError, match="appears twice"):
        Allocation(("a", "a"), (1, 1))
    assert set(EMITTERS) == {"mpich-rank-order", "openmpi-rankfile", "slurm-hostfile", "hydra-config"}


def test_hydra_config_blocks_and_line_limit():
    alloc = Allocation(("a", "b", "c", "d"), (4, 4, 4, 4))
    # runs of one host -> (X,1,Z); consecutive hosts with equal runs merge into (X,Y,Z); single ranks -> X
    placement = ["a", "a", "b", "b", "c", "c", "d", "a", "c", "b"]
    assert emit("hydra-config", placement, alloc) == "-hosts a,b,c,d -rankmap (vector,(0,3,2),3,0,2,1)\n"
    assert parse_hydra_config(emit("hydra-config", placement, alloc)) == placement
    from libtopomap.rankfiles import HYDRA_LINE_MAX

    many = Allocation(tuple(f"node{i:05d}" for i in range(2000)), (1,) * 2000)
    with pytest.raises(MappingError, match=f"Hydra reads at most {HYDRA_LINE_MAX}: emit slurm-hostfile"):
        emit("hydra-config", list(many.hosts[::-1]), many)


# ---------------------------------------------------------------- allocations


def test_read_allocation(tmp_path):
    assert read_allocation("nid[0001-0004,0010]", ranks_per_host=2) == Allocation(
        ("nid0001", "nid0002", "nid0003", "nid0004", "nid0010"), (2,) * 5)
    assert read_allocation("n[1-3]", nprocs=7).slots == (3, 3, 3)  # ceil(7 / 3)
    env = {"SLURM_JOB_NODELIST": "c[2,1]", "SLURM_NTASKS_PER_NODE": "4"}
    assert read_allocation(environ=env) == Allocation(("c2", "c1"), (4, 4))
    with pytest.raises(ArgumentError, match="SLURM_JOB_NODELIST"):
        read_allocation(environ={})
    hf = tmp_path / "hosts"
    hf.write_text("# job hosts\nb slots=2\na:3\nc\nc\nc   # three lines: three slots\nd\n")
    assert read_allocation(str(hf), ranks_per_host=5) == Allocation(("b", "a", "c", "d"), (2, 3, 3, 5))
    hf.write_text("a\nb\na\n")
    with pytest.raises(FormatError, match=r"hosts:3: host 'a' again \(first on line 1\)"):
        read_allocation(str(hf))
    hf.write_text("a\nb slots=x\n")
    with pytest.raises(FormatError, match=r"hosts:2: expected 'host', 'host slots=N' or 'host:N'"):
        read_allocation(str(hf))
    with pytest.raises(FormatError, match="has 100000000 names, above the limit of 4194304"):
        read_allocation("n[0-99999999]")
    with pytest.raises(ArgumentError, match="--ranks-per-host must be >= 1"):
        read_allocation("n1", ranks_per_host=0)


# ---------------------------------------------------------------- the command line


@pytest.fixture()
def torus_file(tmp_path):
    p = tmp_path / "t.ltm"
    ltm.save(str(p), ltm.torus("4x4x2"))
    return str(p)


def test_map_emit_roundtrip(torus_file, tmp_path, capsys):
    topo = ltm.load(torus_file)
    hosts = [topo.names[v] for v in np.random.default_rng(1).permutation(topo.n_vertices)[:8]]
    hf = tmp_path / "hosts"
    hf.write_text("".join(f"{h} slots=2\n" for h in hosts))
    alloc = read_allocation(str(hf))
    base = ["map", "--topology", torus_file, "--graph", "torus-scrambled:4x4:3", "--allocation", str(hf), "--json"]
    mfile = tmp_path / "mapping.txt"
    assert main(base + ["-o", str(mfile)]) == 0
    recs = json.loads(capsys.readouterr().out)
    # the current placement is the launcher's: rank r on the host of launch position r
    g = ltm.load_graph("torus-scrambled:4x4:3")
    launch = [topo.index(h) for h in launch_placement(alloc, g.n)]
    restricted, current = allocation_topology(topo, alloc)
    assert current.tolist() == launch and restricted.slots.sum() == 16
    assert recs[0]["strategy"] == "current"
    assert recs[0]["hopbytes"] == pytest.approx(ltm.evaluate(restricted, g, launch)["hop_bytes"])
    placement = [line.split()[1] for line in mfile.read_text().splitlines()]
    assert set(placement) <= set(hosts)
    for fmt, parse in (("mpich-rank-order", lambda t: parse_mpich_rank_order(t, alloc)),
                       ("openmpi-rankfile", lambda t: [h for _, (h, _) in sorted(parse_openmpi_rankfile(t).items())]),
                       ("slurm-hostfile", parse_slurm_hostfile), ("hydra-config", parse_hydra_config)):
        out = tmp_path / fmt
        assert main(base + ["--emit", fmt, "-o", str(out)]) == 0
        capsys.readouterr()
        assert parse(out.read_text()) == placement, fmt


def test_map_emit_errors(torus_file, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    base = ["map", "--topology", torus_file, "--graph", "stencil:4x4"]
    assert main(base + ["--emit", "slurm-hostfile"]) == 2
    assert "--emit slurm-hostfile needs --output FILE" in capsys.readouterr().err
    assert main(base + ["--allocation", "x[1-4]", "--ranks-per-host", "4"]) == 2
    assert "allocation host 'x1' is not a vertex" in capsys.readouterr().err
    topo = ltm.load(torus_file)
    nodes = ",".join(topo.names[:4])
    assert main(base + ["--allocation", nodes, "--ranks-per-host", "3"]) == 1
    assert "16 processes but the allocation has 12 slots (4 hosts); raise --ranks-per-host" in capsys.readouterr().err
    # without --allocation, --emit takes $SLURM_JOB_NODELIST
    monkeypatch.setenv("SLURM_JOB_NODELIST", nodes)
    out = tmp_path / "hf"
    assert main(base + ["--emit", "slurm-hostfile", "-o", str(out), "--ranks-per-host", "4"]) == 0
    assert sorted(set(parse_slurm_hostfile(out.read_text()))) == sorted(topo.names[:4])


# ---------------------------------------------------------------- Open MPI follows the rankfile


_AFFINITY = "import os; print(os.environ['OMPI_COMM_WORLD_RANK'], sorted(os.sched_getaffinity(0)), flush=True)"


def test_openmpi_binds_ranks_as_the_rankfile_says(tmp_path):
    found = openmpi_or_skip(cores=2)
    mpirun = found[0]
    alloc = Allocation(("localhost",), (2,))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PRTE_", "PMIX_", "MPI4PY_"))}
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    seen = {}
    for name, text in (("emitted", emit("openmpi-rankfile", ["localhost", "localhost"], alloc)),
                       ("swapped", "rank 0=localhost slot=1\nrank 1=localhost slot=0\n")):
        rf = tmp_path / name
        rf.write_text(text)
        out = subprocess.run([mpirun, "-n", "2", "--map-by", f"rankfile:file={rf}", sys.executable, "-c", _AFFINITY],
                             capture_output=True, text=True, timeout=240, env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        cpus = {int(r): json.loads(c) for r, c in (line.split(" ", 1) for line in out.stdout.splitlines())}
        assert set(cpus) == {0, 1}
        assert not set(cpus[0]) & set(cpus[1]), f"ranks not bound to distinct cores: {cpus}"
        seen[name] = cpus
    # the emitted file puts rank r on core r (slot r); the swapped one exchanges them
    assert min(seen["emitted"][0]) < min(seen["emitted"][1])
    assert seen["swapped"] == {0: seen["emitted"][1], 1: seen["emitted"][0]}


_TWO_RANKS = ("import numpy as np\nfrom mpi4py import MPI\nc = MPI.COMM_WORLD\n"
              "if c.rank == 0:\n    c.Send(np.zeros(1000, np.uint8), 1)\n"
              "else:\n    c.Recv(np.empty(1000, np.uint8), 0)\n")


def test_readme_workflow_monitor_map_launch(tmp_path, capsys):
    """The README's workflow for a C or Fortran code, end to end with this venv's Open MPI (a Python program
    stands in for the application): one run with monitoring, ``libtopomap map --graph PREFIX --emit
    openmpi-rankfile``, and a run that Open MPI binds as the emitted rankfile says."""
    found = openmpi_or_skip(cores=2)
    mpirun, lib = found
    env = openmpi_env(lib)
    app = tmp_path / "app.py"
    app.write_text(_TWO_RANKS)
    # 1. one run with monitoring
    prof = tmp_path / "prof" / "run"
    prof.parent.mkdir()
    out = subprocess.run([mpirun, "-n", "2", "--mca", "pml_monitoring_enable", "2", "--mca",
                          "pml_monitoring_enable_output", "3", "--mca", "pml_monitoring_filename", str(prof),
                          sys.executable, str(app)], capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    g = ltm.load_graph(str(prof))
    assert g.n == 2 and g.to_scipy().toarray()[0, 1] == 1000 and g.to_scipy().toarray()[1, 0] == 0
    # 2. map onto the job's hosts (one host, two slots) and emit an Open MPI rankfile
    topo = tmp_path / "one.topo"
    ltm.save(str(topo), ltm.Topology(["localhost"], np.zeros((0, 2), dtype=np.int64), slots=[2], name="one"))
    alloc = tmp_path / "hosts"
    alloc.write_text("localhost slots=2\n")
    rf = tmp_path / "ranks.txt"
    assert main(["map", "--topology", str(topo), "--graph", str(prof), "--allocation", str(alloc),
                 "--emit", "openmpi-rankfile", "-o", str(rf)]) == 0, capsys.readouterr().err
    slots = {int(r): int(s) for r, s in re.findall(r"rank\s+(\d+)\s*=\s*localhost\s+slot\s*=\s*(\d+)", rf.read_text())}
    assert sorted(slots) == [0, 1] and sorted(slots.values()) == [0, 1], rf.read_text()
    # 3. run with the file: every rank on its own core, in the file's order
    env = {k: v for k, v in env.items() if k != "PRTE_MCA_rmaps_default_mapping_policy"}
    out = subprocess.run([mpirun, "-n", "2", "--map-by", f"rankfile:file={rf}", sys.executable, "-c", _AFFINITY],
                         capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    cpus = {int(r): json.loads(c) for r, c in (line.split(" ", 1) for line in out.stdout.splitlines())}
    assert set(cpus) == {0, 1} and not set(cpus[0]) & set(cpus[1]), cpus
    assert (min(cpus[0]) < min(cpus[1])) == (slots[0] < slots[1]), (cpus, slots)
