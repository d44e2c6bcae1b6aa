"""Adapters that read real fabric descriptions into :class:`~libtopomap.Topology` objects.

The repository's ``adapters/`` folder, installed as ``libtopomap.adapters``: ibnetdiscover, its ``-p``
report, Slurm ``topology.conf`` and ``topology.yaml``, ibdiagnet ``.lst``, each read through the format
table of :mod:`libtopomap.formats`; :func:`ingest` reads a file and its :class:`IngestReport`.  The
readers and their options: docs/formats.rst, "The fabric readers and their options".
"""

from __future__ import annotations

import importlib

from ..formats import read as _read
from ..vocabulary import FABRIC_FORMATS as FORMATS
from ._fabric import (LANE_RATES, LANE_RATES_EFFECTIVE, LANE_RATES_SIGNAL, IngestReport, hostname_from_description,
                      ingest_report, link_capacity, read_hostmap)

__all__ = ["ingest", "ingest_report", "IngestReport", "link_capacity", "hostname_from_description", "read_hostmap",
           "LANE_RATES", "LANE_RATES_SIGNAL", "LANE_RATES_EFFECTIVE", "FORMATS"]

_SUBMODULES = ("ibdiagnet_lst", "ibnetdiscover", "ibnetdiscover_ports", "slurm", "synthetic")


def __getattr__(name):
    # ``libtopomap.adapters.slurm`` etc. without importing every adapter up front
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ingest(path, format=None, **options):
    """Read a fabric description and report what was read.

    Parameters
    ----------
    path : str or os.PathLike
    format : {"ibnetdiscover", "ibnetdiscover-ports", "slurm"}, optional
        Sniffed from the content when omitted.
    **options
        Reader options (``strict``, ``slots``, ``hostmap``, ``unknown_capacity``, ``rates``).

    Returns
    -------
    (Topology, IngestReport)

    Raises
    ------
    FormatError
        Unreadable input, nothing usable in it, or (``strict=True``) the first problem.

    Examples
    --------
    >>> topo, report = ingest("topology_files/small_fabric.ibnetdiscover")  # doctest: +SKIP
    >>> print(report.summary())  # doctest: +SKIP
    """
    topo = _read(path, format=format, **options)
    return topo, ingest_report(topo)
