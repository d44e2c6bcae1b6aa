"""Apply a saved mapping to a communicator without recomputing it.

``libtopomap map ... -o mapping.json`` (or :meth:`libtopomap.Mapping.save`) keeps the host of every
process; :func:`apply_mapping` checks that the job runs on exactly those hosts (the same number of
processes on each) and splits the communicator so that new rank ``k`` runs on the host of the
mapping's process ``k``.
"""

from __future__ import annotations

import collections
import os

import numpy as np

from ..errors import MappingError
from ..mapping import assign_new_ranks, read_saved_mapping
from .location import job_hosts
from .agreement import collective_call

__all__ = ["apply_mapping"]


def _describe(counts):
    items = sorted(counts.items())
    shown = ", ".join(f"{h} x{c}" for h, c in items[:6])
    return shown + (f", ... ({len(items)} hosts)" if len(items) > 6 else "")


def apply_mapping(comm, path, *, fake_names=None, placement=None):
    """Reorder ``comm`` by a saved mapping, without recomputing it (collective).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
    path : str or os.PathLike
        A mapping written by ``libtopomap map ... -o FILE.json`` or :meth:`libtopomap.Mapping.save`
        (read by rank 0).
    fake_names, placement
        Where the processes run, as for :func:`libtopomap.mpi.location.locate` but by host name
        (default: the processor names, or the file named by ``LIBTOPOMAP_FAKE_NAMES``).

    Returns
    -------
    mpi4py.MPI.Intracomm
        ``comm.Split(0, key=new_rank)``, a plain communicator in which rank ``k`` runs on the host
        of the mapping's process ``k`` (ranks already on the right host keep their rank).

    Raises
    ------
    MappingError
        On every rank, when the mapping was made for another number of processes or for other
        hosts (different hosts, or another number of processes on a host).
    CommError
        On every rank, when rank 0 cannot read the file (``file:line:`` of the problem) or a process
        cannot be located.
    """
    size, rank = comm.Get_size(), comm.Get_rank()

    def read():
        where = os.fspath(path)
        if rank != 0:
            return where, None
        saved = read_saved_mapping(where)
        names, inverse = np.unique(np.array(saved.hosts, dtype=object).astype(str), return_inverse=True)
        return where, (names.tolist(), inverse.astype(np.int64))
    where, msg = collective_call(comm, read, what="reading the saved mapping")
    names, chosen = comm.bcast(msg, root=0)
    hosts = job_hosts(comm, fake_names, placement)

    # Every rank holds the same data here, so every rank raises the same error.
    if chosen.size != size:
        raise MappingError(f"{where}: the mapping is for {chosen.size} processes but the communicator has {size}")
    want = collections.Counter({names[i]: int(c) for i, c in enumerate(np.bincount(chosen, minlength=len(names)))})
    have = collections.Counter(hosts)
    if want != have:
        extra = sorted(set(have) - set(want))
        if extra:
            detail = f"host {extra[0]!r} runs {have[extra[0]]} process(es) of this job but is not in the mapping"
        else:
            h = next(h for h in sorted(want) if want[h] != have.get(h, 0))
            detail = f"host {h!r} runs {have.get(h, 0)} process(es) of this job but the mapping puts {want[h]} there"
        raise MappingError(f"{where}: the mapping was made for other hosts: {detail} (mapping: {_describe(want)}; "
                           f"job: {_describe(have)})")

    def new_rank():
        index = {h: i for i, h in enumerate(names)}
        current = np.array([index[h] for h in hosts], dtype=np.int64)
        return int(assign_new_ranks(current, chosen)[rank])
    return comm.Split(0, key=collective_call(comm, new_rank, what="applying the saved mapping"))
