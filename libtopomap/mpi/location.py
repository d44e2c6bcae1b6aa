"""Where am I: find the topology vertex of every MPI process.

Each process identifies its vertex by its hostname, ``MPI.Get_processor_name()`` cut at the first
``'.'``, as LibTopoMap does (Hoefler & Snir, ICS'11, section 4.1: "each vertex in the H file
(representing a compute node) has its hostname as attribute attached").  For tests and for sites whose
names differ, a *fake-names file* (LibTopoMap's ``TPM_Fake_names_file``: lines ``<rank> <hostname>``)
can be given in code or through the environment variable ``LIBTOPOMAP_FAKE_NAMES``, or an explicit
rank -> vertex list can be passed.

The parsing and checking functions (:func:`host_of`, :func:`read_fake_names`,
:func:`resolve_vertices`) need no MPI; :func:`fake_host_names`, :func:`job_hosts` and :func:`locate` are
collective and import mpi4py when called (importing this module does not initialise MPI).
"""

from __future__ import annotations

import os

import numpy as np

from .._textio import content_lines, read_text
from ..errors import FormatError, MappingError, TopologyError

__all__ = ["FAKE_NAMES_ENV", "host_of", "read_fake_names", "resolve_vertices", "fake_host_names", "job_hosts",
           "locate"]

FAKE_NAMES_ENV = "LIBTOPOMAP_FAKE_NAMES"


def host_of(processor_name):
    """The host part of a processor name: everything before the first ``'.'``.

    Examples
    --------
    >>> host_of("node17.cluster.example.org")
    'node17'
    >>> host_of("n3")
    'n3'
    """
    return str(processor_name).strip().split(".", 1)[0]


def read_fake_names(path, *, n_ranks=None):
    """Read a fake-names file: one ``<rank> <hostname>`` line per rank.

    Blank lines and ``#`` comments are ignored.  A hostname is cut at its first ``'.'`` like a real
    processor name.  A file may describe a larger job than the one running (lines for ranks
    ``>= n_ranks`` are ignored), but every rank of the job must have a line.

    Parameters
    ----------
    path : str or os.PathLike
    n_ranks : int, optional
        Size of the job; when given, every rank ``0..n_ranks-1`` must appear.

    Returns
    -------
    dict of int -> str
        Hostname per rank.

    Raises
    ------
    FormatError
        ``file:line:`` for a line that is not ``<rank> <hostname>``, a rank that is not a
        non-negative integer, or a rank listed twice; ``file:`` for a rank of the job with no line.
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".names", delete=False) as f:
    ...     _ = f.write("# rank host\\n0 n1.site\\n1 n0\\n")
    >>> read_fake_names(f.name, n_ranks=2)
    {0: 'n1', 1: 'n0'}
    >>> os.unlink(f.name)
    """
    path = os.fspath(path)
    table = {}
    first_line = {}
    text = read_text(path)
    for lineno, line in content_lines(text):
        fields = line.split()
        if len(fields) != 2:
            raise FormatError(f"expected '<rank> <hostname>', got {line!r}", path=path, line=lineno)
        rank_text, name = fields
        try:
            rank = int(rank_text)
        except ValueError:
            raise FormatError(f"rank {rank_text!r} is not an integer", path=path, line=lineno) from None
        if rank < 0:
            raise FormatError(f"rank {rank} is negative", path=path, line=lineno)
        if rank in table:
            raise FormatError(f"rank {rank} listed twice (first on line {first_line[rank]})",
                              path=path, line=lineno)
        host = host_of(name)
        if not host:
            raise FormatError(f"empty hostname {name!r}", path=path, line=lineno)
        table[rank] = host
        first_line[rank] = lineno
    if n_ranks is not None:
        missing = [r for r in range(int(n_ranks)) if r not in table]
        if missing:
            shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
            raise FormatError(f"no line for rank(s) {shown} of a job with {n_ranks} ranks", path=path)
    return table


def resolve_vertices(topology, hosts, *, slots=None, source=None):
    """Topology vertex of every rank from its hostname (or vertex index), checking slots.

    Parameters
    ----------
    topology : Topology
    hosts : sequence of str or int
        Per rank: a vertex name (hostname) or a vertex index.
    slots : array_like of int, optional
        Processes each vertex may host (default ``topology.slots``).
    source : str, optional
        Where the names came from, quoted in errors (e.g. a fake-names file).

    Returns
    -------
    numpy.ndarray of int32
        ``vertices[rank]``.

    Raises
    ------
    TopologyError
        A host that is not in the topology, or a vertex without slots (a switch).
    MappingError
        More processes on a host than its slots.

    Examples
    --------
    >>> from libtopomap import torus
    >>> resolve_vertices(torus("2x2"), ["n3", "n0", 1]).tolist()
    [3, 0, 1]
    """
    n_vertices = topology.n_vertices
    cap = topology.slots if slots is None else np.asarray(slots)
    where = f" (from {source})" if source else ""
    label = f" {topology.name!r}" if topology.name else ""
    out = np.empty(len(hosts), dtype=np.int32)
    for rank, h in enumerate(hosts):
        if isinstance(h, (int, np.integer)):
            v = int(h)
            if not 0 <= v < n_vertices:
                raise TopologyError(f"rank {rank}: vertex {v}{where} is outside 0..{n_vertices - 1}")
        else:
            name = str(h)
            if name not in topology:
                raise TopologyError(f"rank {rank}: host {name!r}{where} is not in the topology{label}")
            v = topology.index(name)
        if cap[v] <= 0:
            raise TopologyError(f"rank {rank}: vertex {topology.names[v]!r}{where} has no process slots "
                                f"(a switch?)")
        out[rank] = v
    used = np.bincount(out, minlength=n_vertices)
    over = np.flatnonzero(used > cap)
    if over.size:
        v = over[0]
        ranks = np.flatnonzero(out == v)
        shown = ", ".join(map(str, ranks[:8].tolist())) + (" ..." if ranks.size > 8 else "")
        raise MappingError(f"host {topology.names[v]!r}{where} runs {used[v]} processes (ranks {shown}) "
                           f"but has only {cap[v]} slot(s) in the topology")
    return out


def fake_host_names(comm, fake_names):
    """The host name of every rank from fake names (collective; the same list on every rank).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    fake_names : str, os.PathLike, dict, sequence of str, or None
        A fake-names file (read by rank 0; its lines are indexed by ``MPI_COMM_WORLD`` rank), a dict
        ``{rank: hostname}`` or a list of host names (the first ``comm.Get_size()`` are used); None: the file
        named by ``LIBTOPOMAP_FAKE_NAMES``.
        Names are cut at their first ``'.'`` (:func:`host_of`).

    Returns
    -------
    names : list of str or None
        ``names[rank]``; None when there are no fake names (neither given nor in the environment).
    source : str or None
        Where they come from, for messages: the file's path, or ``"fake_names"``.

    Raises
    ------
    CommError
        On every rank: a bad fake-names file (``file:line``), a rank missing from the dict, or fewer
        names than ranks.
    """
    from .agreement import collective_call

    size = comm.Get_size()
    if fake_names is None:
        fake_names = os.environ.get(FAKE_NAMES_ENV) or None
        if fake_names is None:
            return None, None
    if isinstance(fake_names, (str, os.PathLike)):
        from mpi4py import MPI

        path = os.fspath(fake_names)
        rank = comm.Get_rank()
        # The file is indexed by MPI_COMM_WORLD rank (as LibTopoMap's): a Split or COMM_SELF
        # communicator reads the lines of its processes' world ranks.
        world = MPI.COMM_WORLD.Get_group()
        try:
            group = comm.Get_group()
            try:
                world_ranks = MPI.Group.Translate_ranks(group, list(range(size)), world)
            finally:
                group.Free()
        finally:
            world.Free()

        def read_on_root():
            if rank != 0:
                return None
            table = read_fake_names(path)
            missing = [w for w in world_ranks if w not in table]
            if missing:
                shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
                raise FormatError(f"no line for world rank(s) {shown}", path=path)
            return [table[w] for w in world_ranks]
        table = collective_call(comm, read_on_root, what="reading fake names")
        return comm.bcast(table, root=0), path

    def from_table():
        if isinstance(fake_names, dict):
            missing = [r for r in range(size) if r not in fake_names]
            if missing:
                raise MappingError(f"fake_names has no entry for rank(s) {missing[:10]}")
            return [host_of(fake_names[r]) for r in range(size)]
        names = [host_of(x) for x in fake_names]
        if len(names) < size:
            raise MappingError(f"fake_names has {len(names)} entries for {size} ranks")
        return names[:size]
    return collective_call(comm, from_table, what="locating processes"), "fake_names"


def job_hosts(comm, fake_names, placement):
    """Host name of every rank (the same list on every rank): ``placement`` (names), fake names
    (:func:`fake_host_names`), or the MPI processor names (collective).

    The host-name gathering of :func:`~libtopomap.apply_mapping` and of ``topology="auto"``
    (:func:`libtopomap.mpi.auto.discover`)."""
    from mpi4py import MPI

    from .agreement import collective_call

    if placement is not None:
        size = comm.Get_size()

        def from_placement():
            names = [host_of(x) for x in placement]
            if len(names) != size:
                raise MappingError(f"placement has {len(names)} entries for {size} ranks")
            return names
        return collective_call(comm, from_placement, what="locating processes")
    names, _ = fake_host_names(comm, fake_names)
    if names is not None:
        return names
    return comm.allgather(collective_call(comm, lambda: host_of(MPI.Get_processor_name()),
                                          what="locating processes"))


def locate(comm, topology, *, fake_names=None, placement=None):
    """The topology vertex of every rank of ``comm`` (collective; same array on all ranks).

    Sources, first match wins:

    1. ``placement``: an explicit rank -> vertex list (indices or names), the same on all ranks;
    2. ``fake_names``: a fake-names file path (lines indexed by ``MPI_COMM_WORLD`` rank), a dict
       ``{rank: hostname}`` or a list of hostnames;
    3. the file named by the environment variable ``LIBTOPOMAP_FAKE_NAMES`` (read by rank 0);
    4. ``MPI.Get_processor_name()`` cut at the first ``'.'`` on every rank.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    topology : Topology
    fake_names : str, os.PathLike, dict or sequence, optional
    placement : sequence of int or str, optional

    Returns
    -------
    numpy.ndarray of int32
        ``vertices[rank]`` for every rank of ``comm``.

    Raises
    ------
    CommError
        On every rank, naming the rank(s) that failed: a bad fake-names file (``file:line``), a host
        missing from the topology, more processes on a host than its slots, a placement of the
        wrong length.
    """
    from mpi4py import MPI

    from .agreement import collective_call

    size = comm.Get_size()
    if placement is not None:
        def check_placement():
            entries = list(placement)
            if len(entries) != size:
                raise MappingError(f"placement has {len(entries)} entries for {size} ranks")
            return resolve_vertices(topology, entries, source="placement")
        return collective_call(comm, check_placement, what="locating processes")

    names, source = fake_host_names(comm, fake_names)
    if names is not None:
        return collective_call(comm, resolve_vertices, topology, names, source=source, what="locating processes")

    # Real hostnames: each rank checks its own name (so the error names the right rank), then slots.
    def own_vertex():
        host = host_of(MPI.Get_processor_name())
        if host not in topology:
            label = f" {topology.name!r}" if topology.name else ""
            raise TopologyError(f"host {host!r} (MPI processor name) is not in the topology{label}; "
                                f"pass fake_names= or set {FAKE_NAMES_ENV}")
        return host
    host = collective_call(comm, own_vertex, what="locating processes")
    hosts = comm.allgather(host)
    return collective_call(comm, resolve_vertices, topology, hosts, source="MPI processor names",
                           what="locating processes")
