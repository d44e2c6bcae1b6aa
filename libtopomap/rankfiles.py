"""Launch-time rank reordering: the files MPI launchers read to put each rank on a chosen host.

An :class:`Allocation` is the job's hosts in launch order with their slots; the emitters of
:data:`EMITTERS` (``mpich-rank-order``, ``openmpi-rankfile``, ``slurm-hostfile``,
``hydra-config``) are pure functions
from (placement, allocation) to text.  What each file says: docs/formats.rst, "Launcher files".
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

from ._textio import format_ranges
from .errors import ArgumentError, FormatError, MappingError
from .vocabulary import REGISTRY, check_choice

__all__ = ["Allocation", "read_allocation", "allocation_topology", "launch_placement", "emit",
           "emit_mpich_rank_order", "emit_openmpi_rankfile", "emit_slurm_hostfile", "emit_hydra_config", "EMITTERS",
           "HYDRA_LINE_MAX"]

_HOSTFILE_LINE = re.compile(r"^(?P<host>[^\s:=#]+)(?::(?P<colon>\d+)|\s+slots\s*=\s*(?P<slots>\d+))?"
                            r"(?:\s+max[-_]slots\s*=\s*\d+)?$")


@dataclass(frozen=True)
class Allocation:
    """The hosts of a job in launch order and the slots (ranks) of each.

    Attributes
    ----------
    hosts : tuple of str
        Distinct host names, launch order.
    slots : tuple of int
        Ranks each host takes, ``>= 1``.
    """

    hosts: tuple
    slots: tuple

    def __post_init__(self):
        if len(self.hosts) != len(self.slots):
            raise ArgumentError(f"{len(self.hosts)} hosts but {len(self.slots)} slot counts")
        seen = set()
        for h, s in zip(self.hosts, self.slots):
            if h in seen:
                raise ArgumentError(f"host {h!r} appears twice in the allocation")
            seen.add(h)
            if int(s) < 1:
                raise ArgumentError(f"host {h!r} has {s} slots; every host needs at least 1")

    @property
    def total_slots(self):
        return int(sum(self.slots))


def read_allocation(spec=None, *, ranks_per_host=None, nprocs=None, environ=None):
    """The job's hosts in launch order, from a hostfile, a Slurm node list or ``$SLURM_JOB_NODELIST``.

    Parameters
    ----------
    spec : str, optional
        A hostfile (an existing file: one host per line, ``host``, ``host slots=N`` as Open MPI
        writes it or ``host:N`` as MPICH's Hydra does, ``#`` comments; a host repeated on
        consecutive lines adds a slot per line, as in a Slurm hostfile), or a Slurm hostlist
        expression (``nid[0001-0004,0010]``).  Default: ``$SLURM_JOB_NODELIST``.
    ranks_per_host : int, optional
        Slots of every host that a hostfile line does not size.  Default ``$SLURM_NTASKS_PER_NODE``
        when set, else ``ceil(nprocs / hosts)`` (1 without ``nprocs``).
    nprocs : int, optional
        Number of ranks, for the default ``ranks_per_host``.
    environ : mapping, optional
        Environment to read (default ``os.environ``).

    Returns
    -------
    Allocation

    Raises
    ------
    FormatError
        A bad hostfile line (``file:line:``) or hostlist expression (more than
        :data:`~libtopomap.adapters.slurm.MAX_HOSTLIST` names included).
    ArgumentError
        No spec and no ``$SLURM_JOB_NODELIST``; a host listed twice (not on consecutive lines);
        ``ranks_per_host < 1``.

    Examples
    --------
    >>> read_allocation("nid[0001-0003]", ranks_per_host=2)
    Allocation(hosts=('nid0001', 'nid0002', 'nid0003'), slots=(2, 2, 2))
    """
    from .adapters.slurm import expand_hostlist

    env = os.environ if environ is None else environ
    if spec is None:
        spec = env.get("SLURM_JOB_NODELIST")
        if not spec:
            raise ArgumentError("no allocation: give a hostfile or a node list, or run inside a Slurm job "
                                "($SLURM_JOB_NODELIST)")
    if ranks_per_host is None and env.get("SLURM_NTASKS_PER_NODE", "").isdigit():
        ranks_per_host = int(env["SLURM_NTASKS_PER_NODE"])
    if ranks_per_host is not None and int(ranks_per_host) < 1:
        raise ArgumentError(f"--ranks-per-host must be >= 1, got {ranks_per_host}")
    if os.path.isfile(spec):
        hosts, sized = _read_hostfile(spec)
    else:
        names = expand_hostlist(spec.strip())
        hosts, sized = names, [None] * len(names)
    if ranks_per_host is None:
        ranks_per_host = 1 if not nprocs else -(-int(nprocs) // len(hosts))
    return Allocation(tuple(hosts), tuple(int(ranks_per_host) if s is None else s for s in sized))


def _read_hostfile(path):
    hosts, sized, line_of = [], [], {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, raw in enumerate(f, 1):
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            m = _HOSTFILE_LINE.match(text)
            if m is None:
                raise FormatError(f"expected 'host', 'host slots=N' or 'host:N', got {text[:60]!r}",
                                  path=path, line=lineno)
            host, n = m.group("host"), m.group("colon") or m.group("slots")
            if n is not None and int(n) < 1:
                raise FormatError(f"host {host!r} with {n} slots", path=path, line=lineno)
            if hosts and hosts[-1] == host and n is None:
                sized[-1] = (sized[-1] or 1) + 1  # repeated line: one more slot
                continue
            if host in line_of:
                raise FormatError(f"host {host!r} again (first on line {line_of[host]})", path=path, line=lineno)
            line_of[host] = lineno
            hosts.append(host)
            sized.append(None if n is None else int(n))
    if not hosts:
        raise FormatError("no host in the hostfile", path=path)
    return hosts, sized


def allocation_topology(topology, allocation):
    """``topology`` with the allocation's slots (its hosts only, as many as each one takes), and the
    launcher's placement of ``allocation.total_slots`` ranks as vertex indices (rank ``r`` at
    position ``r``).

    Returns
    -------
    (Topology, numpy.ndarray of int64)
        The same vertices, kinds, links and capacities; other hosts keep no slot.

    Raises
    ------
    ArgumentError
        A host that is not a vertex of the topology, or one that is a switch.
    """
    from .topology import Topology

    slots, current = _allocation_slots(topology, allocation)
    links = np.stack([topology.link_u, topology.link_v], axis=1)
    restricted = Topology(topology.names, links, capacities=topology.capacity, slots=slots, kinds=topology.kinds,
                          name=topology.name, attrs=topology.attrs)
    return restricted, current


def _allocation_slots(topology, allocation):
    slots = np.zeros(topology.n_vertices, np.int64)
    for h, s in zip(allocation.hosts, allocation.slots):
        if h not in topology:
            raise ArgumentError(f"allocation host {h!r} is not a vertex of topology {topology.name or ''!r}")
        v = topology.index(h)
        if topology.kinds[v] == "switch":
            raise ArgumentError(f"allocation host {h!r} is a switch in the topology")
        slots[v] = s
    current = np.repeat([topology.index(h) for h in allocation.hosts], allocation.slots)
    return slots, current


def launch_placement(allocation, nprocs):
    """Host of each of ``nprocs`` ranks as the launcher places them (fill hosts in order)."""
    if nprocs > allocation.total_slots:
        raise MappingError(f"{nprocs} ranks but the allocation has {allocation.total_slots} slots")
    return list(np.repeat(np.array(allocation.hosts, dtype=object), allocation.slots)[:nprocs])


def _by_host(placement, allocation):
    """Ranks of each allocation host (ascending), checking hosts and slot counts."""
    where = {h: i for i, h in enumerate(allocation.hosts)}
    ranks = [[] for _ in allocation.hosts]
    for r, h in enumerate(placement):
        i = where.get(h)
        if i is None:
            raise MappingError(f"rank {r} is placed on {h!r}, which is not in the allocation")
        ranks[i].append(r)
    for h, s, rs in zip(allocation.hosts, allocation.slots, ranks):
        if len(rs) > s:
            raise MappingError(f"{len(rs)} ranks placed on host {h!r}, which has {s} slots")
    return ranks


def emit_mpich_rank_order(placement, allocation):
    """``MPICH_RANK_ORDER`` text: one line per host in launch order, its ranks ascending, ranges for runs.

    Raises
    ------
    MappingError
        A host that is not full before a host that is used: the launcher fills hosts in order, so
        such a placement cannot be written in this format (use a rank count that fills the hosts).

    Examples
    --------
    >>> print(emit_mpich_rank_order(["b", "a", "b", "a"], Allocation(("a", "b"), (2, 2))), end="")
    1,3
    0,2
    """
    ranks = _by_host(placement, allocation)
    used = [i for i, rs in enumerate(ranks) if rs]
    last = used[-1] if used else -1
    for i in range(last):
        if len(ranks[i]) != allocation.slots[i]:
            raise MappingError(f"mpich-rank-order fills hosts in launch order: host {allocation.hosts[i]!r} gets "
                               f"{len(ranks[i])} of its {allocation.slots[i]} slots but a later host "
                               f"{allocation.hosts[last]!r} is used")
    return "".join(format_ranges(rs) + "\n" for rs in ranks[:last + 1])


def emit_openmpi_rankfile(placement, allocation):
    """Open MPI 5 rankfile text: ``rank N=HOST slot=S`` for every rank, ``S`` its position on its host.

    Examples
    --------
    >>> print(emit_openmpi_rankfile(["b", "a", "b"], Allocation(("a", "b"), (2, 2))), end="")
    rank 0=b slot=0
    rank 1=a slot=0
    rank 2=b slot=1
    """
    ranks = _by_host(placement, allocation)
    slot = np.empty(len(placement), np.int64)
    for rs in ranks:
        slot[rs] = np.arange(len(rs))
    return "".join(f"rank {r}={h} slot={slot[r]}\n" for r, h in enumerate(placement))


def emit_slurm_hostfile(placement, allocation):
    """``SLURM_HOSTFILE`` text for ``srun --distribution=arbitrary``: line ``r`` is rank ``r``'s host.

    Hydra (``mpiexec -f``) and ``smpirun -hostfile`` also start rank ``r`` on line ``r``; Hydra runs one
    proxy per run of equal consecutive lines, and MPICH takes each proxy for a node.

    Examples
    --------
    >>> print(emit_slurm_hostfile(["b", "a"], Allocation(("a", "b"), (1, 1))), end="")
    b
    a
    """
    _by_host(placement, allocation)
    return "".join(f"{h}\n" for h in placement)


#: The longest line Hydra reads from a configuration file: ``fgets`` into ``HYD_TMP_STRLEN`` (16 KiB)
#: bytes, the newline and the terminating NUL included (MPICH 5.0.2, ``src/pm/hydra/lib/utils/args.c``).
HYDRA_LINE_MAX = 16 * 1024 - 2


def _rankmap_blocks(ids):
    """Hydra's rankmap blocks for node ids ``ids``: runs of equal ids, and runs of consecutive ids with
    equal run lengths merged, written ``X`` (one rank on node X) or ``(X,Y,Z)`` (Y nodes from X, Z
    ranks each), the block syntax of ``MPL_rankmap_str_to_array``."""
    runs = []  # [node, nodes, ranks each]
    i = 0
    while i < len(ids):
        j = i
        while j < len(ids) and ids[j] == ids[i]:
            j += 1
        last = runs[-1] if runs else None
        if last and last[2] == j - i and last[0] + last[1] == ids[i]:
            last[1] += 1
        else:
            runs.append([ids[i], 1, j - i])
        i = j
    return ",".join(str(x) if (y, z) == (1, 1) else f"({x},{y},{z})" for x, y, z in runs)


def emit_hydra_config(placement, allocation):
    """MPICH Hydra configuration file: ``-hosts H0,H1,... -rankmap (vector,...)`` on one line.

    ``mpiexec -configfile FILE -n N ./app`` (or ``HYDRA_CONFIG_FILE=FILE mpiexec -n N ./app``) starts
    rank ``r`` on host ``H_k`` where the rankmap's ``r``-th node id is ``k``, one proxy per host: MPICH
    takes a proxy for a node, so a host's ranks share memory (``MPI_COMM_TYPE_SHARED``) wherever they
    sit in rank order, unlike ``mpiexec -f`` with the ``slurm-hostfile`` list.  Hosts are the
    allocation's, in launch order (unused ones included: they get no rank).  Runs of one host, and
    runs of consecutive hosts with equal run lengths, are written in Hydra's block syntax
    ``(first node, nodes, ranks each)``; the line must fit Hydra's line buffer (:data:`HYDRA_LINE_MAX`).

    Raises
    ------
    MappingError
        A line longer than :data:`HYDRA_LINE_MAX` (use ``slurm-hostfile`` with ``mpiexec -f``), or
        the checks of :func:`emit`.

    Examples
    --------
    >>> print(emit_hydra_config(["a", "a", "b", "b", "a"], Allocation(("a", "b"), (3, 2))), end="")
    -hosts a,b -rankmap (vector,(0,2,2),0)
    """
    _by_host(placement, allocation)
    index = {h: i for i, h in enumerate(allocation.hosts)}
    line = (f"-hosts {','.join(allocation.hosts)} "
            f"-rankmap (vector,{_rankmap_blocks([index[h] for h in placement])})")
    if len(line) > HYDRA_LINE_MAX:
        raise MappingError(f"the Hydra configuration line has {len(line)} characters; Hydra reads at most "
                           f"{HYDRA_LINE_MAX}: emit slurm-hostfile for mpiexec -f instead")
    return line + "\n"


_EMITTER_FUNCTIONS = {"mpich-rank-order": emit_mpich_rank_order, "openmpi-rankfile": emit_openmpi_rankfile,
                      "slurm-hostfile": emit_slurm_hostfile, "hydra-config": emit_hydra_config}
#: format name -> (emitter, description); names and descriptions from
#: :data:`libtopomap.vocabulary.REGISTRY` ``["launcher-format"]``.
EMITTERS = {name: (_EMITTER_FUNCTIONS[name], what) for name, what in REGISTRY["launcher-format"].items()}


def emit(format, placement, allocation):
    """The text of launcher file ``format`` (a key of :data:`EMITTERS`) for ``placement``.

    Parameters
    ----------
    format : str
    placement : sequence of str
        Host name of every rank.
    allocation : Allocation

    Raises
    ------
    ChoiceError
        An unknown format (also an :class:`~libtopomap.errors.ArgumentError`).
    MappingError
        A rank on a host outside the allocation, more ranks on a host than its slots, or a
        placement the format cannot express.
    """
    check_choice("launcher-format", format)
    return EMITTERS[format][0](list(placement), allocation)
