"""Run real MPI programs on a simulated copy of the network with SimGrid's SMPI.

:func:`platform` / :func:`write_platform` export a :class:`~libtopomap.Topology` as a SimGrid 3.32 platform whose
routes are exactly those of a libtopomap routing model; :func:`build` compiles the proxy codes (``proxies/*.c``);
:func:`run` measures an SMPI program in the launcher's order, maps its traced communication graph and reruns it
mapped; :func:`write_edge_list` writes any CommGraph for the ``replay`` proxy.  Nothing in the core library imports
this package.
"""

from __future__ import annotations

from .build import PROXIES, SmpiError, SmpiUnavailable, build, default_outdir, parse_result, source_digest
from .platform import DEFAULT_MAX_ROUTES, SINGLE_PATH_ROUTINGS, PlatformInfo, platform, write_platform
from .runner import Simulation, SmpiRunResult, datatype_sizes, run, run_once
from .traces import read_edge_list, read_paje_trace, read_ti_trace, write_edge_list

__all__ = ["platform", "write_platform", "PlatformInfo", "DEFAULT_MAX_ROUTES", "SINGLE_PATH_ROUTINGS",
           "build", "run", "run_once", "write_edge_list", "read_edge_list", "read_ti_trace", "read_paje_trace",
           "datatype_sizes",
           "default_outdir", "parse_result", "source_digest", "PROXIES", "Simulation", "SmpiRunResult", "SmpiError",
           "SmpiUnavailable"]
