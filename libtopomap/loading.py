"""``libtopomap.load``: a topology from a file (:func:`libtopomap.formats.read`), or ``"auto"``.

``load("auto")`` is the machine this process sees (:func:`libtopomap.autotopo.discover`); every other
path is a topology file in any registered format.
"""

from __future__ import annotations

import os

from .formats import read

__all__ = ["load"]


def load(path, format=None, **options):
    """Read a topology file, or discover this machine.

    The parameters are those of :func:`libtopomap.formats.read`, except that ``path="auto"`` is the
    machine this process sees (:func:`libtopomap.autotopo.discover`, which takes the ``options``; under
    MPI pass ``topology="auto"`` to the MPI functions instead).  Functions that take a topology as an
    object, a path or ``"auto"`` go through :func:`libtopomap.validation.as_topology`, which calls this.

    Returns
    -------
    Topology
    """
    path = os.fspath(path)
    if path == "auto" and format is None:  # discover this machine (libtopomap.autotopo); "./auto" is a file
        from .autotopo import discover  # numpy and the node probes, for "auto" only (import cost)

        return discover(**options)
    return read(path, format, **options)
