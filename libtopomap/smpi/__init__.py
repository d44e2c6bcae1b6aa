"""Run real MPI programs on a simulated copy of the network with SimGrid's SMPI.

:func:`build` compiles the proxy codes (``proxies/*.c``); :func:`run` measures an SMPI program in
the launcher's order, maps its traced communication graph and reruns it mapped; :func:`write_edge_list`
writes any CommGraph for the ``replay`` proxy.  Nothing in the core library imports this package.
"""

from __future__ import annotations

from .build import PROXIES, SmpiError, SmpiUnavailable, build, default_outdir, parse_result
from .runner import Simulation, SmpiRunResult, datatype_sizes, run, run_once
from .traces import read_edge_list, read_ti_trace, write_edge_list

__all__ = ["build", "run", "run_once", "write_edge_list", "read_edge_list", "read_ti_trace", "datatype_sizes",
           "default_outdir", "parse_result", "PROXIES", "Simulation", "SmpiRunResult", "SmpiError",
           "SmpiUnavailable"]
