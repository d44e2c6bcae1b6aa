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

    Parameters
    ----------
    path : str or os.PathLike
        A file, or ``"auto"``: the machine this process sees (:func:`libtopomap.autotopo.discover`;
        under MPI pass ``topology="auto"`` to the MPI functions instead).
    format : str, optional
        A registered format name; sniffed from the content when omitted.
    **options
        Passed to the format's reader (e.g. ``switches=`` for ``ltm``, ``slots=`` for ibnetdiscover),
        or to :func:`~libtopomap.autotopo.discover` for ``"auto"``.

    Returns
    -------
    Topology

    Raises
    ------
    FormatError
        ``path:line: message`` for unreadable or malformed input.
    """
    path = os.fspath(path)
    if path == "auto" and format is None:  # discover this machine (libtopomap.autotopo); "./auto" is a file
        from .autotopo import discover  # numpy and the node probes, for "auto" only (import cost)

        return discover(**options)
    return read(path, format, **options)
