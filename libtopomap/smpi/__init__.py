"""Run real MPI programs on a simulated copy of the network with SimGrid's SMPI.

:func:`platform` / :func:`write_platform` export a :class:`~libtopomap.Topology` as a SimGrid 3.32
platform (XML, DTD 4.1) whose routes are exactly those of a libtopomap routing model, so that SMPI
and the model route every message identically.  Nothing in the core library imports this package.
"""

from __future__ import annotations

from .platform import DEFAULT_MAX_ROUTES, SINGLE_PATH_ROUTINGS, PlatformInfo, platform, write_platform

__all__ = ["platform", "write_platform", "PlatformInfo", "DEFAULT_MAX_ROUTES", "SINGLE_PATH_ROUTINGS"]
