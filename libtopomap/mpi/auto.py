"""``topology="auto"`` under MPI: every rank contributes what it sees, one gather combines it.

The host of every rank comes from the host-name gathering shared with :func:`~libtopomap.apply_mapping`
(:func:`~libtopomap.mpi.location.job_hosts`: processor names, or fake names); then one ``allgather`` of
:class:`~libtopomap.autotopo.ProcessRecord` objects: every rank sends its binding, and the first rank of
each host also its environment and its node's hierarchy (so the gathered data grows with the hosts, not
with the ranks times the cores).
Every rank then builds the same topology with :func:`libtopomap.autotopo.build`.
"""

from __future__ import annotations

import os

from ..autotopo import build, host_records, probe, read_scontrol, warn_if_guessed
from .location import job_hosts
from .agreement import collective_call

__all__ = ["discover", "resolve"]


def discover(comm, *, fake_names=None, placement=None, bandwidths=None):
    """The machine of ``comm``'s processes, and where each runs on it (collective).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    fake_names, placement : optional
        Host names of the ranks, as for :func:`libtopomap.mpi.location.locate` (names only): a
        fake-names file, dict or list, or ``LIBTOPOMAP_FAKE_NAMES``; default the processor names.
    bandwidths : dict, optional
        Overrides of :data:`libtopomap.autotopo.DEFAULT_BANDWIDTHS`.

    Returns
    -------
    AutoResult
        ``(topology, placement, bindings)``, the same on every rank; rank 0 warns when no network
        description was found (one switch).

    Raises
    ------
    CommError
        On every rank, naming the rank(s) that failed (an unreadable topology file, a Slurm address
        that does not match its pattern...).
    """
    rank = comm.Get_rank()
    hosts = job_hosts(comm, fake_names, placement)

    def look():  # rank 0 alone asks Slurm for the whole tree
        first = hosts.index(hosts[rank]) == rank
        scontrol = read_scontrol() if rank == 0 and "SLURM_JOB_ID" in os.environ else None
        return probe(hosts[rank], node=first), scontrol
    gathered = comm.allgather(collective_call(comm, look, what="looking at the node"))

    def build_here():
        result = build(host_records([g[0] for g in gathered]), scontrol=gathered[0][1], bandwidths=bandwidths)
        if rank == 0:
            warn_if_guessed(result.topology)
        return result
    return collective_call(comm, build_here, what="building the automatic topology")


def resolve(comm, topology, fake_names, placement):
    """``(topology, fake_names, placement)`` for the MPI functions, with ``topology="auto"`` replaced by
    the discovered machine and the ranks placed on it (collective only when ``topology`` is ``"auto"``).

    With ``"auto"``, ``fake_names`` and ``placement`` give the ranks' host names (there are no vertices
    to name before the machine is discovered); the returned placement is the vertex (a core where the
    node's inside is known) of every rank.
    """
    if not (isinstance(topology, str) and topology == "auto"):
        return topology, fake_names, placement
    result = discover(comm, fake_names=fake_names, placement=placement)
    return result.topology, None, result.placement.tolist()
