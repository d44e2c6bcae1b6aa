"""topology="auto" under MPI (tests/test_mpi_suite.py runs this at -n 4 and -n 8): every rank gets its own
recorded environment (Slurm addresses, xnames) and a fake host name, one gather combines them, and every
rank builds the same topology.

Every rank runs these tests; verdicts are ``allgather``-ed so all ranks fail together.
"""

import warnings

import numpy as np
import pytest

import libtopomap as ltm
from libtopomap.errors import CommError
from libtopomap.mpi.auto import discover
from _helpers import COMM, P, RANK, agree

HOSTS = {r: f"nid{r // 2:04d}" for r in range(P)}  # two ranks per host
_VARS = ("SLURMD_NODENAME", "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN", "LIBTOPOMAP_TOPOLOGY",
         "LIBTOPOMAP_FAKE_NAMES", "SLURM_JOB_ID")


@pytest.fixture
def env(monkeypatch):
    for k in _VARS:
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


def _fingerprint(topo):
    return (topo.names, topo.kinds, topo.slots.tobytes(), topo.link_u.tobytes(), topo.link_v.tobytes(),
            topo.capacity.tobytes())


def test_slurm_addresses_of_every_rank_give_one_fat_tree(env):
    h = RANK // 2
    env.setenv("SLURMD_NODENAME", HOSTS[RANK])
    env.setenv("SLURM_TOPOLOGY_ADDR", f"spine.leaf{h % 2}.{HOSTS[RANK]}")
    env.setenv("SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.node")
    topo, placement, bindings = discover(COMM, fake_names=HOSTS)
    fps = COMM.allgather(_fingerprint(topo))
    kinds = np.array(topo.kinds)
    leaves = sorted({f"leaf{(r // 2) % 2}" for r in range(P)})
    ok = (all(f == fps[0] for f in fps) and topo.attrs["source"] == "slurm"
          and sorted(n for n, k in zip(topo.names, topo.kinds) if k == "switch") == sorted(["spine", *leaves])
          and (kinds == "host").sum() == P // 2
          and all(topo.names[v].split(":")[0] == HOSTS[r] for r, v in enumerate(placement))
          and bindings[RANK] is not None and set(kinds[placement]) <= {"core", "host"}
          and ltm.properties(topo)["hosts"] == P // 2)
    assert agree(ok), (topo, topo.attrs, placement)


def test_xnames_of_every_rank_give_a_dragonfly(env):
    cab, chassis = 1000 + RANK // 4, (RANK // 2) % 2
    env.setenv("SLURMD_NODENAME", f"x{cab}c{chassis}s0b0n0")
    topo = discover(COMM, fake_names=HOSTS).topology
    routers = sorted({f"x{1000 + r // 4}c{(r // 2) % 2}" for r in range(P)})
    ok = topo.attrs["source"] == "xname" and sorted(n for n, k in zip(topo.names, topo.kinds) if k == "switch") \
        == routers
    assert agree(ok), topo.names


def test_nothing_known_is_one_switch_and_rank0_alone_warns(env):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        topo = discover(COMM, fake_names=HOSTS).topology
    said = [str(w.message) for w in caught if "no network description found" in str(w.message)]
    ok = topo.attrs["source"] == "single-switch" and len(said) == (1 if RANK == 0 else 0)
    assert agree(ok), said


def test_a_bad_address_fails_on_every_rank(env):
    env.setenv("SLURM_TOPOLOGY_ADDR", "spine.nid")
    env.setenv("SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.node")
    try:
        discover(COMM, fake_names=HOSTS)
        got = None
    except CommError as e:
        got = str(e)
    assert agree(got is not None and "does not match SLURM_TOPOLOGY_ADDR_PATTERN" in got), got


def test_create_dist_graph_adjacent_on_auto(env):
    h = RANK // 2
    env.setenv("SLURM_TOPOLOGY_ADDR", f"spine.leaf{h % 2}.{HOSTS[RANK]}")
    env.setenv("SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.node")
    nbrs = [(RANK - 1) % P, (RANK + 1) % P]
    new = ltm.Create_dist_graph_adjacent(COMM, nbrs, nbrs, topology="auto", fake_names=HOSTS,
                                         strategies=("greedy", "rcm"), seed=3)
    try:
        rep = ltm.report(new)
        ok = rep.n_processes == P and rep.after["max_congestion"] <= rep.before["max_congestion"] + 1e-12 \
            and rep.topology == "auto:slurm"
    finally:
        new.Free()
    assert agree(ok), rep


def test_create_cart_and_reorder_for_collective_on_auto(env):
    env.setenv("SLURM_TOPOLOGY_ADDR", f"spine.leaf{(RANK // 2) % 2}.{HOSTS[RANK]}")
    env.setenv("SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.node")
    cart = ltm.Create_cart(COMM, [P], [True], topology="auto", fake_names=HOSTS, strategies=("greedy",), seed=2)
    coll = ltm.reorder_for_collective(COMM, "auto", "allreduce", iterations=500, seed=2, fake_names=HOSTS)
    try:
        ok = cart.Get_size() == P and coll.Get_size() == P and coll.report.after["hops"] <= coll.report.before["hops"]
    except (AttributeError, KeyError) as e:
        ok = repr(e)
    finally:
        cart.Free()
        coll.Free()
    assert agree(ok is True), ok
