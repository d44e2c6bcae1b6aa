"""``libtopomap.load``: a topology from a file (:func:`libtopomap.formats.read`), or ``"auto"``; and
:func:`as_topology`, the door of the functions that take a topology as an object, a path or ``"auto"``.

``load("auto")`` is the machine this process sees (:func:`libtopomap.autotopo.discover`); every other
path is a topology file in any registered format.
"""

from __future__ import annotations

import os

from .errors import ArgumentTypeError
from .formats import read

__all__ = ["load", "as_topology"]


def load(path, format=None, **options):
    """Read a topology file, or discover this machine.

    The parameters are those of :func:`libtopomap.formats.read`, except that ``path="auto"`` is the
    machine this process sees (:func:`libtopomap.autotopo.discover`, which takes the ``options``; under
    MPI pass ``topology="auto"`` to the MPI functions instead).  Functions that take a topology as an
    object, a path or ``"auto"`` go through :func:`as_topology`, which calls this.

    Returns
    -------
    Topology
    """
    path = os.fspath(path)
    if path == "auto" and format is None:  # discover this machine (libtopomap.autotopo); "./auto" is a file
        from .autotopo import discover  # numpy and the node probes, for "auto" only (import cost)

        return discover(**options)
    return read(path, format, **options)


def as_topology(topology):
    """The :class:`~libtopomap.Topology` given as an object, a file path, or ``"auto"``: the one place where
    the public functions that take all three (:func:`~libtopomap.map_processes`, the MPI calls, ``smpi run``)
    read a path (:func:`load`; under MPI, ``"auto"`` is discovered collectively before, by
    :func:`libtopomap.mpi.auto.resolve`).

    Raises
    ------
    ArgumentTypeError
        Neither a Topology nor a path.
    FormatError
        An unreadable file, naming it and the line.
    """
    if isinstance(topology, (str, os.PathLike)):
        return load(topology)
    from .topology import Topology  # scipy, on first use: the command line's parsers import this module

    if isinstance(topology, Topology):
        return topology
    raise ArgumentTypeError(f"topology must be a Topology, a file path or 'auto', got {type(topology).__name__} "
                            f"{topology!r:.60}")
